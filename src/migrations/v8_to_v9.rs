//! Schema 8 -> 9: the records written once per request move to the
//! compact layout (`store::compact`).
//!
//! Usage records, audit entries and conversation records are read in the
//! bincode layout and written again in the compact one; usage and
//! conversation rows get their new keys (the request id in binary), and
//! the conversations' expiry index is rebuilt on those keys. Each table is
//! streamed into a new table that then takes the old one's name, so the
//! whole store is never held in memory. Audit entries keep their sequence
//! numbers and digests: the digest covers the same fields as before, so
//! the chain, and its checkpoint, verify unchanged (the stored link to the
//! entry before is dropped: it was a copy of that entry's digest).
//!
//! The migration runs in the one transaction of the upgrade: it happens
//! whole or not at all, and a value already compact reads as such, so a
//! rerun is harmless.

use redb::{ReadableTable, TableDefinition, WriteTransaction};

use crate::audit::Entry;
use crate::billing::UsageRecord;
use crate::compliance::conversations::Conversation;
use crate::store::StoreError;
use crate::store::compact::{self, Compact};
use crate::store::tables::{AUDIT, CONVERSATION_EXPIRY, CONVERSATIONS, Def, USAGE};

const REWRITTEN: Def = TableDefinition::new("schema9_rewrite");

/// Streams `def` into its compact layout, keyed by `rekey`; returns the
/// rows rewritten.
fn rewrite<V: Compact>(
    txn: &WriteTransaction,
    def: Def,
    rekey: impl Fn(&[u8], &V) -> Vec<u8>,
    mut each: impl FnMut(&V, &[u8]) -> Result<(), StoreError>,
) -> Result<u64, StoreError> {
    txn.delete_table(REWRITTEN)?;
    let mut count = 0;
    {
        let old = txn.open_table(def)?;
        let mut new = txn.open_table(REWRITTEN)?;
        for row in old.iter()? {
            let (key, value) = row?;
            let record: V = compact::decode(key.value(), value.value())?;
            let key = rekey(key.value(), &record);
            new.insert(key.as_slice(), compact::encode(&record).as_slice())?;
            each(&record, &key)?;
            count += 1;
        }
    }
    txn.delete_table(def)?;
    txn.rename_table(REWRITTEN, def)?;
    Ok(count)
}

pub fn migrate_v8_to_v9(txn: &WriteTransaction) -> Result<(), StoreError> {
    rewrite::<UsageRecord>(txn, USAGE, |_, r| r.row_key(), |_, _| Ok(()))?;
    rewrite::<Entry>(txn, AUDIT, |key, _| key.to_vec(), |_, _| Ok(()))?;
    txn.delete_table(CONVERSATION_EXPIRY)?;
    let mut expiry = txn.open_table(CONVERSATION_EXPIRY)?;
    rewrite::<Conversation>(
        txn,
        CONVERSATIONS,
        |_, c| c.key(),
        |c, key| {
            let mut row = c.expires_at.to_be_bytes().to_vec();
            row.extend_from_slice(key);
            expiry.insert(row.as_slice(), [].as_slice())?;
            Ok(())
        },
    )?;
    Ok(())
}
