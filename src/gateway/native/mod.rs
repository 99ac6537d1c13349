//! The native passthroughs: Anthropic's `POST /v1/messages` and Gemini's
//! generate-content, forwarded to a provider of the same kind with the
//! caller's body unchanged (docs/native.md).
//!
//! They go through the same stages as a chat completion (DESIGN section 2)
//! so that no passthrough is a way around a cap: the key was authenticated
//! (its own cap checked) at the edge, then the wallet ([`admit`]), the
//! classifier and the policy gates ([`gate`], fed an OpenAI-style view of
//! the native messages), the free tier's multimodal cap and the
//! sub-processor registry. The answer is billed through the same durable
//! charge ([`Extensions::charge`]) from the native usage: a plain answer
//! leaves only after its charge committed, a stream is charged at its end
//! or when dropped.
//!
//! One model, no fallback: the caller named one native model, and another
//! provider could not take the native body anyway.

pub mod relay;
pub mod wire;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Map, Value};

use super::attempt::AttemptSpan;
use super::request::ChatRequest;
use super::{Attempt, Compliance, Extensions, Served, admit, gate, take_tier_caps, tokens, walk};
use crate::app::AppState;
use crate::auth::keys::ApiKey;
use crate::billing::Charged;
use crate::billing::limits;
use crate::catalogue::Model;
use crate::catalogue::overlay::TenantCatalogue;
use crate::compliance::{Level, registry};
use crate::error::{ApiError, Code};
use crate::events::Event;
use crate::providers::http::{endpoint, without_url};
use wire::{Meter, Wire};

/// Error bodies of the upstream are relayed up to this size.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// A whole answer above this size is refused.
const MAX_ANSWER: usize = 64 * 1024 * 1024;
/// The `anthropic-version` sent when the caller sent none.
const DEFAULT_ANTHROPIC_VERSION: &str = crate::providers::anthropic::API_VERSION;

/// The service fields of a native request, which its body has no room for:
/// they come from `x-tollgate-*` headers.
#[derive(Debug, Default, Clone)]
pub struct ServiceFields {
    pub purpose: Option<String>,
    pub user_consent_id: Option<String>,
    pub end_user_id: Option<String>,
    pub deployer_context: Option<Value>,
}

