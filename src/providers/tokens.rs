//! Token estimates, used when an upstream reports no usage: about four
//! characters per token (spec, "Limits"), plus a small overhead per message.

use serde_json::Value;

const PER_MESSAGE: u64 = 4;

pub fn estimate_text(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// The estimated prompt size of a `messages` array (text parts only).
pub fn estimate_messages(messages: &Value) -> u64 {
    let Some(messages) = messages.as_array() else {
        return 0;
    };
    messages.iter().map(estimate_message).sum()
}

pub fn estimate_message(message: &Value) -> u64 {
    let content = match &message["content"] {
        Value::String(text) => estimate_text(text),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .map(estimate_text)
            .sum(),
        _ => 0,
    };
    let tool_calls: u64 = message["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| estimate_text(&c["function"].to_string()))
                .sum()
        })
        .unwrap_or(0);
    PER_MESSAGE + content + tool_calls
}
