//! Webhook delivery: a bounded queue, one dispatcher task, deliveries in
//! parallel up to a bound.
//!
//! [`Events::publish`] only tries to enqueue: a full queue drops the event
//! (logged and counted), so the API caller never waits on a receiver. The
//! dispatcher reads each event's targets from the store when it takes the
//! event, so a URL change or a rotated secret applies to the next event at
//! once. Each delivery is one POST with a 5 second timeout and is never
//! retried. Redirects are not followed, and tenant URLs connect only to
//! public addresses (never through a proxy) unless the operator allows
//! private ones (see [`crate::base::net_guard`]). Logs name a URL's origin only:
//! the path and query of a webhook URL often carry a token.
//!
//! The dispatcher and its deliveries run on a thread of their own (a
//! single-threaded runtime), so webhook work never holds up a request on
//! the runtime's workers.
//!
//! Nothing queued is lost on a clean stop: the dispatcher and its
//! deliveries belong to the server's task set; when it stops, the events still
//! queued go to the pending outbox ([`super::pending`]), and at start the
//! dispatcher delivers what the pending outbox holds before anything else.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::Serialize;
use tokio::sync::{Semaphore, mpsc};
use url::Url;

use super::{Audience, Event, EventKind, pending, signature};
use crate::base::net_guard;
use crate::base::tasks::Tasks;
use crate::base::time::{format_rfc3339, now_ms};
use crate::metrics::Metrics;
use crate::store::Store;
use crate::tenants::{self, TENANT_TABLE};

/// The spec's timeout for each delivery to each URL.
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(5);
/// Deliveries kept per tenant for the dashboard.
pub const RECENT_DELIVERIES: usize = 100;
pub const USER_AGENT: &str = "Service-Webhook/1.0";

/// One delivery attempt, as the dashboard lists it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    pub event: EventKind,
    pub url: String,
    /// The HTTP status, or what went wrong: `timeout`, `refused`,
    /// `blocked`, `error`.
    pub status: String,
    /// `success`, `http_error`, `timeout`, `refused`, `blocked` or `error`.
    pub result: &'static str,
    pub latency_ms: u64,
    pub signed: bool,
    pub at: String,
}

/// The handle every part of the server publishes through.
#[derive(Clone)]
pub struct Events {
    inner: Arc<Inner>,
}

/// An event on the queue, with its pending-outbox row when it has one.
struct Queued {
    event: Event,
    row: Option<Vec<u8>>,
}

struct Inner {
    queue: mpsc::Sender<Queued>,
    metrics: Arc<Metrics>,
    /// Whether any URL is registered anywhere; until one is, events are
    /// counted but not queued.
    wanted: AtomicBool,
    /// Last deliveries per tenant id, newest last.
    recent: Mutex<HashMap<String, VecDeque<Delivery>>>,
}

/// Where one event goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub url: Url,
    /// The signing secret of a tenant URL; `None` for operator URLs.
    pub secret: Option<String>,
    pub tenant_id: Option<String>,
}

/// The operator's webhook settings (`webhook_*` and `WEBHOOK_URLS`,
/// docs/configuration.md).
#[derive(Debug, Clone)]
pub struct WebhookSettings {
    /// Operator-level URLs: every event, unsigned.
    pub operator_urls: Vec<Url>,
    /// Lets tenants register URLs on private, loopback and link-local
    /// addresses.
    pub allow_private_targets: bool,
    /// Events waiting for delivery; when full, new events are dropped.
    pub queue_capacity: usize,
    /// Deliveries in flight at once.
    pub concurrency: usize,
}

