//! Usage rollups: per UTC day, tenant, key, model and endpoint, the
//! requests, tokens and micro-credits of the usage records, and per day,
//! tenant, actor and endpoint the refused inference requests.
//!
//! They are kept in the transaction that writes the usage record (the
//! charge, [`super::apply`]) or the refusal's audit entry
//! ([`crate::audit::append`]), so they always equal the sum of
//! what was recorded. The usage and stats APIs, the dashboard's Overview
//! and `tollgate usage` read them instead of scanning raw records: a
//! period costs one range scan over its days' rollups, whatever the number
//! of requests. Raw records are read only for the part of a period that
//! covers a day partly (a `from` or `to` inside a day that is still in
//! the raw records' retention), and for listing records one by one.
//! Rollups are never pruned: totals outlive the raw records.

use serde::{Deserialize, Serialize};

use super::UsageRecord;
use crate::audit::refusals::add_error;
use crate::catalogue::Endpoint;
use crate::store::day_key::{day_index, split_key};
use crate::store::tables::{ERROR_ROLLUPS, META, USAGE, USAGE_ROLLUPS};
use crate::store::{Reader, Store, StoreError, Table, codec, compact};

pub use crate::store::day_key::DAY_MS;
pub const ROLLUP_TABLE: Table<Rollup> = Table::new(USAGE_ROLLUPS);
/// Unix ms (big-endian i64): raw usage records before it were pruned.
pub const META_USAGE_PRUNED_BEFORE: &[u8] = b"usage_pruned_before";

/// The sums of one rollup row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rollup {
    pub requests: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Micro-credits; wider than one charge, so a sum cannot overflow it.
    pub cost: i128,
    /// The newest record's time, Unix ms (the wallet history dates a day's
    /// charges by it).
    pub last_at: i64,
}

