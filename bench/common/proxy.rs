//! The bare reverse proxy: the floor a Rust gateway on this machine can
//! reach. axum in, reqwest out (the same client settings Tollgate uses),
//! bytes forwarded both ways: no auth, no parsing, no billing, no logging.
//! A streamed answer (`text/event-stream`) is passed on chunk by chunk as
//! it arrives; any other answer is read whole and sent on.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

#[derive(Clone)]
struct Forward {
    http: reqwest::Client,
    target: Arc<String>,
}

async fn forward(State(f): State<Forward>, headers: HeaderMap, body: Bytes) -> Response {
    let mut request = f.http.post(f.target.as_str()).body(body);
    if let Some(kind) = headers.get(header::CONTENT_TYPE) {
        request = request.header(header::CONTENT_TYPE, kind);
    }
    let response = match request.send().await {
        Ok(response) => response,
        Err(_) => return StatusCode::BAD_GATEWAY.into_response(),
    };
    let status =
        StatusCode::from_u16(response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let kind = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| HeaderValue::from_bytes(v.as_bytes()).ok())
        .unwrap_or(HeaderValue::from_static("application/json"));
    let streamed = kind.as_bytes().starts_with(b"text/event-stream");
    let mut out = if streamed {
        Body::from_stream(response.bytes_stream()).into_response()
    } else {
        match response.bytes().await {
            Ok(bytes) => bytes.into_response(),
            Err(_) => return StatusCode::BAD_GATEWAY.into_response(),
        }
    };
    *out.status_mut() = status;
    out.headers_mut().insert(header::CONTENT_TYPE, kind);
    out
}

/// Forwards `POST /v1/chat/completions` to `upstream` (a full URL).
pub fn router(upstream: String) -> Router {
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .pool_idle_timeout(Duration::from_secs(90))
        .build()
        .expect("a reqwest client");
    Router::new()
        .route("/v1/chat/completions", post(forward))
        .with_state(Forward {
            http,
            target: Arc::new(upstream),
        })
}
