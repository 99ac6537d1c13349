//! OpenAI chat to Bedrock's Converse API and back.
//!
//! Request: system messages become `system` text blocks; turns are merged
//! so roles alternate and start with a user turn; `image_url` parts become
//! `image` blocks with their bytes (base64 in the JSON body: data URIs as
//! they are, http(s) URLs fetched first); tools become `toolConfig.tools`
//! `toolSpec`s, assistant `tool_calls` `toolUse` blocks and `tool`
//! messages `toolResult` blocks; `tool_choice` maps to `auto`, `any` or
//! `tool`; `max_tokens`, `temperature`, `top_p` and `stop` go to
//! `inferenceConfig`.
//!
//! Response: text blocks join into `content`, `toolUse` blocks become
//! `tool_calls`, `stopReason` maps to a finish reason and `usage`
//! (`inputTokens` plus cached input, `outputTokens`) to usage. Streams are
//! translated event by event; Bedrock sends the usage (`metadata`) after
//! `messageStop`, so a stream is whole only with it.

use std::collections::{HashMap, VecDeque};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::super::anthropic::parse_data_uri;
use super::super::{
    ChunkStream, Failure, UpstreamError, chat_shape, content_text, sse, usage_chunk,
};
use crate::base::time::now_ms;

/// The image formats Converse reads, by MIME type.
fn image_format(mime: &str) -> Option<&'static str> {
    match mime.to_ascii_lowercase().as_str() {
        "image/png" => Some("png"),
        "image/jpeg" | "image/jpg" => Some("jpeg"),
        "image/gif" => Some("gif"),
        "image/webp" => Some("webp"),
        _ => None,
    }
}

fn refuse(message: String) -> UpstreamError {
    UpstreamError::new(Failure::Status(400), message)
}

/// The Converse request for an OpenAI-shaped chat request. `images` holds
/// the fetched http(s) images: URL to (MIME type, base64).
pub fn to_converse(
    body: &Value,
    images: &HashMap<String, (String, String)>,
    max_output_tokens: Option<u32>,
) -> Result<Value, UpstreamError> {
    let Conversation {
        system,
        turns,
        used_tools,
    } = conversation(body, images)?;
    let mut out = Map::new();
    out.insert("messages".into(), chat_shape::role_messages(turns));
    if !system.is_empty() {
        out.insert("system".into(), Value::Array(system));
    }
    let inference = inference_config(body, max_output_tokens);
    if !inference.is_empty() {
        out.insert("inferenceConfig".into(), Value::Object(inference));
    }
    if let Some(config) = tool_config(body, used_tools)? {
        out.insert("toolConfig".into(), config);
    }
    Ok(Value::Object(out))
}

/// The chat messages as Converse sees them.
struct Conversation {
    system: Vec<Value>,
    /// Role and content blocks, starting with a user turn.
    turns: Vec<(String, Vec<Value>)>,
    /// A tool call or result is in the history.
    used_tools: bool,
}

fn conversation(
    body: &Value,
    images: &HashMap<String, (String, String)>,
) -> Result<Conversation, UpstreamError> {
    let mut system: Vec<Value> = Vec::new();
    let mut turns: Vec<(String, Vec<Value>)> = Vec::new();
    let mut push = |role: &str, blocks: Vec<Value>| chat_shape::push_turn(&mut turns, role, blocks);
    let mut used_tools = false;
    for message in body["messages"].as_array().into_iter().flatten() {
        match message["role"].as_str().unwrap_or_default() {
            "system" | "developer" => system.extend(chat_shape::system_text_block(message)),
            "assistant" => {
                let mut blocks = content_blocks(&message["content"], images)?;
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    used_tools = true;
                    let input = chat_shape::call_arguments(call);
                    blocks.push(json!({ "toolUse": {
                        "toolUseId": call["id"],
                        "name": call["function"]["name"],
                        "input": input,
                    } }));
                }
                push("assistant", blocks);
            }
            "tool" => {
                used_tools = true;
                let text = content_text(&message["content"]);
                push(
                    "user",
                    vec![json!({ "toolResult": {
                        "toolUseId": message["tool_call_id"],
                        // Converse refuses an empty text block.
                        "content": [{ "text": if text.is_empty() { " ".to_owned() } else { text } }],
                    } })],
                );
            }
            _ => push("user", content_blocks(&message["content"], images)?),
        }
    }
    // Converse starts with a user turn.
    if turns.first().is_some_and(|(role, _)| role == "assistant") {
        turns.insert(0, ("user".into(), vec![json!({ "text": "(continue)" })]));
    }
    Ok(Conversation {
        system,
        turns,
        used_tools,
    })
}

