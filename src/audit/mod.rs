//! The audit log: append-only and hash-chained (DESIGN section 5).
//!
//! Each entry carries the digest of the one before it, and its own digest
//! covers its fields and that link: changing, removing or reordering an
//! entry breaks the chain at that entry, which [`verify`] names. Entries are
//! appended inside the write transaction of the act they record (a charge,
//! a key change), so an act and its entry commit together or not at all;
//! the single writer makes the chain a total order.
//!
//! Entries hold metadata, never bodies, and never an end user's identifier
//! in clear: the subject is a pseudonym ([`pseudonym`]), so erasing a
//! subject leaves every entry, and the chain, intact.
//!
//! Entries older than `audit_retention_days` are pruned from the start of
//! the chain ([`prune`]); the last pruned entry's sequence number and
//! digest stay in `meta` as the checkpoint the chain is verified from, so
//! what is kept still proves itself (see docs/compliance-operations.md).

pub mod refusals;

use redb::{ReadTransaction, ReadableTable};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::base::ids::sha256;
use crate::base::time::{format_rfc3339, now_ms};
use crate::store::compact;
use crate::store::tables::{AUDIT, META};
use crate::store::{CompactTable, Reader, StoreError, codec};

mod stored;

pub const AUDIT_TABLE: CompactTable<Entry> = CompactTable::new(AUDIT);
const META_AUDIT_HEAD: &[u8] = b"audit_head";
/// The last pruned entry: sequence (big-endian u64) + digest (32 bytes).
const META_AUDIT_CHECKPOINT: &[u8] = b"audit_checkpoint";
/// The action of a refused inference request (counted by the stats'
/// `errors`, see [`refusals`]).
pub const REFUSED: &str = "inference.refused";
/// Entries answered by one page of `GET /api/v1/audit` at most.
pub const MAX_PAGE: usize = 500;

/// An act to record.
#[derive(Debug, Clone)]
pub struct Draft {
    /// Empty for acts that concern every tenant (the registry).
    pub tenant_id: String,
    /// `key:<id>`, `account:<id>`, `cli` or `system`.
    pub actor: String,
    /// What was done: `inference`, `inference.refused`, `key.create`, ...
    pub action: String,
    /// What it was done to (a request, key, review, incident id).
    pub target: String,
    /// `ok`, an error code, or a decision.
    pub outcome: String,
    /// The details as JSON text; empty when there are none.
    pub details: String,
    /// When it happened (Unix ms); `None` is the time it is appended. A
    /// journaled charge keeps its own, so a replay writes the same entry.
    pub at: Option<i64>,
}

impl Draft {
    pub fn new(tenant_id: &str, actor: String, action: &str, target: &str) -> Draft {
        Draft {
            tenant_id: tenant_id.to_owned(),
            actor,
            action: action.to_owned(),
            target: target.to_owned(),
            outcome: "ok".to_owned(),
            details: String::new(),
            at: None,
        }
    }

    pub fn outcome(mut self, outcome: &str) -> Draft {
        self.outcome = outcome.to_owned();
        self
    }

    pub fn details(mut self, details: Value) -> Draft {
        self.details = if details.is_null() {
            String::new()
        } else {
            details.to_string()
        };
        self
    }

    /// Details already written as JSON text by `Value::to_string` (a
    /// journaled charge's): kept as they are, not parsed and written
    /// again, which gives the same text.
    pub fn details_text(mut self, json: String) -> Draft {
        self.details = json;
        self
    }

    pub fn at(mut self, at: i64) -> Draft {
        self.at = Some(at);
        self
    }
}

/// An entry. Stored without `prev` (schema 9): the link is the digest
/// of the entry before, or the checkpoint's, so it is not repeated; a
/// decoded entry has zeros there until [`link_prev`] or [`verify`] fills
/// it in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub seq: u64,
    pub at: i64,
    pub tenant_id: String,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub outcome: String,
    /// JSON text.
    pub details: String,
    pub prev: [u8; 32],
    pub hash: [u8; 32],
}

