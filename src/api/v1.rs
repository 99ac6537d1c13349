//! Inference routes under `/v1`. Every one needs an API key (the
//! authentication layer refuses the request before it gets here).

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use serde_json::{Value, json};

use crate::app::AppState;
use crate::auth::extract::InferenceKey;

pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/models", get(list_models))
}

/// The catalogue in the OpenAI list shape (`client.models.list()`), with
/// capabilities and pricing unit as extensions.
async fn list_models(
    State(state): State<AppState>,
    InferenceKey(_key): InferenceKey,
) -> axum::Json<Value> {
    let created = state.started_at;
    let data: Vec<Value> = state
        .catalogue
        .models()
        .iter()
        .map(|m| {
            json!({
                "id": m.id,
                "object": "model",
                "created": created,
                "owned_by": m.provider.id,
                "inputCapabilities": m.input,
                "outputCapabilities": m.output,
                "context_window": m.context_window,
                "pricing": m.pricing.view(),
            })
        })
        .collect();
    axum::Json(json!({ "object": "list", "data": data }))
}
