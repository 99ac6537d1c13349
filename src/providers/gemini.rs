//! Google's Gemini generate-content API, translated both ways.
//!
//! `POST {base_url}/models/{model}:generateContent`, or
//! `:streamGenerateContent?alt=sse` for streams, with `x-goog-api-key`.
//!
//! Request: system messages become `systemInstruction`; turns become
//! `contents` with roles `user` and `model` (merged so they alternate);
//! images become `inlineData` (data URIs as they are, http(s) URLs fetched
//! by [`super::fetch`]); `input_audio` becomes audio `inlineData`; tools
//! become `functionDeclarations`, assistant `tool_calls` `functionCall`
//! parts and tool results `functionResponse` parts; `generationConfig`
//! takes `temperature`, `top_p`, `max_tokens`, `stop`, `n` and
//! `response_format` (JSON mode and JSON schema).
//!
//! Response: each candidate becomes a choice, `functionCall` parts become
//! `tool_calls`, finish reasons and `usageMetadata` map back. Streams are
//! translated chunk by chunk; a stream that ends before a finish reason is
//! a cut.

use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value, json};

use super::anthropic::parse_data_uri;
use super::fetch::ImageFetcher;
use super::{
    ChunkStream, Failure, Reply, UpstreamError, chat_shape, content_text, http, sse, usage_chunk,
};
use crate::base::time::now_ms;
use crate::catalogue::Model;

pub async fn chat(
    http_client: &reqwest::Client,
    fetcher: &ImageFetcher,
    model: &Model,
    body: Value,
    stream: bool,
) -> Result<Reply, UpstreamError> {
    let provider = &model.provider;
    let base = http::base_url(provider)?;
    let name = body["model"].as_str().unwrap_or_default().to_owned();
    let url = endpoint(base, &model.upstream, stream);
    let images = fetch_images(fetcher, &body).await?;
    let request = to_generate_content(&body, &images)?;
    let builder = with_key(http_client.post(url).json(&request), provider);
    let sent = http::send(builder, provider, base).await?;
    sse::reply(sent, name, stream, translate_stream, from_response).await
}

/// `request` with the provider's key as `x-goog-api-key`, when it has one
/// (Gemini chat, image generation and embeddings).
pub fn with_key(
    request: reqwest::RequestBuilder,
    provider: &crate::upstream::ProviderConfig,
) -> reqwest::RequestBuilder {
    match &provider.api_key {
        Some(key) => request.header("x-goog-api-key", key.expose()),
        None => request,
    }
}

/// `{base}/models/{upstream}:generateContent`, or
/// `:streamGenerateContent?alt=sse`: the name is one encoded path segment
/// (see [`http::endpoint`]), whatever it holds.
pub fn endpoint(base: &url::Url, upstream: &str, stream: bool) -> url::Url {
    let action = if stream {
        "streamGenerateContent"
    } else {
        "generateContent"
    };
    let mut url = http::endpoint(base, &["models", &format!("{upstream}:{action}")]);
    if stream {
        url.set_query(Some("alt=sse"));
    }
    url
}

/// Fetches every http(s) image of the conversation: Gemini (and Bedrock,
/// and Vertex) take bytes.
pub(crate) async fn fetch_images(
    fetcher: &ImageFetcher,
    body: &Value,
) -> Result<HashMap<String, (String, String)>, UpstreamError> {
    let mut out = HashMap::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        for part in message["content"].as_array().into_iter().flatten() {
            if part["type"] != "image_url" {
                continue;
            }
            let Some(url) = part["image_url"]["url"].as_str() else {
                continue;
            };
            if url.starts_with("data:") || out.contains_key(url) {
                continue;
            }
            let fetched = fetcher.fetch(url).await?;
            out.insert(url.to_owned(), fetched);
        }
    }
    Ok(out)
}

/// The generate-content request for an OpenAI-shaped chat request.
/// `images` holds the fetched http(s) images: URL to (MIME type, base64).
pub fn to_generate_content(
    body: &Value,
    images: &HashMap<String, (String, String)>,
) -> Result<Value, UpstreamError> {
    let (system, contents) = turns(body, images)?;
    let mut out = Map::new();
    out.insert(
        "contents".into(),
        contents
            .into_iter()
            .map(|(role, parts)| json!({ "role": role, "parts": parts }))
            .collect(),
    );
    if !system.is_empty() {
        out.insert("systemInstruction".into(), json!({ "parts": system }));
    }
    let config = generation_config(body);
    if !config.is_empty() {
        out.insert("generationConfig".into(), Value::Object(config));
    }
    let declarations = function_declarations(body);
    if !declarations.is_empty() {
        out.insert(
            "tools".into(),
            json!([{ "functionDeclarations": declarations }]),
        );
    }
    if let Some(calling) = function_calling(&body["tool_choice"])? {
        out.insert(
            "toolConfig".into(),
            json!({ "functionCallingConfig": calling }),
        );
    }
    Ok(Value::Object(out))
}

