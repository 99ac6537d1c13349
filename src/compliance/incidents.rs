//! Serious incidents (Article 73): filed by a person on
//! `POST /api/v1/incidents` or by the monitoring [`Sampler`], each with a
//! reporting deadline from its severity: 2 days for a widespread
//! infringement or a critical-infrastructure disruption, 10 days when a
//! person died, 15 days for any other serious incident.
//!
//! The sampler examines a configurable share of served responses (their
//! text is classified like a request: an output rated `prohibited` is an
//! incident) and counts refusals of prohibited uses per tenant (a burst in
//! one window is an incident). It runs off the request path: the gateway
//! only offers samples to a bounded channel and never waits for it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::audit::{self, Draft};
use crate::base::ids::new_id;
use crate::base::time::{format_rfc3339, now_ms};
use crate::compliance::{Classifier, Level, scoped};
use crate::events::{Event, Events};
use crate::store::tables::INCIDENTS;
use crate::store::{Reader, Store, StoreError, Table};

pub const INCIDENT_TABLE: Table<Incident> = Table::new(INCIDENTS);
const DAY_MS: i64 = 86_400_000;
const MAX_LINKED: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Widespread infringement or critical-infrastructure disruption.
    Critical,
    /// A person died.
    Fatal,
    /// Any other serious incident.
    Serious,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Fatal => "fatal",
            Severity::Serious => "serious",
        }
    }

    pub fn parse(text: &str) -> Option<Severity> {
        match text {
            "critical" => Some(Severity::Critical),
            "fatal" => Some(Severity::Fatal),
            "serious" => Some(Severity::Serious),
            _ => None,
        }
    }

    /// Article 73(2)-(4).
    pub fn reporting_days(self) -> i64 {
        match self {
            Severity::Critical => 2,
            Severity::Fatal => 10,
            Severity::Serious => 15,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Open,
    Reported,
    Closed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Reported => "reported",
            Status::Closed => "closed",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        match text {
            "open" => Some(Status::Open),
            "reported" => Some(Status::Reported),
            "closed" => Some(Status::Closed),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Incident {
    pub id: String,
    pub tenant_id: String,
    pub severity: Severity,
    pub category: String,
    pub description: String,
    pub request_ids: Vec<String>,
    pub status: Status,
    /// `manual` or `sampler`.
    pub source: String,
    pub created_by: String,
    pub created_at: i64,
    pub report_deadline: i64,
    pub updated_at: i64,
    pub reported_at: Option<i64>,
    pub closed_at: Option<i64>,
}

impl Incident {
    pub fn view(&self) -> Value {
        json!({
            "id": self.id,
            "tenantId": self.tenant_id,
            "severity": self.severity.as_str(),
            "category": self.category,
            "description": self.description,
            "requestIds": self.request_ids,
            "status": self.status.as_str(),
            "source": self.source,
            "createdBy": self.created_by,
            "createdAt": format_rfc3339(self.created_at),
            "reportDeadline": format_rfc3339(self.report_deadline),
            "updatedAt": format_rfc3339(self.updated_at),
            "reportedAt": self.reported_at.map(format_rfc3339),
            "closedAt": self.closed_at.map(format_rfc3339),
        })
    }

    pub fn event(&self) -> Event {
        Event::incident_created(
            &self.id,
            &self.tenant_id,
            self.severity.as_str(),
            &self.category,
            &self.source,
            self.report_deadline,
            self.created_at,
        )
    }
}

/// What a filing names.
#[derive(Debug, Clone)]
pub struct Filing {
    pub tenant_id: String,
    pub severity: Severity,
    pub category: String,
    pub description: String,
    pub request_ids: Vec<String>,
    pub source: &'static str,
    pub created_by: String,
}

fn checked(filing: &Filing) -> Result<(), StoreError> {
    let category = filing.category.trim();
    if category.is_empty() || category.len() > 100 || category.chars().any(char::is_control) {
        return Err(StoreError::Invalid(
            "`category` must be 1 to 100 printable characters".into(),
        ));
    }
    if filing.description.len() > 10_000 {
        return Err(StoreError::Invalid(
            "`description` is at most 10000 bytes".into(),
        ));
    }
    if filing.request_ids.len() > MAX_LINKED {
        return Err(StoreError::Invalid(format!(
            "at most {MAX_LINKED} `requestIds`"
        )));
    }
    Ok(())
}

/// Files an incident (with its audit entry, in one transaction); the
/// caller publishes its event.
pub async fn file(store: &Store, filing: Filing) -> Result<Incident, StoreError> {
    checked(&filing)?;
    let now = now_ms();
    let incident = Incident {
        id: new_id("inc"),
        tenant_id: filing.tenant_id.clone(),
        severity: filing.severity,
        category: filing.category.trim().to_owned(),
        description: filing.description.clone(),
        request_ids: filing.request_ids.clone(),
        status: Status::Open,
        source: filing.source.to_owned(),
        created_by: filing.created_by.clone(),
        created_at: now,
        report_deadline: now + filing.severity.reporting_days() * DAY_MS,
        updated_at: now,
        reported_at: None,
        closed_at: None,
    };
    let stored = incident.clone();
    store
        .write(move |txn| {
            INCIDENT_TABLE.put(txn, stored.id.as_bytes(), &stored)?;
            if stored.source == "sampler" {
                audit::append(
                    txn,
                    &Draft::new(
                        &stored.tenant_id,
                        "system".into(),
                        "incident.file",
                        &stored.id,
                    )
                    .details(json!({
                        "severity": stored.severity.as_str(),
                        "category": stored.category,
                        "requestIds": stored.request_ids,
                    })),
                )?;
            }
            Ok(())
        })
        .await?;
    Ok(incident)
}

/// Moves an incident along open -> reported -> closed (or reopens it).
pub async fn set_status(
    store: &Store,
    tenant_id: Option<String>,
    id: &str,
    status: Status,
) -> Result<Incident, StoreError> {
    let id = id.to_owned();
    store
        .write(move |txn| {
            let mut incident = get(txn, tenant_id.as_deref(), &id)?;
            let now = now_ms();
            incident.status = status;
            incident.updated_at = now;
            match status {
                Status::Reported => incident.reported_at = incident.reported_at.or(Some(now)),
                Status::Closed => incident.closed_at = Some(now),
                Status::Open => incident.closed_at = None,
            }
            INCIDENT_TABLE.put(txn, incident.id.as_bytes(), &incident)?;
            Ok(incident)
        })
        .await
}

pub fn get(tx: &impl Reader, tenant_id: Option<&str>, id: &str) -> Result<Incident, StoreError> {
    scoped::get(&INCIDENT_TABLE, tx, tenant_id, id, "incident")
}

/// Newest first.
pub fn list(
    tx: &impl Reader,
    tenant_id: Option<&str>,
    status: Option<Status>,
) -> Result<Vec<Incident>, StoreError> {
    scoped::list(
        &INCIDENT_TABLE,
        tx,
        tenant_id,
        |i| status.is_none_or(|s| i.status == s),
        |i| i.created_at,
    )
}

impl scoped::Owned for Incident {
    fn tenant_id(&self) -> &str {
        &self.tenant_id
    }
}

/// How the monitoring sampler runs (configuration).
#[derive(Debug, Clone, Copy)]
pub struct SamplerSettings {
    /// Share of served responses examined, 0.0 to 1.0.
    pub share: f64,
    /// Length of a refusal-counting window.
    pub window: Duration,
    /// Refusals of prohibited uses by one tenant in one window that make
    /// an incident.
    pub refusal_burst: u32,
}

enum Sample {
    Output {
        tenant_id: String,
        request_id: String,
        text: String,
    },
    Refusal {
        tenant_id: String,
        request_id: String,
    },
}

/// The gateway's handle on the sampler.
#[derive(Clone)]
pub struct Sampler {
    queue: Option<mpsc::Sender<Sample>>,
    share_per_million: u64,
    seen: Arc<AtomicU64>,
}

impl Sampler {
    /// A sampler that examines nothing (tests of other parts, the CLI).
    pub fn off() -> Sampler {
        Sampler {
            queue: None,
            share_per_million: 0,
            seen: Arc::default(),
        }
    }

    pub fn start(
        settings: SamplerSettings,
        store: Arc<Store>,
        classifier: Arc<Classifier>,
        events: Events,
        tasks: &crate::base::tasks::Tasks,
    ) -> Sampler {
        let (queue, samples) = mpsc::channel(1024);
        let stop = tasks.stop_token();
        tasks.spawn(async move {
            // Samples still queued at a stop are dropped: sampling is a
            // share of traffic, not a record.
            tokio::select! {
                () = stop.cancelled() => {}
                () = run(settings, samples, store, classifier, events) => {}
            }
        });
        Sampler {
            queue: Some(queue),
            share_per_million: (settings.share.clamp(0.0, 1.0) * 1_000_000.0) as u64,
            seen: Arc::default(),
        }
    }

    /// Whether served responses are examined at all.
    pub fn is_active(&self) -> bool {
        self.queue.is_some() && self.share_per_million > 0
    }

    /// Offers a served response. The share is taken deterministically
    /// (every n-th response), so a share of 1.0 examines every one.
    pub fn offer_output(&self, tenant_id: &str, request_id: &str, text: impl FnOnce() -> String) {
        let Some(queue) = &self.queue else { return };
        if self.share_per_million == 0 {
            return;
        }
        let n = self.seen.fetch_add(1, Ordering::Relaxed);
        let taken =
            (n + 1) * self.share_per_million / 1_000_000 > n * self.share_per_million / 1_000_000;
        if taken {
            let _ = queue.try_send(Sample::Output {
                tenant_id: tenant_id.to_owned(),
                request_id: request_id.to_owned(),
                text: text(),
            });
        }
    }

    /// Counts a refusal of a prohibited use.
    pub fn offer_refusal(&self, tenant_id: &str, request_id: &str) {
        if let Some(queue) = &self.queue {
            let _ = queue.try_send(Sample::Refusal {
                tenant_id: tenant_id.to_owned(),
                request_id: request_id.to_owned(),
            });
        }
    }
}

async fn run(
    settings: SamplerSettings,
    mut samples: mpsc::Receiver<Sample>,
    store: Arc<Store>,
    classifier: Arc<Classifier>,
    events: Events,
) {
    // tenant -> (window start, refused request ids, already filed)
    let mut refusals: HashMap<String, (i64, Vec<String>, bool)> = HashMap::new();
    let window_ms = settings.window.as_millis() as i64;
    while let Some(sample) = samples.recv().await {
        let filing = match sample {
            Sample::Output {
                tenant_id,
                request_id,
                text,
            } => {
                let found =
                    classifier.classify(None, None, &json!([{ "role": "user", "content": text }]));
                (found.level == Level::Prohibited).then(|| Filing {
                    tenant_id,
                    severity: Severity::Serious,
                    category: "prohibited_output".into(),
                    description: format!(
                        "The monitoring sampler rated a served response prohibited: {}",
                        found.reason()
                    ),
                    request_ids: vec![request_id],
                    source: "sampler",
                    created_by: "sampler".into(),
                })
            }
            Sample::Refusal {
                tenant_id,
                request_id,
            } => {
                let now = now_ms();
                let entry = refusals
                    .entry(tenant_id.clone())
                    .or_insert((now, Vec::new(), false));
                if now - entry.0 >= window_ms {
                    *entry = (now, Vec::new(), false);
                }
                if entry.1.len() < MAX_LINKED {
                    entry.1.push(request_id);
                }
                let count = entry.1.len() as u32;
                if count >= settings.refusal_burst && !entry.2 {
                    entry.2 = true;
                    Some(Filing {
                        tenant_id,
                        severity: Severity::Serious,
                        category: "refusal_burst".into(),
                        description: format!(
                            "{count} requests of one tenant were refused as prohibited practices within {} s.",
                            settings.window.as_secs()
                        ),
                        request_ids: entry.1.clone(),
                        source: "sampler",
                        created_by: "sampler".into(),
                    })
                } else {
                    None
                }
            }
        };
        if let Some(filing) = filing {
            match file(&store, filing).await {
                Ok(incident) => {
                    tracing::warn!(incident = %incident.id, tenant = %incident.tenant_id, category = %incident.category, "incident filed by the monitoring sampler");
                    events.publish(incident.event());
                }
                Err(e) => tracing::error!(error = %e, "filing a sampled incident failed"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_follow_article_73() {
        assert_eq!(Severity::Critical.reporting_days(), 2);
        assert_eq!(Severity::Fatal.reporting_days(), 10);
        assert_eq!(Severity::Serious.reporting_days(), 15);
    }
}
