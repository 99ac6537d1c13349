//! The chat pipeline: `POST /v1/chat/completions` from a parsed request to
//! a completion or a stream (DESIGN section 2).
//!
//! The fallback walk tries each model of the chain in order; a later model
//! only after a retryable failure of the one before. Within a model, the
//! walk over its deployments (retries, cooldown) is [`walk`]'s. Each attempt is
//! recorded (provider, status, latency) and explained on the response. For
//! streams, an attempt counts as served only once its first chunk arrived:
//! until then nothing was written to the caller, so falling back is safe.

mod attempt;
pub mod audio;
pub mod charge_record;
pub mod embeddings;
pub mod form;
pub mod media;
pub mod messages;
pub mod multimodal;
pub mod native;
pub mod request;
pub mod responses;
pub mod stream;
pub mod tokens;
pub mod truncate;
mod walk;

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};

use crate::app::AppState;
use crate::auth::keys::{ApiKey, Keys};
use crate::base::error::{ApiError, Code};
use crate::base::money::micros_to_credits;
use crate::base::tasks::Tasks;
use crate::base::time::now_ms;
use crate::billing::ledger::{self, Claim, CreditHold, Refusal};
use crate::billing::{self, Charged, Endpoint, UsageRecord, limits};
use crate::catalogue::{Model, Pricing};
use crate::compliance::audit;
use crate::compliance::conversations::{self, Conversation};
use crate::compliance::incidents::Sampler;
use crate::compliance::reviews::{self, Review};
use crate::compliance::{Classification, Level, consents, pii, registry};
use crate::events::{Event, Events};
use crate::metrics::{Metrics, StreamGuard};
use crate::providers::{ChunkStream, Failure, Reply, UpstreamError};
use crate::routing;
use crate::store::Store;
use crate::tenants;
use crate::tenants::{CompliancePolicy, ReviewMode, Tier};
use crate::traces;
use charge_record::{AuditFacts, ChargeRecord, HeldFacts};
use opentelemetry::KeyValue;
use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::{SpanKind, TraceContextExt as _};
use request::ChatRequest;
use walk::{ChatCall, Walk, Walked, completion_allowance, reserve_key_tokens};

/// One try of one deployment of one model of the chain (its retries
/// included: `status` is the last one's).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Attempt {
    pub model: String,
    pub provider: String,
    /// `provider/upstream`; empty when no deployment was tried.
    pub deployment: String,
    pub status: String,
    #[serde(rename = "latencyMs")]
    pub latency_ms: u64,
    /// Retries of this deployment before it was given up.
    pub retries: u32,
    #[serde(skip)]
    pub message: String,
}

/// What the caller gets.
pub enum ChatOutcome {
    Complete(Value),
    /// Held for human review: 202 with the review item (DESIGN 7.3).
    Held(Value),
    Stream {
        body: stream::SseBody,
        /// The catalogue id that served.
        model: String,
    },
}

/// Everything known about the attempt that served.
pub struct Served {
    pub request_id: String,
    pub key_id: String,
    pub tenant_id: String,
    pub model: Arc<Model>,
    /// The name the caller used for it.
    pub requested: String,
    /// The chain as the caller sent it.
    pub chain: Vec<String>,
    pub attempts: Vec<Attempt>,
    pub started: Instant,
    pub risk: Classification,
    pub replaced_parts: usize,
    pub prompt_estimate: u64,
    pub truncation: Option<truncate::Receipt>,
    pub compliance: Arc<Compliance>,
    /// Retries of the deployment that served, before it did.
    pub retries: u32,
    /// Counts the serving deployment busy while the answer (a stream)
    /// lasts.
    pub in_flight: Option<Arc<routing::InFlight>>,
    /// The route it came in on, kept in its usage record.
    pub endpoint: Endpoint,
    /// What admission reserved; the charge settles it.
    pub admission: CreditHold,
}

/// What the compliance records of a request need, from the gate to the
/// charge: the tenant policy, the service fields and the request as sent.
#[derive(Debug)]
pub struct Compliance {
    pub policy: CompliancePolicy,
    pub purpose: Option<String>,
    pub end_user_id: Option<String>,
    pub deployer_context: Option<Value>,
    pub user_consent_id: Option<String>,
    /// The request as the caller sent it, when a log or a review keeps it
    /// (with placeholders for personal data unless `piiRedaction` is off).
    pub request: Option<String>,
    /// The response goes to the human-review queue, not to the caller.
    pub hold: bool,
    /// The request's PII redaction (`None` when the policy turns it off):
    /// its placeholders and how many values of each type it replaced.
    pub pii: Option<pii::Session>,
}

impl Compliance {
    pub(crate) fn new(
        policy: &CompliancePolicy,
        request: &ChatRequest,
        raw: &[u8],
        risk: &Classification,
    ) -> Compliance {
        let hold = match policy.review_mode {
            ReviewMode::Off => false,
            ReviewMode::HighRisk => risk.level >= Level::High,
            ReviewMode::All => true,
        };
        let (pii, logged) = redacted_request(policy, &String::from_utf8_lossy(raw));
        Compliance {
            policy: policy.clone(),
            purpose: request.purpose.clone(),
            end_user_id: request.end_user_id.clone(),
            deployer_context: request.deployer_context.clone(),
            user_consent_id: request.user_consent_id.clone(),
            request: (policy.log_bodies || hold).then_some(logged),
            hold,
            pii,
        }
    }

    /// `text` as the logs keep it: with this request's placeholders (the
    /// same value as in the request gets the same one), or as it is.
    pub fn logged<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        match &self.pii {
            Some(session) if !text.is_empty() => {
                std::borrow::Cow::Owned(session.clone().redact_document(text))
            }
            _ => std::borrow::Cow::Borrowed(text),
        }
    }

    /// The redaction for what leaves for the provider, in `upstream` mode.
    pub fn upstream_pii(&self) -> Option<pii::Session> {
        self.pii
            .as_ref()
            .filter(|s| s.mode() == pii::Mode::Upstream)
            .map(|s| s.clone().uncounted())
    }
}

