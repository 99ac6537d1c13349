//! Anthropic's Messages API for every catalogue model (docs/messages.md).
//!
//! A model with a deployment on an Anthropic provider, or a Claude model
//! on Vertex AI (which takes the same body at `:rawPredict`), is served by
//! the native passthrough ([`super::native`]), byte for byte. Any other model
//! (OpenAI, Gemini, the mock, any kind that takes the internal chat
//! request) is served by translation: the Messages body becomes a chat
//! request ([`wire::messages::to_chat`]) that runs through every stage of the
//! chat route ([`super::chat_on`] with `endpoint = messages`: limits,
//! wallet, classification and gates, the deployment walk, tier caps, the
//! registry, the durable charge, audit, conversation log, events,
//! metrics), and the answer or the stream is translated back
//! ([`wire::messages_answer::to_message`], [`wire::messages_stream::translate`]).
//! The translations are the wire's (`providers::wire`); this module is the
//! adapter that takes them through the stages.
//!
//! `POST /v1/messages/count_tokens` is answered here too: forwarded to an
//! Anthropic provider, or counted locally ([`count`]). It is never billed.

pub mod count;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};

use super::native::ServiceFields;
use super::{ChatOutcome, chat_on};
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::base::redact::without_url;
use crate::catalogue::Endpoint;
use crate::catalogue::{Model, ProviderKind};
use crate::gateway::Gateway;
use crate::providers::http::endpoint;
use crate::providers::sse::SseBody;
use crate::providers::wire;
use crate::providers::wire::chat::ChatRequest;
use crate::providers::wire::native::{Wire, replace_top_level_string};

/// Whether `model` is served by the native passthrough: it has a
/// deployment that takes the Messages body (an Anthropic provider, or a
/// Claude model on Vertex AI). Its other deployments, if any, are not
/// walked on `/v1/messages` (docs/messages.md).
pub fn is_native(model: &Model) -> bool {
    model
        .deployments
        .iter()
        .any(|d| Wire::Anthropic.serves(&d.provider, &d.upstream))
}

/// Whether `model` has a deployment on an Anthropic provider, whose
/// `count_tokens` endpoint counts for it.
fn counted_upstream(model: &Model) -> bool {
    model
        .deployments
        .iter()
        .any(|d| d.provider.kind == ProviderKind::Anthropic)
}

/// What the caller of a translated request gets.
pub enum MessagesOutcome {
    /// The Messages answer, with the gateway's extensions.
    Complete(Value),
    /// Held for human review: 202 with the review item.
    Held(Value),
    /// The Messages event stream.
    Stream(SseBody),
}

/// Serves a Messages request on a non-Anthropic `model` by translation.
/// Returns the outcome and what was dropped untranslated.
pub async fn translated(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    model: &Model,
    raw: &[u8],
    body: &Value,
    service: ServiceFields,
) -> Result<(MessagesOutcome, Vec<String>), ApiError> {
    let translated = wire::messages::to_chat(body, model.max_output_tokens)?;
    let requested = translated.model.clone();
    let request = ChatRequest {
        body: translated.body,
        chain: vec![translated.model],
        stream: translated.stream,
        auto_truncate: false,
        service,
    };
    let outcome = match chat_on(gateway, key, request_id, request, raw, Endpoint::Messages).await? {
        ChatOutcome::Complete(completion) => {
            MessagesOutcome::Complete(wire::messages_answer::to_message(&completion, &requested))
        }
        ChatOutcome::Held(review) => MessagesOutcome::Held(review),
        ChatOutcome::Stream { body, .. } => {
            MessagesOutcome::Stream(wire::messages_stream::translate(body, requested))
        }
    };
    Ok((outcome, translated.dropped))
}

/// The answer of `count_tokens`.
pub enum Counted {
    /// Counted here: `{"input_tokens": N}`.
    Local(u64),
    /// An Anthropic provider's answer, relayed as sent.
    Relayed { status: u16, body: Bytes },
}

/// `POST /v1/messages/count_tokens` for `model`: forwarded to its Anthropic
/// deployments (in catalogue order, the next one after a connection
/// failure, a 429 or a 5xx), counted locally otherwise. `headers` are the
/// caller's `anthropic-version` and `anthropic-beta`.
pub async fn count_tokens(
    gateway: &Gateway,
    model: &Model,
    raw: Bytes,
    body: &Value,
    headers: &[(&'static str, String)],
) -> Result<Counted, ApiError> {
    super::kind_fits(model, false, "/v1/messages/count_tokens")?;
    if counted_upstream(model) {
        return forward_count(gateway, model, raw, headers).await;
    }
    let translated = wire::messages::to_chat(body, None)?;
    let messages = &translated.body["messages"];
    let tools = translated.body.get("tools").unwrap_or(&Value::Null);
    let openai = model
        .deployments
        .iter()
        .all(|d| matches!(d.provider.kind, ProviderKind::Openai | ProviderKind::Azure));
    Ok(Counted::Local(if openai {
        count::openai_tokens(messages, tools)
    } else {
        count::estimated_tokens(messages, tools)
    }))
}

async fn forward_count(
    gateway: &Gateway,
    model: &Model,
    raw: Bytes,
    headers: &[(&'static str, String)],
) -> Result<Counted, ApiError> {
    let mut failures: Vec<String> = Vec::new();
    for deployment in model
        .deployments
        .iter()
        .filter(|d| d.provider.kind == ProviderKind::Anthropic)
    {
        let provider = &deployment.provider;
        let Some(base) = provider.base_url.as_ref() else {
            failures.push(format!("{}: no base_url", deployment.label()));
            continue;
        };
        let body = if deployment.upstream == model.id {
            raw.clone()
        } else {
            replace_top_level_string(&raw, "model", &deployment.upstream)
                .map(Bytes::from)
                .unwrap_or_else(|| raw.clone())
        };
        let mut request = gateway
            .providers
            .http()
            .post(endpoint(base, &["messages", "count_tokens"]))
            .header("content-type", "application/json")
            .timeout(provider.first_byte_timeout.max(Duration::from_secs(5)))
            .body(body);
        if !headers.iter().any(|(n, _)| *n == "anthropic-version") {
            request = request.header(
                "anthropic-version",
                crate::providers::anthropic::API_VERSION,
            );
        }
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        if let Some(key) = &provider.api_key {
            request = request.header("x-api-key", key.expose());
        }
        let started = Instant::now();
        match request.send().await {
            Err(e) => failures.push(format!("{}: {}", deployment.label(), without_url(&e))),
            Ok(response) => {
                let status = response.status().as_u16();
                let body = response.bytes().await.unwrap_or_default();
                if status == 429 || status >= 500 {
                    failures.push(format!("{}: HTTP {status}", deployment.label()));
                    continue;
                }
                tracing::debug!(deployment = %deployment.label(), status, elapsed_ms = started.elapsed().as_millis() as u64, "count_tokens forwarded");
                return Ok(Counted::Relayed { status, body });
            }
        }
    }
    Err(ApiError::new(
        Code::AllProvidersFailed,
        format!(
            "no Anthropic deployment of `{}` counted the tokens: {}",
            model.id,
            failures.join("; ")
        ),
    ))
}

/// The local answer's body.
pub fn counted_body(tokens: u64) -> Value {
    json!({ "input_tokens": tokens })
}

/// The catalogue model a Messages body names, for the tenant.
pub fn named_model(gateway: &Gateway, key: &ApiKey, name: &str) -> Option<Arc<Model>> {
    gateway.catalogue.get_for(&key.tenant_id, name)
}
