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
use super::responses_items::{input_messages, string};
use crate::base::error::ApiError;

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

/// Parses and validates a Responses request body, field by field in the
/// order of docs/responses.md (the first field at fault is the one named).
pub fn parse(bytes: &[u8]) -> Result<ResponsesRequest, ApiError> {
    let mut body = super::chat::object(bytes)?;
    let service = super::chat::service_fields(&mut body)?;
    debug_assert!(SERVICE_FIELDS.contains(&"deployer_context"));
    let from_models = body.contains_key("models");
    let chain = chain(&mut body)?;
    let stream = flag(&body, "stream", false)?;
    let store = flag(&body, "store", true)?;
    flag(&body, "parallel_tool_calls", true)?;
    let previous_response_id = previous_response_id(&body)?;
    let messages = instructions_and_input(&body)?;
    let (tools, dropped_tools) = tools(body.get("tools"))?;
    let chat_fields = chat_fields(&body)?;
    let auto_truncate = truncation(&body)?;
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
        echo: echo(&body),
        auto_truncate,
        service,
    })
}

/// A boolean field, `default` when absent.
fn flag(body: &Map<String, Value>, field: &str, default: bool) -> Result<bool, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(invalid(field, format!("`{field}` must be a boolean"))),
    }
}

fn previous_response_id(body: &Map<String, Value>) -> Result<Option<String>, ApiError> {
    match body.get("previous_response_id") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(id)) if !id.trim().is_empty() => Ok(Some(id.trim().to_owned())),
        Some(_) => Err(invalid(
            "previous_response_id",
            "`previous_response_id` must be a non-empty string",
        )),
    }
}

/// `instructions` (a system message, when not empty), then `input`.
fn instructions_and_input(body: &Map<String, Value>) -> Result<Vec<Value>, ApiError> {
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
    Ok(messages)
}

/// The chat body's fields translated from the request's: `tool_choice`,
/// `temperature`, `top_p`, `max_tokens` (from `max_output_tokens`),
/// `parallel_tool_calls`, `response_format` (from `text.format`).
fn chat_fields(body: &Map<String, Value>) -> Result<Map<String, Value>, ApiError> {
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
    Ok(chat_fields)
}

/// `truncation`: `auto` truncates the context to fit.
fn truncation(body: &Map<String, Value>) -> Result<bool, ApiError> {
    match body.get("truncation") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::String(mode)) if mode == "auto" => Ok(true),
        Some(Value::String(mode)) if mode == "disabled" => Ok(false),
        Some(_) => Err(invalid(
            "truncation",
            "`truncation` must be `auto` or `disabled`",
        )),
    }
}

/// What the response object repeats, with OpenAI's defaults for what the
/// request left out.
fn echo(body: &Map<String, Value>) -> Echo {
    let field = |name: &str| body.get(name).cloned().unwrap_or(Value::Null);
    let or = |name: &str, default: Value| body.get(name).cloned().unwrap_or(default);
    Echo {
        instructions: field("instructions"),
        metadata: or("metadata", json!({})),
        tools: or("tools", json!([])),
        tool_choice: or("tool_choice", json!("auto")),
        temperature: field("temperature"),
        top_p: field("top_p"),
        max_output_tokens: field("max_output_tokens"),
        parallel_tool_calls: or("parallel_tool_calls", Value::Bool(true)),
        text: or("text", json!({ "format": { "type": "text" } })),
        reasoning: field("reasoning"),
    }
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

/// Whether a value is of a field's type.
type Fits = fn(&Value) -> bool;

/// A function tool's optional fields, copied when of their type: the
/// field, its type, what the error says it must be.
const FUNCTION_OPTIONS: [(&str, Fits, &str); 3] = [
    ("description", Value::is_string, "a string"),
    ("parameters", Value::is_object, "a JSON Schema object"),
    ("strict", Value::is_boolean, "a boolean"),
];

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
        for (field, fits, what) in FUNCTION_OPTIONS {
            match &tool[field] {
                Value::Null => {}
                value if fits(value) => function[field] = value.clone(),
                _ => {
                    return Err(invalid(
                        &format!("{at}.{field}"),
                        format!("`{field}` must be {what}"),
                    ));
                }
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
    fn options_become_chat_fields_and_the_echo_keeps_what_was_sent() {
        let request = parsed(json!({
            "model": "m",
            "input": [
                { "type": "function_call_output", "call_id": "c1", "output": [{ "type": "input_text", "text": "a" }, { "type": "input_text", "text": "b" }] },
            ],
            "tools": [{ "type": "function", "name": "f", "description": "d", "parameters": { "type": "object" }, "strict": false }],
            "tool_choice": "required",
            "temperature": 0.2,
            "max_output_tokens": 64,
            "parallel_tool_calls": false,
            "text": { "format": { "type": "json_object" } },
            "truncation": "auto",
        }))
        .unwrap();
        assert_eq!(request.messages[0]["content"], "a\nb");
        assert_eq!(
            request.tools[0],
            json!({ "type": "function", "function": { "name": "f", "description": "d", "parameters": { "type": "object" }, "strict": false } })
        );
        assert_eq!(
            Value::Object(request.chat_fields),
            json!({ "tool_choice": "required", "temperature": 0.2, "max_tokens": 64,
                    "parallel_tool_calls": false, "response_format": { "type": "json_object" } })
        );
        assert!(request.auto_truncate);
        assert_eq!(request.echo.max_output_tokens, 64);
        assert_eq!(request.echo.metadata, json!({}));
        assert_eq!(request.echo.parallel_tool_calls, false);
        assert_eq!(request.echo.reasoning, Value::Null);
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
            (
                json!({ "model": "m", "input": "x", "tools": [{ "type": "function", "name": "f", "description": 3 }] }),
                "tools[0].description",
            ),
            (
                json!({ "model": "m", "input": "x", "tools": [{ "type": "function", "name": "f", "parameters": [] }] }),
                "tools[0].parameters",
            ),
            (
                json!({ "model": "m", "input": "x", "tools": [{ "type": "function", "name": "f", "strict": "yes" }] }),
                "tools[0].strict",
            ),
            (
                json!({ "model": "m", "input": [{ "type": "function_call_output", "call_id": "c", "output": 3 }] }),
                "input[0].output",
            ),
            (
                json!({ "model": "m", "input": [{ "type": "function_call", "call_id": "c", "name": "f", "arguments": {} }] }),
                "input[0].arguments",
            ),
            (
                json!({ "model": "m", "input": "x", "truncation": "sometimes" }),
                "truncation",
            ),
            (
                json!({ "model": "m", "input": "x", "previous_response_id": " " }),
                "previous_response_id",
            ),
            (
                json!({ "model": "m", "input": "x", "metadata": 1 }),
                "metadata",
            ),
            (json!({ "model": "m", "input": "x", "store": 1 }), "store"),
            // The first field at fault, in the order of docs/responses.md.
            (
                json!({ "model": "m", "input": "x", "instructions": 1, "temperature": "hot" }),
                "instructions",
            ),
        ] {
            let error = parsed(body.clone()).unwrap_err();
            assert_eq!(error.param.as_deref(), Some(param), "{body}");
        }
    }
}
