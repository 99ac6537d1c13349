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

pub mod relay;
pub mod wire;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Map, Value};

use super::gate::GateInput;
pub use super::request::ServiceFields;
use super::{Attempt, Compliance, Extensions, Served, admit, gate, take_tier_caps, tokens, walk};
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::billing::Charged;
use crate::billing::limits;
use crate::catalogue::overlay::TenantCatalogue;
use crate::catalogue::{Capability, Model, ProviderKind};
use crate::compliance::Level;
use crate::events::Event;
use crate::gateway::Gateway;
use crate::providers::http::{endpoint, without_url};
use crate::providers::{Failure, UpstreamError, mock, vertex};
use wire::{Meter, Wire};

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
        mut body: Bytes,
        headers: Vec<(&'static str, String)>,
        mut service: ServiceFields,
    ) -> Result<NativeCall, ApiError> {
        let mut value: Value = serde_json::from_slice(&body)
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
    if !super::request::SERVICE_FIELDS
        .iter()
        .any(|f| object.contains_key(*f))
    {
        return Ok(body);
    }
    let mut text = |field: &str| match object.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ApiError::invalid(
            field,
            format!("`{field}` must be a string"),
        )),
    };
    if let Some(purpose) = text("purpose")? {
        service.purpose = Some(purpose);
    }
    if let Some(consent) = text("user_consent_id")? {
        service.user_consent_id = Some(consent);
    }
    if let Some(user) = text("end_user_id")? {
        service.end_user_id = Some(user);
    }
    match object.remove("deployer_context") {
        None | Some(Value::Null) => {}
        Some(context @ Value::Object(_)) => service.deployer_context = Some(context),
        Some(_) => {
            return Err(ApiError::invalid(
                "deployer_context",
                "`deployer_context` must be an object",
            ));
        }
    }
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
    if let Some(renamed) = wire::replace_top_level_string(body, "model", upstream) {
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

/// Runs a native request through every stage, then forwards it.
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
    let tenant = &admitted.tenant;
    let input = GateInput {
        messages: &call.view,
        service: &call.service,
    };
    let risk = gate(gateway, key, &tenant.policy, &input, request_id).await?;
    let sent = String::from_utf8_lossy(&call.body);
    let compliance = Arc::new(Compliance::new(&tenant.policy, &call.service, &sent, &risk));
    if compliance.hold && call.stream {
        // The body is forwarded unchanged, so it cannot be turned into a
        // plain request the way the chat route does.
        return Err(ApiError::invalid(
            "stream",
            "the tenant policy holds this response for human review, and a held response cannot be streamed: send the request without streaming",
        ));
    }
    take_tier_caps(gateway, &admitted, &call.view).await?;
    let reservations = hold_tokens(gateway, key, &call)?;
    let registered = super::registered_providers(gateway, &tenant.policy)?;
    let walk = walk::Walk {
        gateway,
        tenant_id: &key.tenant_id,
        model: &call.model,
        name: &call.requested,
        registered: registered.as_deref(),
    };
    let mut attempts = Vec::new();
    let forward = Forward {
        gateway,
        call: &call,
    };
    let (answer, view, retries, in_flight) = match walk.run(&forward, &mut attempts).await {
        walk::Walked::Served {
            reply,
            view,
            retries,
            in_flight,
        } => (reply, view, retries, in_flight),
        // The request itself was refused (400, 413, 422): relayed, final.
        walk::Walked::Refused { error, .. } => {
            return Ok(NativeOutcome::Refused {
                status: error.status,
                body: error.body,
            });
        }
        walk::Walked::Failed { last } => {
            return exhausted(gateway, key, request_id, &call, &attempts, last);
        }
    };
    let served = Served {
        request_id: request_id.to_owned(),
        key_id: key.id.clone(),
        tenant_id: key.tenant_id.clone(),
        model: view,
        requested: call.requested.clone(),
        chain: vec![call.requested.clone()],
        attempts,
        started,
        risk,
        replaced_parts: 0,
        prompt_estimate: tokens::estimate_messages(&call.view),
        truncation: None,
        compliance,
        retries,
        in_flight: Some(Arc::new(in_flight)),
        endpoint: call.wire.endpoint(),
        admission: admitted.hold,
    };
    match answer {
        Answer::Stream(upstream) => {
            let extensions =
                Extensions::new(gateway, &served, true).with_reservations(reservations);
            gateway
                .metrics
                .first_token(&call.requested, started.elapsed());
            Ok(NativeOutcome::Stream(relay::relay(
                call.wire, upstream, served, extensions,
            )))
        }
        Answer::Whole(body, answer) => {
            finish(gateway, &served, call.wire, body, answer, reservations).await
        }
    }
}

