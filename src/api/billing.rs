//! Dashboard routes for money: usage, one key's consumption, top-ups and
//! the wallet's history.
//!
//! Scope: the `owner` role is the operator and sees every tenant; every
//! other role sees its own tenant only. A role with `usage.view_own` but not
//! `usage.view_all` sees the keys it owns. A record outside the caller's
//! scope answers 404, as if it did not exist.

use axum::Router;
use axum::extract::{Path, State};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::extract::{Require, Signed, perm};
use crate::api::json::{Json, Query, list_answer};
use crate::api::state::AppState;
use crate::auth::accounts::{Permission, Role};
use crate::auth::keys::ApiKey;
use crate::auth::sessions::CurrentAccount;
use crate::base::error::{ApiError, Code};
use crate::base::money::credits_to_micros;
use crate::base::time::{now_ms, parse_rfc3339};
use crate::billing::{self, usage};
use crate::catalogue::Endpoint;
use crate::tenants;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/usage", get(usage_report))
        .route("/api/v1/usage/records", get(usage_records))
        .route("/api/v1/keys/{id}", get(show_key))
        .route("/api/v1/tenants/{id}/credits", post(top_up))
        .route("/api/v1/billing/history", get(history))
}

/// Storage refusals in the HTTP error shape (`impl From<StoreError> for
/// ApiError` in `src/api/error.rs`), for `.map_err`.
pub use crate::api::error::store_error;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RangeQuery {
    from: Option<String>,
    to: Option<String>,
    key_id: Option<String>,
    tenant: Option<String>,
    /// Only this endpoint (`chat`, `messages`, ...).
    endpoint: Option<String>,
}

/// The tenant a caller may read: its own, or any (by id or name) for the
/// operator's owners and admins (`None`: every tenant).
pub(crate) fn tenant_scope(
    current: &CurrentAccount,
    asked: Option<&str>,
    state: &AppState,
) -> Result<Option<String>, ApiError> {
    let account = &current.account;
    match (current.reaches_all_tenants(), asked) {
        (true, None) => Ok(None),
        (true, Some(t)) => Ok(Some(
            state
                .store
                .read(|tx| tenants::resolve(tx, t))
                .map_err(store_error)?
                .id,
        )),
        // A tenant may be named by its id or its name; any other tenant
        // (or none) is forbidden alike, so existence does not leak.
        (_, Some(t))
            if t != account.tenant_id
                && !state
                    .store
                    .read(|tx| tenants::resolve(tx, t))
                    .is_ok_and(|tenant| tenant.id == account.tenant_id) =>
        {
            Err(ApiError::new(
                Code::Forbidden,
                "only the operator tenant's owners and admins reach other tenants",
            ))
        }
        _ => Ok(Some(account.tenant_id.clone())),
    }
}

fn range(query: &RangeQuery) -> Result<(i64, i64), ApiError> {
    let now = now_ms();
    let parse = |field: &str, value: &Option<String>, default: i64| match value {
        None => Ok(default),
        Some(text) => parse_rfc3339(text).map_err(|m| ApiError::invalid(field, m)),
    };
    let from = parse("from", &query.from, usage::default_from(now))?;
    let to = parse("to", &query.to, now + 1)?;
    if from >= to {
        return Err(ApiError::invalid("from", "`from` must be before `to`"));
    }
    Ok((from, to))
}

/// Whose usage an account may read: `None` for every key of its scope
/// (`usage.view_all`), else the keys it owns (`usage.view_own`); a role
/// with neither is refused. The usage endpoint and the stats share it.
pub(crate) fn usage_keys(
    state: &AppState,
    current: &CurrentAccount,
) -> Result<Option<Vec<String>>, ApiError> {
    let account = &current.account;
    let all = account.role.can(Permission::ViewAllUsage);
    if !all && !account.role.can(Permission::ViewOwnUsage) {
        return Err(ApiError::new(
            Code::Forbidden,
            format!("the role `{}` cannot read usage", account.role.as_str()),
        ));
    }
    if all {
        return Ok(None);
    }
    let own = state
        .keys
        .list(Some(&account.tenant_id))
        .map_err(store_error)?
        .into_iter()
        .filter(|k| k.owner_account_id.as_deref() == Some(&account.id))
        .map(|k| k.id)
        .collect();
    Ok(Some(own))
}

/// The usage scope of a signed-in account for a query.
fn usage_scope(
    state: &AppState,
    current: &CurrentAccount,
    query: &RangeQuery,
) -> Result<usage::Scope, ApiError> {
    let mut key_ids = usage_keys(state, current)?;
    let (from, to) = range(query)?;
    let tenant_id = tenant_scope(current, query.tenant.as_deref(), state)?;
    if let Some(key) = &query.key_id {
        // A key the caller may not see is 404, as on `GET /keys/{id}`.
        visible_key(state, current, key)?;
        match &mut key_ids {
            Some(own) => own.retain(|k| k == key),
            None => key_ids = Some(vec![key.clone()]),
        }
    }
    Ok(usage::Scope {
        tenant_id,
        key_ids,
        from,
        to,
        endpoint: endpoint_filter(query.endpoint.as_deref())?,
    })
}

