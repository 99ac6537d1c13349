//! The audit log: listing its records and verifying its hash chain.

use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::billing::{store_error, tenant_scope};
use crate::api::extract::{Require, perm};
use crate::api::json::{Query, list_answer};
use crate::api::state::AppState;
use crate::audit;
use crate::base::error::ApiError;

use super::{limit_param, time_param};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct AuditQuery {
    tenant: Option<String>,
    action: Option<String>,
    actor: Option<String>,
    from: Option<String>,
    to: Option<String>,
    before: Option<u64>,
    limit: Option<usize>,
}

pub(super) async fn list_audit(
    State(state): State<AppState>,
    required: Require<perm::ViewAudit>,
    Query(query): Query<AuditQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let filter = audit::Filter {
        tenant_id: tenant_scope(&required.0, query.tenant.as_deref(), &state)?,
        action: query.action,
        actor: query.actor,
        from: time_param("from", query.from.as_deref())?,
        to: time_param("to", query.to.as_deref())?,
        before: query.before,
        limit: limit_param(query.limit, audit::MAX_PAGE, 100)?,
    };
    let entries = state
        .store
        .read(|tx| audit::list(tx, &filter))
        .map_err(store_error)?;
    let next = (entries.len() == filter.limit)
        .then(|| entries.last().map(|e| e.seq))
        .flatten();
    let mut answer = list_answer(entries.iter().map(audit::Entry::view));
    answer["nextBefore"] = json!(next);
    Ok(axum::Json(answer))
}

pub(super) async fn verify_audit(
    State(state): State<AppState>,
    _required: Require<perm::ViewAudit>,
) -> Result<axum::Json<Value>, ApiError> {
    let found = state.store.read(audit::verify).map_err(store_error)?;
    Ok(axum::Json(found.view()))
}
