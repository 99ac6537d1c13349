//! The classify-and-gate stage: the request's risk (rules, then the judge
//! in a grey zone), the refusals of what may not go upstream, and what the
//! compliance records of the request carry from the gate to the charge
//! ([`Compliance`]: policy, service fields, the logged request, whether the
//! answer is held for review, the PII redaction).

use opentelemetry::KeyValue;
use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::{SpanKind, TraceContextExt as _};
use serde_json::Value;

use super::Gateway;
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::compliance::{Classification, Level, consents};
use crate::pii;
use crate::providers::wire::chat::{ChatRequest, ServiceFields};
use crate::tenants::{CompliancePolicy, ReviewMode};
use crate::traces;

/// What the gate reads of a request, whatever its route: its text as chat
/// messages (the rules and the judge read them) and its service fields.
/// Chat builds it from its request ([`GateInput::chat`]);
/// a route that is not chat from the text it carries ([`GateInput::text`]).
pub struct GateInput<'a> {
    pub messages: &'a Value,
    pub service: &'a ServiceFields,
}

impl<'a> GateInput<'a> {
    /// `text` as the one user message (`messages` holds it for the
    /// borrow).
    pub fn text(messages: &'a mut Value, text: &str, service: &'a ServiceFields) -> GateInput<'a> {
        *messages = serde_json::json!([{ "role": "user", "content": text }]);
        GateInput { messages, service }
    }

    /// What the gate reads of a chat request: its messages and its service
    /// fields.
    pub fn chat(request: &'a ChatRequest) -> GateInput<'a> {
        GateInput {
            messages: request.body.get("messages").unwrap_or(&Value::Null),
            service: &request.service,
        }
    }
}

/// Whether the tenant's policy holds an answer of this risk for human
/// review instead of returning it (DESIGN 7.3): the one hold rule of every
/// route.
pub(crate) fn holds(policy: &CompliancePolicy, risk: &Classification) -> bool {
    match policy.review_mode {
        ReviewMode::Off => false,
        ReviewMode::HighRisk => risk.level >= Level::High,
        ReviewMode::All => true,
    }
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
    /// The records of a request gated as `risk`, whose body as sent is
    /// `sent` (redacted here for the logs), with its service fields.
    pub(crate) fn new(
        policy: &CompliancePolicy,
        service: &ServiceFields,
        sent: &str,
        risk: &Classification,
    ) -> Compliance {
        let hold = holds(policy, risk);
        let (pii, logged) = redacted_request(policy, sent);
        Compliance {
            policy: policy.clone(),
            purpose: service.purpose.clone(),
            end_user_id: service.end_user_id.clone(),
            deployer_context: service.deployer_context.clone(),
            user_consent_id: service.user_consent_id.clone(),
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
fn redacted_request(policy: &CompliancePolicy, raw: &str) -> (Option<pii::Session>, String) {
    if policy.pii_redaction == pii::Mode::Off {
        return (None, raw.to_owned());
    }
    let mut session = pii::Session::new(policy.pii_redaction, &policy.pii_patterns);
    let logged = session.redact_document(raw);
    (Some(session), logged)
}

/// Classifies the request and refuses, in this order, what may not go
/// upstream: an Article 5 practice for every key, a high-risk use on a key
/// without `allowHighRisk`, and a high-risk use without the purpose or the
/// valid consent the tenant policy requires. Every inference route calls
/// it, so each has the same `classify` span and `tollgate.risk.level` on
/// its server span (docs/observability.md), refused or not.
pub(crate) async fn gate(
    gateway: &Gateway,
    key: &ApiKey,
    policy: &CompliancePolicy,
    request: &GateInput<'_>,
    request_id: &str,
) -> Result<Classification, ApiError> {
    let classifying = traces::child(|| "classify".into(), SpanKind::Internal, Vec::new);
    let risk = async {
        let rules_only = gateway.classifier.classify(
            request.service.purpose.as_deref(),
            request.service.deployer_context.as_ref(),
            request.messages,
        );
        crate::gateway::judge::decide(gateway.judge(), policy, request, rules_only).await
    }
    .with_context(classifying.clone())
    .await;
    let level = KeyValue::new("tollgate.risk.level", risk.level.as_str());
    classifying.span().set_attribute(level.clone());
    drop(classifying);
    traces::record(|| vec![level]);
    refuse(gateway, key, policy, request, request_id, risk)
}

/// [`gate`]'s refusals of a classified request.
fn refuse(
    gateway: &Gateway,
    key: &ApiKey,
    policy: &CompliancePolicy,
    request: &GateInput<'_>,
    request_id: &str,
    risk: Classification,
) -> Result<Classification, ApiError> {
    let rules = risk.triggered_rules().join(", ");
    match risk.level {
        Level::Prohibited => {
            tracing::warn!(key = %key.id, rules = %rules, "prohibited use refused");
            gateway.sampler.offer_refusal(&key.tenant_id, request_id);
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
                    .service
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
                let Some(id) = request.service.user_consent_id.as_deref() else {
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
                let checked = gateway
                    .store
                    .read_committed(|tx| {
                        consents::check(
                            tx,
                            &key.tenant_id,
                            id,
                            request.service.end_user_id.as_deref(),
                        )
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
