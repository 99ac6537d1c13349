//! Record ids.

/// A new record id: a prefix naming the kind, then a ULID (sortable by time).
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", ulid::Ulid::generate())
}