/// The PII session of a request and the request's text as the logs keep
/// it: the caller's JSON with placeholders, or as sent when the policy
/// turns redaction off.
pub(crate) fn redacted_request(
    policy: &CompliancePolicy,
    raw: &str,
) -> (Option<pii::Session>, String) {
    if policy.pii_redaction == pii::Mode::Off {
        return (None, raw.to_owned());
    }
    let mut session = pii::Session::new(policy.pii_redaction, &policy.pii_patterns);
    let logged = session.redact_document(raw);
    (Some(session), logged)
}

impl Served {
    pub fn is_fallback(&self) -> bool {
        !self.attempts.is_empty()
    }
}

pub async fn chat_completions(
    state: &AppState,
    key: &ApiKey,
    request_id: &str,
    request: ChatRequest,
    raw: &[u8],
) -> Result<ChatOutcome, ApiError> {
    chat_on(state, key, request_id, request, raw, Endpoint::Chat).await
}

/// The chat pipeline for a request that came in on `endpoint` (chat, or a
/// route translated into chat: `/v1/messages` on a non-Anthropic model,
/// `/v1/responses` off OpenAI's own API): every stage of the chat route, its usage record carrying
/// `endpoint`. `raw` is the body as the caller sent it (for the logs).
pub async fn chat_on(
    state: &AppState,
    key: &ApiKey,
    request_id: &str,
    mut request: ChatRequest,
    raw: &[u8],
    endpoint: Endpoint,
) -> Result<ChatOutcome, ApiError> {
    let started = Instant::now();
    let route = match endpoint {
        Endpoint::Responses => "/v1/responses",
        Endpoint::Messages => "/v1/messages",
        _ => "/v1/chat/completions",
    };
    if !request
        .chain
        .iter()
        .any(|m| state.catalogue.get_for(&key.tenant_id, m).is_some())
    {
        return Err(ApiError::new(
            Code::ModelNotFound,
            format!(
                "none of the requested models is in the catalogue: {}",
                request.chain.join(", ")
            ),
        ));
    }
    for model in request
        .chain
        .iter()
        .filter_map(|m| state.catalogue.get_for(&key.tenant_id, m))
    {
        kind_fits(&model, false, route)?;
    }
    let admitted = admit(state, key, chat_estimate(state, key, &request))?;
    let tenant = &admitted.tenant;
    let risk = gate(state, key, &tenant.policy, &request, request_id).await?;
    let compliance = Arc::new(Compliance::new(&tenant.policy, &request, raw, &risk));
    if compliance.hold && request.stream {
        // A held answer is shown only once approved: there is nothing to
        // stream to the caller, so the upstream is asked for the whole.
        request.stream = false;
        request.body.insert("stream".into(), Value::Bool(false));
        request.body.remove("stream_options");
    }
    take_tier_caps(state, &admitted, &request).await?;
    let key_reservation = reserve_key_tokens(state, key, &request)?;
    // `upstream` mode: the provider sees placeholders; the answer gets the
    // values back below, before anything else reads it.
    let upstream_pii = compliance.upstream_pii().map(|mut session| {
        if let Some(messages) = request.body.get_mut("messages") {
            session.redact_json(messages);
        }
        session
    });
    let registered = registered_providers(state, &tenant.policy)?;
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut known = 0;
    let mut limited: Option<ApiError> = None;
    for name in &request.chain {
        let Some(model) = state.catalogue.get_for(&key.tenant_id, name) else {
            attempts.push(Attempt {
                model: name.clone(),
                status: "unknown_model".into(),
                message: format!("`{name}` is not in the catalogue"),
                ..Attempt::default()
            });
            continue;
        };
        known += 1;
        let (body, replaced_parts, truncation) = prepare(&request, &model);
        let prompt_estimate = tokens::estimate_messages(&body["messages"]);
        let reserve = prompt_estimate + completion_allowance(&body, &model);
        let reservation = match state.model_limits.admit(
            &model.id,
            model.rpm_limit,
            model.tpm_limit,
            reserve,
            now_ms(),
        ) {
            Ok(reservation) => reservation,
            Err(refusal) => {
                attempts.push(Attempt {
                    model: name.clone(),
                    status: "model_rate_limited".into(),
                    message: refusal.message.clone(),
                    ..Attempt::default()
                });
                let mut error = ApiError::new(Code::ModelRateLimitExceeded, refusal.message);
                error.retry_after = Some(refusal.retry_after_seconds as u64);
                limited.get_or_insert(error);
                continue;
            }
        };
        let walk = Walk {
            state,
            tenant_id: &key.tenant_id,
            model: &model,
            name,
            registered: registered.as_deref(),
        };
        let call = ChatCall {
            providers: &state.providers,
            body,
            stream: request.stream,
        };
        match walk.run(&call, &mut attempts).await {
            Walked::Served {
                reply,
                view,
                retries,
                in_flight,
            } => {
                let served = Served {
                    request_id: request_id.to_owned(),
                    key_id: key.id.clone(),
                    tenant_id: key.tenant_id.clone(),
                    model: view,
                    requested: name.clone(),
                    chain: request.chain.clone(),
                    attempts,
                    started,
                    risk: risk.clone(),
                    replaced_parts,
                    prompt_estimate,
                    truncation: truncation.clone(),
                    compliance: compliance.clone(),
                    retries,
                    in_flight: Some(Arc::new(in_flight)),
                    endpoint,
                    admission: admitted.hold.clone(),
                };
                let reservations: Vec<limits::Reservation> =
                    reservation.into_iter().chain(key_reservation).collect();
                return match reply {
                    Reply::Complete(mut completion) => {
                        if let Some(session) = &upstream_pii {
                            session.restore_json(&mut completion["choices"]);
                        }
                        finish(state, completion, &served, reservations).await
                    }
                    Reply::Stream(chunks) => {
                        let chunks = match &upstream_pii {
                            Some(session) if session.issued() => {
                                pii::restore_stream(chunks, session.table())
                            }
                            _ => chunks,
                        };
                        state.metrics.first_token(name, started.elapsed());
                        let extensions =
                            Extensions::new(state, &served, true).with_reservations(reservations);
                        Ok(ChatOutcome::Stream {
                            body: stream::relay(chunks, served, extensions),
                            model: name.clone(),
                        })
                    }
                };
            }
            Walked::Refused { error, view } => return Err(relay_refusal(&view, &error)),
            Walked::Failed { .. } => {}
        }
    }
    if let Some(error) = limited
        && attempts
            .iter()
            .all(|a| a.status == "model_rate_limited" || a.status == "unknown_model")
    {
        // Nothing failed upstream: every model was at its own limit.
        return Err(error);
    }
    debug_assert!(known > 0, "checked before the walk");
    let summary: Vec<String> = attempts
        .iter()
        .map(|a| format!("{} ({}: {})", a.model, a.status, a.message))
        .collect();
    tracing::warn!(chain = ?request.chain, "every model of the chain failed");
    state.metrics.exhausted();
    state.events.publish(Event::providers_exhausted(
        &key.tenant_id,
        request_id,
        &request.chain,
        &attempts,
    ));
    Err(ApiError::new(
        Code::AllProvidersFailed,
        format!("every model of the chain failed: {}", summary.join("; ")),
    ))
}

