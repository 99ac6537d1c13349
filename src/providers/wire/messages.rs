//! Anthropic's Messages API to the internal chat request, and the chat
//! completion back to a Messages answer (docs/messages.md, "Translation").
//!
//! The request is read field by field: what has a chat counterpart is
//! translated, what has none is dropped by a documented rule and named in
//! [`Translated::dropped`] (the caller sees it in `x-tollgate-dropped`).
//! Nothing Claude Code or the SDKs send is refused for being untranslatable
//! (`thinking`, `context_management`, `output_config`, `metadata`,
//! `cache_control`, hosted tools...): a refusal would only make the client
//! retry. What is malformed (wrong types, unknown block types, empty
//! messages) is refused, naming the field.

use serde_json::{Map, Value, json};

use crate::base::error::ApiError;

/// Top-level fields that have no chat counterpart and are dropped.
const DROPPED_FIELDS: [&str; 9] = [
    "thinking",
    "context_management",
    "output_config",
    "metadata",
    "top_k",
    "service_tier",
    "container",
    "mcp_servers",
    "betas",
];

/// A Messages request read into the chat request's body.
#[derive(Debug)]
pub struct Translated {
    /// The chat body (OpenAI shape): `model`, `messages`, and the
    /// translated options.
    pub body: Map<String, Value>,
    pub model: String,
    pub stream: bool,
    /// What had no translation and was dropped (field names, `tools[2]
    /// (web_search_20250305)`, block types), once each.
    pub dropped: Vec<String>,
}

fn invalid(param: &str, message: impl Into<String>) -> ApiError {
    ApiError::invalid(param, message)
}

impl Translated {
    fn drop_note(&mut self, what: impl Into<String>) {
        let what = what.into();
        if !self.dropped.contains(&what) {
            self.dropped.push(what);
        }
    }
}

/// Reads a Messages body. `max_output` is the target model's catalogue
/// `max_output_tokens`: a larger `max_tokens` is clamped to it.
pub fn to_chat(body: &Value, max_output: Option<u32>) -> Result<Translated, ApiError> {
    let Value::Object(fields) = body else {
        return Err(invalid("body", "the body must be a JSON object"));
    };
    let model = match fields.get("model") {
        Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_owned(),
        _ => return Err(invalid("model", "`model` must be a non-empty string")),
    };
    let stream = match fields.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(invalid("stream", "`stream` must be a boolean")),
    };
    let mut out = Translated {
        body: Map::new(),
        model: model.clone(),
        stream,
        dropped: Vec::new(),
    };
    let mut system = system_text(fields.get("system"))?;
    let messages = match fields.get("messages") {
        Some(Value::Array(m)) if !m.is_empty() => m,
        Some(Value::Array(_)) => return Err(invalid("messages", "`messages` must not be empty")),
        None | Some(Value::Null) => return Err(invalid("messages", "`messages` is required")),
        Some(_) => return Err(invalid("messages", "`messages` must be an array")),
    };
    let mut chat: Vec<Value> = Vec::with_capacity(messages.len() + 1);
    for (i, message) in messages.iter().enumerate() {
        let at = format!("messages[{i}]");
        let Value::Object(message) = message else {
            return Err(invalid(&at, "each message must be an object"));
        };
        match message.get("role").and_then(Value::as_str) {
            Some("user") => user_turn(&mut out, &mut chat, message.get("content"), &at)?,
            Some("assistant") => assistant_turn(&mut out, &mut chat, message.get("content"), &at)?,
            // Claude Code sends one inside `messages`: folded into the
            // system prompt, where the chat wire keeps it.
            Some("system") => {
                let text = system_text(message.get("content"))?.unwrap_or_default();
                if !text.is_empty() {
                    system = Some(match system {
                        Some(before) if !before.is_empty() => format!("{before}\n\n{text}"),
                        _ => text,
                    });
                }
            }
            _ => {
                return Err(invalid(
                    &format!("{at}.role"),
                    "`role` must be user, assistant or system",
                ));
            }
        }
    }
    if let Some(system) = system.filter(|s| !s.is_empty()) {
        chat.insert(0, json!({ "role": "system", "content": system }));
    }
    if !chat.iter().any(|m| m["role"] != "system") {
        return Err(invalid(
            "messages",
            "`messages` must hold at least one user or assistant message",
        ));
    }
    out.body.insert("model".into(), Value::String(model));
    out.body.insert("messages".into(), Value::Array(chat));
    if stream {
        out.body.insert("stream".into(), Value::Bool(true));
    }
    options(fields, max_output, &mut out)?;
    for field in DROPPED_FIELDS {
        if fields.get(field).is_some_and(|v| !v.is_null()) {
            out.drop_note(field);
        }
    }
    Ok(out)
}

