//! What one try of one deployment left behind: the [`Attempt`] the walk
//! records for every deployment it tried or skipped, and its closed
//! [`AttemptStatus`].
//!
//! The status's label is a wire string: the `status` of each
//! `providerAttempts` entry of the `fallback.triggered` and
//! `providers.exhausted` webhooks, the `status` label of the
//! `tollgate_upstream_requests` metric, the client span's `error.type`, and
//! the explanation and log lines. [`AttemptStatus::label`] is the only place
//! that spells them (the upstream failures' labels are
//! [`Failure::label`]'s, next to the failures themselves).

use std::borrow::Cow;
use std::fmt;

use serde::{Serialize, Serializer};

use crate::providers::Failure;

/// How one attempt ended, or why a model or deployment was not tried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptStatus {
    /// The deployment served: `ok`.
    Ok,
    /// The upstream call failed: `connect_error`, `timeout`, the HTTP status
    /// (`503`), `invalid_response`, `stream_cut` or `unsupported`.
    Failed(Failure),
    /// The chain named a model the catalogue does not have: `unknown_model`.
    UnknownModel,
    /// The model was at its own rpm/tpm limit: `model_rate_limited`.
    ModelRateLimited,
    /// The tenant routes only to registered sub-processors and this
    /// provider is not one: `not_in_registry`.
    NotInRegistry,
    /// The deployment is resting and another request holds its probe:
    /// `cooldown`.
    Cooldown,
    /// The deployment's provider cannot serve this route: `wrong_kind`.
    WrongKind,
    /// Token-array input to a provider that embeds text only: `token_input`.
    TokenInput,
    /// An image size the provider has no aspect ratio for:
    /// `unsupported_size`.
    UnsupportedSize,
}

impl AttemptStatus {
    /// The wire label (see the module header for where it goes).
    pub fn label(&self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            AttemptStatus::Ok => "ok",
            AttemptStatus::Failed(failure) => return failure.label(),
            AttemptStatus::UnknownModel => "unknown_model",
            AttemptStatus::ModelRateLimited => "model_rate_limited",
            AttemptStatus::NotInRegistry => "not_in_registry",
            AttemptStatus::Cooldown => "cooldown",
            AttemptStatus::WrongKind => "wrong_kind",
            AttemptStatus::TokenInput => "token_input",
            AttemptStatus::UnsupportedSize => "unsupported_size",
        })
    }

    /// Refused before any upstream was called (the model itself, not a
    /// deployment): nothing failed upstream.
    pub fn before_routing(&self) -> bool {
        match self {
            AttemptStatus::UnknownModel | AttemptStatus::ModelRateLimited => true,
            AttemptStatus::Ok
            | AttemptStatus::Failed(_)
            | AttemptStatus::NotInRegistry
            | AttemptStatus::Cooldown
            | AttemptStatus::WrongKind
            | AttemptStatus::TokenInput
            | AttemptStatus::UnsupportedSize => false,
        }
    }
}

impl fmt::Display for AttemptStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl Serialize for AttemptStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.label())
    }
}

/// One try of one deployment of one model of the chain (its retries
/// included: `status` is the last one's), or a model or deployment skipped
/// before any call.
#[derive(Debug, Clone, Serialize)]
pub struct Attempt {
    pub model: String,
    pub provider: String,
    /// `provider/upstream`; empty when no deployment was tried.
    pub deployment: String,
    pub status: AttemptStatus,
    #[serde(rename = "latencyMs")]
    pub latency_ms: u64,
    /// Retries of this deployment before it was given up.
    pub retries: u32,
    #[serde(skip)]
    pub message: String,
}

impl Attempt {
    /// A model of the chain refused before any deployment was chosen.
    pub fn of_model(model: &str, status: AttemptStatus, message: String) -> Attempt {
        Attempt {
            model: model.to_owned(),
            provider: String::new(),
            deployment: String::new(),
            status,
            latency_ms: 0,
            retries: 0,
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_keep_their_wire_labels() {
        let cases = [
            (AttemptStatus::Ok, "ok"),
            (AttemptStatus::Failed(Failure::Connect), "connect_error"),
            (AttemptStatus::Failed(Failure::Timeout), "timeout"),
            (AttemptStatus::Failed(Failure::Status(503)), "503"),
            (AttemptStatus::Failed(Failure::Garbage), "invalid_response"),
            (AttemptStatus::Failed(Failure::Cut), "stream_cut"),
            (AttemptStatus::Failed(Failure::Unsupported), "unsupported"),
            (AttemptStatus::UnknownModel, "unknown_model"),
            (AttemptStatus::ModelRateLimited, "model_rate_limited"),
            (AttemptStatus::NotInRegistry, "not_in_registry"),
            (AttemptStatus::Cooldown, "cooldown"),
            (AttemptStatus::WrongKind, "wrong_kind"),
            (AttemptStatus::TokenInput, "token_input"),
            (AttemptStatus::UnsupportedSize, "unsupported_size"),
        ];
        for (status, label) in cases {
            assert_eq!(status.label(), label);
            assert_eq!(status.to_string(), label);
            assert_eq!(serde_json::to_value(&status).unwrap(), label);
        }
    }
}
