//! Dashboard routes for tenants and the models each tenant may use.
//!
//! Listing, creating and changing the tier of tenants is the operator's (`tenants.manage`, held
//! only by the operator tenant's owners and admins). A tenant's own admins
//! choose which catalogue models their tenant may use
//! (`models.access`); every signed-in account may read its tenant's list.
//! A tenant outside the caller's reach answers as `tenant_scope` does.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, patch};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::billing::{store_error, tenant_scope};
use crate::api::extract::{Require, perm};
use crate::api::json::Json;
use crate::api::state::AppState;
use crate::base::error::{ApiError, Code};
use crate::base::json::nullable;
use crate::tenants::{self, Tier};

/// The most models one allow-list may name.
const MAX_ALLOWED_MODELS: usize = 1000;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/tenants", get(list_tenants).post(create_tenant))
        .route("/api/v1/tenants/{id}", patch(update_tenant))
        .route(
            "/api/v1/tenants/{id}/models",
            get(show_model_access).put(set_model_access),
        )
}

/// `GET /api/v1/tenants`: every tenant (the operator's view).
async fn list_tenants(
    State(state): State<AppState>,
    _: Require<perm::ManageTenants>,
) -> Result<axum::Json<Value>, ApiError> {
    let operator = state
        .store
        .read(tenants::operator_id)
        .map_err(store_error)?;
    let data: Vec<Value> = tenants::list(&state.store)
        .map_err(store_error)?
        .iter()
        .map(|t| {
            let mut view = tenant_view(&state, t);
            view["operator"] = json!(operator.as_deref() == Some(t.id.as_str()));
            view
        })
        .collect();
    Ok(axum::Json(json!({ "data": data })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewTenantBody {
    name: String,
    /// `free`, `paid` or `enterprise`; `paid` when absent.
    tier: Option<Tier>,
}

/// A tenant's view with `walletReserved`: what its requests in flight
/// reserved at admission, from the ledger.
pub(crate) fn tenant_view(state: &AppState, tenant: &tenants::Tenant) -> Value {
    let mut view = tenant.view();
    view["walletReserved"] = json!(crate::base::money::micros_to_credits(
        state.ledger.wallet_reserved(&tenant.id)
    ));
    view
}

/// `POST /api/v1/tenants`: a new tenant (never the operator).
async fn create_tenant(
    State(state): State<AppState>,
    _: Require<perm::ManageTenants>,
    Json(body): Json<NewTenantBody>,
) -> Result<(StatusCode, axum::Json<Value>), ApiError> {
    let tier = body.tier.unwrap_or(Tier::Paid);
    let tenant = tenants::create(&state.store, &body.name, tier)
        .await
        .map_err(|e| {
            // Every refusal of a new tenant is about its name: not
            // printable, or taken (regardless of case).
            let mut error = store_error(e);
            if matches!(error.code, Code::InvalidRequest | Code::Conflict) {
                error.param = Some("name".into());
            }
            error
        })?;
    tracing::info!(tenant = %tenant.id, "tenant created");
    Ok((StatusCode::CREATED, axum::Json(tenant.view())))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TenantPatch {
    /// `free`, `paid` or `enterprise`.
    tier: Option<Tier>,
}

/// `PATCH /api/v1/tenants/{id}`: changes a tenant's tier (the operator's
/// own included: its wallet and admission follow the tier like any other).
async fn update_tenant(
    State(state): State<AppState>,
    required: Require<perm::ManageTenants>,
    Path(id): Path<String>,
    Json(body): Json<TenantPatch>,
) -> Result<axum::Json<Value>, ApiError> {
    let Some(tier) = body.tier else {
        return Err(ApiError::invalid(
            "tier",
            "`tier` is required: free, paid or enterprise",
        ));
    };
    let tenant = tenants::set_tier(&state.store, &id, tier)
        .await
        .map_err(store_error)?;
    tracing::info!(tenant = %tenant.id, tier = tier.as_str(), by = %required.0.account.id, "tenant tier changed");
    Ok(axum::Json(tenant_view(&state, &tenant)))
}

/// The tenant's list view: `models` is `null` when every served model is
/// allowed; `available` names every catalogue entry to choose from.
fn access_view(state: &AppState, tenant_id: &str) -> Value {
    let listing = state.catalogue.snapshot();
    let available: Vec<&str> = listing
        .entries
        .iter()
        .map(|e| e.model.id.as_str())
        .collect();
    json!({
        "tenant": tenant_id,
        "models": state.catalogue.access.list_of(tenant_id),
        "available": available,
    })
}

/// `GET /api/v1/tenants/{id}/models`: which catalogue models the tenant
/// may use.
async fn show_model_access(
    State(state): State<AppState>,
    required: Require<perm::ViewModels>,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let tenant_id = tenant_scope(&required.0, Some(&id), &state)?.unwrap_or(id);
    Ok(axum::Json(access_view(&state, &tenant_id)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AccessBody {
    /// The model ids the tenant may use; `null` for every served model.
    #[serde(default, deserialize_with = "nullable")]
    models: Option<Option<Vec<String>>>,
}

/// `PUT /api/v1/tenants/{id}/models`: replaces the tenant's allow-list.
/// Every id must be a catalogue entry (enabled or not), so a typo cannot
/// silently allow nothing.
async fn set_model_access(
    State(state): State<AppState>,
    required: Require<perm::ManageModelAccess>,
    Path(id): Path<String>,
    Json(body): Json<AccessBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let tenant_id = tenant_scope(&required.0, Some(&id), &state)?.unwrap_or(id);
    let Some(models) = body.models else {
        return Err(ApiError::invalid(
            "models",
            "`models` is required: a list of model ids, or null for every model",
        ));
    };
    if let Some(models) = &models {
        if models.len() > MAX_ALLOWED_MODELS {
            return Err(ApiError::invalid(
                "models",
                format!("at most {MAX_ALLOWED_MODELS} models per list"),
            ));
        }
        let listing = state.catalogue.snapshot();
        if let Some((i, unknown)) = models
            .iter()
            .enumerate()
            .find(|(_, m)| listing.entry(m).is_none())
        {
            return Err(ApiError::invalid(
                format!("models[{i}]"),
                format!("`{unknown}` is not a model of the catalogue"),
            ));
        }
    }
    state
        .catalogue
        .access
        .set(&state.store, &tenant_id, models)
        .await
        .map_err(store_error)?;
    tracing::info!(tenant = %tenant_id, by = %required.0.account.id, "model access changed");
    Ok(axum::Json(access_view(&state, &tenant_id)))
}