impl Rollup {
    pub fn add(&mut self, r: &UsageRecord) {
        self.requests += 1;
        // Token counts come from upstreams: kept in range, never a panic.
        self.prompt_tokens = self.prompt_tokens.saturating_add(r.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(r.completion_tokens);
        self.cost += i128::from(r.cost);
        self.last_at = self.last_at.max(r.at);
    }

    pub fn merge(&mut self, other: &Rollup) {
        self.requests += other.requests;
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.cost += other.cost;
        self.last_at = self.last_at.max(other.last_at);
    }
}

/// One rollup row as read back: a day and its dimensions with their sums.
#[derive(Debug, Clone)]
pub struct Row {
    /// The UTC day's start, Unix ms.
    pub day: i64,
    pub tenant_id: String,
    pub key_id: String,
    pub model: String,
    pub endpoint: Endpoint,
    pub sum: Rollup,
}

/// `day + tenant \0 key \0 model \0 endpoint`: rows of a day sort together.
fn usage_key(r: &UsageRecord) -> Vec<u8> {
    let mut key = day_index(r.at).to_be_bytes().to_vec();
    for part in [&r.tenant_id, &r.key_id, &r.model] {
        key.extend_from_slice(part.as_bytes());
        key.push(0);
    }
    key.extend_from_slice(r.endpoint.as_str().as_bytes());
    key
}

/// Adds a usage record to its rollup, in the record's own transaction.
pub fn add(
    txn: &impl crate::store::tables::Writes,
    record: &UsageRecord,
) -> Result<(), StoreError> {
    let key = usage_key(record);
    let mut sum = ROLLUP_TABLE.get(txn, &key)?.unwrap_or_default();
    sum.add(record);
    ROLLUP_TABLE.put(txn, &key, &sum)
}

/// Raw records before this time were pruned (0: none were).
pub fn pruned_before(tx: &impl Reader) -> Result<i64, StoreError> {
    Ok(tx
        .get_raw(META, META_USAGE_PRUNED_BEFORE)?
        .and_then(|b| b.as_slice().try_into().ok().map(i64::from_be_bytes))
        .unwrap_or(0))
}

/// The rows of `[from, to)`: whole days from the rollups; a day the period
/// covers only in part from its raw records, unless that part reaches to
/// now (nothing later is recorded) or the day's raw records were pruned
/// (its rollup then stands for the whole day).
pub fn rows(store: &Store, from: i64, to: i64, now: i64) -> Result<Vec<Row>, StoreError> {
    let (from, to) = (from.max(0), to.max(0));
    if from >= to {
        return Ok(Vec::new());
    }
    store.read(|tx| {
        let pruned = pruned_before(tx)?;
        let whole = |start: i64, end: i64| {
            let day = start.div_euclid(DAY_MS) * DAY_MS;
            (start == day && (end == day + DAY_MS || end > now)) || day + DAY_MS <= pruned
        };
        let first = from.div_euclid(DAY_MS);
        let last = (to - 1).div_euclid(DAY_MS);
        let (mut whole_from, mut whole_to) = (first, last + 1);
        let mut out = Vec::new();
        let first_end = to.min((first + 1) * DAY_MS);
        if !whole(from, first_end) {
            out.extend(raw_rows(tx, from, first_end)?);
            whole_from = first + 1;
        }
        let last_start = last * DAY_MS;
        if last > first && !whole(last_start, to) {
            out.extend(raw_rows(tx, last_start, to)?);
            whole_to = last;
        }
        if whole_from < whole_to {
            out.extend(rollup_rows(tx, whole_from, whole_to)?);
        }
        Ok(out)
    })
}

/// Rollups of the days `[first, end)` (day indexes).
fn rollup_rows(tx: &redb::ReadTransaction, first: i64, end: i64) -> Result<Vec<Row>, StoreError> {
    let table = match tx.open_table(USAGE_ROLLUPS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let clamp = |d: i64| u32::try_from(d.max(0)).unwrap_or(u32::MAX).to_be_bytes();
    let (lo, hi) = (clamp(first), clamp(end));
    let mut out = Vec::new();
    for row in redb::ReadableTable::range(&table, lo.as_slice()..hi.as_slice())? {
        let (key, value) = row?;
        let (day, parts) = split_key(key.value())?;
        let [tenant, key_id, model, endpoint] = parts[..] else {
            return Err(StoreError::Corrupt("a rollup key is malformed".into()));
        };
        out.push(Row {
            day,
            tenant_id: tenant.to_owned(),
            key_id: key_id.to_owned(),
            model: model.to_owned(),
            endpoint: Endpoint::parse(endpoint).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            sum: codec::decode(value.value())?,
        });
    }
    Ok(out)
}

/// Raw records of `[from, to)`, one row each.
fn raw_rows(tx: &redb::ReadTransaction, from: i64, to: i64) -> Result<Vec<Row>, StoreError> {
    let table = match tx.open_table(USAGE) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let (lo, hi) = (from.to_be_bytes(), to.to_be_bytes());
    let mut out = Vec::new();
    for row in redb::ReadableTable::range(&table, lo.as_slice()..hi.as_slice())? {
        let (key, value) = row?;
        let r: UsageRecord = compact::decode(key.value(), value.value())?;
        let mut sum = Rollup::default();
        sum.add(&r);
        out.push(Row {
            day: r.at.div_euclid(DAY_MS) * DAY_MS,
            tenant_id: r.tenant_id,
            key_id: r.key_id,
            model: r.model,
            endpoint: r.endpoint,
            sum,
        });
    }
    Ok(out)
}

/// Deletes up to `batch` raw usage records older than `before` in one
/// transaction and records that records before it are gone (the reads
/// then take those days from their rollups). Returns the number deleted:
/// fewer than `batch` means the prefix is done.
pub async fn prune_usage(store: &Store, before: i64, batch: usize) -> Result<usize, StoreError> {
    store
        .write(move |txn| {
            if pruned_before(txn)? < before {
                txn.open_table(META)?
                    .insert(META_USAGE_PRUNED_BEFORE, before.to_be_bytes().as_slice())?;
            }
            let mut table = txn.open_table(USAGE)?;
            let hi = before.max(0).to_be_bytes();
            let doomed: Vec<Vec<u8>> = redb::ReadableTable::range(&table, ..hi.as_slice())?
                .take(batch)
                .map(|row| row.map(|(k, _)| k.value().to_vec()))
                .collect::<Result<_, _>>()?;
            for key in &doomed {
                table.remove(key.as_slice())?;
            }
            Ok(doomed.len())
        })
        .await
}

/// Schema 7 -> 8: the rollups of every stored usage record and refusal.
/// The rollup tables are rebuilt from scratch, so a rerun after an
/// interrupted upgrade is harmless.
pub fn migrate_v7_to_v8(txn: &redb::WriteTransaction) -> Result<(), StoreError> {
    use std::collections::BTreeMap;
    txn.delete_table(USAGE_ROLLUPS)?;
    txn.delete_table(ERROR_ROLLUPS)?;
    let mut sums: BTreeMap<Vec<u8>, Rollup> = BTreeMap::new();
    {
        let usage = txn.open_table(USAGE)?;
        for row in redb::ReadableTable::iter(&usage)? {
            let (key, value) = row?;
            let record: UsageRecord = compact::decode(key.value(), value.value())?;
            sums.entry(usage_key(&record)).or_default().add(&record);
        }
    }
    for (key, sum) in &sums {
        ROLLUP_TABLE.put(txn, key, sum)?;
    }
    txn.open_table(ERROR_ROLLUPS)?;
    for entry in crate::audit::AUDIT_TABLE.all(txn)? {
        if entry.action == crate::audit::REFUSED {
            add_error(txn, entry.at, &entry.tenant_id, &entry.actor, &entry.target)?;
        }
    }
    Ok(())
}
