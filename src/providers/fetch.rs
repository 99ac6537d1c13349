//! Fetching remote images for providers that need the bytes (Gemini).
//!
//! Only http(s); private, loopback and link-local targets refused unless
//! the operator allows them (the same rules as webhook URLs, checked on the
//! URL and again on every resolved address, see [`net_guard`]); no
//! redirects and no proxy; a size limit
//! and a timeout; and the answer's `Content-Type` must be an image type
//! the providers read. A refused fetch is the caller's mistake: a final
//! 400, no fallback.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::{Failure, UpstreamError};
use crate::base::net_guard;

/// The image types Gemini reads.
const IMAGE_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/heic",
    "image/heif",
    "image/gif",
];

#[derive(Clone)]
pub struct ImageFetcher {
    client: reqwest::Client,
    allow_private: bool,
    max_bytes: usize,
}

impl ImageFetcher {
    pub fn new(allow_private: bool, max_bytes: usize, timeout: Duration) -> ImageFetcher {
        let client = net_guard::direct_client(allow_private)
            .timeout(timeout)
            .build()
            .expect("building the image fetch client");
        ImageFetcher {
            client,
            allow_private,
            max_bytes,
        }
    }

    /// The image at `url` as (MIME type, base64).
    pub async fn fetch(&self, url: &str) -> Result<(String, String), UpstreamError> {
        let refuse = |why: String| UpstreamError::new(Failure::Status(400), why);
        let parsed = net_guard::check_url(url, self.allow_private)
            .map_err(|m| refuse(format!("image URL refused: {m}")))?;
        let response = self.client.get(parsed).send().await.map_err(|e| {
            if net_guard::is_blocked(&e) {
                refuse(format!(
                    "image URL refused: `{url}` resolves only to private addresses"
                ))
            } else if e.is_timeout() {
                refuse(format!("fetching the image `{url}` timed out"))
            } else {
                refuse(format!(
                    "fetching the image `{url}` failed: {}",
                    super::http::without_url(&e)
                ))
            }
        })?;
        if !response.status().is_success() {
            return Err(refuse(format!(
                "fetching the image `{url}` answered HTTP {}",
                response.status().as_u16()
            )));
        }
        let mime = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            })
            .unwrap_or_default();
        if !IMAGE_TYPES.contains(&mime.as_str()) {
            return Err(refuse(format!(
                "`{url}` is not an image the provider reads (Content-Type `{mime}`)"
            )));
        }
        if response
            .content_length()
            .is_some_and(|n| n > self.max_bytes as u64)
        {
            return Err(refuse(format!(
                "the image `{url}` exceeds {} bytes",
                self.max_bytes
            )));
        }
        let mut response = response;
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| {
            refuse(format!(
                "reading the image `{url}` failed: {}",
                super::http::without_url(&e)
            ))
        })? {
            if bytes.len() + chunk.len() > self.max_bytes {
                return Err(refuse(format!(
                    "the image `{url}` exceeds {} bytes",
                    self.max_bytes
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok((mime, STANDARD.encode(bytes)))
    }
}