impl Events {
    /// Starts the dispatcher on the task set; it first delivers what the
    /// pending outbox holds from before the start.
    pub fn start(
        settings: &WebhookSettings,
        store: Arc<Store>,
        metrics: Arc<Metrics>,
        tasks: &Tasks,
    ) -> Events {
        let (queue, events) = mpsc::channel(settings.queue_capacity);
        let any_tenant_urls = store
            .read(|tx| TENANT_TABLE.all(tx))
            .map(|all| all.iter().any(|t| !t.webhook_urls.is_empty()))
            .unwrap_or(true);
        let handle = Events {
            inner: Arc::new(Inner {
                queue,
                metrics,
                wanted: AtomicBool::new(!settings.operator_urls.is_empty() || any_tenant_urls),
                recent: Mutex::default(),
            }),
        };
        let mut dispatcher = Dispatcher {
            store,
            operator_urls: settings.operator_urls.clone(),
            allow_private: settings.allow_private_targets,
            tenant_client: tenant_client(settings.allow_private_targets),
            operator_client: operator_client(),
            slots: Arc::new(Semaphore::new(settings.concurrency)),
            events: handle.clone(),
            tasks: tasks.clone(),
        };
        // A thread of its own: building, signing and sending a delivery
        // does not take turns with the requests on the runtime's workers.
        tasks
            .spawn_thread("tollgate-webhooks", move |tasks| {
                dispatcher.tasks = tasks;
                dispatcher.run(events)
            })
            .expect("starting the webhook dispatcher's thread");
        handle
    }

    /// Hands an event to the dispatcher without waiting.
    pub fn publish(&self, event: Event) {
        self.inner.metrics.event(event.kind.as_str());
        self.enqueue(event, None);
    }

    /// Hands over an event a charge recorded in the pending outbox (`row`);
    /// the dispatcher takes the row off when it takes the event. A full
    /// queue leaves the row for the next start.
    pub fn publish_recorded(&self, event: Event, row: Vec<u8>) {
        self.inner.metrics.event(event.kind.as_str());
        self.enqueue(event, Some(row));
    }

    fn enqueue(&self, event: Event, row: Option<Vec<u8>>) {
        // A recorded event is queued even when no URL is registered, so
        // its pending row goes away.
        if row.is_none() && !self.inner.wanted.load(Ordering::Relaxed) {
            return;
        }
        match self.inner.queue.try_send(Queued { event, row }) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(queued)) => {
                self.inner.metrics.event_dropped();
                tracing::warn!(event = %queued.event.kind, "webhook queue full; event dropped");
            }
            Err(mpsc::error::TrySendError::Closed(queued)) => {
                self.inner.metrics.event_dropped();
                tracing::warn!(event = %queued.event.kind, "webhook dispatcher stopped; event dropped");
            }
        }
    }

    /// As [`Events::publish`], building the event only when some URL
    /// could receive it (the per-request events cost nothing otherwise).
    pub fn publish_with(&self, kind: EventKind, build: impl FnOnce() -> Event) {
        if self.inner.wanted.load(Ordering::Relaxed) {
            self.publish(build());
        } else {
            self.inner.metrics.event(kind.as_str());
        }
    }

    /// A tenant registered URLs: events must be queued from now on.
    pub fn urls_registered(&self) {
        self.inner.wanted.store(true, Ordering::Relaxed);
    }

    pub fn queue_depth(&self) -> usize {
        self.inner.queue.max_capacity() - self.inner.queue.capacity()
    }

    /// The tenant's last deliveries, newest first.
    pub fn deliveries(&self, tenant_id: &str) -> Vec<Delivery> {
        let recent = self.inner.recent.lock().expect("deliveries lock");
        recent
            .get(tenant_id)
            .map(|d| d.iter().rev().cloned().collect())
            .unwrap_or_default()
    }

    fn record(&self, target: &Target, delivery: Delivery) {
        let label = if target.secret.is_some() {
            "tenant"
        } else {
            "operator"
        };
        self.inner.metrics.delivery(label, delivery.result);
        if let Some(tenant) = &target.tenant_id {
            let mut recent = self.inner.recent.lock().expect("deliveries lock");
            let list = recent.entry(tenant.clone()).or_default();
            if list.len() == RECENT_DELIVERIES {
                list.pop_front();
            }
            list.push_back(delivery);
        }
    }
}

