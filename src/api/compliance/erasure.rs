//! Erasure and export of one end user's data (GDPR Articles 15, 17 and 20).

use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::billing::store_error;
use crate::api::extract::{Require, perm};
use crate::api::json::{Json, Query};
use crate::api::state::AppState;
use crate::auth::accounts::Role;
use crate::base::error::ApiError;
use crate::base::time::{format_rfc3339, now_ms};
use crate::compliance::erasure;

use super::{TenantQuery, acting_tenant, actor};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct ErasureBody {
    end_user_id: String,
}

pub(super) async fn erase_subject(
    State(state): State<AppState>,
    required: Require<perm::EraseSubjects>,
    Query(query): Query<TenantQuery>,
    Json(body): Json<ErasureBody>,
) -> Result<axum::Json<Value>, ApiError> {
    debug_assert_eq!(required.0.account.role, Role::Owner);
    let tenant_id = acting_tenant(&required.0, query.tenant.as_deref(), &state)?;
    let mut report = erasure::erase(
        &state.store,
        &tenant_id,
        &body.end_user_id,
        actor(&required.0.account),
    )
    .await
    .map_err(store_error)?;
    report["erasedAt"] = json!(format_rfc3339(now_ms()));
    Ok(axum::Json(report))
}

/// `POST /api/v1/erasure/export`: the subject's export alone, nothing
/// erased (GDPR Articles 15 and 20). A POST so the id stays out of URLs
/// and logs, and so the act is in the audit log like any other write.
pub(super) async fn export_subject(
    State(state): State<AppState>,
    required: Require<perm::EraseSubjects>,
    Query(query): Query<TenantQuery>,
    Json(body): Json<ErasureBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let tenant_id = acting_tenant(&required.0, query.tenant.as_deref(), &state)?;
    let export =
        erasure::export(&state.store, &tenant_id, &body.end_user_id).map_err(store_error)?;
    Ok(axum::Json(export))
}
