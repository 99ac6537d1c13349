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
