//! What every HTTP provider shares: endpoint URLs built from encoded path
//! segments, sending within the first-byte timeout, classifying failures,
//! reading bounded bodies, and error messages that never carry a URL (a
//! `?key=` must never reach a message or a log).

use std::time::{Duration, Instant};

use serde_json::Value;
use url::Url;

use super::{Failure, UpstreamError};
use crate::upstream::ProviderConfig;

pub use crate::base::redact::without_url;

/// Upstream error bodies are read up to this size for their message.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// A whole (non-streamed) answer above this size is refused.
const MAX_ANSWER: usize = 64 * 1024 * 1024;
/// A body has at least this long to arrive once the head has.
const MIN_BODY_TIME: Duration = Duration::from_secs(30);

/// A successful response, and when its body must have arrived by.
pub struct Sent {
    pub response: reqwest::Response,
    pub deadline: Instant,
}

/// The URL of an upstream endpoint: `base` with `segments` appended, each
/// one path segment whatever it holds. A model name is part of a segment
/// (Gemini's `{name}:generateContent`), and a `/`, `\`, `?`, `#` or `%` in
/// it must not reach another path segment, a query or a fragment: the
/// `url` crate percent-encodes each of them in a pushed segment.
pub fn endpoint(base: &Url, segments: &[&str]) -> Url {
    // A segment that is exactly `.` or `..` would be dropped (no URL can
    // carry it); no caller builds one, a name always comes with `:{action}`.
    debug_assert!(!segments.iter().any(|s| matches!(*s, "." | "..")));
    let mut url = base.clone();
    url.path_segments_mut()
        // Configuration loading accepts only http(s) URLs with a host.
        .expect("an http(s) base URL has path segments")
        .pop_if_empty()
        .extend(segments);
    url
}

/// The provider's `base_url`; a provider without one cannot serve an
/// HTTP call.
pub fn base_url(provider: &ProviderConfig) -> Result<&Url, UpstreamError> {
    provider
        .base_url
        .as_ref()
        .ok_or_else(|| UpstreamError::new(Failure::Unsupported, "the provider has no base_url"))
}

/// Sends `request` within the provider's first-byte timeout. A non-2xx
/// answer is an [`UpstreamError`] with the upstream's own message.
pub async fn send(
    request: reqwest::RequestBuilder,
    provider: &ProviderConfig,
    base: &Url,
) -> Result<Sent, UpstreamError> {
    let deadline = Instant::now() + provider.first_byte_timeout;
    // The attempt's client span continues upstream (W3C trace context).
    let request = match crate::traces::traceparent() {
        Some(value) => request.header("traceparent", value),
        None => request,
    };
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
        let retry_after = retry_after(response.headers());
        let text = read_limited(response, MAX_ERROR_BODY, deadline)
            .await
            .unwrap_or_default();
        let message = if status.is_redirection() {
            // The provider client follows no redirect; its target (a URL)
            // stays out of the message.
            format!(
                "the upstream answered a redirect (HTTP {}), which is not followed: check the provider's base_url",
                status.as_u16()
            )
        } else {
            error_message(&text, status.as_u16())
        };
        let mut error = UpstreamError::new(Failure::Status(status.as_u16()), message);
        error.retry_after = retry_after;
        error.content_filter = is_content_filter(&text);
        return Err(error);
    }
    Ok(Sent { response, deadline })
}

/// The wait an upstream asked for: `retry-after-ms` (OpenAI, Azure), else
/// `Retry-After` in whole seconds. An HTTP date is not honoured (no
/// provider we speak sends one); nonsense is ignored.
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms.min(86_400_000.0) / 1000.0));
    }
    header("retry-after")
        .and_then(|v| v.parse::<u64>().ok())
        .map(|s| Duration::from_secs(s.min(86_400)))
}

/// The whole body of a successful answer, as JSON.
pub async fn read_json(sent: Sent) -> Result<Value, UpstreamError> {
    let bytes = read_limited(sent.response, MAX_ANSWER, sent.deadline)
        .await
        .map_err(|e| UpstreamError::new(Failure::Garbage, e))?;
    serde_json::from_str(&bytes)
        .map_err(|_| UpstreamError::new(Failure::Garbage, "the answer is not JSON"))
}

/// The message of an error body (OpenAI, Anthropic and Google put it at
/// `error.message`), else the start of the text.
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

/// Whether an error body is a content filter's refusal: Azure OpenAI's
/// `error.code` `content_filter`, or its inner `ResponsibleAIPolicyViolation`.
fn is_content_filter(text: &str) -> bool {
    let Ok(body) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    let error = &body["error"];
    error["code"] == "content_filter"
        || error["innererror"]["code"] == "ResponsibleAIPolicyViolation"
}

async fn read_limited(
    mut response: reqwest::Response,
    limit: usize,
    deadline: Instant,
) -> Result<String, String> {
    // One deadline for the whole body (never reset by a chunk: a body
    // trickling a byte at a time must end too), at least 30 s away.
    let end = deadline.max(Instant::now() + MIN_BODY_TIME);
    let mut body = Vec::new();
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, response.chunk()).await {
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

/// The whole body of a successful answer, as text (a transcript in
/// `text`, `srt` or `vtt`).
pub async fn read_text(sent: Sent) -> Result<String, UpstreamError> {
    read_limited(sent.response, MAX_ANSWER, sent.deadline)
        .await
        .map_err(|e| UpstreamError::new(Failure::Garbage, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_keeps_each_segment_one_segment() {
        let base = Url::parse("https://generativelanguage.googleapis.com/v1beta/").unwrap();
        let cases = [
            (
                "gemini-ok:generateContent",
                "/v1beta/models/gemini-ok:generateContent",
            ),
            (
                "x/../../other:generateContent",
                "/v1beta/models/x%2F..%2F..%2Fother:generateContent",
            ),
            (
                "x\\..\\y:generateContent",
                "/v1beta/models/x%5C..%5Cy:generateContent",
            ),
            (
                "a?key=1#f:generateContent",
                "/v1beta/models/a%3Fkey=1%23f:generateContent",
            ),
            ("a%2F..%2Fb", "/v1beta/models/a%252F..%252Fb"),
            ("..:generateContent", "/v1beta/models/..:generateContent"),
            // URL parsing drops tabs and newlines (one more reason such
            // names are refused where they are written).
            ("a b\n", "/v1beta/models/a%20b"),
        ];
        for (name, path) in cases {
            let url = endpoint(&base, &["models", name]);
            assert_eq!(url.path(), path, "{name:?}");
            assert_eq!(url.query(), None, "{name:?}");
            assert_eq!(url.fragment(), None, "{name:?}");
            assert_eq!(url.host_str(), base.host_str());
        }
        let bare = Url::parse("http://127.0.0.1:8000").unwrap();
        assert_eq!(
            endpoint(&bare, &["chat", "completions"]).as_str(),
            "http://127.0.0.1:8000/chat/completions"
        );
    }
}
