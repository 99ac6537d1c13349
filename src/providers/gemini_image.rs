//! Image generation on Gemini image models, through generate-content.
//!
//! An OpenAI `images/generations` request becomes
//! `POST {base_url}/models/{upstream}:generateContent` (with
//! `x-goog-api-key`): the prompt is one user turn, `generationConfig` asks
//! for `responseModalities: ["TEXT", "IMAGE"]`, `candidateCount: n` when
//! `n` > 1, and `imageConfig.aspectRatio` for the size's ratio. `quality`,
//! `style`, `user` and any other field have no Gemini equivalent and are
//! not sent.
//!
//! The answer becomes OpenAI's shape: each `inlineData` part of each
//! candidate (thought parts left out) is one entry of `data`, as
//! `b64_json` (or, when `url` was asked, a `data:` URL: Gemini has no
//! image URLs), with the candidate's text as `revised_prompt`;
//! `usageMetadata` becomes `usage.input_tokens` / `output_tokens`, which
//! a model priced per token is billed by. An answer without any image is
//! the upstream refusing the prompt (422, with its finish reason and text).

use serde_json::{Map, Value, json};

use super::{Failure, UpstreamError, http};
use crate::base::time::now_ms;
use crate::catalogue::Model;

/// The aspect ratios Gemini image models take.
pub const ASPECT_RATIOS: [&str; 10] = [
    "1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9",
];

/// The aspect ratio of a `<width>x<height>` size, when Gemini takes it.
pub fn aspect_ratio(size: &str) -> Option<&'static str> {
    let (w, h) = size.split_once('x')?;
    let (w, h): (u32, u32) = (w.parse().ok()?, h.parse().ok()?);
    if w == 0 || h == 0 {
        return None;
    }
    let d = gcd(w, h);
    let ratio = format!("{}:{}", w / d, h / d);
    ASPECT_RATIOS.into_iter().find(|r| *r == ratio)
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// One generation: `body` is the OpenAI request, its `model` already the
/// upstream's name.
pub async fn generate(
    client: &reqwest::Client,
    model: &Model,
    body: &Value,
) -> Result<Value, UpstreamError> {
    let provider = &model.provider;
    let base = http::base_url(provider)?;
    let url = super::gemini::endpoint(base, &model.upstream, false);
    let request = client.post(url).json(&to_generate_content(body));
    let request = super::gemini::with_key(request, provider);
    let sent = http::send(request, provider, base).await?;
    let answer = http::read_json(sent).await?;
    let as_url = body["response_format"] == "url";
    from_response(&answer, as_url)
}

/// The generate-content request for an OpenAI image request. The size
/// was checked by the pipeline; one Gemini does not take is left out.
pub fn to_generate_content(body: &Value) -> Value {
    let mut config = Map::new();
    config.insert("responseModalities".into(), json!(["TEXT", "IMAGE"]));
    if let Some(n) = body["n"].as_u64().filter(|n| *n > 1) {
        config.insert("candidateCount".into(), json!(n));
    }
    if let Some(ratio) = body["size"].as_str().and_then(aspect_ratio) {
        config.insert("imageConfig".into(), json!({ "aspectRatio": ratio }));
    }
    json!({
        "contents": [{ "role": "user", "parts": [{ "text": body["prompt"] }] }],
        "generationConfig": config,
    })
}

/// OpenAI's image answer for a generate-content answer.
pub fn from_response(answer: &Value, as_url: bool) -> Result<Value, UpstreamError> {
    let mut data = Vec::new();
    let mut said = Vec::new();
    for candidate in answer["candidates"].as_array().into_iter().flatten() {
        let parts = candidate["content"]["parts"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let visible = || parts.iter().filter(|p| p["thought"] != true);
        let text: String = visible().filter_map(|p| p["text"].as_str()).collect();
        for image in visible().filter_map(|p| p.get("inlineData")) {
            let b64 = image["data"].as_str().unwrap_or_default();
            let mut entry = if as_url {
                let mime = image["mimeType"].as_str().unwrap_or("image/png");
                json!({ "url": format!("data:{mime};base64,{b64}") })
            } else {
                json!({ "b64_json": b64 })
            };
            if !text.is_empty() {
                entry["revised_prompt"] = json!(text);
            }
            data.push(entry);
        }
        if !text.is_empty() {
            said.push(text);
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            said.push(format!("finishReason {reason}"));
        }
    }
    if data.is_empty() {
        if let Some(reason) = answer["promptFeedback"]["blockReason"].as_str() {
            said.push(format!("blockReason {reason}"));
        }
        let said = if said.is_empty() {
            "nothing".to_owned()
        } else {
            said.join("; ")
        };
        return Err(UpstreamError::new(
            Failure::Status(422),
            format!("the Gemini model returned no image ({said})"),
        ));
    }
    let metadata = &answer["usageMetadata"];
    let input = metadata["promptTokenCount"].as_u64().unwrap_or(0);
    let output = metadata["candidatesTokenCount"].as_u64().unwrap_or(0)
        + metadata["thoughtsTokenCount"].as_u64().unwrap_or(0);
    Ok(json!({
        "created": now_ms() / 1000,
        "data": data,
        "usage": { "input_tokens": input, "output_tokens": output, "total_tokens": input + output },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_map_to_the_ratios_gemini_takes() {
        assert_eq!(aspect_ratio("1024x1024"), Some("1:1"));
        assert_eq!(aspect_ratio("1536x1024"), Some("3:2"));
        assert_eq!(aspect_ratio("1080x1920"), Some("9:16"));
        assert_eq!(aspect_ratio("1792x1024"), None);
        assert_eq!(aspect_ratio("auto"), None);
    }

    #[test]
    fn image_parts_become_openai_entries_and_no_image_is_a_refusal() {
        let answer = json!({ "candidates": [{ "content": { "parts": [
            { "text": "pondering", "thought": true },
            { "inlineData": { "mimeType": "image/jpeg", "data": "AAAA" }, "thought": true },
            { "text": "A red boat." },
            { "inlineData": { "mimeType": "image/jpeg", "data": "QUJD" } },
        ] } }], "usageMetadata": { "promptTokenCount": 5, "candidatesTokenCount": 1290 } });
        let out = from_response(&answer, false).unwrap();
        assert_eq!(
            out["data"],
            json!([{ "b64_json": "QUJD", "revised_prompt": "A red boat." }])
        );
        assert_eq!(out["usage"]["output_tokens"], 1290);
        let url = from_response(&answer, true).unwrap();
        assert_eq!(url["data"][0]["url"], "data:image/jpeg;base64,QUJD");
        let refused = json!({ "candidates": [{ "content": { "parts": [{ "text": "I can't." }] },
            "finishReason": "IMAGE_SAFETY" }] });
        let error = from_response(&refused, false).unwrap_err();
        assert_eq!(error.failure, Failure::Status(422));
        assert!(error.message.contains("IMAGE_SAFETY"), "{}", error.message);
    }
}
