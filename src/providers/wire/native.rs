//! What the gateway reads in the forwarded wire formats (Anthropic's
//! Messages, Gemini's generate-content, OpenAI's legacy completions),
//! without changing them: the messages as text for the classifier, and the token counts of an
//! answer or a stream for billing.
//!
//! Anthropic's Messages API reports `usage` on the message (plain) or on
//! `message_start` and `message_delta` (stream; the delta's `output_tokens`
//! is the final count). Cached input (`cache_creation_input_tokens`,
//! `cache_read_input_tokens`) counts as prompt tokens, as on the chat route.
//! Gemini reports `usageMetadata` on the answer or on stream chunks (the last
//! one is final); thoughts count as completion tokens, as on the chat route.
//! Legacy completions report `usage` on the answer, and on a stream only in
//! a last chunk when the caller asked `stream_options.include_usage`; the
//! stream's end marker is `data: [DONE]`. The Responses API reports `usage`
//! (`input_tokens`, `output_tokens`) on the response, and in a stream on the
//! response of its last event (`response.completed` or
//! `response.incomplete`), which is also its end marker.

use serde_json::{Value, json};

use crate::base::error::ApiError;
use crate::catalogue::Endpoint;
use crate::catalogue::ProviderKind;
use crate::providers::vertex::Publisher;
use crate::upstream::{ProviderConfig, ResponsesMode};

/// The native API a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// `POST /v1/messages`.
    Anthropic,
    /// `POST /v1beta/models/{model}:generateContent` and the rest.
    Gemini,
    /// `POST /v1/completions`, OpenAI's legacy text completions.
    Completions,
    /// `POST /v1/responses`, OpenAI's Responses API, on a provider that
    /// serves it (docs/responses.md).
    Responses,
}

impl Wire {
    /// The usage dimension of the wire.
    pub fn endpoint(self) -> Endpoint {
        match self {
            Wire::Anthropic => Endpoint::Messages,
            Wire::Gemini => Endpoint::GenerateContent,
            Wire::Completions => Endpoint::Completions,
            Wire::Responses => Endpoint::Responses,
        }
    }

    /// The kind of provider this wire is forwarded to.
    pub fn provider_kind(self) -> ProviderKind {
        match self {
            Wire::Anthropic => ProviderKind::Anthropic,
            Wire::Gemini => ProviderKind::Gemini,
            Wire::Completions | Wire::Responses => ProviderKind::Openai,
        }
    }

    /// Whether a provider of `kind` can serve the wire for the model it
    /// calls `upstream`: its own kind; for legacy completions also the
    /// built-in mock (which answers in the completions shape, so a demo
    /// configuration works offline); for generate-content also Vertex AI's
    /// Google models, which take the same body at their own URL; for
    /// Messages also Vertex AI's Anthropic models, which take the same body
    /// with Vertex's `anthropic_version` and no `model`.
    pub fn served_by(self, kind: ProviderKind, upstream: &str) -> bool {
        let vertex_publisher = match self {
            Wire::Gemini => Some(Publisher::Google),
            Wire::Anthropic => Some(Publisher::Anthropic),
            Wire::Completions | Wire::Responses => None,
        };
        kind == self.provider_kind()
            || (self == Wire::Completions && kind == ProviderKind::Mock)
            || (kind == ProviderKind::Vertex
                && vertex_publisher.is_some_and(|p| Publisher::of(upstream) == p))
    }

    /// Whether `provider` serves the wire: of a kind that does, and for the
    /// Responses API not set to translate it (`responses = "translate"`).
    pub fn serves(self, provider: &ProviderConfig, upstream: &str) -> bool {
        self.served_by(provider.kind, upstream)
            && !(self == Wire::Responses && provider.responses == ResponsesMode::Translate)
    }

