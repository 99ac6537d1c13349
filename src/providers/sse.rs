//! Server-Sent Events parsing of an upstream byte stream into JSON chunks,
//! and the type of an SSE body as the caller receives it ([`SseBody`]).
//!
//! Only `data:` lines matter to chat streams; `data: [DONE]` ends the
//! stream. A stream that ends without it was cut, and says so, so the relay
//! can end the caller's stream with an error instead of a clean `[DONE]`.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;

use bytes::{Buf, Bytes, BytesMut};
use futures::{Stream, StreamExt};
use serde_json::Value;

use super::{ChunkStream, Failure, Reply, UpstreamError, http};

/// A Server-Sent Events body as the caller receives it: framed bytes that
/// never fail (an upstream failure is written into the stream as an event).
pub type SseBody = Pin<Box<dyn Stream<Item = Result<Bytes, Infallible>> + Send>>;

/// A line longer than this is not a chat chunk.
const MAX_LINE: usize = 8 * 1024 * 1024;

/// OpenAI's streams: JSON `data:` events until `data: [DONE]`; an end
/// without it is a cut.
pub fn chunks<S, E>(bytes: S) -> ChunkStream
where
    S: Stream<Item = Result<bytes::Bytes, E>> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    parse(bytes, true)
}

/// Streams whose end marker is an event of their own (Anthropic's
/// `message_stop`, Gemini's last candidate): every JSON `data:` event until
/// the connection closes. The caller decides whether the end was clean.
pub fn events<S, E>(bytes: S) -> ChunkStream
where
    S: Stream<Item = Result<bytes::Bytes, E>> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    parse(bytes, false)
}

fn parse<S, E>(bytes: S, needs_done: bool) -> ChunkStream
where
    S: Stream<Item = Result<bytes::Bytes, E>> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    let state = (Box::pin(bytes), BytesMut::new(), false);
    Box::pin(futures::stream::unfold(
        state,
        move |(mut bytes, mut buffer, mut done)| async move {
            if done {
                return None;
            }
            loop {
                if let Some(end) = buffer.iter().position(|b| *b == b'\n') {
                    let line = buffer.split_to(end + 1);
                    let line = String::from_utf8_lossy(&line);
                    let line = line.trim_end_matches(['\n', '\r']);
                    let Some(data) = line.strip_prefix("data:") else {
                        continue;
                    };
                    let data = data.trim_start();
                    if data == "[DONE]" {
                        return None;
                    }
                    let item = serde_json::from_str::<Value>(data)
                        .ok()
                        .filter(Value::is_object)
                        .ok_or_else(|| {
                            UpstreamError::new(
                                Failure::Garbage,
                                "a stream event is not a JSON object",
                            )
                        });
                    done = item.is_err();
                    return Some((item, (bytes, buffer, done)));
                }
                if buffer.len() > MAX_LINE {
                    let error = UpstreamError::new(Failure::Garbage, "a stream line exceeds 8 MB");
                    return Some((Err(error), (bytes, buffer, true)));
                }
                match bytes.next().await {
                    Some(Ok(more)) => buffer.extend_from_slice(more.chunk()),
                    Some(Err(e)) => {
                        let error =
                            UpstreamError::new(Failure::Cut, format!("the stream broke: {e}"));
                        return Some((Err(error), (bytes, buffer, true)));
                    }
                    None if !needs_done => return None,
                    None => {
                        let error =
                            UpstreamError::new(Failure::Cut, "the stream ended without [DONE]");
                        return Some((Err(error), (bytes, buffer, true)));
                    }
                }
            }
        },
    ))
}

/// A wire's stream translation, named for the caller's model.
pub type TranslateStream = fn(ChunkStream, String) -> ChunkStream;
/// A wire's whole answer as an OpenAI completion, named for the caller's
/// model.
pub type TranslateWhole = fn(&Value, &str) -> Result<Value, UpstreamError>;

/// The reply of a sent chat call that streams server-sent events
/// (Anthropic's Messages, Gemini's generate-content, either on Vertex AI):
/// its events through `translate`, or its whole answer through `whole`,
/// both named for the caller's `model`.
pub async fn reply(
    sent: http::Sent,
    model: String,
    stream: bool,
    translate: TranslateStream,
    whole: TranslateWhole,
) -> Result<Reply, UpstreamError> {
    if stream {
        return Ok(Reply::Stream(translate(
            events(sent.response.bytes_stream()),
            model,
        )));
    }
    let answer = http::read_json(sent).await?;
    Ok(Reply::Complete(whole(&answer, &model)?))
}

/// A provider's stream translation: upstream events in, OpenAI chunks out.
pub trait Translate: Send + 'static {
    /// The chunks for one upstream event, pushed onto `out`.
    fn on_event(&mut self, event: Value, out: &mut VecDeque<Result<Value, UpstreamError>>);
    /// Whether the stream is over: no more events are read.
    fn over(&self) -> bool;
    /// The connection closed before the stream was over: its last item
    /// (a usage chunk, or a cut).
    fn on_close(&mut self) -> Result<Value, UpstreamError>;
}

/// Drives `translation` over `events`: chunks go out as soon as each
/// upstream event is translated; an upstream error ends the stream.
pub fn translate<T: Translate>(events: ChunkStream, translation: T) -> ChunkStream {
    let state = (events, translation, VecDeque::new(), false);
    Box::pin(futures::stream::unfold(
        state,
        |(mut events, mut t, mut pending, mut ended)| async move {
            loop {
                if let Some(next) = pending.pop_front() {
                    return Some((next, (events, t, pending, ended)));
                }
                if ended || t.over() {
                    return None;
                }
                let last = match events.next().await {
                    Some(Ok(event)) => {
                        t.on_event(event, &mut pending);
                        continue;
                    }
                    Some(Err(e)) => Err(e),
                    None => t.on_close(),
                };
                ended = true;
                return Some((last, (events, t, pending, ended)));
            }
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(parts: &[&str]) -> Vec<Result<Value, UpstreamError>> {
        let owned: Vec<Result<bytes::Bytes, String>> = parts
            .iter()
            .map(|p| Ok(bytes::Bytes::from(p.to_string())))
            .collect();
        futures::executor::block_on(chunks(futures::stream::iter(owned)).collect())
    }

    #[test]
    fn events_split_anywhere_are_reassembled() {
        let out = feed(&[
            "data: {\"a\"",
            ":1}\n\n: comment\nevent: x\ndata: {\"a\":2}\r\n\r\ndata: [DONE]\n\n",
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].as_ref().unwrap()["a"], 2);
    }

    #[test]
    fn a_stream_without_done_is_cut_and_garbage_is_refused() {
        let out = feed(&["data: {\"a\":1}\n\n"]);
        assert_eq!(out[1].as_ref().unwrap_err().failure, Failure::Cut);
        let out = feed(&["data: not json\n\n", "data: {\"a\":1}\n\n"]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].as_ref().unwrap_err().failure, Failure::Garbage);
    }
}
