//! The charge stage: a served request's usage record priced, charged
//! durably through the journal (group commit) with its audit entry,
//! conversation record and review in the same record, then counted and
//! published. [`Extensions`] carries what the charge and the answer's
//! extensions need from the walk to the end of the answer (a stream's
//! included).

use std::sync::Arc;
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::SpanKind;
use serde_json::{Value, json};

use super::charge_record::{AuditFacts, ChargeRecord, HeldFacts};
use super::gate::Compliance;
use super::output::Output;
use super::respond::{billing_view, explain};
use super::{Attempt, Gateway, Served, truncate};
use crate::audit;
use crate::auth::keys::Keys;
use crate::base::error::ApiError;
use crate::base::money::micros_to_credits;
use crate::base::time::now_ms;
use crate::billing::ledger::CreditHold;
use crate::billing::{self, Charged, UsageRecord, limits};
use crate::catalogue::Pricing;
use crate::compliance::Level;
use crate::compliance::conversations::{self, Conversation};
use crate::compliance::incidents::Sampler;
use crate::compliance::reviews::{self, Review};
use crate::events::{Event, Events};
use crate::metrics::{Metrics, StreamGuard};
use crate::pii;
use crate::routing;
use crate::routing::AttemptStatus;
use crate::store::Store;
use crate::traces;

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
    /// Where a charge that cannot be awaited runs (see `charge_detached`).
    tasks: crate::base::tasks::Tasks,
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
    pub fn new(gateway: &Gateway, served: &Served, streamed: bool) -> Extensions {
        if let Some(session) = &served.compliance.pii {
            let counts = session.counts().iter().map(|(l, n)| (pii_label(l), *n));
            gateway
                .metrics
                .pii_redacted(session.mode().as_str(), counts);
        }
        Extensions {
            truncation: served.truncation.as_ref().map(truncate::Receipt::view),
            pricing: served.model.pricing,
            is_fallback: served.is_fallback(),
            started: served.started,
            risk: served.risk.view(),
            explainability: explain(served),
            store: gateway.store.clone(),
            keys: gateway.keys.clone(),
            events: gateway.events.clone(),
            metrics: gateway.metrics.clone(),
            tasks: gateway.tasks.clone(),
            chain: served.chain.clone(),
            attempts: served.attempts.clone(),
            deployment: format!("{}/{}", served.model.provider.id, served.model.upstream),
            retries: served.retries,
            _stream: streamed.then(|| gateway.metrics.stream_open()),
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
            sampler: gateway.sampler.clone(),
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
        output: Output<'_>,
        completed: bool,
        hold: Option<Hold>,
    ) -> ChargeRecord {
        let kept = Kept::of(&self.compliance);
        let held = hold.as_ref().map(|h| h.review_id.as_str());
        let audit = self.audit(record, &kept, completed, held);
        ChargeRecord {
            usage: record.clone(),
            audit,
            conversation: self.conversation(record, kept, output),
            review: hold.map(|hold| self.review(record, hold)),
            day: self.admission.day_row(),
        }
    }

    /// The charge's audit entry: what was charged for what, at which risk,
    /// for whom (a pseudonym) and why, and the review it is held for.
    fn audit(
        &self,
        record: &UsageRecord,
        kept: &Kept,
        completed: bool,
        held: Option<&str>,
    ) -> AuditFacts {
        let c = &self.compliance;
        let subject = c
            .end_user_id
            .as_deref()
            .map(|u| audit::pseudonym(&record.tenant_id, u));
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
            "purpose": kept.purpose,
            "subject": subject,
            "consentId": c.user_consent_id,
            "deployerContext": kept.deployer_context,
            "review": held,
        });
        if let Some(units) = &self.units {
            details["units"] = units.clone();
        }
        AuditFacts {
            outcome: if completed { "ok" } else { "incomplete" }.to_owned(),
            details: crate::base::json::text(&details),
            at: now_ms(),
        }
    }

    /// The conversation record, when the tenant's policy logs bodies: the
    /// request and the answer's `output` as the logs keep them, until the
    /// retention of the request's risk level runs out.
    fn conversation(
        &self,
        record: &UsageRecord,
        kept: Kept,
        output: Output<'_>,
    ) -> Option<Conversation> {
        let c = &self.compliance;
        let retention_days = if self.level >= Level::High {
            c.policy.high_risk_retention_days
        } else {
            c.policy.retention_days
        };
        c.policy.log_bodies.then(|| Conversation {
            request_id: record.request_id.clone(),
            tenant_id: record.tenant_id.clone(),
            key_id: record.key_id.clone(),
            at: record.at,
            expires_at: record.at + i64::from(retention_days) * conversations::DAY_MS,
            purpose: kept.purpose,
            end_user_id: c.end_user_id.clone(),
            deployer_context: kept.deployer_context.as_ref().map(Value::to_string),
            level: self.level.as_str().to_owned(),
            rules: self.rules.clone(),
            model: record.model.clone(),
            cost: record.cost,
            request: c.request.clone().unwrap_or_default(),
            response: output.logged(c),
            erased: false,
        })
    }

    /// The pending review a held answer becomes, with the completion it
    /// holds back, until the policy's review time runs out.
    fn review(&self, record: &UsageRecord, hold: Hold) -> HeldFacts {
        let c = &self.compliance;
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
            completion: crate::base::json::text(&hold.completion),
            is_fallback: self.is_fallback,
            latency_ms: self.started.elapsed().as_millis() as u64,
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
        output: impl Into<Output<'_>>,
        hold: Option<Hold>,
    ) -> Result<Charged, ApiError> {
        // The upstream spent the tokens whether or not the charge fits.
        self.settle(prompt_tokens + completion_tokens);
        let record = self.record(prompt_tokens, completion_tokens, estimated)?;
        self.commit(record, completed, output.into(), hold).await
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
        output: impl Into<Output<'_>>,
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
        self.commit(record, true, output.into(), Some(hold)).await?;
        tracing::info!(review = %review_id, request_id = %self.record.request_id, "answer held for human review");
        Ok(json!({ "id": review_id, "object": "review", "status": "pending" }))
    }

    /// Charges a cost the caller priced (images and audio, billed by
    /// units other than tokens); chat's token pricing is not involved.
    pub async fn charge_priced(
        &self,
        cost: u64,
        estimated: bool,
        output: impl Into<Output<'_>>,
        hold: Option<Hold>,
    ) -> Result<Charged, ApiError> {
        let record = UsageRecord {
            cost,
            ..self.record(0, 0, estimated)?
        };
        self.commit(record, true, output.into(), hold).await
    }

    async fn commit(
        &self,
        record: UsageRecord,
        completed: bool,
        output: Output<'_>,
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
                output.answer_text()
            });
        self.after_charge().run(&record, &charged, completed);
        Ok(charged)
    }

    /// Charges from a context that cannot wait (a stream dropped by its
    /// caller): the charge runs on its own task and still commits.
    pub fn charge_detached<'o>(
        &self,
        prompt_tokens: u64,
        completion_tokens: u64,
        estimated: bool,
        output: impl Into<Output<'o>>,
    ) {
        self.settle(prompt_tokens + completion_tokens);
        // Already logged by `record` when refused.
        let Ok(record) = self.record(prompt_tokens, completion_tokens, estimated) else {
            return;
        };
        let entry = self.charge_record(&record, output.into(), false, None);
        let (store, keys) = (self.store.clone(), self.keys.clone());
        // The task keeps the reservation until the charge is in memory.
        let hold = self.admission.clone();
        let after = self.after_charge();
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

    /// What follows this request's charge once committed.
    fn after_charge(&self) -> AfterCharge {
        AfterCharge {
            events: self.events.clone(),
            metrics: self.metrics.clone(),
            chain: self.chain.clone(),
            attempts: self.attempts.clone(),
            deployment: self.deployment.clone(),
            retries: self.retries,
        }
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

/// A placeholder type as a bounded metrics label: a known type's own,
/// `CUSTOM` for a tenant's pattern.
fn pii_label(label: &str) -> &'static str {
    pii::Kind::ALL
        .iter()
        .map(|k| k.label())
        .find(|l| *l == label)
        .unwrap_or("CUSTOM")
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

/// The service fields the audit entry and the conversation log keep, with
/// the request's placeholders for personal data.
struct Kept {
    purpose: Option<String>,
    deployer_context: Option<Value>,
}

impl Kept {
    fn of(c: &Compliance) -> Kept {
        Kept {
            purpose: c.purpose.as_deref().map(|p| c.logged(p).into_owned()),
            deployer_context: c.deployer_context.as_ref().map(|d| {
                let mut d = d.clone();
                if let Some(session) = &c.pii {
                    session.clone().redact_json(&mut d);
                }
                d
            }),
        }
    }
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
                status: AttemptStatus::Ok,
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
                .publish_with(crate::events::EventKind::RequestCompleted, || {
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
