//! The walk over one model's deployments (docs/routing.md): the router's
//! order, same-deployment retries with backoff within the request's retry
//! budget, cooldown bookkeeping and its event; and the token reservations
//! a chat request makes against its key's and its model's limits.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use opentelemetry::context::FutureExt as _;

use super::attempt::AttemptSpan;
use super::{Attempt, AttemptStatus, first_chunk, tokens};
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::base::time::now_ms;
use crate::billing::limits;
use crate::catalogue::Model;
use crate::compliance::registry;
use crate::events::Event;
use crate::gateway::Gateway;
use crate::providers::wire::chat::ChatRequest;
use crate::providers::{Failure, Providers, Reply, UpstreamError};
use crate::routing;
use crate::upstream::RetryPolicy;

/// One model's deployments walked for one request: each that can take it
/// in the router's order, each retried on a retryable failure within the
/// policy of its provider, every attempt (the first included) within the
/// request's time budget: the model's `request_timeout` from its first
/// attempt, else the deployment's provider's from the first attempt on
/// that deployment. Chat, the native passthroughs and the media routes
/// share it; each says what one attempt is ([`Call`]).
pub(super) struct Walk<'a> {
    pub(super) gateway: &'a Gateway,
    /// Whose request it is (the cooldown event goes to that tenant).
    pub(super) tenant_id: &'a str,
    pub(super) model: &'a Arc<Model>,
    /// The name the caller used.
    pub(super) name: &'a str,
    pub(super) registered: Option<&'a [registry::SubProcessor]>,
}

/// What one route sends to one deployment.
pub(super) trait Call {
    type Reply;
    /// An attempt's failure: the upstream's error, and whatever the route
    /// relays of it (the native passthroughs relay the upstream's body).
    type Error: AsRef<UpstreamError>;
    /// The `gen_ai.operation.name` of each attempt's client span.
    fn operation(&self) -> &'static str;
    /// Why `deployment` cannot take this request at all (its provider's
    /// kind has no such endpoint): a status and a message. Such a
    /// deployment is never called; it is named in the attempts only when
    /// no other one served.
    fn unfit(&self, deployment: &Model) -> Option<(AttemptStatus, String)> {
        let _ = deployment;
        None
    }
    /// One attempt at `deployment` (the model as that deployment). It ends
    /// once the answer is whole, or, for a stream, at its first chunk: no
    /// byte reached the caller before it returns, so a failure may be
    /// retried.
    fn attempt(
        &self,
        deployment: Arc<Model>,
    ) -> impl Future<Output = Result<Self::Reply, Self::Error>> + Send;
}

impl AsRef<UpstreamError> for UpstreamError {
    fn as_ref(&self) -> &UpstreamError {
        self
    }
}

/// How a walk ended.
pub(super) enum Walked<R, E> {
    Served {
        reply: R,
        /// The model as the deployment that served it.
        view: Arc<Model>,
        retries: u32,
        in_flight: routing::InFlight,
    },
    /// The upstream refused the request itself (400, 413, 422): final, no
    /// other deployment or model is tried.
    Refused { error: E, view: Arc<Model> },
    /// Every deployment failed (recorded in the attempts): the next model
    /// of the chain may serve. `last` is the last failure an attempt
    /// returned, if any deployment was called.
    Failed { last: Option<(E, Arc<Model>)> },
}

impl<R> Walked<R, UpstreamError> {
    /// A single-model route's outcome (media, embeddings: no fallback
    /// chain): the served reply with the deployment that served it, its
    /// retries and its in-flight mark; an upstream refusal relayed; every
    /// deployment failed, the route's own `exhausted` error.
    pub(super) fn served_or(
        self,
        exhausted: impl FnOnce() -> ApiError,
    ) -> Result<(R, Arc<Model>, u32, routing::InFlight), ApiError> {
        match self {
            Walked::Served {
                reply,
                view,
                retries,
                in_flight,
            } => Ok((reply, view, retries, in_flight)),
            Walked::Refused { error, view } => Err(super::relay_refusal(&view, &error)),
            Walked::Failed { .. } => Err(exhausted()),
        }
    }
}

