//! A Responses request's `input` (and `instructions`) as chat messages:
//! each input item (`message`, `function_call`, `function_call_output`,
//! `reasoning`) and content part translated, or refused naming the field
//! (docs/responses.md, "Translation rules"). Read both for a translated
//! request ([`super::responses_input`]) and for the classifier's view of a
//! request forwarded as it is ([`classification_view`]).

use serde_json::{Value, json};

use crate::base::error::ApiError;

/// At most this many input items in one request.
pub const MAX_ITEMS: usize = 2048;

fn invalid(param: &str, message: impl Into<String>) -> ApiError {
    ApiError::invalid(param, message)
}

/// The OpenAI-style messages the classifier and the caps read, for a
/// request forwarded as it is (the passthrough).
pub fn classification_view(body: &Value) -> Result<Value, ApiError> {
    let mut messages = Vec::new();
    if let Some(instructions) = body["instructions"].as_str() {
        messages.push(json!({ "role": "system", "content": instructions }));
    }
    messages.extend(input_messages(&body["input"])?);
    Ok(Value::Array(messages))
}

/// `input` as chat messages: a string is one user message; items become
/// messages, assistant tool calls and tool results (one arm per item type,
/// in the order of docs/responses.md).
pub fn input_messages(input: &Value) -> Result<Vec<Value>, ApiError> {
    let items = match input_items(input)? {
        Input::Text(text) => return Ok(vec![json!({ "role": "user", "content": text })]),
        Input::Items(items) => items,
    };
    let mut messages: Vec<Value> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("input[{i}]");
        match item_type(item, &at)? {
            "message" => messages.push(message(item, &at)?),
            "function_call" => add_call(&mut messages, function_call(item, &at)?),
            "function_call_output" => messages.push(function_call_output(item, &at)?),
            // Reasoning of an earlier turn: encrypted for OpenAI or a
            // summary; no other provider can take it, so it is dropped.
            "reasoning" => {}
            other => {
                return Err(invalid(
                    &format!("{at}.type"),
                    format!(
                        "input items of type `{other}` are not accepted: use `message`, `function_call`, `function_call_output` or `reasoning`"
                    ),
                ));
            }
        }
    }
    if messages.is_empty() {
        return Err(invalid(
            "input",
            "`input` holds no message, function call or function call output",
        ));
    }
    Ok(messages)
}

/// What `input` holds: one text, or at most [`MAX_ITEMS`] items.
enum Input<'a> {
    Text(&'a str),
    Items(&'a [Value]),
}

fn input_items(input: &Value) -> Result<Input<'_>, ApiError> {
    match input {
        Value::String(text) if text.is_empty() => {
            Err(invalid("input", "`input` must not be empty"))
        }
        Value::String(text) => Ok(Input::Text(text)),
        Value::Array(items) if items.is_empty() => {
            Err(invalid("input", "`input` must not be empty"))
        }
        Value::Array(items) if items.len() > MAX_ITEMS => Err(invalid(
            "input",
            format!(
                "`input` has {} items; at most {MAX_ITEMS} are accepted",
                items.len()
            ),
        )),
        Value::Array(items) => Ok(Input::Items(items)),
        Value::Null => Err(invalid("input", "`input` is required")),
        _ => Err(invalid(
            "input",
            "`input` must be a string or an array of input items",
        )),
    }
}

/// An item's type; an item with a `role` and no `type` is a message.
fn item_type<'a>(item: &'a Value, at: &str) -> Result<&'a str, ApiError> {
    if !item.is_object() {
        return Err(invalid(at, "each input item must be an object"));
    }
    match &item["type"] {
        Value::Null if item.get("role").is_some() => Ok("message"),
        Value::String(kind) => Ok(kind.as_str()),
        _ => Err(invalid(&format!("{at}.type"), "`type` must be a string")),
    }
}

/// A `function_call` item as a chat tool call.
fn function_call(item: &Value, at: &str) -> Result<Value, ApiError> {
    let call_id = string(item, "call_id", at)?;
    let name = string(item, "name", at)?;
    let arguments = match &item["arguments"] {
        Value::String(a) => a.clone(),
        Value::Null => "{}".to_owned(),
        _ => {
            return Err(invalid(
                &format!("{at}.arguments"),
                "`arguments` must be a string of JSON",
            ));
        }
    };
    Ok(json!({
        "id": call_id,
        "type": "function",
        "function": { "name": name, "arguments": arguments },
    }))
}