impl Entry {
    /// The digest of the entry's fields and its link to the one before.
    fn digest(&self) -> [u8; 32] {
        let fields = (
            self.seq,
            self.at,
            &self.tenant_id,
            &self.actor,
            &self.action,
            &self.target,
            &self.outcome,
            &self.details,
            self.prev,
        );
        sha256(&codec::encode(&fields))
    }

    pub fn view(&self) -> Value {
        json!({
            "seq": self.seq,
            "at": format_rfc3339(self.at),
            "tenantId": (!self.tenant_id.is_empty()).then_some(&self.tenant_id),
            "actor": self.actor,
            "action": self.action,
            "target": self.target,
            "outcome": self.outcome,
            "details": serde_json::from_str::<Value>(&self.details).unwrap_or(Value::Null),
            "prevHash": hex(&self.prev),
            "hash": hex(&self.hash),
        })
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A stable pseudonym for an end user of a tenant: what the audit log and
/// the erased records keep instead of the identifier.
pub fn pseudonym(tenant_id: &str, end_user_id: &str) -> String {
    let digest = sha256(format!("tollgate-subject\0{tenant_id}\0{end_user_id}").as_bytes());
    format!("sub_{}", &hex(&digest)[..24])
}

/// A (sequence, digest) pair kept in `meta`; (0, zeros) when absent.
fn link(tx: &impl Reader, name: &[u8]) -> Result<(u64, [u8; 32]), StoreError> {
    match tx.get_raw(META, name)? {
        None => Ok((0, [0; 32])),
        Some(bytes) if bytes.len() == 40 => {
            let seq = u64::from_be_bytes(bytes[..8].try_into().expect("8 bytes"));
            let hash = bytes[8..].try_into().expect("32 bytes");
            Ok((seq, hash))
        }
        Some(_) => Err(StoreError::Corrupt(format!(
            "the audit {} is not 40 bytes",
            String::from_utf8_lossy(name)
        ))),
    }
}

fn head(tx: &impl Reader) -> Result<(u64, [u8; 32]), StoreError> {
    link(tx, META_AUDIT_HEAD)
}

/// The last pruned entry (sequence, digest); (0, zeros) when none was.
pub fn checkpoint(tx: &impl Reader) -> Result<(u64, [u8; 32]), StoreError> {
    link(tx, META_AUDIT_CHECKPOINT)
}

/// Appends one entry in `txn`; returns its sequence number.
pub fn append(txn: &impl crate::store::tables::Writes, draft: &Draft) -> Result<u64, StoreError> {
    append_at(txn, draft, now_ms())
}

/// [`append`] dated `at` (Unix ms) unless the draft carries its own time
/// (a replayed charge keeps its first): for tests and imports of older acts.
pub fn append_at(
    txn: &impl crate::store::tables::Writes,
    draft: &Draft,
    at: i64,
) -> Result<u64, StoreError> {
    let (last, prev) = head(txn)?;
    let mut entry = Entry {
        seq: last + 1,
        at: draft.at.unwrap_or(at),
        tenant_id: draft.tenant_id.clone(),
        actor: draft.actor.clone(),
        action: draft.action.clone(),
        target: draft.target.clone(),
        outcome: draft.outcome.clone(),
        details: draft.details.clone(),
        prev,
        hash: [0; 32],
    };
    entry.hash = entry.digest();
    AUDIT_TABLE.put(txn, &entry.seq.to_be_bytes(), &entry)?;
    let mut head = entry.seq.to_be_bytes().to_vec();
    head.extend_from_slice(&entry.hash);
    txn.insert_raw(META, META_AUDIT_HEAD, &head)?;
    if entry.action == REFUSED {
        crate::audit::refusals::add_error(
            txn,
            entry.at,
            &entry.tenant_id,
            &entry.actor,
            &entry.target,
        )?;
    }
    Ok(entry.seq)
}

/// Deletes up to `batch` entries from the start of the chain, oldest
/// first, while they are older than `before` (Unix ms), in one
/// transaction, and moves the checkpoint to the last one deleted. Returns
/// the number deleted: fewer than `batch` means the prefix is done.
pub async fn prune(
    store: &crate::store::Store,
    before: i64,
    batch: usize,
) -> Result<usize, StoreError> {
    store
        .write(move |txn| {
            let mut table = txn.open_table(AUDIT)?;
            let mut doomed = Vec::new();
            for row in table.iter()?.take(batch) {
                let (key, value) = row?;
                let entry: Entry = compact::decode(key.value(), value.value())?;
                if entry.at >= before {
                    break;
                }
                doomed.push((key.value().to_vec(), entry.seq, entry.hash));
            }
            let Some((_, seq, hash)) = doomed.last().cloned() else {
                return Ok(0);
            };
            for (key, _, _) in &doomed {
                table.remove(key.as_slice())?;
            }
            let mut mark = seq.to_be_bytes().to_vec();
            mark.extend_from_slice(&hash);
            txn.open_table(META)?
                .insert(META_AUDIT_CHECKPOINT, mark.as_slice())?;
            Ok(doomed.len())
        })
        .await
}

/// Appends one entry in a transaction of its own (group commit).
pub async fn record(store: &crate::store::Store, draft: Draft) -> Result<u64, StoreError> {
    store.write(move |txn| append(txn, &draft)).await
}

/// What `tollgate audit verify` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// Entries checked.
    pub entries: u64,
    /// The last pruned entry the chain was verified from (sequence,
    /// digest), if entries were pruned.
    pub checkpoint: Option<(u64, [u8; 32])>,
    /// The first entry that does not verify, and why.
    pub broken: Option<(u64, String)>,
}

impl Verification {
    pub fn view(&self) -> Value {
        json!({
            "entries": self.entries,
            "valid": self.broken.is_none(),
            "checkpoint": self.checkpoint.map(|(seq, hash)| json!({ "seq": seq, "hash": hex(&hash) })),
            "firstBroken": self.broken.as_ref().map(|(seq, why)| json!({ "seq": seq, "reason": why })),
        })
    }
}

/// Walks the whole chain in order, from the checkpoint of the pruned
/// prefix when entries were pruned.
pub fn verify(tx: &ReadTransaction) -> Result<Verification, StoreError> {
    let table = match tx.open_table(AUDIT) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => {
            return Ok(Verification {
                entries: 0,
                checkpoint: None,
                broken: None,
            });
        }
        Err(e) => return Err(e.into()),
    };
    let (head_seq, head_hash) = head(tx)?;
    let (pruned_seq, pruned_hash) = checkpoint(tx)?;
    let checkpoint = (pruned_seq > 0).then_some((pruned_seq, pruned_hash));
    let mut expected_seq = pruned_seq + 1;
    let mut prev = pruned_hash;
    let mut entries = 0;
    let broken = |seq: u64, why: String, entries: u64| {
        Ok(Verification {
            entries,
            checkpoint,
            broken: Some((seq, why)),
        })
    };
    for row in table.iter()? {
        let (key, value) = row?;
        let key_seq = key.value().try_into().map(u64::from_be_bytes).unwrap_or(0);
        let mut entry: Entry = match compact::decode(key.value(), value.value()) {
            Ok(entry) => entry,
            Err(e) => return broken(key_seq, format!("the entry cannot be read: {e}"), entries),
        };
        entries += 1;
        if key_seq != expected_seq || entry.seq != expected_seq {
            return broken(
                expected_seq,
                format!("entry {expected_seq} is missing (found {key_seq} next)"),
                entries,
            );
        }
        // A schema 8 entry still holds its link: it must be the one
        // before's digest.
        if entry.prev != [0; 32] && entry.prev != prev {
            return broken(
                entry.seq,
                "its link does not match the digest of the entry before".into(),
                entries,
            );
        }
        entry.prev = prev;
        if entry.digest() != entry.hash {
            return broken(
                entry.seq,
                "its content does not match its digest (the entry was changed)".into(),
                entries,
            );
        }
        prev = entry.hash;
        expected_seq += 1;
    }
    let end = pruned_seq + entries;
    if end != head_seq || (end > 0 && prev != head_hash) {
        return broken(
            expected_seq,
            format!(
                "the chain ends at entry {end} but its head names entry {head_seq} (entries were removed from the end)"
            ),
            entries,
        );
    }
    Ok(Verification {
        entries,
        checkpoint,
        broken: None,
    })
}

