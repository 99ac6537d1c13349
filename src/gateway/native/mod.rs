//! The native passthroughs: Anthropic's `POST /v1/messages`, Gemini's
//! generate-content and OpenAI's legacy `POST /v1/completions`, forwarded
//! to a provider of the same kind with the caller's body unchanged but for
//! the upstream's model name (docs/native.md, docs/completions.md).
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
//! One model, no fallback chain: the caller named one native model. Its
//! deployments of the wire's kind are walked as chat walks them
//! ([`walk::Walk`]: the router's order, retries, cooldown, the time
//! budget); one of another kind could not take the native body and is
//! skipped.

mod forward;
pub mod relay;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Map, Value};

use super::gate::GateInput;
use super::{
    Attempt, Compliance, Extensions, Served, Single, admit, gate, take_tier_caps, tokens, walk,
};
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::base::redact::without_url;
use crate::billing::Charged;
use crate::billing::limits;
use crate::catalogue::overlay::TenantCatalogue;
use crate::catalogue::{Capability, Model, ProviderKind};
use crate::compliance::registry::SubProcessor;
use crate::compliance::{Classification, Level};
use crate::events::Event;
use crate::gateway::Gateway;
use crate::providers::http::endpoint;
use crate::providers::sse::SseBody;
pub use crate::providers::wire::chat::ServiceFields;
use crate::providers::wire::chat::{self, SERVICE_FIELDS};
use crate::providers::wire::native::{Meter, Wire, replace_top_level_string};
use crate::providers::{Failure, UpstreamError, mock, vertex};
use crate::tenants::CompliancePolicy;
use forward::{Answer, Forward, Refusal};

/// Error bodies of the upstream are relayed up to this size.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// A whole answer above this size is refused.
const MAX_ANSWER: usize = 64 * 1024 * 1024;
/// The `anthropic-version` sent when the caller sent none.
const DEFAULT_ANTHROPIC_VERSION: &str = crate::providers::anthropic::API_VERSION;