/// The `endpoint` query parameter: one of the closed set, else 400.
pub(crate) fn endpoint_filter(asked: Option<&str>) -> Result<Option<Endpoint>, ApiError> {
    asked
        .map(|name| Endpoint::parse(name).map_err(|e| ApiError::invalid("endpoint", e.to_string())))
        .transpose()
}

/// `GET /api/v1/usage`: aggregates by day, key, model and endpoint, a
/// total per endpoint, and the spend events of the period (key-bound, so
/// not narrowed by `endpoint`).
async fn usage_report(
    State(state): State<AppState>,
    Signed(current): Signed,
    Query(query): Query<RangeQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = usage_scope(&state, &current, &query)?;
    let mut report = usage::aggregate(&state.store, &scope).map_err(store_error)?;
    report["events"] = json!(
        usage::events(&state.store, &scope)
            .map_err(store_error)?
            .iter()
            .map(billing::StoredEvent::envelope)
            .collect::<Vec<_>>()
    );
    Ok(axum::Json(report))
}

/// `GET /api/v1/usage/records`: the usage records themselves, oldest first.
async fn usage_records(
    State(state): State<AppState>,
    Signed(current): Signed,
    Query(query): Query<RangeQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = usage_scope(&state, &current, &query)?;
    let records = usage::records(&state.store, &scope).map_err(store_error)?;
    Ok(axum::Json(list_answer(
        records.iter().map(billing::UsageRecord::view),
    )))
}

/// `GET /api/v1/keys/{id}`: the key with its consumption and notified
/// thresholds in the current cycle.
async fn show_key(
    State(state): State<AppState>,
    Signed(current): Signed,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let account = &current.account;
    // A role that may see no key at all is refused before the lookup, so
    // its answer is the same whether the key exists or not.
    if !may_see_keys(account.role) {
        return Err(ApiError::new(
            Code::Forbidden,
            format!("the role `{}` cannot read API keys", account.role.as_str()),
        ));
    }
    Ok(axum::Json(super::keys::key_view(
        &state,
        &visible_key(&state, &current, &id)?,
        now_ms(),
    )))
}

/// Whether a role may see any key (its own, its tenant's or all).
fn may_see_keys(role: Role) -> bool {
    role.can(Permission::ManageAllKeys)
        || role.can(Permission::ViewAllUsage)
        || role.can(Permission::ManageOwnKeys)
}

/// The key `id` if the caller may see it. A key outside the caller's
/// scope answers exactly as a key that does not exist: 404.
pub(crate) fn visible_key(
    state: &AppState,
    current: &CurrentAccount,
    id: &str,
) -> Result<ApiKey, ApiError> {
    state
        .keys
        .get(id)
        .ok()
        .filter(|key| key_visible(current, key))
        .ok_or_else(|| ApiError::not_found(format!("no API key `{id}`")))
}

/// Whether an account may see a key: the operator's owners and admins
/// every key; roles that manage all keys or read all usage their tenant's;
/// `user` the keys it owns.
pub(crate) fn key_visible(current: &CurrentAccount, key: &ApiKey) -> bool {
    if current.reaches_all_tenants() {
        return true;
    }
    let account = &current.account;
    match account.role {
        role if role.can(Permission::ManageAllKeys) || role.can(Permission::ViewAllUsage) => {
            key.tenant_id == account.tenant_id
        }
        role if role.can(Permission::ManageOwnKeys) => {
            key.tenant_id == account.tenant_id
                && key.owner_account_id.as_deref() == Some(&account.id)
        }
        _ => false,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopUpBody {
    /// Credits to add.
    amount: f64,
}

/// `POST /api/v1/tenants/{id}/credits`: adds credits to a wallet.
async fn top_up(
    State(state): State<AppState>,
    required: Require<perm::TopUpCredits>,
    Path(tenant): Path<String>,
    Json(body): Json<TopUpBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let account = &required.0.account;
    let target = tenant_scope(&required.0, Some(&tenant), &state)?.unwrap_or(tenant);
    let micros = credits_to_micros(body.amount).map_err(|m| ApiError::invalid("amount", m))?;
    if micros == 0 {
        return Err(ApiError::invalid(
            "amount",
            "the amount must be more than 0 credits",
        ));
    }
    let tenant = billing::top_up(&state.store, &state.ledger, &target, micros, &account.id)
        .await
        .map_err(store_error)?;
    tracing::info!(tenant = %tenant.id, by = %account.id, "wallet topped up");
    Ok(axum::Json(super::tenants::tenant_view(&state, &tenant)))
}

/// `GET /api/v1/billing/history`: top-ups and each day's charges.
async fn history(
    State(state): State<AppState>,
    required: Require<perm::ViewBilling>,
    Query(query): Query<RangeQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    if query.key_id.is_some() {
        return Err(ApiError::invalid(
            "keyId",
            "the wallet history is per tenant",
        ));
    }
    let (from, to) = range(&query)?;
    let scope = usage::Scope {
        tenant_id: tenant_scope(&required.0, query.tenant.as_deref(), &state)?,
        key_ids: None,
        from,
        to,
        endpoint: None,
    };
    Ok(axum::Json(
        usage::wallet_history(&state.store, &scope).map_err(store_error)?,
    ))
}
