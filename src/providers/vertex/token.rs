//! OAuth access tokens for Vertex AI: getting them.
//!
//! The credentials and the cache slot are data, in
//! [`crate::upstream::vertex`] (with the signing of a service account's
//! grant). Here the signed grant is posted to the account's `token_uri`
//! with the `jwt-bearer` grant type (RFC 7523). The answer's access token
//! is cached and refreshed five minutes before it expires. The cache is
//! one mutex held across the exchange, so a burst of requests on a cold
//! or stale cache makes one exchange, not one each (single flight). Operators who
//! mint tokens themselves name an environment variable instead; that token
//! is used as it is.
//!
//! A token never reaches a message or a log: tokens are [`Secret`]s, and a
//! failed exchange reports the endpoint's error code alone.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::base::secret::Secret;
use crate::base::time::now_ms;
use crate::providers::{Failure, UpstreamError, http};
use crate::upstream::vertex::{CachedToken, Credentials, ServiceAccount, TokenSource};

/// A cached token is replaced this long before it expires.
pub const REFRESH_EARLY: Duration = Duration::from_secs(300);
/// A token endpoint answer larger than this is refused.
const MAX_TOKEN_ANSWER: usize = 64 * 1024;

/// A token to send now: the cached one while it is fresh, else a new
/// one (one exchange however many requests wait for it). When the
/// exchange fails and the cached token still works, that one is used.
pub async fn token(
    source: &TokenSource,
    client: &reqwest::Client,
    timeout: Duration,
) -> Result<Option<Secret>, UpstreamError> {
    let account = match source.credentials() {
        Credentials::Token(token) => return Ok(token.clone()),
        Credentials::ServiceAccount(account) => account,
    };
    let mut cache = source.cache().lock().await;
    let now = Instant::now();
    if let Some(cached) = cache.as_ref().filter(|c| now < c.refresh_at) {
        return Ok(Some(cached.token.clone()));
    }
    match exchange(client, account, timeout).await {
        Ok((token, lifetime)) => {
            let fetched = Instant::now();
            *cache = Some(CachedToken {
                token: token.clone(),
                refresh_at: fetched + lifetime.saturating_sub(REFRESH_EARLY),
                expires_at: fetched + lifetime,
            });
            Ok(Some(token))
        }
        Err(error) => match cache.as_ref() {
            // A minute of margin: the request still has to arrive.
            Some(cached) if Instant::now() + Duration::from_secs(60) < cached.expires_at => {
                tracing::warn!(error = %error.message, "refreshing the Vertex access token failed; the cached one is still valid");
                Ok(Some(cached.token.clone()))
            }
            _ => Err(error),
        },
    }
}

/// One jwt-bearer exchange at the account's `token_uri`: the token and
/// its lifetime.
async fn exchange(
    client: &reqwest::Client,
    account: &ServiceAccount,
    timeout: Duration,
) -> Result<(Secret, Duration), UpstreamError> {
    let failed = |failure: Failure, why: String| {
        UpstreamError::new(failure, format!("the Vertex token exchange failed: {why}"))
    };
    let assertion = account
        .assertion(now_ms() / 1000)
        .map_err(|e| failed(Failure::Unsupported, e.to_string()))?;
    let form = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer")
        .append_pair("assertion", &assertion)
        .finish();
    let request = client
        .post(account.token_uri.clone())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form);
    let response = match tokio::time::timeout(timeout, request.send()).await {
        Err(_) => return Err(failed(Failure::Timeout, "no answer in time".into())),
        Ok(Err(e)) if e.is_connect() => {
            return Err(failed(
                Failure::Connect,
                format!(
                    "cannot connect to {}",
                    account.token_uri.host_str().unwrap_or("?")
                ),
            ));
        }
        Ok(Err(e)) => return Err(failed(Failure::Connect, http::without_url(&e))),
        Ok(Ok(response)) => response,
    };
    let status = response.status().as_u16();
    // The body gets as long as the head had: the cache waits on it.
    let body = tokio::time::timeout(timeout, read_small(response))
        .await
        .map_err(|_| failed(Failure::Timeout, "the answer did not arrive in time".into()))?;
    let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        // Google answers `{"error": "invalid_grant", "error_description":
        // ...}`; the code is enough and carries nothing secret.
        let code = answer["error"].as_str().unwrap_or("no error code");
        // A refused grant is this provider's credential problem, not the
        // caller's request: 401, so the walk may fall back.
        let failure = match status {
            429 | 500..=599 => Failure::Status(status),
            _ => Failure::Status(401),
        };
        return Err(failed(failure, format!("HTTP {status} ({code})")));
    }
    let token = answer["access_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| failed(Failure::Garbage, "the answer has no `access_token`".into()))?;
    let lifetime = answer["expires_in"].as_u64().unwrap_or(3600);
    Ok((
        Secret::new(token.to_owned()),
        Duration::from_secs(lifetime.min(86_400)),
    ))
}

async fn read_small(mut response: reqwest::Response) -> Vec<u8> {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        if body.len() + chunk.len() > MAX_TOKEN_ANSWER {
            break;
        }
        body.extend_from_slice(&chunk);
    }
    body
}
