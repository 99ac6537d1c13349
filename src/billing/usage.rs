//! Reading the ledger back: usage aggregates by day, key, model and
//! endpoint; the spend events; the wallet's history. Every query is one
//! read transaction over a time range of a time-ordered table. Aggregates
//! read the daily rollups ([`super::rollups`]), never every raw record;
//! [`records`] lists the raw records themselves.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::rollups::{self, Rollup, Row};
use super::{StoredEvent, UsageRecord, WalletEntry};
use crate::base::money::micros_to_credits;
use crate::base::time::{format_rfc3339, now_ms};
pub use crate::catalogue::Endpoint;
use crate::store::tables::{Def, EVENTS, USAGE, WALLET_ENTRIES};
use crate::store::{Store, StoreError, codec, compact};

/// Which records a query covers.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// `None`: every tenant (the operator's view).
    pub tenant_id: Option<String>,
    /// `None`: every key of the scope.
    pub key_ids: Option<Vec<String>>,
    /// Unix ms, inclusive.
    pub from: i64,
    /// Unix ms, exclusive.
    pub to: i64,
    /// `None`: every endpoint.
    pub endpoint: Option<Endpoint>,
}

impl Scope {
    fn covers(&self, tenant: Option<&str>, key: Option<&str>) -> bool {
        if let Some(t) = &self.tenant_id
            && tenant != Some(t.as_str())
        {
            return false;
        }
        match (&self.key_ids, key) {
            (Some(keys), Some(key)) => keys.iter().any(|k| k == key),
            (Some(_), None) => false,
            (None, _) => true,
        }
    }
}

/// Where a period starts when the caller names no `from`: midnight (UTC)
/// of the day 30 days ago. Whole days, so that the default period reads
/// the daily rollups only and never the raw records of a part of a day
/// (at 10 M stored records that part alone cost seconds).
pub fn default_from(now: i64) -> i64 {
    (now - 30 * rollups::DAY_MS).div_euclid(rollups::DAY_MS) * rollups::DAY_MS
}

/// Rows of a time-keyed table whose key starts within `[from, to)`.
fn in_range<V: DeserializeOwned>(
    store: &Store,
    def: Def,
    from: i64,
    to: i64,
) -> Result<Vec<V>, StoreError> {
    store.read(|tx| {
        let table = match tx.open_table(def) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let (from, to) = (from.max(0).to_be_bytes(), to.max(0).to_be_bytes());
        let mut out = Vec::new();
        for row in table.range(from.as_slice()..to.as_slice())? {
            let (_, value) = row?;
            out.push(codec::decode(value.value())?);
        }
        Ok(out)
    })
}

/// The rollup rows of the scope (see [`rollups::rows`]), filtered.
pub fn rows(store: &Store, scope: &Scope) -> Result<Vec<Row>, StoreError> {
    Ok(rollups::rows(store, scope.from, scope.to, now_ms())?
        .into_iter()
        .filter(|r| scope.covers(Some(&r.tenant_id), Some(&r.key_id)))
        .filter(|r| scope.endpoint.is_none_or(|e| e == r.endpoint))
        .collect())
}

pub fn records(store: &Store, scope: &Scope) -> Result<Vec<UsageRecord>, StoreError> {
    let rows = store.read(|tx| {
        let table = match tx.open_table(USAGE) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let (from, to) = (
            scope.from.max(0).to_be_bytes(),
            scope.to.max(0).to_be_bytes(),
        );
        let mut out = Vec::new();
        for row in table.range(from.as_slice()..to.as_slice())? {
            let (key, value) = row?;
            out.push(compact::decode::<UsageRecord>(key.value(), value.value())?);
        }
        Ok(out)
    })?;
    Ok(rows
        .into_iter()
        .filter(|r| scope.covers(Some(&r.tenant_id), Some(&r.key_id)))
        .filter(|r| scope.endpoint.is_none_or(|e| e == r.endpoint))
        .collect())
}