/// The tokens a native request reserves against its key's `tpmLimit` and
/// its model's own limits: the prompt as estimated plus the completion it
/// allows itself (Anthropic's `max_tokens`, Gemini's
/// `generationConfig.maxOutputTokens`, else the model's
/// `max_output_tokens`). The charge replaces them by the upstream's usage;
/// a failed request releases them.
fn hold_tokens(
    gateway: &Gateway,
    key: &ApiKey,
    call: &NativeCall,
) -> Result<Vec<limits::Reservation>, ApiError> {
    let allowance = call
        .max_output
        .or(call.model.max_output_tokens.map(u64::from))
        .unwrap_or(0);
    let reserve = tokens::estimate_messages(&call.view) + allowance;
    let model = walk::hold_model(gateway, &call.model, reserve)?;
    let key = walk::hold_key_tokens(gateway, key, reserve)?;
    Ok(model.into_iter().chain(key).collect())
}

/// Charges a whole answer; it leaves only after the charge committed (or,
/// held, goes to the review queue in the charge's transaction).
async fn finish(
    gateway: &Gateway,
    served: &Served,
    wire: Wire,
    body: Bytes,
    answer: Value,
    reservations: Vec<limits::Reservation>,
) -> Result<NativeOutcome, ApiError> {
    let extensions = Extensions::new(gateway, served, false).with_reservations(reservations);
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

/// One attempt of a native request: its body to one deployment of the
/// wire's kind, with that provider's key.
struct Forward<'a> {
    gateway: &'a Gateway,
    call: &'a NativeCall,
}

/// A served attempt: a stream at its first chunk, or a whole answer.
enum Answer {
    Stream(relay::UpstreamBytes),
    Whole(Bytes, Value),
}

/// A failed attempt: the upstream's error, and the status and body it
/// answered (relayed as sent when the walk ends on it).
struct Refusal {
    error: UpstreamError,
    status: u16,
    body: Bytes,
}

impl AsRef<UpstreamError> for Refusal {
    fn as_ref(&self) -> &UpstreamError {
        &self.error
    }
}

impl From<UpstreamError> for Refusal {
    /// A failure without an upstream answer (nothing to relay).
    fn from(error: UpstreamError) -> Refusal {
        Refusal {
            error,
            status: 0,
            body: Bytes::new(),
        }
    }
}

impl walk::Call for Forward<'_> {
    type Reply = Answer;
    type Error = Refusal;

    fn operation(&self) -> &'static str {
        self.call.wire.operation()
    }

    fn unfit(&self, deployment: &Model) -> Option<(&'static str, String)> {
        let wire = self.call.wire;
        (!wire.serves(&deployment.provider, &deployment.upstream)).then(|| {
            (
                "wrong_kind",
                format!(
                    "the provider `{}` is of kind `{}`; {} forwards only to providers of kind `{}`",
                    deployment.provider.id,
                    deployment.provider.kind.as_str(),
                    wire.route(),
                    wire.provider_kind().as_str()
                ),
            )
        })
    }

    async fn attempt(&self, deployment: Arc<Model>) -> Result<Answer, Refusal> {
        if deployment.provider.kind == ProviderKind::Mock {
            return mocked(self.call, &deployment);
        }
        let sent = send(self.gateway, self.call, &deployment).await?;
        if self.call.stream {
            return Ok(Answer::Stream(Box::pin(
                futures::stream::iter([Ok(sent.first)]).chain(
                    sent.response
                        .bytes_stream()
                        .map(|r| r.map_err(|e| without_url(&e))),
                ),
            )));
        }
        // A whole answer is read within the attempt: until it is here,
        // nothing reached the caller and another attempt may serve.
        let body = read_rest(sent, MAX_ANSWER)
            .await
            .map_err(|message| UpstreamError::new(Failure::Garbage, message))?;
        let answer = serde_json::from_slice::<Value>(&body)
            .map_err(|_| UpstreamError::new(Failure::Garbage, "the answer is not JSON"))?;
        Ok(Answer::Whole(body, answer))
    }
}

/// A legacy completion answered by the built-in mock provider, in the
/// completions shape (`providers::mock::completion`).
fn mocked(call: &NativeCall, deployment: &Model) -> Result<Answer, Refusal> {
    let body = forwarded_body(call, deployment);
    let request: Value = serde_json::from_slice(body)
        .map_err(|_| UpstreamError::new(Failure::Garbage, "the body is not JSON"))?;
    let chunks =
        mock::completion(&deployment.upstream, &request, call.stream).map_err(|error| {
            let status = match error.failure {
                Failure::Status(status) => status,
                _ => 0,
            };
            let body = serde_json::json!({ "error": { "message": error.message, "type": "invalid_request_error", "code": null, "param": null } });
            Refusal {
                error,
                status,
                body: Bytes::from(body.to_string()),
            }
        })?;
    if call.stream {
        return Ok(Answer::Stream(Box::pin(futures::stream::iter(
            chunks.into_iter().map(Ok),
        ))));
    }
    let body = chunks.concat();
    let answer = serde_json::from_slice::<Value>(&body)
        .map_err(|_| UpstreamError::new(Failure::Garbage, "the answer is not JSON"))?;
    Ok(Answer::Whole(Bytes::from(body), answer))
}

/// The body sent to `deployment`: renamed for its upstream name if needed.
fn forwarded_body<'a>(call: &'a NativeCall, deployment: &Model) -> &'a Bytes {
    call.renamed
        .iter()
        .find(|(name, _)| *name == deployment.upstream)
        .map_or(&call.body, |(_, body)| body)
}

