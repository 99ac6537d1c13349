//! OpenTelemetry traces (docs/observability.md): one server span per
//! inference request, child spans for the classification, each upstream
//! attempt and the charge, exported as OTLP/HTTP protobuf.
//!
//! Export never touches the request path: a finished span goes into a
//! bounded queue (`try_send`; a full queue drops it and counts the drop),
//! and one owned task posts batches to `{otlp_endpoint}/v1/traces`. A
//! collector that is down or slow only fills the queue.
//!
//! The active span and the tracer travel in the OpenTelemetry [`Context`]
//! of the request's future, so the stages deep inside the pipeline add
//! their spans and attributes without new parameters. Without an
//! `otlp_endpoint` no context carries a tracer and every helper here
//! returns at once: nothing is recorded, nothing exported.
//!
//! Attributes carry ids, names, counts and codes only: never prompt or
//! answer text, never a key value.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderValue};
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{SpanKind, TraceContextExt, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{
    Sampler, SdkTracer, SdkTracerProvider, Span, SpanData, SpanProcessor,
};
use prost::Message;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::base::secret::Secret;
use crate::metrics::Metrics;

/// Finished spans waiting for export; beyond this they are dropped.
const QUEUE: usize = 4096;
/// Spans per export request.
const BATCH: usize = 512;
/// A batch leaves at least this often when spans are waiting.
const FLUSH_EVERY: Duration = Duration::from_millis(500);
/// One export request's time limit (a slow collector).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// The last flush at shutdown.
const SHUTDOWN_FLUSH: Duration = Duration::from_secs(3);

/// The tracer, shared by every request (cheap to clone). Disabled when
/// `otlp_endpoint` is unset.
#[derive(Clone, Default)]
pub struct Traces {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    tracer: SdkTracer,
    provider: SdkTracerProvider,
    stop: CancellationToken,
    exporter: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// What the export task needs.
struct Export {
    url: String,
    headers: Vec<(String, Secret)>,
    resource: ResourceAttributesWithSchema,
    client: reqwest::Client,
    metrics: Arc<Metrics>,
}

/// Where and how much to export (`otlp_*`, docs/configuration.md).
#[derive(Debug, Clone, Default)]
pub struct TraceSettings {
    /// The collector's base URL; `None`: no traces.
    pub endpoint: Option<url::Url>,
    /// Headers sent with every export (a vendor's API key); never logged.
    pub headers: Vec<(String, Secret)>,
    /// Share of new traces recorded (0 to 1).
    pub sample_ratio: f64,
}

impl Traces {
    /// Starts the exporter task on the task set when `otlp_endpoint` is
    /// set.
    pub fn start(
        settings: &TraceSettings,
        metrics: Arc<Metrics>,
        tasks: &crate::base::tasks::Tasks,
    ) -> Traces {
        let Some(endpoint) = &settings.endpoint else {
            return Traces::default();
        };
        let resource = Resource::builder_empty()
            .with_service_name("tollgate")
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let (sender, receiver) = mpsc::channel(QUEUE);
        let provider = SdkTracerProvider::builder()
            .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
                settings.sample_ratio,
            ))))
            .with_span_processor(Queue {
                sender,
                metrics: metrics.clone(),
            })
            .with_resource(resource.clone())
            .build();
        let tracer = provider.tracer("tollgate");
        let client = reqwest::Client::builder()
            .timeout(EXPORT_TIMEOUT)
            .connect_timeout(Duration::from_secs(5))
            .build()
            .unwrap_or_default();
        let export = Export {
            url: format!("{}/v1/traces", endpoint.as_str().trim_end_matches('/')),
            headers: settings
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            resource: (&resource).into(),
            client,
            metrics,
        };
        let stop = CancellationToken::new();
        // On the task set; it also stops on its own token after a last
        // flush (`Traces::shutdown`).
        let task = tasks.spawn(export.run(receiver, stop.clone()));
        Traces {
            inner: Some(Arc::new(Inner {
                tracer,
                provider,
                stop,
                exporter: std::sync::Mutex::new(Some(task)),
            })),
        }
    }

    /// The server span of an inference request, continuing the caller's
    /// trace when `headers` carry a valid `traceparent`. The returned
    /// context is the current one when tracing is off.
    pub fn server_span(&self, headers: &HeaderMap, operation: &'static str) -> Context {
        let Some(inner) = &self.inner else {
            return Context::current();
        };
        let parent = TraceContextPropagator::new().extract(&Headers(headers));
        let span = inner
            .tracer
            .span_builder(operation)
            .with_kind(SpanKind::Server)
            .with_attributes([KeyValue::new("gen_ai.operation.name", operation)])
            .start_with_context(&inner.tracer, &parent);
        parent.with_span(span).with_value(inner.tracer.clone())
    }

    /// Stops the exporter after a last flush (bounded), at shutdown.
    pub async fn shutdown(&self) {
        let Some(inner) = &self.inner else { return };
        let _ = inner.provider.shutdown();
        inner.stop.cancel();
        let task = inner.exporter.lock().ok().and_then(|mut t| t.take());
        if let Some(task) = task {
            let _ = tokio::time::timeout(SHUTDOWN_FLUSH + EXPORT_TIMEOUT, task).await;
        }
    }
}

/// A child span of the current one (`kind` Internal or Client), as the
/// context to run the stage in; the current context when tracing is off.
pub fn child(
    name: impl FnOnce() -> String,
    kind: SpanKind,
    attributes: impl FnOnce() -> Vec<KeyValue>,
) -> Context {
    let current = Context::current();
    let Some(tracer) = current.get::<SdkTracer>() else {
        return current;
    };
    let span = tracer
        .span_builder(name())
        .with_kind(kind)
        .with_attributes(attributes())
        .start_with_context(tracer, &current);
    current.with_span(span)
}

