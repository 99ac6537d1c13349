//! A chat completion as a Responses API response, whole or as the
//! standard stream events (`response.created` ... `response.completed`),
//! for the models reached by translation (docs/responses.md).
//!
//! The stream is translated from the chat relay's own Server-Sent Events
//! (`gateway::stream`), so billing is the chat relay's: its usage chunk is
//! sent only after the charge committed, and `response.completed` comes
//! after that chunk. Every event carries a `sequence_number`, from 0, as
//! OpenAI sends them.

use std::convert::Infallible;

use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Value, json};

use super::responses_input::Echo;
use crate::providers::sse::SseBody;

/// What a response object says about its request.
#[derive(Debug, Clone)]
pub struct Frame {
    pub id: String,
    pub created_at: i64,
    /// The name the caller used.
    pub model: String,
    pub previous_response_id: Option<String>,
    pub store: bool,
    pub echo: Echo,
}

/// The gateway's extensions carried over from the completion.
const EXTENSIONS: [&str; 4] = [
    "billing",
    "risk_classification",
    "explainability",
    "pii_redaction",
];

impl Frame {
    /// The response object with `status` and `output`, no usage yet.
    pub fn response(&self, status: &str, output: Vec<Value>) -> Value {
        let echo = &self.echo;
        json!({
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "error": null,
            "incomplete_details": null,
            "instructions": echo.instructions,
            "max_output_tokens": echo.max_output_tokens,
            "model": self.model,
            "output": output,
            "parallel_tool_calls": echo.parallel_tool_calls,
            "previous_response_id": self.previous_response_id,
            "reasoning": echo.reasoning,
            "store": self.store,
            "temperature": echo.temperature,
            "text": echo.text,
            "tool_choice": echo.tool_choice,
            "tools": echo.tools,
            "top_p": echo.top_p,
            "truncation": "disabled",
            "usage": null,
            "metadata": echo.metadata,
        })
    }

    /// A whole completion as a response, and the assistant message it adds
    /// to the conversation.
    pub fn from_completion(&self, completion: &Value) -> (Value, Value) {
        let choice = &completion["choices"][0];
        let message = &choice["message"];
        let mut output = Vec::new();
        let text = crate::providers::content_text(&message["content"]);
        if !text.is_empty() {
            output.push(message_item(
                &format!("msg_{}", self.id),
                &text,
                "completed",
            ));
        }
        for (i, call) in message["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            output.push(call_item(
                &format!("fc_{}_{i}", self.id),
                call["id"].as_str().unwrap_or_default(),
                call["function"]["name"].as_str().unwrap_or_default(),
                call["function"]["arguments"].as_str().unwrap_or("{}"),
                "completed",
            ));
        }
        let incomplete = choice["finish_reason"] == "length";
        let mut response = self.response(
            if incomplete {
                "incomplete"
            } else {
                "completed"
            },
            output,
        );
        if incomplete {
            response["incomplete_details"] = json!({ "reason": "max_output_tokens" });
        }
        response["usage"] = usage(&completion["usage"]);
        for field in EXTENSIONS {
            if let Some(value) = completion.get(field) {
                response[field] = value.clone();
            }
        }
        (response, assistant_message(message))
    }
}

/// The assistant message of a completion as the conversation keeps it.
fn assistant_message(message: &Value) -> Value {
    let mut kept = json!({
        "role": "assistant",
        "content": crate::providers::content_text(&message["content"]),
    });
    if let Some(calls) = message["tool_calls"].as_array().filter(|c| !c.is_empty()) {
        kept["tool_calls"] = Value::Array(calls.clone());
        if kept["content"] == "" {
            kept["content"] = Value::Null;
        }
    }
    kept
}

fn message_item(id: &str, text: &str, status: &str) -> Value {
    json!({
        "type": "message",
        "id": id,
        "status": status,
        "role": "assistant",
        "content": [{ "type": "output_text", "text": text, "annotations": [] }],
    })
}

fn call_item(id: &str, call_id: &str, name: &str, arguments: &str, status: &str) -> Value {
    json!({
        "type": "function_call",
        "id": id,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    })
}

