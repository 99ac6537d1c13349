//! A scripted Anthropic Messages API upstream on loopback. It records each
//! request (headers and body) and answers by the requested model:
//!
//! | model | answer |
//! |---|---|
//! | `claude-ok` | text, `end_turn`, 12 input (+3 cached) and 7 output tokens |
//! | `claude-tool` | a `get_weather` tool call, `tool_use` |
//! | `claude-len` | text cut by `max_tokens` |
//! | `claude-stopseq` | text ended by a stop sequence |
//! | `claude-overloaded` | 529 `overloaded_error` |
//! | `claude-bad` | 400 `invalid_request_error` |
//! | `claude-error-mid` | (streamed) one text delta, then an `error` event |
//!
//! With `stream: true` the same answers come as Messages API events. The
//! raw bytes of each body are kept too, for the passthrough's byte-for-byte
//! checks. `POST /v1/messages/count_tokens` answers `{"input_tokens": 4242}`
//! (recorded like the rest, the body's `model` marked with a `count:`
//! prefix in [`Recorded::counted`]).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

#[derive(Clone, Default)]
pub struct Recorded(Arc<Mutex<Vec<(HeaderMap, Value, String)>>>);

impl Recorded {
    pub fn bodies(&self) -> Vec<Value> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(_, b, _)| b.clone())
            .collect()
    }
    pub fn headers(&self) -> Vec<HeaderMap> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(h, _, _)| h.clone())
            .collect()
    }
    /// Each body as the bytes that arrived.
    pub fn raw_bodies(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(_, _, raw)| raw.clone())
            .collect()
    }
    pub fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }
    /// The bodies that came to `count_tokens`.
    pub fn counted(&self) -> Vec<Value> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(h, _, _)| {
                h.get("x-scripted-path")
                    .is_some_and(|p| p == "count_tokens")
            })
            .map(|(_, b, _)| b.clone())
            .collect()
    }
}

async fn count_tokens(
    State(recorded): State<Recorded>,
    mut headers: HeaderMap,
    body: String,
) -> Response {
    let value: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    headers.insert("x-scripted-path", "count_tokens".parse().unwrap());
    recorded.0.lock().unwrap().push((headers, value, body));
    axum::Json(json!({ "input_tokens": 4242 })).into_response()
}

pub struct Anthropic {
    pub base_url: String,
    pub recorded: Recorded,
    _task: tokio::task::JoinHandle<()>,
}

impl Anthropic {
    pub async fn start() -> Anthropic {
        let recorded = Recorded::default();
        let app = Router::new()
            .route("/v1/messages", post(messages))
            .route("/v1/messages/count_tokens", post(count_tokens))
            .with_state(recorded.clone());
        let (addr, task) = super::serve(app).await;
        Anthropic {
            base_url: format!("http://{addr}/v1"),
            recorded,
            _task: task,
        }
    }
}

fn blocks(model: &str) -> (Vec<Value>, &'static str) {
    match model {
        "claude-tool" => (
            vec![
                json!({ "type": "text", "text": "Let me check." }),
                json!({ "type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": { "city": "Paris" } }),
            ],
            "tool_use",
        ),
        "claude-len" => (
            vec![json!({ "type": "text", "text": "cut sh" })],
            "max_tokens",
        ),
        "claude-stopseq" => (
            vec![json!({ "type": "text", "text": "until" })],
            "stop_sequence",
        ),
        _ => (
            vec![json!({ "type": "text", "text": "hello from claude" })],
            "end_turn",
        ),
    }
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

async fn messages(State(recorded): State<Recorded>, headers: HeaderMap, body: String) -> Response {
    let raw = body;
    let body: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    recorded
        .0
        .lock()
        .unwrap()
        .push((headers, body.clone(), raw));
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    match model.as_str() {
        "claude-overloaded" => {
            let error = json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } });
            return (StatusCode::from_u16(529).unwrap(), axum::Json(error)).into_response();
        }
        "claude-bad" => {
            let error = json!({ "type": "error", "error": { "type": "invalid_request_error", "message": "messages: bad" } });
            return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
        }
        _ => {}
    }
    let (content, stop) = blocks(&model);
    let usage = json!({ "input_tokens": 12, "cache_read_input_tokens": 3, "output_tokens": 7 });
    if body["stream"] != true {
        return axum::Json(json!({
            "id": "msg_01", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, "stop_sequence": null, "usage": usage,
        }))
        .into_response();
    }
    let mut out = event(
        "message_start",
        json!({ "type": "message_start", "message": {
            "id": "msg_01", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "usage": { "input_tokens": 12, "cache_read_input_tokens": 3, "output_tokens": 1 } } }),
    );
    out.push_str(&event("ping", json!({ "type": "ping" })));
    for (index, block) in content.iter().enumerate() {
        if block["type"] == "tool_use" {
            out.push_str(&event("content_block_start", json!({ "type": "content_block_start", "index": index,
                "content_block": { "type": "tool_use", "id": block["id"], "name": block["name"], "input": {} } })));
            for part in ["{\"city\": ", "\"Paris\"}"] {
                out.push_str(&event(
                    "content_block_delta",
                    json!({ "type": "content_block_delta", "index": index,
                    "delta": { "type": "input_json_delta", "partial_json": part } }),
                ));
            }
        } else {
            out.push_str(&event(
                "content_block_start",
                json!({ "type": "content_block_start", "index": index,
                "content_block": { "type": "text", "text": "" } }),
            ));
            let text = block["text"].as_str().unwrap();
            let (a, b) = text.split_at(text.len() / 2);
            for part in [a, b] {
                out.push_str(&event(
                    "content_block_delta",
                    json!({ "type": "content_block_delta", "index": index,
                    "delta": { "type": "text_delta", "text": part } }),
                ));
            }
            if model == "claude-error-mid" {
                out.push_str(&event(
                    "error",
                    json!({ "type": "error",
                    "error": { "type": "overloaded_error", "message": "Overloaded" } }),
                ));
                return sse(out);
            }
        }
        out.push_str(&event(
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": index }),
        ));
    }
    out.push_str(&event(
        "message_delta",
        json!({ "type": "message_delta",
        "delta": { "stop_reason": stop, "stop_sequence": null }, "usage": { "output_tokens": 7 } }),
    ));
    out.push_str(&event("message_stop", json!({ "type": "message_stop" })));
    sse(out)
}

fn sse(text: String) -> Response {
    ([("content-type", "text/event-stream")], text).into_response()
}