/// Sets attributes on the current span; `attributes` runs only when a
/// span records.
pub fn record(attributes: impl FnOnce() -> Vec<KeyValue>) {
    let current = Context::current();
    if current.get::<SdkTracer>().is_none() {
        return;
    }
    let span = current.span();
    if span.is_recording() {
        span.set_attributes(attributes());
    }
}

/// Renames the current span (the server span learns its model after the
/// body is parsed).
pub fn rename(name: impl FnOnce() -> String) {
    let current = Context::current();
    if current.get::<SdkTracer>().is_some() && current.span().is_recording() {
        current.span().update_name(name());
    }
}

/// Names the current (server) span `{operation} {model}` and records
/// `gen_ai.request.model`, once the request's model is known.
pub fn request_model(operation: &str, model: &str) {
    rename(|| format!("{operation} {model}"));
    record(|| vec![KeyValue::new("gen_ai.request.model", model.to_owned())]);
}

/// The `traceparent` to send upstream from the current span, if any.
pub fn traceparent() -> Option<HeaderValue> {
    let current = Context::current();
    current.get::<SdkTracer>()?;
    let mut out = Traceparent(None);
    TraceContextPropagator::new().inject_context(&current, &mut out);
    out.0.and_then(|v| HeaderValue::from_str(&v).ok())
}

struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

struct Traceparent(Option<String>);

impl Injector for Traceparent {
    fn set(&mut self, key: &str, value: String) {
        // `tracestate` is not forwarded: the caller's vendor state is the
        // caller's, not the upstream's.
        if key == "traceparent" {
            self.0 = Some(value);
        }
    }
}

/// The span processor: hands each sampled span to the export task, never
/// waiting.
struct Queue {
    sender: mpsc::Sender<SpanData>,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queue")
    }
}

impl SpanProcessor for Queue {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        if self.sender.try_send(span).is_err() {
            self.metrics.spans_dropped("queue_full", 1);
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

impl Export {
    async fn run(self, mut receiver: mpsc::Receiver<SpanData>, stop: CancellationToken) {
        let mut failing = false;
        loop {
            let mut batch = Vec::with_capacity(BATCH);
            tokio::select! {
                () = stop.cancelled() => break,
                n = receiver.recv_many(&mut batch, BATCH) => if n == 0 { return },
            }
            // Fill the batch for up to FLUSH_EVERY.
            let deadline = tokio::time::Instant::now() + FLUSH_EVERY;
            while batch.len() < BATCH {
                let want = BATCH - batch.len();
                match tokio::time::timeout_at(deadline, receiver.recv_many(&mut batch, want)).await
                {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if stop.is_cancelled() {
                    break;
                }
            }
            failing = self.send(batch, failing).await;
        }
        // Shutdown: what is queued gets one bounded try.
        let mut rest = Vec::new();
        while let Ok(span) = receiver.try_recv() {
            rest.push(span);
        }
        if !rest.is_empty() {
            let _ = tokio::time::timeout(SHUTDOWN_FLUSH, self.send(rest, failing)).await;
        }
    }

    /// Posts one batch; returns whether the collector is failing (logged
    /// once per change, not per batch).
    async fn send(&self, batch: Vec<SpanData>, was_failing: bool) -> bool {
        let count = batch.len() as u64;
        let body = ExportTraceServiceRequest {
            resource_spans: group_spans_by_resource_and_scope(batch, &self.resource),
        }
        .encode_to_vec();
        let mut request = self
            .client
            .post(&self.url)
            .header("content-type", "application/x-protobuf")
            .body(body);
        for (name, value) in &self.headers {
            request = request.header(name.as_str(), value.expose());
        }
        let failure = match request.send().await {
            Ok(response) if response.status().is_success() => None,
            Ok(response) => Some(format!("HTTP {}", response.status().as_u16())),
            Err(e) => Some(crate::base::redact::without_url(&e)),
        };
        match failure {
            None => {
                self.metrics.spans_exported(count);
                if was_failing {
                    tracing::info!("the OTLP collector accepts spans again");
                }
                false
            }
            Some(reason) => {
                self.metrics.spans_dropped("export_failed", count);
                if !was_failing {
                    tracing::warn!(%reason, "exporting spans to the OTLP collector failed; spans are dropped until it answers");
                }
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::Tracer as _;

    use super::*;

    /// The queue never waits: a span that finds it full is dropped and
    /// counted. (Filling the real queue of 4,096 from outside would race
    /// the export task, so the processor is tested with a queue of one.)
    #[test]
    fn a_span_that_finds_the_queue_full_is_dropped_and_counted() {
        let metrics = Arc::new(Metrics::new());
        let (sender, mut receiver) = mpsc::channel(1);
        let provider = SdkTracerProvider::builder()
            .with_span_processor(Queue {
                sender,
                metrics: metrics.clone(),
            })
            .build();
        let tracer = provider.tracer("test");
        // Each span ends when dropped.
        for name in ["queued", "dropped", "dropped too"] {
            drop(tracer.start(name));
        }
        let queued = receiver.try_recv().expect("the first span is queued");
        assert_eq!(queued.name, "queued");
        assert!(receiver.try_recv().is_err());
        let text = metrics.render(0, 0);
        assert!(
            text.lines()
                .any(|l| l == "tollgate_otlp_spans_dropped_total{reason=\"queue_full\"} 2"),
            "{text}"
        );
    }
}