/// An embedding model serves `/v1/embeddings` only, and only an embedding
/// model serves it: 400 `wrong_model_kind` naming `model` otherwise, before
/// anything is charged, counted or classified.
/// The single model a request names, as the calling key's tenant sees it;
/// 404 `model_not_found` on `model` otherwise.
pub(crate) fn catalogued(
    state: &AppState,
    key: &ApiKey,
    model: &str,
) -> Result<Arc<Model>, ApiError> {
    state
        .catalogue
        .get_for(&key.tenant_id, model)
        .ok_or_else(|| {
            let mut error = ApiError::new(
                Code::ModelNotFound,
                format!("`{model}` is not in the catalogue"),
            );
            error.param = Some("model".into());
            error
        })
}

pub(crate) fn kind_fits(model: &Model, embeddings: bool, path: &str) -> Result<(), ApiError> {
    if model.is_embedding() == embeddings {
        return Ok(());
    }
    let message = if embeddings {
        format!(
            "`{}` is not an embedding model (its outputCapabilities lack EMBEDDING): {path} takes an embedding model",
            model.id
        )
    } else {
        format!(
            "`{}` is an embedding model: it serves /v1/embeddings only, not {path}",
            model.id
        )
    };
    let mut error = ApiError::new(Code::WrongModelKind, message);
    error.param = Some("model".into());
    Err(error)
}

/// A request past admission: its tenant, and what it holds reserved.
pub(crate) struct Admitted {
    pub tenant: tenants::Tenant,
    pub hold: CreditHold,
}

/// The admission stage every inference route goes through: reserves the
/// request's estimated cost (micro-credits, see [`estimated_cost`]) against
/// the key's `creditLimit` and the tenant's wallet, atomically in the
/// in-memory ledger. The key's cap holds while `consumed + reserved <
/// limit`; the wallet, except for enterprise tenants (which may go
/// negative), while `balance - reserved > 0`. The reservation lives in the
/// returned [`CreditHold`]: the charge replaces it, dropping it releases it.
pub(crate) fn admit(state: &AppState, key: &ApiKey, estimate: u64) -> Result<Admitted, ApiError> {
    let tenant = state
        .store
        .read(|tx| tenants::resolve(tx, &key.tenant_id))
        .map_err(|e| ApiError::internal("reading the key's tenant", e))?;
    let claim = Claim {
        key,
        tenant: &tenant,
        cost: estimate,
        now: now_ms(),
    };
    match state.ledger.reserve(claim) {
        Ok(hold) => Ok(Admitted { tenant, hold }),
        Err(Refusal::KeyCap {
            consumed, reserved, ..
        }) => Err(ApiError::new(
            Code::BudgetExceeded,
            if reserved == 0 {
                "the API key has reached its credit limit for this cycle".to_owned()
            } else {
                format!(
                    "the API key has reached its credit limit for this cycle: {} credits consumed and {} reserved by requests in flight",
                    micros_to_credits(consumed),
                    micros_to_credits(reserved)
                )
            },
        )),
        Err(Refusal::Wallet { reserved, .. }) => Err(ApiError::new(
            Code::InsufficientCredits,
            if reserved == 0 {
                format!(
                    "the wallet of tenant `{}` is empty; top it up to continue",
                    tenant.name
                )
            } else {
                format!(
                    "the wallet of tenant `{}` is taken by requests in flight ({} credits reserved); retry once they end, or top it up",
                    tenant.name,
                    micros_to_credits(reserved)
                )
            },
        )),
        Err(Refusal::DayCap { .. }) => unreachable!("admission reserves no day unit"),
    }
}

/// What admission reserves for a request on `model`: its price for the
/// prompt as estimated locally and for the output it may produce
/// ([`expected_output`]). A price too large to record reserves the most a
/// charge can be.
pub(crate) fn estimated_cost(model: &Model, prompt_tokens: u64, output_tokens: u64) -> u64 {
    cost(&model.pricing, prompt_tokens, output_tokens).unwrap_or(crate::base::money::MAX_CHARGE)
}

/// The output a request is expected to produce: what it allows itself
/// (`max_tokens` and its equivalents), else its model's
/// `max_output_tokens`, else [`ledger::DEFAULT_OUTPUT_TOKENS`].
pub(crate) fn expected_output(allowed: Option<u64>, model: &Model) -> u64 {
    allowed
        .or(model.max_output_tokens.map(u64::from))
        .unwrap_or(ledger::DEFAULT_OUTPUT_TOKENS)
}

