//! Refused inference requests counted per day, tenant, actor and endpoint,
//! in the transaction of their `inference.refused` audit entry, so the
//! counts always equal the audit log's refusals (the dashboard's error
//! rates read them, never the log).

use crate::catalogue::Endpoint;
use crate::store::day_key::{day_index, split_key};
use crate::store::tables::ERROR_ROLLUPS;
use crate::store::{Store, StoreError, Table, codec};

pub const ERROR_TABLE: Table<u64> = Table::new(ERROR_ROLLUPS);

/// Refused inference requests of one day, tenant, actor and endpoint.
#[derive(Debug, Clone)]
pub struct ErrorRow {
    pub day: i64,
    /// Empty for a refusal that belongs to no tenant (an unknown key).
    pub tenant_id: String,
    /// The audit entry's actor: `key:<id>`, or what authenticated.
    pub actor: String,
    pub endpoint: Option<Endpoint>,
    pub count: u64,
}

/// Counts a refused inference request (its `inference.refused` audit
/// entry), in the entry's own transaction.
pub fn add_error(
    txn: &impl crate::store::tables::Writes,
    at: i64,
    tenant_id: &str,
    actor: &str,
    path: &str,
) -> Result<(), StoreError> {
    let mut key = day_index(at).to_be_bytes().to_vec();
    for part in [tenant_id, actor] {
        key.extend_from_slice(part.as_bytes());
        key.push(0);
    }
    if let Some(endpoint) = Endpoint::of_path(path) {
        key.extend_from_slice(endpoint.as_str().as_bytes());
    }
    let count = ERROR_TABLE.get(txn, &key)?.unwrap_or(0);
    ERROR_TABLE.put(txn, &key, &(count + 1))
}

/// Refusal counts of the whole days `[from, to)` (day starts, Unix ms).
pub fn error_rows(store: &Store, from: i64, to: i64) -> Result<Vec<ErrorRow>, StoreError> {
    store.read(|tx| {
        let table = match tx.open_table(ERROR_ROLLUPS) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let (lo, hi) = (day_index(from).to_be_bytes(), day_index(to).to_be_bytes());
        let mut out = Vec::new();
        for row in redb::ReadableTable::range(&table, lo.as_slice()..hi.as_slice())? {
            let (key, value) = row?;
            let (day, parts) = split_key(key.value())?;
            let [tenant, actor, endpoint] = parts[..] else {
                return Err(StoreError::Corrupt(
                    "an error rollup key is malformed".into(),
                ));
            };
            out.push(ErrorRow {
                day,
                tenant_id: tenant.to_owned(),
                actor: actor.to_owned(),
                endpoint: Endpoint::parse(endpoint).ok(),
                count: codec::decode(value.value())?,
            });
        }
        Ok(out)
    })
}