/// `max_tokens`, `temperature`, `top_p`, `stop_sequences`, `tools`,
/// `tool_choice`.
// Long on purpose: a field-by-field translation, one arm a field, in the order
// of docs/messages.md.
fn options(
    fields: &Map<String, Value>,
    max_output: Option<u32>,
    out: &mut Translated,
) -> Result<(), ApiError> {
    match fields.get("max_tokens") {
        None | Some(Value::Null) => {}
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => {
                let n = max_output.map_or(n, |cap| n.min(u64::from(cap)));
                out.body.insert("max_tokens".into(), json!(n));
            }
            _ => {
                return Err(invalid(
                    "max_tokens",
                    "`max_tokens` must be a whole number of at least 1",
                ));
            }
        },
    }
    for (field, max) in [("temperature", 1.0), ("top_p", 1.0)] {
        match fields.get(field) {
            None | Some(Value::Null) => {}
            Some(v) => match v.as_f64() {
                Some(x) if (0.0..=max).contains(&x) => {
                    out.body.insert(field.into(), v.clone());
                }
                _ => {
                    return Err(invalid(
                        field,
                        format!("`{field}` must be a number from 0 to {max}"),
                    ));
                }
            },
        }
    }
    match fields.get("stop_sequences") {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) if list.iter().all(Value::is_string) => {
            if !list.is_empty() {
                out.body.insert("stop".into(), Value::Array(list.clone()));
            }
        }
        Some(_) => {
            return Err(invalid(
                "stop_sequences",
                "`stop_sequences` must be an array of strings",
            ));
        }
    }
    let tools = tools(fields.get("tools"), out)?;
    let has_tools = !tools.is_empty();
    if has_tools {
        out.body.insert("tools".into(), Value::Array(tools));
    }
    match fields.get("tool_choice") {
        None | Some(Value::Null) => {}
        Some(choice) => {
            let kind = choice["type"].as_str();
            let translated = match kind {
                Some("auto") => json!("auto"),
                Some("any") => json!("required"),
                Some("none") => json!("none"),
                Some("tool") => match choice["name"].as_str() {
                    Some(name) => json!({ "type": "function", "function": { "name": name } }),
                    None => {
                        return Err(invalid(
                            "tool_choice.name",
                            "a `tool` tool_choice names the tool in `name`",
                        ));
                    }
                },
                _ => {
                    return Err(invalid(
                        "tool_choice.type",
                        "`tool_choice.type` must be auto, any, tool or none",
                    ));
                }
            };
            // A choice without tools to choose from means nothing upstream.
            if has_tools {
                out.body.insert("tool_choice".into(), translated);
                if choice["disable_parallel_tool_use"] == true {
                    out.body
                        .insert("parallel_tool_calls".into(), Value::Bool(false));
                }
            }
        }
    }
    Ok(())
}

/// Custom tools as chat functions; hosted (server) tools are dropped.
fn tools(tools: Option<&Value>, out: &mut Translated) -> Result<Vec<Value>, ApiError> {
    let list = match tools {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(invalid("tools", "`tools` must be an array")),
    };
    let mut functions = Vec::with_capacity(list.len());
    for (i, tool) in list.iter().enumerate() {
        let at = format!("tools[{i}]");
        if !tool.is_object() {
            return Err(invalid(&at, "each tool must be an object"));
        }
        match tool["type"].as_str() {
            None | Some("custom") => {}
            // `web_search_20250305`, `bash_20250124`, `text_editor_...`:
            // run by Anthropic's servers, which a translated model lacks.
            Some(hosted) => {
                out.drop_note(format!("{at} ({hosted})"));
                continue;
            }
        }
        let Some(name) = tool["name"].as_str().filter(|n| !n.is_empty()) else {
            return Err(invalid(&format!("{at}.name"), "a tool needs a `name`"));
        };
        let parameters = match &tool["input_schema"] {
            Value::Object(_) => tool["input_schema"].clone(),
            Value::Null => json!({ "type": "object", "properties": {} }),
            _ => {
                return Err(invalid(
                    &format!("{at}.input_schema"),
                    "`input_schema` must be a JSON Schema object",
                ));
            }
        };
        let mut function = json!({ "name": name, "parameters": parameters });
        if let Some(description) = tool["description"].as_str() {
            function["description"] = json!(description);
        }
        functions.push(json!({ "type": "function", "function": function }));
    }
    Ok(functions)
}

