//! A scripted upstream that speaks the OpenAI chat wire format on
//! `127.0.0.1:0`, records every request body it receives, and behaves as
//! the requested `model` name says:
//!
//! | model | answer |
//! |---|---|
//! | `ok` | a completion `hello from upstream`, usage 10 + 5 |
//! | `tool` | a completion with one tool call |
//! | `status-NNN` | HTTP NNN with an OpenAI error body |
//! | `slow-MS` | waits MS ms, then `ok` |
//! | `garbage` | 200 with a body that is not JSON |
//! | streamed `ok`/`tool` | chunks 150 ms apart, usage chunk if asked for |
//! | streamed `nousage` | chunks without a usage chunk |
//! | streamed `cut` | two chunks, then the connection closes (no `[DONE]`) |
//! | streamed `endless` | a chunk every 50 ms until the reader goes away; [`Recorded::abandoned`] counts those |
//! | `echo` | the last message's text as the answer (the PII tests' placeholders come back) |
//! | streamed `echo-N` | that text in chunks of N characters, without pauses |
//!
//! Fault modes for the reliability suite ([`fault`]), plain and streamed:
//!
//! | model | answer |
//! |---|---|
//! | `reset` | 200, part of the body (streamed: one chunk), then the connection is reset |
//! | `truncated` | 200, JSON cut in the middle (streamed: a `data:` line cut), then a clean end |
//! | `wrongtype` | 200 `text/html` with an HTML page |
//! | `huge` | 200, a JSON answer of 65 MB (streamed: one 9 MB `data:` line) |
//! | `stall` | 200, part of the body (streamed: one chunk), then nothing, forever |
//! | `redirect` | 307 to this same endpoint with `?followed=1` (a client that follows it posts again) |
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use serde_json::{Value, json};

#[derive(Clone, Default)]
pub struct Recorded(Arc<Mutex<Vec<(HeaderMap, Value)>>>, Arc<AtomicUsize>);

/// Counts, when dropped, a response body its reader stopped reading.
struct Abandoned(Arc<AtomicUsize>);

