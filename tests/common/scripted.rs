//! A scripted OpenAI-format upstream for the routing suite: each upstream
//! model name has a queue of steps, taken one per call; an empty queue
//! answers `ok` (a completion with usage 10 + 5, or for a stream three
//! chunks and a usage chunk). Every call is counted per model name and its
//! path and headers kept, so a test can tell which deployment was called
//! how often.
//!
//! | step | answer |
//! |---|---|
//! | `Status(code)` | HTTP `code` with an OpenAI error body |
//! | `RetryAfterMs(code, ms)` | HTTP `code` with `retry-after-ms: ms` |
//! | `RetryAfter(code, s)` | HTTP `code` with `Retry-After: s` |
//! | `Ok` | the completion (or stream) |
//! | `CutStream` | a stream of one chunk, then the connection closes |
//! | `Delay(ms)` | nothing for `ms` milliseconds, then as `Ok` |
//! | `Held` | nothing until the test calls [`Script::release`], then as `Ok` |
//!
//! `Ok` on an `/images/generations` path answers one image whose
//! `revised_prompt` names the upstream model; on `/v1/completions` a legacy
//! text completion (`text` `hello from MODEL`, usage 10 + 5; a stream of
//! three text chunks, the usage chunk only when the body asks
//! `stream_options.include_usage`, as OpenAI does, then `[DONE]`). `Ok` on
//! an `/embeddings` path answers one vector `[index, 0.5]` per input (base64 when asked:
//! the string `SCRIPTED_BASE64`), with usage of 7 prompt tokens unless
//! the upstream model's name starts with `no-usage`; on a Gemini
//! `models/{m}:batchEmbedContents` path, one `[index, 0.25]` per request
//! (`outputDimensionality` long when given, padded with zeros), with no
//! usage, as Gemini answers. `Ok` on a `/responses` path answers in the
//! Responses API's shape: a response `resp_up_N` (N the call's count) with
//! the text `hello from MODEL`, usage 10 + 5, its `previous_response_id`
//! echoed; streamed, `response.created`, three `response.output_text.delta`
//! and `response.completed` with the usage. Each call keeps its body, as
//! JSON and as received.
#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Status(u16),
    RetryAfterMs(u16, u64),
    RetryAfter(u16, u64),
    Ok,
    CutStream,
    Delay(u64),
    Held,
}

#[derive(Debug, Clone)]
pub struct Call {
    pub path: String,
    pub model: String,
    pub headers: HeaderMap,
    /// The body as JSON (`Null` when it is not JSON).
    pub body: Value,
    /// The body as received, byte for byte.
    pub raw: String,
}

/// What a scripted OpenAI-kind upstream answers as the base64 embedding.
pub const SCRIPTED_BASE64: &str = "AACAPwAAAAA=";

#[derive(Default)]
struct Inner {
    scripts: HashMap<String, VecDeque<Step>>,
    /// Steps a model name always answers with once its queue is empty.
    always: HashMap<String, Step>,
    calls: Vec<Call>,
}

#[derive(Clone)]
pub struct Script(Arc<Mutex<Inner>>, Arc<tokio::sync::Semaphore>);

impl Default for Script {
    fn default() -> Script {
        Script(Arc::default(), Arc::new(tokio::sync::Semaphore::new(0)))
    }
}

impl Script {
    /// Queues `steps` for calls naming `model`.
    pub fn push(&self, model: &str, steps: &[Step]) {
        let mut inner = self.0.lock().unwrap();
        inner
            .scripts
            .entry(model.to_owned())
            .or_default()
            .extend(steps.iter().copied());
    }

    /// `model` answers `step` whenever its queue is empty.
    pub fn always(&self, model: &str, step: Step) {
        self.0.lock().unwrap().always.insert(model.to_owned(), step);
    }

    /// Calls naming `model` so far.
    pub fn count(&self, model: &str) -> usize {
        self.0
            .lock()
            .unwrap()
            .calls
            .iter()
            .filter(|c| c.model == model)
            .count()
    }

    /// Lets `n` calls waiting on a `Held` step answer.
    pub fn release(&self, n: usize) {
        self.1.add_permits(n);
    }

    pub fn calls(&self) -> Vec<Call> {
        self.0.lock().unwrap().calls.clone()
    }