    /// The `gen_ai.operation.name` of its spans (docs/observability.md).
    pub fn operation(self) -> &'static str {
        match self {
            Wire::Anthropic => "chat",
            Wire::Gemini => "generate_content",
            Wire::Completions => "text_completion",
            Wire::Responses => "chat",
        }
    }

    /// The route, for messages.
    pub fn route(self) -> &'static str {
        match self {
            Wire::Anthropic => "/v1/messages",
            Wire::Gemini => "generate-content",
            Wire::Completions => "/v1/completions",
            Wire::Responses => "/v1/responses",
        }
    }

    /// The OpenAI-style messages the classifier reads: the request's text
    /// by role, with image and document parts as `image_url` placeholders
    /// (so the free tier's multimodal cap counts them).
    pub fn classification_view(self, body: &Value) -> Result<Value, ApiError> {
        match self {
            Wire::Anthropic => anthropic_view(body),
            Wire::Gemini => gemini_view(body),
            Wire::Completions => completions_view(body),
            Wire::Responses => super::responses_items::classification_view(body),
        }
    }

    /// An event that ends a stream the gateway had to cut, in the wire's
    /// own error shape.
    pub fn error_event(self, message: &str) -> String {
        match self {
            Wire::Anthropic => format!(
                "event: error\ndata: {}\n\n",
                json!({ "type": "error", "error": { "type": "api_error", "message": message } })
            ),
            Wire::Gemini => format!(
                "data: {}\n\n",
                json!({ "error": { "code": 502, "message": message, "status": "UNAVAILABLE" } })
            ),
            Wire::Completions => format!(
                "data: {}\n\n",
                json!({ "error": { "message": message, "type": "server_error", "code": "upstream_error", "param": null } })
            ),
            Wire::Responses => format!(
                "event: error\ndata: {}\n\n",
                json!({ "type": "error", "code": "upstream_error", "message": message, "param": null })
            ),
        }
    }
}

fn placeholder_image() -> Value {
    json!({ "type": "image_url", "image_url": { "url": "" } })
}

fn anthropic_blocks(content: &Value) -> Value {
    match content {
        Value::String(text) => Value::String(text.clone()),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| match block["type"].as_str() {
                Some("text") => Some(json!({ "type": "text", "text": block["text"] })),
                Some("image" | "document") => Some(placeholder_image()),
                Some("tool_result") => Some(json!({
                    "type": "text",
                    "text": crate::providers::content_text(&anthropic_blocks(&block["content"])),
                })),
                _ => None,
            })
            .collect(),
        _ => Value::String(String::new()),
    }
}

fn anthropic_view(body: &Value) -> Result<Value, ApiError> {
    let system = &body["system"];
    let turns = Turns {
        field: "messages",
        assistant: "assistant",
        parts: |message| anthropic_blocks(&message["content"]),
    };
    turns.view(body, (!system.is_null()).then(|| anthropic_blocks(system)))
}

fn gemini_parts(content: &Value) -> Value {
    content["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|part| {
            if let Some(text) = part["text"].as_str() {
                Some(json!({ "type": "text", "text": text }))
            } else if part.get("inlineData").is_some() || part.get("fileData").is_some() {
                Some(placeholder_image())
            } else {
                None
            }
        })
        .collect()
}

fn gemini_view(body: &Value) -> Result<Value, ApiError> {
    let system = &body["systemInstruction"];
    let turns = Turns {
        field: "contents",
        assistant: "model",
        parts: gemini_parts,
    };
    turns.view(body, system.is_object().then(|| gemini_parts(system)))
}

/// Where a native chat body (Anthropic's, Gemini's) holds its turns.
struct Turns {
    /// The body's array of turns.
    field: &'static str,
    /// The role of the model's turns; any other is the user's.
    assistant: &'static str,
    /// A turn's content as chat content parts.
    parts: fn(&Value) -> Value,
}

impl Turns {
    /// The turns as chat messages, after the system prompt (its parts'
    /// text) when there is one.
    fn view(&self, body: &Value, system: Option<Value>) -> Result<Value, ApiError> {
        let field = self.field;
        let Some(turns) = body[field].as_array() else {
            return Err(ApiError::invalid(
                field,
                format!("`{field}` must be an array of {field}"),
            ));
        };
        let mut out = Vec::with_capacity(turns.len() + 1);
        if let Some(system) = system {
            out.push(json!({
                "role": "system",
                "content": crate::providers::content_text(&system),
            }));
        }
        for turn in turns {
            let role = if turn["role"] == self.assistant {
                "assistant"
            } else {
                "user"
            };
            out.push(json!({ "role": role, "content": (self.parts)(turn) }));
        }
        Ok(Value::Array(out))
    }
}

