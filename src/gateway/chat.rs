//! The chat adapter: `POST /v1/chat/completions` (and the routes
//! translated into chat: `/v1/messages` on a non-Anthropic model,
//! `/v1/responses` off OpenAI's own API) over the stages: admit, classify
//! and gate, then the fallback walk over the chain (route and call), the
//! charge, and the answer.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use serde_json::{Value, json};

use super::gate::{Compliance, GateInput};
use super::output::Output;
use super::walk::{ChatCall, Walk, Walked, completion_allowance, reserve_key_tokens};
use super::{
    Attempt, ChatOutcome, Extensions, Gateway, Served, admit, estimated_cost, expected_output,
    gate, kind_fits, multimodal, registered_providers, relay_refusal, stream, take_tier_caps,
    tokens, truncate,
};
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::base::time::now_ms;
use crate::billing::ledger::CreditHold;
use crate::billing::limits;
use crate::catalogue::Endpoint;
use crate::catalogue::Model;
use crate::compliance::{Classification, registry};
use crate::events::Event;
use crate::pii;
use crate::providers::wire;
use crate::providers::wire::chat::ChatRequest;
use crate::providers::{ChunkStream, Failure, Reply, UpstreamError};
use crate::routing::AttemptStatus;

pub async fn chat_completions(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    request: ChatRequest,
    raw: &[u8],
) -> Result<ChatOutcome, ApiError> {
    chat_on(gateway, key, request_id, request, raw, Endpoint::Chat).await
}

/// The chat pipeline for a request that came in on `endpoint` (chat, or a
/// route translated into chat: `/v1/messages` on a non-Anthropic model,
/// `/v1/responses` off OpenAI's own API): every stage of the chat route,
/// its usage record carrying `endpoint`. `raw` is the body as the caller
/// sent it (for the logs).
pub async fn chat_on(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    mut request: ChatRequest,
    raw: &[u8],
    endpoint: Endpoint,
) -> Result<ChatOutcome, ApiError> {
    let started = Instant::now();
    chain_fits(gateway, key, &request.chain, endpoint)?;
    let admitted = admit(gateway, key, chat_estimate(gateway, key, &request))?;
    let tenant = &admitted.tenant;
    let risk = gate(
        gateway,
        key,
        &tenant.policy,
        &GateInput::chat(&request),
        request_id,
    )
    .await?;
    let sent = String::from_utf8_lossy(raw);
    let compliance = Arc::new(Compliance::new(
        &tenant.policy,
        &request.service,
        &sent,
        &risk,
    ));
    if compliance.hold && request.stream {
        // A held answer is shown only once approved: there is nothing to
        // stream to the caller, so the upstream is asked for the whole.
        request.stream = false;
        request.body.insert("stream".into(), Value::Bool(false));
        request.body.remove("stream_options");
    }
    take_tier_caps(gateway, &admitted, &request.body["messages"]).await?;
    let key_reservation = reserve_key_tokens(gateway, key, &request)?;
    // `upstream` mode: the provider sees placeholders; the answer gets the
    // values back in `respond`, before anything else reads it.
    let upstream_pii = compliance.upstream_pii().map(|mut session| {
        if let Some(messages) = request.body.get_mut("messages") {
            session.redact_json(messages);
        }
        session
    });
    let registered = registered_providers(gateway, &tenant.policy)?;
    let run = ChatRun {
        gateway,
        key,
        request_id,
        request: &request,
        started,
        risk,
        compliance,
        admission: &admitted.hold,
        upstream_pii,
        endpoint,
    };
    run.walk_chain(registered.as_deref(), key_reservation).await
}

