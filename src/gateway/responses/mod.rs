//! OpenAI's Responses API, `POST /v1/responses`, on every provider kind
//! (docs/responses.md).
//!
//! Two ways to serve it, both through every stage of a chat completion
//! (DESIGN section 2), recorded under the `responses` endpoint:
//! - passthrough: a request naming one `model` that has a deployment on an
//!   `openai` provider (not set to `responses = "translate"`) is forwarded
//!   to that provider's `/responses` as sent, by the native passthrough
//!   (`gateway::native`, `Wire::Responses`), which bills it from the
//!   response's `usage`. The upstream's ids, `previous_response_id` and
//!   hosted tools pass through.
//! - translation: every other request becomes an internal chat request
//!   ([`responses_input`]) served by the chat pipeline (`gateway::chat_on`:
//!   the fallback chain through `models`, caps, gates, registry, charge),
//!   and its completion or stream becomes a response ([`responses_output`]).
//!   Both translations are the wire's (`providers::wire`).
//!
//! A translated response is kept per tenant for `previous_response_id`
//! ([`stored`]) unless `store` is false; a `previous_response_id` the
//! tenant's store holds is always continued by translation, since only the
//! gateway knows that conversation.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use super::native::{self, NativeCall, NativeOutcome, ServiceFields};
use super::{ChatOutcome, chat_on};
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::base::time::now_ms;
use crate::catalogue::Endpoint;
use crate::compliance::conversations::DAY_MS;
use crate::compliance::stored_responses::StoredResponse;
use crate::gateway::Gateway;
use crate::providers::sse::SseBody;
use crate::providers::wire::native::Wire;
use crate::providers::wire::responses_input::{self, ResponsesRequest};
use crate::providers::wire::responses_output::{self, Frame};
use crate::store::Store;

/// What the caller gets.
pub enum ResponsesOutcome {
    /// A translated response.
    Complete(Value),
    /// Held for human review: 202 with the review item (DESIGN 7.3).
    Held(Value),
    /// A translated stream of Responses events.
    Stream(SseBody),
    /// The passthrough's outcome, relayed as the native routes relay it.
    Forwarded(NativeOutcome),
}

/// An outcome, and what the response headers say about it.
pub struct Answer {
    pub outcome: ResponsesOutcome,
    /// The catalogue id first tried (the metrics' model label).
    pub model: String,
    /// Hosted tools dropped by translation (`x-tollgate-dropped-tools`).
    pub dropped_tools: Vec<String>,
}

/// Serves one Responses request for `key`. `service` holds the service
/// fields of the `x-tollgate-*` headers; the body's own win. A request the
/// provider's own `/responses` can take is forwarded ([`forward`]); every
/// other is translated into chat and back ([`translate`]).
pub async fn create_response(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    raw: Bytes,
    service: ServiceFields,
) -> Result<Answer, ApiError> {
    let mut request = responses_input::parse(&raw)?;
    request.service = request.service.or(&service);
    let model = first_catalogued(gateway, key, &request.chain);
    crate::traces::request_model(Wire::Responses.operation(), &request.chain[0]);
    let now = now_ms();
    let history = stored_history(gateway, key, request.previous_response_id.as_deref(), now)?;
    if history.is_none() && forwarded(gateway, key, &request) {
        let outcome = forward(gateway, key, request_id, raw, service).await?;
        return Ok(Answer {
            outcome: ResponsesOutcome::Forwarded(outcome),
            model,
            dropped_tools: Vec::new(),
        });
    }
    if let (Some(id), None) = (&request.previous_response_id, &history) {
        return Err(not_stored(id));
    }
    let outcome = translate(gateway, key, request_id, &request, history, &raw, now).await?;
    Ok(Answer {
        outcome,
        model,
        dropped_tools: request.dropped_tools,
    })
}

/// The first model of the chain the tenant's catalogue holds (the metrics'
/// model label), else none.
fn first_catalogued(gateway: &Gateway, key: &ApiKey, chain: &[String]) -> String {
    chain
        .iter()
        .find(|m| gateway.catalogue.get_for(&key.tenant_id, m).is_some())
        .cloned()
        .unwrap_or_default()
}

/// The conversation `previous_response_id` names, if the tenant's store
/// holds it (unexpired).
fn stored_history(
    gateway: &Gateway,
    key: &ApiKey,
    previous_response_id: Option<&str>,
    now: i64,
) -> Result<Option<Vec<Value>>, ApiError> {
    let Some(id) = previous_response_id else {
        return Ok(None);
    };
    gateway
        .store
        .read(|tx| crate::compliance::stored_responses::messages(tx, &key.tenant_id, id, now))
        .map_err(|e| ApiError::internal("reading a stored response", e))
}

/// 404 on `previous_response_id`: the tenant's store does not hold it.
fn not_stored(id: &str) -> ApiError {
    let mut error = ApiError::new(
        Code::NotFound,
        format!(
            "no response `{id}` is stored for this tenant (it may have expired, or been made with `store: false`)"
        ),
    );
    error.param = Some("previous_response_id".into());
    error
}

/// The passthrough: the caller's body, as sent, through the native
/// passthrough's stages to the provider's own `/responses`.
async fn forward(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    raw: Bytes,
    service: ServiceFields,
) -> Result<NativeOutcome, ApiError> {
    let call = NativeCall::parse(
        gateway.catalogue.for_tenant(&key.tenant_id),
        Wire::Responses,
        None,
        None,
        raw,
        Vec::new(),
        service,
    )?;
    native::passthrough(gateway, key, request_id, call).await
}

