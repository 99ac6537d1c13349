//! Dashboard routes for API keys: list, create, update, rotate, revoke.
//! (`GET /api/v1/keys/{id}` lives with the money routes in `billing`.)
//!
//! Scope follows the key visibility rule of [`key_visible`]: the owner
//! reaches every key, `admin` its tenant's, `user` the keys it owns;
//! `billing` and `auditor` may list their tenant's keys but change none.
//! A key outside the caller's scope answers 404, as if it did not exist.
//! Each change is audited by the session layer (every non-GET `/api/v1`
//! request is); key values never reach the audit log: they are generated
//! here and returned once.

use axum::Router;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::routing::{get, patch, post};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::billing::{key_visible, store_error, tenant_scope, visible_key};
use crate::api::extract::Signed;
use crate::api::json::{Json, Query};
use crate::api::state::AppState;
use crate::auth::accounts::{self, Account, Permission};
use crate::auth::keys::{
    IssuedKey, KeySettings, KeyState, KeyUpdate, Latitude, Patch, ResetInterval,
};
use crate::auth::sessions::CurrentAccount;
use crate::base::error::{ApiError, Code};
use crate::base::json::nullable;
use crate::base::money::credits_to_micros;
use crate::base::time::{now_ms, parse_rfc3339};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/keys", get(list_keys).post(create_key))
        .route("/api/v1/keys/{id}", patch(update_key))
        .route("/api/v1/keys/{id}/rotate", post(rotate_key))
        .route("/api/v1/keys/{id}/revoke", post(revoke_key))
}

fn forbidden(account: &Account, what: &str) -> ApiError {
    ApiError::new(
        Code::Forbidden,
        format!("the role `{}` cannot {what}", account.role.as_str()),
    )
}

/// How far the caller may move a key's controls: `keys.manage_all` any
/// way, `keys.manage_own` alone only tighter.
fn latitude(state: &AppState, account: &Account) -> Latitude {
    if account.role.can(Permission::ManageAllKeys) {
        Latitude::Any
    } else {
        Latitude::TightenOnly {
            default_rate_limit: state.config.default_rate_limit,
        }
    }
}

fn can_manage_keys(account: &Account) -> bool {
    account.role.can(Permission::ManageAllKeys) || account.role.can(Permission::ManageOwnKeys)
}

/// A signed-in account that manages keys (`keys.manage_all` or
/// `keys.manage_own`); checked before the body is read.
struct KeyManager(CurrentAccount);

impl<S: Send + Sync> FromRequestParts<S> for KeyManager {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Signed(current) = Signed::from_request_parts(parts, state).await?;
        if !can_manage_keys(&current.account) {
            return Err(forbidden(&current.account, "create or change API keys"));
        }
        Ok(KeyManager(current))
    }
}

fn parse_state(text: &str) -> Result<KeyState, ApiError> {
    [
        KeyState::Active,
        KeyState::Expired,
        KeyState::Revoked,
        KeyState::OverBudget,
    ]
    .into_iter()
    .find(|s| s.as_str() == text)
    .ok_or_else(|| {
        ApiError::invalid(
            "state",
            format!("`{text}` is not a key state; use active, expired, revoked or over_budget"),
        )
    })
}

fn credits(field: &str, amount: f64) -> Result<u64, ApiError> {
    credits_to_micros(amount).map_err(|m| ApiError::invalid(field, m))
}

fn instant(field: &str, text: &str) -> Result<i64, ApiError> {
    parse_rfc3339(text).map_err(|m| ApiError::invalid(field, format!("`{field}`: {m}")))
}

/// A key's view with `creditsReserved`: what its requests in flight (and
/// its rotation partner's) reserved at admission, from the ledger.
pub(crate) fn key_view(state: &AppState, key: &crate::auth::keys::ApiKey, now: i64) -> Value {
    let mut view = key.view(now);
    let (_, reserved) = state.ledger.key_spend(key, now);
    view["creditsReserved"] = json!(crate::base::money::micros_to_credits(reserved));
    view
}

fn issued_view(issued: &IssuedKey) -> Value {
    json!({ "key": issued.key.view(now_ms()), "value": issued.value })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    state: Option<String>,
    /// Owner only: one tenant (id or name) instead of every tenant.
    tenant: Option<String>,
}