/// The text of `system` (a string, or text blocks whose `cache_control`
/// is ignored), `None` when absent.
fn system_text(system: Option<&Value>) -> Result<Option<String>, ApiError> {
    match system {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(Value::Array(blocks)) => {
            let mut texts = Vec::with_capacity(blocks.len());
            for (i, block) in blocks.iter().enumerate() {
                match (block["type"].as_str(), block["text"].as_str()) {
                    (Some("text"), Some(text)) => texts.push(text),
                    _ => {
                        return Err(invalid(
                            &format!("system[{i}]"),
                            "`system` blocks must be text blocks with a `text` string",
                        ));
                    }
                }
            }
            Ok(Some(texts.join("\n\n")))
        }
        Some(_) => Err(invalid(
            "system",
            "`system` must be a string or an array of text blocks",
        )),
    }
}

/// The content as blocks: a string is one text block.
fn blocks<'a>(content: Option<&'a Value>, at: &str) -> Result<Vec<&'a Value>, ApiError> {
    match content {
        Some(Value::String(_)) => Ok(vec![content.expect("matched")]),
        Some(Value::Array(blocks)) => Ok(blocks.iter().collect()),
        _ => Err(invalid(
            &format!("{at}.content"),
            "`content` must be a string or an array of content blocks",
        )),
    }
}

/// A user turn: its `tool_result` blocks become `tool` messages (first,
/// as the chat wire wants them right after the assistant's calls), the
/// rest one user message.
fn user_turn(
    out: &mut Translated,
    chat: &mut Vec<Value>,
    content: Option<&Value>,
    at: &str,
) -> Result<(), ApiError> {
    let mut parts: Vec<Value> = Vec::new();
    let mut tool_results: Vec<Value> = Vec::new();
    for (j, block) in blocks(content, at)?.into_iter().enumerate() {
        let at = format!("{at}.content[{j}]");
        if let Value::String(text) = block {
            parts.push(json!({ "type": "text", "text": text }));
            continue;
        }
        match block_type(block, &at)? {
            "text" => parts.push(text_part(block, &at)?),
            "image" => parts.push(image_part(block, &at)?),
            "document" => parts.push(document_part(out, block, &at)?),
            "tool_result" => tool_results.push(tool_result(out, block, &at)?),
            "tool_use" => {
                return Err(invalid(
                    &format!("{at}.type"),
                    "`tool_use` blocks belong in assistant messages",
                ));
            }
            other => untranslated(out, other, &at)?,
        }
    }
    chat.extend(tool_results);
    if !parts.is_empty() {
        // One text part stays a plain string, as most chat clients send.
        let content = match parts.as_slice() {
            [only] if only["type"] == "text" => only["text"].clone(),
            _ => Value::Array(parts),
        };
        chat.push(json!({ "role": "user", "content": content }));
    }
    Ok(())
}

/// An assistant turn: text joined, `tool_use` blocks as `tool_calls`,
/// thinking blocks dropped.
fn assistant_turn(
    out: &mut Translated,
    chat: &mut Vec<Value>,
    content: Option<&Value>,
    at: &str,
) -> Result<(), ApiError> {
    let mut text: Vec<String> = Vec::new();
    let mut calls: Vec<Value> = Vec::new();
    for (j, block) in blocks(content, at)?.into_iter().enumerate() {
        let at = format!("{at}.content[{j}]");
        if let Value::String(s) = block {
            text.push(s.clone());
            continue;
        }
        match block_type(block, &at)? {
            "text" => text.push(
                text_part(block, &at)?["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ),
            "tool_use" => {
                let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
                    return Err(invalid(&at, "a `tool_use` block needs `id` and `name`"));
                };
                let input = match &block["input"] {
                    Value::Null => json!({}),
                    input => input.clone(),
                };
                calls.push(json!({
                    "id": id,
                    "type": "function",
                    "function": { "name": name, "arguments": input.to_string() },
                }));
            }
            "image" | "document" | "tool_result" => {
                return Err(invalid(
                    &format!("{at}.type"),
                    "an assistant message holds text, tool_use and thinking blocks",
                ));
            }
            other => untranslated(out, other, &at)?,
        }
    }
    let text = text.join("");
    if text.is_empty() && calls.is_empty() {
        return Ok(());
    }
    let mut message = json!({
        "role": "assistant",
        "content": if text.is_empty() { Value::Null } else { Value::String(text) },
    });
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    chat.push(message);
    Ok(())
}

fn block_type<'a>(block: &'a Value, at: &str) -> Result<&'a str, ApiError> {
    if !block.is_object() {
        return Err(invalid(at, "each content block must be an object"));
    }
    block["type"]
        .as_str()
        .ok_or_else(|| invalid(&format!("{at}.type"), "each content block needs a `type`"))
}

