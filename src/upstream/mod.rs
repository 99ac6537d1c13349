//! Who we call: the upstream provider kinds, each provider's settings as
//! the operator declared them (address, key, retry, cooldown and time
//! budget policies), and the cloud kinds' settings and credentials
//! (Azure's API version; Vertex's project, location, service account and
//! the slot its access token is cached in).
//!
//! Data only: nothing here speaks to a provider. The catalogue points its
//! deployments at these settings; `providers` speaks each kind's wire
//! format with them (and fetches Vertex's tokens); the configuration
//! builds them.

pub mod cloud;
pub mod key_file;
pub mod settings;
pub mod vertex;

use serde::{Deserialize, Serialize};

pub use cloud::Cloud;
pub use settings::{
    BedrockSettings, CooldownPolicy, DEFAULT_REQUEST_TIMEOUT, ProviderConfig, ResponsesMode,
    RetryPolicy,
};
pub use vertex::Vertex;

/// The wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI and every OpenAI-compatible server (vLLM, Ollama, Groq...).
    Openai,
    Anthropic,
    Gemini,
    /// AWS Bedrock's Converse API, signed with SigV4.
    Bedrock,
    /// Azure OpenAI: the OpenAI wire at a deployment's URL, `api-key`
    /// header, `api-version` query (docs/providers.md).
    Azure,
    /// Google Vertex AI: Gemini and Anthropic models with an OAuth access
    /// token from a service account (docs/providers.md).
    Vertex,
    /// The built-in deterministic provider: no network, for demos and tests.
    Mock,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Bedrock => "bedrock",
            ProviderKind::Azure => "azure",
            ProviderKind::Vertex => "vertex",
            ProviderKind::Mock => "mock",
        }
    }

    /// Whether a `base_url` is required to reach this kind of provider
    /// (Bedrock's defaults to its region's endpoint, Vertex's to its
    /// location's).
    pub fn needs_base_url(self) -> bool {
        !matches!(
            self,
            ProviderKind::Mock | ProviderKind::Bedrock | ProviderKind::Vertex
        )
    }
}