/// A turn: its role and its parts.
type Turn = (String, Vec<Value>);

/// The system parts and the conversation turns of the chat messages;
/// tool results name the function their call named.
fn turns(
    body: &Value,
    images: &HashMap<String, (String, String)>,
) -> Result<(Vec<Value>, Vec<Turn>), UpstreamError> {
    let mut system: Vec<Value> = Vec::new();
    let mut contents: Vec<Turn> = Vec::new();
    let mut tool_names: HashMap<String, String> = HashMap::new();
    let mut push =
        |role: &str, parts: Vec<Value>| chat_shape::push_turn(&mut contents, role, parts);
    for message in body["messages"].as_array().into_iter().flatten() {
        match message["role"].as_str().unwrap_or_default() {
            "system" | "developer" => system.extend(chat_shape::system_text_block(message)),
            "assistant" => {
                let mut parts = content_parts(&message["content"], images)?;
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let name = call["function"]["name"].as_str().unwrap_or_default();
                    if let Some(id) = call["id"].as_str() {
                        tool_names.insert(id.to_owned(), name.to_owned());
                    }
                    let args = chat_shape::call_arguments(call);
                    parts.push(json!({ "functionCall": { "name": name, "args": args } }));
                }
                push("model", parts);
            }
            "tool" => push("user", vec![function_response(message, &tool_names)]),
            _ => push("user", content_parts(&message["content"], images)?),
        }
    }
    Ok((system, contents))
}

/// The `functionResponse` part for a `tool` message: the result as JSON
/// when it is an object, else wrapped as `{"content": text}`.
fn function_response(message: &Value, tool_names: &HashMap<String, String>) -> Value {
    let id = message["tool_call_id"].as_str().unwrap_or_default();
    let name = tool_names.get(id).cloned().unwrap_or_else(|| id.to_owned());
    let text = content_text(&message["content"]);
    let response = serde_json::from_str::<Value>(&text)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({ "content": text }));
    json!({ "functionResponse": { "name": name, "response": response } })
}

/// The `generationConfig` fields: sampling, limits, candidates, JSON mode.
fn generation_config(body: &Value) -> Map<String, Value> {
    let mut config = Map::new();
    for (from, to) in [("temperature", "temperature"), ("top_p", "topP")] {
        if body[from].is_number() {
            config.insert(to.into(), body[from].clone());
        }
    }
    if let Some(n) = chat_shape::max_tokens(body) {
        config.insert("maxOutputTokens".into(), json!(n));
    }
    if let Some(stop) = chat_shape::stop_sequences(body) {
        config.insert("stopSequences".into(), stop);
    }
    if let Some(n) = body["n"].as_u64().filter(|n| *n > 1) {
        config.insert("candidateCount".into(), json!(n));
    }
    match body["response_format"]["type"].as_str() {
        Some("json_object") => {
            config.insert("responseMimeType".into(), json!("application/json"));
        }
        Some("json_schema") => {
            config.insert("responseMimeType".into(), json!("application/json"));
            let schema = &body["response_format"]["json_schema"]["schema"];
            if schema.is_object() {
                config.insert("responseJsonSchema".into(), schema.clone());
            }
        }
        _ => {}
    }
    config
}

/// The function declarations of the request's `function` tools.
fn function_declarations(body: &Value) -> Vec<Value> {
    chat_shape::functions(body)
        .map(|f| {
            let mut d = json!({ "name": f["name"] });
            if let Some(text) = f["description"].as_str() {
                d["description"] = json!(text);
            }
            if f["parameters"].is_object() {
                d["parameters"] = f["parameters"].clone();
            }
            d
        })
        .collect()
}

/// The `functionCallingConfig` for a `tool_choice`; none when absent.
fn function_calling(choice: &Value) -> Result<Option<Value>, UpstreamError> {
    Ok(match choice {
        Value::Null => None,
        Value::String(s) if s == "auto" => Some(json!({ "mode": "AUTO" })),
        Value::String(s) if s == "none" => Some(json!({ "mode": "NONE" })),
        Value::String(s) if s == "required" => Some(json!({ "mode": "ANY" })),
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("function") => {
            Some(json!({ "mode": "ANY", "allowedFunctionNames": [o["function"]["name"]] }))
        }
        other => {
            return Err(UpstreamError::new(
                Failure::Status(400),
                format!("`tool_choice` {other} cannot be sent to Gemini"),
            ));
        }
    })
}

