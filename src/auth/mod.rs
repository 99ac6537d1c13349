//! Identities and authentication: API keys for inference, dashboard
//! accounts with roles for `/api/v1`, and the sessions that carry them.
//!
//! Secrets are never stored: an API key or a session token is kept as its
//! SHA-256 digest (both carry 192 bits or more of randomness, so a fast
//! digest is enough), a password as an argon2id hash.

pub mod accounts;
pub mod error;
pub mod keys;
pub mod refusals;
pub mod sessions;
pub mod throttle;

pub use error::AuthError;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// `len` random bytes from the operating system, URL-safe base64 without
/// padding.
pub fn random_token(len: usize) -> String {
    let mut bytes = vec![0u8; len];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    URL_SAFE_NO_PAD.encode(bytes)
}

pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}
