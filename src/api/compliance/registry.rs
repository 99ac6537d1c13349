//! The sub-processor registry: its entries, their change history, and
//! the operator's changes to it (each announced to subscribers).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::billing::store_error;
use crate::api::extract::{Require, Signed, perm};
use crate::api::json::{Json, Query};
use crate::api::state::AppState;
use crate::auth::accounts::Account;
use crate::base::error::ApiError;
use crate::compliance::registry;

use super::limit_param;

pub(super) async fn list_registry(
    State(state): State<AppState>,
    Signed(_): Signed,
) -> Result<axum::Json<Value>, ApiError> {
    Ok(axum::Json(
        state.store.read(registry::view).map_err(store_error)?,
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HistoryQuery {
    name: Option<String>,
    limit: Option<usize>,
}

/// The registry's change history (every entry's, or `?name=`'s), newest
/// first. Read by every role, as the registry is; the registry is global,
/// so no tenant applies.
pub(super) async fn list_registry_history(
    State(state): State<AppState>,
    Signed(_): Signed,
    Query(query): Query<HistoryQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    registry_history(&state, query.name.as_deref(), query.limit)
}

/// One entry's change history, newest first.
pub(super) async fn show_entry_history(
    State(state): State<AppState>,
    Signed(_): Signed,
    Path(name): Path<String>,
    Query(query): Query<HistoryQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    if query.name.is_some() {
        return Err(ApiError::invalid(
            "name",
            "the entry is named by the path; `name` is not a query parameter here",
        ));
    }
    registry_history(&state, Some(&name), query.limit)
}

fn registry_history(
    state: &AppState,
    name: Option<&str>,
    limit: Option<usize>,
) -> Result<axum::Json<Value>, ApiError> {
    let limit = limit_param(limit, registry::MAX_HISTORY_PAGE, 100)?;
    state
        .store
        .read(|tx| registry::history(tx, name, limit))
        .map_err(store_error)?
        .map(axum::Json)
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "the registry has no `{}` and never had",
                name.unwrap_or_default()
            ))
        })
}

fn author(account: &Account) -> registry::Author {
    registry::Author::account(&account.id, &account.email)
}

fn announce(state: &AppState, change: &registry::Change) -> Value {
    tracing::info!(action = change.action, name = %change.entry.name, version = change.version, "sub-processor registry changed");
    state.events.publish(change.event());
    let mut view = change.entry.view();
    view["registryVersion"] = json!(change.version.to_string());
    view
}

pub(super) async fn create_registry_entry(
    State(state): State<AppState>,
    required: Require<perm::ManageRegistry>,
    Json(fields): Json<registry::Fields>,
) -> Result<impl IntoResponse, ApiError> {
    let change = registry::create(&state.store, fields, author(&required.0.account))
        .await
        .map_err(store_error)?;
    Ok((StatusCode::CREATED, axum::Json(announce(&state, &change))))
}

pub(super) async fn update_registry_entry(
    State(state): State<AppState>,
    required: Require<perm::ManageRegistry>,
    Path(name): Path<String>,
    Json(fields): Json<registry::Fields>,
) -> Result<axum::Json<Value>, ApiError> {
    let change = registry::update(&state.store, &name, fields, author(&required.0.account))
        .await
        .map_err(store_error)?;
    Ok(axum::Json(announce(&state, &change)))
}

pub(super) async fn delete_registry_entry(
    State(state): State<AppState>,
    required: Require<perm::ManageRegistry>,
    Path(name): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let change = registry::delete(&state.store, &name, author(&required.0.account))
        .await
        .map_err(store_error)?;
    let mut view = announce(&state, &change);
    view["deleted"] = json!(true);
    Ok(axum::Json(view))
}