/// Filters of `GET /api/v1/audit`.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    /// Only this tenant's entries and those that concern every tenant.
    pub tenant_id: Option<String>,
    pub action: Option<String>,
    pub actor: Option<String>,
    pub from: Option<i64>,
    pub to: Option<i64>,
    /// Entries before this sequence number (paging backwards).
    pub before: Option<u64>,
    pub limit: usize,
}

/// Newest first.
pub fn list(tx: &ReadTransaction, filter: &Filter) -> Result<Vec<Entry>, StoreError> {
    let table = match tx.open_table(AUDIT) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let upper = filter.before.unwrap_or(u64::MAX).to_be_bytes();
    let checkpoint = checkpoint(tx)?;
    let mut out = Vec::new();
    for row in table.range::<&[u8]>(..upper.as_slice())?.rev() {
        let (key, value) = row?;
        let mut entry: Entry = compact::decode(key.value(), value.value())?;
        if filter.from.is_some_and(|from| entry.at < from) {
            break;
        }
        if filter.to.is_some_and(|to| entry.at >= to)
            || filter
                .tenant_id
                .as_ref()
                .is_some_and(|t| !entry.tenant_id.is_empty() && &entry.tenant_id != t)
            || filter
                .action
                .as_ref()
                .is_some_and(|a| !entry.action.starts_with(a.as_str()))
            || filter.actor.as_ref().is_some_and(|a| &entry.actor != a)
        {
            continue;
        }
        link_prev(&table, checkpoint, &mut entry)?;
        out.push(entry);
        if out.len() >= filter.limit {
            break;
        }
    }
    Ok(out)
}

