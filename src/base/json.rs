//! Serde helpers shared by the HTTP layer and the parts that take JSON
//! settings.

use serde::Deserialize;

/// For `Option<Option<T>>` fields: absent is `None` (keep), `null` is
/// `Some(None)` (clear), a value is `Some(Some(v))` (set). Use with
/// `#[serde(default, deserialize_with = "...")]`.
pub fn nullable<'de, T, D>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}
