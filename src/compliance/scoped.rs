//! Reading the compliance records a tenant owns (incidents, reviews,
//! consents) the one way they are all read: one record by id, hidden from
//! other tenants, and a tenant's records newest first. `None` for the
//! tenant is the operator's view, every tenant's records.

use std::cmp::Reverse;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::store::{Reader, StoreError, Table};

/// A record that belongs to one tenant.
pub trait Owned {
    fn tenant_id(&self) -> &str;
}

fn visible<V: Owned>(record: &V, tenant_id: Option<&str>) -> bool {
    tenant_id.is_none_or(|t| record.tenant_id() == t)
}

/// The record `id`, if `tenant_id` may see it; otherwise `NotFound`
/// naming it a `what` (a record of another tenant reads as absent).
pub fn get<V: Owned + Serialize + DeserializeOwned>(
    table: &Table<V>,
    tx: &impl Reader,
    tenant_id: Option<&str>,
    id: &str,
    what: &str,
) -> Result<V, StoreError> {
    table
        .get(tx, id.as_bytes())?
        .filter(|r| visible(r, tenant_id))
        .ok_or_else(|| StoreError::NotFound(format!("no {what} `{id}`")))
}

/// The records `tenant_id` may see that `keep` keeps, the latest `at`
/// first.
pub fn list<V: Owned + Serialize + DeserializeOwned>(
    table: &Table<V>,
    tx: &impl Reader,
    tenant_id: Option<&str>,
    keep: impl Fn(&V) -> bool,
    at: impl Fn(&V) -> i64,
) -> Result<Vec<V>, StoreError> {
    let mut out: Vec<V> = table
        .all(tx)?
        .into_iter()
        .filter(|r| visible(r, tenant_id) && keep(r))
        .collect();
    out.sort_by_key(|r| Reverse(at(r)));
    Ok(out)
}
