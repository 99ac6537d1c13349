//! A listed catalogue entry and its dashboard view.

use serde_json::{Value, json};

use crate::catalogue::settings::ModelConfig;

/// Where an entry was first defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Config,
    Dashboard,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Config => "config",
            Source::Dashboard => "dashboard",
        }
    }
}

/// One listed entry: its definition, whether it is served, its origin.
#[derive(Debug, Clone)]
pub struct Entry {
    pub model: ModelConfig,
    pub enabled: bool,
    pub source: Source,
}

impl Entry {
    pub fn view(&self) -> Value {
        let m = &self.model;
        json!({
            "id": m.id,
            "provider": m.provider,
            "upstream": m.upstream,
            "deployments": m.deployments().iter().map(|d| json!({
                "provider": d.provider,
                "upstream": d.upstream,
                "weight": d.weight,
            })).collect::<Vec<_>>(),
            "strategy": m.routing.strategy.as_str(),
            "rpmLimit": m.routing.rpm_limit,
            "tpmLimit": m.routing.tpm_limit,
            "inputCapabilities": m.input,
            "outputCapabilities": m.output,
            "contextWindow": m.context_window,
            "maxOutputTokens": m.max_output_tokens,
            "pricing": m.pricing.view(),
            "enabled": self.enabled,
            "source": self.source.as_str(),
        })
    }
}
