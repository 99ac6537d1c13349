//! Google Vertex AI: Gemini and Anthropic models in a Google Cloud project
//! and location, called with an OAuth access token ([`token`]).
//!
//! Gemini models are at
//! `{base}/v1/projects/{project}/locations/{location}/publishers/google/models/{m}:generateContent`
//! (`:streamGenerateContent?alt=sse` for streams), in the Gemini wire
//! format ([`super::gemini`] translates both ways). Models whose upstream
//! name starts with `claude` are Anthropic's, at
//! `.../publishers/anthropic/models/{m}:rawPredict` (`:streamRawPredict`),
//! in the Messages format ([`super::anthropic`]) with `anthropic_version`
//! `vertex-2023-10-16` in the body and no `model` field (the path names
//! it). Embeddings go to `.../publishers/google/models/{m}:predict`.

pub mod token;

use serde_json::{Value, json};
use url::Url;

use super::fetch::ImageFetcher;
use super::{Failure, Reply, UpstreamError, anthropic, gemini, http, sse};
use crate::catalogue::Model;
use crate::upstream::{ProviderConfig, Vertex};

/// The `anthropic_version` Vertex takes in an Anthropic body.
pub const ANTHROPIC_VERSION: &str = "vertex-2023-10-16";

/// Who publishes a model on Vertex, which decides its wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Publisher {
    Google,
    Anthropic,
}

impl Publisher {
    /// Anthropic for an upstream name starting with `claude`, else Google.
    pub fn of(upstream: &str) -> Publisher {
        if upstream.starts_with("claude") {
            Publisher::Anthropic
        } else {
            Publisher::Google
        }
    }

    fn segment(self) -> &'static str {
        match self {
            Publisher::Google => "google",
            Publisher::Anthropic => "anthropic",
        }
    }
}

/// The default base URL of a location.
pub fn default_base_url(location: &str) -> Result<Url, String> {
    Url::parse(&format!("https://{location}-aiplatform.googleapis.com"))
        .map_err(|e| format!("`{location}` does not make a host name ({e})"))
}

/// `{base}/v1/projects/{p}/locations/{l}/publishers/{pub}/models/{m}:{action}`,
/// each part one encoded path segment.
pub fn model_url(base: &Url, vertex: &Vertex, upstream: &str, action: &str) -> Url {
    let publisher = Publisher::of(upstream);
    http::endpoint(
        base,
        &[
            "v1",
            "projects",
            &vertex.project,
            "locations",
            &vertex.location,
            "publishers",
            publisher.segment(),
            "models",
            &format!("{upstream}:{action}"),
        ],
    )
}

/// The provider's base URL and Vertex settings (configuration loading
/// always sets both for this kind).
pub fn settings(provider: &ProviderConfig) -> Result<(&Url, &Vertex), UpstreamError> {
    match (&provider.base_url, provider.cloud.vertex()) {
        (Some(base), Some(vertex)) => Ok((base, vertex)),
        _ => Err(UpstreamError::new(
            Failure::Unsupported,
            "the provider has no Vertex settings",
        )),
    }
}

/// A POST to `url` with the provider's access token.
pub async fn post(
    client: &reqwest::Client,
    provider: &ProviderConfig,
    vertex: &Vertex,
    url: Url,
) -> Result<reqwest::RequestBuilder, UpstreamError> {
    let token = token::token(&vertex.tokens, client, provider.first_byte_timeout).await?;
    let mut request = client.post(url);
    if let Some(token) = token {
        request = request.bearer_auth(token.expose());
    }
    Ok(request)
}

pub async fn chat(
    client: &reqwest::Client,
    fetcher: &ImageFetcher,
    model: &Model,
    body: Value,
    stream: bool,
) -> Result<Reply, UpstreamError> {
    let provider = &model.provider;
    let (base, vertex) = settings(provider)?;
    let name = body["model"].as_str().unwrap_or_default().to_owned();
    // Each publisher has its own body, endpoint and translation; the call
    // and its reply are the same.
    let (url, request, translate, whole): (_, _, sse::TranslateStream, sse::TranslateWhole) =
        match Publisher::of(&model.upstream) {
            Publisher::Google => {
                let images = gemini::fetch_images(fetcher, &body).await?;
                let request = gemini::to_generate_content(&body, &images)?;
                let action = if stream {
                    "streamGenerateContent"
                } else {
                    "generateContent"
                };
                let mut url = model_url(base, vertex, &model.upstream, action);
                if stream {
                    url.set_query(Some("alt=sse"));
                }
                (
                    url,
                    request,
                    gemini::translate_stream,
                    gemini::from_response,
                )
            }
            Publisher::Anthropic => {
                let mut request = anthropic::to_messages(&body, model.max_output_tokens, stream)?;
                if let Some(fields) = request.as_object_mut() {
                    fields.remove("model");
                    fields.insert("anthropic_version".into(), json!(ANTHROPIC_VERSION));
                }
                let action = if stream {
                    "streamRawPredict"
                } else {
                    "rawPredict"
                };
                let url = model_url(base, vertex, &model.upstream, action);
                (
                    url,
                    request,
                    anthropic::translate_stream,
                    anthropic::from_message,
                )
            }
        };
    let builder = post(client, provider, vertex, url).await?.json(&request);
    let sent = http::send(builder, provider, base).await?;
    sse::reply(sent, name, stream, translate, whole).await
}

