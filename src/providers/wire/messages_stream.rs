//! A chat stream (the chat relay's Server-Sent Events, already charged) as
//! the Messages API's event sequence: `message_start`, `ping`, per content
//! block `content_block_start`, its deltas (`text_delta`,
//! `input_json_delta`) and `content_block_stop`, then `message_delta` with
//! the stop reason and the usage, and `message_stop`.
//!
//! The chat relay charges the request when the usage chunk passes, before
//! the chunk is yielded; `message_delta` is made from that chunk, so a
//! Messages stream shows its usage (and the `billing` extension) only
//! after the charge committed. The input tokens are known only then:
//! `message_start` says 0 and `message_delta` carries the real count, as
//! current Anthropic SDKs read it. A chat error event becomes an `error`
//! event, and the stream ends there.

use std::collections::HashMap;

use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Value, json};

use super::messages_answer::{EXTENSIONS, message_id, stop_reason, usage};
use crate::providers::sse::SseBody;

fn event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// The block being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    None,
    Text(usize),
    /// A tool call (the chat call's index) at a block index.
    Tool(u64, usize),
}

struct Translator {
    model: String,
    started: bool,
    next_block: usize,
    open: Open,
    /// Chat tool-call index to block index.
    tools: HashMap<u64, usize>,
    stop: &'static str,
    usage: Value,
    extensions: Vec<(String, Value)>,
    done: bool,
}

impl Translator {
    fn new(model: String) -> Translator {
        Translator {
            model,
            started: false,
            next_block: 0,
            open: Open::None,
            tools: HashMap::new(),
            stop: "end_turn",
            usage: json!({ "input_tokens": 0, "output_tokens": 0 }),
            extensions: Vec::new(),
            done: false,
        }
    }

    fn start(&mut self, out: &mut String, id: &Value) {
        if self.started {
            return;
        }
        self.started = true;
        out.push_str(&event(
            "message_start",
            &json!({ "type": "message_start", "message": {
                "id": message_id(id), "type": "message", "role": "assistant",
                "model": self.model, "content": [], "stop_reason": null,
                "stop_sequence": null, "usage": { "input_tokens": 0, "output_tokens": 0 } } }),
        ));
        out.push_str(&event("ping", &json!({ "type": "ping" })));
    }

    fn close(&mut self, out: &mut String) {
        let index = match self.open {
            Open::None => return,
            Open::Text(index) | Open::Tool(_, index) => index,
        };
        out.push_str(&event(
            "content_block_stop",
            &json!({ "type": "content_block_stop", "index": index }),
        ));
        self.open = Open::None;
    }

    fn open_block(&mut self, out: &mut String, block: Value) -> usize {
        self.close(out);
        let index = self.next_block;
        self.next_block += 1;
        out.push_str(&event(
            "content_block_start",
            &json!({ "type": "content_block_start", "index": index, "content_block": block }),
        ));
        index
    }

    /// One chat chunk.
    fn chunk(&mut self, out: &mut String, chunk: &Value) {
        self.start(out, &chunk["id"]);
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                let index = match self.open {
                    Open::Text(index) => index,
                    _ => {
                        let index = self.open_block(out, json!({ "type": "text", "text": "" }));
                        self.open = Open::Text(index);
                        index
                    }
                };
                out.push_str(&event(
                    "content_block_delta",
                    &json!({ "type": "content_block_delta", "index": index,
                             "delta": { "type": "text_delta", "text": text } }),
                ));
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let which = call["index"].as_u64().unwrap_or(0);
                let index = match self.tools.get(&which) {
                    Some(index) => *index,
                    None => {
                        let id = call["id"]
                            .as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| format!("toolu_{}", ulid::Ulid::generate()));
                        let index = self.open_block(
                            out,
                            json!({ "type": "tool_use", "id": id,
                                    "name": call["function"]["name"].as_str().unwrap_or_default(),
                                    "input": {} }),
                        );
                        self.open = Open::Tool(which, index);
                        self.tools.insert(which, index);
                        index
                    }
                };
                if let Some(part) = call["function"]["arguments"]
                    .as_str()
                    .filter(|a| !a.is_empty())
                {
                    out.push_str(&event(
                        "content_block_delta",
                        &json!({ "type": "content_block_delta", "index": index,
                                 "delta": { "type": "input_json_delta", "partial_json": part } }),
                    ));
                }
            }
            if !choice["finish_reason"].is_null() {
                self.stop = stop_reason(&choice["finish_reason"]);
            }
        }
        if let Some(chat_usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = usage(chat_usage);
            for extension in EXTENSIONS {
                if let Some(value) = chunk.get(extension) {
                    self.extensions.push((extension.to_owned(), value.clone()));
                }
            }
        }
    }

    /// The end of the chat stream (`[DONE]`).
    fn finish(&mut self, out: &mut String) {
        self.start(out, &Value::Null);
        self.close(out);
        let mut delta = json!({ "type": "message_delta",
            "delta": { "stop_reason": self.stop, "stop_sequence": null },
            "usage": self.usage });
        for (name, value) in self.extensions.drain(..) {
            delta[name] = value;
        }
        out.push_str(&event("message_delta", &delta));
        out.push_str(&event("message_stop", &json!({ "type": "message_stop" })));
        self.done = true;
    }

    /// A chat error event: the Messages `error` event, which ends the stream.
    fn error(&mut self, out: &mut String, error: &Value) {
        let kind = match error["code"].as_str() {
            Some("upstream_stream_error") => "overloaded_error",
            _ => "api_error",
        };
        out.push_str(&event(
            "error",
            &json!({ "type": "error", "error": {
                "type": kind,
                "message": error["message"].as_str().unwrap_or("the stream failed"),
            } }),
        ));
        self.done = true;
    }

    /// One SSE frame of the chat relay.
    fn frame(&mut self, out: &mut String, frame: &str) {
        for line in frame.lines() {
            let Some(data) = line.strip_prefix("data:") else {
                continue;
            };
            let data = data.trim();
            if data == "[DONE]" {
                self.finish(out);
                return;
            }
            let Ok(value) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            if value.get("error").is_some() && value.get("choices").is_none() {
                self.error(out, &value["error"]);
                return;
            }
            self.chunk(out, &value);
        }
    }
}