/// Fills in `entry.prev`: the digest of the entry before it, the
/// checkpoint's after a pruned prefix, zeros for the first. An entry
/// whose predecessor is missing keeps zeros (`verify` names the gap).
fn link_prev(
    table: &impl redb::ReadableTable<&'static [u8], &'static [u8]>,
    (pruned_seq, pruned_hash): (u64, [u8; 32]),
    entry: &mut Entry,
) -> Result<(), StoreError> {
    let before = entry.seq.saturating_sub(1);
    if before == 0 {
        return Ok(());
    }
    if before == pruned_seq {
        entry.prev = pruned_hash;
        return Ok(());
    }
    let key = before.to_be_bytes();
    if let Some(value) = table.get(key.as_slice())? {
        let previous: Entry = compact::decode(&key, value.value())?;
        entry.prev = previous.hash;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[tokio::test]
    async fn details_kept_as_text_are_stored_as_the_same_details_as_a_value() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        // As a charge writes them: a credit amount, nested context, nulls.
        let details = json!({
            "model": "m", "provider": "p", "riskLevel": "minimal",
            "triggeredRules": ["r1"], "cost": 0.000_05,
            "promptTokens": 18, "completionTokens": 16, "isFallback": false,
            "streamed": false, "purpose": null, "subject": null,
            "consentId": null, "deployerContext": { "b": [1.5, "x"], "a": "é\n" },
            "review": null,
        });
        let draft = || Draft::new("ten_1", "key:k".into(), "inference", "req_1").at(5);
        record(&store, draft().details(details.clone()))
            .await
            .unwrap();
        record(&store, draft().details_text(details.to_string()))
            .await
            .unwrap();
        let entry = |seq: u64| {
            store
                .read(|tx| AUDIT_TABLE.get(tx, &seq.to_be_bytes()))
                .unwrap()
                .unwrap()
        };
        let (first, second) = (entry(1), entry(2));
        assert_eq!(first.details, second.details);
        assert_eq!(
            serde_json::from_str::<Value>(&second.details).unwrap(),
            details
        );
        assert_eq!(store.read(verify).unwrap().broken, None);
    }

    #[tokio::test]
    async fn a_pruned_prefix_leaves_a_checkpoint_the_rest_verifies_from() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        // A second apart: entries written within one millisecond would
        // share a time, and pruning before the third's would take the
        // fourth too.
        for i in 0..5 {
            record(
                &store,
                Draft::new("", "cli".into(), "test.act", &format!("t{i}"))
                    .at(1_700_000_000_000 + i * 1_000),
            )
            .await
            .unwrap();
        }
        let third = store
            .read(|tx| AUDIT_TABLE.get(tx, &3u64.to_be_bytes()))
            .unwrap()
            .unwrap();
        // Batches of two, everything older than the far future: 3 at most.
        assert_eq!(prune(&store, i64::MAX, 2).await.unwrap(), 2);
        assert_eq!(prune(&store, third.at + 1, 2).await.unwrap(), 1);
        let ok = store.read(verify).unwrap();
        assert_eq!(ok.broken, None, "{ok:?}");
        assert_eq!(ok.entries, 2);
        assert_eq!(ok.checkpoint, Some((3, third.hash)));
        // Entries 4 and 5 are kept, so pruning before entry 4 stops there.
        assert_eq!(prune(&store, third.at + 1, 2).await.unwrap(), 0);
        // The first kept entry removed: a gap after the checkpoint.
        store
            .write(|txn| {
                AUDIT_TABLE.remove(txn, &4u64.to_be_bytes())?;
                Ok(())
            })
            .await
            .unwrap();
        let found = store.read(verify).unwrap();
        assert_eq!(found.broken.as_ref().map(|b| b.0), Some(4), "{found:?}");
    }

    #[tokio::test]
    async fn the_chain_verifies_and_a_changed_entry_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for i in 0..5 {
            record(
                &store,
                Draft::new("ten_a", "cli".into(), "test.act", &format!("t{i}"))
                    .details(json!({ "i": i })),
            )
            .await
            .unwrap();
        }
        let ok = store.read(verify).unwrap();
        assert_eq!(
            ok,
            Verification {
                entries: 5,
                checkpoint: None,
                broken: None
            }
        );

        // Rewrite entry 3 as someone with write access to the file would.
        store
            .write(|txn| {
                let mut entry = AUDIT_TABLE.get(txn, &3u64.to_be_bytes())?.unwrap();
                entry.outcome = "forged".into();
                AUDIT_TABLE.put(txn, &3u64.to_be_bytes(), &entry)?;
                Ok(())
            })
            .await
            .unwrap();
        let found = store.read(verify).unwrap();
        assert_eq!(found.broken.as_ref().map(|b| b.0), Some(3), "{found:?}");

        // Recomputing its digest moves the break to the next link.
        store
            .write(|txn| {
                let mut entry = AUDIT_TABLE.get(txn, &3u64.to_be_bytes())?.unwrap();
                // The link is not stored: the digest covers entry 2's.
                entry.prev = AUDIT_TABLE.get(txn, &2u64.to_be_bytes())?.unwrap().hash;
                entry.hash = entry.digest();
                AUDIT_TABLE.put(txn, &3u64.to_be_bytes(), &entry)?;
                Ok(())
            })
            .await
            .unwrap();
        assert_eq!(store.read(verify).unwrap().broken.map(|b| b.0), Some(4));
    }

    #[tokio::test]
    async fn a_removed_last_entry_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for _ in 0..3 {
            record(&store, Draft::new("", "system".into(), "x", "y"))
                .await
                .unwrap();
        }
        store
            .write(|txn| AUDIT_TABLE.remove(txn, &3u64.to_be_bytes()))
            .await
            .unwrap();
        let found = store.read(verify).unwrap();
        assert_eq!(found.broken.map(|b| b.0), Some(3));
    }

    #[tokio::test]
    async fn listing_is_newest_first_and_filtered_by_tenant() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for tenant in ["ten_a", "ten_b", "", "ten_a"] {
            record(&store, Draft::new(tenant, "cli".into(), "act", tenant))
                .await
                .unwrap();
        }
        let filter = Filter {
            tenant_id: Some("ten_a".into()),
            limit: 10,
            ..Filter::default()
        };
        let seqs: Vec<u64> = store
            .read(|tx| list(tx, &filter))
            .unwrap()
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, [4, 3, 1]);
    }

    #[test]
    fn pseudonyms_are_stable_and_tenant_bound() {
        assert_eq!(pseudonym("t", "u"), pseudonym("t", "u"));
        assert_ne!(pseudonym("t", "u"), pseudonym("t2", "u"));
        assert!(!pseudonym("t", "alice@example.com").contains("alice"));
    }
}