/// The client for tenant URLs: connects only to public addresses unless
/// the operator allows private ones, and never through a proxy.
fn tenant_client(allow_private: bool) -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    net_guard::direct_client(allow_private)
        .timeout(DELIVERY_TIMEOUT)
        .pool_idle_timeout(Duration::from_secs(30))
        .build()
        .expect("building the webhook HTTP client")
}

/// The client for the operator's own URLs, which are trusted: any
/// address, and the environment's proxy if there is one.
fn operator_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(DELIVERY_TIMEOUT)
        .pool_idle_timeout(Duration::from_secs(30))
        .build()
        .expect("building the webhook HTTP client")
}

struct Dispatcher {
    store: Arc<Store>,
    operator_urls: Vec<Url>,
    allow_private: bool,
    tenant_client: reqwest::Client,
    operator_client: reqwest::Client,
    slots: Arc<Semaphore>,
    events: Events,
    tasks: Tasks,
}

impl Dispatcher {
    /// Delivers the pending outbox, then the queue until the task set
    /// stops; what is still queued then goes to the pending outbox.
    async fn run(self, mut queue: mpsc::Receiver<Queued>) {
        let mut interrupted = None;
        match pending::load(&self.store) {
            Ok(rows) => {
                if !rows.is_empty() {
                    tracing::info!(
                        events = rows.len(),
                        "delivering the events left undelivered by the last stop"
                    );
                }
                for (row, event) in rows {
                    if let Err(stopped) = self.take(event, Some(row)).await {
                        // The rest of the rows stay pending.
                        interrupted = stopped;
                        break;
                    }
                }
            }
            Err(e) => tracing::error!(error = %e, "reading the pending events failed"),
        }
        while interrupted.is_none() && !self.tasks.is_stopping() {
            let next = tokio::select! {
                biased;
                () = self.tasks.stopping() => break,
                next = queue.recv() => next,
            };
            let Some(Queued { event, row }) = next else {
                return;
            };
            if let Err(stopped) = self.take(event, row).await {
                interrupted = stopped;
            }
        }
        self.save_queued(interrupted, queue).await;
    }

    /// Takes one event: off the pending outbox first (at most once), then
    /// one delivery task per target. `Err` when the server stops before
    /// every target got its delivery: with the event when no target got
    /// it yet (to save it again), `None` when it stays pending or some
    /// target got it (saving it would deliver it twice there).
    async fn take(&self, event: Event, row: Option<Vec<u8>>) -> Result<(), Option<Event>> {
        if let Some(row) = row {
            match pending::remove(&self.store, vec![row]).await {
                Ok(()) => {}
                Err(crate::store::StoreError::Closed) => return Err(None),
                Err(e) => {
                    // Delivered now, and again after a restart: better
                    // than never.
                    tracing::error!(event = %event.kind, error = %e, "taking an event off the pending outbox failed");
                }
            }
        }
        let targets = match targets(&self.store, &self.operator_urls, &event) {
            Ok(targets) => targets,
            Err(e) => {
                tracing::error!(event = %event.kind, error = %e, "reading webhook targets failed; event dropped");
                return Ok(());
            }
        };
        let body = Bytes::from(event.body());
        let kind = event.kind;
        for (served, target) in targets.into_iter().enumerate() {
            // Waiting here (all slots busy) lets the queue fill, and a
            // full queue drops events: the bound on memory and sockets.
            let slot = tokio::select! {
                slot = self.slots.clone().acquire_owned() => slot,
                () = self.tasks.stopping() => {
                    if served > 0 {
                        tracing::warn!(event = %event.kind, "stopped part way through an event's deliveries; the rest are not made");
                    }
                    return Err((served == 0).then_some(event));
                }
            };
            let Ok(slot) = slot else {
                return Err(None);
            };
            let client = if target.secret.is_some() {
                self.tenant_client.clone()
            } else {
                self.operator_client.clone()
            };
            let (events, body) = (self.events.clone(), body.clone());
            let allow_private = self.allow_private;
            // A loop's task: shutdown waits for deliveries in flight
            // (each bounded by its timeout) within the grace period.
            self.tasks.spawn(async move {
                let delivery = deliver(&client, &target, kind, body, allow_private).await;
                events.record(&target, delivery);
                drop(slot);
            });
        }
        Ok(())
    }

