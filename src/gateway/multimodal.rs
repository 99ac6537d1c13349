//! Capability stripping: parts the routed model cannot take are replaced by
//! a text note, and the call still proceeds (spec, "Multimodal rules").
//! It runs per model of the chain, so a fallback to a vision model receives
//! the image that an earlier text-only model could not take.

use serde_json::{Value, json};

use crate::catalogue::{Capability, Model};

pub const IMAGE_NOTE: &str = "[Image attached — not supported by this model]";
pub const AUDIO_NOTE: &str = "[Audio attached — not supported by this model]";

/// Whether any message carries an image or audio part (the free tier's
/// daily multimodal cap counts these requests).
pub fn is_multimodal(messages: &Value) -> bool {
    messages.as_array().is_some_and(|list| {
        list.iter().any(|m| {
            m["content"].as_array().is_some_and(|parts| {
                parts
                    .iter()
                    .any(|p| matches!(p["type"].as_str(), Some("image_url" | "input_audio")))
            })
        })
    })
}

/// Returns the messages adapted to `model`, and how many parts were replaced.
pub fn adapt(messages: &Value, model: &Model) -> (Value, usize) {
    let Some(list) = messages.as_array() else {
        return (messages.clone(), 0);
    };
    let mut replaced = 0;
    let mut adapted: Vec<Value> = list
        .iter()
        .map(|message| {
            let Some(parts) = message["content"].as_array() else {
                return message.clone();
            };
            let parts: Vec<Value> = parts
                .iter()
                .map(|part| {
                    let (needed, note) = match part["type"].as_str() {
                        Some("image_url") => (Capability::Image, IMAGE_NOTE),
                        Some("input_audio") => (Capability::Audio, AUDIO_NOTE),
                        _ => return part.clone(),
                    };
                    if model.accepts(needed) {
                        part.clone()
                    } else {
                        replaced += 1;
                        json!({ "type": "text", "text": note })
                    }
                })
                .collect();
            let mut message = message.clone();
            message["content"] = Value::Array(parts);
            message
        })
        .collect();
    // When stripping left only text everywhere, content becomes plain
    // strings again (older OpenAI-compatible servers accept only those).
    let all_text = adapted.iter().all(|m| match &m["content"] {
        Value::Array(parts) => parts.iter().all(|p| p["type"] == "text"),
        _ => true,
    });
    if replaced > 0 && all_text {
        for message in &mut adapted {
            if let Value::Array(parts) = &message["content"] {
                let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
                message["content"] = Value::String(text.join("\n"));
            }
        }
    }
    (Value::Array(adapted), replaced)
}