/// `inferenceConfig`: the output limit, sampling and stop sequences.
fn inference_config(body: &Value, max_output_tokens: Option<u32>) -> Map<String, Value> {
    let mut inference = Map::new();
    let max_tokens = chat_shape::max_tokens(body).or(max_output_tokens.map(u64::from));
    if let Some(n) = max_tokens {
        inference.insert("maxTokens".into(), json!(n));
    }
    if body["temperature"].is_number() {
        inference.insert("temperature".into(), body["temperature"].clone());
    }
    if body["top_p"].is_number() {
        inference.insert("topP".into(), body["top_p"].clone());
    }
    if let Some(stop) = chat_shape::stop_sequences(body) {
        inference.insert("stopSequences".into(), stop);
    }
    inference
}

/// `toolConfig` for the request's tools and `tool_choice`. Converse has no
/// `none`: the tools are left out then, unless the conversation already
/// used them (Converse refuses `toolUse` blocks without a `toolConfig`),
/// in which case the model may still call one.
fn tool_config(body: &Value, used_tools: bool) -> Result<Option<Value>, UpstreamError> {
    let tools: Vec<Value> = chat_shape::functions(body)
        .map(|f| {
            let schema = if f["parameters"].is_object() {
                f["parameters"].clone()
            } else {
                json!({ "type": "object", "properties": {} })
            };
            let mut spec = json!({ "name": f["name"], "inputSchema": { "json": schema } });
            if let Some(d) = f["description"].as_str().filter(|d| !d.is_empty()) {
                spec["description"] = json!(d);
            }
            json!({ "toolSpec": spec })
        })
        .collect();
    let choice = match &body["tool_choice"] {
        Value::Null => None,
        Value::String(s) if s == "auto" => Some(json!({ "auto": {} })),
        Value::String(s) if s == "none" => {
            if !used_tools {
                return Ok(None);
            }
            None
        }
        Value::String(s) if s == "required" => Some(json!({ "any": {} })),
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("function") => {
            Some(json!({ "tool": { "name": o["function"]["name"] } }))
        }
        other => {
            return Err(refuse(format!(
                "`tool_choice` {other} cannot be sent to Bedrock"
            )));
        }
    };
    if tools.is_empty() {
        return Ok(None);
    }
    let mut config = json!({ "tools": tools });
    if let Some(choice) = choice {
        config["toolChoice"] = choice;
    }
    Ok(Some(config))
}

/// OpenAI content parts as Converse content blocks.
fn content_blocks(
    content: &Value,
    images: &HashMap<String, (String, String)>,
) -> Result<Vec<Value>, UpstreamError> {
    match content {
        Value::String(s) if !s.is_empty() => Ok(vec![json!({ "text": s })]),
        Value::Array(parts) => {
            let mut out = Vec::new();
            for part in parts {
                match part["type"].as_str().unwrap_or_default() {
                    "text" => {
                        if let Some(t) = part["text"].as_str().filter(|t| !t.is_empty()) {
                            out.push(json!({ "text": t }));
                        }
                    }
                    "image_url" => {
                        let url = part["image_url"]["url"]
                            .as_str()
                            .or(part["image_url"].as_str())
                            .unwrap_or_default();
                        out.push(image_block(url, images)?);
                    }
                    "input_audio" => out.push(json!({
                        "text": "[an audio attachment was omitted: this model does not accept audio]",
                    })),
                    _ => {}
                }
            }
            Ok(out)
        }
        _ => Ok(Vec::new()),
    }
}