/// The Messages body as Vertex AI's `:rawPredict` takes it:
/// `anthropic_version` set to Vertex's, `model` removed, the rest as sent.
fn vertex_anthropic_body(body: &Bytes) -> Result<Bytes, Refusal> {
    let mut value: Map<String, Value> = serde_json::from_slice(body)
        .map_err(|_| UpstreamError::new(Failure::Garbage, "the body is not a JSON object"))?;
    value.remove("model");
    value.insert(
        "anthropic_version".into(),
        Value::String(vertex::ANTHROPIC_VERSION.into()),
    );
    Ok(Bytes::from(Value::Object(value).to_string()))
}

/// A successful upstream response, its first body chunk already here.
struct Sent {
    response: reqwest::Response,
    first: Bytes,
    deadline: Instant,
}

/// Sends the caller's body to `deployment`'s provider with the provider's
/// key, and waits for the first chunk within the first-byte timeout.
async fn send(gateway: &Gateway, call: &NativeCall, deployment: &Model) -> Result<Sent, Refusal> {
    let provider = &deployment.provider;
    let Some(base) = provider.base_url.as_ref() else {
        return Err(
            UpstreamError::new(Failure::Unsupported, "the provider has no base_url").into(),
        );
    };
    let http = gateway.providers.http();
    // Vertex's Anthropic models take the Messages body with a changed
    // version field and no model (the path names it).
    let mut body = forwarded_body(call, deployment).clone();
    let mut request = match call.wire {
        Wire::Anthropic if provider.kind == ProviderKind::Vertex => {
            let (base, vertex) = vertex::settings(provider)?;
            let action = if call.stream {
                "streamRawPredict"
            } else {
                "rawPredict"
            };
            body = vertex_anthropic_body(&call.body)?;
            let url = vertex::model_url(base, vertex, &deployment.upstream, action);
            vertex::post(http, provider, vertex, url).await?
        }
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
        // Vertex AI: the same body at the publisher's URL, with a token.
        Wire::Gemini if provider.kind == ProviderKind::Vertex => {
            let (base, vertex) = vertex::settings(provider)?;
            let action = if call.stream {
                "streamGenerateContent"
            } else {
                "generateContent"
            };
            let mut url = vertex::model_url(base, vertex, &deployment.upstream, action);
            if call.stream {
                url.set_query(Some("alt=sse"));
            }
            vertex::post(http, provider, vertex, url).await?
        }
        Wire::Gemini => {
            let url = crate::providers::gemini::endpoint(base, &deployment.upstream, call.stream);
            let mut request = http.post(url);
            if let Some(key) = &provider.api_key {
                request = request.header("x-goog-api-key", key.expose());
            }
            request
        }
        Wire::Completions | Wire::Responses => {
            let path = if call.wire == Wire::Completions {
                "completions"
            } else {
                "responses"
            };
            let mut request = http.post(endpoint(base, &[path]));
            if let Some(key) = &provider.api_key {
                request = request.bearer_auth(key.expose());
            }
            request
        }
    };
    for (name, value) in &call.headers {
        // Vertex takes the version in the body only.
        if provider.kind == ProviderKind::Vertex && *name == "anthropic-version" {
            continue;
        }
        request = request.header(*name, value);
    }
    // The attempt's client span continues upstream (W3C trace context).
    if let Some(traceparent) = crate::traces::traceparent() {
        request = request.header("traceparent", traceparent);
    }
    // `Bytes` clones share the buffer: the body is held once, whatever
    // the number of attempts.
    request = request
        .header("content-type", "application/json")
        .body(body);
    let timeout = provider.first_byte_timeout;
    let deadline = Instant::now() + timeout;
    let mut response = match tokio::time::timeout(timeout, request.send()).await {
        Err(_) => {
            return Err(UpstreamError::new(
                Failure::Timeout,
                "no response before the first-byte timeout",
            )
            .into());
        }
        Ok(Err(e)) if e.is_connect() => {
            return Err(UpstreamError::new(
                Failure::Connect,
                format!("cannot connect to the provider `{}`", provider.id),
            )
            .into());
        }
        Ok(Err(e)) => {
            return Err(UpstreamError::new(
                Failure::Connect,
                format!("the request failed: {}", without_url(&e)),
            )
            .into());
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if !status.is_success() {
        let retry_after = crate::providers::http::retry_after(response.headers());
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
        let status = status.as_u16();
        let mut error = UpstreamError::new(Failure::Status(status), error_message(&body, status));
        error.retry_after = retry_after;
        return Err(Refusal {
            error,
            status,
            body,
        });
    }
    let left = deadline.saturating_duration_since(Instant::now());
    let first = match tokio::time::timeout(left, response.chunk()).await {
        Err(_) => {
            return Err(UpstreamError::new(
                Failure::Timeout,
                "no first byte before the first-byte timeout",
            )
            .into());
        }
        Ok(Err(e)) => {
            return Err(UpstreamError::new(
                Failure::Garbage,
                format!("the body broke off: {}", without_url(&e)),
            )
            .into());
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
