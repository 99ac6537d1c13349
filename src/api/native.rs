//! The native passthrough routes (docs/native.md): Gemini's `:generateContent` and
//! `:streamGenerateContent` under `/v1beta/models/` and `/v1/models/`, and
//! OpenAI's legacy `POST /v1/completions` (docs/completions.md).
//! Anthropic's `POST /v1/messages` is `api::messages`, which runs the
//! passthrough through [`passthrough`] for Anthropic models.
//! `GET /v1/models/{id}` shares the Gemini route's path, so it is wired
//! here (its handler is `v1::retrieve_model`).
//!
//! axum cannot match `{model}:generateContent` (a parameter with a literal
//! suffix) in one segment, so the segment is taken whole and split on its
//! last `:`. The key was authenticated at the edge (`x-api-key`,
//! `Authorization: Bearer`, `x-goog-api-key` or, on the Google routes,
//! `?key=`); our own errors are re-rendered in each route's dialect by
//! `render_in_dialect`.

use axum::Router;
use axum::extract::{Path, RawQuery};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;
use serde_json::Value;

use crate::api::inference::Inference;
use crate::api::json::JsonBody;
use crate::api::metrics::ModelLabel;
use crate::api::state::AppState;
use crate::api::v1::event_stream;
use crate::base::error::{ApiError, Code};
use crate::base::money::micros_to_credits;
use crate::gateway::native::{self, NativeCall, NativeOutcome, ServiceFields};
use crate::providers::wire::native::Wire;
use crate::traces;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1beta/models/{model_action}", post(generate_content))
        .route(
            "/v1/models/{model_action}",
            post(generate_content).get(crate::api::v1::retrieve_model),
        )
        .route("/v1/completions", post(create_completion))
}

/// `POST /v1/completions`: a legacy text completion, plain or streamed,
/// forwarded to an OpenAI-compatible provider.
async fn create_completion(req: Inference, body: JsonBody) -> Response {
    req.serve(Wire::Completions.operation(), async {
        let service = service_fields(&req.headers)?;
        passthrough(
            &req,
            Wire::Completions,
            None,
            None,
            body.0,
            Vec::new(),
            service,
        )
        .await
    })
    .await
}

/// `POST .../models/{model}:generateContent` and `:streamGenerateContent`
/// (`?alt=sse`).
async fn generate_content(
    req: Inference,
    Path(model_action): Path<String>,
    RawQuery(query): RawQuery,
    body: JsonBody,
) -> Response {
    req.serve(Wire::Gemini.operation(), async {
        let Some((model, action)) = model_action.rsplit_once(':') else {
            return Err(ApiError::not_found(format!(
                "no such route: expected `models/{{model}}:generateContent` or `:streamGenerateContent`, got `{model_action}`"
            )));
        };
        let stream = match action {
            "generateContent" => false,
            "streamGenerateContent" => {
                let alt = query.as_deref().and_then(|q| {
                    url::form_urlencoded::parse(q.as_bytes())
                        .find(|(name, _)| name == "alt")
                        .map(|(_, value)| value.into_owned())
                });
                if alt.as_deref() != Some("sse") {
                    return Err(ApiError::invalid(
                        "alt",
                        "streams are served as Server-Sent Events only: call `:streamGenerateContent?alt=sse`",
                    ));
                }
                true
            }
            other => {
                return Err(ApiError::not_found(format!(
                    "the action `{other}` is not served: use `generateContent` or `streamGenerateContent`"
                )));
            }
        };
        if model.is_empty() {
            return Err(ApiError::invalid("model", "the path names no model"));
        }
        let service = service_fields(&req.headers)?;
        passthrough(&req, Wire::Gemini, Some(model), Some(stream), body.0, Vec::new(), service)
            .await
    })
    .await
}

/// Parses a native body for `wire` (the arguments are
/// [`NativeCall::parse`]'s), runs the call and maps its outcome to a
/// response labelled with the requested model.
pub(crate) async fn passthrough(
    req: &Inference,
    wire: Wire,
    model_name: Option<&str>,
    stream: Option<bool>,
    body: Bytes,
    headers: Vec<(&'static str, String)>,
    service: ServiceFields,
) -> Result<Response, ApiError> {
    let models = req.state.catalogue.for_tenant(&req.key.tenant_id);
    let call = NativeCall::parse(models, wire, model_name, stream, body, headers, service)?;
    traces::request_model(wire.operation(), &call.requested);
    let model = call.requested.clone();
    let mut response =
        render(native::passthrough(&req.state.gateway, &req.key, req.request_id(), call).await);
    response.extensions_mut().insert(ModelLabel(model));
    Ok(response)
}

/// A native outcome as the response: the upstream's body with the billing
/// headers, a stream, a held review or the upstream's refusal relayed.
pub(crate) fn render(outcome: Result<NativeOutcome, ApiError>) -> Response {
    match outcome {
        Ok(NativeOutcome::Complete {
            body,
            charged,
            level,
        }) => {
            let mut response = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
            let billing = [
                (
                    "x-tollgate-cost",
                    micros_to_credits(charged.cost).to_string(),
                ),
                (
                    "x-tollgate-balance-after",
                    micros_to_credits(charged.balance_after).to_string(),
                ),
                ("x-tollgate-risk-level", level.as_str().to_owned()),
            ];
            let remaining = charged
                .key_remaining
                .map(|r| ("x-tollgate-key-remaining", micros_to_credits(r).to_string()));
            for (name, value) in billing.into_iter().chain(remaining) {
                if let Ok(value) = HeaderValue::from_str(&value) {
                    response
                        .headers_mut()
                        .insert(HeaderName::from_static(name), value);
                }
            }
            response
        }
        Ok(NativeOutcome::Held(review)) => {
            (StatusCode::ACCEPTED, axum::Json(review)).into_response()
        }
        Ok(NativeOutcome::Stream(body)) => event_stream(body),
        Ok(NativeOutcome::Refused { status, body }) => (
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response(),
        Err(error) => error.into_response(),
    }
}

/// The service fields, from `x-tollgate-purpose`,
/// `x-tollgate-user-consent-id`, `x-tollgate-end-user-id` and
/// `x-tollgate-deployer-context` (a JSON object).
pub(crate) fn service_fields(headers: &HeaderMap) -> Result<ServiceFields, ApiError> {
    let text = |name: &str| -> Result<Option<String>, ApiError> {
        match headers.get(name) {
            None => Ok(None),
            Some(value) => value
                .to_str()
                .map(|v| Some(v.trim().to_owned()).filter(|v| !v.is_empty()))
                .map_err(|_| ApiError::invalid(name, format!("`{name}` must be visible ASCII"))),
        }
    };
    let deployer_context = match text("x-tollgate-deployer-context")? {
        None => None,
        Some(raw) => match serde_json::from_str::<Value>(&raw) {
            Ok(value @ Value::Object(_)) => Some(value),
            _ => {
                return Err(ApiError::new(
                    Code::InvalidRequest,
                    "`x-tollgate-deployer-context` must be a JSON object",
                ));
            }
        },
    };
    Ok(ServiceFields {
        purpose: text("x-tollgate-purpose")?,
        user_consent_id: text("x-tollgate-user-consent-id")?,
        end_user_id: text("x-tollgate-end-user-id")?,
        deployer_context,
    })
}
