//! OpenAI and every OpenAI-compatible server (vLLM, Ollama, Groq,
//! Together, Mistral, DeepSeek, OpenRouter...): `POST {base_url}/chat/completions`.
//!
//! The request is forwarded as prepared (the caller's unknown fields
//! included); the upstream's secret comes from the environment variable
//! the provider names. A streamed request asks for usage in the stream.

use serde_json::{Value, json};

use super::{Failure, Reply, UpstreamError, http, sse};
use crate::config::ProviderConfig;

pub async fn chat(
    http: &reqwest::Client,
    provider: &ProviderConfig,
    mut body: Value,
    stream: bool,
) -> Result<Reply, UpstreamError> {
    let base = provider
        .base_url
        .as_ref()
        .ok_or_else(|| UpstreamError::new(Failure::Unsupported, "the provider has no base_url"))?;
    let url = super::http::endpoint(base, &["chat", "completions"]);
    if stream {
        body["stream"] = json!(true);
    }
    let mut request = http.post(url).json(&body);
    if let Some(key) = &provider.api_key {
        request = request.bearer_auth(key.expose());
    }
    let sent = http::send(request, provider, base).await?;
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
