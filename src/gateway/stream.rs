//! The streaming relay: upstream chunks to Server-Sent Events, one by one
//! as they arrive (nothing is buffered beyond the chunk at hand).
//!
//! Every chunk's `model` becomes the name the caller asked for. Usage comes
//! from the upstream's usage chunk when it sends one; otherwise completion
//! tokens are estimated from the relayed content (about 4 characters per
//! token) and a usage chunk is added before `data: [DONE]`. The extensions
//! ride on that last usage chunk. An upstream failure after the first chunk
//! cannot fall back any more: the stream ends with an error event and no
//! `[DONE]`; so does a stream that goes silent for longer than the
//! provider's first-byte timeout ([`idle_limited`]). When the caller goes away, dropping this stream drops the
//! upstream request.
//!
//! Billing: the charge commits before the chunk that shows it (the usage
//! chunk) is sent. A stream cut by the upstream is billed for what was
//! relayed before its error event; a stream abandoned by its caller is
//! billed, when dropped, for what the upstream had produced.

use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Value, json};

use super::{Extensions, Served};
use crate::providers::sse::SseBody;
use crate::providers::{ChunkStream, Failure, UpstreamError};

struct Relay {
    chunks: ChunkStream,
    served: Served,
    extensions: Extensions,
    relayed_chars: u64,
    /// The relayed text, kept when the conversation log or the sampler
    /// wants it.
    output: Option<String>,
    saw_usage: bool,
    billed: bool,
    id: Value,
    created: Value,
    done: bool,
}

fn event(value: &Value) -> String {
    format!("data: {value}\n\n")
}

pub fn relay(chunks: ChunkStream, served: Served, extensions: Extensions) -> SseBody {
    let relay = Relay {
        output: extensions.keeps_output().then(String::new),
        chunks,
        served,
        extensions,
        relayed_chars: 0,
        saw_usage: false,
        billed: false,
        id: Value::Null,
        created: Value::Null,
        done: false,
    };
    Box::pin(futures::stream::unfold(relay, |mut r| async move {
        if r.done {
            return None;
        }
        let frame = match r.chunks.next().await {
            Some(Ok(chunk)) => r.relayed(chunk).await,
            Some(Err(error)) => r.cut(&error).await,
            None => r.ended().await,
        };
        Some((Ok(Bytes::from(frame)), r))
    }))
}

impl Relay {
    /// One upstream chunk as the caller gets it: `model` renamed, its text
    /// counted (and kept when wanted); the upstream's usage chunk is
    /// charged first and carries the extensions.
    async fn relayed(&mut self, mut chunk: Value) -> String {
        chunk["model"] = Value::String(self.served.requested.clone());
        self.id = chunk["id"].clone();
        self.created = chunk["created"].clone();
        self.relayed_chars += relayed_chars(&chunk);
        if let Some(output) = &mut self.output {
            append_text(output, &chunk);
        }
        let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) else {
            return event(&chunk);
        };
        let prompt = usage["prompt_tokens"]
            .as_u64()
            .unwrap_or(self.served.prompt_estimate);
        let reported = usage["completion_tokens"].as_u64();
        let completion = reported.unwrap_or(self.relayed_chars.div_ceil(4));
        self.saw_usage = true;
        self.charged(chunk, prompt, completion, reported.is_none())
            .await
            .unwrap_or_else(|refused| refused)
    }

    /// The upstream failed after the first chunk: too late to fall back.
    /// What was relayed is billed (as incomplete) and the stream ends with
    /// an error event, without `[DONE]`.
    async fn cut(&mut self, error: &UpstreamError) -> String {
        self.done = true;
        tracing::warn!(model = %self.served.requested, error = %error.message, "upstream stream failed mid-way");
        if !self.billed {
            self.billed = true;
            let completion = self.relayed_chars.div_ceil(4);
            if let Err(e) = self
                .extensions
                .charge(
                    self.served.prompt_estimate,
                    completion,
                    true,
                    false,
                    self.text(),
                    None,
                )
                .await
            {
                tracing::error!(error = %e, "billing a cut stream failed");
            }
        }
        event(&json!({
            "error": {
                "message": format!("the upstream stream failed mid-way: {}", error.message),
                "type": "server_error",
                "code": "upstream_stream_error",
                "param": null,
            }
        }))
    }

    /// The upstream's stream ended: without its usage chunk, one is added
    /// with the completion estimated and charged; then `[DONE]`.
    async fn ended(&mut self) -> String {
        self.done = true;
        let mut out = String::new();
        if !self.saw_usage {
            let completion = self.relayed_chars.div_ceil(4);
            let prompt = self.served.prompt_estimate;
            let chunk = json!({
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.served.requested,
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "estimated": true,
                },
            });
            match self.charged(chunk, prompt, completion, true).await {
                Ok(frame) => out.push_str(&frame),
                Err(refused) => return refused,
            }
        }
        out.push_str("data: [DONE]\n\n");
        out
    }

    /// Charges the completed stream, then `chunk` with the extensions as
    /// an event: the charge commits before the chunk that shows it is sent.
    /// A charge that fails ends the stream: its error event instead.
    async fn charged(
        &mut self,
        mut chunk: Value,
        prompt: u64,
        completion: u64,
        estimated: bool,
    ) -> Result<String, String> {
        self.billed = true;
        match self
            .extensions
            .charge(prompt, completion, estimated, true, self.text(), None)
            .await
        {
            Ok(charged) => {
                self.extensions.apply(&mut chunk, &charged);
                Ok(event(&chunk))
            }
            Err(error) => {
                self.done = true;
                Err(error_event(&error.message, "internal_error"))
            }
        }
    }

    /// The relayed text kept for the logs, or nothing.
    fn text(&self) -> &str {
        self.output.as_deref().unwrap_or("")
    }
}

