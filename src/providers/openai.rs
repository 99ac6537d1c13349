//! OpenAI and every OpenAI-compatible server (vLLM, Ollama, Groq,
//! Together, Mistral, DeepSeek, OpenRouter...): `POST {base_url}/chat/completions`.
//! Azure OpenAI speaks the same wire at another URL ([`super::azure`]).
//!
//! The request is forwarded as prepared (the caller's unknown fields
//! included); the upstream's secret comes from the environment variable
//! the provider names. A streamed request asks for usage in the stream.

use serde_json::{Value, json};
use url::Url;

use super::{Failure, Reply, UpstreamError, http, sse};
use crate::catalogue::{Model, ProviderKind};

/// A POST to the OpenAI endpoint `path` (`["chat", "completions"]`) of
/// `model`'s provider, with its key: at `{base_url}/{path}` with a bearer
/// token, or for Azure at the deployment's URL with `api-key`.
pub fn post<'a>(
    client: &reqwest::Client,
    model: &'a Model,
    path: &[&str],
) -> Result<(reqwest::RequestBuilder, &'a Url), UpstreamError> {
    let provider = &model.provider;
    if provider.kind == ProviderKind::Azure {
        return super::azure::post(client, provider, &model.upstream, path);
    }
    let base = http::base_url(provider)?;
    let mut request = client.post(http::endpoint(base, path));
    if let Some(key) = &provider.api_key {
        request = request.bearer_auth(key.expose());
    }
    Ok((request, base))
}

pub async fn chat(
    client: &reqwest::Client,
    model: &Model,
    mut body: Value,
    stream: bool,
) -> Result<Reply, UpstreamError> {
    if stream {
        body["stream"] = json!(true);
    }
    let (request, base) = post(client, model, &["chat", "completions"])?;
    let sent = http::send(request.json(&body), &model.provider, base).await?;
    if stream {
        return Ok(Reply::Stream(sse::chunks(sent.response.bytes_stream())));
    }
    let completion = http::read_json(sent).await?;
    if !completion.get("choices").is_some_and(Value::is_array) {
        return Err(UpstreamError::new(
            Failure::Garbage,
            "the completion has no `choices` array",
        ));
    }
    Ok(Reply::Complete(completion))
}