/// A native request, parsed once; `body` is what goes upstream.
pub struct NativeCall {
    pub wire: Wire,
    /// The catalogue id the caller named.
    pub model: Arc<Model>,
    pub requested: String,
    pub stream: bool,
    pub body: Bytes,
    /// `anthropic-version` and `anthropic-beta`, as the caller sent them.
    pub headers: Vec<(&'static str, String)>,
    /// The OpenAI-style view the classifier and the caps read.
    pub view: ChatRequest,
    /// The completion the body allows itself (Anthropic's `max_tokens`,
    /// Gemini's `generationConfig.maxOutputTokens`), for token limits.
    pub max_output: Option<u64>,
}

/// What the caller gets.
pub enum NativeOutcome {
    /// The upstream's answer, its bytes unchanged, and its committed charge.
    Complete {
        body: Bytes,
        charged: Charged,
        level: Level,
    },
    /// Held for human review: 202 with the review item (DESIGN 7.3).
    Held(Value),
    /// The upstream's events as they come.
    Stream(relay::NativeBody),
    /// The upstream refused the request: its status and body, relayed.
    Refused { status: u16, body: Bytes },
}

impl NativeCall {
    /// Parses a native body for `wire`: `model_name` is the body's `model`
    /// (Anthropic) or the path's (Gemini). Unknown models are 404, a model
    /// of another provider kind 400.
    pub fn parse(
        models: TenantCatalogue<'_>,
        wire: Wire,
        model_name: Option<&str>,
        stream: Option<bool>,
        body: Bytes,
        headers: Vec<(&'static str, String)>,
        service: ServiceFields,
    ) -> Result<NativeCall, ApiError> {
        let value: Value = serde_json::from_slice(&body)
            .map_err(|e| ApiError::new(Code::InvalidRequest, format!("malformed JSON: {e}")))?;
        if !value.is_object() {
            return Err(ApiError::new(
                Code::InvalidRequest,
                "the body must be a JSON object",
            ));
        }
        let requested = match model_name {
            Some(name) => name.to_owned(),
            None => match &value["model"] {
                Value::String(name) if !name.trim().is_empty() => name.clone(),
                _ => {
                    return Err(ApiError::invalid(
                        "model",
                        "`model` must be a non-empty string",
                    ));
                }
            },
        };
        let stream = match stream {
            Some(stream) => stream,
            None => match &value["stream"] {
                Value::Null => false,
                Value::Bool(b) => *b,
                _ => return Err(ApiError::invalid("stream", "`stream` must be a boolean")),
            },
        };
        let model = resolve(models, wire, &requested)?;
        let messages = wire.classification_view(&value)?;
        let max_output = value["max_tokens"]
            .as_u64()
            .or_else(|| value["generationConfig"]["maxOutputTokens"].as_u64());

        let mut view_body = Map::new();
        view_body.insert("model".into(), Value::String(requested.clone()));
        view_body.insert("messages".into(), messages);
        let view = ChatRequest {
            body: view_body,
            chain: vec![requested.clone()],
            stream,
            auto_truncate: false,
            purpose: service.purpose,
            user_consent_id: service.user_consent_id,
            end_user_id: service.end_user_id,
            deployer_context: service.deployer_context,
        };
        drop(value);
        let body = match wire {
            Wire::Anthropic if model.upstream != requested => {
                upstream_named(body, &model.upstream)?
            }
            _ => body,
        };
        Ok(NativeCall {
            wire,
            model,
            requested,
            stream,
            body,
            headers,
            view,
            max_output,
        })
    }
}

/// The catalogue entry `name`, which the tenant may use and a provider of
/// the wire's kind serves.
fn resolve(models: TenantCatalogue<'_>, wire: Wire, name: &str) -> Result<Arc<Model>, ApiError> {
    let model = models.get(name).ok_or_else(|| {
        ApiError::new(
            Code::ModelNotFound,
            format!("the model `{name}` is not in the catalogue"),
        )
    })?;
    if model.provider.kind != wire.provider_kind() {
        return Err(ApiError::invalid(
            "model",
            format!(
                "the model `{name}` is served by the provider `{}` of kind `{}`; {} forwards only to providers of kind `{}` (use /v1/chat/completions for any model)",
                model.provider.id,
                model.provider.kind.as_str(),
                wire.route(),
                wire.provider_kind().as_str(),
            ),
        ));
    }
    Ok(model)
}

/// The Anthropic body with `model` set to the upstream's name: the one
/// change made to a forwarded body, and only when the catalogue id differs
/// from the upstream name. Every other byte is kept.
fn upstream_named(body: Bytes, upstream: &str) -> Result<Bytes, ApiError> {
    if let Some(renamed) = wire::replace_top_level_string(&body, "model", upstream) {
        return Ok(Bytes::from(renamed));
    }
    // `model` written with escapes: re-encode (key order may change).
    let mut value: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::new(Code::InvalidRequest, format!("malformed JSON: {e}")))?;
    value["model"] = Value::String(upstream.to_owned());
    serde_json::to_vec(&value)
        .map(Bytes::from)
        .map_err(|e| ApiError::internal("encoding the forwarded body", e))
}

/// Runs a native request through every stage, then forwards it.
pub async fn passthrough(
    state: &AppState,
    key: &ApiKey,
    request_id: &str,
    call: NativeCall,
) -> Result<NativeOutcome, ApiError> {
    let started = Instant::now();
    let tenant = admit(state, key)?;
    let risk = gate(state, key, &tenant.policy, &call.view, request_id).await?;
    let compliance = Arc::new(Compliance::new(
        &tenant.policy,
        &call.view,
        &call.body,
        &risk,
    ));
    if compliance.hold && call.stream {
        // The body is forwarded unchanged, so it cannot be turned into a
        // plain request the way the chat route does.
        return Err(ApiError::invalid(
            "stream",
            "the tenant policy holds this response for human review, and a held response cannot be streamed: send the request without streaming",
        ));
    }
    take_tier_caps(state, &tenant, &call.view).await?;
    let reservations = hold_tokens(state, key, &call)?;
    if tenant.policy.enforce_registry {
        let registered = state
            .store
            .read(registry::list)
            .map_err(|e| ApiError::internal("reading the sub-processor registry", e))?;
        if !registered.iter().any(|e| e.name == call.model.provider.id) {
            return Err(ApiError::new(
                Code::AllProvidersFailed,
                format!(
                    "the provider `{}` of `{}` is not in the sub-processor registry, and the tenant policy routes only to registered ones",
                    call.model.provider.id, call.requested
                ),
            ));
        }
    }
    let served = Served {
        request_id: request_id.to_owned(),
        key_id: key.id.clone(),
        tenant_id: key.tenant_id.clone(),
        model: call.model.clone(),
        requested: call.requested.clone(),
        chain: vec![call.requested.clone()],
        attempts: Vec::new(),
        started,
        risk,
        replaced_parts: 0,
        prompt_estimate: tokens::estimate_messages(&call.view.body["messages"]),
        truncation: None,
        compliance,
        retries: 0,
        in_flight: None,
        endpoint: call.wire.endpoint(),
    };
    let sent = match send_traced(state, &call).await {
        Ok(sent) => sent,
        Err(failure) => return failed(state, &served, failure),
    };
    if call.stream {
        let extensions = Extensions::new(state, &served, true).with_reservations(reservations);
        state
            .metrics
            .first_token(&call.requested, started.elapsed());
        let upstream: relay::UpstreamBytes = Box::pin(
            futures::stream::iter([Ok(sent.first)]).chain(
                sent.response
                    .bytes_stream()
                    .map(|r| r.map_err(|e| without_url(&e))),
            ),
        );
        return Ok(NativeOutcome::Stream(relay::relay(
            call.wire, upstream, served, extensions,
        )));
    }
    let body = match read_rest(sent, MAX_ANSWER).await {
        Ok(body) => body,
        Err(message) => return failed(state, &served, Failed::Broken(message)),
    };
    let Ok(answer) = serde_json::from_slice::<Value>(&body) else {
        return failed(
            state,
            &served,
            Failed::Broken("the answer is not JSON".into()),
        );
    };
    finish(state, &served, call.wire, body, answer, reservations).await
}

/// The tokens a native request reserves against its key's `tpmLimit` and
/// its model's own limits: the prompt as estimated plus the completion it
/// allows itself (Anthropic's `max_tokens`, Gemini's
/// `generationConfig.maxOutputTokens`, else the model's
/// `max_output_tokens`). The charge replaces them by the upstream's usage;
/// a failed request releases them.
fn hold_tokens(
    state: &AppState,
    key: &ApiKey,
    call: &NativeCall,
) -> Result<Vec<limits::Reservation>, ApiError> {
    let allowance = call
        .max_output
        .or(call.model.max_output_tokens.map(u64::from))
        .unwrap_or(0);
    let reserve = tokens::estimate_messages(&call.view.body["messages"]) + allowance;
    let model = walk::hold_model(state, &call.model, reserve)?;
    let key = walk::hold_key_tokens(state, key, reserve)?;
    Ok(model.into_iter().chain(key).collect())
}

/// Charges a whole answer; it leaves only after the charge committed (or,
/// held, goes to the review queue in the charge's transaction).
async fn finish(
    state: &AppState,
    served: &Served,
    wire: Wire,
    body: Bytes,
    answer: Value,
    reservations: Vec<limits::Reservation>,
) -> Result<NativeOutcome, ApiError> {
    let extensions = Extensions::new(state, served, false).with_reservations(reservations);
    let mut meter = Meter::new(extensions.keeps_output());
    meter.observe_answer(wire, &answer);
    let (prompt, completion, estimated) = meter.tokens(served.prompt_estimate);
    let output = meter.text.take().unwrap_or_default();
    if served.compliance.hold {
        let held = extensions
            .charge_held((prompt, completion), None, estimated, &output, answer)
            .await?;
        return Ok(NativeOutcome::Held(held));
    }
    let charged = extensions
        .charge(prompt, completion, estimated, true, &output, None)
        .await?;
    Ok(NativeOutcome::Complete {
        body,
        charged,
        level: served.risk.level,
    })
}

/// A successful upstream response, its first body chunk already here.
struct Sent {
    response: reqwest::Response,
    first: Bytes,
    deadline: Instant,
}

/// Why the upstream did not answer.
enum Failed {
    /// No connection, or nothing within the first-byte timeout.
    Unreachable(&'static str, String),
    /// An error status: relayed as it came, unless it is the provider's own
    /// credential or model problem (401, 403, 404).
    Status(u16, Bytes),
    /// A body that broke off or is not the protocol.
    Broken(String),
}

/// [`send`] in its client span (docs/observability.md): the upstream's
/// address, status and error type.
async fn send_traced(state: &AppState, call: &NativeCall) -> Result<Sent, Failed> {
    use opentelemetry::context::FutureExt as _;
    let span = AttemptSpan::start(call.wire.operation(), &call.model);
    let sent = send(state, call).with_context(span.context()).await;
    match &sent {
        Ok(_) => span.served(),
        Err(Failed::Status(status, _)) => span.failed(Some(*status), status.to_string()),
        Err(Failed::Unreachable(kind, _)) => span.failed(None, (*kind).to_owned()),
        Err(Failed::Broken(_)) => span.failed(None, "invalid_response".to_owned()),
    }
    sent
}

/// Sends the caller's body to the model's provider with the provider's
/// key, and waits for the first chunk within the first-byte timeout.
async fn send(state: &AppState, call: &NativeCall) -> Result<Sent, Failed> {
    let provider = &call.model.provider;
    let Some(base) = provider.base_url.as_ref() else {
        return Err(Failed::Broken("the provider has no base_url".into()));
    };
    let http = state.providers.http();
    let mut request = match call.wire {
        Wire::Anthropic => {
            let mut request = http.post(endpoint(base, &["messages"]));
            if !call.headers.iter().any(|(n, _)| *n == "anthropic-version") {
                request = request.header("anthropic-version", DEFAULT_ANTHROPIC_VERSION);
            }
            if let Some(key) = &provider.api_key {
                request = request.header("x-api-key", key.expose());
            }
            request
        }
        Wire::Gemini => {
            let url = crate::providers::gemini::endpoint(base, &call.model.upstream, call.stream);
            let mut request = http.post(url);
            if let Some(key) = &provider.api_key {
                request = request.header("x-goog-api-key", key.expose());
            }
            request
        }
    };
    for (name, value) in &call.headers {
        request = request.header(*name, value);
    }
    // The attempt's client span continues upstream (W3C trace context).
    if let Some(traceparent) = crate::traces::traceparent() {
        request = request.header("traceparent", traceparent);
    }
    // `Bytes` clones share the buffer: the body is held once.
    request = request
        .header("content-type", "application/json")
        .body(call.body.clone());
    let timeout = provider.first_byte_timeout;
    let deadline = Instant::now() + timeout;
    let mut response = match tokio::time::timeout(timeout, request.send()).await {
        Err(_) => {
            return Err(Failed::Unreachable(
                "timeout",
                "no response before the first-byte timeout".into(),
            ));
        }
        Ok(Err(e)) if e.is_connect() => {
            return Err(Failed::Unreachable(
                "connect_error",
                format!("cannot connect to the provider `{}`", provider.id),
            ));
        }
        Ok(Err(e)) => {
            return Err(Failed::Unreachable(
                "connect_error",
                format!("the request failed: {}", without_url(&e)),
            ));
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if !status.is_success() {
        let body = read_rest(
            Sent {
                response,
                first: Bytes::new(),
                deadline,
            },
            MAX_ERROR_BODY,
        )
        .await
        .unwrap_or_default();
        return Err(Failed::Status(status.as_u16(), body));
    }
    let left = deadline.saturating_duration_since(Instant::now());
    let first = match tokio::time::timeout(left, response.chunk()).await {
        Err(_) => {
            return Err(Failed::Unreachable(
                "timeout",
                "no first byte before the first-byte timeout".into(),
            ));
        }
        Ok(Err(e)) => {
            return Err(Failed::Broken(format!(
                "the body broke off: {}",
                without_url(&e)
            )));
        }
        Ok(Ok(first)) => first.unwrap_or_default(),
    };
    Ok(Sent {
        response,
        first,
        deadline,
    })
}

/// The rest of a body, up to `limit` bytes.
async fn read_rest(mut sent: Sent, limit: usize) -> Result<Bytes, String> {
    let mut body = bytes::BytesMut::from(&sent.first[..]);
    loop {
        let left = sent.deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left.max(Duration::from_secs(30)), sent.response.chunk()).await {
            Err(_) => return Err("the body did not arrive in time".into()),
            Ok(Err(e)) => return Err(format!("the body broke off: {}", without_url(&e))),
            Ok(Ok(None)) => return Ok(body.freeze()),
            Ok(Ok(Some(chunk))) => {
                if body.len() + chunk.len() > limit {
                    return Err(format!("the body exceeds {limit} bytes"));
                }
                body.extend_from_slice(&chunk);
            }
        }
    }
}

/// Counts a failed upstream call as chat does for a chain of one, and
/// answers it: the upstream's own refusal relayed, else 502.
fn failed(state: &AppState, served: &Served, failure: Failed) -> Result<NativeOutcome, ApiError> {
    let provider = &served.model.provider.id;
    let elapsed = served.started.elapsed();
    let (label, message) = match &failure {
        Failed::Unreachable(label, message) => ((*label).to_owned(), message.clone()),
        Failed::Status(status, body) => (status.to_string(), error_message(body, *status)),
        Failed::Broken(message) => ("invalid_response".to_owned(), message.clone()),
    };
    state.metrics.upstream(provider, &label, elapsed);
    tracing::info!(model = %served.requested, %provider, status = %label, "native upstream call failed");
    let relayed = match failure {
        Failed::Status(status, body) if !matches!(status, 401 | 403 | 404) => Some((status, body)),
        _ => None,
    };
    let final_refusal = relayed
        .as_ref()
        .is_some_and(|(status, _)| matches!(status, 400 | 413 | 422));
    if !final_refusal {
        let attempts = [Attempt {
            model: served.requested.clone(),
            provider: provider.clone(),
            status: label,
            latency_ms: elapsed.as_millis() as u64,
            message: message.clone(),
            deployment: format!("{}/{}", served.model.provider.id, served.model.upstream),
            retries: 0,
        }];
        state.metrics.exhausted();
        state.events.publish(Event::providers_exhausted(
            &served.tenant_id,
            &served.request_id,
            &served.chain,
            &attempts,
        ));
    }
    match relayed {
        Some((status, body)) => Ok(NativeOutcome::Refused { status, body }),
        None => Err(ApiError::new(
            Code::AllProvidersFailed,
            format!(
                "the provider `{provider}` of `{}` failed: {message}",
                served.requested
            ),
        )),
    }
}

/// The message of an upstream error body (`error.message` in both wires).
fn error_message(body: &[u8], status: u16) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("HTTP {status}"))
}