fn content_parts(
    content: &Value,
    images: &HashMap<String, (String, String)>,
) -> Result<Vec<Value>, UpstreamError> {
    let parts = match content {
        Value::String(s) if !s.is_empty() => return Ok(vec![json!({ "text": s })]),
        Value::Array(parts) => parts,
        _ => return Ok(Vec::new()),
    };
    let mut out = Vec::new();
    for part in parts {
        match part["type"].as_str().unwrap_or_default() {
            "text" => out.push(json!({ "text": part["text"] })),
            "image_url" => {
                let url = part["image_url"]["url"].as_str().unwrap_or_default();
                let (mime, data) = match parse_data_uri(url) {
                    Some((mime, data)) => (mime.to_owned(), data.to_owned()),
                    None => images.get(url).cloned().ok_or_else(|| {
                        UpstreamError::new(
                            Failure::Status(400),
                            format!("the image `{url}` is neither a data URI nor fetched"),
                        )
                    })?,
                };
                out.push(json!({ "inlineData": { "mimeType": mime, "data": data } }));
            }
            "input_audio" => {
                let format = part["input_audio"]["format"].as_str().unwrap_or("wav");
                let mime = match format {
                    "mp3" => "audio/mp3",
                    "wav" => "audio/wav",
                    other => {
                        return Err(UpstreamError::new(
                            Failure::Status(400),
                            format!("audio format `{other}` is not supported; use wav or mp3"),
                        ));
                    }
                };
                out.push(json!({ "inlineData": { "mimeType": mime, "data": part["input_audio"]["data"] } }));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// An OpenAI finish reason for a Gemini one.
pub fn finish_reason(reason: &str, called_tools: bool) -> &'static str {
    match reason {
        "MAX_TOKENS" => "length",
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            "content_filter"
        }
        _ if called_tools => "tool_calls",
        _ => "stop",
    }
}

fn usage(metadata: &Value) -> (u64, u64) {
    let prompt = metadata["promptTokenCount"].as_u64().unwrap_or(0);
    let completion = metadata["candidatesTokenCount"].as_u64().unwrap_or(0)
        + metadata["thoughtsTokenCount"].as_u64().unwrap_or(0);
    (prompt, completion)
}

/// The text and tool calls of a candidate's parts (thoughts left out).
fn split_parts(parts: &[Value], first_call: usize) -> (String, Vec<Value>) {
    let mut text = String::new();
    let mut calls = Vec::new();
    for part in parts {
        if part["thought"] == true {
            continue;
        }
        if let Some(t) = part["text"].as_str() {
            text.push_str(t);
        }
        if let Some(call) = part.get("functionCall") {
            let index = first_call + calls.len();
            calls.push(json!({
                "index": index,
                "id": call["id"].as_str().map_or_else(|| format!("call_{index}"), str::to_owned),
                "type": "function",
                "function": { "name": call["name"], "arguments": call["args"].to_string() },
            }));
        }
    }
    (text, calls)
}

/// An OpenAI `chat.completion` for a generate-content answer.
pub fn from_response(answer: &Value, model: &str) -> Result<Value, UpstreamError> {
    let Some(candidates) = answer["candidates"].as_array() else {
        let reason = answer["promptFeedback"]["blockReason"]
            .as_str()
            .unwrap_or("no candidates");
        return Err(UpstreamError::new(
            Failure::Status(400),
            format!("Gemini returned no answer ({reason})"),
        ));
    };
    let choices: Vec<Value> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let parts = c["content"]["parts"].as_array().map_or(&[][..], Vec::as_slice);
            let (text, calls) = split_parts(parts, 0);
            let called = !calls.is_empty();
            let calls: Vec<Value> = calls
                .into_iter()
                .map(|mut c| {
                    c.as_object_mut().map(|o| o.remove("index"));
                    c
                })
                .collect();
            let message = chat_shape::assistant_message(text, calls);
            json!({
                "index": c["index"].as_u64().unwrap_or(i as u64),
                "message": message,
                "finish_reason": finish_reason(c["finishReason"].as_str().unwrap_or("STOP"), called),
            })
        })
        .collect();
    let (prompt, completion) = usage(&answer["usageMetadata"]);
    let id = answer["responseId"].as_str().map_or_else(
        || "chatcmpl-gemini".to_owned(),
        |id| format!("chatcmpl-{id}"),
    );
    Ok(chat_shape::completion(
        id,
        model,
        Value::Array(choices),
        prompt,
        completion,
    ))
}

