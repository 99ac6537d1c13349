//! Embedding endpoints of upstream providers (docs/embeddings.md).
//!
//! OpenAI-compatible servers take the caller's request as it is (its
//! `model` renamed) at `{base_url}/embeddings`, and their answer comes back
//! untouched, base64 vectors included. A Gemini model gets one
//! `models/{m}:batchEmbedContents` call for the whole input, one request
//! per text in order, `dimensions` as `outputDimensionality`; its answer
//! becomes OpenAI's shape, base64-encoded here when the caller asked for
//! it. Azure deployments take OpenAI's request at their own URL; Vertex
//! text-embedding models get one `:predict` call ([`super::vertex`]).
//! The mock answers deterministic unit vectors computed from the text.

use base64::Engine;
use serde_json::{Value, json};

use super::{Failure, Providers, UpstreamError, http};
use crate::catalogue::{Model, ProviderKind};
use crate::providers::tokens;

/// The mock's vector length when the request names no `dimensions`.
pub const MOCK_DIMENSIONS: usize = 64;
/// The longest vector the mock makes (OpenAI's largest model's length):
/// 2048 inputs of it are already a 100 MB answer.
pub const MOCK_MAX_DIMENSIONS: u64 = 3072;

impl Providers {
    /// One attempt at `model`'s embeddings endpoint; `body` is the OpenAI
    /// request with the upstream's model name.
    pub async fn embed(&self, model: &Model, body: Value) -> Result<Value, UpstreamError> {
        match model.provider.kind {
            ProviderKind::Openai | ProviderKind::Azure => openai(&self.http, model, &body).await,
            ProviderKind::Gemini => gemini(&self.http, model, &body).await,
            ProviderKind::Vertex => super::vertex::embed(&self.http, model, &body).await,
            ProviderKind::Mock => mock(&model.upstream, &body),
            // The pipeline never walks to this kind.
            ProviderKind::Anthropic | ProviderKind::Bedrock => Err(UpstreamError::new(
                Failure::Unsupported,
                format!(
                    "a provider of kind {} has no embeddings endpoint",
                    model.provider.kind.as_str()
                ),
            )),
        }
    }
}

async fn openai(
    client: &reqwest::Client,
    model: &Model,
    body: &Value,
) -> Result<Value, UpstreamError> {
    let (request, base) = super::openai::post(client, model, &["embeddings"])?;
    let sent = http::send(request.json(body), &model.provider, base).await?;
    let answer = http::read_json(sent).await?;
    if !answer["data"].is_array() {
        return Err(UpstreamError::new(
            Failure::Garbage,
            "the answer has no `data` array",
        ));
    }
    Ok(answer)
}

async fn gemini(
    client: &reqwest::Client,
    model: &Model,
    body: &Value,
) -> Result<Value, UpstreamError> {
    let provider = &model.provider;
    let base = http::base_url(provider)?;
    let action = format!("{}:batchEmbedContents", model.upstream);
    let url = http::endpoint(base, &["models", &action]);
    let request = client.post(url).json(&to_batch(&model.upstream, body));
    let request = super::gemini::with_key(request, provider);
    let sent = http::send(request, provider, base).await?;
    let answer = http::read_json(sent).await?;
    from_batch(&model.upstream, body, &answer)
}

