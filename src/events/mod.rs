//! Events and their webhook envelope (spec "Events", DESIGN section 6).
//!
//! An event is built after the commit that caused it (a spend threshold is
//! also kept in the `events` outbox by the charge's own transaction) and
//! handed to [`Events::publish`], which never waits: delivery happens on the
//! dispatcher, at most once, off the caller's path.

pub mod dispatch;
pub mod pending;

use serde_json::{Value, json};

use crate::base::money::micros_to_credits;
use crate::base::time::{format_rfc3339, now_ms};
use crate::billing::{StoredEvent, UsageRecord};
use crate::routing::Attempt;

pub use dispatch::{Delivery, Events, WebhookSettings};

pub use crate::base::event_kind::EventKind;

/// Whose URLs an event goes to (operator URLs get every event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Audience {
    /// That tenant's URLs only.
    Tenant(String),
    /// Every tenant's URLs (a GDPR Article 28 notice).
    EveryTenant,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub kind: EventKind,
    pub audience: Audience,
    /// Unix ms.
    pub at: i64,
    pub data: Value,
}

impl Event {
    /// The exact bytes posted (and signed): `{event, timestamp, data}`.
    /// The data is written where it lies, not copied into a new object
    /// first; the members keep the order an object of them prints in.
    pub fn body(&self) -> Vec<u8> {
        #[derive(serde::Serialize)]
        struct Envelope<'a> {
            data: &'a Value,
            event: &'a str,
            timestamp: String,
        }
        serde_json::to_vec(&Envelope {
            data: &self.data,
            event: self.kind.as_str(),
            timestamp: format_rfc3339(self.at),
        })
        .unwrap_or_default()
    }

    /// A spend event recorded in the outbox by a charge.
    pub fn from_stored(stored: &StoredEvent) -> Event {
        Event {
            kind: stored.event,
            audience: match &stored.tenant_id {
                Some(t) => Audience::Tenant(t.clone()),
                None => Audience::EveryTenant,
            },
            at: stored.at,
            data: serde_json::from_str(&stored.data).unwrap_or(Value::Null),
        }
    }

    /// A request served and billed (DESIGN 7.4).
    pub fn request_completed(record: &UsageRecord) -> Event {
        Event {
            kind: EventKind::RequestCompleted,
            audience: Audience::Tenant(record.tenant_id.clone()),
            at: record.at,
            data: json!({
                "requestId": record.request_id,
                "keyId": record.key_id,
                "tenantId": record.tenant_id,
                "model": record.model,
                "provider": record.provider,
                "promptTokens": record.prompt_tokens,
                "completionTokens": record.completion_tokens,
                "cost": micros_to_credits(record.cost),
                "latencyMs": record.latency_ms,
                "isFallback": record.is_fallback,
            }),
        }
    }

    /// A later model of the chain served after earlier ones failed.
    /// `providerAttempts` lists every attempt in order, the serving one
    /// last with status `ok`.
    pub fn fallback_triggered(
        tenant_id: &str,
        request_id: &str,
        chain: &[String],
        attempts: &[Attempt],
        served_by: &str,
    ) -> Event {
        let mut event = Event::about_chain(
            EventKind::FallbackTriggered,
            tenant_id,
            request_id,
            chain,
            attempts,
        );
        event.data["servedBy"] = json!(served_by);
        event
    }

    /// Every model of the chain failed; the caller got 502.
    pub fn providers_exhausted(
        tenant_id: &str,
        request_id: &str,
        chain: &[String],
        attempts: &[Attempt],
    ) -> Event {
        Event::about_chain(
            EventKind::ProvidersExhausted,
            tenant_id,
            request_id,
            chain,
            attempts,
        )
    }

    /// An event about one request's model chain, for its tenant, now.
    fn about_chain(
        kind: EventKind,
        tenant_id: &str,
        request_id: &str,
        chain: &[String],
        attempts: &[Attempt],
    ) -> Event {
        Event::for_tenant_now(
            kind,
            tenant_id,
            json!({
                "requestId": request_id,
                "modelChain": chain,
                "providerAttempts": attempts_view(attempts),
            }),
        )
    }

    fn for_tenant_now(kind: EventKind, tenant_id: &str, data: Value) -> Event {
        Event {
            kind,
            audience: Audience::Tenant(tenant_id.to_owned()),
            at: now_ms(),
            data,
        }
    }

    /// A deployment entered cooldown after consecutive retryable failures.
    /// It goes to the tenant whose request tripped it (signed, as tenant
    /// deliveries are) and to the operator's URLs.
    pub fn deployment_cooldown(tenant_id: &str, cooled: &crate::routing::Cooled) -> Event {
        Event::for_tenant_now(
            EventKind::DeploymentCooldown,
            tenant_id,
            json!({
                "model": cooled.model,
                "deployment": cooled.deployment,
                "consecutiveFailures": cooled.failures,
                "cooldownSeconds": cooled.seconds,
            }),
        )
    }

    /// An Article 73 incident was persisted (DESIGN 7.4).
    #[allow(clippy::too_many_arguments)]
    pub fn incident_created(
        incident_id: &str,
        tenant_id: &str,
        severity: &str,
        category: &str,
        source: &str,
        report_deadline: i64,
        created_at: i64,
    ) -> Event {
        Event {
            kind: EventKind::IncidentCreated,
            audience: Audience::Tenant(tenant_id.to_owned()),
            at: created_at,
            data: json!({
                "incidentId": incident_id,
                "tenantId": tenant_id,
                "severity": severity,
                "category": category,
                "source": source,
                "reportDeadline": format_rfc3339(report_deadline),
                "createdAt": format_rfc3339(created_at),
            }),
        }
    }

    /// The sub-processor registry changed: every tenant is told.
    pub fn sub_processor_changed(
        action: &str,
        name: &str,
        version: &str,
        changed_at: i64,
    ) -> Event {
        Event {
            kind: EventKind::SubProcessorChanged,
            audience: Audience::EveryTenant,
            at: changed_at,
            data: json!({
                "action": action,
                "name": name,
                "version": version,
                "changed_at": format_rfc3339(changed_at),
            }),
        }
    }
}

