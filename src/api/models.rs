//! Dashboard routes for the model catalogue: read (every role), add and
//! edit (owner, admin), delete (owner only: the spec's "hard delete").
//!
//! The catalogue is global: one gateway serves one catalogue to every
//! tenant, as the configuration file that defines its base does. An edit
//! by an admin of any tenant therefore changes what every tenant may call;
//! the session layer records each edit in the audit log with the account
//! and its tenant. Edits are stored over the configuration's entries (see
//! `catalogue::overlay`) and take effect at once, for new requests.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::billing::store_error;
use crate::api::extract::{Require, perm};
use crate::api::json::Json;
use crate::api::state::AppState;
use crate::base::error::ApiError;
use crate::base::json::nullable;
use crate::catalogue::overlay::{Entry, ModelChange, PRICING_REFUSED, PricingInput};
use crate::catalogue::settings::{DeploymentConfig, ModelConfig, ModelRouting};
use crate::catalogue::{Capability, Strategy};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/models", get(list_models).post(create_model))
        .route(
            "/api/v1/models/{id}",
            get(show_model).patch(update_model).delete(delete_model),
        )
}

/// An entry's view with each deployment's health (`healthy`, `cooldown`
/// or `probing`; a disabled model's deployments are `healthy`: nothing
/// routes to them).
fn with_health(state: &AppState, entry: &Entry) -> Value {
    let mut view = entry.view();
    let health = match state.catalogue.get(&entry.model.id) {
        Some(model) => state.router.health([&model]),
        None => Vec::new(),
    };
    if let Some(deployments) = view["deployments"].as_array_mut() {
        for (i, d) in deployments.iter_mut().enumerate() {
            d["health"] = json!(health.get(i).map_or("healthy", |h| h.state.as_str()));
        }
    }
    view
}

fn pricing(input: &PricingInput) -> Result<crate::catalogue::Pricing, ApiError> {
    input
        .to_pricing()
        .map_err(|m| ApiError::invalid("pricing", m))
}

/// A refused edit; a price that cannot fit its context window names
/// `pricing`, whichever of the two the edit changed.
fn edit_error(e: crate::store::StoreError) -> ApiError {
    match e {
        crate::store::StoreError::Invalid(m) if m.starts_with(PRICING_REFUSED) => {
            ApiError::invalid("pricing", m)
        }
        other => store_error(other),
    }
}

/// Refuses, naming the field, an upstream name that could rewrite the
/// upstream's URL (`catalogue::upstream_name`). The catalogue checks it
/// again when it stores the entry; this check is here for the `param`.
fn check_upstream(state: &AppState, provider: &str, upstream: &str) -> Result<(), ApiError> {
    match state.catalogue.upstream_refusal(provider, upstream) {
        Some(why) => Err(ApiError::invalid("upstream", format!("`upstream`: {why}"))),
        None => Ok(()),
    }
}

/// `GET /api/v1/models`: every entry, enabled or not.
async fn list_models(
    State(state): State<AppState>,
    _: Require<perm::ViewModels>,
) -> axum::Json<Value> {
    let listing = state.catalogue.snapshot();
    let data: Vec<Value> = listing
        .entries
        .iter()
        .map(|e| with_health(&state, e))
        .collect();
    axum::Json(json!({ "data": data }))
}

/// `GET /api/v1/models/{id}`
async fn show_model(
    State(state): State<AppState>,
    _: Require<perm::ViewModels>,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let listing = state.catalogue.snapshot();
    let entry = listing
        .entry(&id)
        .ok_or_else(|| ApiError::not_found(format!("no model `{id}` in the catalogue")))?;
    Ok(axum::Json(with_health(&state, entry)))
}

/// One deployment as the API takes it (`health`, shown in the view, is
/// accepted and ignored, so a view can be sent back).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DeploymentBody {
    provider: String,
    /// The provider's name for the model; the model id when absent.
    upstream: Option<String>,
    weight: Option<u32>,
    #[serde(default, rename = "health")]
    _health: Option<String>,
}

