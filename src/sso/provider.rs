//! The gateway's side of the conversation with the OpenID provider: the
//! discovery document, the JWKS, and the code exchange at the token
//! endpoint. Discovery and keys are fetched at the first sign-in, not at
//! start, so a provider that is down never keeps the gateway from serving;
//! the keys are fetched again when a token names a key the cached set
//! lacks (the provider rotated its keys).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use jsonwebtoken::jwk::JwkSet;
use serde::Deserialize;
use url::Url;

use super::config::SsoConfig;

/// Time allowed to each request to the provider.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest document read from the provider.
const MAX_DOCUMENT_BYTES: usize = 1 << 20;

#[derive(Debug, Clone)]
pub struct Discovery {
    pub authorization_endpoint: Url,
    pub token_endpoint: Url,
    pub jwks_uri: Url,
}

#[derive(Deserialize)]
struct RawDiscovery {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
}

/// Why talking to the provider failed; logged, never shown in full.
#[derive(Debug)]
pub struct ProviderError(pub String);

impl std::fmt::Display for ProviderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub struct Provider {
    config: Arc<SsoConfig>,
    http: reqwest::Client,
    discovery: Mutex<Option<Arc<Discovery>>>,
    keys: Mutex<Option<Arc<JwkSet>>>,
}

impl Provider {
    pub fn new(config: Arc<SsoConfig>) -> Provider {
        let http = reqwest::Client::builder()
            .timeout(PROVIDER_TIMEOUT)
            // The provider's endpoints are fixed by its discovery document;
            // a redirect elsewhere is not followed.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("building the provider's HTTP client");
        Provider {
            config,
            http,
            discovery: Mutex::new(None),
            keys: Mutex::new(None),
        }
    }

    async fn get_json<T: for<'de> Deserialize<'de>>(&self, url: &str) -> Result<T, ProviderError> {
        let response = self
            .http
            .get(url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| ProviderError(format!("GET {url}: {e}")))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| ProviderError(format!("GET {url}: {e}")))?;
        if !status.is_success() || bytes.len() > MAX_DOCUMENT_BYTES {
            return Err(ProviderError(format!(
                "GET {url}: status {status}, {} bytes",
                bytes.len()
            )));
        }
        serde_json::from_slice(&bytes).map_err(|e| ProviderError(format!("GET {url}: {e}")))
    }

    /// The discovery document, fetched once and kept.
    pub async fn discovery(&self) -> Result<Arc<Discovery>, ProviderError> {
        if let Some(found) = self.discovery.lock().expect("discovery lock").clone() {
            return Ok(found);
        }
        let url = self.config.discovery_url();
        let raw: RawDiscovery = self.get_json(&url).await?;
        // OpenID Connect Discovery 4.3: the document's issuer is the one
        // configured, exactly.
        if raw.issuer != self.config.issuer {
            return Err(ProviderError(format!(
                "the discovery document names the issuer `{}`, not the configured `{}`",
                raw.issuer, self.config.issuer
            )));
        }
        let endpoint = |text: &str| {
            Url::parse(text).map_err(|e| ProviderError(format!("endpoint `{text}` in {url}: {e}")))
        };
        let found = Arc::new(Discovery {
            authorization_endpoint: endpoint(&raw.authorization_endpoint)?,
            token_endpoint: endpoint(&raw.token_endpoint)?,
            jwks_uri: endpoint(&raw.jwks_uri)?,
        });
        *self.discovery.lock().expect("discovery lock") = Some(found.clone());
        Ok(found)
    }

    /// The provider's signing keys: the cached set, or a fresh one when
    /// `refresh` (a token named a key the cached set lacks). Tokens only
    /// ever arrive from the token endpoint, so an outsider cannot make the
    /// gateway fetch the keys at will.
    pub async fn keys(&self, refresh: bool) -> Result<Arc<JwkSet>, ProviderError> {
        if !refresh && let Some(found) = self.keys.lock().expect("keys lock").clone() {
            return Ok(found);
        }
        let discovery = self.discovery().await?;
        let set: JwkSet = self.get_json(discovery.jwks_uri.as_str()).await?;
        let set = Arc::new(set);
        *self.keys.lock().expect("keys lock") = Some(set.clone());
        Ok(set)
    }

    /// Exchanges an authorization code for the ID token (RFC 6749 4.1.3
    /// with the PKCE verifier; the client authenticates with HTTP Basic,
    /// id and secret form-encoded first, as RFC 6749 2.3.1 asks).
    pub async fn redeem(&self, code: &str, verifier: &str) -> Result<String, ProviderError> {
        let discovery = self.discovery().await?;
        let encode =
            |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let basic = STANDARD.encode(format!(
            "{}:{}",
            encode(&self.config.client_id),
            encode(self.config.client_secret.expose())
        ));
        let form = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "authorization_code")
            .append_pair("code", code)
            .append_pair("redirect_uri", self.config.redirect_url.as_str())
            .append_pair("code_verifier", verifier)
            .finish();
        let response = self
            .http
            .post(discovery.token_endpoint.clone())
            .header("authorization", format!("Basic {basic}"))
            .header("accept", "application/json")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .map_err(|e| ProviderError(format!("the token endpoint: {e}")))?;
        let status = response.status();
        let body: serde_json::Value = response
            .json()
            .await
            .map_err(|e| ProviderError(format!("the token endpoint's answer ({status}): {e}")))?;
        if !status.is_success() {
            // The provider's error code only: its description may echo
            // what was sent.
            return Err(ProviderError(format!(
                "the token endpoint answered {status} `{}`",
                body["error"].as_str().unwrap_or("?")
            )));
        }
        body["id_token"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| ProviderError("the token endpoint's answer has no id_token".into()))
    }
}