/// The model's own request and token limits, for `reserve` tokens. A
/// refusal is recorded as the model's attempt and kept in `limited` (the
/// answer when every model of the chain is at its limit): `None` then.
fn model_admission(
    gateway: &Gateway,
    model: &Model,
    name: &str,
    reserve: u64,
    attempts: &mut Vec<Attempt>,
    limited: &mut Option<ApiError>,
) -> Option<Option<limits::Reservation>> {
    match gateway.model_limits.admit(
        &model.id,
        model.rpm_limit,
        model.tpm_limit,
        reserve,
        now_ms(),
    ) {
        Ok(reservation) => Some(reservation),
        Err(refusal) => {
            attempts.push(Attempt::of_model(
                name,
                AttemptStatus::ModelRateLimited,
                refusal.message.clone(),
            ));
            let mut error = ApiError::new(Code::ModelRateLimitExceeded, refusal.message);
            error.retry_after = Some(refusal.retry_after_seconds as u64);
            limited.get_or_insert(error);
            None
        }
    }
}

/// The admit stage's check of a chain: some model of it is in the
/// tenant's catalogue (404 `model_not_found` otherwise), and none is an
/// embedding model.
fn chain_fits(
    gateway: &Gateway,
    key: &ApiKey,
    chain: &[String],
    endpoint: Endpoint,
) -> Result<(), ApiError> {
    let route = match endpoint {
        Endpoint::Responses => "/v1/responses",
        Endpoint::Messages => "/v1/messages",
        _ => "/v1/chat/completions",
    };
    if !chain
        .iter()
        .any(|m| gateway.catalogue.get_for(&key.tenant_id, m).is_some())
    {
        return Err(ApiError::new(
            Code::ModelNotFound,
            format!(
                "none of the requested models is in the catalogue: {}",
                chain.join(", ")
            ),
        ));
    }
    for model in chain
        .iter()
        .filter_map(|m| gateway.catalogue.get_for(&key.tenant_id, m))
    {
        kind_fits(&model, false, route)?;
    }
    Ok(())
}

/// One chat request past the gate: what its route, call and respond
/// stages share.
struct ChatRun<'a> {
    gateway: &'a Gateway,
    key: &'a ApiKey,
    request_id: &'a str,
    request: &'a ChatRequest,
    started: Instant,
    risk: Classification,
    compliance: Arc<Compliance>,
    /// What admission reserved; the charge settles it.
    admission: &'a CreditHold,
    /// The request's redaction in `upstream` mode, to restore the answer.
    upstream_pii: Option<pii::Session>,
    endpoint: Endpoint,
}