    fn next(&self, call: Call) -> Step {
        let mut inner = self.0.lock().unwrap();
        let model = call.model.clone();
        inner.calls.push(call);
        if let Some(step) = inner.scripts.get_mut(&model).and_then(VecDeque::pop_front) {
            return step;
        }
        inner.always.get(&model).copied().unwrap_or(Step::Ok)
    }
}

pub struct Scripted {
    pub base_url: String,
    pub script: Script,
    _task: tokio::task::JoinHandle<()>,
}

impl Scripted {
    pub async fn start() -> Scripted {
        let script = Script::default();
        let app = Router::new().fallback(answer).with_state(script.clone());
        let (addr, task) = super::serve(app).await;
        Scripted {
            base_url: format!("http://{addr}/v1"),
            script,
            _task: task,
        }
    }
}

fn error(status: u16) -> Response {
    let status = StatusCode::from_u16(status).unwrap();
    let body = json!({ "error": { "message": format!("scripted {status}"), "type": "upstream", "code": null } });
    (status, axum::Json(body)).into_response()
}

fn chunk(model: &str, delta: Value, finish: Value) -> String {
    let value = json!({
        "id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
    });
    format!("data: {value}\n\n")
}

async fn answer(
    State(script): State<Script>,
    uri: Uri,
    headers: HeaderMap,
    raw: String,
) -> Response {
    let body: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    let path = uri.path().to_owned();
    // Gemini names the model in the path: `models/{m}:{action}`.
    let model = match (body["model"].as_str(), path.rsplit_once("/models/")) {
        (Some(model), _) => model.to_owned(),
        (None, Some((_, tail))) => tail.split(':').next().unwrap_or_default().to_owned(),
        (None, None) => String::new(),
    };
    let step = script.next(Call {
        path: path.clone(),
        model: model.clone(),
        headers,
        body: body.clone(),
        raw,
    });
    let stream = body["stream"] == true;
    let step = match step {
        Step::Delay(ms) => {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            Step::Ok
        }
        Step::Held => {
            script.1.acquire().await.unwrap().forget();
            Step::Ok
        }
        other => other,
    };
    match step {
        Step::Status(code) => error(code),
        Step::RetryAfterMs(code, ms) => {
            let mut response = error(code);
            response
                .headers_mut()
                .insert("retry-after-ms", ms.to_string().parse().unwrap());
            response
        }
        Step::RetryAfter(code, s) => {
            let mut response = error(code);
            response
                .headers_mut()
                .insert("retry-after", s.to_string().parse().unwrap());
            response
        }
        Step::CutStream => {
            let first = chunk(&model, json!({ "role": "assistant", "content": "partial " }), Value::Null);
            let events = futures::stream::iter([Ok::<_, std::io::Error>(first)]);
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(events))
                .unwrap()
        }
        Step::Ok if uri.path().ends_with("/images/generations") => axum::Json(json!({
            "created": 1_700_000_000,
            "data": [{ "b64_json": "iVBORw0KGgo=", "revised_prompt": format!("drawn by {model}") }],
        }))
        .into_response(),
        Step::Ok if path == "/v1/completions" => legacy_completion(&model, &body),
        Step::Ok if path.ends_with("/responses") => {
            let calls = script.calls().iter().filter(|c| c.path == path).count();
            responses_answer(&model, &body, calls)
        }
        Step::Ok if path.ends_with("/embeddings") => {
            let count = match &body["input"] {
                Value::Array(items) if !items.iter().all(Value::is_number) => items.len(),
                _ => 1,
            };
            let data: Vec<Value> = (0..count)
                .map(|i| {
                    let embedding = if body["encoding_format"] == "base64" {
                        json!(SCRIPTED_BASE64)
                    } else {
                        json!([i as f64, 0.5])
                    };
                    json!({ "object": "embedding", "index": i, "embedding": embedding })
                })
                .collect();
            let mut answer = json!({ "object": "list", "data": data, "model": model });
            if !model.starts_with("no-usage") {
                answer["usage"] = json!({ "prompt_tokens": 7, "total_tokens": 7 });
            }
            axum::Json(answer).into_response()
        }
        Step::Ok if path.ends_with(":batchEmbedContents") => {
            let embeddings: Vec<Value> = body["requests"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, request)| {
                    let length = request["outputDimensionality"].as_u64().unwrap_or(2) as usize;
                    let mut values = vec![json!(i as f64), json!(0.25)];
                    values.resize(length.max(2), json!(0.0));
                    json!({ "values": values })
                })
                .collect();
            axum::Json(json!({ "embeddings": embeddings })).into_response()
        }
        Step::Ok if stream => {
            let mut events = vec![chunk(&model, json!({ "role": "assistant", "content": "" }), Value::Null)];
            for word in ["hello ", "from ", model.as_str()] {
                events.push(chunk(&model, json!({ "content": word }), Value::Null));
            }
            events.push(chunk(&model, json!({}), json!("stop")));
            let usage = json!({ "id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1_700_000_000,
                "model": model, "choices": [], "usage": { "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 } });
            events.push(format!("data: {usage}\n\n"));
            events.push("data: [DONE]\n\n".to_owned());
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(futures::stream::iter(
                    events.into_iter().map(Ok::<_, std::io::Error>),
                )))
                .unwrap()
        }
        Step::Ok | Step::Delay(_) | Step::Held => axum::Json(json!({
            "id": "chatcmpl-s", "object": "chat.completion", "created": 1_700_000_000, "model": model,
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": format!("hello from {model}") }, "finish_reason": "stop" }],
            "usage": { "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 },
        }))
        .into_response(),
    }
}

/// A legacy text completion (`/v1/completions`), plain or streamed.
fn legacy_completion(model: &str, body: &Value) -> Response {
    let usage = json!({ "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 });
    let choice = |text: &str, finish: Value| {
        json!({ "id": "cmpl-s", "object": "text_completion", "created": 1_700_000_000, "model": model,
                "choices": [{ "index": 0, "text": text, "logprobs": null, "finish_reason": finish }] })
    };
    if body["stream"] != true {
        let mut answer = choice(&format!("hello from {model}"), json!("stop"));
        answer["usage"] = usage;
        return axum::Json(answer).into_response();
    }
    let mut events: Vec<String> = ["hello ", "from ", model]
        .iter()
        .map(|text| format!("data: {}\n\n", choice(text, Value::Null)))
        .collect();
    events.push(format!("data: {}\n\n", choice("", json!("stop"))));
    if body["stream_options"]["include_usage"] == true {
        let mut last = choice("", Value::Null);
        last["choices"] = json!([]);
        last["usage"] = usage;
        events.push(format!("data: {last}\n\n"));
    }
    events.push("data: [DONE]\n\n".to_owned());
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(futures::stream::iter(
            events.into_iter().map(Ok::<_, std::io::Error>),
        )))
        .unwrap()
}

/// A Responses API answer (`/responses`), plain or streamed.
fn responses_answer(model: &str, body: &Value, n: usize) -> Response {
    let id = format!("resp_up_{n}");
    let text = format!("hello from {model}");
    let item = json!({ "type": "message", "id": "msg_up", "status": "completed", "role": "assistant",
        "content": [{ "type": "output_text", "text": text, "annotations": [] }] });
    let response = |status: &str, output: Value, usage: Value| {
        json!({ "id": id, "object": "response", "created_at": 1_700_000_000, "status": status,
            "model": model, "output": output, "usage": usage,
            "previous_response_id": body["previous_response_id"], "error": null,
            "incomplete_details": null, "tools": [], "tool_choice": "auto", "parallel_tool_calls": true })
    };
    let usage = json!({ "input_tokens": 10, "output_tokens": 5, "total_tokens": 15 });
    if body["stream"] != true {
        return axum::Json(response("completed", json!([item]), usage)).into_response();
    }
    let mut events = vec![json!({ "type": "response.created", "sequence_number": 0,
        "response": response("in_progress", json!([]), Value::Null) })];
    for (i, word) in ["hello ", "from ", model].iter().enumerate() {
        events.push(
            json!({ "type": "response.output_text.delta", "sequence_number": i + 1,
            "item_id": "msg_up", "output_index": 0, "content_index": 0, "delta": word }),
        );
    }
    events.push(json!({ "type": "response.completed", "sequence_number": 4,
        "response": response("completed", json!([item]), usage) }));
    let frames: Vec<String> = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(futures::stream::iter(
            frames.into_iter().map(Ok::<_, std::io::Error>),
        )))
        .unwrap()
}