/// Translates the chat relay's stream for the caller's `model` name.
pub fn translate(chat: SseBody, model: String) -> SseBody {
    let state = (chat, Translator::new(model), String::new());
    Box::pin(futures::stream::unfold(
        state,
        |(mut chat, mut translator, mut pending)| async move {
            loop {
                if translator.done {
                    return None;
                }
                let Some(Ok(bytes)) = chat.next().await else {
                    // The relay always ends with `[DONE]` or an error
                    // event; anything else was cut.
                    let mut out = String::new();
                    translator.error(
                        &mut out,
                        &json!({ "message": "the stream ended before its end", "code": "upstream_stream_error" }),
                    );
                    return Some((Ok(Bytes::from(out)), (chat, translator, pending)));
                };
                pending.push_str(&String::from_utf8_lossy(&bytes));
                let mut out = String::new();
                while let Some(end) = pending.find("\n\n") {
                    let frame: String = pending.drain(..end + 2).collect();
                    translator.frame(&mut out, &frame);
                    if translator.done {
                        break;
                    }
                }
                if !out.is_empty() {
                    return Some((Ok(Bytes::from(out)), (chat, translator, pending)));
                }
            }
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(values: &[Value]) -> SseBody {
        let mut items: Vec<Result<Bytes, std::convert::Infallible>> = values
            .iter()
            .map(|v| Ok(Bytes::from(format!("data: {v}\n\n"))))
            .collect();
        items.push(Ok(Bytes::from_static(b"data: [DONE]\n\n")));
        Box::pin(futures::stream::iter(items))
    }

    fn events(text: &str) -> Vec<(String, Value)> {
        text.split("\n\n")
            .filter(|e| !e.is_empty())
            .map(|e| {
                let mut lines = e.lines();
                let name = lines.next().unwrap().strip_prefix("event: ").unwrap();
                let data = lines.next().unwrap().strip_prefix("data: ").unwrap();
                (name.to_owned(), serde_json::from_str(data).unwrap())
            })
            .collect()
    }

    fn chunk(delta: Value, finish: Value) -> Value {
        json!({ "id": "c1", "object": "chat.completion.chunk", "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] })
    }

    #[tokio::test]
    async fn golden_stream_text_then_tool_call_then_usage() {
        let chat = frames(&[
            chunk(json!({ "role": "assistant", "content": "" }), Value::Null),
            chunk(json!({ "content": "Hel" }), Value::Null),
            chunk(json!({ "content": "lo" }), Value::Null),
            chunk(
                json!({ "tool_calls": [{ "index": 0, "id": "call_1", "type": "function", "function": { "name": "f", "arguments": "" } }] }),
                Value::Null,
            ),
            chunk(
                json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "{\"a\":" } }] }),
                Value::Null,
            ),
            chunk(
                json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "1}" } }] }),
                Value::Null,
            ),
            chunk(json!({}), json!("tool_calls")),
            json!({ "id": "c1", "choices": [], "usage": { "prompt_tokens": 9, "completion_tokens": 4 }, "billing": { "cost": 1 } }),
        ]);
        let out: Vec<Bytes> = translate(chat, "gpt".into())
            .map(|b| b.unwrap())
            .collect()
            .await;
        let text: String = out.iter().map(|b| String::from_utf8_lossy(b)).collect();
        let events = events(&text);
        let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "ping",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert_eq!(events[0].1["message"]["model"], "gpt");
        assert_eq!(events[0].1["message"]["id"], "msg_c1");
        assert_eq!(
            events[3].1["delta"],
            json!({ "type": "text_delta", "text": "Hel" })
        );
        assert_eq!(
            events[6].1["content_block"],
            json!({ "type": "tool_use", "id": "call_1", "name": "f", "input": {} })
        );
        assert_eq!(events[6].1["index"], 1);
        assert_eq!(
            events[8].1["delta"],
            json!({ "type": "input_json_delta", "partial_json": "1}" })
        );
        assert_eq!(
            events[10].1,
            json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use", "stop_sequence": null },
                    "usage": { "input_tokens": 9, "output_tokens": 4 }, "billing": { "cost": 1 } })
        );
    }

    #[tokio::test]
    async fn a_chat_error_event_becomes_an_anthropic_error_event_and_ends() {
        let items: Vec<Result<Bytes, std::convert::Infallible>> = vec![
            Ok(Bytes::from(format!(
                "data: {}\n\n",
                chunk(json!({ "content": "par" }), Value::Null)
            ))),
            Ok(Bytes::from(format!(
                "data: {}\n\n",
                json!({ "error": { "message": "cut", "type": "server_error", "code": "upstream_stream_error" } })
            ))),
        ];
        let out: Vec<Bytes> = translate(Box::pin(futures::stream::iter(items)), "m".into())
            .map(|b| b.unwrap())
            .collect()
            .await;
        let text: String = out.iter().map(|b| String::from_utf8_lossy(b)).collect();
        let events = events(&text);
        let last = events.last().unwrap();
        assert_eq!(last.0, "error");
        assert_eq!(last.1["error"]["type"], "overloaded_error");
        assert!(!text.contains("message_stop"));
    }
}
