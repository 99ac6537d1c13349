//! `POST /v1/responses`: OpenAI's Responses API (docs/responses.md).
//!
//! The handler counts the request against the key's per-minute limit and
//! hands the body to the Responses pipeline (`gateway::responses`), which
//! forwards it to an OpenAI provider's own `/responses` or translates it.
//! Errors are in the OpenAI shape; a forwarded request's upstream refusal
//! is relayed as sent. Hosted tools dropped by translation are named in
//! `x-tollgate-dropped-tools`.

use axum::Router;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use opentelemetry::Context;
use opentelemetry::context::FutureExt as _;

use crate::api::inference::Inference;
use crate::api::json::JsonBody;
use crate::api::metrics::ModelLabel;
use crate::api::native::{render, service_fields};
use crate::api::state::AppState;
use crate::api::v1::event_stream;
use crate::gateway::responses::{self, ResponsesOutcome};
use crate::providers::wire::native::Wire;

pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/responses", post(create_response))
}

/// `POST /v1/responses`: a response, or a stream of Responses events.
async fn create_response(req: Inference, body: JsonBody) -> Response {
    req.serve(Wire::Responses.operation(), async {
        let service = service_fields(&req.headers)?;
        let answer = responses::create_response(
            &req.state.gateway,
            &req.key,
            req.request_id(),
            body.0,
            service,
        )
        .await?;
        let mut response = match answer.outcome {
            ResponsesOutcome::Complete(response) => axum::Json(response).into_response(),
            ResponsesOutcome::Held(review) => {
                (StatusCode::ACCEPTED, axum::Json(review)).into_response()
            }
            // The server span ends with the stream.
            ResponsesOutcome::Stream(body) => event_stream(body.with_context(Context::current())),
            ResponsesOutcome::Forwarded(outcome) => render(Ok(outcome)),
        };
        if !answer.dropped_tools.is_empty()
            && let Ok(value) = HeaderValue::from_str(&answer.dropped_tools.join(", "))
        {
            response
                .headers_mut()
                .insert(HeaderName::from_static("x-tollgate-dropped-tools"), value);
        }
        response.extensions_mut().insert(ModelLabel(answer.model));
        Ok(response)
    })
    .await
}
