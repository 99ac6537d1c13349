//! The store's history: how a file written by an older schema becomes
//! today's, one version at a time, in the transaction that opens it.
//!
//! The store runs the list ([`crate::store::migrate`]); the steps live with
//! the parts whose records they rewrite, and are listed here, above those
//! parts in the layer map, so the store never imports them.

mod v8_to_v9;

use crate::auth::accounts::{ACCOUNT_TABLE, Role};
use crate::store::StoreError;
use crate::store::migrate::Migration;
use crate::tenants::{DEFAULT_TENANT, TENANT_TABLE, operator_id, set_operator};

/// `ALL[n]` upgrades a store from version `n + 1` to `n + 2`.
pub const ALL: &[Migration] = &[
    // 1 -> 2: tenants gain the time their webhook settings last changed.
    crate::tenants::migrate_v1_to_v2,
    // 2 -> 3: the compliance policy gains review expiry, judge switch and
    // high-risk retention.
    crate::tenants::migrate_v2_to_v3,
    // 3 -> 4: the operator tenant is recorded (the first owner's tenant).
    migrate_v3_to_v4,
    // 4 -> 5: API keys gain a token-per-minute limit (none).
    crate::auth::keys::migrate_v4_to_v5,
    // 5 -> 6: the compliance policy gains PII redaction (`logs` by
    // default) and the tenant's own PII patterns.
    crate::tenants::migrate_pii_policy,
    // 6 -> 7: usage records gain their endpoint (inferred from the audit
    // entry's billed units, else `chat`).
    crate::billing::migrate::migrate_v6_to_v7,
    // 7 -> 8: usage and refusal rollups, built from the stored records.
    crate::billing::rollups::migrate_v7_to_v8,
    // 8 -> 9: usage records, audit entries and conversation records in
    // the compact layout.
    v8_to_v9::migrate_v8_to_v9,
    // 9 -> 10: conversation bodies are stored compressed (format 3).
    migrate_v9_to_v10,
];

/// Schema 9 to 10: conversation records are written in format 3, their
/// bodies compressed (`compliance::conversations`). Nothing is rewritten:
/// records of format 2 read as they are and leave with their retention, so
/// the upgrade costs no time and no space on a large store. The version
/// says that a build of schema 9, which cannot read format 3, must refuse
/// this store and its backups rather than fail on its conversations.
pub fn migrate_v9_to_v10(_txn: &redb::WriteTransaction) -> Result<(), StoreError> {
    Ok(())
}

// The step that needs both tenants and accounts lives here, above both.

/// Schema 3 to 4: the operator tenant is recorded. Before it, the owner of
/// any tenant reached every tenant; now only the operator does, and the
/// operator is the tenant of the first owner account (the one made at
/// first start), else the tenant named `default`, else the oldest tenant.
pub fn migrate_v3_to_v4(txn: &redb::WriteTransaction) -> Result<(), StoreError> {
    if operator_id(txn)?.is_some() {
        return Ok(());
    }
    let first_owner = ACCOUNT_TABLE
        .all(txn)?
        .into_iter()
        .filter(|a| a.role == Role::Owner)
        .min_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    let tenants = TENANT_TABLE.all(txn)?;
    let operator = first_owner
        .map(|a| a.tenant_id)
        .filter(|id| tenants.iter().any(|t| &t.id == id))
        .or_else(|| {
            tenants
                .iter()
                .find(|t| t.name == DEFAULT_TENANT)
                .map(|t| t.id.clone())
        })
        .or_else(|| {
            tenants
                .iter()
                .min_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)))
                .map(|t| t.id.clone())
        });
    match operator {
        Some(id) => set_operator(txn, &id),
        // An empty store: the first start records it.
        None => Ok(()),
    }
}
