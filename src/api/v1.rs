//! Inference routes under `/v1`. Every one needs an API key (the
//! authentication layer refuses the request before it gets here).

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderName, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::api::body::Body;
use crate::error::ApiError;
use crate::gateway::{self, ChatOutcome, request};
use serde_json::{Value, json};

use crate::app::AppState;
use crate::auth::extract::InferenceKey;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/models", get(list_models))
        .route("/v1/chat/completions", post(create_chat_completion))
}

/// `POST /v1/chat/completions`: a completion, or an SSE stream.
async fn create_chat_completion(
    State(state): State<AppState>,
    InferenceKey(key): InferenceKey,
    body: Body,
) -> Result<Response, ApiError> {
    let request = request::parse(&body.0)?;
    match gateway::chat_completions(&state, &key, request).await? {
        ChatOutcome::Complete(completion) => Ok(axum::Json(completion).into_response()),
        ChatOutcome::Stream(events) => Ok((
            [
                (header::CONTENT_TYPE, "text/event-stream"),
                (header::CACHE_CONTROL, "no-cache"),
                (HeaderName::from_static("x-accel-buffering"), "no"),
            ],
            axum::body::Body::from_stream(events),
        )
            .into_response()),
    }
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