/// Chat usage in the Responses shape.
fn usage(usage: &Value) -> Value {
    let input = usage["prompt_tokens"].as_u64().unwrap_or(0);
    let output = usage["completion_tokens"].as_u64().unwrap_or(0);
    json!({
        "input_tokens": input,
        "input_tokens_details": {
            "cached_tokens": usage["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0),
        },
        "output_tokens": output,
        "output_tokens_details": {
            "reasoning_tokens": usage["completion_tokens_details"]["reasoning_tokens"].as_u64().unwrap_or(0),
        },
        "total_tokens": input + output,
    })
}

/// What the stream does once its response is whole (given the assistant
/// message and the response): keep the conversation, when stored, before
/// `response.completed` is sent.
pub type OnComplete = Box<
    dyn FnOnce(Value, &Value) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>>
        + Send
        + 'static,
>;

/// An output item being streamed.
enum Open {
    Text {
        id: String,
        text: String,
    },
    Call {
        id: String,
        call_id: String,
        name: String,
        arguments: String,
    },
}

struct Translator {
    frame: Frame,
    sequence: u64,
    started: bool,
    /// Items done, in order.
    done: Vec<Value>,
    open: Option<Open>,
    /// The chat stream's tool-call index of the open call.
    call_index: Option<u64>,
    finish: Option<String>,
    usage: Value,
    extensions: Vec<(&'static str, Value)>,
    on_complete: Option<OnComplete>,
    tool_calls: Vec<Value>,
    text: String,
    ended: bool,
}

impl Translator {
    fn event(&mut self, kind: &str, mut data: Value) -> String {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        format!("event: {kind}\ndata: {data}\n\n")
    }

    fn start(&mut self, out: &mut String) {
        if self.started {
            return;
        }
        self.started = true;
        let response = self.frame.response("in_progress", Vec::new());
        out.push_str(&self.event("response.created", json!({ "response": response })));
        let response = self.frame.response("in_progress", Vec::new());
        out.push_str(&self.event("response.in_progress", json!({ "response": response })));
    }

    fn output_index(&self) -> usize {
        self.done.len()
    }

    /// Closes the open item with its `.done` events.
    fn close(&mut self, out: &mut String) {
        let index = self.output_index();
        match self.open.take() {
            None => {}
            Some(Open::Text { id, text }) => {
                out.push_str(&self.event(
                    "response.output_text.done",
                    json!({ "item_id": id, "output_index": index, "content_index": 0, "text": text }),
                ));
                let part = json!({ "type": "output_text", "text": text, "annotations": [] });
                out.push_str(&self.event(
                    "response.content_part.done",
                    json!({ "item_id": id, "output_index": index, "content_index": 0, "part": part }),
                ));
                let item = message_item(&id, &text, "completed");
                out.push_str(&self.event(
                    "response.output_item.done",
                    json!({ "output_index": index, "item": item }),
                ));
                self.text.push_str(&text);
                self.done.push(item);
            }
            Some(Open::Call {
                id,
                call_id,
                name,
                arguments,
            }) => {
                out.push_str(&self.event(
                    "response.function_call_arguments.done",
                    json!({ "item_id": id, "output_index": index, "arguments": arguments }),
                ));
                let item = call_item(&id, &call_id, &name, &arguments, "completed");
                out.push_str(&self.event(
                    "response.output_item.done",
                    json!({ "output_index": index, "item": item }),
                ));
                self.tool_calls.push(json!({
                    "id": call_id,
                    "type": "function",
                    "function": { "name": name, "arguments": arguments },
                }));
                self.done.push(item);
                self.call_index = None;
            }
        }
    }

    fn text_delta(&mut self, delta: &str, out: &mut String) {
        if !matches!(self.open, Some(Open::Text { .. })) {
            self.close(out);
            let id = format!("msg_{}_{}", self.frame.id, self.output_index());
            let index = self.output_index();
            let item = json!({
                "type": "message", "id": id, "status": "in_progress",
                "role": "assistant", "content": [],
            });
            out.push_str(&self.event(
                "response.output_item.added",
                json!({ "output_index": index, "item": item }),
            ));
            let part = json!({ "type": "output_text", "text": "", "annotations": [] });
            out.push_str(&self.event(
                "response.content_part.added",
                json!({ "item_id": id, "output_index": index, "content_index": 0, "part": part }),
            ));
            self.open = Some(Open::Text {
                id,
                text: String::new(),
            });
        }
        let index = self.output_index();
        let Some(Open::Text { id, text }) = &mut self.open else {
            return;
        };
        text.push_str(delta);
        let id = id.clone();
        out.push_str(&self.event(
            "response.output_text.delta",
            json!({ "item_id": id, "output_index": index, "content_index": 0, "delta": delta }),
        ));
    }

    fn call_delta(&mut self, call: &Value, out: &mut String) {
        let index = call["index"].as_u64().unwrap_or(0);
        if self.call_index != Some(index) || !matches!(self.open, Some(Open::Call { .. })) {
            self.close(out);
            let output_index = self.output_index();
            let id = format!("fc_{}_{output_index}", self.frame.id);
            let call_id = call["id"].as_str().unwrap_or_default().to_owned();
            let name = call["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let item = call_item(&id, &call_id, &name, "", "in_progress");
            out.push_str(&self.event(
                "response.output_item.added",
                json!({ "output_index": output_index, "item": item }),
            ));
            self.open = Some(Open::Call {
                id,
                call_id,
                name,
                arguments: String::new(),
            });
            self.call_index = Some(index);
        }
        let output_index = self.output_index();
        let Some(Open::Call { id, arguments, .. }) = &mut self.open else {
            return;
        };
        if let Some(delta) = call["function"]["arguments"]
            .as_str()
            .filter(|d| !d.is_empty())
        {
            arguments.push_str(delta);
            let id = id.clone();
            out.push_str(&self.event(
                "response.function_call_arguments.delta",
                json!({ "item_id": id, "output_index": output_index, "delta": delta }),
            ));
        }
    }

    /// One chat chunk.
    fn chunk(&mut self, chunk: &Value, out: &mut String) {
        self.start(out);
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                self.text_delta(text, out);
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                self.call_delta(call, out);
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.finish = Some(reason.to_owned());
            }
        }
        if chunk["usage"].is_object() {
            self.usage = usage(&chunk["usage"]);
        }
        for field in EXTENSIONS {
            if let Some(value) = chunk.get(field) {
                self.extensions.push((field, value.clone()));
            }
        }
    }

    /// The end (`data: [DONE]`): closes the open item, keeps the
    /// conversation, then `response.completed` (or `.incomplete`).
    async fn end(&mut self, out: &mut String) {
        self.start(out);
        self.close(out);
        self.ended = true;
        let incomplete = self.finish.as_deref() == Some("length");
        let status = if incomplete {
            "incomplete"
        } else {
            "completed"
        };
        let mut response = self.frame.response(status, self.done.clone());
        if incomplete {
            response["incomplete_details"] = json!({ "reason": "max_output_tokens" });
        }
        response["usage"] = self.usage.clone();
        for (field, value) in &self.extensions {
            response[*field] = value.clone();
        }
        if let Some(on_complete) = self.on_complete.take() {
            let mut message = json!({ "role": "assistant", "content": self.text });
            if !self.tool_calls.is_empty() {
                message["tool_calls"] = Value::Array(self.tool_calls.clone());
                if self.text.is_empty() {
                    message["content"] = Value::Null;
                }
            }
            on_complete(message, &response).await;
        }
        let kind = if incomplete {
            "response.incomplete"
        } else {
            "response.completed"
        };
        out.push_str(&self.event(kind, json!({ "response": response })));
    }

    /// A chat error event (the upstream failed mid-way, a charge failed).
    fn error(&mut self, error: &Value, out: &mut String) {
        self.start(out);
        self.ended = true;
        let data = json!({
            "code": error["code"],
            "message": error["message"],
            "param": error["param"],
        });
        out.push_str(&self.event("error", data));
    }
}

/// The chat relay's events as Responses events.
pub fn translate(chat: SseBody, frame: Frame, on_complete: Option<OnComplete>) -> SseBody {
    let translator = Translator {
        frame,
        sequence: 0,
        started: false,
        done: Vec::new(),
        open: None,
        call_index: None,
        finish: None,
        usage: Value::Null,
        extensions: Vec::new(),
        on_complete,
        tool_calls: Vec::new(),
        text: String::new(),
        ended: false,
    };
    Box::pin(futures::stream::unfold(
        (chat, translator),
        |(mut chat, mut t)| async move {
            loop {
                if t.ended {
                    return None;
                }
                let Some(Ok(bytes)) = chat.next().await else {
                    // The chat relay ends after `[DONE]` or an error event;
                    // ending without either is a cut.
                    t.ended = true;
                    let mut out = String::new();
                    t.start(&mut out);
                    let error = json!({ "code": "upstream_stream_error", "message": "the stream ended before its end", "param": null });
                    t.error(&error, &mut out);
                    return Some((Ok::<_, Infallible>(Bytes::from(out)), (chat, t)));
                };
                let mut out = String::new();
                for line in String::from_utf8_lossy(&bytes).lines() {
                    let Some(data) = line.strip_prefix("data:") else {
                        continue;
                    };
                    let data = data.trim();
                    if data == "[DONE]" {
                        t.end(&mut out).await;
                        break;
                    }
                    let Ok(chunk) = serde_json::from_str::<Value>(data) else {
                        continue;
                    };
                    if chunk.get("error").is_some_and(Value::is_object) {
                        t.error(&chunk["error"], &mut out);
                        break;
                    }
                    t.chunk(&chunk, &mut out);
                }
                if !out.is_empty() {
                    return Some((Ok(Bytes::from(out)), (chat, t)));
                }
            }
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> Frame {
        Frame {
            id: "resp_1".into(),
            created_at: 0,
            model: "m".into(),
            previous_response_id: None,
            store: true,
            echo: Echo::default(),
        }
    }

    #[test]
    fn a_completion_with_text_and_a_tool_call_becomes_two_items() {
        let completion = json!({
            "choices": [{ "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "calling",
                "tool_calls": [{ "id": "call_1", "type": "function",
                    "function": { "name": "f", "arguments": "{\"a\":1}" } }],
            } }],
            "usage": { "prompt_tokens": 5, "completion_tokens": 3 },
            "billing": { "cost": 0.1 },
        });
        let (response, message) = frame().from_completion(&completion);
        assert_eq!(response["status"], "completed");
        assert_eq!(response["output"][0]["content"][0]["text"], "calling");
        assert_eq!(response["output"][1]["type"], "function_call");
        assert_eq!(response["output"][1]["call_id"], "call_1");
        assert_eq!(response["usage"]["total_tokens"], 8);
        assert_eq!(response["billing"]["cost"], 0.1);
        assert_eq!(message["tool_calls"][0]["id"], "call_1");
    }

    #[tokio::test]
    async fn a_chat_stream_becomes_the_standard_events_in_sequence() {
        let chat: Vec<Result<Bytes, Infallible>> = [
            json!({ "choices": [{ "delta": { "content": "Hel" } }] }),
            json!({ "choices": [{ "delta": { "content": "lo" } }] }),
            json!({ "choices": [{ "delta": { "tool_calls": [{ "index": 0, "id": "c1",
                "function": { "name": "f", "arguments": "{}" } }] }, "finish_reason": "tool_calls" }] }),
            json!({ "choices": [], "usage": { "prompt_tokens": 2, "completion_tokens": 2 } }),
        ]
        .iter()
        .map(|c| Ok(Bytes::from(format!("data: {c}\n\n"))))
        .chain([Ok(Bytes::from("data: [DONE]\n\n"))])
        .collect();
        let body = translate(Box::pin(futures::stream::iter(chat)), frame(), None);
        let text: Vec<u8> = body.map(|b| b.unwrap().to_vec()).concat().await;
        let events: Vec<Value> = String::from_utf8(text)
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect();
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        for (i, event) in events.iter().enumerate() {
            assert_eq!(event["sequence_number"], i as u64);
        }
        let done = &events.last().unwrap()["response"];
        assert_eq!(done["output"][0]["content"][0]["text"], "Hello");
        assert_eq!(done["output"][1]["arguments"], "{}");
        assert_eq!(done["usage"]["input_tokens"], 2);
    }
}
