//! The HTTP side of the metrics: the middleware that counts and times every
//! response, and `GET /metrics`, which reads the router's deployment health,
//! the ledger's reservations and the queues before rendering the registry
//! (`crate::metrics`).

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::api::state::AppState;
use crate::base::error::{ApiError, Code};
use crate::metrics::CONTENT_TYPE;

/// The catalogue id a response was about; handlers put it in the
/// response's extensions for the `model` label.
#[derive(Debug, Clone)]
pub struct ModelLabel(pub String);

/// The middleware that counts and times every request.
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let started = Instant::now();
    let response = next.run(request).await;
    let model = response
        .extensions()
        .get::<ModelLabel>()
        .map(|m| m.0.clone())
        .unwrap_or_default();
    let error = response.extensions().get::<ApiError>().map(|e| e.code);
    state.metrics.answered(
        &route,
        model,
        response.status().as_u16(),
        started.elapsed(),
        error,
    );
    response
}

/// `GET /metrics`: public unless the operator set `metrics_token`.
pub async fn scrape(State(state): State<AppState>, request: Request) -> Response {
    if let Some(token) = &state.config.metrics_token {
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(crate::api::extract::bearer_token)
            .unwrap_or("");
        let matches: bool = presented.as_bytes().ct_eq(token.expose().as_bytes()).into();
        if !matches {
            return ApiError::new(
                Code::MissingToken,
                "this server's /metrics needs `Authorization: Bearer <metrics token>`",
            )
            .into_response();
        }
    }
    let health = state.router.health(state.catalogue.models().iter());
    state.metrics.deployment_health(health.iter().map(|h| {
        (
            h.model.as_str(),
            h.deployment.as_str(),
            h.state == crate::routing::HealthState::Healthy,
        )
    }));
    let (reserved, holds) = state.ledger.totals();
    state.metrics.reservations(reserved, holds);
    let text = state.metrics.render(
        state
            .store
            .writer_stats()
            .queued
            .load(std::sync::atomic::Ordering::Relaxed),
        state.events.queue_depth(),
    );
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE))],
        text,
    )
        .into_response()
}
