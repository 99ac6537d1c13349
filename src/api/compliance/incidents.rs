//! Incidents: filing, listing, showing and updating them.

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
use crate::compliance::incidents;

use super::{TenantQuery, acting_tenant, actor};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct IncidentQuery {
    tenant: Option<String>,
    status: Option<String>,
}

fn incident_status(text: &str) -> Result<incidents::Status, ApiError> {
    incidents::Status::parse(text)
        .ok_or_else(|| ApiError::invalid("status", "`status` is open, reported or closed"))
}

pub(super) async fn list_incidents(
    State(state): State<AppState>,
    required: Require<perm::ViewIncidents>,
    Query(query): Query<IncidentQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, query.tenant.as_deref(), &state)?;
    let status = query.status.as_deref().map(incident_status).transpose()?;
    let list = state
        .store
        .read(|tx| incidents::list(tx, scope.as_deref(), status))
        .map_err(store_error)?;
    Ok(axum::Json(list_answer(
        list.iter().map(incidents::Incident::view),
    )))
}

pub(super) async fn show_incident(
    State(state): State<AppState>,
    required: Require<perm::ViewIncidents>,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, None, &state)?;
    let incident = state
        .store
        .read(|tx| incidents::get(tx, scope.as_deref(), &id))
        .map_err(store_error)?;
    Ok(axum::Json(incident.view()))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct IncidentBody {
    severity: String,
    category: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    request_ids: Vec<String>,
}

pub(super) async fn file_incident(
    State(state): State<AppState>,
    required: Require<perm::ManageIncidents>,
    Query(query): Query<TenantQuery>,
    Json(body): Json<IncidentBody>,
) -> Result<impl IntoResponse, ApiError> {
    let tenant_id = acting_tenant(&required.0, query.tenant.as_deref(), &state)?;
    let severity = incidents::Severity::parse(&body.severity).ok_or_else(|| {
        ApiError::invalid(
            "severity",
            "`severity` is critical (2 days), fatal (10 days) or serious (15 days)",
        )
    })?;
    let incident = incidents::file(
        &state.store,
        incidents::Filing {
            tenant_id,
            severity,
            category: body.category,
            description: body.description,
            request_ids: body.request_ids,
            source: "manual",
            created_by: actor(&required.0.account),
        },
    )
    .await
    .map_err(store_error)?;
    state.events.publish(incident.event());
    Ok((StatusCode::CREATED, axum::Json(incident.view())))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct IncidentUpdate {
    status: String,
}

pub(super) async fn update_incident(
    State(state): State<AppState>,
    required: Require<perm::ManageIncidents>,
    Path(id): Path<String>,
    Json(body): Json<IncidentUpdate>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, None, &state)?;
    let status = incident_status(&body.status)?;
    let incident = incidents::set_status(&state.store, scope, &id, status)
        .await
        .map_err(store_error)?;
    Ok(axum::Json(incident.view()))
}
