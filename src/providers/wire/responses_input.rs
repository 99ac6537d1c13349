//! Parsing a Responses API request (`POST /v1/responses`) once, into what
//! the gateway needs: the chain, the service fields, and the request as an
//! internal chat request (messages, tools, limits) for the providers that
//! are reached by translation (docs/responses.md, "Translation rules").
//!
//! The rule for what today's agents send (Codex CLI): every field of the
//! Responses API is accepted; what has no chat equivalent is dropped by a
//! documented rule, never refused. Hosted tools (`web_search`, `namespace`,
//! `file_search`, ...) are dropped under translation and named in the
//! `x-tollgate-dropped-tools` header; `reasoning` items of the input are
//! dropped (their content is encrypted for OpenAI). What is malformed (a
//! wrong type, an unknown item or part type, an empty input) is a 400 that
//! names the field.

use serde_json::{Map, Value, json};

use super::chat::{ChatRequest, SERVICE_FIELDS, ServiceFields};
use crate::base::error::ApiError;

/// At most this many input items in one request.
pub const MAX_ITEMS: usize = 2048;

/// A parsed Responses request.
#[derive(Debug, Clone)]
pub struct ResponsesRequest {
    /// The models to try (`models` wins over `model`).
    pub chain: Vec<String>,
    /// The chain came from `models` (a fallback chain, even of one).
    pub from_models: bool,
    pub stream: bool,
    /// `store: false` keeps nothing for `previous_response_id`.
    pub store: bool,
    pub previous_response_id: Option<String>,
    /// The input and `instructions` as chat messages (`instructions` first).
    pub messages: Vec<Value>,
    /// Function tools in the chat shape.
    pub tools: Vec<Value>,
    /// Tools that have no chat equivalent (hosted tools), by type.
    pub dropped_tools: Vec<String>,
    /// The chat body's other fields (`tool_choice`, `max_tokens`, ...).
    pub chat_fields: Map<String, Value>,
    /// Fields echoed on the response object as the caller sent them.
    pub echo: Echo,
    pub auto_truncate: bool,
    /// The compliance service fields, taken out of the body.
    pub service: ServiceFields,
}

/// What a response object repeats of its request.
#[derive(Debug, Clone, Default)]
pub struct Echo {
    pub instructions: Value,
    pub metadata: Value,
    pub tools: Value,
    pub tool_choice: Value,
    pub temperature: Value,
    pub top_p: Value,
    pub max_output_tokens: Value,
    pub parallel_tool_calls: Value,
    pub text: Value,
    pub reasoning: Value,
}

fn invalid(param: &str, message: impl Into<String>) -> ApiError {
    ApiError::invalid(param, message)
}

impl ResponsesRequest {
    /// The internal chat request: `messages` are the history (a stored
    /// previous response's) followed by this request's.
    pub fn to_chat(&self, history: Vec<Value>) -> ChatRequest {
        let mut body = self.chat_fields.clone();
        body.insert("model".into(), Value::String(self.chain[0].clone()));
        let mut messages = Vec::with_capacity(history.len() + self.messages.len());
        // `instructions` apply to this request only (OpenAI's rule): the
        // history keeps no system message of an earlier one.
        messages.extend(
            self.messages
                .iter()
                .filter(|m| m["role"] == "system")
                .cloned(),
        );
        messages.extend(history.into_iter().filter(|m| m["role"] != "system"));
        messages.extend(
            self.messages
                .iter()
                .filter(|m| m["role"] != "system")
                .cloned(),
        );
        body.insert("messages".into(), Value::Array(messages));
        if !self.tools.is_empty() {
            body.insert("tools".into(), Value::Array(self.tools.clone()));
        } else {
            body.remove("tool_choice");
            body.remove("parallel_tool_calls");
        }
        body.insert("stream".into(), Value::Bool(self.stream));
        ChatRequest {
            body,
            chain: self.chain.clone(),
            stream: self.stream,
            auto_truncate: self.auto_truncate,
            service: self.service.clone(),
        }
    }
}

