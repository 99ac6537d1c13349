//! The built-in deterministic provider: no network, behaviour chosen by the
//! model's `upstream` name. It serves the demo configuration and the tests.
//!
//! | upstream | behaviour |
//! |---|---|
//! | `echo` | answers `echo: <last user text>` |
//! | `fixed:TEXT` | answers TEXT |
//! | `tool:NAME` | calls the tool NAME with `{"input": <last user text>}` |
//! | `error:STATUS` | fails with that HTTP status |
//! | `slow:MS` | waits MS milliseconds before the first byte, then echoes |
//! | `cut:N` | streams N chunks, then breaks off |
//! | `nousage` | echoes, and streams without a usage chunk |

use std::time::Duration;

use serde_json::{Value, json};

use super::{Failure, Reply, UpstreamError};
use crate::providers::tokens;

/// A legacy completion (`POST /v1/completions`) in OpenAI's shape, as the
/// bytes of the body (one JSON document) or of the stream (SSE events, then
/// `data: [DONE]`). `echo` answers `echo: <prompt>` (the prompts joined by
/// newlines), `fixed:TEXT` answers TEXT, `error:STATUS` fails, `nousage`
/// streams without a usage chunk; a stream carries usage only when the
/// caller asked `stream_options.include_usage`, as OpenAI does. Every
/// field is deterministic (`created` is 0).
pub fn completion(
    upstream: &str,
    body: &Value,
    stream: bool,
) -> Result<Vec<bytes::Bytes>, UpstreamError> {
    let (behaviour, argument) = upstream.split_once(':').unwrap_or((upstream, ""));
    let prompt = match &body["prompt"] {
        Value::String(text) => text.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    let mut usage_in_stream = body["stream_options"]["include_usage"]
        .as_bool()
        .unwrap_or(false);
    let text = match behaviour {
        "echo" => format!("echo: {prompt}"),
        "fixed" => argument.to_owned(),
        "nousage" => {
            usage_in_stream = false;
            format!("echo: {prompt}")
        }
        "error" => {
            let status = argument.parse().unwrap_or(500);
            return Err(UpstreamError::new(
                Failure::Status(status),
                format!("mock error {status}"),
            ));
        }
        other => {
            return Err(UpstreamError::new(
                Failure::Status(404),
                format!("the mock has no completions behaviour `{other}`"),
            ));
        }
    };
    let model = body["model"].as_str().unwrap_or(upstream);
    let prompt_tokens = tokens::estimate_text(&prompt);
    let completion_tokens = tokens::estimate_text(&text);
    let usage = json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    });
    let chunk = |text: &str, finish: Value| {
        json!({
            "id": "cmpl-mock", "object": "text_completion", "created": 0, "model": model,
            "choices": [{ "index": 0, "text": text, "logprobs": null, "finish_reason": finish }],
        })
    };
    if !stream {
        let mut answer = chunk(&text, json!("stop"));
        answer["usage"] = usage;
        return Ok(vec![bytes::Bytes::from(answer.to_string())]);
    }
    let event = |value: Value| bytes::Bytes::from(format!("data: {value}\n\n"));
    let mut events: Vec<bytes::Bytes> = text
        .split_inclusive(' ')
        .map(|piece| event(chunk(piece, Value::Null)))
        .collect();
    events.push(event(chunk("", json!("stop"))));
    if usage_in_stream {
        let mut last = chunk("", Value::Null);
        last["choices"] = json!([]);
        last["usage"] = usage;
        events.push(event(last));
    }
    events.push(bytes::Bytes::from_static(b"data: [DONE]\n\n"));
    Ok(events)
}

pub async fn chat(upstream: &str, body: Value, stream: bool) -> Result<Reply, UpstreamError> {
    let Plan {
        reply,
        cut_after,
        usage_in_stream,
    } = plan(upstream, &body).await?;
    let model = body["model"].as_str().unwrap_or(upstream).to_owned();
    let prompt_tokens = tokens::estimate_messages(&body["messages"]);
    let completion_tokens = reply.tokens();
    let usage = json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    });
    let id = format!("chatcmpl-mock-{}", ulid::Ulid::generate());
    let created = crate::base::time::now_ms() / 1000;
    if !stream {
        if cut_after.is_some() {
            return Err(UpstreamError::new(Failure::Garbage, "mock cut the body"));
        }
        return Ok(Reply::Complete(json!({
            "id": id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{ "index": 0, "message": reply.message(), "finish_reason": reply.finish_reason() }],
            "usage": usage,
        })));
    }
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        })
    };
    let chunks = stream_chunks(&reply, chunk, usage_in_stream.then_some(usage));
    let items: Vec<Result<Value, UpstreamError>> = match cut_after {
        Some(n) => chunks
            .into_iter()
            .take(n)
            .map(Ok)
            .chain([Err(UpstreamError::new(Failure::Cut, "mock cut the stream"))])
            .collect(),
        None => chunks.into_iter().map(Ok).collect(),
    };
    Ok(Reply::Stream(Box::pin(futures::stream::iter(items))))
}