impl Drop for Abandoned {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Recorded {
    /// How many `endless` streams lost their reader.
    pub fn abandoned(&self) -> usize {
        self.1.load(Ordering::SeqCst)
    }
    pub fn bodies(&self) -> Vec<Value> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(_, b)| b.clone())
            .collect()
    }
    pub fn headers(&self) -> Vec<HeaderMap> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(h, _)| h.clone())
            .collect()
    }
    pub fn models(&self) -> Vec<String> {
        self.bodies()
            .iter()
            .map(|b| b["model"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

/// A configuration with one `openai` provider `up` at `upstream` and a
/// text model per `(id, upstream model)`, priced 1 and 2 credits per
/// million input and output tokens (the `ok` answer costs 20 micro-credits).
/// The provider does not retry (`max_retries = 0`), so every failure is
/// one upstream call and counts stay exact; tests/routing.rs covers
/// retries.
pub fn catalogue(upstream: &str, models: &[(&str, &str)]) -> String {
    let mut out = format!(
        "[[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{upstream}\"\nmax_retries = 0\n"
    );
    for (id, up) in models {
        out.push_str(&format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"up\"\nupstream = \"{up}\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
             context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
        ));
    }
    out
}

pub struct Upstream {
    pub base_url: String,
    pub recorded: Recorded,
    _task: tokio::task::JoinHandle<()>,
}

impl Upstream {
    pub async fn start() -> Upstream {
        let recorded = Recorded::default();
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .with_state(recorded.clone());
        let (addr, task) = super::serve(app).await;
        Upstream {
            base_url: format!("http://{addr}/v1"),
            recorded,
            _task: task,
        }
    }
}

/// The answer's text: scripted judge verdicts and a prohibited answer for
/// the compliance tests, else a greeting.
fn scripted_text(model: &str) -> String {
    match model {
        "judge-lower" => r#"```json
{"level": "minimal", "area": "none", "confidence": 0.95, "reason": "meta: the request discusses the topic"}
```"#
            .into(),
        "judge-unsure" => {
            r#"{"level": "minimal", "area": "none", "confidence": 0.5, "reason": "meta: perhaps"}"#.into()
        }
        "judge-raise" => r#"{"level": "prohibited", "area": "art5_1_c_social_scoring", "confidence": 0.9, "reason": "use_on_people: scores citizens to deny them services"}"#.into(),
        "judge-babble" => "I would say it is probably fine.".into(),
        "prohibited-output" => {
            "Step 1: build a social credit system and deny loans to people with a low social score.".into()
        }
        _ => "hello from upstream".into(),
    }
}

fn completion(model: &str, message: Value, finish: &str) -> Value {
    json!({
        "id": "chatcmpl-up-1", "object": "chat.completion", "created": 1_700_000_000, "model": model,
        "choices": [{ "index": 0, "message": message, "finish_reason": finish }],
        "usage": { "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 },
    })
}

fn chunk(model: &str, delta: Value, finish: Value) -> String {
    let value = json!({
        "id": "chatcmpl-up-1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
    });
    format!("data: {value}\n\n")
}

async fn chat(State(recorded): State<Recorded>, headers: HeaderMap, body: String) -> Response {
    let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    recorded.0.lock().unwrap().push((headers, body.clone()));
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    if let Some(response) = fault(&model, body["stream"] == true) {
        return response;
    }
    if let Some(status) = model.strip_prefix("status-") {
        let status = StatusCode::from_u16(status.parse().unwrap()).unwrap();
        let error = json!({ "error": { "message": format!("upstream says {status}"), "type": "upstream", "code": null } });
        return (status, axum::Json(error)).into_response();
    }
    if let Some(ms) = model.strip_prefix("slow-") {
        tokio::time::sleep(Duration::from_millis(ms.parse().unwrap())).await;
    }
    if model == "garbage" {
        return (StatusCode::OK, "this is not json").into_response();
    }
    if model == "echo" || model.starts_with("echo-") {
        return echo(&model, &body);
    }
    let tool = model == "tool";
    if body["stream"] != true {
        let message = if tool {
            json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": "call_1", "type": "function",
                    "function": { "name": "get_weather", "arguments": "{\"city\":\"Paris\"}" } }] })
        } else {
            json!({ "role": "assistant", "content": scripted_text(&model) })
        };
        return axum::Json(completion(
            &model,
            message,
            if tool { "tool_calls" } else { "stop" },
        ))
        .into_response();
    }
    if model == "endless" {
        let guard = Abandoned(recorded.1.clone());
        let stream = futures::stream::unfold(guard, move |guard| {
            let model = model.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let event = chunk(&model, json!({ "content": "more " }), Value::Null);
                Some((Ok::<_, std::io::Error>(event), guard))
            }
        });
        return Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from_stream(stream))
            .unwrap();
    }
    let usage = body["stream_options"]["include_usage"] == true && model != "nousage";
    let mut events: Vec<String> = vec![chunk(
        &model,
        json!({ "role": "assistant", "content": "" }),
        Value::Null,
    )];
    if tool {
        events.push(chunk(
            &model,
            json!({ "tool_calls": [{ "index": 0, "id": "call_1", "type": "function",
            "function": { "name": "get_weather", "arguments": "" } }] }),
            Value::Null,
        ));
        events.push(chunk(
            &model,
            json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "{\"city\":" } }] }),
            Value::Null,
        ));
        events.push(chunk(
            &model,
            json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "\"Paris\"}" } }] }),
            Value::Null,
        ));
        events.push(chunk(&model, json!({}), json!("tool_calls")));
    } else {
        for word in ["hello ", "from ", "upstream"] {
            events.push(chunk(&model, json!({ "content": word }), Value::Null));
        }
        events.push(chunk(&model, json!({}), json!("stop")));
    }
    if usage {
        let value = json!({ "id": "chatcmpl-up-1", "object": "chat.completion.chunk", "created": 1_700_000_000,
            "model": model, "choices": [], "usage": { "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 } });
        events.push(format!("data: {value}\n\n"));
    }
    let cut = model == "cut";
    if cut {
        events.truncate(2);
    } else {
        events.push("data: [DONE]\n\n".into());
    }
    let stream = futures::stream::unfold(
        (events.into_iter(), true),
        move |(mut it, first)| async move {
            if !first {
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            let next = it.next()?;
            Some((Ok::<_, std::io::Error>(next), (it, false)))
        },
    );
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

/// The last message's text, whole or streamed in chunks of N characters.
fn echo(model: &str, body: &Value) -> Response {
    let text = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    if body["stream"] != true {
        return axum::Json(completion(
            model,
            json!({ "role": "assistant", "content": text }),
            "stop",
        ))
        .into_response();
    }
    let size: usize = model
        .strip_prefix("echo-")
        .and_then(|n| n.parse().ok())
        .unwrap_or(4);
    let chars: Vec<char> = text.chars().collect();
    let mut events = vec![chunk(
        model,
        json!({ "role": "assistant", "content": "" }),
        Value::Null,
    )];
    for piece in chars.chunks(size.max(1)) {
        let piece: String = piece.iter().collect();
        events.push(chunk(model, json!({ "content": piece }), Value::Null));
    }
    events.push(chunk(model, json!({}), json!("stop")));
    if body["stream_options"]["include_usage"] == true {
        let value = json!({ "id": "chatcmpl-up-1", "object": "chat.completion.chunk", "created": 1_700_000_000,
            "model": model, "choices": [], "usage": { "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 } });
        events.push(format!("data: {value}\n\n"));
    }
    events.push("data: [DONE]\n\n".into());
    let stream = futures::stream::iter(events.into_iter().map(Ok::<_, std::io::Error>));
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

/// The answer of a fault mode (see the module table), or `None`.
pub fn fault(model: &str, stream: bool) -> Option<Response> {
    const MB: usize = 1024 * 1024;
    let content_type = if stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    let first_chunk = chunk(
        model,
        json!({ "role": "assistant", "content": "partial " }),
        Value::Null,
    );
    let parts: Vec<Result<String, std::io::Error>> = match (model, stream) {
        ("reset", false) => vec![
            Ok(r#"{"id": "chatcmpl-up-1", "object": "chat.completion", "choices": ["#.into()),
            Err(std::io::Error::other("reset")),
        ],
        ("reset", true) => vec![Ok(first_chunk), Err(std::io::Error::other("reset"))],
        ("truncated", false) => vec![Ok(r#"{"id": "chatcmpl-up-1", "object": "chat.completion", "choices": [{"index": 0, "mess"#.into())],
        ("truncated", true) => vec![Ok(r#"data: {"id": "chatcmpl-up-1", "object": "chat.compl"#.into())],
        ("redirect", _) => {
            return Some(
                Response::builder()
                    .status(StatusCode::TEMPORARY_REDIRECT)
                    .header("location", "/v1/chat/completions?followed=1")
                    .body(Body::empty())
                    .unwrap(),
            );
        }
        ("wrongtype", _) => {
            return Some(
                Response::builder()
                    .header("content-type", "text/html")
                    .body(Body::from("<html><body><h1>Welcome to nginx!</h1></body></html>\n"))
                    .unwrap(),
            );
        }
        ("huge", false) => {
            let mut parts = vec![Ok(r#"{"id": "chatcmpl-up-1", "object": "chat.completion", "pad": ""#.to_owned())];
            parts.extend((0..65).map(|_| Ok("a".repeat(MB))));
            parts.push(Ok(r#"", "choices": []}"#.into()));
            parts
        }
        ("huge", true) => {
            let mut parts = vec![Ok(r#"data: {"pad": ""#.to_owned())];
            parts.extend((0..9).map(|_| Ok("a".repeat(MB))));
            parts.push(Ok("\"}\n\n".into()));
            parts
        }
        ("stall", _) => {
            let start = if stream {
                first_chunk
            } else {
                r#"{"id": "chatcmpl-up-1", "#.into()
            };
            let body = futures::stream::once(async move { Ok::<_, std::io::Error>(start) })
                .chain(futures::stream::pending());
            return Some(
                Response::builder()
                    .header("content-type", content_type)
                    .body(Body::from_stream(body))
                    .unwrap(),
            );
        }
        _ => return None,
    };
    // A pause after the first part, so the head and that part are on the
    // wire before a reset.
    let paced = futures::stream::iter(parts.into_iter().enumerate()).then(|(i, part)| async move {
        if i == 1 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        part
    });
    Some(
        Response::builder()
            .header("content-type", content_type)
            .body(Body::from_stream(paced))
            .unwrap(),
    )
}