fn attempts_view(attempts: &[Attempt]) -> Vec<Value> {
    attempts
        .iter()
        .map(|a| {
            json!({
                "model": a.model,
                "provider": a.provider,
                "deployment": a.deployment,
                "status": a.status.label(),
                "latencyMs": a.latency_ms,
                "retries": a.retries,
            })
        })
        .collect()
}

/// `sha256=<lowercase hex of HMAC-SHA256(secret, body)>`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    use hmac::{KeyInit, Mac};
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .expect("HMAC takes keys of any length");
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256=");
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_rfc_4231_hmac_sha256_in_lowercase_hex() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn the_envelope_has_event_timestamp_in_ms_and_data() {
        let event = Event::sub_processor_changed("created", "openai", "3", 1_700_000_000_123);
        let body: Value = serde_json::from_slice(&event.body()).unwrap();
        assert_eq!(body["event"], "sub_processor.changed");
        assert_eq!(body["timestamp"], "2023-11-14T22:13:20.123Z");
        assert_eq!(body["data"]["changed_at"], "2023-11-14T22:13:20.123Z");
        assert_eq!(body["data"]["version"], "3");
        assert_eq!(event.audience, Audience::EveryTenant);
        let incident =
            Event::incident_created("inc_1", "ten_1", "serious", "health", "manual", 0, 0);
        let body: Value = serde_json::from_slice(&incident.body()).unwrap();
        assert_eq!(body["data"]["source"], "manual");
        assert_eq!(body["data"]["reportDeadline"], "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn the_envelope_bytes_are_those_of_the_object_of_its_members() {
        // Receivers sign and compare raw bytes: the envelope must print as
        // the JSON object of its three members always has (sorted keys).
        let event = Event::sub_processor_changed("updated", "anthropic", "7", 1_700_000_000_001);
        let object = json!({
            "event": event.kind.as_str(),
            "timestamp": format_rfc3339(event.at),
            "data": event.data.clone(),
        });
        assert_eq!(event.body(), serde_json::to_vec(&object).unwrap());
        assert!(event.body().starts_with(br#"{"data":{"#));
    }
}
