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

// Long on purpose: the relay is one stream whose state (usage seen, text kept,
// the guard that charges on drop) the closure reads at each chunk.
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
            Some(Ok(mut chunk)) => {
                chunk["model"] = Value::String(r.served.requested.clone());
                r.id = chunk["id"].clone();
                r.created = chunk["created"].clone();
                r.relayed_chars += relayed_chars(&chunk);
                if let Some(output) = &mut r.output {
                    append_text(output, &chunk);
                }
                if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
                    let prompt = usage["prompt_tokens"]
                        .as_u64()
                        .unwrap_or(r.served.prompt_estimate);
                    let completion = usage["completion_tokens"]
                        .as_u64()
                        .unwrap_or(r.relayed_chars.div_ceil(4));
                    r.saw_usage = true;
                    let estimated = usage["completion_tokens"].as_u64().is_none();
                    r.billed = true;
                    match r
                        .extensions
                        .charge(
                            prompt,
                            completion,
                            estimated,
                            true,
                            r.output.as_deref().unwrap_or(""),
                            None,
                        )
                        .await
                    {
                        Ok(charged) => r.extensions.apply(&mut chunk, &charged),
                        Err(error) => {
                            r.done = true;
                            return Some((
                                Ok(Bytes::from(error_event(&error.message, "internal_error"))),
                                r,
                            ));
                        }
                    }
                }
                event(&chunk)
            }
            Some(Err(error)) => {
                r.done = true;
                tracing::warn!(model = %r.served.requested, error = %error.message, "upstream stream failed mid-way");
                if !r.billed {
                    r.billed = true;
                    let completion = r.relayed_chars.div_ceil(4);
                    if let Err(e) = r
                        .extensions
                        .charge(
                            r.served.prompt_estimate,
                            completion,
                            true,
                            false,
                            r.output.as_deref().unwrap_or(""),
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
            None => {
                r.done = true;
                let mut out = String::new();
                if !r.saw_usage {
                    let completion = r.relayed_chars.div_ceil(4);
                    let prompt = r.served.prompt_estimate;
                    let mut chunk = json!({
                        "id": r.id,
                        "object": "chat.completion.chunk",
                        "created": r.created,
                        "model": r.served.requested,
                        "choices": [],
                        "usage": {
                            "prompt_tokens": prompt,
                            "completion_tokens": completion,
                            "total_tokens": prompt + completion,
                            "estimated": true,
                        },
                    });
                    r.billed = true;
                    match r
                        .extensions
                        .charge(
                            prompt,
                            completion,
                            true,
                            true,
                            r.output.as_deref().unwrap_or(""),
                            None,
                        )
                        .await
                    {
                        Ok(charged) => r.extensions.apply(&mut chunk, &charged),
                        Err(error) => {
                            return Some((
                                Ok(Bytes::from(error_event(&error.message, "internal_error"))),
                                r,
                            ));
                        }
                    }
                    out.push_str(&event(&chunk));
                }
                out.push_str("data: [DONE]\n\n");
                out
            }
        };
        Some((Ok(Bytes::from(frame)), r))
    }))
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
                self.output.as_deref().unwrap_or(""),
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
