//! OAuth access tokens for Vertex AI.
//!
//! A Google service account signs its own grant: an RS256 JWT with
//! `iss` = the account's `client_email`, `scope` = cloud-platform, `aud` =
//! the file's `token_uri`, valid one hour, posted to `token_uri` with the
//! `jwt-bearer` grant type (RFC 7523). The answer's access token is cached
//! and refreshed five minutes before it expires. The cache is one mutex
//! held across the exchange, so a burst of requests on a cold or stale
//! cache makes one exchange, not one each (single flight). Operators who
//! mint tokens themselves name an environment variable instead; that token
//! is used as it is.
//!
//! Neither the private key nor a token ever reaches a message or a log:
//! the key is held only as a signing key, tokens as [`Secret`]s, and a
//! failed exchange reports the endpoint's error code alone.

use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::pkcs8::DecodePrivateKey;
use serde::Serialize;
use serde_json::Value;
use url::Url;

use super::key_file::KeyFileError;
use crate::base::secret::Secret;
use crate::base::time::now_ms;
use crate::providers::{Failure, UpstreamError, http};

/// The scope every Vertex AI call needs.
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// How long a signed grant is valid (Google accepts at most an hour).
const GRANT_LIFETIME_SECS: i64 = 3600;
/// A cached token is replaced this long before it expires.
pub const REFRESH_EARLY: Duration = Duration::from_secs(300);
/// A token endpoint answer larger than this is refused.
const MAX_TOKEN_ANSWER: usize = 64 * 1024;

/// A service account key file, validated: what signing a grant needs.
pub struct ServiceAccount {
    pub client_email: String,
    pub token_uri: Url,
    key_id: Option<String>,
    key: EncodingKey,
}

impl fmt::Debug for ServiceAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceAccount")
            .field("client_email", &self.client_email)
            .field("token_uri", &self.token_uri.as_str())
            .field("key", &"***")
            .finish()
    }
}

impl ServiceAccount {
    /// Reads and validates a key file. The message of a refusal names
    /// what is wrong, never the file's content.
    pub fn load(path: &Path) -> Result<ServiceAccount, KeyFileError> {
        let text = std::fs::read_to_string(path).map_err(|e| KeyFileError::Unreadable {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        ServiceAccount::parse(&text).map_err(|error| KeyFileError::InFile {
            path: path.to_owned(),
            error: Box::new(error),
        })
    }

    /// A service account from the JSON of its key file.
    pub fn parse(text: &str) -> Result<ServiceAccount, KeyFileError> {
        // Parsed as a Value first: a typed error could quote a field's
        // content, and one of them is the private key.
        let json: Value = serde_json::from_str(text).map_err(|e| KeyFileError::NotJson {
            line: e.line(),
            column: e.column(),
        })?;
        let field = |name: &'static str| {
            json[name]
                .as_str()
                .filter(|v| !v.trim().is_empty())
                .ok_or(KeyFileError::Missing(name))
        };
        if json["type"] != "service_account" {
            return Err(KeyFileError::NotServiceAccount);
        }
        let client_email = field("client_email")?.to_owned();
        let token_uri = field("token_uri")?;
        let token_uri = Url::parse(token_uri)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .ok_or(KeyFileError::BadTokenUri)?;
        let pem = field("private_key")?;
        let key = rsa::RsaPrivateKey::from_pkcs8_pem(pem)
            .or_else(|_| rsa::RsaPrivateKey::from_pkcs1_pem(pem))
            .map_err(|_| KeyFileError::BadPrivateKey)?;
        let der = key.to_pkcs1_der().map_err(|_| KeyFileError::Unencodable)?;
        Ok(ServiceAccount {
            client_email,
            token_uri,
            key_id: json["private_key_id"].as_str().map(str::to_owned),
            key: EncodingKey::from_rsa_der(der.as_bytes()),
        })
    }

    /// The signed grant (`assertion`) for `now` (Unix seconds).
    pub fn assertion(&self, now: i64) -> Result<String, KeyFileError> {
        #[derive(Serialize)]
        struct Claims<'a> {
            iss: &'a str,
            scope: &'a str,
            aud: &'a str,
            iat: i64,
            exp: i64,
        }
        let mut header = Header::new(Algorithm::RS256);
        header.kid = self.key_id.clone();
        let claims = Claims {
            iss: &self.client_email,
            scope: SCOPE,
            aud: self.token_uri.as_str(),
            iat: now,
            exp: now + GRANT_LIFETIME_SECS,
        };
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| KeyFileError::Signing(e.to_string()))
    }
}

/// Where a Vertex provider's access token comes from.
#[derive(Debug)]
pub enum Credentials {
    /// Exchanged from a service account's signed grant, cached.
    ServiceAccount(ServiceAccount),
    /// Read from the environment variable the provider names, at start
    /// (absent: no token is sent).
    Token(Option<Secret>),
}

struct Cached {
    token: Secret,
    /// When the token is replaced (five minutes before it expires).
    refresh_at: Instant,
    /// When the token stops working.
    expires_at: Instant,
}

/// A provider's access tokens: its credentials and the cached token.
pub struct TokenSource {
    credentials: Credentials,
    cache: tokio::sync::Mutex<Option<Cached>>,
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSource")
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

impl TokenSource {
    pub fn new(credentials: Credentials) -> TokenSource {
        TokenSource {
            credentials,
            cache: tokio::sync::Mutex::new(None),
        }
    }

    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// A token to send now: the cached one while it is fresh, else a new
    /// one (one exchange however many requests wait for it). When the
    /// exchange fails and the cached token still works, that one is used.
    pub async fn token(
        &self,
        client: &reqwest::Client,
        timeout: Duration,
    ) -> Result<Option<Secret>, UpstreamError> {
        let account = match &self.credentials {
            Credentials::Token(token) => return Ok(token.clone()),
            Credentials::ServiceAccount(account) => account,
        };
        let mut cache = self.cache.lock().await;
        let now = Instant::now();
        if let Some(cached) = cache.as_ref().filter(|c| now < c.refresh_at) {
            return Ok(Some(cached.token.clone()));
        }
        match exchange(client, account, timeout).await {
            Ok((token, lifetime)) => {
                let fetched = Instant::now();
                *cache = Some(Cached {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_key_file_is_refused_without_quoting_it() {
        let cases = [
            ("{", "not JSON"),
            (r#"{"type": "authorized_user"}"#, "`type`"),
            (
                r#"{"type": "service_account", "client_email": "a@b", "token_uri": "https://t/token"}"#,
                "`private_key` is missing",
            ),
            (
                r#"{"type": "service_account", "client_email": "a@b", "token_uri": "https://t/token", "private_key": "SECRETKEYMATERIAL"}"#,
                "not a PEM-encoded RSA private key",
            ),
            (
                r#"{"type": "service_account", "client_email": "a@b", "token_uri": "ftp://t", "private_key": "x"}"#,
                "`token_uri`",
            ),
        ];
        for (text, expected) in cases {
            let error = ServiceAccount::parse(text).unwrap_err().to_string();
            assert!(error.contains(expected), "{text}: {error}");
            assert!(!error.contains("SECRETKEYMATERIAL"), "{error}");
        }
    }
}
