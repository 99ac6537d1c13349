//! Expiry indexes: a table keyed by big-endian expiry time then record key,
//! whose value is the record's key in its own table, or empty when the
//! index key ends with the record's key (conversations, schema 9). Stored
//! responses and conversations both keep one.

use redb::ReadableTable;

use super::tables::Def;
use super::{Store, StoreError};

/// Deletes every record of `records` whose entry in `index` is due (expiry
/// at or before `now`), and the index entry; returns how many. Works in
/// batches so one pass never holds a huge transaction.
pub async fn prune(store: &Store, index: Def, records: Def, now: i64) -> Result<usize, StoreError> {
    const BATCH: usize = 1000;
    let mut total = 0;
    loop {
        let removed = store
            .write(move |txn| {
                let due: Vec<(Vec<u8>, Vec<u8>)> = {
                    let index = txn.open_table(index)?;
                    let upper = (now + 1).to_be_bytes();
                    let mut out = Vec::new();
                    for row in index.range::<&[u8]>(..upper.as_slice())? {
                        let (k, v) = row?;
                        out.push((k.value().to_vec(), v.value().to_vec()));
                        if out.len() >= BATCH {
                            break;
                        }
                    }
                    out
                };
                let mut index = txn.open_table(index)?;
                let mut records = txn.open_table(records)?;
                for (expiry_key, key) in &due {
                    index.remove(expiry_key.as_slice())?;
                    let key = if key.is_empty() {
                        expiry_key.get(8..).unwrap_or_default()
                    } else {
                        key.as_slice()
                    };
                    records.remove(key)?;
                }
                Ok(due.len())
            })
            .await?;
        total += removed;
        if removed < BATCH {
            return Ok(total);
        }
    }
}
