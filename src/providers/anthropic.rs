//! Anthropic's Messages API (`POST {base_url}/messages`), translated both
//! ways so that a caller of the OpenAI-style API cannot tell who served it.
//!
//! Request: system messages become `system`; turns are merged so roles
//! alternate (tool results ride in a user turn); `image_url` parts become
//! image blocks (base64 for data URIs, URL source for http(s)); tools get
//! `input_schema`; `tool_choice` `required` becomes `any` and a named
//! function `tool`; assistant `tool_calls` become `tool_use` blocks and
//! `tool` messages `tool_result` blocks; `max_tokens` is always set (the
//! caller's, else the catalogue's `max_output_tokens`, else 4096); `stop`
//! becomes `stop_sequences`.
//!
//! Response: text blocks join into `content`, `tool_use` blocks become
//! `tool_calls`, stop reasons map back (`end_turn` to `stop`, `max_tokens`
//! to `length`, `tool_use` to `tool_calls`), and usage counts cached input
//! as prompt tokens. Streams translate event by event: text and tool
//! arguments are relayed as they arrive, usage comes in a last chunk, an
//! `error` event breaks the stream, and an end without `message_stop` is a
//! cut.

use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value, json};

use super::{
    ChunkStream, Failure, Reply, UpstreamError, chat_shape, content_text, http, sse, usage_chunk,
};
use crate::base::time::now_ms;
use crate::catalogue::Model;

pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` when neither the caller nor the catalogue gives one.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

pub async fn chat(
    http_client: &reqwest::Client,
    model: &Model,
    body: Value,
    stream: bool,
) -> Result<Reply, UpstreamError> {
    let provider = &model.provider;
    let base = http::base_url(provider)?;
    let url = http::endpoint(base, &["messages"]);
    let request = to_messages(&body, model.max_output_tokens, stream)?;
    let mut builder = http_client
        .post(url)
        .header("anthropic-version", API_VERSION)
        .json(&request);
    if let Some(key) = &provider.api_key {
        builder = builder.header("x-api-key", key.expose());
    }
    let sent = http::send(builder, provider, base).await?;
    let name = body["model"].as_str().unwrap_or_default().to_owned();
    sse::reply(sent, name, stream, translate_stream, from_message).await
}

/// The Messages API request for an OpenAI-shaped chat request.
pub fn to_messages(
    body: &Value,
    max_output_tokens: Option<u32>,
    stream: bool,
) -> Result<Value, UpstreamError> {
    let (system, turns) = turns(body);
    let mut out = Map::new();
    out.insert("model".into(), body["model"].clone());
    out.insert("messages".into(), chat_shape::role_messages(turns));
    let system: Vec<String> = system.into_iter().filter(|s| !s.is_empty()).collect();
    if !system.is_empty() {
        out.insert("system".into(), Value::String(system.join("\n\n")));
    }
    let max_tokens = chat_shape::max_tokens(body)
        .or(max_output_tokens.map(u64::from))
        .unwrap_or(DEFAULT_MAX_TOKENS);
    out.insert("max_tokens".into(), json!(max_tokens));
    for field in ["temperature", "top_p"] {
        if body[field].is_number() {
            out.insert(field.into(), body[field].clone());
        }
    }
    if let Some(stop) = chat_shape::stop_sequences(body) {
        out.insert("stop_sequences".into(), stop);
    }
    let tools = tool_definitions(body);
    if !tools.is_empty() {
        out.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = tool_choice(body, out.contains_key("tools"))? {
        out.insert("tool_choice".into(), choice);
    }
    if let Some(user) = body["user"].as_str() {
        out.insert("metadata".into(), json!({ "user_id": user }));
    }
    if stream {
        out.insert("stream".into(), json!(true));
    }
    Ok(Value::Object(out))
}

/// A turn: its role and its content blocks.
type Turn = (String, Vec<Value>);

/// The system texts and the conversation turns of the chat messages,
/// starting with a user turn as the Messages API requires.
fn turns(body: &Value) -> (Vec<String>, Vec<Turn>) {
    let mut system: Vec<String> = Vec::new();
    let mut turns: Vec<Turn> = Vec::new();
    let mut push = |role: &str, blocks: Vec<Value>| chat_shape::push_turn(&mut turns, role, blocks);
    for message in body["messages"].as_array().into_iter().flatten() {
        match message["role"].as_str().unwrap_or_default() {
            "system" | "developer" => system.push(content_text(&message["content"])),
            "assistant" => {
                let mut blocks = content_blocks(&message["content"]);
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let input = chat_shape::call_arguments(call);
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call["id"],
                        "name": call["function"]["name"],
                        "input": input,
                    }));
                }
                push("assistant", blocks);
            }
            "tool" => push(
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": message["tool_call_id"],
                    "content": content_text(&message["content"]),
                })],
            ),
            _ => push("user", content_blocks(&message["content"])),
        }
    }
    // The Messages API starts with a user turn.
    if turns.first().is_some_and(|(role, _)| role == "assistant") {
        turns.insert(
            0,
            (
                "user".into(),
                vec![json!({ "type": "text", "text": "(continue)" })],
            ),
        );
    }
    (system, turns)
}

/// The request's `function` tools as Anthropic tool definitions.
fn tool_definitions(body: &Value) -> Vec<Value> {
    chat_shape::functions(body)
        .map(|f| {
            let mut tool = json!({
                "name": f["name"],
                "input_schema": if f["parameters"].is_object() { f["parameters"].clone() } else { json!({ "type": "object" }) },
            });
            if let Some(d) = f["description"].as_str() {
                tool["description"] = json!(d);
            }
            tool
        })
        .collect()
}

/// The `tool_choice` to send, with parallel tool use turned off when the
/// request asks so and sends tools.
fn tool_choice(body: &Value, has_tools: bool) -> Result<Option<Value>, UpstreamError> {
    let mut choice = match &body["tool_choice"] {
        Value::String(s) if s == "auto" => Some(json!({ "type": "auto" })),
        Value::String(s) if s == "none" => Some(json!({ "type": "none" })),
        Value::String(s) if s == "required" => Some(json!({ "type": "any" })),
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("function") => {
            Some(json!({ "type": "tool", "name": o["function"]["name"] }))
        }
        Value::Null => None,
        other => {
            return Err(UpstreamError::new(
                Failure::Status(400),
                format!("`tool_choice` {other} cannot be sent to Anthropic"),
            ));
        }
    };
    if body["parallel_tool_calls"] == false && has_tools {
        let c = choice.get_or_insert_with(|| json!({ "type": "auto" }));
        if c["type"] != "none" {
            c["disable_parallel_tool_use"] = json!(true);
        }
    }
    Ok(choice)
}

/// OpenAI content parts as Anthropic content blocks.
fn content_blocks(content: &Value) -> Vec<Value> {
    match content {
        Value::String(s) if !s.is_empty() => vec![json!({ "type": "text", "text": s })],
        Value::Array(parts) => parts.iter().filter_map(part_block).collect(),
        _ => Vec::new(),
    }
}

fn part_block(part: &Value) -> Option<Value> {
    match part["type"].as_str()? {
        "text" => Some(json!({ "type": "text", "text": part["text"] })),
        "image_url" => {
            let url = part["image_url"]["url"]
                .as_str()
                .or(part["image_url"].as_str())?;
            Some(match parse_data_uri(url) {
                Some((media_type, data)) => json!({
                    "type": "image",
                    "source": { "type": "base64", "media_type": media_type, "data": data },
                }),
                None => json!({ "type": "image", "source": { "type": "url", "url": url } }),
            })
        }
        // Anthropic takes no audio; a model that lists AUDIO here was
        // misconfigured, so the part is dropped with a note.
        "input_audio" => Some(json!({
            "type": "text",
            "text": "[an audio attachment was omitted: this model does not accept audio]",
        })),
        _ => None,
    }
}

/// `data:<media type>;base64,<data>`.
pub fn parse_data_uri(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (meta, data) = rest.split_once(',')?;
    let media_type = meta.strip_suffix(";base64")?;
    Some((media_type, data))
}

/// An OpenAI stop reason for an Anthropic one.
pub fn finish_reason(stop_reason: &str) -> &'static str {
    match stop_reason {
        "max_tokens" | "model_context_window_exceeded" => "length",
        "tool_use" => "tool_calls",
        "refusal" => "content_filter",
        // end_turn, stop_sequence, pause_turn
        _ => "stop",
    }
}

fn prompt_tokens(usage: &Value) -> u64 {
    [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .filter_map(|f| usage[*f].as_u64())
    .sum()
}

/// An OpenAI `chat.completion` for a Messages API answer.
pub fn from_message(message: &Value, model: &str) -> Result<Value, UpstreamError> {
    let Some(blocks) = message["content"].as_array() else {
        return Err(UpstreamError::new(
            Failure::Garbage,
            "the Anthropic answer has no `content` array",
        ));
    };
    let text: String = blocks
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    let calls: Vec<Value> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| chat_shape::tool_call(&b["id"], &b["name"], &b["input"]))
        .collect();
    let reply = chat_shape::assistant_message(text, calls);
    let usage = &message["usage"];
    let (prompt, completion) = (
        prompt_tokens(usage),
        usage["output_tokens"].as_u64().unwrap_or(0),
    );
    let id = message["id"].as_str().map_or_else(
        || "chatcmpl-anthropic".to_owned(),
        |id| format!("chatcmpl-{id}"),
    );
    let choices = chat_shape::one_choice(
        reply,
        finish_reason(message["stop_reason"].as_str().unwrap_or("end_turn")),
    );
    Ok(chat_shape::completion(
        id, model, choices, prompt, completion,
    ))
}

/// The state of one translated stream.
struct Translation {
    model: String,
    id: String,
    created: i64,
    prompt_tokens: u64,
    completion_tokens: u64,
    /// Content block index to tool call index.
    tools: HashMap<u64, u64>,
    finished: bool,
}

impl Translation {
    fn chunk(&self, delta: Value, finish: Value) -> Value {
        chat_shape::chunk(&self.id, self.created, &self.model, 0, delta, finish)
    }
}

impl sse::Translate for Translation {
    /// Turns one Anthropic event into OpenAI chunks (in `pending`).
    fn on_event(&mut self, event: Value, out: &mut VecDeque<Result<Value, UpstreamError>>) {
        match event["type"].as_str().unwrap_or_default() {
            "message_start" => {
                let message = &event["message"];
                if let Some(id) = message["id"].as_str() {
                    self.id = format!("chatcmpl-{id}");
                }
                self.prompt_tokens = prompt_tokens(&message["usage"]);
                self.completion_tokens = message["usage"]["output_tokens"].as_u64().unwrap_or(0);
                let first = self.chunk(json!({ "role": "assistant", "content": "" }), Value::Null);
                out.push_back(Ok(first));
            }
            "content_block_start" => {
                let block = &event["content_block"];
                let index = event["index"].as_u64().unwrap_or(0);
                if block["type"] == "tool_use" {
                    let call = self.tools.len() as u64;
                    self.tools.insert(index, call);
                    let delta = chat_shape::tool_call_start(call, &block["id"], &block["name"]);
                    out.push_back(Ok(self.chunk(delta, Value::Null)));
                } else if let Some(text) = block["text"].as_str().filter(|t| !t.is_empty()) {
                    let chunk = self.chunk(json!({ "content": text }), Value::Null);
                    out.push_back(Ok(chunk));
                }
            }
            "content_block_delta" => {
                let delta = &event["delta"];
                let index = event["index"].as_u64().unwrap_or(0);
                let translated = match delta["type"].as_str().unwrap_or_default() {
                    "text_delta" => Some(json!({ "content": delta["text"] })),
                    "input_json_delta" => self.tools.get(&index).map(|call| {
                        json!({ "tool_calls": [{ "index": call, "function": { "arguments": delta["partial_json"] } }] })
                    }),
                    // Thinking and signatures have no OpenAI equivalent.
                    _ => None,
                };
                if let Some(delta) = translated {
                    out.push_back(Ok(self.chunk(delta, Value::Null)));
                }
            }
            "message_delta" => {
                if let Some(n) = event["usage"]["output_tokens"].as_u64() {
                    self.completion_tokens = n;
                }
                if let Some(reason) = event["delta"]["stop_reason"].as_str() {
                    let chunk = self.chunk(json!({}), json!(finish_reason(reason)));
                    out.push_back(Ok(chunk));
                }
            }
            "message_stop" => {
                self.finished = true;
                let (prompt, completion) = (self.prompt_tokens, self.completion_tokens);
                let last = usage_chunk(self.chunk(json!({}), Value::Null), prompt, completion);
                out.push_back(Ok(last));
            }
            "error" => {
                self.finished = true;
                let kind = event["error"]["type"].as_str().unwrap_or("error");
                let message = event["error"]["message"].as_str().unwrap_or("no message");
                let failure = if kind == "overloaded_error" {
                    Failure::Status(529)
                } else {
                    Failure::Cut
                };
                out.push_back(Err(UpstreamError::new(
                    failure,
                    format!("Anthropic sent an error event ({kind}): {message}"),
                )));
            }
            // `ping`, `content_block_stop` and events added later.
            _ => {}
        }
    }

    fn over(&self) -> bool {
        self.finished
    }

    fn on_close(&mut self) -> Result<Value, UpstreamError> {
        Err(UpstreamError::new(
            Failure::Cut,
            "the stream ended before message_stop",
        ))
    }
}

/// OpenAI chunks for an Anthropic event stream.
pub fn translate_stream(events: ChunkStream, model: String) -> ChunkStream {
    let translation = Translation {
        model,
        id: "chatcmpl-anthropic".into(),
        created: now_ms() / 1000,
        prompt_tokens: 0,
        completion_tokens: 0,
        tools: HashMap::new(),
        finished: false,
    };
    sse::translate(events, translation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_uris_split_into_media_type_and_data() {
        assert_eq!(
            parse_data_uri("data:image/png;base64,iVBO"),
            Some(("image/png", "iVBO"))
        );
        assert_eq!(parse_data_uri("https://x/y.png"), None);
        assert_eq!(parse_data_uri("data:image/png,raw"), None);
    }

    #[test]
    fn an_unknown_tool_choice_is_refused_before_sending() {
        let body = json!({ "model": "m", "messages": [], "tool_choice": 7 });
        let error = to_messages(&body, None, false).unwrap_err();
        assert_eq!(error.failure, Failure::Status(400));
    }
}