/// The prompt (and `suffix`) of a legacy completion as user messages.
/// `prompt` must be a string or an array of strings: token arrays are
/// refused, since the classifier and the gate cannot read them
/// (docs/completions.md).
fn completions_view(body: &Value) -> Result<Value, ApiError> {
    const WHAT: &str = "`prompt` must be a string or a non-empty array of strings (token arrays are not accepted: the gateway classifies the text it forwards)";
    let prompts: Vec<&str> = match &body["prompt"] {
        Value::Null => {
            return Err(ApiError::invalid(
                "prompt",
                "`prompt` is required: a string or an array of strings",
            ));
        }
        Value::String(text) => vec![text],
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(Value::as_str)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| ApiError::invalid("prompt", WHAT))?,
        _ => return Err(ApiError::invalid("prompt", WHAT)),
    };
    let mut out: Vec<Value> = prompts
        .into_iter()
        .map(|text| json!({ "role": "user", "content": text }))
        .collect();
    match &body["suffix"] {
        Value::Null => {}
        Value::String(suffix) => out.push(json!({ "role": "user", "content": suffix })),
        _ => return Err(ApiError::invalid("suffix", "`suffix` must be a string")),
    }
    Ok(Value::Array(out))
}

/// What an answer or a stream said about itself, gathered as it passes.
#[derive(Debug, Default)]
pub struct Meter {
    /// Prompt tokens as reported (cached input included).
    pub prompt: Option<u64>,
    /// Final completion tokens as reported.
    pub completion: Option<u64>,
    /// Characters of generated text, for an estimate when no count came.
    pub chars: u64,
    /// The generated text, when the conversation log or the sampler wants it.
    pub text: Option<String>,
    /// The answer's end marker was seen (`message_stop`, a `finishReason`).
    pub ended: bool,
    /// The upstream reported an error inside the stream.
    pub failed: bool,
}

impl Meter {
    pub fn new(keep_text: bool) -> Meter {
        Meter {
            text: keep_text.then(String::new),
            ..Meter::default()
        }
    }

    /// Whether the answer arrived whole.
    pub fn completed(&self) -> bool {
        self.ended && !self.failed
    }

    /// The counts a `usage` object reports, under its wire's field names
    /// for prompt and completion tokens; a count it leaves out keeps the
    /// one read before.
    fn counts(&mut self, usage: &Value, prompt: &str, completion: &str) {
        if let Some(prompt) = usage[prompt].as_u64() {
            self.prompt = Some(prompt);
        }
        if let Some(completion) = usage[completion].as_u64() {
            self.completion = Some(completion);
        }
    }

    fn add_text(&mut self, text: &str) {
        self.chars += text.chars().count() as u64;
        if let Some(kept) = &mut self.text {
            kept.push_str(text);
        }
    }

    /// Reads a whole (non-streamed) answer.
    pub fn observe_answer(&mut self, wire: Wire, answer: &Value) {
        match wire {
            Wire::Anthropic => {
                self.anthropic_usage(&answer["usage"]);
                for block in answer["content"].as_array().into_iter().flatten() {
                    if let Some(text) = block["text"].as_str() {
                        self.add_text(text);
                    }
                }
                self.ended = true;
            }
            Wire::Gemini => self.gemini_chunk(answer),
            Wire::Completions => {
                self.completions_chunk(answer);
                self.ended = true;
            }
            Wire::Responses => {
                self.responses_answer(answer);
                self.ended = true;
            }
        }
    }

    /// Reads a stream's `data: [DONE]` line.
    pub fn observe_done(&mut self, wire: Wire) {
        if wire == Wire::Completions {
            self.ended = true;
        }
    }

    /// Reads one `data:` event of a stream.
    pub fn observe_event(&mut self, wire: Wire, event: &Value) {
        match wire {
            Wire::Anthropic => self.anthropic_event(event),
            Wire::Gemini => self.gemini_chunk(event),
            Wire::Completions => self.completions_chunk(event),
            Wire::Responses => self.responses_event(event),
        }
    }

    /// A whole response: `usage` and the text of its output messages.
    fn responses_answer(&mut self, response: &Value) {
        self.counts(&response["usage"], "input_tokens", "output_tokens");
        for item in response["output"].as_array().into_iter().flatten() {
            for part in item["content"].as_array().into_iter().flatten() {
                if let Some(text) = part["text"].as_str() {
                    self.add_text(text);
                }
            }
            if let Some(arguments) = item["arguments"].as_str() {
                self.add_text(arguments);
            }
        }
    }

    /// One event of a Responses stream: text and arguments as they come,
    /// the usage and the end on the last event.
    fn responses_event(&mut self, event: &Value) {
        match event["type"].as_str() {
            Some("response.output_text.delta" | "response.function_call_arguments.delta") => {
                if let Some(delta) = event["delta"].as_str() {
                    self.add_text(delta);
                }
            }
            Some("response.completed" | "response.incomplete") => {
                self.counts(&event["response"]["usage"], "input_tokens", "output_tokens");
                self.ended = true;
            }
            Some("response.failed" | "error") => self.failed = true,
            _ => {}
        }
    }

