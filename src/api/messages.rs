//! Anthropic's Messages API (docs/messages.md): `POST /v1/messages` for
//! every catalogue model, and `POST /v1/messages/count_tokens`.
//!
//! A model with an Anthropic deployment (or Claude on Vertex AI) goes to the native passthrough
//! (`api::native::passthrough`); any other is translated through the chat pipeline
//! (`gateway::messages`). Claude Code's `?beta=true` is accepted and not
//! forwarded. The key comes as `x-api-key` or `Authorization: Bearer`; our
//! errors are rendered in the Anthropic shape by `render_in_dialect`.

use axum::Router;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use opentelemetry::Context;
use opentelemetry::context::FutureExt as _;
use serde::Deserialize;
use serde_json::Value;

use crate::api::inference::Inference;
use crate::api::json::JsonBody;
use crate::api::metrics::ModelLabel;
use crate::api::native::{passthrough, service_fields};
use crate::api::state::AppState;
use crate::api::v1::event_stream;
use crate::base::error::{ApiError, Code};
use crate::gateway::messages::{self, Counted, MessagesOutcome};
use crate::gateway::native::ServiceFields;
use crate::providers::wire::native::Wire;
use crate::traces;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/messages", post(create_message))
        .route("/v1/messages/count_tokens", post(count_tokens))
}

/// Request headers forwarded to Anthropic as the caller sent them.
const ANTHROPIC_HEADERS: [&str; 2] = ["anthropic-version", "anthropic-beta"];

/// The untranslated fields of a translated request, when there were any.
const DROPPED_HEADER: &str = "x-tollgate-dropped";

fn forwarded_headers(headers: &HeaderMap) -> Vec<(&'static str, String)> {
    ANTHROPIC_HEADERS
        .into_iter()
        .filter_map(|name| {
            let value = headers.get(name)?.to_str().ok()?;
            Some((name, value.to_owned()))
        })
        .collect()
}

/// Just the `model` of a body, read without building the whole document
/// (a passthrough body is parsed once more, by the passthrough).
#[derive(Deserialize)]
struct Named {
    #[serde(default)]
    model: Option<Value>,
}

/// `POST /v1/messages`: a message, plain or streamed, on any model.
async fn create_message(req: Inference, body: JsonBody) -> Response {
    req.serve(Wire::Anthropic.operation(), async {
        let service = service_fields(&req.headers)?;
        let named: Named = serde_json::from_slice(&body.0)
            .map_err(|e| ApiError::new(Code::InvalidRequest, format!("malformed JSON: {e}")))?;
        let model = named
            .model
            .as_ref()
            .and_then(Value::as_str)
            .and_then(|name| messages::named_model(&req.state.gateway, &req.key, name.trim()))
            .filter(|model| !messages::is_native(model));
        if let Some(model) = model {
            return translated(&req, &body.0, &model, service).await;
        }
        let forwarded = forwarded_headers(&req.headers);
        passthrough(
            &req,
            Wire::Anthropic,
            None,
            None,
            body.0,
            forwarded,
            service,
        )
        .await
    })
    .await
}

/// A Messages request on a non-Anthropic model, through the chat pipeline.
async fn translated(
    req: &Inference,
    raw: &[u8],
    model: &crate::catalogue::Model,
    service: ServiceFields,
) -> Result<Response, ApiError> {
    let value: Value = serde_json::from_slice(raw)
        .map_err(|e| ApiError::new(Code::InvalidRequest, format!("malformed JSON: {e}")))?;
    traces::request_model(Wire::Anthropic.operation(), &model.id);
    let label = model.id.clone();
    let (outcome, dropped) = match messages::translated(
        &req.state.gateway,
        &req.key,
        req.request_id(),
        model,
        raw,
        &value,
        service,
    )
    .await
    {
        Ok(done) => done,
        Err(error) => {
            let mut response = error.into_response();
            response.extensions_mut().insert(ModelLabel(label));
            return Ok(response);
        }
    };
    let mut response = match outcome {
        MessagesOutcome::Complete(message) => axum::Json(message).into_response(),
        MessagesOutcome::Held(review) => (StatusCode::ACCEPTED, axum::Json(review)).into_response(),
        // The server span ends with the stream, as on the chat route.
        MessagesOutcome::Stream(body) => event_stream(body.with_context(Context::current())),
    };
    if !dropped.is_empty()
        && let Ok(value) = HeaderValue::from_str(&dropped.join(", "))
    {
        response
            .headers_mut()
            .insert(HeaderName::from_static(DROPPED_HEADER), value);
    }
    response.extensions_mut().insert(ModelLabel(label));
    Ok(response)
}

/// `POST /v1/messages/count_tokens`: `{"input_tokens": N}`, never billed.
/// Counted against the key's per-minute limit like any request.
async fn count_tokens(req: Inference, body: JsonBody) -> Response {
    req.serve("count_tokens", async {
        let value: Value = serde_json::from_slice(&body.0)
            .map_err(|e| ApiError::new(Code::InvalidRequest, format!("malformed JSON: {e}")))?;
        let name = match &value["model"] {
            Value::String(name) if !name.trim().is_empty() => name.trim().to_owned(),
            _ => {
                return Err(ApiError::invalid(
                    "model",
                    "`model` must be a non-empty string",
                ));
            }
        };
        let model =
            messages::named_model(&req.state.gateway, &req.key, &name).ok_or_else(|| {
                ApiError::new(
                    Code::ModelNotFound,
                    format!("the model `{name}` is not in the catalogue"),
                )
            })?;
        traces::request_model("count_tokens", &name);
        let counted = messages::count_tokens(
            &req.state.gateway,
            &model,
            body.0.clone(),
            &value,
            &forwarded_headers(&req.headers),
        )
        .await?;
        Ok(match counted {
            Counted::Local(tokens) => axum::Json(messages::counted_body(tokens)).into_response(),
            Counted::Relayed { status, body } => (
                StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
                [(header::CONTENT_TYPE, "application/json")],
                body,
            )
                .into_response(),
        })
    })
    .await
}