/// `GET /api/v1/keys`: the keys the caller may see, optionally in one
/// state.
async fn list_keys(
    State(state): State<AppState>,
    Signed(current): Signed,
    Query(query): Query<ListQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let account = &current.account;
    if !can_manage_keys(account) && !account.role.can(Permission::ViewAllUsage) {
        return Err(forbidden(account, "list API keys"));
    }
    let wanted = query.state.as_deref().map(parse_state).transpose()?;
    let tenant = tenant_scope(&current, query.tenant.as_deref(), &state)?;
    let now = now_ms();
    let data: Vec<Value> = state
        .keys
        .list(tenant.as_deref())
        .map_err(store_error)?
        .iter()
        .filter(|k| key_visible(&current, k))
        .filter(|k| wanted.is_none_or(|s| k.state(now) == s))
        .map(|k| key_view(&state, k, now))
        .collect();
    Ok(axum::Json(json!({ "data": data })))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewKeyBody {
    key_name: String,
    /// Credits per reset interval.
    credit_limit: Option<f64>,
    reset_interval: Option<ResetInterval>,
    rate_limit: Option<u32>,
    /// Tokens per minute (prompt + completion).
    tpm_limit: Option<u64>,
    /// RFC 3339.
    expires_at: Option<String>,
    #[serde(default)]
    allow_high_risk: bool,
    owner_account_id: Option<String>,
}

/// `POST /api/v1/keys`: a new key; its value is in this answer only.
async fn create_key(
    State(state): State<AppState>,
    KeyManager(current): KeyManager,
    Json(body): Json<NewKeyBody>,
) -> Result<(StatusCode, axum::Json<Value>), ApiError> {
    let account = &current.account;
    key_name(&body.key_name)?;
    let owner = body.owner_account_id.unwrap_or_else(|| account.id.clone());
    let mut tenant = account.tenant_id.clone();
    if owner != account.id {
        if !account.role.can(Permission::ManageAllKeys) {
            return Err(forbidden(account, "create keys owned by another account"));
        }
        let found = state
            .store
            .read(|tx| accounts::find(tx, &owner))
            .map_err(|_| ApiError::invalid("ownerAccountId", format!("no account `{owner}`")))?;
        // The operator's owners and admins may create a key for an account
        // of any tenant; the key belongs to that account's tenant.
        if current.reaches_all_tenants() {
            tenant = found.tenant_id;
        } else if found.tenant_id != account.tenant_id {
            return Err(ApiError::invalid(
                "ownerAccountId",
                format!("no account `{owner}`"),
            ));
        }
    }
    let settings = KeySettings {
        name: body.key_name,
        credit_limit: body
            .credit_limit
            .map(|c| credits("creditLimit", c))
            .transpose()?,
        reset_interval: body.reset_interval,
        rate_limit: body.rate_limit,
        expires_at: body
            .expires_at
            .map(|t| instant("expiresAt", &t))
            .transpose()?,
        allow_high_risk: body.allow_high_risk,
        owner_account_id: Some(owner),
        tpm_limit: body.tpm_limit,
    };
    let issued = state
        .keys
        .create(&tenant, settings, latitude(&state, &current.account))
        .await
        .map_err(store_error)?;
    tracing::info!(key = %issued.key.id, by = %account.id, "API key created");
    Ok((StatusCode::CREATED, axum::Json(issued_view(&issued))))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct KeyPatchBody {
    key_name: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    credit_limit: Option<Option<f64>>,
    reset_interval: Option<ResetInterval>,
    #[serde(default, deserialize_with = "nullable")]
    rate_limit: Option<Option<u32>>,
    #[serde(default, deserialize_with = "nullable")]
    tpm_limit: Option<Option<u64>>,
    #[serde(default, deserialize_with = "nullable")]
    expires_at: Option<Option<String>>,
    allow_high_risk: Option<bool>,
}

/// Checks a key name up front, so a refusal names the field (`keyName`).
fn key_name(name: &str) -> Result<(), ApiError> {
    crate::auth::keys::validate_key_name(name)
        .map(drop)
        .map_err(|e| ApiError::invalid("keyName", e.to_string()))
}

/// Absent keeps, `null` clears, a value sets.
fn patch_of<T, U>(
    value: Option<Option<T>>,
    convert: impl FnOnce(T) -> Result<U, ApiError>,
) -> Result<Patch<U>, ApiError> {
    Ok(match value {
        None => Patch::Keep,
        Some(None) => Patch::Clear,
        Some(Some(v)) => Patch::Set(convert(v)?),
    })
}

/// `PATCH /api/v1/keys/{id}`: caps, reset interval, rate and token
/// limits, expiry, name and `allowHighRisk`.
async fn update_key(
    State(state): State<AppState>,
    KeyManager(current): KeyManager,
    Path(id): Path<String>,
    Json(body): Json<KeyPatchBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let key = visible_key(&state, &current, &id)?;
    if let Some(name) = &body.key_name {
        key_name(name)?;
    }
    let update = KeyUpdate {
        name: body.key_name,
        credit_limit: patch_of(body.credit_limit, |c| credits("creditLimit", c))?,
        reset_interval: body.reset_interval,
        rate_limit: patch_of(body.rate_limit, Ok)?,
        expires_at: patch_of(body.expires_at, |t| instant("expiresAt", &t))?,
        allow_high_risk: body.allow_high_risk,
        tpm_limit: patch_of(body.tpm_limit, Ok)?,
    };
    let key = state
        .keys
        .update(&key.id, update, latitude(&state, &current.account))
        .await
        .map_err(store_error)?;
    Ok(axum::Json(key_view(&state, &key, now_ms())))
}

/// `POST /api/v1/keys/{id}/rotate`: a new key with the same settings and
/// consumption; the old one stays valid until revoked.
async fn rotate_key(
    State(state): State<AppState>,
    KeyManager(current): KeyManager,
    Path(id): Path<String>,
) -> Result<(StatusCode, axum::Json<Value>), ApiError> {
    let key = visible_key(&state, &current, &id)?;
    let issued = state.keys.rotate(&key.id).await.map_err(store_error)?;
    tracing::info!(old = %key.id, new = %issued.key.id, "API key rotated");
    Ok((StatusCode::CREATED, axum::Json(issued_view(&issued))))
}

/// `POST /api/v1/keys/{id}/revoke`: the key answers 403 from now on.
async fn revoke_key(
    State(state): State<AppState>,
    KeyManager(current): KeyManager,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let key = visible_key(&state, &current, &id)?;
    if key.revoked_at.is_some() {
        return Err(ApiError::new(
            Code::Conflict,
            format!("the API key `{id}` is already revoked"),
        ));
    }
    let key = state.keys.revoke(&key.id).await.map_err(store_error)?;
    tracing::info!(key = %key.id, "API key revoked");
    Ok(axum::Json(key_view(&state, &key, now_ms())))
}
