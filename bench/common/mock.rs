//! The mock upstream: an OpenAI-compatible `POST /v1/chat/completions`
//! that answers at once with fixed bytes, prepared before the first
//! request. It reads only `model` and `stream` from the body.
//!
//! - a plain request gets one fixed `chat.completion` (with `usage`);
//! - `"stream": true` gets a fixed SSE answer: `chunks` content chunks, a
//!   last chunk with `finish_reason` and `usage`, then `data: [DONE]`,
//!   each chunk its own write;
//! - a model whose name contains `slow` streams slowly: one chunk every
//!   `slow_interval` (the 5,000-stream memory figure);
//! - `latency`, when not zero, delays every answer (and a stream's first
//!   chunk) by that much, to stand for a real provider.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::json;

/// How the mock answers.
#[derive(Debug, Clone)]
pub struct MockOptions {
    /// Added before every answer.
    pub latency: Duration,
    /// Content chunks in a streamed answer.
    pub chunks: usize,
    /// Pause between chunks for `slow` models.
    pub slow_interval: Duration,
}

impl MockOptions {
    /// As command-line arguments for the mock's role process.
    pub fn to_args(&self) -> Vec<String> {
        vec![
            "--latency-us".into(),
            self.latency.as_micros().to_string(),
            "--chunks".into(),
            self.chunks.to_string(),
            "--slow-interval-ms".into(),
            self.slow_interval.as_millis().to_string(),
        ]
    }

    pub fn from_args(args: &[String]) -> MockOptions {
        let number = |flag: &str, default: u64| {
            args.iter()
                .position(|a| a == flag)
                .and_then(|i| args.get(i + 1))
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        MockOptions {
            latency: Duration::from_micros(number("--latency-us", 0)),
            chunks: number("--chunks", 16) as usize,
            slow_interval: Duration::from_millis(number("--slow-interval-ms", 500)),
        }
    }
}

/// The fields of a request the mock looks at.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    model: String,
    #[serde(default)]
    stream: bool,
}

/// The prepared answers.
struct Answers {
    options: MockOptions,
    completion: Bytes,
    chunk: Bytes,
    last: Bytes,
}

/// The words of every answer: 16 tokens, as counted by the usage block.
const CONTENT: &str = "Hello, benchmark. This answer has a fixed size on purpose.";

impl Answers {
    fn new(options: MockOptions) -> Answers {
        let completion = json!({
            "id": "chatcmpl-bench", "object": "chat.completion", "created": 1_700_000_000, "model": "bench",
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": CONTENT }, "finish_reason": "stop" }],
            "usage": { "prompt_tokens": 18, "completion_tokens": 16, "total_tokens": 34 },
        });
        let chunk = json!({
            "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "bench",
            "choices": [{ "index": 0, "delta": { "content": "word " }, "finish_reason": null }],
        });
        let last = json!({
            "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "bench",
            "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }],
            "usage": { "prompt_tokens": 18, "completion_tokens": options.chunks, "total_tokens": 18 + options.chunks },
        });
        Answers {
            options,
            completion: Bytes::from(completion.to_string()),
            chunk: Bytes::from(format!("data: {chunk}\n\n")),
            last: Bytes::from(format!("data: {last}\n\ndata: [DONE]\n\n")),
        }
    }

    fn stream(self: &Arc<Self>, slow: bool) -> Response {
        let answers = self.clone();
        let interval = if slow {
            self.options.slow_interval
        } else {
            Duration::ZERO
        };
        let count = self.options.chunks;
        let body = futures::stream::unfold(0usize, move |i| {
            let answers = answers.clone();
            async move {
                if i > count {
                    return None;
                }
                if i > 0 && !interval.is_zero() {
                    tokio::time::sleep(interval).await;
                }
                let bytes = if i == count {
                    answers.last.clone()
                } else {
                    answers.chunk.clone()
                };
                Some((Ok::<_, Infallible>(bytes), i + 1))
            }
        })
        .boxed();
        (
            [
                (header::CONTENT_TYPE, "text/event-stream"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            Body::from_stream(body),
        )
            .into_response()
    }
}

async fn answer(answers: Arc<Answers>, body: Bytes) -> Response {
    let probe: Probe = match serde_json::from_slice(&body) {
        Ok(probe) => probe,
        Err(e) => {
            return (
                axum::http::StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "application/json")],
                json!({"error": {"message": e.to_string(), "type": "invalid_request_error"}})
                    .to_string(),
            )
                .into_response();
        }
    };
    if !answers.options.latency.is_zero() {
        tokio::time::sleep(answers.options.latency).await;
    }
    if probe.stream {
        answers.stream(probe.model.contains("slow"))
    } else {
        (
            [(header::CONTENT_TYPE, "application/json")],
            answers.completion.clone(),
        )
            .into_response()
    }
}

/// The mock's routes (`/v1/chat/completions`, and `/chat/completions` for
/// clients that are given the root as their base URL).
pub fn router(options: MockOptions) -> Router {
    let answers = Arc::new(Answers::new(options));
    let a = answers.clone();
    Router::new()
        .route(
            "/v1/chat/completions",
            post(move |body: Bytes| answer(a.clone(), body)),
        )
        .route(
            "/chat/completions",
            post(move |body: Bytes| answer(answers.clone(), body)),
        )
}