/// The texts of an OpenAI embeddings request, in order (token arrays are
/// refused before a Gemini deployment is called).
pub(crate) fn texts(body: &Value) -> Vec<&str> {
    match &body["input"] {
        Value::String(text) => vec![text.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The `batchEmbedContents` request: one entry per text, in order.
pub fn to_batch(upstream: &str, body: &Value) -> Value {
    let requests: Vec<Value> = texts(body)
        .into_iter()
        .map(|text| {
            let mut entry = json!({
                "model": format!("models/{upstream}"),
                "content": { "parts": [{ "text": text }] },
            });
            if let Some(d) = body["dimensions"].as_u64() {
                entry["outputDimensionality"] = json!(d);
            }
            entry
        })
        .collect();
    json!({ "requests": requests })
}

/// OpenAI's answer for a `batchEmbedContents` answer: one embedding per
/// text, in the order sent. Gemini reports no tokens: the pipeline bills
/// an estimate and fills `usage`.
pub fn from_batch(upstream: &str, body: &Value, answer: &Value) -> Result<Value, UpstreamError> {
    let sent = texts(body).len();
    let embeddings = answered(answer, "embeddings", sent, "batchEmbedContents")?;
    let base64 = body["encoding_format"] == "base64";
    let mut data = Vec::with_capacity(sent);
    for (index, embedding) in embeddings.iter().enumerate() {
        let values = values(embedding, || {
            format!("embedding {index} has no numeric `values`")
        })?;
        data.push(entry(index, &values, base64));
    }
    Ok(json!({ "object": "list", "data": data, "model": upstream }))
}

/// The `field` array of an embeddings answer from `api`, which must hold
/// one item per text sent.
pub(crate) fn answered<'a>(
    answer: &'a Value,
    field: &str,
    sent: usize,
    api: &str,
) -> Result<&'a [Value], UpstreamError> {
    let items = answer[field].as_array().map_or(&[][..], Vec::as_slice);
    if items.len() != sent {
        return Err(UpstreamError::new(
            Failure::Garbage,
            format!("{api} answered {} {field} for {sent} inputs", items.len()),
        ));
    }
    Ok(items)
}

/// The numeric `values` of one upstream embedding as floats; `missing`
/// words the error when they are absent or not all numbers.
pub(crate) fn values(
    embedding: &Value,
    missing: impl FnOnce() -> String,
) -> Result<Vec<f32>, UpstreamError> {
    let values: Option<Vec<f32>> = embedding["values"].as_array().and_then(|values| {
        values
            .iter()
            .map(|v| v.as_f64().map(|f| f as f32))
            .collect()
    });
    values.ok_or_else(|| UpstreamError::new(Failure::Garbage, missing()))
}

/// One entry of `data`: the vector as floats, or as OpenAI's base64 (the
/// little-endian bytes of each `f32`).
pub(crate) fn entry(index: usize, values: &[f32], base64: bool) -> Value {
    let embedding = if base64 {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        json!(base64::engine::general_purpose::STANDARD.encode(bytes))
    } else {
        json!(values)
    };
    json!({ "object": "embedding", "index": index, "embedding": embedding })
}

/// The mock: a unit vector per input from an FNV-1a hash of its text (or
/// its tokens), `dimensions` long (64 unless asked, at most 3072: more is
/// its 400), so the same input
/// always has the same vector. It reports its estimate as usage; an
/// upstream name `error:<status>` fails with that status.
fn mock(upstream: &str, body: &Value) -> Result<Value, UpstreamError> {
    if let Some(status) = upstream.strip_prefix("error:") {
        let status = status.parse().unwrap_or(500);
        return Err(UpstreamError::new(
            Failure::Status(status),
            format!("mock error {status}"),
        ));
    }
    let dimensions = match body["dimensions"].as_u64() {
        None => MOCK_DIMENSIONS,
        Some(d) if d <= MOCK_MAX_DIMENSIONS => d as usize,
        Some(d) => {
            return Err(UpstreamError::new(
                Failure::Status(400),
                format!(
                    "the mock makes vectors of at most {MOCK_MAX_DIMENSIONS} dimensions, not {d}"
                ),
            ));
        }
    };
    let inputs: Vec<(Vec<u8>, u64)> = match &body["input"] {
        Value::String(text) => vec![(text.as_bytes().to_vec(), tokens::estimate_text(text))],
        Value::Array(items) if items.iter().all(Value::is_number) => {
            vec![(token_bytes(items), items.len() as u64)]
        }
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(text) => (text.as_bytes().to_vec(), tokens::estimate_text(text)),
                Value::Array(t) => (token_bytes(t), t.len() as u64),
                _ => (Vec::new(), 0),
            })
            .collect(),
        _ => Vec::new(),
    };
    let base64 = body["encoding_format"] == "base64";
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, (bytes, _))| entry(i, &mock_vector(bytes, dimensions), base64))
        .collect();
    let prompt_tokens: u64 = inputs.iter().map(|(_, t)| t).sum();
    Ok(json!({
        "object": "list",
        "data": data,
        "model": upstream,
        "usage": { "prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens },
    }))
}

fn token_bytes(tokens: &[Value]) -> Vec<u8> {
    tokens
        .iter()
        .flat_map(|t| t.as_u64().unwrap_or(0).to_le_bytes())
        .collect()
}

/// The mock's vector of `bytes`: each component from the FNV-1a hash of
/// the bytes and the component's index, scaled to unit length.
pub fn mock_vector(bytes: &[u8], dimensions: usize) -> Vec<f32> {
    let raw: Vec<f64> = (0..dimensions as u64)
        .map(|i| {
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
            for b in bytes.iter().chain(&i.to_le_bytes()) {
                hash ^= u64::from(*b);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
            (hash >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect();
    let norm = raw
        .iter()
        .map(|v| v * v)
        .sum::<f64>()
        .sqrt()
        .max(f64::MIN_POSITIVE);
    raw.iter().map(|v| (v / norm) as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_batches_keep_the_order_and_the_dimensions() {
        let body = json!({ "input": ["a", "b"], "dimensions": 3 });
        let batch = to_batch("text-embedding-004", &body);
        assert_eq!(batch["requests"][1]["content"]["parts"][0]["text"], "b");
        assert_eq!(batch["requests"][0]["outputDimensionality"], 3);
        assert_eq!(batch["requests"][0]["model"], "models/text-embedding-004");
        let answer = json!({ "embeddings": [{ "values": [1.0, 0.0] }, { "values": [0.5, 0.25] }] });
        let openai = from_batch("m", &body, &answer).unwrap();
        assert_eq!(openai["data"][1]["index"], 1);
        assert_eq!(openai["data"][1]["embedding"], json!([0.5, 0.25]));
        let short = json!({ "embeddings": [{ "values": [1.0] }] });
        assert!(from_batch("m", &body, &short).is_err());
    }

    #[test]
    fn base64_is_the_little_endian_f32_bytes() {
        let encoded = entry(0, &[1.0, -2.0], true);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded["embedding"].as_str().unwrap())
            .unwrap();
        assert_eq!(
            bytes,
            [1.0f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat()
        );
    }

    #[test]
    fn mock_vectors_are_deterministic_unit_vectors() {
        let a = mock_vector(b"hello", 16);
        assert_eq!(a, mock_vector(b"hello", 16));
        assert_ne!(a, mock_vector(b"hellp", 16));
        let norm: f32 = a.iter().map(|v| v * v).sum();
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
    }
}
