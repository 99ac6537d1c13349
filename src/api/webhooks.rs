//! Webhook settings (DESIGN 7.4): the tenant's URLs, its signing secret and
//! its recent deliveries. Every route needs `webhooks.manage` (owner and
//! admin). A route acts on the caller's tenant; the owner may name another
//! with `?tenant=<id or name>`.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::Value;

use crate::api::billing::{store_error, tenant_scope};
use crate::api::extract::{Require, perm};
use crate::api::json::{Json, Query, list_answer};
use crate::api::state::AppState;
use crate::base::error::ApiError;
use crate::tenants;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/webhooks", get(show).put(replace))
        .route("/api/v1/webhooks/secret/rotate", post(rotate))
        .route("/api/v1/webhooks/deliveries", get(deliveries))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TenantQuery {
    tenant: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UrlsBody {
    urls: Vec<String>,
}

fn target(
    state: &AppState,
    required: &Require<perm::ManageWebhooks>,
    query: &TenantQuery,
) -> Result<String, ApiError> {
    Ok(tenant_scope(&required.0, query.tenant.as_deref(), state)?
        .unwrap_or_else(|| required.0.account.tenant_id.clone()))
}

/// The tenant a route acts on, read now.
fn target_tenant(
    state: &AppState,
    required: &Require<perm::ManageWebhooks>,
    query: &TenantQuery,
) -> Result<tenants::Tenant, ApiError> {
    let id = target(state, required, query)?;
    state
        .store
        .read(|tx| tenants::resolve(tx, &id))
        .map_err(store_error)
}

/// `GET /api/v1/webhooks`: `{urls, signingSecretHint, updatedAt}`.
async fn show(
    State(state): State<AppState>,
    required: Require<perm::ManageWebhooks>,
    Query(query): Query<TenantQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let tenant = target_tenant(&state, &required, &query)?;
    Ok(axum::Json(tenant.webhooks_view()))
}

/// `PUT /api/v1/webhooks`: replaces the whole list; idempotent.
async fn replace(
    State(state): State<AppState>,
    required: Require<perm::ManageWebhooks>,
    Query(query): Query<TenantQuery>,
    Json(body): Json<UrlsBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let id = target(&state, &required, &query)?;
    let allow_private = state.config.webhook_allow_private_targets;
    let tenant = tenants::set_webhook_urls(&state.store, &id, body.urls, allow_private)
        .await
        .map_err(|e| match e {
            crate::store::StoreError::Invalid(m) => ApiError::invalid("urls", m),
            other => store_error(other),
        })?;
    if !tenant.webhook_urls.is_empty() {
        state.events.urls_registered();
    }
    tracing::info!(tenant = %tenant.id, by = %required.0.account.id, urls = tenant.webhook_urls.len(), "webhook URLs set");
    Ok(axum::Json(tenant.webhooks_view()))
}

/// `POST /api/v1/webhooks/secret/rotate`: the new secret, shown this once.
/// The next delivery is signed with it.
async fn rotate(
    State(state): State<AppState>,
    required: Require<perm::ManageWebhooks>,
    Query(query): Query<TenantQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let id = target(&state, &required, &query)?;
    let tenant = tenants::rotate_webhook_secret(&state.store, &id)
        .await
        .map_err(store_error)?;
    tracing::info!(tenant = %tenant.id, by = %required.0.account.id, "webhook signing secret rotated");
    let mut view = tenant.webhooks_view();
    view["signingSecret"] = Value::String(tenant.webhook_secret.clone());
    Ok(axum::Json(view))
}

/// `GET /api/v1/webhooks/deliveries`: the last deliveries since the
/// server started, newest first.
async fn deliveries(
    State(state): State<AppState>,
    required: Require<perm::ManageWebhooks>,
    Query(query): Query<TenantQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let tenant = target_tenant(&state, &required, &query)?;
    Ok(axum::Json(list_answer(state.events.deliveries(&tenant.id))))
}