/// A native request, parsed once; `body` is what goes upstream.
pub struct NativeCall {
    pub wire: Wire,
    /// The catalogue id the caller named.
    pub model: Arc<Model>,
    pub requested: String,
    pub stream: bool,
    /// The body as the caller sent it (a legacy completion's without the
    /// service fields).
    pub body: Bytes,
    /// The body (Anthropic, completions) renamed for each upstream name (of the model's
    /// deployments of the wire's kind) that differs from the caller's.
    renamed: Vec<(String, Bytes)>,
    /// `anthropic-version` and `anthropic-beta`, as the caller sent them.
    pub headers: Vec<(&'static str, String)>,
    /// The OpenAI-style messages the classifier and the caps read.
    pub view: Value,
    /// The compliance service fields (headers, or the body's own).
    pub service: ServiceFields,
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
    Stream(SseBody),
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
        mut body: Bytes,
        headers: Vec<(&'static str, String)>,
        mut service: ServiceFields,
    ) -> Result<NativeCall, ApiError> {
        let mut value = Value::Object(chat::object(&body)?);
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
        if matches!(wire, Wire::Completions | Wire::Responses) {
            body = strip_service_fields(wire, &mut value, body, &mut service)?;
        }
        let model = resolve(models, wire, &requested)?;
        let view = wire.classification_view(&value)?;
        let max_output = value["max_tokens"]
            .as_u64()
            .or_else(|| value["max_output_tokens"].as_u64())
            .or_else(|| value["generationConfig"]["maxOutputTokens"].as_u64());
        drop(value);
        let mut renamed: Vec<(String, Bytes)> = Vec::new();
        if wire != Wire::Gemini {
            for d in &model.deployments {
                if wire.serves(&d.provider, &d.upstream)
                    && d.upstream != requested
                    && !renamed.iter().any(|(name, _)| *name == d.upstream)
                {
                    renamed.push((d.upstream.clone(), upstream_named(&body, &d.upstream)?));
                }
            }
        }
        Ok(NativeCall {
            wire,
            model,
            requested,
            stream,
            body,
            renamed,
            headers,
            view,
            service,
            max_output,
        })
    }
}

/// Takes the service fields out of a legacy completion's body, as the chat
/// route does (body fields win over the `x-tollgate-*` headers), and
/// returns the body to forward: the caller's bytes when it had none,
/// re-encoded without them otherwise.
fn strip_service_fields(
    wire: Wire,
    value: &mut Value,
    body: Bytes,
    service: &mut ServiceFields,
) -> Result<Bytes, ApiError> {
    let Some(object) = value.as_object_mut() else {
        return Ok(body);
    };
    if !SERVICE_FIELDS.iter().any(|f| object.contains_key(*f)) {
        return Ok(body);
    }
    let from_body = chat::service_fields(object)?;
    *service = from_body.or(service);
    // A Responses request with `models` is translated, never forwarded
    // (gateway::responses decides).
    if object.remove("models").is_some() && wire == Wire::Completions {
        return Err(ApiError::invalid(
            "models",
            "/v1/completions takes one `model`: fallback chains are served on /v1/chat/completions",
        ));
    }
    // `auto_truncate` has nothing to truncate in a prompt: dropped.
    object.remove("auto_truncate");
    serde_json::to_vec(value)
        .map(Bytes::from)
        .map_err(|e| ApiError::internal("encoding the forwarded body", e))
}

/// The catalogue entry `name`, which the tenant may use and a provider of
/// the wire's kind serves (one of its deployments at least).
fn resolve(models: TenantCatalogue<'_>, wire: Wire, name: &str) -> Result<Arc<Model>, ApiError> {
    let model = models.get(name).ok_or_else(|| {
        ApiError::new(
            Code::ModelNotFound,
            format!("the model `{name}` is not in the catalogue"),
        )
    })?;
    crate::gateway::kind_fits(&model, false, wire.route())?;
    if wire == Wire::Completions
        && !(model.accepts(Capability::Text) && model.produces(Capability::Text))
    {
        let mut error = ApiError::new(
            Code::CapabilityUnsupported,
            format!("`{name}` cannot serve /v1/completions: it is not a text model"),
        );
        error.param = Some("model".into());
        return Err(error);
    }
    if !model
        .deployments
        .iter()
        .any(|d| wire.serves(&d.provider, &d.upstream))
    {
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
fn upstream_named(body: &Bytes, upstream: &str) -> Result<Bytes, ApiError> {
    if let Some(renamed) = replace_top_level_string(body, "model", upstream) {
        return Ok(Bytes::from(renamed));
    }
    // `model` written with escapes: re-encode (key order may change).
    let mut value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(Code::InvalidRequest, format!("malformed JSON: {e}")))?;
    value["model"] = Value::String(upstream.to_owned());
    serde_json::to_vec(&value)
        .map(Bytes::from)
        .map_err(|e| ApiError::internal("encoding the forwarded body", e))
}

/// Runs a native request through every stage, then forwards it: admit,
/// classify and gate, the tier caps and token limits, the registry, then
/// [`walk_deployments`] (route, call, charge, respond).
pub async fn passthrough(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    call: NativeCall,
) -> Result<NativeOutcome, ApiError> {
    let started = Instant::now();
    let prompt = tokens::estimate_messages(&call.view);
    let output = super::expected_output(call.max_output, &call.model);
    let admitted = admit(
        gateway,
        key,
        super::estimated_cost(&call.model, prompt, output),
    )?;
    let policy = &admitted.tenant.policy;
    let (risk, compliance) = gate_call(gateway, key, request_id, &call, policy).await?;
    take_tier_caps(gateway, &admitted, &call.view).await?;
    let reservations = hold_tokens(gateway, key, &call, prompt)?;
    let registered = super::registered_providers(gateway, policy)?;
    let single = Single {
        key,
        request_id,
        requested: &call.requested,
        started,
        endpoint: call.wire.endpoint(),
        risk,
        compliance,
        admission: admitted.hold,
        prompt_estimate: prompt,
    };
    walk_deployments(gateway, &call, single, registered.as_deref(), reservations).await
}

/// The classify-and-gate stage over the OpenAI-style view of the native
/// messages, and the request's compliance records.
async fn gate_call(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    call: &NativeCall,
    policy: &CompliancePolicy,
) -> Result<(Classification, Arc<Compliance>), ApiError> {
    let input = GateInput {
        messages: &call.view,
        service: &call.service,
    };
    let risk = gate(gateway, key, policy, &input, request_id).await?;
    let sent = String::from_utf8_lossy(&call.body);
    let compliance = Arc::new(Compliance::new(policy, &call.service, &sent, &risk));
    if compliance.hold && call.stream {
        // The body is forwarded unchanged, so it cannot be turned into a
        // plain request the way the chat route does.
        return Err(ApiError::invalid(
            "stream",
            "the tenant policy holds this response for human review, and a held response cannot be streamed: send the request without streaming",
        ));
    }
    Ok((risk, compliance))
}

/// The route and call stages (the model's deployments walked, each attempt
/// a [`Forward`]), then the charge and respond stages of what served. An
/// upstream's refusal of the request itself (400, 413, 422) is relayed as
/// final; every deployment failing ends in [`exhausted`].
async fn walk_deployments(
    gateway: &Gateway,
    call: &NativeCall,
    single: Single<'_>,
    registered: Option<&[SubProcessor]>,
    reservations: Vec<limits::Reservation>,
) -> Result<NativeOutcome, ApiError> {
    let walk = walk::Walk {
        gateway,
        tenant_id: &single.key.tenant_id,
        model: &call.model,
        name: &call.requested,
        registered,
    };
    let mut attempts = Vec::new();
    match walk.run(&Forward { gateway, call }, &mut attempts).await {
        walk::Walked::Served {
            reply,
            view,
            retries,
            in_flight,
        } => {
            let served = single.served(view, attempts, retries, in_flight);
            respond(gateway, call.wire, served, reply, reservations).await
        }
        walk::Walked::Refused { error, .. } => Ok(NativeOutcome::Refused {
            status: error.status,
            body: error.body,
        }),
        walk::Walked::Failed { last } => exhausted(
            gateway,
            single.key,
            single.request_id,
            call,
            &attempts,
            last,
        ),
    }
}

/// The respond stage of a served answer: a stream is relayed and charged
/// at its end; a whole answer is charged before it leaves ([`finish`]).
async fn respond(
    gateway: &Gateway,
    wire: Wire,
    served: Served,
    answer: Answer,
    reservations: Vec<limits::Reservation>,
) -> Result<NativeOutcome, ApiError> {
    let streamed = matches!(answer, Answer::Stream(_));
    let extensions = Extensions::new(gateway, &served, streamed).with_reservations(reservations);
    match answer {
        Answer::Stream(upstream) => {
            gateway
                .metrics
                .first_token(&served.requested, served.started.elapsed());
            Ok(NativeOutcome::Stream(relay::relay(
                wire, upstream, served, extensions,
            )))
        }
        Answer::Whole(body, answer) => finish(extensions, &served, wire, body, answer).await,
    }
}

/// The tokens a native request reserves against its key's `tpmLimit` and
/// its model's own limits: the prompt as estimated (`prompt`) plus the
/// completion it allows itself (Anthropic's `max_tokens`, Gemini's
/// `generationConfig.maxOutputTokens`, else the model's
/// `max_output_tokens`). The charge replaces them by the upstream's usage;
/// a failed request releases them.
fn hold_tokens(
    gateway: &Gateway,
    key: &ApiKey,
    call: &NativeCall,
    prompt: u64,
) -> Result<Vec<limits::Reservation>, ApiError> {
    let allowance = call
        .max_output
        .or(call.model.max_output_tokens.map(u64::from))
        .unwrap_or(0);
    let reserve = prompt + allowance;
    let model = walk::hold_model(gateway, &call.model, reserve)?;
    let key = walk::hold_key_tokens(gateway, key, reserve)?;
    Ok(model.into_iter().chain(key).collect())
}

/// Charges a whole answer; it leaves only after the charge committed (or,
/// held, goes to the review queue in the charge's transaction).
async fn finish(
    extensions: Extensions,
    served: &Served,
    wire: Wire,
    body: Bytes,
    answer: Value,
) -> Result<NativeOutcome, ApiError> {
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

/// Every deployment failed (or was skipped): counted and announced as a
/// one-model chain on the chat route is, and answered with the last
/// upstream error relayed as sent, unless it was the provider's own
/// credential or model problem (401, 403, 404) or no upstream answered:
/// then 502.
fn exhausted(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    call: &NativeCall,
    attempts: &[Attempt],
    last: Option<(Refusal, Arc<Model>)>,
) -> Result<NativeOutcome, ApiError> {
    tracing::info!(model = %call.requested, attempts = attempts.len(), "every deployment of the native model failed");
    gateway.metrics.exhausted();
    gateway.events.publish(Event::providers_exhausted(
        &key.tenant_id,
        request_id,
        std::slice::from_ref(&call.requested),
        attempts,
    ));
    if let Some((refusal, _)) = last
        && refusal.status != 0
        && !matches!(refusal.status, 401 | 403 | 404)
    {
        return Ok(NativeOutcome::Refused {
            status: refusal.status,
            body: refusal.body,
        });
    }
    let summary: Vec<String> = attempts
        .iter()
        .map(|a| format!("{} ({}: {})", a.deployment, a.status, a.message))
        .collect();
    Err(ApiError::new(
        Code::AllProvidersFailed,
        format!(
            "every deployment of `{}` failed: {}",
            call.requested,
            summary.join("; ")
        ),
    ))
}

/// The message of an upstream error body (`error.message` in both wires).
fn error_message(body: &[u8], status: u16) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("HTTP {status}"))
}
