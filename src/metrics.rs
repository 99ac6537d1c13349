//! The Prometheus metrics registry, kept with prometheus-client: every
//! metric, its help text and labels, and the text rendering. It takes
//! plain labels (route patterns, catalogue ids, deployment names): the
//! middleware that counts responses and the `GET /metrics` endpoint that
//! reads router health and the ledger live in the HTTP layer
//! (`api::metrics`).
//!
//! Labels stay bounded: routes are the router's patterns, models are
//! catalogue ids, providers are configured ids, codes come from the error
//! table, and no key, tenant or user id is ever a label. Every metric has
//! help text; `docs/metrics.md` lists them.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::base::error::Code;

/// The content type `promtool` and Prometheus read (exposition 0.0.4).
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    model: String,
    status_class: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabels {
    model: String,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UpstreamLabels {
    provider: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProviderLabels {
    provider: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeploymentLabels {
    model: String,
    deployment: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeliveryLabels {
    target: &'static str,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PiiLabels {
    /// A built-in type (`EMAIL`, `IBAN`, ...) or `CUSTOM` for a tenant's
    /// pattern (tenant-chosen names would make the label unbounded).
    kind: &'static str,
    mode: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EventLabels {
    event: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    // 0.5 ms to about 2 minutes.
    Histogram::new(exponential_buckets(0.0005, 2.5, 14))
}

/// Declares `Metrics` (one field a metric, plus the registry) and
/// `Metrics::new`, which builds each metric and registers it under its name
/// and help text, from one table of rows.
macro_rules! metrics_table {
    ($($field:ident: $ty:ty = $make:expr, $name:literal, $help:literal;)*) => {
        /// Every metric the server keeps.
        pub struct Metrics {
            registry: Registry,
            $($field: $ty,)*
        }

        impl Metrics {
            pub fn new() -> Metrics {
                let mut registry = Registry::default();
                $(
                    let $field: $ty = $make;
                    registry.register($name, $help, $field.clone());
                )*
                Metrics { registry, $($field,)* }
            }
        }
    };
}

// One row a metric: its field, type and constructor, then the name and
// help text it is registered under. Rows register in this order, which is
// the order `GET /metrics` renders them in.
metrics_table! {
    requests: Family<RequestLabels, Counter> = Family::default(),
        "tollgate_http_requests",
        "HTTP requests answered, by route pattern, catalogue model (empty when none) and status class";
    request_duration: HistogramFamily<RouteLabels> = Family::new_with_constructor(latency_histogram),
        "tollgate_http_request_duration_seconds",
        "Time from a request's arrival to its response headers (a stream's body continues after)";
    errors: Family<CodeLabels, Counter> = Family::default(),
        "tollgate_errors",
        "Error responses, by error code";
    refusals: Family<ReasonLabels, Counter> = Family::default(),
        "tollgate_refusals",
        "Requests refused by a limit: rate_limit, multimodal_cap, budget (key creditLimit) or wallet (tenant credits)";
    fallbacks: Family<ModelLabels, Counter> = Family::default(),
        "tollgate_fallbacks",
        "Requests served by a later model of the fallback chain, by the model that served";
    exhausted: Counter = Counter::default(),
        "tollgate_providers_exhausted",
        "Requests for which every model of the chain failed (502 all_providers_failed)";
    upstream_duration: HistogramFamily<UpstreamLabels> = Family::new_with_constructor(latency_histogram),
        "tollgate_upstream_duration_seconds",
        "Time of one upstream attempt until its answer (for streams, its first chunk), by provider and outcome (ok, an HTTP status, timeout, connect_error, ...)";
    upstream_retries: Family<ProviderLabels, Counter> = Family::default(),
        "tollgate_upstream_retries",
        "Retries of the same deployment after a retryable failure, by provider";
    deployment_cooldowns: Family<DeploymentLabels, Counter> = Family::default(),
        "tollgate_deployment_cooldowns",
        "Times a deployment entered cooldown, by model and deployment (provider/upstream)";
    deployment_healthy: Family<DeploymentLabels, Gauge> = Family::default(),
        "tollgate_deployment_healthy",
        "1 while a deployment serves, 0 while it cools down or is being probed, by model and deployment";
    time_to_first_token: HistogramFamily<ModelLabels> = Family::new_with_constructor(latency_histogram),
        "tollgate_stream_time_to_first_token_seconds",
        "Time from a streamed request's arrival to its first chunk, by model";
    tokens: Family<TokenLabels, Counter> = Family::default(),
        "tollgate_tokens",
        "Tokens billed, by model and kind (prompt or completion)";
    credits: Family<ModelLabels, Counter<f64, AtomicU64>> = Family::default(),
        "tollgate_credits_charged",
        "Credits charged to keys and wallets, by model";
    events: Family<EventLabels, Counter> = Family::default(),
        "tollgate_events",
        "Webhook events fired, by event name";
    events_dropped: Counter = Counter::default(),
        "tollgate_webhook_events_dropped",
        "Events dropped because the delivery queue was full";
    deliveries: Family<DeliveryLabels, Counter> = Family::default(),
        "tollgate_webhook_deliveries",
        "Webhook deliveries, by target (tenant or operator) and result (success, http_error, timeout, refused, blocked, error)";
    pii_redactions: Family<PiiLabels, Counter> = Family::default(),
        "tollgate_pii_redactions",
        "Personal data values replaced by placeholders in inference requests, by type (EMAIL, PHONE, IBAN, ...; CUSTOM for tenant patterns) and mode (logs or upstream)";
    streams_in_flight: Gauge = Gauge::default(),
        "tollgate_streams_in_flight",
        "Streamed responses currently open";
    store_commit: Histogram = Histogram::new(exponential_buckets(0.00005, 2.0, 16)),
        "tollgate_store_commit_seconds",
        "Duration of each store write transaction, fsync included (one per batch of writes)";
    writer_queue: Gauge = Gauge::default(),
        "tollgate_writer_queue_depth",
        "Write jobs waiting for the storage writer";
    webhook_queue: Gauge = Gauge::default(),
        "tollgate_webhook_queue_depth",
        "Events waiting for webhook delivery";
    credits_reserved: Gauge<f64, AtomicU64> = Gauge::default(),
        "tollgate_credits_reserved",
        "Credits reserved at admission by requests in flight, not yet replaced by their charge";
    reservations_open: Gauge = Gauge::default(),
        "tollgate_reservations_open",
        "Requests in flight holding a credit reservation";
    spans_exported: Counter = Counter::default(),
        "tollgate_otlp_spans_exported",
        "Trace spans accepted by the OTLP collector";
    spans_dropped: Family<ReasonLabels, Counter> = Family::default(),
        "tollgate_otlp_spans_dropped",
        "Trace spans dropped, by reason (queue_full: the export queue was full; export_failed: the collector refused or did not answer)";
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Counts one answered request: its route pattern, the catalogue id
    /// it was about (empty when none), its HTTP status, how long it took,
    /// and the error code it was refused with.
    pub fn answered(
        &self,
        route: &str,
        model: String,
        status: u16,
        elapsed: Duration,
        error: Option<Code>,
    ) {
        self.requests
            .get_or_create(&RequestLabels {
                route: route.to_owned(),
                model,
                status_class: status_class(status),
            })
            .inc();
        self.request_duration
            .get_or_create(&RouteLabels {
                route: route.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
        if let Some(code) = error {
            self.errors
                .get_or_create(&CodeLabels {
                    code: code.as_str(),
                })
                .inc();
            let reason = match code {
                Code::RateLimitExceeded => Some("rate_limit"),
                Code::TokenRateLimitExceeded => Some("token_rate_limit"),
                Code::ModelRateLimitExceeded => Some("model_rate_limit"),
                Code::MultimodalCapExceeded => Some("multimodal_cap"),
                Code::BudgetExceeded => Some("budget"),
                Code::InsufficientCredits => Some("wallet"),
                _ => None,
            };
            if let Some(reason) = reason {
                self.refusals.get_or_create(&ReasonLabels { reason }).inc();
            }
        }
    }

    /// One store write transaction's duration (see `WriterStats`).
    pub fn store_commit(&self, elapsed: Duration) {
        self.store_commit.observe(elapsed.as_secs_f64());
    }

    pub fn upstream(&self, provider: &str, outcome: &str, elapsed: Duration) {
        self.upstream_duration
            .get_or_create(&UpstreamLabels {
                provider: provider.to_owned(),
                outcome: outcome.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
    }

    pub fn fallback(&self, served_by: &str) {
        self.fallbacks
            .get_or_create(&ModelLabels {
                model: served_by.to_owned(),
            })
            .inc();
    }

    /// A retry of the same deployment.
    pub fn retry(&self, provider: &str) {
        self.upstream_retries
            .get_or_create(&ProviderLabels {
                provider: provider.to_owned(),
            })
            .inc();
    }

    /// A deployment entered cooldown.
    pub fn cooldown(&self, model: &str, deployment: &str) {
        self.deployment_cooldowns
            .get_or_create(&DeploymentLabels {
                model: model.to_owned(),
                deployment: deployment.to_owned(),
            })
            .inc();
    }

    /// Sets the health gauge of every deployment, read before rendering:
    /// `(model, deployment, healthy)` for each.
    pub fn deployment_health<'a>(
        &self,
        health: impl IntoIterator<Item = (&'a str, &'a str, bool)>,
    ) {
        for (model, deployment, healthy) in health {
            self.deployment_healthy
                .get_or_create(&DeploymentLabels {
                    model: model.to_owned(),
                    deployment: deployment.to_owned(),
                })
                .set(i64::from(healthy));
        }
    }

    pub fn exhausted(&self) {
        self.exhausted.inc();
    }

    pub fn first_token(&self, model: &str, elapsed: Duration) {
        self.time_to_first_token
            .get_or_create(&ModelLabels {
                model: model.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
    }

    /// A committed charge.
    pub fn charged(&self, model: &str, prompt_tokens: u64, completion_tokens: u64, micros: u64) {
        for (kind, n) in [("prompt", prompt_tokens), ("completion", completion_tokens)] {
            self.tokens
                .get_or_create(&TokenLabels {
                    model: model.to_owned(),
                    kind,
                })
                .inc_by(n);
        }
        self.credits
            .get_or_create(&ModelLabels {
                model: model.to_owned(),
            })
            .inc_by(micros as f64 / 1_000_000.0);
    }

    pub fn event(&self, name: &str) {
        self.events
            .get_or_create(&EventLabels {
                event: name.to_owned(),
            })
            .inc();
    }

    pub fn spans_exported(&self, n: u64) {
        self.spans_exported.inc_by(n);
    }

    pub fn spans_dropped(&self, reason: &'static str, n: u64) {
        self.spans_dropped
            .get_or_create(&ReasonLabels { reason })
            .inc_by(n);
    }

    pub fn event_dropped(&self) {
        self.events_dropped.inc();
    }

    pub fn delivery(&self, target: &'static str, result: &'static str) {
        self.deliveries
            .get_or_create(&DeliveryLabels { target, result })
            .inc();
    }

    /// Counts one request's PII redactions, by placeholder type. The
    /// caller bounds the labels (a custom pattern counts as `CUSTOM`).
    pub fn pii_redacted(
        &self,
        mode: &'static str,
        counts: impl IntoIterator<Item = (&'static str, u64)>,
    ) {
        for (kind, n) in counts {
            self.pii_redactions
                .get_or_create(&PiiLabels { kind, mode })
                .inc_by(n);
        }
    }

    /// Holds the streams-in-flight gauge up while it lives.
    pub fn stream_open(self: &Arc<Self>) -> StreamGuard {
        self.streams_in_flight.inc();
        StreamGuard(self.clone())
    }

    /// Sets the reservation gauges from the ledger's totals (micro-credits
    /// reserved, holds open), read before rendering.
    pub fn reservations(&self, reserved_micros: u64, holds: u64) {
        self.credits_reserved
            .set(crate::base::money::micros_to_credits(reserved_micros));
        self.reservations_open.set(holds as i64);
    }

    /// The exposition text, with the gauges read now.
    pub fn render(&self, writer_queue: usize, webhook_queue: usize) -> String {
        self.writer_queue.set(writer_queue as i64);
        self.webhook_queue.set(webhook_queue as i64);
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        to_text_format(&out)
    }
}

/// prometheus-client writes OpenMetrics, where a counter family `x` has
/// samples `x_total`. The Prometheus text format (0.0.4) names the family
/// by its samples, and has no `# EOF`: without this, `promtool check
/// metrics` reports every counter as lacking help text.
fn to_text_format(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len() + 256);
    let mut held_help: Option<&str> = None;
    for line in openmetrics.lines() {
        if line == "# EOF" {
            continue;
        }
        if line.starts_with("# HELP ") {
            if let Some(help) = held_help.replace(line) {
                out.push_str(help);
                out.push('\n');
            }
            continue;
        }
        if let Some(name) = line
            .strip_prefix("# TYPE ")
            .and_then(|rest| rest.strip_suffix(" counter"))
        {
            if let Some(help) = held_help.take() {
                let text = help
                    .strip_prefix("# HELP ")
                    .and_then(|rest| rest.strip_prefix(name))
                    .unwrap_or("");
                out.push_str(&format!("# HELP {name}_total{text}\n"));
            }
            out.push_str(&format!("# TYPE {name}_total counter\n"));
            continue;
        }
        if let Some(help) = held_help.take() {
            out.push_str(help);
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
    }
    if let Some(help) = held_help {
        out.push_str(help);
        out.push('\n');
    }
    out
}

/// Decrements the streams-in-flight gauge when the stream ends or is
/// dropped.
pub struct StreamGuard(Arc<Metrics>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.streams_in_flight.dec();
    }
}

fn status_class(status: u16) -> &'static str {
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_has_help_in_the_text_format() {
        let metrics = Metrics::new();
        metrics.charged("m", 3, 4, 1_500_000);
        metrics.delivery("tenant", "success");
        let text = metrics.render(0, 0);
        let types = text.lines().filter(|l| l.starts_with("# TYPE")).count();
        let helps = text.lines().filter(|l| l.starts_with("# HELP")).count();
        assert_eq!(types, helps);
        assert!(types >= 8 && !text.contains("# EOF"), "{text}");
        assert!(text.contains("# HELP tollgate_tokens_total Tokens billed"));
        assert!(text.contains("# TYPE tollgate_tokens_total counter\n"));
        assert!(text.contains("# TYPE tollgate_streams_in_flight gauge\n"));
        assert!(text.contains("tollgate_credits_charged_total{model=\"m\"} 1.5"));
        assert!(text.contains("tollgate_tokens_total{model=\"m\",kind=\"completion\"} 4"));
    }
}