/// Embeddings of a Vertex text-embedding model: one `:predict` call with
/// an instance per text, `dimensions` as `outputDimensionality`. Usage is
/// the sum of the predictions' `statistics.token_count` when every one has
/// it (else the pipeline bills its estimate).
pub async fn embed(
    client: &reqwest::Client,
    model: &Model,
    body: &Value,
) -> Result<Value, UpstreamError> {
    let provider = &model.provider;
    let (base, vertex) = settings(provider)?;
    if Publisher::of(&model.upstream) == Publisher::Anthropic {
        return Err(UpstreamError::new(
            Failure::Unsupported,
            "an Anthropic model on Vertex has no embeddings",
        ));
    }
    let url = model_url(base, vertex, &model.upstream, "predict");
    let request = post(client, provider, vertex, url)
        .await?
        .json(&to_predict(body));
    let sent = http::send(request, provider, base).await?;
    let answer = http::read_json(sent).await?;
    from_predict(&model.upstream, body, &answer)
}

/// The `:predict` request of an OpenAI embeddings request.
pub fn to_predict(body: &Value) -> Value {
    let instances: Vec<Value> = super::embeddings::texts(body)
        .into_iter()
        .map(|text| json!({ "content": text }))
        .collect();
    let mut request = json!({ "instances": instances });
    if let Some(d) = body["dimensions"].as_u64() {
        request["parameters"] = json!({ "outputDimensionality": d });
    }
    request
}

/// OpenAI's answer for a `:predict` answer, in the order sent.
pub fn from_predict(upstream: &str, body: &Value, answer: &Value) -> Result<Value, UpstreamError> {
    let sent = super::embeddings::texts(body).len();
    let predictions = super::embeddings::answered(answer, "predictions", sent, ":predict")?;
    let base64 = body["encoding_format"] == "base64";
    let mut data = Vec::with_capacity(sent);
    let mut tokens = Some(0u64);
    for (index, prediction) in predictions.iter().enumerate() {
        let embedding = &prediction["embeddings"];
        let values = super::embeddings::values(embedding, || {
            format!("prediction {index} has no numeric `embeddings.values`")
        })?;
        tokens = tokens
            .zip(embedding["statistics"]["token_count"].as_f64())
            .map(|(sum, n)| sum + n as u64);
        data.push(super::embeddings::entry(index, &values, base64));
    }
    let mut out = json!({ "object": "list", "data": data, "model": upstream });
    if let Some(tokens) = tokens.filter(|_| sent > 0) {
        out["usage"] = json!({ "prompt_tokens": tokens, "total_tokens": tokens });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_models_are_anthropic_and_the_rest_google() {
        assert_eq!(
            Publisher::of("claude-3-5-sonnet-v2@20241022"),
            Publisher::Anthropic
        );
        assert_eq!(Publisher::of("gemini-2.0-flash"), Publisher::Google);
        assert_eq!(Publisher::of("text-embedding-005"), Publisher::Google);
    }

    #[test]
    fn predictions_keep_the_order_and_sum_their_token_counts() {
        let body = json!({ "input": ["a", "b"], "dimensions": 2 });
        assert_eq!(
            to_predict(&body),
            json!({ "instances": [{ "content": "a" }, { "content": "b" }], "parameters": { "outputDimensionality": 2 } })
        );
        let answer = json!({ "predictions": [
            { "embeddings": { "values": [1.0, 0.0], "statistics": { "token_count": 3 } } },
            { "embeddings": { "values": [0.5, 0.25], "statistics": { "token_count": 4.0 } } }
        ] });
        let openai = from_predict("m", &body, &answer).unwrap();
        assert_eq!(openai["data"][1]["embedding"], json!([0.5, 0.25]));
        assert_eq!(openai["usage"]["prompt_tokens"], 7);
        let no_stats = json!({ "predictions": [
            { "embeddings": { "values": [1.0] } }, { "embeddings": { "values": [1.0] } }
        ] });
        assert!(
            from_predict("m", &body, &no_stats)
                .unwrap()
                .get("usage")
                .is_none()
        );
        assert!(from_predict("m", &body, &json!({ "predictions": [] })).is_err());
    }
}
