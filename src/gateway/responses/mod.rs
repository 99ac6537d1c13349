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
/// fields of the `x-tollgate-*` headers; the body's own win.
// Long on purpose: it decides between the native passthrough and the
// translation into chat, then maps either outcome; each step is one call.
pub async fn create_response(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    raw: Bytes,
    service: ServiceFields,
) -> Result<Answer, ApiError> {
    let mut request = responses_input::parse(&raw)?;
    request.service = request.service.or(&service);
    let model = request
        .chain
        .iter()
        .find(|m| gateway.catalogue.get_for(&key.tenant_id, m).is_some())
        .cloned()
        .unwrap_or_default();
    crate::traces::request_model(Wire::Responses.operation(), &request.chain[0]);
    let now = now_ms();
    let history = match &request.previous_response_id {
        None => None,
        Some(id) => gateway
            .store
            .read(|tx| crate::compliance::stored_responses::messages(tx, &key.tenant_id, id, now))
            .map_err(|e| ApiError::internal("reading a stored response", e))?,
    };
    if history.is_none() && forwarded(gateway, key, &request) {
        let call = NativeCall::parse(
            gateway.catalogue.for_tenant(&key.tenant_id),
            Wire::Responses,
            None,
            None,
            raw,
            Vec::new(),
            service,
        )?;
        let outcome = native::passthrough(gateway, key, request_id, call).await?;
        return Ok(Answer {
            outcome: ResponsesOutcome::Forwarded(outcome),
            model,
            dropped_tools: Vec::new(),
        });
    }
    if let (Some(id), None) = (&request.previous_response_id, &history) {
        let mut error = ApiError::new(
            Code::NotFound,
            format!(
                "no response `{id}` is stored for this tenant (it may have expired, or been made with `store: false`)"
            ),
        );
        error.param = Some("previous_response_id".into());
        return Err(error);
    }
    let history = history.unwrap_or_default();
    let chat = request.to_chat(history.clone());
    // The conversation this response continues: the history, then this
    // request's messages (its system messages apply to it alone).
    let mut conversation = history;
    conversation.extend(
        request
            .messages
            .iter()
            .filter(|m| m["role"] != "system")
            .cloned(),
    );
    let frame = Frame {
        id: crate::base::ids::new_id("resp"),
        created_at: now / 1000,
        model: request.chain[0].clone(),
        previous_response_id: request.previous_response_id.clone(),
        store: request.store,
        echo: request.echo.clone(),
    };
    let keep = request.store.then(|| Keeper {
        store: gateway.store.clone(),
        tenant_id: key.tenant_id.clone(),
        end_user_id: request.service.end_user_id.clone(),
        id: frame.id.clone(),
        conversation,
        retention: retention(gateway, key),
    });
    let outcome = match chat_on(gateway, key, request_id, chat, &raw, Endpoint::Responses).await? {
        ChatOutcome::Held(review) => ResponsesOutcome::Held(review),
        ChatOutcome::Complete(completion) => {
            let mut frame = frame;
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
            let mut frame = frame;
            frame.model = model;
            let on_complete = keep.map(|keep| -> responses_output::OnComplete {
                Box::new(move |message, response| {
                    let level = is_high_risk(response);
                    Box::pin(keep.keep_at(message, level))
                })
            });
            ResponsesOutcome::Stream(responses_output::translate(body, frame, on_complete))
        }
    };
    Ok(Answer {
        outcome,
        model,
        dropped_tools: request.dropped_tools,
    })
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
        .read(|tx| crate::tenants::resolve(tx, &key.tenant_id))
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