impl ChatRun<'_> {
    /// The route and call stages: each model of the chain in order, a
    /// later one only after a retryable failure of the one before; within
    /// a model, the walk over its deployments. The first served answer
    /// goes to [`ChatRun::respond`].
    async fn walk_chain(
        &self,
        registered: Option<&[registry::SubProcessor]>,
        key_reservation: Option<limits::Reservation>,
    ) -> Result<ChatOutcome, ApiError> {
        let (gateway, key) = (self.gateway, self.key);
        let mut attempts: Vec<Attempt> = Vec::new();
        let mut limited: Option<ApiError> = None;
        for name in &self.request.chain {
            let Some(model) = gateway.catalogue.get_for(&key.tenant_id, name) else {
                attempts.push(Attempt::of_model(
                    name,
                    AttemptStatus::UnknownModel,
                    format!("`{name}` is not in the catalogue"),
                ));
                continue;
            };
            let (body, replaced_parts, truncation) = prepare(self.request, &model);
            let prompt_estimate = tokens::estimate_messages(&body["messages"]);
            let reserve = prompt_estimate + completion_allowance(&body, &model);
            let Some(reservation) =
                model_admission(gateway, &model, name, reserve, &mut attempts, &mut limited)
            else {
                continue;
            };
            let walk = Walk {
                gateway,
                tenant_id: &key.tenant_id,
                model: &model,
                name,
                registered,
            };
            let call = ChatCall {
                providers: &gateway.providers,
                body,
                stream: self.request.stream,
            };
            match walk.run(&call, &mut attempts).await {
                Walked::Served {
                    reply,
                    view,
                    retries,
                    in_flight,
                } => {
                    let served = Served {
                        request_id: self.request_id.to_owned(),
                        key_id: key.id.clone(),
                        tenant_id: key.tenant_id.clone(),
                        model: view,
                        requested: name.clone(),
                        chain: self.request.chain.clone(),
                        attempts,
                        started: self.started,
                        risk: self.risk.clone(),
                        replaced_parts,
                        prompt_estimate,
                        truncation,
                        compliance: self.compliance.clone(),
                        retries,
                        in_flight: Some(Arc::new(in_flight)),
                        endpoint: self.endpoint,
                        admission: self.admission.clone(),
                    };
                    let reservations = reservation.into_iter().chain(key_reservation).collect();
                    return self.respond(reply, served, reservations).await;
                }
                Walked::Refused { error, view } => return Err(relay_refusal(&view, &error)),
                Walked::Failed { .. } => {}
            }
        }
        Err(self.exhausted(&attempts, limited))
    }

    /// The charge and respond stages of a served answer: a whole one is
    /// charged before it leaves ([`finish`]); a stream is relayed and
    /// charged at its end.
    async fn respond(
        &self,
        reply: Reply,
        served: Served,
        reservations: Vec<limits::Reservation>,
    ) -> Result<ChatOutcome, ApiError> {
        match reply {
            Reply::Complete(mut completion) => {
                if let Some(session) = &self.upstream_pii {
                    session.restore_json(&mut completion["choices"]);
                }
                finish(self.gateway, completion, &served, reservations).await
            }
            Reply::Stream(chunks) => {
                let chunks = match &self.upstream_pii {
                    Some(session) if session.issued() => {
                        pii::restore_stream(chunks, session.table())
                    }
                    _ => chunks,
                };
                let model = served.requested.clone();
                self.gateway
                    .metrics
                    .first_token(&model, self.started.elapsed());
                let extensions =
                    Extensions::new(self.gateway, &served, true).with_reservations(reservations);
                Ok(ChatOutcome::Stream {
                    body: stream::relay(chunks, served, extensions),
                    model,
                })
            }
        }
    }

    /// The refusal once no model of the chain served: the first model's
    /// own limit when every model was at its limit (or unknown), else 502
    /// `all_providers_failed` with each attempt, counted and published.
    fn exhausted(&self, attempts: &[Attempt], limited: Option<ApiError>) -> ApiError {
        if let Some(error) = limited
            && attempts.iter().all(|a| a.status.before_routing())
        {
            // Nothing failed upstream: every model was at its own limit.
            return error;
        }
        let chain = &self.request.chain;
        let summary: Vec<String> = attempts
            .iter()
            .map(|a| format!("{} ({}: {})", a.model, a.status, a.message))
            .collect();
        tracing::warn!(?chain, "every model of the chain failed");
        self.gateway.metrics.exhausted();
        self.gateway.events.publish(Event::providers_exhausted(
            &self.key.tenant_id,
            self.request_id,
            chain,
            attempts,
        ));
        ApiError::new(
            Code::AllProvidersFailed,
            format!("every model of the chain failed: {}", summary.join("; ")),
        )
    }
}

/// A chat request's estimate: the most any model of its chain could cost
/// (a fallback may serve it), times its `n` choices.
fn chat_estimate(gateway: &Gateway, key: &ApiKey, request: &ChatRequest) -> u64 {
    let prompt = tokens::estimate_messages(&request.body["messages"]);
    let allowed = request
        .body
        .get("max_tokens")
        .and_then(Value::as_u64)
        .or_else(|| {
            request
                .body
                .get("max_completion_tokens")
                .and_then(Value::as_u64)
        });
    let choices = request
        .body
        .get("n")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1);
    request
        .chain
        .iter()
        .filter_map(|m| gateway.catalogue.get_for(&key.tenant_id, m))
        .map(|model| {
            let output = expected_output(allowed, &model).saturating_mul(choices);
            estimated_cost(&model, prompt, output)
        })
        .max()
        .unwrap_or(0)
}

