//! Consent records: granting, listing, showing and withdrawing them.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::Value;

use crate::api::billing::{store_error, tenant_scope};
use crate::api::extract::{Require, perm};
use crate::api::json::{Json, Query, list_answer};
use crate::api::state::AppState;
use crate::base::error::ApiError;
use crate::compliance::consents;

use super::{TenantQuery, acting_tenant};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct ConsentQuery {
    tenant: Option<String>,
    end_user_id: Option<String>,
}

pub(super) async fn list_consents(
    State(state): State<AppState>,
    required: Require<perm::ManageConsents>,
    Query(query): Query<ConsentQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, query.tenant.as_deref(), &state)?;
    let list = state
        .store
        .read(|tx| consents::list(tx, scope.as_deref(), query.end_user_id.as_deref()))
        .map_err(store_error)?;
    Ok(axum::Json(list_answer(
        list.iter().map(consents::Consent::view),
    )))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct ConsentBody {
    end_user_id: String,
    purpose: String,
}

pub(super) async fn grant_consent(
    State(state): State<AppState>,
    required: Require<perm::ManageConsents>,
    Query(query): Query<TenantQuery>,
    Json(body): Json<ConsentBody>,
) -> Result<impl IntoResponse, ApiError> {
    let tenant_id = acting_tenant(&required.0, query.tenant.as_deref(), &state)?;
    let consent = consents::grant(&state.store, &tenant_id, &body.end_user_id, &body.purpose)
        .await
        .map_err(store_error)?;
    Ok((StatusCode::CREATED, axum::Json(consent.view())))
}

pub(super) async fn show_consent(
    State(state): State<AppState>,
    required: Require<perm::ManageConsents>,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, None, &state)?;
    let consent = state
        .store
        .read(|tx| consents::get(tx, scope.as_deref(), &id))
        .map_err(store_error)?;
    Ok(axum::Json(consent.view()))
}

pub(super) async fn withdraw_consent(
    State(state): State<AppState>,
    required: Require<perm::ManageConsents>,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, None, &state)?;
    let tenant_id = match scope {
        Some(t) => t,
        // The owner may withdraw any tenant's record.
        None => {
            state
                .store
                .read(|tx| consents::get(tx, None, &id))
                .map_err(store_error)?
                .tenant_id
        }
    };
    let consent = consents::withdraw(&state.store, &tenant_id, &id)
        .await
        .map_err(store_error)?;
    Ok(axum::Json(consent.view()))
}
