//! The router: the routes of every handler module, the fallbacks, and the
//! layers around them (wiring only; the handlers live in their modules).
//!
//! Layers, outermost first: request id, tracing (path only: a query may
//! carry a key), dialect of error bodies, the metrics middleware, the
//! refusal of oversized bodies, then authentication, which denies by
//! default, the body read deadline and the 50 MB body limit.

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderName, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tower::ServiceBuilder;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::trace::TraceLayer;

use crate::api::error::render_in_dialect;
use crate::api::extract::authenticate;
use crate::api::state::AppState;
use crate::base::error::{ApiError, Code};

/// Bodies above this size are refused with 413 (spec, "Limits").
pub const MAX_BODY_BYTES: usize = 50 * 1024 * 1024;

static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

pub fn router(state: AppState) -> Router {
    // One layer of the whole stack, outermost first: `Router::layer` wraps
    // every route in each layer it is given, boxing the route again each
    // time, and a request then cloned every box inside every other (55
    // boxed services cloned, about 20 thousand instructions a request with
    // ten layers). Given as one `ServiceBuilder`, the stack is boxed once
    // per route, with the same layers in the same order.
    let layers = ServiceBuilder::new()
        .layer(SetRequestIdLayer::new(REQUEST_ID.clone(), MakeRequestUuid))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID.clone()))
        .layer(SetSensitiveRequestHeadersLayer::new([
            header::AUTHORIZATION,
            HeaderName::from_static("x-api-key"),
            HeaderName::from_static("x-goog-api-key"),
        ]))
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request| {
            let id = request.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("");
            // The path is cut short: every line logged in the span repeats it.
            let path = crate::auth::refusals::bounded_path(request.uri().path());
            tracing::info_span!("request", method = %request.method(), path = %path, request_id = %id)
        }))
        .layer(middleware::from_fn(render_in_dialect))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            crate::api::metrics::track,
        ))
        .layer(middleware::from_fn(refuse_oversized))
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .layer(middleware::from_fn_with_state(
            state.config.body_read_timeout,
            crate::api::serve::body_deadline,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES));
    crate::api::routes()
        .merge(crate::api::ui::routes())
        .fallback(|| async { ApiError::not_found("no such route") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                Code::MethodNotAllowed,
                "this route does not accept that method",
            )
        })
        .layer(layers)
        .with_state(state)
}

/// Refuses a declared body above the limit before authentication or any
/// reading; a body without a length is cut at the limit when read.
async fn refuse_oversized(request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return payload_too_large().into_response();
    }
    next.run(request).await
}

pub fn payload_too_large() -> ApiError {
    ApiError::new(
        Code::PayloadTooLarge,
        format!(
            "the request body exceeds {} MB",
            MAX_BODY_BYTES / (1024 * 1024)
        ),
    )
}
