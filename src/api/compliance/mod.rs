//! Dashboard routes for compliance (DESIGN section 5): tenant policies, the
//! audit log, the conversation log, the human-review queue, incidents, the
//! sub-processor registry, consent records and erasure.
//!
//! Scope as elsewhere: the owner is the operator and reads every tenant
//! (or one with `?tenant=`); every other role reads and acts on its own
//! tenant. Records outside the caller's scope answer 404.

mod audit_log;
mod consents;
mod conversations;
mod erasure;
mod incidents;
mod policy;
mod registry;
mod reviews;

use axum::Router;
use axum::routing::{get, post};
use serde::Deserialize;

use audit_log::{list_audit, verify_audit};
use consents::{grant_consent, list_consents, show_consent, withdraw_consent};
use conversations::{list_conversations, show_conversation};
use erasure::{erase_subject, export_subject};
use incidents::{file_incident, list_incidents, show_incident, update_incident};
use policy::{show_policy, update_policy};
use registry::{
    create_registry_entry, delete_registry_entry, list_registry, list_registry_history,
    show_entry_history, update_registry_entry,
};
use reviews::{approve_review, list_reviews, reject_review, show_review};

use crate::api::billing::tenant_scope;
use crate::api::state::AppState;
use crate::auth::accounts::Account;
use crate::auth::sessions::CurrentAccount;
use crate::base::error::ApiError;
use crate::base::time::parse_rfc3339;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/policies", get(show_policy).put(update_policy))
        .route("/api/v1/audit", get(list_audit))
        .route("/api/v1/audit/verify", get(verify_audit))
        .route("/api/v1/conversations", get(list_conversations))
        .route("/api/v1/conversations/{id}", get(show_conversation))
        .route("/api/v1/reviews", get(list_reviews))
        .route("/api/v1/reviews/{id}", get(show_review))
        .route("/api/v1/reviews/{id}/approve", post(approve_review))
        .route("/api/v1/reviews/{id}/reject", post(reject_review))
        .route("/api/v1/incidents", get(list_incidents).post(file_incident))
        .route(
            "/api/v1/incidents/{id}",
            get(show_incident).patch(update_incident),
        )
        .route(
            "/api/v1/sub-processors",
            get(list_registry).post(create_registry_entry),
        )
        .route(
            "/api/v1/sub-processors/{name}",
            axum::routing::put(update_registry_entry).delete(delete_registry_entry),
        )
        .route(
            "/api/v1/sub-processors/{name}/history",
            get(show_entry_history),
        )
        .route("/api/v1/sub-processor-history", get(list_registry_history))
        .route("/api/v1/consents", get(list_consents).post(grant_consent))
        .route(
            "/api/v1/consents/{id}",
            get(show_consent).delete(withdraw_consent),
        )
        .route("/api/v1/erasure", post(erase_subject))
        .route("/api/v1/erasure/export", post(export_subject))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct TenantQuery {
    tenant: Option<String>,
}

/// The one tenant an act applies to: the caller's, or for the operator the
/// one named by `?tenant=`.
fn acting_tenant(
    current: &CurrentAccount,
    asked: Option<&str>,
    state: &AppState,
) -> Result<String, ApiError> {
    Ok(tenant_scope(current, asked, state)?.unwrap_or_else(|| current.account.tenant_id.clone()))
}

fn actor(account: &Account) -> String {
    format!("account:{}", account.id)
}

fn time_param(field: &str, value: Option<&str>) -> Result<Option<i64>, ApiError> {
    value
        .map(|v| parse_rfc3339(v).map_err(|m| ApiError::invalid(field, m)))
        .transpose()
}

fn limit_param(value: Option<usize>, max: usize, default: usize) -> Result<usize, ApiError> {
    match value {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(_) => Err(ApiError::invalid(
            "limit",
            format!("`limit` must be 1 to {max}"),
        )),
    }
}
