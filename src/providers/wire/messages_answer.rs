//! A chat completion as an answer of Anthropic's Messages API, and the
//! pieces the stream translation ([`super::messages_stream`]) shares with it:
//! the stop reason, the usage, the message id, the gateway's extensions
//! carried over (docs/messages.md, "Translation").

use serde_json::{Value, json};

/// A chat `finish_reason` as a Messages `stop_reason`.
pub fn stop_reason(finish: &Value) -> &'static str {
    match finish.as_str() {
        Some("length") => "max_tokens",
        Some("tool_calls" | "function_call") => "tool_use",
        Some("content_filter") => "refusal",
        _ => "end_turn",
    }
}

/// Messages usage from chat usage: cached input is reported apart, as
/// Anthropic does (`input_tokens` excludes it).
pub fn usage(chat: &Value) -> Value {
    let prompt = chat["prompt_tokens"].as_u64().unwrap_or(0);
    let cached = chat["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap_or(0)
        .min(prompt);
    let mut usage = json!({
        "input_tokens": prompt - cached,
        "output_tokens": chat["completion_tokens"].as_u64().unwrap_or(0),
    });
    if cached > 0 {
        usage["cache_read_input_tokens"] = json!(cached);
    }
    usage
}

/// A tool call's arguments as the `input` object (`{}` when they are not
/// a JSON object, as a model may produce).
pub fn tool_input(arguments: &Value) -> Value {
    arguments
        .as_str()
        .and_then(|a| serde_json::from_str::<Value>(a).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}))
}

/// A message id from a completion id (`msg_` and the id's safe characters).
pub fn message_id(completion_id: &Value) -> String {
    let id: String = completion_id
        .as_str()
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    if id.is_empty() {
        format!("msg_{}", ulid::Ulid::generate())
    } else {
        format!("msg_{id}")
    }
}

/// The gateway's extensions a completion carries that a message (whole,
/// or the end of a stream) carries over.
pub(super) const EXTENSIONS: [&str; 5] = [
    "billing",
    "risk_classification",
    "explainability",
    "truncation",
    "pii_redaction",
];

/// A chat completion as a Messages answer; `model` is the caller's name.
/// The gateway's extensions (`billing`, `risk_classification`...) ride
/// along as extra fields.
pub fn to_message(completion: &Value, model: &str) -> Value {
    let choice = &completion["choices"][0];
    let message = &choice["message"];
    let mut content: Vec<Value> = Vec::new();
    let text = crate::providers::content_text(&message["content"]);
    if !text.is_empty() {
        content.push(json!({ "type": "text", "text": text }));
    }
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        content.push(json!({
            "type": "tool_use",
            "id": call["id"],
            "name": call["function"]["name"],
            "input": tool_input(&call["function"]["arguments"]),
        }));
    }
    let mut answer = json!({
        "id": message_id(&completion["id"]),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason(&choice["finish_reason"]),
        "stop_sequence": null,
        "usage": usage(&completion["usage"]),
    });
    for extension in EXTENSIONS {
        if let Some(value) = completion.get(extension) {
            answer[extension] = value.clone();
        }
    }
    answer
}
