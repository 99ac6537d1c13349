//! Anthropic's Messages API to the internal chat request (docs/messages.md,
//! "Translation"); the answer back is [`super::messages_answer`].
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
/// `tool_choice`, in the order of docs/messages.md.
fn options(
    fields: &Map<String, Value>,
    max_output: Option<u32>,
    out: &mut Translated,
) -> Result<(), ApiError> {
    if let Some(n) = max_tokens(fields.get("max_tokens"), max_output)? {
        out.body.insert("max_tokens".into(), json!(n));
    }
    for (field, max) in [("temperature", 1.0), ("top_p", 1.0)] {
        if let Some(v) = sampling(fields.get(field), field, max)? {
            out.body.insert(field.into(), v.clone());
        }
    }
    if let Some(stop) = stop_sequences(fields.get("stop_sequences"))? {
        out.body.insert("stop".into(), Value::Array(stop.clone()));
    }
    let tools = tools(fields.get("tools"), out)?;
    let has_tools = !tools.is_empty();
    if has_tools {
        out.body.insert("tools".into(), Value::Array(tools));
    }
    let Some(choice) = fields.get("tool_choice").filter(|c| !c.is_null()) else {
        return Ok(());
    };
    let translated = tool_choice(choice)?;
    // A choice without tools to choose from means nothing upstream.
    if has_tools {
        out.body.insert("tool_choice".into(), translated);
        if choice["disable_parallel_tool_use"] == true {
            out.body
                .insert("parallel_tool_calls".into(), Value::Bool(false));
        }
    }
    Ok(())
}

/// `max_tokens`, clamped to the model's `max_output` (`None` when absent).
fn max_tokens(value: Option<&Value>, max_output: Option<u32>) -> Result<Option<u64>, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Ok(Some(max_output.map_or(n, |cap| n.min(u64::from(cap))))),
            _ => Err(invalid(
                "max_tokens",
                "`max_tokens` must be a whole number of at least 1",
            )),
        },
    }
}

/// A sampling number (`temperature`, `top_p`) from 0 to `max`, as sent.
fn sampling<'a>(
    value: Option<&'a Value>,
    field: &str,
    max: f64,
) -> Result<Option<&'a Value>, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if (0.0..=max).contains(&x) => Ok(Some(v)),
            _ => Err(invalid(
                field,
                format!("`{field}` must be a number from 0 to {max}"),
            )),
        },
    }
}

/// `stop_sequences` as chat's `stop` (`None` when absent or empty).
fn stop_sequences(value: Option<&Value>) -> Result<Option<&Vec<Value>>, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(list)) if list.iter().all(Value::is_string) => {
            Ok(Some(list).filter(|l| !l.is_empty()))
        }
        Some(_) => Err(invalid(
            "stop_sequences",
            "`stop_sequences` must be an array of strings",
        )),
    }
}

/// A `tool_choice` object in the chat shape.
fn tool_choice(choice: &Value) -> Result<Value, ApiError> {
    match choice["type"].as_str() {
        Some("auto") => Ok(json!("auto")),
        Some("any") => Ok(json!("required")),
        Some("none") => Ok(json!("none")),
        Some("tool") => match choice["name"].as_str() {
            Some(name) => Ok(json!({ "type": "function", "function": { "name": name } })),
            None => Err(invalid(
                "tool_choice.name",
                "a `tool` tool_choice names the tool in `name`",
            )),
        },
        _ => Err(invalid(
            "tool_choice.type",
            "`tool_choice.type` must be auto, any, tool or none",
        )),
    }
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

/// A content block as the turns read it: text (a string, or a `text`
/// block's `text`), or another block by its type.
enum Block<'a> {
    Text(&'a str),
    Typed(&'a str, &'a Value),
}

/// The content's blocks, each with its path (`messages[0].content[2]`): a
/// string is one text block, and so is a string in the array. Read one at a
/// time, so the first bad block is the one named.
fn blocks<'a>(
    content: Option<&'a Value>,
    at: &str,
) -> Result<impl Iterator<Item = Result<(String, Block<'a>), ApiError>> + 'a, ApiError> {
    let blocks: Vec<&Value> = match content {
        Some(Value::String(_)) => vec![content.expect("matched")],
        Some(Value::Array(blocks)) => blocks.iter().collect(),
        _ => {
            return Err(invalid(
                &format!("{at}.content"),
                "`content` must be a string or an array of content blocks",
            ));
        }
    };
    let at = at.to_owned();
    Ok(blocks.into_iter().enumerate().map(move |(j, block)| {
        let at = format!("{at}.content[{j}]");
        let block = match block {
            Value::String(text) => Block::Text(text),
            _ => match block_type(block, &at)? {
                "text" => Block::Text(text_of(block, &at)?),
                kind => Block::Typed(kind, block),
            },
        };
        Ok((at, block))
    }))
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
    for block in blocks(content, at)? {
        let (at, block) = block?;
        match block {
            Block::Text(text) => parts.push(json!({ "type": "text", "text": text })),
            Block::Typed("image", block) => parts.push(image_part(block, &at)?),
            Block::Typed("document", block) => parts.push(document_part(out, block, &at)?),
            Block::Typed("tool_result", block) => tool_results.push(tool_result(out, block, &at)?),
            Block::Typed("tool_use", _) => {
                return Err(invalid(
                    &format!("{at}.type"),
                    "`tool_use` blocks belong in assistant messages",
                ));
            }
            Block::Typed(other, _) => untranslated(out, other, &at)?,
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
    let mut text: Vec<&str> = Vec::new();
    let mut calls: Vec<Value> = Vec::new();
    for block in blocks(content, at)? {
        let (at, block) = block?;
        match block {
            Block::Text(part) => text.push(part),
            Block::Typed("tool_use", block) => calls.push(tool_call(block, &at)?),
            Block::Typed("image" | "document" | "tool_result", _) => {
                return Err(invalid(
                    &format!("{at}.type"),
                    "an assistant message holds text, tool_use and thinking blocks",
                ));
            }
            Block::Typed(other, _) => untranslated(out, other, &at)?,
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

/// A `tool_use` block as a chat tool call (its `input` as the arguments'
/// JSON text).
fn tool_call(block: &Value, at: &str) -> Result<Value, ApiError> {
    let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
        return Err(invalid(at, "a `tool_use` block needs `id` and `name`"));
    };
    let input = match &block["input"] {
        Value::Null => json!({}),
        input => input.clone(),
    };
    Ok(json!({
        "id": id,
        "type": "function",
        "function": { "name": name, "arguments": input.to_string() },
    }))
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

/// The `text` of a text block.
fn text_of<'a>(block: &'a Value, at: &str) -> Result<&'a str, ApiError> {
    match block["text"].as_str() {
        Some(text) => Ok(text),
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
                    "text" => texts.push(text_of(part, &at)?),
                    "image" => {
                        out.drop_note("images in tool results");
                        texts.push("[image]");
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

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