fn view(sum: &Rollup) -> Value {
    json!({
        "requests": sum.requests,
        "promptTokens": sum.prompt_tokens,
        "completionTokens": sum.completion_tokens,
        "cost": micros_to_credits(sum.cost),
    })
}

/// Usage grouped by UTC day, key, model and endpoint, with totals and a
/// total per endpoint.
pub fn aggregate(store: &Store, scope: &Scope) -> Result<Value, StoreError> {
    let mut groups: BTreeMap<(String, String, String, Endpoint), Rollup> = BTreeMap::new();
    let mut endpoints: BTreeMap<Endpoint, Rollup> = BTreeMap::new();
    let mut total = Rollup::default();
    for r in rows(store, scope)? {
        let day = format_rfc3339(r.day)[..10].to_owned();
        groups
            .entry((day, r.key_id.clone(), r.model.clone(), r.endpoint))
            .or_default()
            .merge(&r.sum);
        endpoints.entry(r.endpoint).or_default().merge(&r.sum);
        total.merge(&r.sum);
    }
    let data: Vec<Value> = groups
        .iter()
        .map(|((day, key, model, endpoint), sum)| {
            let mut row = view(sum);
            row["day"] = json!(day);
            row["keyId"] = json!(key);
            row["model"] = json!(model);
            row["endpoint"] = json!(endpoint.as_str());
            row
        })
        .collect();
    let by_endpoint: Vec<Value> = endpoints
        .iter()
        .map(|(endpoint, sum)| {
            let mut row = view(sum);
            row["endpoint"] = json!(endpoint.as_str());
            row
        })
        .collect();
    Ok(json!({
        "object": "usage",
        "from": format_rfc3339(scope.from),
        "to": format_rfc3339(scope.to),
        "endpoint": scope.endpoint.map(Endpoint::as_str),
        "data": data,
        "byEndpoint": by_endpoint,
        "totals": view(&total),
    }))
}

/// Spend events in the scope (key-bound events filtered by key).
pub fn events(store: &Store, scope: &Scope) -> Result<Vec<StoredEvent>, StoreError> {
    Ok(
        in_range::<StoredEvent>(store, EVENTS, scope.from, scope.to)?
            .into_iter()
            .filter(|e| {
                let key = serde_json::from_str::<Value>(&e.data)
                    .ok()
                    .and_then(|d| d["keyId"].as_str().map(str::to_owned));
                scope.covers(e.tenant_id.as_deref(), key.as_deref())
            })
            .collect(),
    )
}

/// Top-ups, and each day's charges, newest first.
pub fn wallet_history(store: &Store, scope: &Scope) -> Result<Value, StoreError> {
    let mut entries: Vec<(i64, Value)> =
        in_range::<WalletEntry>(store, WALLET_ENTRIES, scope.from, scope.to)?
            .into_iter()
            .filter(|e| scope.tenant_id.as_ref().is_none_or(|t| *t == e.tenant_id))
            .map(|e| {
                (
                    e.at,
                    json!({
                        "type": "top_up",
                        "tenantId": e.tenant_id,
                        "amount": micros_to_credits(e.amount),
                        "balanceAfter": micros_to_credits(e.balance_after),
                        "by": e.by,
                        "at": format_rfc3339(e.at),
                    }),
                )
            })
            .collect();
    let mut days: BTreeMap<(String, String), Rollup> = BTreeMap::new();
    for r in rows(store, scope)? {
        let day = format_rfc3339(r.day)[..10].to_owned();
        days.entry((day, r.tenant_id.clone()))
            .or_default()
            .merge(&r.sum);
    }
    for ((day, tenant), sum) in days {
        let last = sum.last_at;
        let mut row = view(&sum);
        row["type"] = json!("charges");
        row["tenantId"] = json!(tenant);
        row["day"] = json!(day);
        row["amount"] = json!(-micros_to_credits(sum.cost));
        entries.push((last, row));
    }
    entries.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    Ok(json!({
        "object": "list",
        "data": entries.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
    }))
}