    /// At shutdown: the events still queued go to the pending outbox
    /// (recorded ones are there already), delivered after the next start.
    async fn save_queued(&self, interrupted: Option<Event>, mut queue: mpsc::Receiver<Queued>) {
        queue.close();
        let mut unsaved: Vec<Event> = interrupted.into_iter().collect();
        while let Ok(Queued { event, row }) = queue.try_recv() {
            if row.is_none() {
                unsaved.push(event);
            }
        }
        match pending::save(&self.store, unsaved).await {
            Ok(0) => {}
            Ok(n) => {
                tracing::info!(
                    events = n,
                    "queued webhook events saved for delivery after the next start"
                )
            }
            Err(e) => tracing::error!(error = %e, "saving the queued webhook events failed"),
        }
    }
}

/// The targets of `event`: the operator URLs (unsigned), and the URLs of
/// the tenant(s) it concerns, each signed with its tenant's secret.
pub fn targets(
    store: &Store,
    operator_urls: &[Url],
    event: &Event,
) -> Result<Vec<Target>, crate::store::StoreError> {
    let mut out: Vec<Target> = operator_urls
        .iter()
        .map(|url| Target {
            url: url.clone(),
            secret: None,
            tenant_id: None,
        })
        .collect();
    let tenants = match &event.audience {
        Audience::Tenant(id) => store
            .read_committed(|tx| TENANT_TABLE.get(tx, id.as_bytes()))?
            .into_iter()
            .collect(),
        Audience::EveryTenant => tenants::list(store)?,
    };
    for tenant in tenants {
        for url in &tenant.webhook_urls {
            // Stored URLs were checked when registered.
            let Ok(url) = Url::parse(url) else { continue };
            out.push(Target {
                url,
                secret: Some(tenant.webhook_secret.clone()),
                tenant_id: Some(tenant.id.clone()),
            });
        }
    }
    Ok(out)
}

/// One POST, never retried.
async fn deliver(
    client: &reqwest::Client,
    target: &Target,
    event: EventKind,
    body: Bytes,
    allow_private: bool,
) -> Delivery {
    let started = Instant::now();
    let signed = target.secret.is_some();
    let origin = target.url.origin().ascii_serialization();
    let finish = |status: String, result: &'static str| Delivery {
        event,
        url: target.url.to_string(),
        status,
        result,
        latency_ms: started.elapsed().as_millis() as u64,
        signed,
        at: format_rfc3339(now_ms()),
    };
    if signed
        && !allow_private
        && let Some(ip) = net_guard::private_literal(&target.url)
    {
        tracing::warn!(event = event.as_str(), %origin, %ip, "webhook URL points at a private address; not delivered");
        return finish("blocked".into(), "blocked");
    }
    let mut request = client
        .post(target.url.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::USER_AGENT, USER_AGENT)
        .header("x-service-event", event.as_str());
    if let Some(secret) = &target.secret {
        request = request.header("x-service-signature", signature(secret, &body));
    }
    match request.body(body).send().await {
        Ok(response) if response.status().is_success() => {
            finish(response.status().as_u16().to_string(), "success")
        }
        Ok(response) => {
            let status = response.status().as_u16();
            tracing::warn!(event = event.as_str(), %origin, status, "webhook delivery failed; not retried");
            finish(status.to_string(), "http_error")
        }
        Err(e) => {
            let (status, result) = if e.is_timeout() {
                ("timeout", "timeout")
            } else if net_guard::is_blocked(&e) {
                ("blocked", "blocked")
            } else if e.is_connect() {
                ("refused", "refused")
            } else {
                ("error", "error")
            };
            tracing::warn!(event = event.as_str(), %origin, result, "webhook delivery failed; not retried");
            finish(status.into(), result)
        }
    }
}
