//! Inference routes under `/v1`. Every one needs an API key (the
//! authentication layer refuses the request before it gets here).

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::api::json::{JsonBody, list_answer};
use crate::api::metrics::ModelLabel;
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::base::time::now_ms;
use crate::billing::limits::RateDecision;
use crate::compliance::reviews;
use crate::gateway::{self, ChatOutcome};
use crate::providers::wire;
use serde_json::{Value, json};

use crate::api::extract::InferenceKey;
use crate::api::state::AppState;
use crate::traces;
use opentelemetry::context::FutureExt as _;
use opentelemetry::{Context, KeyValue};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/models", get(list_models))
        .route("/v1/chat/completions", post(create_chat_completion))
        .route("/v1/reviews/{id}", get(poll_review))
}

/// `GET /v1/reviews/{id}`: a held response, polled with the key that sent
/// the request (DESIGN 7.3): pending, then the approved completion, or 403
/// `review_rejected` when a reviewer rejected it or it expired undecided.
async fn poll_review(
    State(state): State<AppState>,
    InferenceKey(key): InferenceKey,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let review = state
        .store
        .read(|tx| reviews::get(tx, Some(&key.tenant_id), &id))
        .ok()
        .filter(|r| r.key_id == key.id || key.rotated_from.as_deref() == Some(&r.key_id))
        .ok_or_else(|| ApiError::not_found(format!("no review `{id}` for this key")))?;
    match review.status_at(now_ms()) {
        reviews::Status::Pending => Ok((
            axum::http::StatusCode::ACCEPTED,
            axum::Json(review.pending_view()),
        )
            .into_response()),
        reviews::Status::Approved => Ok(axum::Json(review.approved_completion()).into_response()),
        reviews::Status::Rejected => Err(ApiError::new(
            Code::ReviewRejected,
            match &review.note {
                Some(note) => format!("a reviewer rejected the response: {note}"),
                None => "a reviewer rejected the response".to_owned(),
            },
        )),
        reviews::Status::Expired => Err(ApiError::new(
            Code::ReviewRejected,
            "no reviewer decided in time: the held response expired and will not be released",
        )),
    }
}

/// `POST /v1/chat/completions`: a completion, or an SSE stream. The
/// per-minute limit is checked first, and its headers go on every answer.
async fn create_chat_completion(
    State(state): State<AppState>,
    InferenceKey(key): InferenceKey,
    headers: HeaderMap,
    body: JsonBody,
) -> Response {
    answer_chat(&state, &key, &headers, &body.0).await
}

/// The whole answer of `/v1/chat/completions` for a key, also given by the
/// dashboard's playground.
pub(crate) async fn answer_chat(
    state: &AppState,
    key: &ApiKey,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    limited(state, key, headers, "chat", async {
        chat(state, key, request_id(headers), body).await
    })
    .await
}

/// Runs `handle` when the key's per-minute limit allows it (the limit's
/// headers go on every answer), inside the server span named for
/// `operation`: the frame of every inference route.
///
/// `handle` (the whole pipeline, 10 to 30 KB as a future) is boxed once,
/// here: passed by value through the frame's async functions, each kept
/// its own copy and the handler's future grew to 76 KB, copied whole when
/// axum boxed it and again at every layer, about 175 KB of memmove per
/// request (docs/benchmarks.md, "The request path's CPU").
pub(crate) fn limited<'a>(
    state: &'a AppState,
    key: &'a ApiKey,
    headers: &'a HeaderMap,
    operation: &'static str,
    handle: impl Future<Output = Result<Response, ApiError>> + 'a,
) -> impl Future<Output = Response> + 'a {
    traced(
        state,
        key,
        headers,
        operation,
        with_rate_limit(state, key, Box::pin(handle)),
    )
}