/// A chat request's estimate: the most any model of its chain could cost
/// (a fallback may serve it), times its `n` choices.
fn chat_estimate(state: &AppState, key: &ApiKey, request: &ChatRequest) -> u64 {
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
        .filter_map(|m| state.catalogue.get_for(&key.tenant_id, m))
        .map(|model| {
            let output = expected_output(allowed, &model).saturating_mul(choices);
            estimated_cost(&model, prompt, output)
        })
        .max()
        .unwrap_or(0)
}

/// The free tier's daily multimodal cap. Reserved only once the request
/// passed every other check, so a refused request does not use up the day;
/// counted durably by the request's charge, released if it is not charged.
pub(crate) async fn take_tier_caps(
    state: &AppState,
    admitted: &Admitted,
    request: &ChatRequest,
) -> Result<(), ApiError> {
    if !multimodal::is_multimodal(&request.body["messages"]) {
        return Ok(());
    }
    take_multimodal_cap(state, admitted).await
}

/// Reserves one of a free-tier tenant's daily multimodal requests (every
/// image and audio route counts as one).
pub(crate) async fn take_multimodal_cap(
    state: &AppState,
    admitted: &Admitted,
) -> Result<(), ApiError> {
    let tenant = &admitted.tenant;
    if tenant.tier != Tier::Free {
        return Ok(());
    }
    let now = now_ms();
    let cap = state.config.free_multimodal_per_day;
    let row = limits::day_row(&tenant.id, "multimodal", now);
    let stored = || limits::daily_count(&state.store, &row);
    match admitted.hold.take_day(row.clone(), cap, stored) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => {
            let mut error = ApiError::new(
                Code::MultimodalCapExceeded,
                format!(
                    "the free tier allows {cap} multimodal requests per UTC day; the count resets at midnight UTC"
                ),
            );
            error.retry_after = Some((limits::ms_to_midnight(now) as u64).div_ceil(1000));
            Err(error)
        }
        Err(e) => Err(ApiError::internal("counting the multimodal cap", e)),
    }
}

/// Classifies the request and refuses, in this order, what may not go
/// upstream: an Article 5 practice for every key, a high-risk use on a key
/// without `allowHighRisk`, and a high-risk use without the purpose or the
/// valid consent the tenant policy requires. Every inference route calls
/// it, so each has the same `classify` span and `tollgate.risk.level` on
/// its server span (docs/observability.md), refused or not.
pub(crate) async fn gate(
    state: &AppState,
    key: &ApiKey,
    policy: &CompliancePolicy,
    request: &ChatRequest,
    request_id: &str,
) -> Result<Classification, ApiError> {
    let classifying = traces::child(|| "classify".into(), SpanKind::Internal, Vec::new);
    let risk = async {
        let rules_only = state.classifier.classify(
            request.purpose.as_deref(),
            request.deployer_context.as_ref(),
            &request.body["messages"],
        );
        crate::compliance::judge::decide(state, policy, request, rules_only).await
    }
    .with_context(classifying.clone())
    .await;
    let level = KeyValue::new("tollgate.risk.level", risk.level.as_str());
    classifying.span().set_attribute(level.clone());
    drop(classifying);
    traces::record(|| vec![level]);
    refuse(state, key, policy, request, request_id, risk)
}

