//! The client span of one upstream attempt (docs/observability.md), shared
//! by every inference route: the walk over a model's deployments
//! (`gateway::walk`) opens one per attempt, retries included, for chat, the
//! native passthroughs and the media routes alike. Each is named `{operation} {upstream model}` after the route's
//! operation, carries where it went and how it ended, and, when served,
//! names the provider on the request's server span.

use opentelemetry::trace::{SpanKind, TraceContextExt as _};
use opentelemetry::{Context, KeyValue};

use crate::catalogue::{Model, ProviderKind};
use crate::traces;

/// An open client span; it ends when this is ended (or dropped).
pub(crate) struct AttemptSpan {
    context: Context,
    provider: &'static str,
}

impl AttemptSpan {
    /// Opens the span of one call to `model`'s deployment, a child of the
    /// current (server) span.
    pub(crate) fn start(operation: &'static str, model: &Model) -> AttemptSpan {
        let context = traces::child(
            || format!("{operation} {}", model.upstream),
            SpanKind::Client,
            || attributes(operation, model),
        );
        AttemptSpan {
            context,
            provider: provider_name(model.provider.kind),
        }
    }

    /// The context to run the call in: its `traceparent` names this span.
    pub(crate) fn context(&self) -> Context {
        self.context.clone()
    }

    /// Ends the span as served (HTTP 200) and names the provider on the
    /// server span.
    pub(crate) fn served(self) {
        self.context
            .span()
            .set_attribute(KeyValue::new("http.response.status_code", 200));
        // The attempt's span ends here, before the server span is touched.
        drop(self.context);
        let provider = self.provider;
        traces::record(|| vec![KeyValue::new("gen_ai.provider.name", provider)]);
    }

    /// Ends the span as failed: the upstream's HTTP status when it answered
    /// one, and the error type (`timeout`, `connect_error`, the status...).
    pub(crate) fn failed(self, status: Option<u16>, error_type: String) {
        let span = self.context.span();
        if let Some(status) = status {
            span.set_attribute(KeyValue::new(
                "http.response.status_code",
                i64::from(status),
            ));
        }
        span.set_attribute(KeyValue::new("error.type", error_type));
    }
}

/// The attributes a client span opens with.
fn attributes(operation: &'static str, model: &Model) -> Vec<KeyValue> {
    let mut attributes = vec![
        KeyValue::new("gen_ai.operation.name", operation),
        KeyValue::new("gen_ai.request.model", model.upstream.clone()),
        KeyValue::new("gen_ai.provider.name", provider_name(model.provider.kind)),
    ];
    if let Some(base) = &model.provider.base_url {
        if let Some(host) = base.host_str() {
            attributes.push(KeyValue::new("server.address", host.to_owned()));
        }
        if let Some(port) = base.port_or_known_default() {
            attributes.push(KeyValue::new("server.port", i64::from(port)));
        }
    }
    attributes
}

/// The GenAI semantic conventions' `gen_ai.provider.name`.
fn provider_name(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Openai => "openai",
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::Gemini => "gcp.gemini",
        ProviderKind::Bedrock => "aws.bedrock",
        ProviderKind::Azure => "azure.ai.openai",
        ProviderKind::Vertex => "gcp.vertex_ai",
        ProviderKind::Mock => "tollgate.mock",
    }
}