/// The translation: the request (continuing `history`) as a chat request
/// through the chat pipeline (`chat_on`), its outcome made a response,
/// kept for `previous_response_id` unless `store` is false.
async fn translate(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    request: &ResponsesRequest,
    history: Option<Vec<Value>>,
    raw: &[u8],
    now: i64,
) -> Result<ResponsesOutcome, ApiError> {
    let history = history.unwrap_or_default();
    let chat = request.to_chat(history.clone());
    let frame = Frame {
        id: crate::base::ids::new_id("resp"),
        created_at: now / 1000,
        model: request.chain[0].clone(),
        previous_response_id: request.previous_response_id.clone(),
        store: request.store,
        echo: request.echo.clone(),
    };
    let keep = request
        .store
        .then(|| Keeper::new(gateway, key, request, &frame.id, history));
    let outcome = chat_on(gateway, key, request_id, chat, raw, Endpoint::Responses).await?;
    Ok(respond(outcome, frame, keep).await)
}

/// A chat outcome as a Responses outcome: the completion or the stream
/// made a response in `frame`, and kept (`keep`) once whole.
async fn respond(outcome: ChatOutcome, mut frame: Frame, keep: Option<Keeper>) -> ResponsesOutcome {
    match outcome {
        ChatOutcome::Held(review) => ResponsesOutcome::Held(review),
        ChatOutcome::Complete(completion) => {
            if let Some(served) = completion["model"].as_str() {
                frame.model = served.to_owned();
            }
            let (response, message) = frame.from_completion(&completion);
            if let Some(keep) = keep {
                keep.keep(message, &response).await;
            }
            ResponsesOutcome::Complete(response)
        }
        ChatOutcome::Stream { body, model } => {
            frame.model = model;
            let on_complete = keep.map(|keep| -> responses_output::OnComplete {
                Box::new(move |message, response| {
                    let level = is_high_risk(response);
                    Box::pin(keep.keep_at(message, level))
                })
            });
            ResponsesOutcome::Stream(responses_output::translate(body, frame, on_complete))
        }
    }
}

/// Whether the request goes to a provider's own `/responses`: one model
/// named by `model` (a `models` chain is a gateway feature, always
/// translated), which has a deployment that serves the Responses wire.
fn forwarded(gateway: &Gateway, key: &ApiKey, request: &ResponsesRequest) -> bool {
    let [name] = request.chain.as_slice() else {
        return false;
    };
    if request.from_models {
        return false;
    }
    gateway
        .catalogue
        .get_for(&key.tenant_id, name)
        .is_some_and(|model| {
            model
                .deployments
                .iter()
                .any(|d| Wire::Responses.serves(&d.provider, &d.upstream))
        })
}

/// The tenant's retention in days: (ordinary, high-risk).
fn retention(gateway: &Gateway, key: &ApiKey) -> (u32, u32) {
    gateway
        .store
        .read_committed(|tx| crate::tenants::resolve(tx, &key.tenant_id))
        .map(|t| (t.policy.retention_days, t.policy.high_risk_retention_days))
        .unwrap_or_else(|e| {
            // The tenant was read by the wallet check a moment ago; should
            // it fail now, the longest retention the policy allows by
            // default is kept rather than none.
            tracing::warn!(tenant = %key.tenant_id, error = %e, "reading the retention for a stored response");
            let days = crate::tenants::CompliancePolicy::default().high_risk_retention_days;
            (days, days)
        })
}

/// Whether the response's request was classified high-risk (or worse).
fn is_high_risk(response: &Value) -> bool {
    matches!(
        response["risk_classification"]["level"].as_str(),
        Some("high" | "prohibited")
    )
}

/// Keeps a translated response's conversation for `previous_response_id`.
struct Keeper {
    store: Arc<Store>,
    tenant_id: String,
    end_user_id: Option<String>,
    id: String,
    conversation: Vec<Value>,
    retention: (u32, u32),
}

impl Keeper {
    /// What keeps the response `id` to `request`: the conversation it
    /// continues (`history`), then the request's own messages (its system
    /// messages apply to it alone).
    fn new(
        gateway: &Gateway,
        key: &ApiKey,
        request: &ResponsesRequest,
        id: &str,
        history: Vec<Value>,
    ) -> Keeper {
        let mut conversation = history;
        conversation.extend(
            request
                .messages
                .iter()
                .filter(|m| m["role"] != "system")
                .cloned(),
        );
        Keeper {
            store: gateway.store.clone(),
            tenant_id: key.tenant_id.clone(),
            end_user_id: request.service.end_user_id.clone(),
            id: id.to_owned(),
            conversation,
            retention: retention(gateway, key),
        }
    }

    async fn keep(self, message: Value, response: &Value) {
        let high = is_high_risk(response);
        self.keep_at(message, high).await;
    }

    /// Stores the conversation with the assistant's `message`, expiring with
    /// the conversation retention (the high-risk one for a high-risk
    /// request). A failure is logged: the response was served and billed.
    async fn keep_at(self, message: Value, high_risk: bool) {
        let mut conversation = self.conversation;
        conversation.push(message);
        let days = if high_risk {
            self.retention.1
        } else {
            self.retention.0
        };
        let now = now_ms();
        let record = StoredResponse {
            id: self.id,
            tenant_id: self.tenant_id,
            created_at: now,
            expires_at: now + i64::from(days) * DAY_MS,
            end_user_id: self.end_user_id,
            messages: Value::Array(conversation).to_string(),
        };
        let id = record.id.clone();
        if let Err(e) = crate::compliance::stored_responses::insert(&self.store, record).await {
            tracing::error!(response = %id, error = %e, "storing a response for previous_response_id failed");
        }
    }
}
