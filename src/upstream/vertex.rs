//! A Vertex AI provider's settings and credentials, as data: its project
//! and location, the service account (or the environment's token) it
//! authenticates with, and the slot its access token is cached in.
//!
//! A Google service account signs its own grant: an RS256 JWT with
//! `iss` = the account's `client_email`, `scope` = cloud-platform, `aud` =
//! the file's `token_uri`, valid one hour (RFC 7523). Signing it is pure
//! and lives here; exchanging it for an access token, and the cache's
//! single flight and refresh, are network work and live in
//! `providers::vertex::token`, which fills [`TokenSource::cache`].
//!
//! The private key never reaches a message or a log: it is held only as a
//! signing key, tokens as [`Secret`]s, and a refusal of a key file names
//! what is wrong, never the file's content.

use std::fmt;
use std::path::Path;
use std::time::Instant;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::pkcs8::DecodePrivateKey;
use serde::Serialize;
use serde_json::Value;
use url::Url;

use crate::base::secret::Secret;
use crate::upstream::key_file::KeyFileError;

/// The scope every Vertex AI call needs.
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// How long a signed grant is valid (Google accepts at most an hour).
const GRANT_LIFETIME_SECS: i64 = 3600;

/// A Vertex provider's settings, validated.
pub struct Vertex {
    pub project: String,
    pub location: String,
    pub tokens: TokenSource,
}

impl fmt::Debug for Vertex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vertex")
            .field("project", &self.project)
            .field("location", &self.location)
            .field("tokens", &self.tokens)
            .finish()
    }
}

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

/// An access token in the cache, and when it is due.
pub struct CachedToken {
    pub token: Secret,
    /// When the token is replaced (five minutes before it expires).
    pub refresh_at: Instant,
    /// When the token stops working.
    pub expires_at: Instant,
}

/// A provider's access tokens: its credentials and the cached token.
/// Getting a token (the exchange, the refresh) is
/// `providers::vertex::token::token`.
pub struct TokenSource {
    credentials: Credentials,
    cache: tokio::sync::Mutex<Option<CachedToken>>,
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

    /// The cached token. One mutex, held across an exchange, so that a
    /// burst of requests on a cold or stale cache makes one exchange.
    pub fn cache(&self) -> &tokio::sync::Mutex<Option<CachedToken>> {
        &self.cache
    }
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