/// Parses and validates a Responses request body.
// Long on purpose: a field-by-field parse, one step a field, in the order of
// docs/responses.md.
pub fn parse(bytes: &[u8]) -> Result<ResponsesRequest, ApiError> {
    let mut body = super::chat::object(bytes)?;
    let service = super::chat::service_fields(&mut body)?;
    debug_assert!(SERVICE_FIELDS.contains(&"deployer_context"));
    let from_models = body.contains_key("models");
    let chain = chain(&mut body)?;
    let flag = |field: &str, default: bool| match body.get(field) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(invalid(field, format!("`{field}` must be a boolean"))),
    };
    let stream = flag("stream", false)?;
    let store = flag("store", true)?;
    flag("parallel_tool_calls", true)?;
    let previous_response_id = match body.get("previous_response_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) if !id.trim().is_empty() => Some(id.trim().to_owned()),
        Some(_) => {
            return Err(invalid(
                "previous_response_id",
                "`previous_response_id` must be a non-empty string",
            ));
        }
    };
    let mut messages = Vec::new();
    match body.get("instructions") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => {
            if !text.is_empty() {
                messages.push(json!({ "role": "system", "content": text }));
            }
        }
        Some(_) => return Err(invalid("instructions", "`instructions` must be a string")),
    }
    messages.extend(input_messages(body.get("input").unwrap_or(&Value::Null))?);
    let (tools, dropped_tools) = tools(body.get("tools"))?;
    let mut chat_fields = Map::new();
    if let Some(choice) = tool_choice(body.get("tool_choice"))? {
        chat_fields.insert("tool_choice".into(), choice);
    }
    for field in ["temperature", "top_p"] {
        match body.get(field) {
            None | Some(Value::Null) => {}
            Some(n @ Value::Number(_)) => {
                chat_fields.insert(field.into(), n.clone());
            }
            Some(_) => return Err(invalid(field, format!("`{field}` must be a number"))),
        }
    }
    match body.get("max_output_tokens") {
        None | Some(Value::Null) => {}
        Some(n) => match n.as_u64() {
            Some(max) if max > 0 => {
                chat_fields.insert("max_tokens".into(), json!(max));
            }
            _ => {
                return Err(invalid(
                    "max_output_tokens",
                    "`max_output_tokens` must be a positive integer",
                ));
            }
        },
    }
    if let Some(Value::Bool(parallel)) = body.get("parallel_tool_calls") {
        chat_fields.insert("parallel_tool_calls".into(), Value::Bool(*parallel));
    }
    match body.get("metadata") {
        None | Some(Value::Null | Value::Object(_)) => {}
        Some(_) => return Err(invalid("metadata", "`metadata` must be an object")),
    }
    if let Some(format) = response_format(body.get("text"))? {
        chat_fields.insert("response_format".into(), format);
    }
    let auto_truncate = match body.get("truncation") {
        None | Some(Value::Null) => false,
        Some(Value::String(mode)) if mode == "auto" => true,
        Some(Value::String(mode)) if mode == "disabled" => false,
        Some(_) => {
            return Err(invalid(
                "truncation",
                "`truncation` must be `auto` or `disabled`",
            ));
        }
    };
    let field = |name: &str| body.get(name).cloned().unwrap_or(Value::Null);
    let echo = Echo {
        instructions: field("instructions"),
        metadata: body.get("metadata").cloned().unwrap_or_else(|| json!({})),
        tools: body.get("tools").cloned().unwrap_or_else(|| json!([])),
        tool_choice: body
            .get("tool_choice")
            .cloned()
            .unwrap_or_else(|| json!("auto")),
        temperature: field("temperature"),
        top_p: field("top_p"),
        max_output_tokens: field("max_output_tokens"),
        parallel_tool_calls: body
            .get("parallel_tool_calls")
            .cloned()
            .unwrap_or(Value::Bool(true)),
        text: body
            .get("text")
            .cloned()
            .unwrap_or_else(|| json!({ "format": { "type": "text" } })),
        reasoning: field("reasoning"),
    };
    Ok(ResponsesRequest {
        chain,
        from_models,
        stream,
        store,
        previous_response_id,
        messages,
        tools,
        dropped_tools,
        chat_fields,
        echo,
        auto_truncate,
        service,
    })
}