fn image_block(
    url: &str,
    images: &HashMap<String, (String, String)>,
) -> Result<Value, UpstreamError> {
    let (mime, data) = match parse_data_uri(url) {
        Some((mime, data)) => {
            // The bytes travel as base64 in the JSON body; a data URI that
            // is not base64 would only fail upstream, less clearly.
            if STANDARD.decode(data.trim()).is_err() {
                return Err(refuse("an image data URI is not valid base64".into()));
            }
            (mime, data.trim())
        }
        None => match images.get(url) {
            Some((mime, data)) => (mime.as_str(), data.as_str()),
            None => {
                return Err(refuse(format!(
                    "the image `{}` is neither a base64 data URI nor an http(s) URL",
                    url.chars().take(60).collect::<String>()
                )));
            }
        },
    };
    let Some(format) = image_format(mime) else {
        return Err(refuse(format!(
            "Bedrock reads PNG, JPEG, GIF and WebP images, not `{mime}`"
        )));
    };
    Ok(json!({ "image": { "format": format, "source": { "bytes": data } } }))
}

/// An OpenAI finish reason for a Converse `stopReason`.
pub fn finish_reason(stop_reason: &str) -> &'static str {
    match stop_reason {
        "max_tokens" | "model_context_window_exceeded" => "length",
        "tool_use" => "tool_calls",
        "guardrail_intervened" | "content_filtered" => "content_filter",
        // end_turn, stop_sequence
        _ => "stop",
    }
}

/// Prompt tokens (cached input included, as on the other providers) and
/// completion tokens of a Converse `usage`.
fn tokens(usage: &Value) -> (u64, u64) {
    let prompt = [
        "inputTokens",
        "cacheReadInputTokens",
        "cacheWriteInputTokens",
    ]
    .iter()
    .filter_map(|f| usage[*f].as_u64())
    .sum();
    (prompt, usage["outputTokens"].as_u64().unwrap_or(0))
}

/// An OpenAI `chat.completion` for a Converse answer.
pub fn from_converse(answer: &Value, model: &str) -> Result<Value, UpstreamError> {
    let Some(blocks) = answer["output"]["message"]["content"].as_array() else {
        return Err(UpstreamError::new(
            Failure::Garbage,
            "the Converse answer has no `output.message.content` array",
        ));
    };
    let text: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    let calls: Vec<Value> = blocks
        .iter()
        .filter_map(|b| b.get("toolUse"))
        .map(|t| chat_shape::tool_call(&t["toolUseId"], &t["name"], &t["input"]))
        .collect();
    let reply = chat_shape::assistant_message(text, calls);
    let (prompt, completion) = tokens(&answer["usage"]);
    let choices = chat_shape::one_choice(
        reply,
        finish_reason(answer["stopReason"].as_str().unwrap_or("end_turn")),
    );
    Ok(chat_shape::completion(
        format!("chatcmpl-bedrock-{}", ulid::Ulid::generate()),
        model,
        choices,
        prompt,
        completion,
    ))
}

/// The state of one translated stream.
struct Translation {
    model: String,
    id: String,
    created: i64,
    /// Content block index to tool call index.
    tools: HashMap<u64, u64>,
    stopped: bool,
    finished: bool,
}

impl Translation {
    fn chunk(&self, delta: Value, finish: Value) -> Value {
        chat_shape::chunk(&self.id, self.created, &self.model, 0, delta, finish)
    }
}