/// The request's `x-request-id` (the request-id layer sets one), or "".
pub(crate) fn request_id(headers: &HeaderMap) -> &str {
    headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// A server-sent-events answer relaying `body`: event-stream type, no
/// caching, no proxy buffering.
pub(crate) fn event_stream<S>(body: S) -> Response
where
    S: futures::TryStream + Send + 'static,
    S::Ok: Into<axum::body::Bytes>,
    S::Error: Into<axum::BoxError>,
{
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
            (HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}

/// Runs an inference request's handling inside its server span (named
/// `{operation}` until the model is known: [`traces::request_model`]),
/// with the tenant, the key and the answer's status as attributes. When
/// tracing is off, it only runs `handle`.
async fn traced(
    state: &AppState,
    key: &ApiKey,
    headers: &HeaderMap,
    operation: &'static str,
    handle: impl Future<Output = Response>,
) -> Response {
    let trace = state.traces.server_span(headers, operation);
    let response = async {
        traces::record(|| {
            vec![
                KeyValue::new("tollgate.tenant.id", key.tenant_id.clone()),
                KeyValue::new("tollgate.key.id", key.id.clone()),
            ]
        });
        handle.await
    }
    .with_context(trace.clone())
    .await;
    let _active = trace.attach();
    traces::record(|| {
        let status = response.status().as_u16();
        let mut attributes = vec![KeyValue::new(
            "http.response.status_code",
            i64::from(status),
        )];
        if let Some(error) = response.extensions().get::<ApiError>() {
            attributes.push(KeyValue::new("error.type", error.code.as_str()));
        }
        attributes
    });
    response
}

/// Counts the request against the key's per-minute limit and runs `handle`
/// only when it is allowed; the rate-limit headers go on every answer.
async fn with_rate_limit(
    state: &AppState,
    key: &ApiKey,
    handle: impl Future<Output = Result<Response, ApiError>>,
) -> Response {
    let rate = rate_limit(state, key);
    let mut response = if rate.allowed {
        handle.await.unwrap_or_else(IntoResponse::into_response)
    } else {
        let mut error = ApiError::new(
            Code::RateLimitExceeded,
            format!(
                "this key allows {} requests per minute; retry in {} s",
                rate.limit,
                rate.retry_after_seconds()
            ),
        );
        error.retry_after = Some(rate.retry_after_seconds() as u64);
        error.into_response()
    };
    for (name, value) in rate.headers() {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    // Read after the answer: a completed request's usage is settled in.
    if let Some(limit) = key.tpm_limit {
        let allowance = key.rotated_from.as_deref().unwrap_or(&key.id);
        let tokens = state.key_tokens.peek(allowance, limit, now_ms());
        for (name, value) in tokens.headers() {
            if let Ok(value) = HeaderValue::from_str(&value) {
                response.headers_mut().insert(name, value);
            }
        }
    }
    response
}

/// Counts the request against its key's allowance (a rotated pair shares
/// one, keyed by the older key).
pub(crate) fn rate_limit(state: &AppState, key: &ApiKey) -> RateDecision {
    let allowance = key.rotated_from.as_deref().unwrap_or(&key.id);
    let limit = key.rate_limit.unwrap_or(state.config.default_rate_limit);
    state.limiter.check(allowance, limit, now_ms())
}

async fn chat(
    state: &AppState,
    key: &ApiKey,
    request_id: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let request = wire::chat::parse(body)?;
    if let Some(requested) = request.chain.first() {
        traces::request_model("chat", requested);
    }
    // The metrics' model label: the catalogue id that served, else the
    // first of the chain the catalogue knows.
    let primary = request
        .chain
        .iter()
        .find(|m| state.catalogue.get_for(&key.tenant_id, m).is_some())
        .cloned()
        .unwrap_or_default();
    let (mut response, model) =
        match gateway::chat_completions(&state.gateway, key, request_id, request, body).await {
            Ok(ChatOutcome::Held(review)) => (
                (axum::http::StatusCode::ACCEPTED, axum::Json(review)).into_response(),
                primary.clone(),
            ),
            Ok(ChatOutcome::Complete(completion)) => {
                let model = completion["model"].as_str().unwrap_or_default().to_owned();
                (axum::Json(completion).into_response(), model)
            }
            Ok(ChatOutcome::Stream { body, model }) => (
                // The server span ends with the stream, and the stream's
                // charge records its usage on it.
                event_stream(body.with_context(Context::current())),
                model,
            ),
            Err(error) => (error.into_response(), primary),
        };
    response.extensions_mut().insert(ModelLabel(model));
    Ok(response)
}

/// The catalogue in the OpenAI list shape (`client.models.list()`): the
/// models the key's tenant may use, with capabilities and pricing unit as
/// extensions.
async fn list_models(
    State(state): State<AppState>,
    InferenceKey(key): InferenceKey,
) -> axum::Json<Value> {
    let models = state.catalogue.models_for(&key.tenant_id);
    axum::Json(list_answer(models.iter().map(|m| model_entry(&state, m))))
}

/// `GET /v1/models/{id}` (`client.models.retrieve(id)`): one model as the
/// list shows it; 404 `model_not_found` for a model the key's tenant may
/// not use as for an unknown one, so the answer says nothing about other
/// tenants' models. Routed with the Gemini passthrough, which shares the
/// path (`api::native`).
pub(crate) async fn retrieve_model(
    State(state): State<AppState>,
    InferenceKey(key): InferenceKey,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let model = state
        .catalogue
        .get_for(&key.tenant_id, &id)
        .ok_or_else(|| {
            let mut error = ApiError::new(
                Code::ModelNotFound,
                format!("the model `{id}` does not exist or this key may not use it"),
            );
            error.param = Some("model".into());
            error
        })?;
    Ok(axum::Json(model_entry(&state, &model)))
}

fn model_entry(state: &AppState, m: &crate::catalogue::Model) -> Value {
    json!({
        "id": m.id,
        "object": "model",
        "created": state.started_at,
        "owned_by": m.provider.id,
        "inputCapabilities": m.input,
        "outputCapabilities": m.output,
        "context_window": m.context_window,
        "pricing": m.pricing.view(),
    })
}
