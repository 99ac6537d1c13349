//! Key records of older schemas and the step that rewrites them.

use super::{ApiKey, KEY_TABLE};
use crate::store::StoreError;
use crate::store::tables::API_KEYS;

/// Schema 4 to 5: keys gain `tpm_limit` (none: no token limit). A record
/// already in the new layout (a store whose version was set back) is kept
/// as it is: the older layout is a strict prefix, so a record of it cannot
/// be read as the new one.
pub fn migrate_v4_to_v5(txn: &redb::WriteTransaction) -> Result<(), StoreError> {
    use crate::store::codec;
    let old: Vec<(Vec<u8>, legacy::ApiKeyV4)> = {
        let table = txn.open_table(API_KEYS)?;
        let mut out = Vec::new();
        for row in redb::ReadableTable::iter(&table)? {
            let (k, v) = row?;
            if codec::decode::<ApiKey>(v.value()).is_ok() {
                continue;
            }
            out.push((k.value().to_vec(), codec::decode(v.value())?));
        }
        out
    };
    for (id, k) in old {
        let key = ApiKey {
            id: k.id,
            tenant_id: k.tenant_id,
            owner_account_id: k.owner_account_id,
            name: k.name,
            digest: k.digest,
            hint: k.hint,
            credit_limit: k.credit_limit,
            credits_consumed: k.credits_consumed,
            reset_interval: k.reset_interval,
            cycle_start: k.cycle_start,
            rate_limit: k.rate_limit,
            expires_at: k.expires_at,
            allow_high_risk: k.allow_high_risk,
            notified_thresholds: k.notified_thresholds,
            created_at: k.created_at,
            revoked_at: k.revoked_at,
            rotated_from: k.rotated_from,
            tpm_limit: None,
        };
        KEY_TABLE.put(txn, &id, &key)?;
    }
    Ok(())
}

/// Key records as older schemas stored them.
pub mod legacy {
    use serde::{Deserialize, Serialize};

    use crate::auth::keys::ResetInterval;

    /// An API key of schemas 1 to 4 (no `tpm_limit`).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct ApiKeyV4 {
        pub id: String,
        pub tenant_id: String,
        pub owner_account_id: Option<String>,
        pub name: String,
        pub digest: [u8; 32],
        pub hint: String,
        pub credit_limit: Option<u64>,
        pub credits_consumed: u64,
        pub reset_interval: ResetInterval,
        pub cycle_start: i64,
        pub rate_limit: Option<u32>,
        pub expires_at: Option<i64>,
        pub allow_high_risk: bool,
        pub notified_thresholds: Vec<u8>,
        pub created_at: i64,
        pub revoked_at: Option<i64>,
        pub rotated_from: Option<String>,
    }
}
