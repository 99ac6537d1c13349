//! Liveness and readiness probes.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use serde_json::{Value, json};

use crate::api::state::AppState;
use crate::base::error::{ApiError, Code};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

/// The process answers.
async fn healthz() -> axum::Json<Value> {
    axum::Json(json!({ "status": "ok" }))
}

/// The store takes a durable write.
async fn readyz(State(state): State<AppState>) -> Result<axum::Json<Value>, ApiError> {
    state.store.probe_writable().await.map_err(|e| {
        tracing::error!(error = %e, "readiness probe failed");
        ApiError::new(Code::Unavailable, "the store is not writable")
    })?;
    Ok(axum::Json(json!({ "status": "ready" })))
}