fn chain(body: &mut Map<String, Value>) -> Result<Vec<String>, ApiError> {
    match (body.remove("models"), body.get("model")) {
        (Some(Value::Array(list)), _) => super::chat::model_list(&list),
        (Some(_), _) => Err(invalid(
            "models",
            "`models` must be an array of model names",
        )),
        (None, Some(Value::String(name))) if !name.trim().is_empty() => {
            Ok(vec![name.trim().to_owned()])
        }
        (None, _) => Err(invalid("model", "`model` must be a non-empty string")),
    }
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
/// messages, assistant tool calls and tool results.
// Long on purpose: one arm per input item type, in the order of
// docs/responses.md.
pub fn input_messages(input: &Value) -> Result<Vec<Value>, ApiError> {
    let items = match input {
        Value::String(text) if text.is_empty() => {
            return Err(invalid("input", "`input` must not be empty"));
        }
        Value::String(text) => return Ok(vec![json!({ "role": "user", "content": text })]),
        Value::Array(items) if items.is_empty() => {
            return Err(invalid("input", "`input` must not be empty"));
        }
        Value::Array(items) if items.len() > MAX_ITEMS => {
            return Err(invalid(
                "input",
                format!(
                    "`input` has {} items; at most {MAX_ITEMS} are accepted",
                    items.len()
                ),
            ));
        }
        Value::Array(items) => items,
        Value::Null => return Err(invalid("input", "`input` is required")),
        _ => {
            return Err(invalid(
                "input",
                "`input` must be a string or an array of input items",
            ));
        }
    };
    let mut messages: Vec<Value> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("input[{i}]");
        if !item.is_object() {
            return Err(invalid(&at, "each input item must be an object"));
        }
        let kind = match &item["type"] {
            Value::Null if item.get("role").is_some() => "message",
            Value::String(kind) => kind.as_str(),
            _ => return Err(invalid(&format!("{at}.type"), "`type` must be a string")),
        };
        match kind {
            "message" => messages.push(message(item, &at)?),
            "function_call" => {
                let call_id = string(item, "call_id", &at)?;
                let name = string(item, "name", &at)?;
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
                let call = json!({
                    "id": call_id,
                    "type": "function",
                    "function": { "name": name, "arguments": arguments },
                });
                // Calls of one turn go on one assistant message, after its
                // text if it had any.
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
            "function_call_output" => {
                let call_id = string(item, "call_id", &at)?;
                let output = match &item["output"] {
                    Value::String(text) => text.clone(),
                    Value::Array(parts) => parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => {
                        return Err(invalid(
                            &format!("{at}.output"),
                            "`output` must be a string or an array of content parts",
                        ));
                    }
                };
                messages.push(json!({
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": output,
                }));
            }
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

fn string(item: &Value, field: &str, at: &str) -> Result<String, ApiError> {
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

/// Function tools in the chat shape, and the types of the others (hosted
/// tools), which translation drops.
fn tools(tools: Option<&Value>) -> Result<(Vec<Value>, Vec<String>), ApiError> {
    let list = match tools {
        None | Some(Value::Null) => return Ok((Vec::new(), Vec::new())),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(invalid("tools", "`tools` must be an array")),
    };
    let mut functions = Vec::new();
    let mut dropped = Vec::new();
    for (i, tool) in list.iter().enumerate() {
        let at = format!("tools[{i}]");
        let Some(kind) = tool["type"].as_str() else {
            return Err(invalid(&format!("{at}.type"), "`type` must be a string"));
        };
        if kind != "function" {
            if !dropped.iter().any(|d| d == kind) {
                dropped.push(kind.to_owned());
            }
            continue;
        }
        let name = string(tool, "name", &at)?;
        let mut function = json!({ "name": name });
        match &tool["description"] {
            Value::Null => {}
            Value::String(d) => function["description"] = json!(d),
            _ => {
                return Err(invalid(
                    &format!("{at}.description"),
                    "`description` must be a string",
                ));
            }
        }
        match &tool["parameters"] {
            Value::Null => {}
            p @ Value::Object(_) => function["parameters"] = p.clone(),
            _ => {
                return Err(invalid(
                    &format!("{at}.parameters"),
                    "`parameters` must be a JSON Schema object",
                ));
            }
        }
        match &tool["strict"] {
            Value::Null => {}
            Value::Bool(strict) => function["strict"] = json!(strict),
            _ => {
                return Err(invalid(
                    &format!("{at}.strict"),
                    "`strict` must be a boolean",
                ));
            }
        }
        functions.push(json!({ "type": "function", "function": function }));
    }
    Ok((functions, dropped))
}

/// `tool_choice` in the chat shape; a hosted tool's choice is dropped.
fn tool_choice(choice: Option<&Value>) -> Result<Option<Value>, ApiError> {
    match choice {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(mode)) if matches!(mode.as_str(), "auto" | "none" | "required") => {
            Ok(Some(json!(mode)))
        }
        Some(Value::Object(choice)) => match choice.get("type").and_then(Value::as_str) {
            Some("function") => match choice.get("name").and_then(Value::as_str) {
                Some(name) if !name.is_empty() => Ok(Some(
                    json!({ "type": "function", "function": { "name": name } }),
                )),
                _ => Err(invalid(
                    "tool_choice.name",
                    "`name` must be a non-empty string",
                )),
            },
            Some(_) => Ok(None),
            None => Err(invalid("tool_choice.type", "`type` must be a string")),
        },
        Some(_) => Err(invalid(
            "tool_choice",
            "`tool_choice` must be `auto`, `none`, `required` or an object",
        )),
    }
}

/// `text.format` as chat's `response_format`.
fn response_format(text: Option<&Value>) -> Result<Option<Value>, ApiError> {
    let format = match text {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(text)) => match text.get("format") {
            None | Some(Value::Null) => return Ok(None),
            Some(format @ Value::Object(_)) => format,
            Some(_) => return Err(invalid("text.format", "`format` must be an object")),
        },
        Some(_) => return Err(invalid("text", "`text` must be an object")),
    };
    match format["type"].as_str() {
        Some("text") => Ok(None),
        Some("json_object") => Ok(Some(json!({ "type": "json_object" }))),
        Some("json_schema") => {
            let mut schema = json!({
                "name": format["name"].as_str().unwrap_or("response"),
                "schema": format["schema"],
            });
            if let Some(strict) = format["strict"].as_bool() {
                schema["strict"] = json!(strict);
            }
            Ok(Some(
                json!({ "type": "json_schema", "json_schema": schema }),
            ))
        }
        _ => Err(invalid(
            "text.format.type",
            "`text.format.type` must be `text`, `json_object` or `json_schema`",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(body: Value) -> Result<ResponsesRequest, ApiError> {
        parse(body.to_string().as_bytes())
    }

    #[test]
    fn items_become_chat_messages_with_tool_calls_and_results() {
        let request = parsed(json!({
            "model": "m",
            "instructions": "be brief",
            "input": [
                { "role": "developer", "content": [{ "type": "input_text", "text": "dev" }] },
                { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "hi" }] },
                { "type": "reasoning", "summary": [], "encrypted_content": "x" },
                { "type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}" },
                { "type": "function_call_output", "call_id": "c1", "output": "42" },
            ],
        }))
        .unwrap();
        assert_eq!(
            Value::Array(request.messages),
            json!([
                { "role": "system", "content": "be brief" },
                { "role": "system", "content": "dev" },
                { "role": "user", "content": [{ "type": "text", "text": "hi" }] },
                { "role": "assistant", "content": null, "tool_calls": [
                    { "id": "c1", "type": "function", "function": { "name": "f", "arguments": "{}" } }
                ] },
                { "role": "tool", "tool_call_id": "c1", "content": "42" },
            ])
        );
    }

    #[test]
    fn hosted_tools_are_dropped_and_named() {
        let request = parsed(json!({
            "model": "m", "input": "x",
            "tools": [
                { "type": "function", "name": "f", "parameters": { "type": "object" }, "strict": true },
                { "type": "web_search" },
                { "type": "namespace", "name": "mcp" },
            ],
        }))
        .unwrap();
        assert_eq!(request.tools.len(), 1);
        assert_eq!(request.dropped_tools, vec!["web_search", "namespace"]);
    }

    #[test]
    fn bad_inputs_name_the_field() {
        for (body, param) in [
            (json!({ "model": "m", "input": "" }), "input"),
            (json!({ "model": "m", "input": [] }), "input"),
            (json!({ "model": "m", "input": 3 }), "input"),
            (json!({ "model": "m" }), "input"),
            (json!({ "input": "x" }), "model"),
            (
                json!({ "model": "m", "input": [{ "type": "bogus" }] }),
                "input[0].type",
            ),
            (
                json!({ "model": "m", "input": [{ "role": "user", "content": [{ "type": "audio" }] }] }),
                "input[0].content[0].type",
            ),
            (
                json!({ "model": "m", "input": [{ "role": "robot", "content": "x" }] }),
                "input[0].role",
            ),
            (
                json!({ "model": "m", "input": "x", "max_output_tokens": "9" }),
                "max_output_tokens",
            ),
            (
                json!({ "model": "m", "input": "x", "stream": "yes" }),
                "stream",
            ),
            (json!({ "model": "m", "input": "x", "tools": {} }), "tools"),
        ] {
            let error = parsed(body.clone()).unwrap_err();
            assert_eq!(error.param.as_deref(), Some(param), "{body}");
        }
    }
}