/// The body sent for one model: the caller's fields, the upstream's model
/// name, the messages adapted to the model's capabilities and, with
/// `auto_truncate`, to its context window.
fn prepare(request: &ChatRequest, model: &Model) -> (Value, usize, Option<truncate::Receipt>) {
    let mut body = Value::Object(request.body.clone());
    body["model"] = Value::String(model.upstream.clone());
    // Ask for usage in the stream (billing needs it); the caller's own
    // stream_options, if any, are kept.
    if request.stream && body.get("stream_options").is_none_or(Value::is_null) {
        body["stream_options"] = json!({ "include_usage": true });
    }
    let (mut messages, replaced) = multimodal::adapt(&body["messages"], model);
    let truncation = if request.auto_truncate {
        let reserve = body["max_tokens"]
            .as_u64()
            .or_else(|| body["max_completion_tokens"].as_u64())
            .unwrap_or(0);
        truncate::fit(&mut messages, model.context_window, reserve)
    } else {
        None
    };
    body["messages"] = messages;
    (body, replaced, truncation)
}

/// Waits for a stream's first chunk within the provider's first-byte
/// timeout: a stream that fails before it is a failed attempt.
pub(crate) async fn first_chunk(
    mut chunks: ChunkStream,
    model: &Model,
) -> Result<Reply, UpstreamError> {
    match tokio::time::timeout(model.provider.first_byte_timeout, chunks.next()).await {
        Err(_) => Err(UpstreamError::new(
            Failure::Timeout,
            "no first chunk before the first-byte timeout",
        )),
        Ok(None) => Err(UpstreamError::new(
            Failure::Garbage,
            "the stream ended before its first chunk",
        )),
        Ok(Some(Err(e))) => Err(e),
        Ok(Some(Ok(first))) => Ok(Reply::Stream(Box::pin(
            futures::stream::iter([Ok(first)]).chain(stream::idle_limited(
                chunks,
                model.provider.first_byte_timeout,
            )),
        ))),
    }
}

/// Sets `model` to the caller's name, charges the request and adds the
/// extensions. The answer leaves only after the charge committed; a held
/// answer goes to the review queue in the charge's transaction instead.
async fn finish(
    gateway: &Gateway,
    mut completion: Value,
    served: &Served,
    reservations: Vec<limits::Reservation>,
) -> Result<ChatOutcome, ApiError> {
    completion["model"] = Value::String(served.requested.clone());
    let usage = &completion["usage"];
    let prompt = usage["prompt_tokens"]
        .as_u64()
        .unwrap_or(served.prompt_estimate);
    let estimated = usage["completion_tokens"].as_u64().is_none();
    let completion_tokens = usage["completion_tokens"].as_u64().unwrap_or_else(|| {
        completion["choices"]
            .as_array()
            .map(|c| {
                c.iter()
                    .map(|choice| tokens::estimate_message(&choice["message"]).saturating_sub(4))
                    .sum()
            })
            .unwrap_or(0)
    });
    if !usage.is_object() {
        completion["usage"] = json!({
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        });
    }
    let extensions = Extensions::new(gateway, served, false).with_reservations(reservations);
    let output = if extensions.keeps_output() {
        crate::base::json::text(&completion)
    } else {
        String::new()
    };
    if served.compliance.hold {
        // The review releases the answer in the caller's wire.
        let answer = match served.endpoint {
            Endpoint::Messages => wire::messages_answer::to_message(&completion, &served.requested),
            _ => completion.clone(),
        };
        let held = extensions
            .charge_held(
                (prompt, completion_tokens),
                None,
                estimated,
                Output::completion(&output, &completion),
                answer,
            )
            .await?;
        return Ok(ChatOutcome::Held(held));
    }
    let logged = Output::completion(&output, &completion);
    let charged = extensions
        .charge(prompt, completion_tokens, estimated, true, logged, None)
        .await?;
    extensions.apply(&mut completion, &charged);
    Ok(ChatOutcome::Complete(completion))
}
