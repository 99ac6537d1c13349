//! A refusal of the configuration. Every part that reads its own settings
//! (the `[sso]` table, a provider's cloud fields) refuses with it, so every
//! refusal reads the same: where the value came from, the key, what is
//! wrong.

use std::fmt;

/// A refusal of the configuration: where, which key, what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// `FILE:LINE`, `environment VAR`, or `flag --name`.
    pub origin: String,
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.origin, self.message)
        } else {
            write!(f, "{}: `{}`: {}", self.origin, self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}