struct Translation {
    model: String,
    created: i64,
    started: bool,
    /// Tool calls seen per candidate, for their indexes.
    calls: HashMap<u64, usize>,
    usage: (u64, u64),
    /// A finish reason arrived: a close is then the normal end.
    finished: bool,
    /// An error arrived: nothing more is read.
    done: bool,
}

impl Translation {
    fn chunk(&self, index: u64, delta: Value, finish: Value) -> Value {
        chat_shape::chunk(
            "chatcmpl-gemini",
            self.created,
            &self.model,
            index,
            delta,
            finish,
        )
    }
}

impl sse::Translate for Translation {
    fn on_event(&mut self, event: Value, out: &mut VecDeque<Result<Value, UpstreamError>>) {
        if let Some(error) = event.get("error") {
            self.done = true;
            let message = error["message"].as_str().unwrap_or("no message");
            out.push_back(Err(UpstreamError::new(
                Failure::Cut,
                format!("Gemini sent an error mid-stream: {message}"),
            )));
            return;
        }
        if event["usageMetadata"].is_object() {
            self.usage = usage(&event["usageMetadata"]);
        }
        for (i, candidate) in event["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = candidate["index"].as_u64().unwrap_or(i as u64);
            if !self.started {
                self.started = true;
                let first = self.chunk(
                    index,
                    json!({ "role": "assistant", "content": "" }),
                    Value::Null,
                );
                out.push_back(Ok(first));
            }
            let parts = candidate["content"]["parts"]
                .as_array()
                .map_or(&[][..], Vec::as_slice);
            let seen = self.calls.get(&index).copied().unwrap_or(0);
            let (text, calls) = split_parts(parts, seen);
            if !text.is_empty() {
                let chunk = self.chunk(index, json!({ "content": text }), Value::Null);
                out.push_back(Ok(chunk));
            }
            if !calls.is_empty() {
                *self.calls.entry(index).or_default() += calls.len();
                let chunk = self.chunk(index, json!({ "tool_calls": calls }), Value::Null);
                out.push_back(Ok(chunk));
            }
            if let Some(reason) = candidate["finishReason"].as_str() {
                self.finished = true;
                let called = self.calls.get(&index).copied().unwrap_or(0) > 0;
                let chunk = self.chunk(index, json!({}), json!(finish_reason(reason, called)));
                out.push_back(Ok(chunk));
            }
        }
    }

    fn over(&self) -> bool {
        self.done
    }

    /// Gemini ends a stream by closing it: after a finish reason that is
    /// the end (the usage chunk follows), before one it is a cut.
    fn on_close(&mut self) -> Result<Value, UpstreamError> {
        if !self.finished {
            return Err(UpstreamError::new(
                Failure::Cut,
                "the stream ended before a finish reason",
            ));
        }
        let (prompt, completion) = self.usage;
        Ok(usage_chunk(
            self.chunk(0, json!({}), Value::Null),
            prompt,
            completion,
        ))
    }
}

/// OpenAI chunks for a Gemini SSE stream.
pub fn translate_stream(events: ChunkStream, model: String) -> ChunkStream {
    let translation = Translation {
        model,
        created: now_ms() / 1000,
        started: false,
        calls: HashMap::new(),
        usage: (0, 0),
        finished: false,
        done: false,
    };
    sse::translate(events, translation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_reasons_map_to_openai_ones() {
        assert_eq!(finish_reason("STOP", false), "stop");
        assert_eq!(finish_reason("STOP", true), "tool_calls");
        assert_eq!(finish_reason("MAX_TOKENS", true), "length");
        assert_eq!(finish_reason("SAFETY", false), "content_filter");
        assert_eq!(finish_reason("OTHER", false), "stop");
    }

    #[test]
    fn a_tool_result_names_its_function_from_the_earlier_call() {
        let body = json!({ "messages": [
            { "role": "user", "content": "Weather?" },
            { "role": "assistant", "content": null, "tool_calls": [
                { "id": "call_0", "type": "function", "function": { "name": "get_weather", "arguments": "{\"city\":\"Paris\"}" } }] },
            { "role": "tool", "tool_call_id": "call_0", "content": "{\"temp\": 18}" }
        ] });
        let out = to_generate_content(&body, &HashMap::new()).unwrap();
        assert_eq!(
            out["contents"][1],
            json!({ "role": "model", "parts": [
            { "functionCall": { "name": "get_weather", "args": { "city": "Paris" } } }] })
        );
        assert_eq!(
            out["contents"][2],
            json!({ "role": "user", "parts": [
            { "functionResponse": { "name": "get_weather", "response": { "temp": 18 } } }] })
        );
    }
}