/// [`gate`]'s refusals of a classified request.
fn refuse(
    state: &AppState,
    key: &ApiKey,
    policy: &CompliancePolicy,
    request: &ChatRequest,
    request_id: &str,
    risk: Classification,
) -> Result<Classification, ApiError> {
    let rules = risk.triggered_rules().join(", ");
    match risk.level {
        Level::Prohibited => {
            tracing::warn!(key = %key.id, rules = %rules, "prohibited use refused");
            state.sampler.offer_refusal(&key.tenant_id, request_id);
            Err(ApiError::new(
                Code::ProhibitedUse,
                format!(
                    "{} This is refused for every key (rules: {rules}).",
                    risk.reason()
                ),
            ))
        }
        Level::High if !key.allow_high_risk => Err(ApiError::new(
            Code::HighRiskNotAllowed,
            format!(
                "{} This key does not have allowHighRisk (rules: {rules}).",
                risk.reason()
            ),
        )),
        Level::High => {
            if policy.require_purpose
                && request
                    .purpose
                    .as_deref()
                    .is_none_or(|p| p.trim().is_empty())
            {
                let mut error = ApiError::new(
                    Code::PurposeRequired,
                    format!(
                        "{} The tenant policy requires a `purpose` on high-risk requests.",
                        risk.reason()
                    ),
                );
                error.param = Some("purpose".into());
                return Err(error);
            }
            if policy.require_consent {
                let Some(id) = request.user_consent_id.as_deref() else {
                    let mut error = ApiError::new(
                        Code::ConsentRequired,
                        format!(
                            "{} The tenant policy requires a `user_consent_id` on high-risk requests.",
                            risk.reason()
                        ),
                    );
                    error.param = Some("user_consent_id".into());
                    return Err(error);
                };
                let checked = state
                    .store
                    .read(|tx| {
                        consents::check(tx, &key.tenant_id, id, request.end_user_id.as_deref())
                    })
                    .map_err(|e| ApiError::internal("reading the consent record", e))?;
                if let Err(invalid) = checked {
                    let mut error = ApiError::new(Code::ConsentInvalid, invalid.message(id));
                    error.param = Some("user_consent_id".into());
                    return Err(error);
                }
            }
            Ok(risk)
        }
        _ => Ok(risk),
    }
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
async fn first_chunk(mut chunks: ChunkStream, model: &Model) -> Result<Reply, UpstreamError> {
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

/// A final refusal of the request by the upstream, in our error shape.
pub(crate) fn relay_refusal(model: &Model, error: &UpstreamError) -> ApiError {
    let message = format!(
        "the provider `{}` refused the request: {}",
        model.provider.id, error.message
    );
    match error.failure {
        _ if error.content_filter => ApiError::new(Code::ContentFiltered, message),
        Failure::Status(413) => ApiError::new(Code::PayloadTooLarge, message),
        Failure::Status(422) => ApiError::new(Code::UpstreamUnprocessable, message),
        _ => ApiError::new(Code::InvalidRequest, message),
    }
}

/// The response extensions, and the charge that must commit before they
/// are shown.
pub struct Extensions {
    truncation: Option<Value>,
    pricing: Pricing,
    is_fallback: bool,
    started: Instant,
    risk: Value,
    explainability: Value,
    store: Arc<Store>,
    keys: Keys,
    events: Events,
    metrics: Arc<Metrics>,
    /// For `fallback.triggered`: the chain, the attempts that failed, the
    /// deployment that served and its retries.
    chain: Vec<String>,
    attempts: Vec<Attempt>,
    deployment: String,
    retries: u32,
    /// Holds `tollgate_streams_in_flight` up while a stream lives.
    _stream: Option<StreamGuard>,
    /// The usage record, completed with tokens and cost when charged.
    record: UsageRecord,
    compliance: Arc<Compliance>,
    level: Level,
    rules: Vec<String>,
    reason: String,
    sampler: Sampler,
    /// Where a charge that cannot be awaited runs (see `charge_detached`).
    tasks: Tasks,
    /// What a media request was billed for (`{"images": 2}`), kept in its
    /// audit entry.
    units: Option<Value>,
    /// Tokens reserved against the model's and the key's limits, settled
    /// by the charge.
    reservations: Vec<limits::Reservation>,
    /// Credits (and a day unit) reserved at admission: released once the
    /// charge reached the in-memory ledger, or when the request ends
    /// uncharged.
    admission: CreditHold,
    /// The serving deployment's in-flight count, held while the answer
    /// lives.
    _in_flight: Option<Arc<routing::InFlight>>,
}

/// A held answer: the review it becomes, and the completion (every
/// extension but `billing`, which the charge adds).
pub struct Hold {
    pub review_id: String,
    pub completion: Value,
}

impl Extensions {
    pub fn new(state: &AppState, served: &Served, streamed: bool) -> Extensions {
        if let Some(session) = &served.compliance.pii {
            state
                .metrics
                .pii_redacted(session.mode().as_str(), session.counts());
        }
        Extensions {
            truncation: served.truncation.as_ref().map(truncate::Receipt::view),
            pricing: served.model.pricing,
            is_fallback: served.is_fallback(),
            started: served.started,
            risk: served.risk.view(),
            explainability: explain(served),
            store: state.store.clone(),
            keys: state.keys.clone(),
            events: state.events.clone(),
            metrics: state.metrics.clone(),
            chain: served.chain.clone(),
            attempts: served.attempts.clone(),
            deployment: format!("{}/{}", served.model.provider.id, served.model.upstream),
            retries: served.retries,
            _stream: streamed.then(|| state.metrics.stream_open()),
            record: UsageRecord {
                request_id: served.request_id.clone(),
                key_id: served.key_id.clone(),
                tenant_id: served.tenant_id.clone(),
                model: served.requested.clone(),
                provider: served.model.provider.id.clone(),
                prompt_tokens: 0,
                completion_tokens: 0,
                cost: 0,
                latency_ms: 0,
                is_fallback: served.is_fallback(),
                streamed,
                estimated: false,
                at: 0,
                endpoint: served.endpoint,
            },
            compliance: served.compliance.clone(),
            level: served.risk.level,
            rules: served.risk.triggered_rules(),
            reason: served.risk.reason(),
            sampler: state.sampler.clone(),
            tasks: state.tasks.clone(),
            units: None,
            reservations: Vec::new(),
            admission: served.admission.clone(),
            _in_flight: served.in_flight.clone(),
        }
    }

    /// The token reservations the charge settles.
    pub fn with_reservations(mut self, reservations: Vec<limits::Reservation>) -> Extensions {
        self.reservations = reservations;
        self
    }

    /// The units a media request is billed for, shown in its audit entry.
    pub fn with_units(mut self, units: Value) -> Extensions {
        self.units = Some(units);
        self
    }

    /// Whether the answer goes to the human-review queue.
    pub fn holds(&self) -> bool {
        self.compliance.hold
    }

    /// Whether the answer's text is wanted (conversation log, sampler).
    pub fn keeps_output(&self) -> bool {
        self.compliance.policy.log_bodies || self.sampler.is_active()
    }

    /// The charge of this request as the journal keeps it: the usage
    /// record with the audit entry, conversation record and review written
    /// in the charge's own transaction.
    fn charge_record(
        &self,
        record: &UsageRecord,
        output: &str,
        completed: bool,
        hold: Option<Hold>,
    ) -> ChargeRecord {
        let c = &self.compliance;
        let output = c.logged(output);
        let purpose = c.purpose.as_deref().map(|p| c.logged(p).into_owned());
        let deployer_context = c.deployer_context.as_ref().map(|d| {
            let mut d = d.clone();
            if let Some(session) = &c.pii {
                session.clone().redact_json(&mut d);
            }
            d
        });
        let subject = c
            .end_user_id
            .as_deref()
            .map(|u| audit::pseudonym(&record.tenant_id, u));
        let held = hold.as_ref().map(|h| h.review_id.clone());
        let mut details = json!({
            "model": record.model,
            "provider": record.provider,
            "riskLevel": self.level.as_str(),
            "triggeredRules": self.rules,
            "cost": micros_to_credits(record.cost),
            "promptTokens": record.prompt_tokens,
            "completionTokens": record.completion_tokens,
            "isFallback": record.is_fallback,
            "streamed": record.streamed,
            "purpose": purpose,
            "subject": subject,
            "consentId": c.user_consent_id,
            "deployerContext": deployer_context,
            "review": held,
        });
        if let Some(units) = &self.units {
            details["units"] = units.clone();
        }
        let audit = AuditFacts {
            outcome: if completed { "ok" } else { "incomplete" }.to_owned(),
            details: details.to_string(),
            at: now_ms(),
        };
        let retention_days = if self.level >= Level::High {
            c.policy.high_risk_retention_days
        } else {
            c.policy.retention_days
        };
        let conversation = c.policy.log_bodies.then(|| Conversation {
            request_id: record.request_id.clone(),
            tenant_id: record.tenant_id.clone(),
            key_id: record.key_id.clone(),
            at: record.at,
            expires_at: record.at + i64::from(retention_days) * conversations::DAY_MS,
            purpose: purpose.clone(),
            end_user_id: c.end_user_id.clone(),
            deployer_context: deployer_context.as_ref().map(Value::to_string),
            level: self.level.as_str().to_owned(),
            rules: self.rules.clone(),
            model: record.model.clone(),
            cost: record.cost,
            request: c.request.clone().unwrap_or_default(),
            response: output.into_owned(),
            erased: false,
        });
        let review = hold.map(|hold| {
            let now = now_ms();
            let review = Review {
                id: hold.review_id,
                tenant_id: record.tenant_id.clone(),
                key_id: record.key_id.clone(),
                request_id: record.request_id.clone(),
                status: reviews::Status::Pending,
                created_at: now,
                expires_at: now + i64::from(c.policy.review_ttl_secs) * 1000,
                model: record.model.clone(),
                level: self.level.as_str().to_owned(),
                rules: self.rules.clone(),
                reason: self.reason.clone(),
                request: c.request.clone().unwrap_or_default(),
                completion: String::new(),
                decided_by: None,
                decided_at: None,
                note: None,
                edited: false,
            };
            HeldFacts {
                review,
                completion: hold.completion.to_string(),
                is_fallback: self.is_fallback,
                latency_ms: self.started.elapsed().as_millis() as u64,
            }
        });
        ChargeRecord {
            usage: record.clone(),
            audit,
            conversation,
            review,
            day: self.admission.day_row(),
        }
    }

    /// The refusal of this request's charge, too large to record.
    pub fn overflowed(&self, what: impl std::fmt::Display) -> ApiError {
        overflowed(&self.record.request_id, &self.record.model, what)
    }

    /// The usage record for these token counts, priced; refused when the
    /// price overflows.
    fn record(
        &self,
        prompt_tokens: u64,
        completion_tokens: u64,
        estimated: bool,
    ) -> Result<UsageRecord, ApiError> {
        let cost = cost(&self.pricing, prompt_tokens, completion_tokens).ok_or_else(|| {
            overflowed(
                &self.record.request_id,
                &self.record.model,
                format_args!("{prompt_tokens} + {completion_tokens} tokens"),
            )
        })?;
        Ok(UsageRecord {
            prompt_tokens,
            completion_tokens,
            cost,
            latency_ms: self.started.elapsed().as_millis() as u64,
            estimated,
            at: now_ms(),
            ..self.record.clone()
        })
    }

    /// Charges the request durably (group commit); returns once committed,
    /// then counts it and publishes its events. `completed` is false for a
    /// stream cut by its upstream: it is billed, but it did not complete.
    /// `output` is the answer's text (for the conversation log and the
    /// sampler); `hold` puts the answer in the review queue in the same
    /// transaction.
    pub async fn charge(
        &self,
        prompt_tokens: u64,
        completion_tokens: u64,
        estimated: bool,
        completed: bool,
        output: &str,
        hold: Option<Hold>,
    ) -> Result<Charged, ApiError> {
        // The upstream spent the tokens whether or not the charge fits.
        self.settle(prompt_tokens + completion_tokens);
        let record = self.record(prompt_tokens, completion_tokens, estimated)?;
        self.commit(record, completed, output, hold).await
    }

    fn settle(&self, tokens: u64) {
        for reservation in &self.reservations {
            reservation.settle(tokens);
        }
    }

    /// Charges a held answer and files it for review in the charge's own
    /// transaction; returns the body of the caller's 202 (DESIGN 7.3).
    /// `priced` replaces the token price (the media routes' units).
    pub async fn charge_held(
        &self,
        (prompt_tokens, completion_tokens): (u64, u64),
        priced: Option<u64>,
        estimated: bool,
        output: &str,
        mut answer: Value,
    ) -> Result<Value, ApiError> {
        self.settle(prompt_tokens + completion_tokens);
        let mut record = self.record(prompt_tokens, completion_tokens, estimated)?;
        if let Some(cost) = priced {
            record.cost = cost;
        }
        let review_id = crate::base::ids::new_id("rev");
        self.apply_uncharged(&mut answer);
        let hold = Hold {
            review_id: review_id.clone(),
            completion: answer,
        };
        self.commit(record, true, output, Some(hold)).await?;
        tracing::info!(review = %review_id, request_id = %self.record.request_id, "answer held for human review");
        Ok(json!({ "id": review_id, "object": "review", "status": "pending" }))
    }

    /// Charges a cost the caller priced (images and audio, billed by
    /// units other than tokens); chat's token pricing is not involved.
    pub async fn charge_priced(
        &self,
        cost: u64,
        estimated: bool,
        output: &str,
        hold: Option<Hold>,
    ) -> Result<Charged, ApiError> {
        let record = UsageRecord {
            cost,
            ..self.record(0, 0, estimated)?
        };
        self.commit(record, true, output, hold).await
    }

    async fn commit(
        &self,
        record: UsageRecord,
        completed: bool,
        output: &str,
        hold: Option<Hold>,
    ) -> Result<Charged, ApiError> {
        let entry = self.charge_record(&record, output, completed, hold);
        let charging = traces::child(|| "charge".into(), SpanKind::Internal, Vec::new);
        let hold = &self.admission;
        let charged = charge_journaled(&self.store, &self.keys, hold.ledger(), entry)
            .with_context(charging)
            .await
            .map_err(|e| ApiError::internal("recording the charge", e))?;
        // The charge is in memory now: the reservation gives way to it.
        hold.release();
        self.sampler
            .offer_output(&record.tenant_id, &record.request_id, || {
                answer_text(output)
            });
        self.after_charge(&record, &charged, completed);
        Ok(charged)
    }

    /// Charges from a context that cannot wait (a stream dropped by its
    /// caller): the charge runs on its own task and still commits.
    pub fn charge_detached(
        &self,
        prompt_tokens: u64,
        completion_tokens: u64,
        estimated: bool,
        output: &str,
    ) {
        self.settle(prompt_tokens + completion_tokens);
        // Already logged by `record` when refused.
        let Ok(record) = self.record(prompt_tokens, completion_tokens, estimated) else {
            return;
        };
        let entry = self.charge_record(&record, output, false, None);
        let (store, keys) = (self.store.clone(), self.keys.clone());
        // The task keeps the reservation until the charge is in memory.
        let hold = self.admission.clone();
        let after = AfterCharge {
            events: self.events.clone(),
            metrics: self.metrics.clone(),
            chain: self.chain.clone(),
            attempts: self.attempts.clone(),
            deployment: self.deployment.clone(),
            retries: self.retries,
        };
        // Detached on the task set: shutdown waits for it before the store
        // is flushed, so a stream dropped just before a stop is charged.
        self.tasks.detach(async move {
            let request_id = record.request_id.clone();
            let charged = charge_journaled(&store, &keys, hold.ledger(), entry).await;
            hold.release();
            match charged {
                Ok(charged) => after.run(&record, &charged, false),
                Err(e) => {
                    tracing::error!(%request_id, error = %e, "recording an abandoned stream's charge failed")
                }
            }
        });
    }

    fn after_charge(&self, record: &UsageRecord, charged: &Charged, completed: bool) {
        AfterCharge {
            events: self.events.clone(),
            metrics: self.metrics.clone(),
            chain: self.chain.clone(),
            attempts: self.attempts.clone(),
            deployment: self.deployment.clone(),
            retries: self.retries,
        }
        .run(record, charged, completed);
    }

    /// Adds `billing`, `risk_classification` and `explainability` to
    /// `target`, from a committed charge.
    pub fn apply(&self, target: &mut Value, charged: &Charged) {
        target["billing"] = billing_view(charged, self.is_fallback, self.started);
        self.apply_uncharged(target);
    }

    /// Every extension but `billing`.
    pub fn apply_uncharged(&self, target: &mut Value) {
        if let Some(session) = &self.compliance.pii {
            target["pii_redaction"] = json!({
                "mode": session.mode().as_str(),
                "counts": session.counts(),
            });
        }
        target["risk_classification"] = self.risk.clone();
        target["explainability"] = self.explainability.clone();
        if let Some(receipt) = &self.truncation {
            target["truncation"] = receipt.clone();
        }
    }
}

/// The text of an answer: a completion's message contents, or a stream's
/// relayed text as it is.
fn answer_text(output: &str) -> String {
    match serde_json::from_str::<Value>(output) {
        Ok(completion) if completion["choices"].is_array() => completion["choices"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| crate::providers::content_text(&c["message"]["content"]))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => output.to_owned(),
    }
}

fn billing_view(charged: &Charged, is_fallback: bool, started: Instant) -> Value {
    billing_view_at(charged, is_fallback, started.elapsed().as_millis() as u64)
}

/// [`billing_view`] with the latency already measured (a journaled held
/// answer is filed with the latency it had when charged).
fn billing_view_at(charged: &Charged, is_fallback: bool, latency_ms: u64) -> Value {
    json!({
        "cost": micros_to_credits(charged.cost),
        "balanceAfter": micros_to_credits(charged.balance_after),
        "keyRemaining": charged.key_remaining.map(micros_to_credits),
        "isFallback": is_fallback,
        "latencyMs": latency_ms,
    })
}

/// Charges through the journal (see `store::journal`): the charge and what
/// commits with it are one [`ChargeRecord`], applied live and, after a
/// crash, replayed by the same function.
async fn charge_journaled(
    store: &Store,
    keys: &Keys,
    ledger: &crate::billing::ledger::Ledger,
    entry: ChargeRecord,
) -> Result<Charged, crate::store::StoreError> {
    let journal = entry.encode();
    billing::charge_journaled(store, keys, ledger, journal, move |txn| entry.apply(txn)).await
}

/// What follows a committed charge: its metrics and events.
struct AfterCharge {
    events: Events,
    metrics: Arc<Metrics>,
    chain: Vec<String>,
    attempts: Vec<Attempt>,
    /// The deployment that served, and its retries before it did.
    deployment: String,
    retries: u32,
}

impl AfterCharge {
    /// Counts tokens and credits; publishes the spend events the charge
    /// fired, `fallback.triggered` when a later model served, and
    /// `request.completed` when the request completed.
    fn run(self, record: &UsageRecord, charged: &Charged, completed: bool) {
        traces::record(|| {
            vec![
                KeyValue::new("gen_ai.response.model", record.model.clone()),
                KeyValue::new("gen_ai.usage.input_tokens", record.prompt_tokens as i64),
                KeyValue::new(
                    "gen_ai.usage.output_tokens",
                    record.completion_tokens as i64,
                ),
                KeyValue::new("tollgate.cost.credits", micros_to_credits(charged.cost)),
            ]
        });
        self.metrics.charged(
            &record.model,
            record.prompt_tokens,
            record.completion_tokens,
            record.cost,
        );
        if record.is_fallback {
            self.metrics.fallback(&record.model);
            let mut walked = self.attempts;
            walked.push(Attempt {
                model: record.model.clone(),
                provider: record.provider.clone(),
                deployment: self.deployment,
                status: "ok".into(),
                latency_ms: record.latency_ms,
                retries: self.retries,
                message: String::new(),
            });
            self.events.publish(Event::fallback_triggered(
                &record.tenant_id,
                &record.request_id,
                &self.chain,
                &walked,
                &record.model,
            ));
        }
        if completed {
            self.events
                .publish_with(crate::events::REQUEST_COMPLETED, || {
                    Event::request_completed(record)
                });
        }
        for (stored, row) in charged.fired.iter().zip(&charged.pending_rows) {
            self.events
                .publish_recorded(Event::from_stored(stored), row.clone());
        }
    }
}

/// The price of a request in micro-credits, rounded to the nearest one;
/// `None` when it exceeds what the ledger can record (see [`overflowed`]).
pub fn cost(pricing: &Pricing, prompt_tokens: u64, completion_tokens: u64) -> Option<u64> {
    match *pricing {
        Pricing::PerToken {
            input_per_million,
            output_per_million,
            ..
        } => {
            // One rounding for the whole, as the sum of exact products.
            let total = u128::from(prompt_tokens)
                .checked_mul(u128::from(input_per_million))?
                .checked_add(
                    u128::from(completion_tokens).checked_mul(u128::from(output_per_million))?,
                )?
                .checked_add(500_000)?
                / 1_000_000;
            u64::try_from(total)
                .ok()
                .filter(|c| *c <= crate::base::money::MAX_CHARGE)
        }
        Pricing::PerRequest { per_request } => Some(per_request),
        // Units of other modalities do not apply to a chat completion.
        Pricing::PerImage { .. }
        | Pricing::PerSecond { .. }
        | Pricing::PerMinute { .. }
        | Pricing::PerCharacter { .. } => Some(0),
    }
}

/// The refusal of a charge too large to record: logged (with what was
/// priced), answered 500 `internal_error`. The answer is not delivered,
/// since it cannot be billed; nothing is written.
pub fn overflowed(request_id: &str, model: &str, what: impl std::fmt::Display) -> ApiError {
    ApiError::internal(
        "pricing the request",
        format!(
            "request {request_id}: the charge of {what} on model `{model}` would overflow the ledger; refused"
        ),
    )
}

fn explain(served: &Served) -> Value {
    let provider = &served.model.provider.id;
    let deployment = format!("{provider}/{}", served.model.upstream);
    let (reason, mut sentence) = if served.attempts.is_empty() {
        (
            "primary".to_owned(),
            format!(
                "`{}` (provider `{provider}`, deployment `{deployment}`) was the first model of the chain and served the request.",
                served.requested
            ),
        )
    } else {
        let failed: Vec<String> = served
            .attempts
            .iter()
            .map(|a| {
                if a.deployment.is_empty() {
                    format!("`{}` ({})", a.model, a.status)
                } else {
                    format!("`{}` on `{}` ({})", a.model, a.deployment, a.status)
                }
            })
            .collect();
        (
            format!("fallback after {} failed attempt(s)", served.attempts.len()),
            format!(
                "{} failed, so `{}` (provider `{provider}`, deployment `{deployment}`) served the request.",
                failed.join(", "),
                served.requested
            ),
        )
    };
    if served.retries > 0 {
        sentence.push_str(&format!(
            " It answered after {} retr{} of that deployment.",
            served.retries,
            if served.retries == 1 { "y" } else { "ies" }
        ));
    }
    if served.replaced_parts > 0 {
        sentence.push_str(&format!(
            " {} attachment(s) the model cannot take were replaced by a note.",
            served.replaced_parts
        ));
    }
    json!({
        "model_selection_reason": reason,
        "human_readable": sentence,
        "attempts": served.attempts,
        "deployment": deployment,
        "strategy": served.model.strategy.as_str(),
        "retries": served.retries,
    })
}

/// Sets `model` to the caller's name, charges the request and adds the
/// extensions. The answer leaves only after the charge committed; a held
/// answer goes to the review queue in the charge's transaction instead.
async fn finish(
    state: &AppState,
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
    let extensions = Extensions::new(state, served, false).with_reservations(reservations);
    let output = if extensions.keeps_output() {
        completion.to_string()
    } else {
        String::new()
    };
    if served.compliance.hold {
        // The review releases the answer in the caller's wire.
        let answer = match served.endpoint {
            Endpoint::Messages => messages::translate::to_message(&completion, &served.requested),
            _ => completion,
        };
        let held = extensions
            .charge_held(
                (prompt, completion_tokens),
                None,
                estimated,
                &output,
                answer,
            )
            .await?;
        return Ok(ChatOutcome::Held(held));
    }
    let charged = extensions
        .charge(prompt, completion_tokens, estimated, true, &output, None)
        .await?;
    extensions.apply(&mut completion, &charged);
    Ok(ChatOutcome::Complete(completion))
}

/// The sub-processor registry when the tenant's policy routes only to
/// registered providers (`enforceRegistry`), else `None`: every route reads
/// it once per request and hands it to the deployment walk.
pub(crate) fn registered_providers(
    state: &AppState,
    policy: &CompliancePolicy,
) -> Result<Option<Vec<registry::SubProcessor>>, ApiError> {
    if !policy.enforce_registry {
        return Ok(None);
    }
    state
        .store
        .read(registry::list)
        .map(Some)
        .map_err(|e| ApiError::internal("reading the sub-processor registry", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_price_is_rounded_once_and_refused_when_it_overflows() {
        let pricing = Pricing::PerToken {
            input_per_million: 1_000_000,
            output_per_million: 2_000_000,
            cached_input_per_million: None,
        };
        assert_eq!(cost(&pricing, 10, 5), Some(20));
        let dear = Pricing::PerToken {
            input_per_million: crate::base::money::MAX_CHARGE,
            output_per_million: crate::base::money::MAX_CHARGE,
            cached_input_per_million: None,
        };
        assert_eq!(
            cost(&dear, 1_000_000, 0),
            Some(crate::base::money::MAX_CHARGE)
        );
        assert_eq!(cost(&dear, 1_000_000, 1), None);
        assert_eq!(cost(&dear, u64::MAX, u64::MAX), None);
    }
}