impl Walk<'_> {
    /// Walks the model's deployments that can take the request, in the
    /// router's order, until one serves or refuses the request itself;
    /// every failed or skipped deployment is recorded in `attempts` (the
    /// unfit ones last, and only when none served).
    pub(super) async fn run<C: Call>(
        &self,
        call: &C,
        attempts: &mut Vec<Attempt>,
    ) -> Walked<C::Reply, C::Error> {
        let model = self.model;
        let unfit: Vec<(usize, AttemptStatus, String)> = (0..model.deployments.len())
            .filter_map(|i| {
                call.unfit(&model.on(i))
                    .map(|(status, message)| (i, status, message))
            })
            .collect();
        let (order, forced) = self.gateway.router.order_among(
            model,
            &|i| !unfit.iter().any(|(u, _, _)| *u == i),
            Instant::now(),
            &mut routing::random_unit,
        );
        let started = Instant::now();
        let mut last = None;
        for index in order {
            let tried = Tried::new(self.name, model, index);
            let view = Arc::new(model.on(index));
            if !self.may_call(&view) {
                attempts.push(tried.attempt(
                    AttemptStatus::NotInRegistry,
                    0,
                    0,
                    format!(
                        "the provider `{}` is not in the sub-processor registry, and the tenant policy routes only to registered ones",
                        view.provider.id
                    ),
                ));
                continue;
            }
            let deadline = match model.request_timeout {
                Some(budget) => started + budget,
                None => Instant::now() + view.provider.request_timeout,
            };
            // The model's budget went on the deployments tried before.
            if Instant::now() >= deadline {
                let spent = UpstreamError::new(Failure::Timeout, TIMEOUT_SPENT);
                attempts.push(tried.attempt(
                    AttemptStatus::Failed(spent.failure),
                    0,
                    0,
                    spent.message,
                ));
                continue;
            }
            let on = On {
                tried: &tried,
                view,
                deadline,
                forced,
            };
            match self.deployment(call, on, attempts).await {
                ControlFlow::Break(walked) => return walked,
                ControlFlow::Continue(failed) => last = failed.or(last),
            }
        }
        for (index, status, message) in unfit {
            attempts.push(Tried::new(self.name, model, index).attempt(status, 0, 0, message));
        }
        Walked::Failed { last }
    }

    /// Whether the tenant's policy lets the walk call `view`'s provider:
    /// always, unless it routes only to registered sub-processors.
    fn may_call(&self, view: &Model) -> bool {
        self.registered
            .is_none_or(|registered| registered.iter().any(|e| e.name == view.provider.id))
    }

    /// One deployment tried, and retried after a failure that may pass on
    /// the same deployment, within its provider's retry policy and the
    /// deadline. Breaks with the walk's end (served, or the request itself
    /// refused); continues with the deployment's last upstream failure,
    /// its final attempt recorded.
    async fn deployment<C: Call>(
        &self,
        call: &C,
        on: On<'_>,
        attempts: &mut Vec<Attempt>,
    ) -> ControlFlow<Walked<C::Reply, C::Error>, Option<(C::Error, Arc<Model>)>> {
        let (gateway, view) = (self.gateway, &on.view);
        let policy = view.provider.retry;
        let mut retries = 0;
        let mut last = None;
        loop {
            // Another request took the probe of this resting deployment
            // since the order was drawn.
            let Some(in_flight) =
                gateway
                    .router
                    .begin(self.model, on.tried.index, Instant::now(), on.forced)
            else {
                attempts.push(on.tried.attempt(
                    AttemptStatus::Cooldown,
                    0,
                    retries,
                    "the deployment is cooling down and another request is probing it".into(),
                ));
                return ControlFlow::Continue(last);
            };
            let (outcome, elapsed) = self.attempt(call, view, on.deadline).await;
            let failure = match outcome {
                Ok(reply) => {
                    gateway.router.success(in_flight.key(), elapsed);
                    return ControlFlow::Break(Walked::Served {
                        reply,
                        view: on.view,
                        retries,
                        in_flight,
                    });
                }
                Err(failure) => failure,
            };
            drop(in_flight);
            let error = failure.error();
            tracing::info!(model = %self.name, deployment = %on.tried.deployment, retries, status = %error.status_label(), "upstream attempt failed");
            let resting = error.retries_same_deployment() && self.cool_down(on.tried.index, view);
            let recorded = on.tried.attempt(
                AttemptStatus::Failed(error.failure),
                elapsed.as_millis() as u64,
                retries,
                error.message.clone(),
            );
            let wait = (!resting)
                .then(|| retry_wait(error, policy, retries, on.deadline))
                .flatten();
            let final_refusal = !error.retryable();
            if let Failed::Upstream(failure) = failure {
                if final_refusal {
                    attempts.push(recorded);
                    return ControlFlow::Break(Walked::Refused {
                        error: failure,
                        view: on.view,
                    });
                }
                last = Some((failure, view.clone()));
            }
            let Some(wait) = wait else {
                attempts.push(recorded);
                return ControlFlow::Continue(last);
            };
            retries += 1;
            gateway.metrics.retry(&view.provider.id);
            tokio::time::sleep(wait).await;
        }
    }

    /// One attempt at `view`, cut at `deadline` (no attempt, the first
    /// included, runs past the budget), in its own client span and counted
    /// in the upstream metrics: its outcome and how long it took.
    async fn attempt<C: Call>(
        &self,
        call: &C,
        view: &Arc<Model>,
        deadline: Instant,
    ) -> (Result<C::Reply, Failed<C::Error>>, Duration) {
        let attempt_started = Instant::now();
        // One client span per upstream attempt, retries included.
        let span = AttemptSpan::start(call.operation(), view);
        let sent = call.attempt(view.clone()).with_context(span.context());
        let left = deadline.saturating_duration_since(Instant::now());
        let outcome = match tokio::time::timeout(left, sent).await {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(failure)) => Err(Failed::Upstream(failure)),
            Err(_) => Err(Failed::Spent(UpstreamError::new(
                Failure::Timeout,
                TIMEOUT_SPENT,
            ))),
        };
        let elapsed = attempt_started.elapsed();
        let status = match &outcome {
            Ok(_) => {
                span.served();
                AttemptStatus::Ok
            }
            Err(failure) => {
                let failure = failure.error().failure;
                let code = match failure {
                    Failure::Status(code) => Some(code),
                    _ => None,
                };
                span.failed(code, failure.label().into_owned());
                AttemptStatus::Failed(failure)
            }
        };
        self.gateway
            .metrics
            .upstream(&view.provider.id, &status.label(), elapsed);
        (outcome, elapsed)
    }

    /// Counts a failure against deployment `index`; when that puts it to
    /// rest, logs, counts and publishes the cooldown. Whether it rests now.
    fn cool_down(&self, index: usize, view: &Model) -> bool {
        let gateway = self.gateway;
        let Some(cooled) =
            gateway
                .router
                .failure(self.model, index, view.provider.cooldown, Instant::now())
        else {
            return false;
        };
        tracing::warn!(model = %cooled.model, deployment = %cooled.deployment, failures = cooled.failures, seconds = cooled.seconds, "deployment cooling down");
        gateway.metrics.cooldown(&cooled.model, &cooled.deployment);
        gateway
            .events
            .publish(Event::deployment_cooldown(self.tenant_id, &cooled));
        true
    }
}