/// The deployments of a body, checked: at least one, weights 1 or more.
fn deployments(id: &str, list: Vec<DeploymentBody>) -> Result<Vec<DeploymentConfig>, ApiError> {
    if list.is_empty() {
        return Err(ApiError::invalid(
            "deployments",
            "a model needs at least one deployment",
        ));
    }
    list.into_iter()
        .enumerate()
        .map(|(i, d)| {
            if d.weight == Some(0) {
                return Err(ApiError::invalid(
                    format!("deployments[{i}].weight"),
                    "must be at least 1 (leave a deployment out rather than weigh it 0)",
                ));
            }
            Ok(DeploymentConfig {
                provider: d.provider,
                upstream: d.upstream.unwrap_or_else(|| id.to_owned()),
                weight: d.weight.unwrap_or(1),
            })
        })
        .collect()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewModelBody {
    id: String,
    /// The one deployment's provider; or give `deployments`.
    provider: Option<String>,
    /// The provider's name for the model; the id when absent.
    upstream: Option<String>,
    deployments: Option<Vec<DeploymentBody>>,
    strategy: Option<Strategy>,
    rpm_limit: Option<u32>,
    tpm_limit: Option<u64>,
    input_capabilities: Vec<Capability>,
    output_capabilities: Vec<Capability>,
    context_window: u32,
    max_output_tokens: Option<u32>,
    pricing: PricingInput,
}

/// `POST /api/v1/models`: a new entry, served at once.
async fn create_model(
    State(state): State<AppState>,
    required: Require<perm::ManageModels>,
    Json(body): Json<NewModelBody>,
) -> Result<(StatusCode, axum::Json<Value>), ApiError> {
    let list = match (body.provider, body.deployments) {
        (Some(provider), None) => vec![DeploymentConfig {
            provider,
            upstream: body.upstream.unwrap_or_else(|| body.id.clone()),
            weight: 1,
        }],
        (None, Some(list)) if body.upstream.is_none() => deployments(&body.id, list)?,
        (None, Some(_)) => {
            return Err(ApiError::invalid(
                "upstream",
                "`upstream` belongs inside each deployment when `deployments` is given",
            ));
        }
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                "deployments",
                "give either `provider` + `upstream` or `deployments`, not both",
            ));
        }
        (None, None) => {
            return Err(ApiError::invalid(
                "provider",
                "a model needs `provider` (+ `upstream`) or `deployments`",
            ));
        }
    };
    let mut list = list.into_iter();
    let first = list.next().expect("checked: at least one");
    let model = ModelConfig {
        id: body.id,
        provider: first.provider,
        upstream: first.upstream,
        input: body.input_capabilities,
        output: body.output_capabilities,
        context_window: body.context_window,
        max_output_tokens: body.max_output_tokens,
        pricing: pricing(&body.pricing)?,
        routing: ModelRouting {
            primary_weight: first.weight,
            more: list.collect(),
            strategy: body.strategy.unwrap_or_default(),
            request_timeout: None,
            rpm_limit: body.rpm_limit,
            tpm_limit: body.tpm_limit,
        },
    };
    check_upstream(&state, &model.provider, &model.upstream)?;
    let entry = state
        .catalogue
        .add(&state.store, model)
        .await
        .map_err(edit_error)?;
    tracing::info!(model = %entry.model.id, by = %required.0.account.id, "catalogue entry added");
    Ok((StatusCode::CREATED, axum::Json(with_health(&state, &entry))))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ModelPatchBody {
    /// Accepted so a client may send a whole view back; it cannot change.
    id: Option<String>,
    provider: Option<String>,
    upstream: Option<String>,
    input_capabilities: Option<Vec<Capability>>,
    output_capabilities: Option<Vec<Capability>>,
    context_window: Option<u32>,
    #[serde(default, deserialize_with = "nullable")]
    max_output_tokens: Option<Option<u32>>,
    pricing: Option<PricingInput>,
    enabled: Option<bool>,
    /// Replaces every deployment.
    deployments: Option<Vec<DeploymentBody>>,
    strategy: Option<Strategy>,
    #[serde(default, deserialize_with = "nullable")]
    rpm_limit: Option<Option<u32>>,
    #[serde(default, deserialize_with = "nullable")]
    tpm_limit: Option<Option<u64>>,
}

/// `PATCH /api/v1/models/{id}`: any field; `enabled: false` stops serving
/// the model (`model_not_found`) and hides it from `/v1/models`.
async fn update_model(
    State(state): State<AppState>,
    required: Require<perm::ManageModels>,
    Path(id): Path<String>,
    Json(body): Json<ModelPatchBody>,
) -> Result<axum::Json<Value>, ApiError> {
    if body.id.as_ref().is_some_and(|new| *new != id) {
        return Err(ApiError::invalid(
            "id",
            "a model's id cannot change; add a new model instead",
        ));
    }
    if body.provider.is_some() || body.upstream.is_some() {
        // The name as it would be served: a new provider may refuse the
        // current name (a `/` is fine in an OpenAI body, not in Gemini's path).
        if let Some(entry) = state.catalogue.snapshot().entry(&id) {
            let provider = body.provider.as_deref().unwrap_or(&entry.model.provider);
            let upstream = body.upstream.as_deref().unwrap_or(&entry.model.upstream);
            check_upstream(&state, provider, upstream)?;
        }
    }
    let change = ModelChange {
        provider: body.provider,
        upstream: body.upstream,
        input: body.input_capabilities,
        output: body.output_capabilities,
        context_window: body.context_window,
        max_output_tokens: body.max_output_tokens,
        pricing: body.pricing.as_ref().map(pricing).transpose()?,
        enabled: body.enabled,
        deployments: body.deployments.map(|l| deployments(&id, l)).transpose()?,
        strategy: body.strategy,
        rpm_limit: body.rpm_limit,
        tpm_limit: body.tpm_limit,
    };
    let entry = state
        .catalogue
        .change(&state.store, &id, change)
        .await
        .map_err(edit_error)?;
    tracing::info!(model = %id, by = %required.0.account.id, "catalogue entry changed");
    Ok(axum::Json(with_health(&state, &entry)))
}

/// `DELETE /api/v1/models/{id}`: removes the entry (a configuration entry
/// stays removed across restarts).
async fn delete_model(
    State(state): State<AppState>,
    required: Require<perm::HardDeleteModels>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state
        .catalogue
        .remove(&state.store, &id)
        .await
        .map_err(store_error)?;
    tracing::info!(model = %id, by = %required.0.account.id, "catalogue entry deleted");
    Ok(StatusCode::NO_CONTENT)
}