    /// A legacy completion or one of its stream chunks: the text of every
    /// choice, and `usage` when present (the last chunk of a stream asked
    /// with `stream_options.include_usage`).
    fn completions_chunk(&mut self, chunk: &Value) {
        if chunk.get("error").is_some() {
            self.failed = true;
            return;
        }
        self.counts(&chunk["usage"], "prompt_tokens", "completion_tokens");
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            if let Some(text) = choice["text"].as_str() {
                self.add_text(text);
            }
        }
    }

    fn anthropic_usage(&mut self, usage: &Value) {
        let input: Vec<u64> = [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ]
        .iter()
        .filter_map(|field| usage[*field].as_u64())
        .collect();
        if !input.is_empty() {
            self.prompt = Some(input.iter().sum());
        }
        if let Some(output) = usage["output_tokens"].as_u64() {
            self.completion = Some(output);
        }
    }

    fn anthropic_event(&mut self, event: &Value) {
        match event["type"].as_str() {
            Some("message_start") => {
                self.anthropic_usage(&event["message"]["usage"]);
                // `message_start` carries a placeholder output count; only
                // `message_delta` gives the final one.
                self.completion = None;
            }
            Some("content_block_delta") => {
                let delta = &event["delta"];
                for field in ["text", "partial_json", "thinking"] {
                    if let Some(text) = delta[field].as_str() {
                        self.add_text(text);
                    }
                }
            }
            Some("message_delta") => self.anthropic_usage(&event["usage"]),
            Some("message_stop") => self.ended = true,
            Some("error") => self.failed = true,
            _ => {}
        }
    }

    fn gemini_chunk(&mut self, chunk: &Value) {
        if chunk.get("error").is_some() {
            self.failed = true;
            return;
        }
        let usage = &chunk["usageMetadata"];
        if let Some(prompt) = usage["promptTokenCount"].as_u64() {
            self.prompt = Some(prompt);
        }
        if let Some(candidates) = usage["candidatesTokenCount"].as_u64() {
            self.completion = Some(candidates + usage["thoughtsTokenCount"].as_u64().unwrap_or(0));
        }
        for candidate in chunk["candidates"].as_array().into_iter().flatten() {
            for part in candidate["content"]["parts"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if let Some(text) = part["text"].as_str() {
                    self.add_text(text);
                }
            }
            if candidate.get("finishReason").is_some_and(|r| !r.is_null()) {
                self.ended = true;
            }
        }
    }

    /// Prompt and completion tokens to bill, and whether either is an
    /// estimate (`prompt_estimate` from the request, 4 characters a token
    /// for the answer).
    pub fn tokens(&self, prompt_estimate: u64) -> (u64, u64, bool) {
        let estimated = self.prompt.is_none() || self.completion.is_none();
        (
            self.prompt.unwrap_or(prompt_estimate),
            self.completion.unwrap_or(self.chars.div_ceil(4)),
            estimated,
        )
    }
}

/// `body` with the string value of its top-level `field` replaced by
/// `value`, every other byte as it was; `None` when the field is not a
/// plain top-level string (the caller then re-encodes).
pub fn replace_top_level_string(body: &[u8], field: &str, value: &str) -> Option<Vec<u8>> {
    let (start, end) = top_level_string_span(body, field)?;
    let encoded = serde_json::to_string(value).ok()?;
    let mut out = Vec::with_capacity(body.len() + encoded.len());
    out.extend_from_slice(&body[..start]);
    out.extend_from_slice(encoded.as_bytes());
    out.extend_from_slice(&body[end..]);
    Some(out)
}