/// What the upstream name asks the mock to do.
struct Plan {
    reply: Answer,
    /// Break the stream off after this many chunks.
    cut_after: Option<usize>,
    usage_in_stream: bool,
}

/// Reads the behaviour from the upstream name; `slow` waits here, `error`
/// and an unknown behaviour fail.
async fn plan(upstream: &str, body: &Value) -> Result<Plan, UpstreamError> {
    let (behaviour, argument) = upstream.split_once(':').unwrap_or((upstream, ""));
    let last_user = last_user_text(body);
    let mut reply = Answer::Text(format!("echo: {last_user}"));
    let mut cut_after = None;
    let mut usage_in_stream = body["stream_options"]["include_usage"]
        .as_bool()
        .unwrap_or(false);
    match behaviour {
        "echo" => {}
        "fixed" => reply = Answer::Text(argument.to_owned()),
        "tool" => {
            reply = Answer::Tool(
                argument.to_owned(),
                json!({ "input": last_user }).to_string(),
            )
        }
        "error" => {
            let status = argument.parse().unwrap_or(500);
            return Err(UpstreamError::new(
                Failure::Status(status),
                format!("mock error {status}"),
            ));
        }
        "slow" => tokio::time::sleep(Duration::from_millis(argument.parse().unwrap_or(1000))).await,
        "cut" => cut_after = Some(argument.parse().unwrap_or(1)),
        "nousage" => usage_in_stream = false,
        other => {
            return Err(UpstreamError::new(
                Failure::Status(404),
                format!("the mock has no behaviour `{other}`"),
            ));
        }
    }
    Ok(Plan {
        reply,
        cut_after,
        usage_in_stream,
    })
}

/// The stream's chunks: the role, the text word by word or the tool call
/// in two halves, the finish reason, then the usage when given.
fn stream_chunks(
    reply: &Answer,
    chunk: impl Fn(Value, Value) -> Value,
    usage: Option<Value>,
) -> Vec<Value> {
    let mut chunks = vec![chunk(
        json!({ "role": "assistant", "content": "" }),
        Value::Null,
    )];
    match reply {
        Answer::Text(text) => {
            for piece in text.split_inclusive(' ') {
                chunks.push(chunk(json!({ "content": piece }), Value::Null));
            }
        }
        Answer::Tool(name, arguments) => {
            let call = json!([{ "index": 0, "id": "call_mock_0", "type": "function",
                                "function": { "name": name, "arguments": "" } }]);
            chunks.push(chunk(json!({ "tool_calls": call }), Value::Null));
            let (first, second) = arguments.split_at(arguments.len() / 2);
            for part in [first, second] {
                let call = json!([{ "index": 0, "function": { "arguments": part } }]);
                chunks.push(chunk(json!({ "tool_calls": call }), Value::Null));
            }
        }
    }
    chunks.push(chunk(json!({}), json!(reply.finish_reason())));
    if let Some(usage) = usage {
        let mut last = chunk(json!({}), Value::Null);
        last["choices"] = json!([]);
        last["usage"] = usage;
        chunks.push(last);
    }
    chunks
}

enum Answer {
    Text(String),
    /// Tool name and JSON arguments.
    Tool(String, String),
}

impl Answer {
    fn message(&self) -> Value {
        match self {
            Answer::Text(text) => json!({ "role": "assistant", "content": text }),
            Answer::Tool(name, arguments) => json!({
                "role": "assistant",
                "content": null,
                "tool_calls": [{ "id": "call_mock_0", "type": "function",
                                 "function": { "name": name, "arguments": arguments } }],
            }),
        }
    }

    fn finish_reason(&self) -> &'static str {
        match self {
            Answer::Text(_) => "stop",
            Answer::Tool(..) => "tool_calls",
        }
    }

    fn tokens(&self) -> u64 {
        match self {
            Answer::Text(text) => tokens::estimate_text(text),
            Answer::Tool(name, arguments) => {
                tokens::estimate_text(name) + tokens::estimate_text(arguments)
            }
        }
    }
}

/// The text of the last user message (text parts joined; other parts named).
fn last_user_text(body: &Value) -> String {
    let Some(message) = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
    else {
        return String::new();
    };
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p["type"].as_str() {
                Some("text") => p["text"].as_str().unwrap_or_default().to_owned(),
                Some(other) => format!("[{other}]"),
                None => String::new(),
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}
