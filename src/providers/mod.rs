//! Upstream providers: one closed set, dispatched by `match`.
//!
//! Every provider takes an OpenAI-shaped chat request (already prepared for
//! the routed model) and answers with an OpenAI-shaped completion, or a
//! stream of OpenAI-shaped chunks. Failures are [`UpstreamError`]s, which
//! know whether the fallback walk may try the next model
//! ([`UpstreamError::retryable`], DESIGN section 2).
//!
//! The wire formats the gateway's own callers speak (the chat request,
//! Anthropic's Messages, OpenAI's Responses, what is read of a native
//! passthrough) and their translations to and from the chat request are
//! in [`wire`].

pub mod anthropic;
pub mod audio;
pub mod azure;
pub mod bedrock;
pub mod chat_shape;
pub mod embeddings;
pub mod fetch;
pub mod form;
pub mod gemini;
pub mod gemini_image;
pub mod http;
pub mod media;
pub mod mock;
pub mod openai;
pub mod sse;
pub mod tokens;
pub mod vertex;
pub mod wire;

use std::pin::Pin;
use std::time::Duration;

use futures::Stream;
use serde_json::Value;

use crate::catalogue::{Model, ProviderKind};

/// A stream of completion chunks.
pub type ChunkStream = Pin<Box<dyn Stream<Item = Result<Value, UpstreamError>> + Send>>;

pub enum Reply {
    /// A whole `chat.completion` object.
    Complete(Value),
    /// `chat.completion.chunk` objects as they arrive.
    Stream(ChunkStream),
}

/// Why an upstream attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The connection could not be made.
    Connect,
    /// No response (or no first byte) within the provider's timeout.
    Timeout,
    /// The upstream answered with an error status.
    Status(u16),
    /// The upstream answered something that is not the protocol.
    Garbage,
    /// The stream ended before its end marker.
    Cut,
    /// This kind of provider is not supported by this build.
    Unsupported,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamError {
    pub failure: Failure,
    /// What the upstream said, or what went wrong (never a secret).
    pub message: String,
    /// How long the upstream asked to be left alone (`retry-after-ms` or
    /// `Retry-After` in seconds), when it said.
    pub retry_after: Option<Duration>,
    /// The upstream's content filter refused the prompt (Azure's
    /// `content_filter` error code): answered as `content_filtered`.
    pub content_filter: bool,
}

impl UpstreamError {
    pub fn new(failure: Failure, message: impl Into<String>) -> UpstreamError {
        UpstreamError {
            failure,
            message: message.into(),
            retry_after: None,
            content_filter: false,
        }
    }

    /// Whether the same deployment may be tried again: the network, a
    /// timeout before the first byte, a rate limit or a server error.
    /// Everything else either will not change on a retry (4xx) or says the
    /// upstream is not speaking the protocol.
    pub fn retries_same_deployment(&self) -> bool {
        match self.failure {
            Failure::Connect | Failure::Timeout => true,
            Failure::Status(code) => code == 429 || (500..=599).contains(&code),
            Failure::Garbage | Failure::Cut | Failure::Unsupported => false,
        }
    }

    /// Whether a later model of the chain may be tried. The request itself
    /// being wrong (400, 413, 422) is final: another model would refuse it
    /// too. Everything else (network, timeouts, rate limits, server errors,
    /// the provider's own credential or model problems) is worth a fallback.
    pub fn retryable(&self) -> bool {
        !matches!(self.failure, Failure::Status(400 | 413 | 422))
    }

    /// The short status recorded for an attempt (`503`, `timeout`...).
    pub fn status_label(&self) -> String {
        self.failure.label().into_owned()
    }
}

impl Failure {
    /// The failure's wire label: an attempt's status in the webhooks, the
    /// upstream metric's `status` label, a client span's `error.type`.
    pub fn label(&self) -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed(match self {
            Failure::Connect => "connect_error",
            Failure::Timeout => "timeout",
            Failure::Status(code) => return std::borrow::Cow::Owned(code.to_string()),
            Failure::Garbage => "invalid_response",
            Failure::Cut => "stream_cut",
            Failure::Unsupported => "unsupported",
        })
    }
}

/// The text of an OpenAI message content: a string, or its text parts
/// joined by newlines.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The usage chunk that ends a translated stream: `base` (a chunk of the
/// stream) with no choices and the token counts.
pub fn usage_chunk(mut base: Value, prompt: u64, completion: u64) -> Value {
    base["choices"] = serde_json::json!([]);
    base["usage"] = serde_json::json!({
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    });
    base
}

/// Remote images fetched for a provider are refused above this size.
pub const MAX_IMAGE_BYTES: usize = 20 * 1024 * 1024;

/// The provider layer: one shared HTTP client (connection pooling) for
/// every upstream.
#[derive(Clone)]
pub struct Providers {
    http: reqwest::Client,
    images: fetch::ImageFetcher,
}

impl Providers {
    /// `allow_private_images`: whether image URLs may point at private
    /// addresses (`image_fetch_allow_private_targets`).
    pub fn new(connect_timeout: Duration, allow_private_images: bool) -> Providers {
        // One process-wide crypto provider: ring (no aws-lc, no OpenSSL).
        let _ = rustls::crypto::ring::default_provider().install_default();
        // No redirects: a provider's API answers where it is configured,
        // and a 3xx that sent the prompt (and, on the same host, the key)
        // to another address would be followed silently. It is an error
        // naming the status instead (`http::send`).
        let http = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .pool_idle_timeout(Duration::from_secs(90))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("building the HTTP client");
        let images = fetch::ImageFetcher::new(
            allow_private_images,
            MAX_IMAGE_BYTES,
            Duration::from_secs(10),
        );
        Providers { http, images }
    }

    /// The shared client, for the native passthroughs that build their own
    /// requests.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// One attempt at `model` with a request already prepared for it.
    pub async fn chat(
        &self,
        model: &Model,
        body: Value,
        stream: bool,
    ) -> Result<Reply, UpstreamError> {
        match model.provider.kind {
            ProviderKind::Openai | ProviderKind::Azure => {
                openai::chat(&self.http, model, body, stream).await
            }
            ProviderKind::Vertex => {
                vertex::chat(&self.http, &self.images, model, body, stream).await
            }
            ProviderKind::Mock => mock::chat(&model.upstream, body, stream).await,
            ProviderKind::Anthropic => anthropic::chat(&self.http, model, body, stream).await,
            ProviderKind::Gemini => {
                gemini::chat(&self.http, &self.images, model, body, stream).await
            }
            ProviderKind::Bedrock => {
                bedrock::chat(&self.http, &self.images, model, body, stream).await
            }
        }
    }
}