/// Calls of one turn go on one assistant message, after its text if it had
/// any.
fn add_call(messages: &mut Vec<Value>, call: Value) {
    match messages.last_mut() {
        Some(last) if last["role"] == "assistant" => {
            if let Some(calls) = last["tool_calls"].as_array_mut() {
                calls.push(call);
            } else {
                last["tool_calls"] = json!([call]);
            }
        }
        _ => messages.push(json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [call],
        })),
    }
}

/// A `function_call_output` item as a `tool` message.
fn function_call_output(item: &Value, at: &str) -> Result<Value, ApiError> {
    let call_id = string(item, "call_id", at)?;
    let output = match &item["output"] {
        // Parts' texts joined by newlines.
        output @ (Value::String(_) | Value::Array(_)) => crate::providers::content_text(output),
        _ => {
            return Err(invalid(
                &format!("{at}.output"),
                "`output` must be a string or an array of content parts",
            ));
        }
    };
    Ok(json!({
        "role": "tool",
        "tool_call_id": call_id,
        "content": output,
    }))
}

pub(super) fn string(item: &Value, field: &str, at: &str) -> Result<String, ApiError> {
    match &item[field] {
        Value::String(s) if !s.is_empty() => Ok(s.clone()),
        _ => Err(invalid(
            &format!("{at}.{field}"),
            format!("`{field}` must be a non-empty string"),
        )),
    }
}

fn message(item: &Value, at: &str) -> Result<Value, ApiError> {
    let role = match item["role"].as_str() {
        Some("developer" | "system") => "system",
        Some("user") => "user",
        Some("assistant") => "assistant",
        _ => {
            return Err(invalid(
                &format!("{at}.role"),
                "`role` must be `user`, `assistant`, `system` or `developer`",
            ));
        }
    };
    let content = match &item["content"] {
        Value::String(text) => Value::String(text.clone()),
        Value::Array(parts) => {
            let mut out = Vec::with_capacity(parts.len());
            for (j, part) in parts.iter().enumerate() {
                out.push(content_part(part, &format!("{at}.content[{j}]"))?);
            }
            // Text only (every message but user ones with images) is
            // sent as one string, which every provider takes.
            if out.iter().all(|p| p["type"] == "text") && role != "user" {
                Value::String(
                    out.iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join(""),
                )
            } else {
                Value::Array(out)
            }
        }
        _ => {
            return Err(invalid(
                &format!("{at}.content"),
                "`content` must be a string or an array of content parts",
            ));
        }
    };
    Ok(json!({ "role": role, "content": content }))
}

fn content_part(part: &Value, at: &str) -> Result<Value, ApiError> {
    match part["type"].as_str() {
        Some("input_text" | "output_text" | "text" | "summary_text") => match &part["text"] {
            Value::String(text) => Ok(json!({ "type": "text", "text": text })),
            _ => Err(invalid(&format!("{at}.text"), "`text` must be a string")),
        },
        Some("refusal") => match &part["refusal"] {
            Value::String(text) => Ok(json!({ "type": "text", "text": text })),
            _ => Err(invalid(
                &format!("{at}.refusal"),
                "`refusal` must be a string",
            )),
        },
        Some("input_image") => match &part["image_url"] {
            Value::String(url) if !url.is_empty() => {
                let mut image = json!({ "url": url });
                if let Some(detail) = part["detail"].as_str() {
                    image["detail"] = json!(detail);
                }
                Ok(json!({ "type": "image_url", "image_url": image }))
            }
            _ if part.get("file_id").is_some() => Err(invalid(
                &format!("{at}.file_id"),
                "images by `file_id` are not served: send `image_url` (an https URL or a data URL)",
            )),
            _ => Err(invalid(
                &format!("{at}.image_url"),
                "`image_url` must be a non-empty string (an https URL or a data URL)",
            )),
        },
        Some(other) => Err(invalid(
            &format!("{at}.type"),
            format!(
                "content parts of type `{other}` are not accepted: use `input_text`, `output_text` or `input_image`"
            ),
        )),
        None => Err(invalid(&format!("{at}.type"), "`type` must be a string")),
    }
}
