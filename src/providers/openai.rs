//! OpenAI and every OpenAI-compatible server (vLLM, Ollama, Groq,
//! Together, Mistral, DeepSeek, OpenRouter...): `POST {base_url}/chat/completions`.
//!
//! The request is forwarded as prepared (the caller's unknown fields
//! included); the upstream's secret comes from the environment variable
//! the provider names. A streamed request asks for usage in the stream.

use std::time::Instant;

use serde_json::{Value, json};

use super::{Failure, Reply, UpstreamError, sse};
use crate::config::ProviderConfig;

/// Upstream error bodies are read up to this size for their message.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// A whole (non-streamed) completion above this size is refused.
const MAX_COMPLETION: usize = 64 * 1024 * 1024;

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
    let url = format!("{}/chat/completions", base.as_str().trim_end_matches('/'));
    if stream {
        body["stream"] = json!(true);
    }
    let mut request = http.post(&url).json(&body);
    if let Some(key) = &provider.api_key {
        request = request.bearer_auth(key.expose());
    }
    let deadline = Instant::now() + provider.first_byte_timeout;
    let response = match tokio::time::timeout(provider.first_byte_timeout, request.send()).await {
        Err(_) => {
            return Err(UpstreamError::new(
                Failure::Timeout,
                "no response before the first-byte timeout",
            ));
        }
        Ok(Err(e)) if e.is_connect() => {
            return Err(UpstreamError::new(
                Failure::Connect,
                format!("cannot connect to {}", base.host_str().unwrap_or("?")),
            ));
        }
        Ok(Err(e)) if e.is_timeout() => {
            return Err(UpstreamError::new(
                Failure::Timeout,
                "the request timed out",
            ));
        }
        Ok(Err(e)) => {
            return Err(UpstreamError::new(
                Failure::Connect,
                format!("the request failed: {}", without_url(&e)),
            ));
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if !status.is_success() {
        let text = read_limited(response, MAX_ERROR_BODY, deadline)
            .await
            .unwrap_or_default();
        return Err(UpstreamError::new(
            Failure::Status(status.as_u16()),
            error_message(&text, status.as_u16()),
        ));
    }
    if stream {
        return Ok(Reply::Stream(sse::chunks(response.bytes_stream())));
    }
    let bytes = read_limited(response, MAX_COMPLETION, deadline)
        .await
        .map_err(|e| UpstreamError::new(Failure::Garbage, e))?;
    let completion: Value = serde_json::from_str(&bytes)
        .map_err(|_| UpstreamError::new(Failure::Garbage, "the completion is not JSON"))?;
    if !completion.get("choices").is_some_and(Value::is_array) {
        return Err(UpstreamError::new(
            Failure::Garbage,
            "the completion has no `choices` array",
        ));
    }
    Ok(Reply::Complete(completion))
}

/// The message of an OpenAI-shaped error body, else the start of the text.
fn error_message(text: &str, status: u16) -> String {
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    let message = parsed
        .as_ref()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or_else(|| v["message"].as_str())
                .or_else(|| v["error"].as_str())
        })
        .map(str::to_owned)
        .unwrap_or_else(|| text.chars().take(300).collect());
    if message.trim().is_empty() {
        format!("HTTP {status}")
    } else {
        message
    }
}

async fn read_limited(
    mut response: reqwest::Response,
    limit: usize,
    deadline: Instant,
) -> Result<String, String> {
    let mut body = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(
            left.max(std::time::Duration::from_secs(30)),
            response.chunk(),
        )
        .await
        {
            Err(_) => return Err("the body did not arrive in time".into()),
            Ok(Err(e)) => return Err(format!("the body broke off: {}", without_url(&e))),
            Ok(Ok(None)) => break,
            Ok(Ok(Some(chunk))) => {
                if body.len() + chunk.len() > limit {
                    return Err(format!("the body exceeds {limit} bytes"));
                }
                body.extend_from_slice(&chunk);
            }
        }
    }
    String::from_utf8(body).map_err(|_| "the body is not UTF-8".into())
}

/// reqwest errors print the URL; a `?key=` must never reach a message.
fn without_url(e: &reqwest::Error) -> String {
    let mut e = e.to_string();
    if let Some(i) = e.find(" for url") {
        e.truncate(i);
    }
    e
}