/// An error event that ends a stream (never followed by `[DONE]`).
fn error_event(message: &str, code: &str) -> String {
    event(&json!({
        "error": { "message": message, "type": "server_error", "code": code, "param": null }
    }))
}

impl Drop for Relay {
    /// A stream dropped before it was billed lost its caller: bill what the
    /// upstream produced up to then.
    fn drop(&mut self) {
        if !self.billed {
            self.billed = true;
            let completion = self.relayed_chars.div_ceil(4);
            tracing::info!(request_id = %self.served.request_id, completion, "stream abandoned by the caller; billing what was produced");
            self.extensions.charge_detached(
                self.served.prompt_estimate,
                completion,
                true,
                self.text(),
            );
        }
    }
}

/// Appends a chunk's generated text and tool arguments to `output`.
fn append_text(output: &mut String, chunk: &Value) {
    for choice in chunk["choices"].as_array().into_iter().flatten() {
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str() {
            output.push_str(text);
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            if let Some(arguments) = call["function"]["arguments"].as_str() {
                output.push_str(arguments);
            }
        }
    }
}

/// Characters of generated content in a chunk: text and tool arguments.
fn relayed_chars(chunk: &Value) -> u64 {
    let Some(choices) = chunk["choices"].as_array() else {
        return 0;
    };
    choices
        .iter()
        .map(|choice| {
            let delta = &choice["delta"];
            let text = delta["content"]
                .as_str()
                .map_or(0, |t| t.chars().count() as u64);
            let tools: u64 = delta["tool_calls"]
                .as_array()
                .map(|calls| {
                    calls
                        .iter()
                        .map(|c| {
                            c["function"]["arguments"]
                                .as_str()
                                .map_or(0, |a| a.chars().count() as u64)
                        })
                        .sum()
                })
                .unwrap_or(0);
            text + tools
        })
        .sum()
}

/// `chunks`, cut with a timeout error when no chunk arrives for `limit`:
/// an upstream that stalls mid-stream must not hold its caller forever.
pub fn idle_limited(chunks: ChunkStream, limit: std::time::Duration) -> ChunkStream {
    Box::pin(futures::stream::unfold(
        (chunks, false),
        move |(mut chunks, over)| async move {
            if over {
                return None;
            }
            match tokio::time::timeout(limit, chunks.next()).await {
                Ok(Some(item)) => Some((item, (chunks, false))),
                Ok(None) => None,
                Err(_) => {
                    let error = UpstreamError::new(
                        Failure::Timeout,
                        format!("the stream went silent for {} ms", limit.as_millis()),
                    );
                    Some((Err(error), (chunks, true)))
                }
            }
        },
    ))
}
