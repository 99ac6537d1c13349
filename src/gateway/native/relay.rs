//! The native stream relay: the upstream's bytes go to the caller as they
//! come, never re-encoded. On the side, each complete `data:` line is read
//! by a [`Meter`] for the token counts and the text.
//!
//! Billing follows the chat relay (`gateway/stream.rs`): the charge commits
//! before the caller sees the end of the stream (Anthropic's `message_stop`
//! event and a legacy completion's `data: [DONE]` are held until then; a
//! Gemini stream's body ends only after it). A
//! stream cut by its upstream is billed for what was relayed and ends with an
//! error event in the wire's shape; a stream dropped by its caller is billed,
//! when dropped, for what had been produced.

use std::pin::Pin;

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};
use serde_json::Value;

use crate::gateway::{Extensions, Served};
use crate::providers::sse::SseBody;
use crate::providers::wire::native::{Meter, Wire};

pub type UpstreamBytes = Pin<Box<dyn Stream<Item = Result<Bytes, String>> + Send>>;

/// A line longer than this is not read for counts (it is still relayed).
const MAX_LINE: usize = 8 * 1024 * 1024;

struct Relay {
    wire: Wire,
    upstream: UpstreamBytes,
    /// The start of a line whose end has not arrived yet.
    partial: BytesMut,
    meter: Meter,
    served: Served,
    extensions: Extensions,
    billed: bool,
    done: bool,
}

pub fn relay(
    wire: Wire,
    upstream: UpstreamBytes,
    served: Served,
    extensions: Extensions,
) -> SseBody {
    let relay = Relay {
        wire,
        upstream,
        partial: BytesMut::new(),
        meter: Meter::new(extensions.keeps_output()),
        served,
        extensions,
        billed: false,
        done: false,
    };
    Box::pin(futures::stream::unfold(relay, |mut r| async move {
        if r.done {
            return None;
        }
        let frame = match r.upstream.next().await {
            Some(Ok(bytes)) => {
                r.read_lines(&bytes);
                if r.meter.ended && !r.billed {
                    // The end marker leaves only once the charge committed.
                    if let Err(message) = r.charge(true).await {
                        r.done = true;
                        return Some((Ok(Bytes::from(r.wire.error_event(&message))), r));
                    }
                }
                bytes
            }
            Some(Err(error)) => {
                r.done = true;
                tracing::warn!(model = %r.served.requested, %error, "native upstream stream failed mid-way");
                if !r.billed {
                    let _ = r.charge(false).await;
                }
                Bytes::from(
                    r.wire
                        .error_event(&format!("the upstream stream failed mid-way: {error}")),
                )
            }
            None => {
                r.done = true;
                let completed = r.meter.completed();
                if !r.billed {
                    let _ = r.charge(completed).await;
                }
                if completed || r.meter.failed {
                    // Clean, or the upstream's own error event was relayed.
                    return None;
                }
                Bytes::from(
                    r.wire
                        .error_event("the upstream stream ended before its end marker"),
                )
            }
        };
        Some((Ok(frame), r))
    }))
}

impl Relay {
    /// Feeds the meter every complete `data:` line of `bytes`.
    fn read_lines(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            let line = if self.partial.is_empty() {
                &rest[..end]
            } else {
                self.partial.extend_from_slice(&rest[..end]);
                &self.partial[..]
            };
            if let Some(data) = line
                .strip_suffix(b"\r")
                .unwrap_or(line)
                .strip_prefix(b"data:")
            {
                let data = data.trim_ascii();
                if data == b"[DONE]" {
                    self.meter.observe_done(self.wire);
                } else if let Ok(event) = serde_json::from_slice::<Value>(data) {
                    self.meter.observe_event(self.wire, &event);
                }
            }
            self.partial.clear();
            rest = &rest[end + 1..];
        }
        if self.partial.len() + rest.len() <= MAX_LINE {
            self.partial.extend_from_slice(rest);
        } else {
            self.partial.clear();
        }
    }

    /// Charges what the meter saw; the message of a failed charge.
    async fn charge(&mut self, completed: bool) -> Result<(), String> {
        self.billed = true;
        let (prompt, completion, estimated) = self.meter.tokens(self.served.prompt_estimate);
        self.extensions
            .charge(
                prompt,
                completion,
                estimated,
                completed,
                self.meter.text.as_deref().unwrap_or(""),
                None,
            )
            .await
            .map(|_| ())
            .map_err(|error| error.message)
    }
}

impl Drop for Relay {
    /// A stream dropped before it was billed lost its caller: bill what the
    /// upstream produced up to then.
    fn drop(&mut self) {
        if !self.billed {
            self.billed = true;
            let (prompt, completion, estimated) = self.meter.tokens(self.served.prompt_estimate);
            tracing::info!(request_id = %self.served.request_id, completion, "native stream abandoned by the caller; billing what was produced");
            self.extensions.charge_detached(
                prompt,
                completion,
                estimated,
                self.meter.text.as_deref().unwrap_or(""),
            );
        }
    }
}