/// How long to wait before retrying the same deployment after `error`:
/// only after a failure that may pass there, within the policy's retries,
/// and only when the wait ends before the deadline.
fn retry_wait(
    error: &UpstreamError,
    policy: RetryPolicy,
    retries: u32,
    deadline: Instant,
) -> Option<Duration> {
    (error.retries_same_deployment() && retries < policy.max_retries)
        .then(|| {
            routing::backoff(
                policy,
                retries + 1,
                error.retry_after,
                routing::random_unit(),
            )
        })
        .flatten()
        .filter(|wait| Instant::now() + *wait < deadline)
}

/// One deployment of the walk as its attempts name it: the model by the
/// caller's name, the deployment's provider and label.
struct Tried<'a> {
    name: &'a str,
    index: usize,
    provider: &'a str,
    deployment: String,
}

impl<'a> Tried<'a> {
    fn new(name: &'a str, model: &'a Model, index: usize) -> Tried<'a> {
        let deployment = &model.deployments[index];
        Tried {
            name,
            index,
            provider: &deployment.provider.id,
            deployment: deployment.label(),
        }
    }

    fn attempt(
        &self,
        status: AttemptStatus,
        latency_ms: u64,
        retries: u32,
        message: String,
    ) -> Attempt {
        Attempt {
            model: self.name.to_owned(),
            provider: self.provider.to_owned(),
            deployment: self.deployment.clone(),
            status,
            latency_ms,
            retries,
            message,
        }
    }
}

/// A deployment being tried: the model as that deployment, the request's
/// deadline on it, and whether the router forced it (every deployment
/// resting).
struct On<'a> {
    tried: &'a Tried<'a>,
    view: Arc<Model>,
    deadline: Instant,
    forced: bool,
}

/// An attempt's failure: the route's own, or the time budget running out.
enum Failed<E> {
    Upstream(E),
    Spent(UpstreamError),
}

