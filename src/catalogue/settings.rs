//! A catalogue model as the operator declared it (`[[models]]`), or as
//! the dashboard stored it: its deployments, strategy and limits. The
//! configuration assembles these from the file (src/config/models.rs);
//! the catalogue resolves them against their providers.

use std::time::Duration;

use super::{Capability, Pricing, Strategy};

/// One place a model is served from: a provider and its name for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeploymentConfig {
    pub provider: String,
    pub upstream: String,
    /// Share of traffic under the `weighted` strategy (1 or more).
    pub weight: u32,
}

/// How a model's requests are spread and limited beyond its first
/// deployment. The dashboard's model API edits all of it but
/// `request_timeout` (file only, kept across a dashboard edit); once a
/// configuration entry is edited there, its stored routing wins over the
/// file's.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelRouting {
    /// The weight of the first deployment (`provider` + `upstream`).
    pub primary_weight: u32,
    /// The deployments after the first, in file order.
    pub more: Vec<DeploymentConfig>,
    pub strategy: Strategy,
    /// A budget for all the model's deployments together, from its first
    /// attempt; replaces the providers' `request_timeout_ms`.
    pub request_timeout: Option<Duration>,
    /// Requests per minute across all keys (`rpm_limit`).
    pub rpm_limit: Option<u32>,
    /// Tokens per minute across all keys (`tpm_limit`).
    pub tpm_limit: Option<u64>,
}

/// A catalogue model as configured.
#[derive(Debug, Clone)]
pub struct ModelConfig {
    pub id: String,
    pub provider: String,
    /// The provider's name for the model, sent in the request body or (for
    /// Gemini) as one URL path segment; see `catalogue::upstream_name`.
    pub upstream: String,
    pub input: Vec<Capability>,
    pub output: Vec<Capability>,
    pub context_window: u32,
    pub max_output_tokens: Option<u32>,
    pub pricing: Pricing,
    /// Further deployments, strategy and limits.
    pub routing: ModelRouting,
}

impl ModelConfig {
    /// Every deployment, the first (`provider` + `upstream`) first.
    pub fn deployments(&self) -> Vec<DeploymentConfig> {
        let first = DeploymentConfig {
            provider: self.provider.clone(),
            upstream: self.upstream.clone(),
            weight: self.routing.primary_weight.max(1),
        };
        std::iter::once(first)
            .chain(self.routing.more.iter().cloned())
            .collect()
    }
}