/// Block types of the Messages API that have no chat counterpart: dropped
/// (named in `dropped`). Any other type is refused.
fn untranslated(out: &mut Translated, kind: &str, at: &str) -> Result<(), ApiError> {
    const KNOWN: [&str; 8] = [
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
    ];
    if KNOWN.contains(&kind) || kind.ends_with("_tool_result") || kind == "container_upload" {
        out.drop_note(format!("{kind} blocks"));
        return Ok(());
    }
    Err(invalid(
        &format!("{at}.type"),
        format!(
            "unknown content block type `{kind}`; use text, image, document, tool_use or tool_result"
        ),
    ))
}

fn text_part(block: &Value, at: &str) -> Result<Value, ApiError> {
    match block["text"].as_str() {
        Some(text) => Ok(json!({ "type": "text", "text": text })),
        None => Err(invalid(
            &format!("{at}.text"),
            "a text block needs a `text` string",
        )),
    }
}

/// An image block as an `image_url` part: a data URI for a base64 source,
/// the URL for a URL source.
fn image_part(block: &Value, at: &str) -> Result<Value, ApiError> {
    let source = &block["source"];
    let url = match source["type"].as_str() {
        Some("base64") => {
            let (Some(mime), Some(data)) = (source["media_type"].as_str(), source["data"].as_str())
            else {
                return Err(invalid(
                    &format!("{at}.source"),
                    "a base64 image source needs `media_type` and `data`",
                ));
            };
            format!("data:{mime};base64,{data}")
        }
        Some("url") => match source["url"].as_str() {
            Some(url) => url.to_owned(),
            None => {
                return Err(invalid(
                    &format!("{at}.source.url"),
                    "a url image source needs `url`",
                ));
            }
        },
        _ => {
            return Err(invalid(
                &format!("{at}.source.type"),
                "an image source is `base64` or `url`",
            ));
        }
    };
    super::chat::image_source(&url).map_err(|m| invalid(&format!("{at}.source"), m))?;
    Ok(json!({ "type": "image_url", "image_url": { "url": url } }))
}

/// A document block: a plain-text source becomes its text; a PDF (or any
/// other source) is replaced by a note, as the chat route replaces an
/// attachment a model cannot take.
fn document_part(out: &mut Translated, block: &Value, at: &str) -> Result<Value, ApiError> {
    let source = &block["source"];
    match (source["type"].as_str(), source["data"].as_str()) {
        (Some("text"), Some(text)) => Ok(json!({ "type": "text", "text": text })),
        (Some(_), _) => {
            out.drop_note("document blocks (non-text)");
            let title = block["title"].as_str().unwrap_or("a document");
            Ok(json!({
                "type": "text",
                "text": format!("[{title} was attached; this model cannot read it through the gateway]"),
            }))
        }
        (None, _) => Err(invalid(
            &format!("{at}.source"),
            "a document block needs a `source`",
        )),
    }
}

/// A `tool_result` block as a `tool` message: its text (text blocks
/// joined; images noted), prefixed `[error] ` when `is_error`.
fn tool_result(out: &mut Translated, block: &Value, at: &str) -> Result<Value, ApiError> {
    let Some(id) = block["tool_use_id"].as_str() else {
        return Err(invalid(
            &format!("{at}.tool_use_id"),
            "a `tool_result` block needs `tool_use_id`",
        ));
    };
    let text = match &block["content"] {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        Value::Array(parts) => {
            let mut texts = Vec::with_capacity(parts.len());
            for (k, part) in parts.iter().enumerate() {
                let at = format!("{at}.content[{k}]");
                match block_type(part, &at)? {
                    "text" => texts.push(
                        text_part(part, &at)?["text"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                    ),
                    "image" => {
                        out.drop_note("images in tool results");
                        texts.push("[image]".to_owned());
                    }
                    other => untranslated(out, other, &at)?,
                }
            }
            texts.join("\n")
        }
        _ => {
            return Err(invalid(
                &format!("{at}.content"),
                "`content` must be a string or an array of blocks",
            ));
        }
    };
    let text = if block["is_error"] == true {
        format!("[error] {text}")
    } else {
        text
    };
    Ok(json!({ "role": "tool", "tool_call_id": id, "content": text }))
}

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

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
