//! Pieces of the OpenAI chat shape that the translating providers
//! (Anthropic, Gemini, Bedrock Converse) read or write the same way.

use serde_json::{Value, json};

use crate::base::time::now_ms;

/// Appends `blocks` as a `role` turn, merged into the last turn when that
/// has the same role (the translated APIs want roles to alternate);
/// nothing when `blocks` is empty.
pub fn push_turn(turns: &mut Vec<(String, Vec<Value>)>, role: &str, blocks: Vec<Value>) {
    if blocks.is_empty() {
        return;
    }
    match turns.last_mut() {
        Some((last, content)) if last == role => content.extend(blocks),
        _ => turns.push((role.to_owned(), blocks)),
    }
}

/// `turns` as a `messages` array of `{"role", "content"}` objects (the
/// shape Anthropic's Messages and Bedrock's Converse share).
pub fn role_messages(turns: Vec<(String, Vec<Value>)>) -> Value {
    turns
        .into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect()
}

/// The arguments of an assistant `tool_calls` entry as a JSON object
/// (`{}` when they do not parse as one).
pub fn call_arguments(call: &Value) -> Value {
    let arguments = call["function"]["arguments"].as_str().unwrap_or("{}");
    serde_json::from_str(arguments)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}))
}

/// The `function` objects of the request's `function` tools (other tool
/// types are not translated).
pub fn functions(body: &Value) -> impl Iterator<Item = &Value> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["type"] == "function")
        .map(|t| &t["function"])
}

/// A `system` or `developer` message as a `{"text": ...}` block (the
/// shape Gemini's `systemInstruction` parts and Converse's `system` share);
/// none when it has no text.
pub fn system_text_block(message: &Value) -> Option<Value> {
    let text = crate::providers::content_text(&message["content"]);
    (!text.is_empty()).then(|| json!({ "text": text }))
}

/// The caller's output limit: `max_tokens`, else `max_completion_tokens`.
pub fn max_tokens(body: &Value) -> Option<u64> {
    body["max_tokens"]
        .as_u64()
        .or_else(|| body["max_completion_tokens"].as_u64())
}

/// The caller's `stop` as a list: a string becomes a one-item list; an
/// empty list or anything else is none.
pub fn stop_sequences(body: &Value) -> Option<Value> {
    match &body["stop"] {
        Value::String(s) => Some(json!([s])),
        Value::Array(list) if !list.is_empty() => Some(Value::Array(list.clone())),
        _ => None,
    }
}

/// The assistant message of a translated answer: `content` is null when
/// the model only called tools.
pub fn assistant_message(text: String, calls: Vec<Value>) -> Value {
    let mut message = json!({
        "role": "assistant",
        "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { Value::String(text) },
    });
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    message
}

/// An OpenAI `tool_calls` entry for a tool call the upstream made with
/// `input` (a JSON value, sent on as its text).
pub fn tool_call(id: &Value, name: &Value, input: &Value) -> Value {
    json!({
        "id": id,
        "type": "function",
        "function": { "name": name, "arguments": input.to_string() },
    })
}

/// The `choices` of an answer of one choice.
pub fn one_choice(message: Value, finish_reason: &str) -> Value {
    json!([{ "index": 0, "message": message, "finish_reason": finish_reason }])
}

/// An OpenAI `chat.completion` with these choices and token counts.
pub fn completion(id: String, model: &str, choices: Value, prompt: u64, completion: u64) -> Value {
    json!({
        "id": id,
        "object": "chat.completion",
        "created": now_ms() / 1000,
        "model": model,
        "choices": choices,
        "usage": { "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion },
    })
}

/// One `chat.completion.chunk` of a translated stream, of one choice.
pub fn chunk(
    id: &str,
    created: i64,
    model: &str,
    index: u64,
    delta: Value,
    finish: Value,
) -> Value {
    json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{ "index": index, "delta": delta, "finish_reason": finish }],
    })
}

/// The stream delta that opens tool call `call` (its arguments follow in
/// later deltas).
pub fn tool_call_start(call: u64, id: &Value, name: &Value) -> Value {
    json!({ "tool_calls": [{
        "index": call, "id": id, "type": "function",
        "function": { "name": name, "arguments": "" },
    }] })
}