impl sse::Translate for Translation {
    /// `event` is `{"event": name, "body": payload}` (see
    /// [`super::stream_events`]).
    fn on_event(&mut self, event: Value, out: &mut VecDeque<Result<Value, UpstreamError>>) {
        let body = &event["body"];
        match event["event"].as_str().unwrap_or_default() {
            "messageStart" => {
                let first = self.chunk(json!({ "role": "assistant", "content": "" }), Value::Null);
                out.push_back(Ok(first));
            }
            "contentBlockStart" => {
                let index = body["contentBlockIndex"].as_u64().unwrap_or(0);
                let tool = &body["start"]["toolUse"];
                if tool.is_object() {
                    let call = self.tools.len() as u64;
                    self.tools.insert(index, call);
                    let delta =
                        chat_shape::tool_call_start(call, &tool["toolUseId"], &tool["name"]);
                    out.push_back(Ok(self.chunk(delta, Value::Null)));
                }
            }
            "contentBlockDelta" => {
                let index = body["contentBlockIndex"].as_u64().unwrap_or(0);
                let delta = &body["delta"];
                let translated = if let Some(text) = delta["text"].as_str() {
                    Some(json!({ "content": text }))
                } else if let Some(input) = delta["toolUse"]["input"].as_str() {
                    self.tools.get(&index).map(|call| {
                        json!({ "tool_calls": [{ "index": call, "function": { "arguments": input } }] })
                    })
                } else {
                    // Reasoning and citations have no OpenAI equivalent.
                    None
                };
                if let Some(delta) = translated {
                    out.push_back(Ok(self.chunk(delta, Value::Null)));
                }
            }
            "messageStop" => {
                self.stopped = true;
                let reason = finish_reason(body["stopReason"].as_str().unwrap_or("end_turn"));
                out.push_back(Ok(self.chunk(json!({}), json!(reason))));
            }
            "metadata" => {
                self.finished = true;
                let (prompt, completion) = tokens(&body["usage"]);
                let last = usage_chunk(self.chunk(json!({}), Value::Null), prompt, completion);
                out.push_back(Ok(last));
            }
            // contentBlockStop and events added later.
            _ => {}
        }
    }

    fn over(&self) -> bool {
        self.finished
    }

    fn on_close(&mut self) -> Result<Value, UpstreamError> {
        let what = if self.stopped {
            "the stream ended before its usage (metadata)"
        } else {
            "the stream ended before messageStop"
        };
        Err(UpstreamError::new(Failure::Cut, what))
    }
}

/// OpenAI chunks for the Converse stream's events.
pub fn translate_stream(events: ChunkStream, model: String) -> ChunkStream {
    let translation = Translation {
        model,
        id: format!("chatcmpl-bedrock-{}", ulid::Ulid::generate()),
        created: now_ms() / 1000,
        tools: HashMap::new(),
        stopped: false,
        finished: false,
    };
    sse::translate(events, translation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_choice_none_without_tool_history_sends_no_tools() {
        let body = json!({ "messages": [{ "role": "user", "content": "hi" }],
            "tools": [{ "type": "function", "function": { "name": "f" } }], "tool_choice": "none" });
        let out = to_converse(&body, &HashMap::new(), None).unwrap();
        assert!(out.get("toolConfig").is_none());
        assert!(out.get("inferenceConfig").is_none());
    }

    #[test]
    fn bad_images_and_tool_choices_are_refused_before_sending() {
        let image = |url: &str| {
            json!({ "messages": [{ "role": "user", "content": [
                { "type": "image_url", "image_url": { "url": url } }] }] })
        };
        for url in [
            "data:image/png;base64,@@@",
            "data:image/tiff;base64,AAAA",
            "ftp://x/y.png",
        ] {
            let error = to_converse(&image(url), &HashMap::new(), None).unwrap_err();
            assert_eq!(error.failure, Failure::Status(400), "{url}");
        }
        let body = json!({ "messages": [], "tool_choice": 7 });
        let error = to_converse(&body, &HashMap::new(), None).unwrap_err();
        assert_eq!(error.failure, Failure::Status(400));
    }
}