impl<E: AsRef<UpstreamError>> Failed<E> {
    fn error(&self) -> &UpstreamError {
        match self {
            Failed::Upstream(failure) => failure.as_ref(),
            Failed::Spent(error) => error,
        }
    }
}

/// Chat's attempt: the prepared body, its `model` the deployment's
/// upstream name, to any kind of provider (the providers translate).
pub(super) struct ChatCall<'a> {
    pub(super) providers: &'a Providers,
    pub(super) body: Value,
    pub(super) stream: bool,
}

impl Call for ChatCall<'_> {
    type Reply = Reply;
    type Error = UpstreamError;

    fn operation(&self) -> &'static str {
        "chat"
    }

    fn attempt(
        &self,
        deployment: Arc<Model>,
    ) -> impl Future<Output = Result<Reply, UpstreamError>> + Send {
        let mut body = self.body.clone();
        body["model"] = Value::String(deployment.upstream.clone());
        async move {
            match self.providers.chat(&deployment, body, self.stream).await {
                Ok(Reply::Stream(chunks)) => first_chunk(chunks, &deployment).await,
                other => other,
            }
        }
    }
}

/// Why an attempt was cut, or a deployment not tried: the time budget.
const TIMEOUT_SPENT: &str = "no answer within the request's request_timeout_ms";

/// Reserves the request's tokens against the key's `tpmLimit`: the prompt
/// as estimated plus the completion it allows itself (`max_tokens`). The
/// charge replaces the reservation by the upstream's usage.
pub(super) fn reserve_key_tokens(
    gateway: &Gateway,
    key: &ApiKey,
    request: &ChatRequest,
) -> Result<Option<limits::Reservation>, ApiError> {
    if key.tpm_limit.is_none() {
        return Ok(None);
    }
    let body = Value::Object(request.body.clone());
    let allowance = body["max_tokens"]
        .as_u64()
        .or_else(|| body["max_completion_tokens"].as_u64())
        .unwrap_or(0);
    hold_key_tokens(
        gateway,
        key,
        tokens::estimate_messages(&body["messages"]) + allowance,
    )
}

/// Reserves `reserve` tokens against the key's `tpmLimit`, if it has one.
pub(super) fn hold_key_tokens(
    gateway: &Gateway,
    key: &ApiKey,
    reserve: u64,
) -> Result<Option<limits::Reservation>, ApiError> {
    let Some(limit) = key.tpm_limit else {
        return Ok(None);
    };
    let scope = key.rotated_from.as_deref().unwrap_or(&key.id);
    match gateway.key_tokens.hold(scope, limit, reserve, now_ms()) {
        Ok(reservation) => Ok(Some(reservation)),
        Err(decision) => {
            let mut error = ApiError::new(
                Code::TokenRateLimitExceeded,
                format!(
                    "this key allows {limit} tokens per minute and {} are left; this request reserves {reserve}; retry in {} s",
                    decision.remaining,
                    decision.retry_after_seconds()
                ),
            );
            error.retry_after = Some(decision.retry_after_seconds() as u64);
            Err(error)
        }
    }
}

/// Admits one request to a model with its own `rpm_limit` / `tpm_limit`
/// (across all keys), reserving `reserve` tokens; 429
/// `model_rate_limit_exceeded` when it has no room. Routes that serve one
/// model (the native passthroughs) refuse at once; the chat route skips to
/// the next model of its chain instead.
pub(super) fn hold_model(
    gateway: &Gateway,
    model: &Model,
    reserve: u64,
) -> Result<Option<limits::Reservation>, ApiError> {
    gateway
        .model_limits
        .admit(
            &model.id,
            model.rpm_limit,
            model.tpm_limit,
            reserve,
            now_ms(),
        )
        .map_err(|refusal| {
            let mut error = ApiError::new(Code::ModelRateLimitExceeded, refusal.message);
            error.retry_after = Some(refusal.retry_after_seconds as u64);
            error
        })
}

/// The completion tokens a request may use, reserved against a model's
/// token limit with its prompt: its `max_tokens` (or
/// `max_completion_tokens`), else the model's `max_output_tokens`, else
/// none (the prompt alone is reserved).
pub(super) fn completion_allowance(body: &Value, model: &Model) -> u64 {
    body["max_tokens"]
        .as_u64()
        .or_else(|| body["max_completion_tokens"].as_u64())
        .or(model.max_output_tokens.map(u64::from))
        .unwrap_or(0)
}