/// The index just past the string that starts at `start` (a `"`).
fn string_end(body: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < body.len() {
        match body[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn skip_whitespace(body: &[u8], mut i: usize) -> usize {
    while i < body.len() && body[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The byte span of the string value of the root object's `field`.
fn top_level_string_span(body: &[u8], field: &str) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    let mut expecting_key = false;
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            open @ (b'{' | b'[') => {
                depth += 1;
                expecting_key = depth == 1 && open == b'{';
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                i += 1;
            }
            b',' => {
                expecting_key = depth == 1;
                i += 1;
            }
            b'"' => {
                let end = string_end(body, i)?;
                if depth == 1 && expecting_key {
                    expecting_key = false;
                    if &body[i + 1..end - 1] == field.as_bytes() {
                        let colon = skip_whitespace(body, end);
                        if body.get(colon) != Some(&b':') {
                            return None;
                        }
                        let value = skip_whitespace(body, colon + 1);
                        if body.get(value) != Some(&b'"') {
                            return None;
                        }
                        return Some((value, string_end(body, value)?));
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_top_level_model_is_replaced_and_every_other_byte_kept() {
        let body = br#"{ "metadata": {"model": "inner"}, "messages":[{"content":"a \"model\": x"}],
            "model" :  "claude-public", "max_tokens": 5 }"#;
        let out = replace_top_level_string(body, "model", "claude-upstream-1").unwrap();
        let expected =
            String::from_utf8_lossy(body).replace("\"claude-public\"", "\"claude-upstream-1\"");
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        assert_eq!(
            replace_top_level_string(br#"{"model": 5}"#, "model", "x"),
            None
        );
        assert_eq!(
            replace_top_level_string(br#"{"other": "model"}"#, "model", "x"),
            None
        );
    }

    #[test]
    fn anthropic_usage_counts_cached_input_and_the_final_output() {
        let mut meter = Meter::new(true);
        for event in [
            json!({ "type": "message_start", "message": { "usage": { "input_tokens": 12, "cache_read_input_tokens": 3, "output_tokens": 1 } } }),
            json!({ "type": "content_block_delta", "delta": { "type": "text_delta", "text": "hello" } }),
            json!({ "type": "message_delta", "usage": { "output_tokens": 7 } }),
            json!({ "type": "message_stop" }),
        ] {
            meter.observe_event(Wire::Anthropic, &event);
        }
        assert_eq!(meter.tokens(99), (15, 7, false));
        assert!(meter.completed());
        assert_eq!(meter.text.as_deref(), Some("hello"));
    }

    #[test]
    fn a_stream_without_counts_is_estimated() {
        let mut meter = Meter::new(false);
        meter.observe_event(
            Wire::Gemini,
            &json!({ "candidates": [{ "content": { "parts": [{ "text": "12345678" }] } }] }),
        );
        assert_eq!(meter.tokens(10), (10, 2, true));
        assert!(!meter.completed(), "no finishReason: not ended");
    }

    #[test]
    fn a_completions_stream_is_billed_from_its_usage_chunk_and_ends_at_done() {
        let mut meter = Meter::new(true);
        for event in [
            json!({ "choices": [{ "index": 0, "text": "hel", "finish_reason": null }] }),
            json!({ "choices": [{ "index": 0, "text": "lo", "finish_reason": "stop" }] }),
            json!({ "choices": [], "usage": { "prompt_tokens": 4, "completion_tokens": 2 } }),
        ] {
            meter.observe_event(Wire::Completions, &event);
        }
        assert!(!meter.completed(), "only [DONE] ends it");
        meter.observe_done(Wire::Completions);
        assert!(meter.completed());
        assert_eq!(meter.tokens(99), (4, 2, false));
        assert_eq!(meter.text.as_deref(), Some("hello"));
    }

    #[test]
    fn a_completions_prompt_is_text_or_strings_and_never_tokens() {
        let view = Wire::Completions
            .classification_view(&json!({ "prompt": ["a", "b"], "suffix": "c" }))
            .unwrap();
        assert_eq!(view.as_array().unwrap().len(), 3);
        assert_eq!(view[2]["content"], "c");
        for bad in [
            json!({}),
            json!({ "prompt": [1, 2] }),
            json!({ "prompt": [] }),
        ] {
            let error = Wire::Completions.classification_view(&bad).unwrap_err();
            assert_eq!(error.param.as_deref(), Some("prompt"));
        }
    }

    #[test]
    fn classification_views_carry_text_and_mark_images() {
        let view = Wire::Anthropic
            .classification_view(&json!({
                "system": [{ "type": "text", "text": "be kind" }],
                "messages": [{ "role": "user", "content": [
                    { "type": "text", "text": "score this applicant" },
                    { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "AA==" } }
                ] }]
            }))
            .unwrap();
        assert_eq!(view[0]["content"], "be kind");
        assert_eq!(view[1]["content"][0]["text"], "score this applicant");
        assert!(crate::gateway::multimodal::is_multimodal(&view));
        let view = Wire::Gemini
            .classification_view(&json!({
                "systemInstruction": { "parts": [{ "text": "sys" }] },
                "contents": [{ "role": "model", "parts": [{ "text": "hi" }] }]
            }))
            .unwrap();
        assert_eq!(view[0]["role"], "system");
        assert_eq!(view[1]["role"], "assistant");
        assert!(Wire::Gemini.classification_view(&json!({})).is_err());
    }
}
