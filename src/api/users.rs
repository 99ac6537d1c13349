//! Dashboard routes for accounts: list, create (invite), change role,
//! disable, reset a password. Owner and admin only (`users.manage`).
//!
//! Rules beyond the permission: only an owner (`users.assign_owner`) gives
//! or takes the `owner` role, or changes an owner's account at all (an
//! admin who could disable an owner or reset its password could take the
//! tenant over); nobody disables or demotes the last enabled owner of a
//! tenant (the store refuses it in the same transaction); an account does
//! not disable itself. Admins reach their tenant's accounts; the owner, the
//! operator, every tenant's. An account outside the caller's scope answers
//! 404.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, patch};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::billing::{store_error, tenant_scope};
use crate::api::extract::{Require, perm};
use crate::api::json::{Json, Query};
use crate::api::state::AppState;
use crate::auth::accounts::{self, Account, Permission, Role};
use crate::auth::sessions;
use crate::base::error::{ApiError, Code};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/users", get(list_users).post(create_user))
        .route("/api/v1/users/{id}", patch(update_user))
}

fn parse_role(text: &str) -> Result<Role, ApiError> {
    text.parse::<Role>()
        .map_err(|m| ApiError::invalid("role", m))
}

fn may_assign(caller: &Account, role: Role) -> Result<(), ApiError> {
    if role == Role::Owner && !caller.role.can(Permission::AssignOwner) {
        return Err(ApiError::new(
            Code::Forbidden,
            "only an owner gives or takes the `owner` role",
        ));
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    /// The operator's owners and admins only: one tenant (id or name)
    /// instead of every tenant.
    tenant: Option<String>,
}

/// `GET /api/v1/users`: the accounts of the caller's tenant (every
/// tenant's for the operator's owners and admins, unless `tenant` narrows
/// it).
async fn list_users(
    State(state): State<AppState>,
    required: Require<perm::ManageUsers>,
    Query(query): Query<ListQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let tenant = tenant_scope(&required.0, query.tenant.as_deref(), &state)?;
    let data: Vec<Value> = accounts::list(&state.store, tenant.as_deref())
        .map_err(store_error)?
        .iter()
        .map(Account::view)
        .collect();
    Ok(axum::Json(json!({ "data": data })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewUserBody {
    email: String,
    role: String,
    /// Generated (and returned once) when absent.
    password: Option<String>,
}

/// `POST /api/v1/users`: a new account in the caller's tenant, or for the
/// operator's owners and admins in the tenant named by `?tenant=` (how a
/// new tenant gets its first owner from the dashboard).
async fn create_user(
    State(state): State<AppState>,
    required: Require<perm::ManageUsers>,
    Query(query): Query<ListQuery>,
    Json(body): Json<NewUserBody>,
) -> Result<(StatusCode, axum::Json<Value>), ApiError> {
    let caller = &required.0.account;
    let tenant = tenant_scope(&required.0, query.tenant.as_deref(), &state)?
        .unwrap_or_else(|| caller.tenant_id.clone());
    let role = parse_role(&body.role)?;
    may_assign(caller, role)?;
    accounts::normalize_email(&body.email).map_err(|m| ApiError::invalid("email", m))?;
    let generated = body.password.is_none().then(accounts::generate_password);
    let password = body
        .password
        .as_deref()
        .or(generated.as_deref())
        .unwrap_or_default();
    let account = accounts::create(&state.store, &body.email, &tenant, role, password)
        .await
        .map_err(store_error)?;
    tracing::info!(account = %account.id, role = role.as_str(), by = %caller.id, "account created");
    let mut answer = json!({ "user": account.view() });
    if let Some(password) = generated {
        answer["password"] = json!(password);
    }
    Ok((StatusCode::CREATED, axum::Json(answer)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserPatchBody {
    role: Option<String>,
    disabled: Option<bool>,
    password: Option<String>,
}

/// `PATCH /api/v1/users/{id}`: role, disabled, password. A disabled
/// account, or another account whose password changed, loses its sessions
/// at once.
async fn update_user(
    State(state): State<AppState>,
    required: Require<perm::ManageUsers>,
    Path(id): Path<String>,
    Json(body): Json<UserPatchBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let caller = &required.0.account;
    let not_found = || ApiError::not_found(format!("no account `{id}`"));
    let target = state
        .store
        .read(|tx| accounts::ACCOUNT_TABLE.get(tx, id.as_bytes()))
        .map_err(store_error)?
        .ok_or_else(not_found)?;
    if !required.0.reaches_all_tenants() && target.tenant_id != caller.tenant_id {
        return Err(not_found());
    }
    if target.role == Role::Owner {
        may_assign(caller, Role::Owner)?;
    }
    let role = body.role.as_deref().map(parse_role).transpose()?;
    if let Some(role) = role {
        may_assign(caller, role)?;
    }
    if body.disabled == Some(true) && target.id == caller.id {
        return Err(ApiError::new(
            Code::Conflict,
            "an account cannot disable itself; ask another owner or admin",
        ));
    }
    let password_hash = match body.password {
        Some(password) => Some(
            tokio::task::spawn_blocking(move || accounts::hash_password(&password))
                .await
                .map_err(|e| ApiError::internal("hashing a password", e))?
                .map_err(store_error)?,
        ),
        None => None,
    };
    let new_password = password_hash.is_some();
    let disabled = body.disabled;
    let account = accounts::modify(&state.store, &target.id, move |account| {
        if let Some(role) = role {
            account.role = role;
        }
        if let Some(disabled) = disabled {
            account.disabled = disabled;
        }
        if let Some(hash) = &password_hash {
            account.password_hash = hash.clone();
        }
        Ok(())
    })
    .await
    .map_err(store_error)?;
    // The caller keeps the session it is using.
    if new_password && account.id != caller.id {
        let who = account.id.clone();
        state
            .store
            .write(move |txn| sessions::remove_all_of(txn, &who))
            .await
            .map_err(store_error)?;
    }
    tracing::info!(account = %account.id, by = %caller.id, "account changed");
    Ok(axum::Json(account.view()))
}
