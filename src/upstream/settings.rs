//! An upstream provider as the operator declared it (`[[providers]]`),
//! validated: where it lives, its key, its cloud settings, and the retry,
//! cooldown and time-budget policies routing applies to its deployments.
//! The configuration assembles these from the file and the environment
//! (src/config/providers.rs); the declarations of each key, with its
//! default and range, are in src/config/declared.rs.

use std::time::Duration;

use url::Url;

use super::ProviderKind;
use crate::base::secret::Secret;

/// An upstream provider.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// The name models refer to.
    pub id: String,
    pub kind: ProviderKind,
    /// Base URL of the provider's API; absent only for `mock`.
    pub base_url: Option<Url>,
    /// The environment variable holding the provider's API key.
    pub api_key_env: Option<String>,
    /// The key itself, read from that variable at start.
    pub api_key: Option<Secret>,
    /// What the cloud kinds (azure, vertex) need besides (docs/providers.md).
    pub cloud: super::Cloud,
    /// Per-attempt connect timeout.
    pub connect_timeout: Duration,
    /// Per-attempt time allowed until the first response byte.
    pub first_byte_timeout: Duration,
    /// Same-deployment retries and their backoff.
    pub retry: RetryPolicy,
    /// When a deployment of this provider is taken out of rotation.
    pub cooldown: CooldownPolicy,
    /// Time a request may spend on one of this provider's deployments,
    /// from its first attempt there, retries included (a model's own
    /// `request_timeout_ms` wins).
    pub request_timeout: Duration,
    /// The region and credentials of a `bedrock` provider (None for every
    /// other kind).
    pub bedrock: Option<BedrockSettings>,
    /// How `POST /v1/responses` reaches an `openai` provider (`responses`):
    /// forwarded to its `/responses`, or translated to chat completions.
    pub responses: ResponsesMode,
}

/// Where a `bedrock` provider signs for, and with what (docs/providers.md).
#[derive(Debug, Clone)]
pub struct BedrockSettings {
    /// The AWS region (`eu-central-1`): the signing scope and the default
    /// endpoint's host.
    pub region: String,
    /// The environment variables the credentials are read from.
    pub access_key_id_env: String,
    pub secret_access_key_env: String,
    pub session_token_env: String,
    /// The credentials, read from those variables at start (absent when
    /// the variable is unset or empty).
    pub access_key_id: Option<Secret>,
    pub secret_access_key: Option<Secret>,
    pub session_token: Option<Secret>,
}

/// How an `openai` provider serves the Responses API (docs/responses.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ResponsesMode {
    /// `POST {base_url}/responses`, the body forwarded as sent.
    #[default]
    Passthrough,
    /// Translated to `POST {base_url}/chat/completions`, for
    /// OpenAI-compatible servers without a Responses API.
    Translate,
}

/// Retries of one deployment after a retryable failure (docs/routing.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (`max_retries`, default 2).
    pub max_retries: u32,
    /// Base of the exponential backoff with full jitter (`retry_backoff_ms`).
    pub backoff_base: Duration,
    /// An upstream `Retry-After` up to this is waited out; a longer one
    /// moves on to the next deployment at once (`retry_after_cap_ms`).
    pub retry_after_cap: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_retries: 2,
            backoff_base: Duration::from_millis(200),
            retry_after_cap: Duration::from_millis(10_000),
        }
    }
}

/// When a failing deployment is rested (docs/routing.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CooldownPolicy {
    /// Consecutive retryable failures that start a cooldown
    /// (`cooldown_after_failures`, default 3).
    pub after_failures: u32,
    /// How long the deployment gets no traffic (`cooldown_seconds`).
    pub duration: Duration,
}

impl Default for CooldownPolicy {
    fn default() -> CooldownPolicy {
        CooldownPolicy {
            after_failures: 3,
            duration: Duration::from_secs(30),
        }
    }
}

/// The default of `request_timeout_ms`: two minutes of retries at most.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
