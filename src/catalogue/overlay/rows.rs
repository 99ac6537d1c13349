//! The rows of `model_overrides` in the store's layout, and their
//! conversions to and from the configuration's types.

use serde::{Deserialize, Serialize};

use crate::base::time::now_ms;
use crate::catalogue::settings::{DeploymentConfig, ModelConfig, ModelRouting};
use crate::catalogue::{Capability, Pricing, Strategy};
use crate::store::Table;
use crate::store::tables::MODEL_OVERRIDES;

pub const OVERRIDE_TABLE: Table<Row> = Table::new(MODEL_OVERRIDES);

/// A stored row of `model_overrides`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Row {
    Defined(StoredModel),
    /// A configuration entry deleted from the dashboard.
    Removed {
        id: String,
        at: i64,
    },
    /// A full definition with its routing (written since schema 5; a
    /// `Defined` row keeps the file's routing, or has one deployment).
    Routed(StoredModel, StoredRouting),
}

/// [`ModelRouting`] in the store's layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRouting {
    pub primary_weight: u32,
    /// (provider, upstream, weight) of the deployments after the first.
    pub more: Vec<(String, String, u32)>,
    pub strategy: Strategy,
    pub request_timeout_ms: Option<u64>,
    pub rpm_limit: Option<u32>,
    pub tpm_limit: Option<u64>,
}

impl From<&ModelRouting> for StoredRouting {
    fn from(r: &ModelRouting) -> Self {
        StoredRouting {
            primary_weight: r.primary_weight,
            more: r
                .more
                .iter()
                .map(|d| (d.provider.clone(), d.upstream.clone(), d.weight))
                .collect(),
            strategy: r.strategy,
            request_timeout_ms: r.request_timeout.map(|t| t.as_millis() as u64),
            rpm_limit: r.rpm_limit,
            tpm_limit: r.tpm_limit,
        }
    }
}

impl From<&StoredRouting> for ModelRouting {
    fn from(r: &StoredRouting) -> Self {
        ModelRouting {
            primary_weight: r.primary_weight,
            more: r
                .more
                .iter()
                .map(|(provider, upstream, weight)| DeploymentConfig {
                    provider: provider.clone(),
                    upstream: upstream.clone(),
                    weight: *weight,
                })
                .collect(),
            strategy: r.strategy,
            request_timeout: r.request_timeout_ms.map(std::time::Duration::from_millis),
            rpm_limit: r.rpm_limit,
            tpm_limit: r.tpm_limit,
        }
    }
}

impl Row {
    pub(super) fn id(&self) -> &str {
        match self {
            Row::Defined(m) | Row::Routed(m, _) => &m.id,
            Row::Removed { id, .. } => id,
        }
    }

    /// A stored definition and its routing, if any (`None` for a
    /// `Defined` row: the file's routing, or one deployment).
    pub(super) fn defined(&self) -> Option<(&StoredModel, Option<&StoredRouting>)> {
        match self {
            Row::Defined(m) => Some((m, None)),
            Row::Routed(m, r) => Some((m, Some(r))),
            Row::Removed { .. } => None,
        }
    }

    pub(super) fn routed(model: &ModelConfig, enabled: bool) -> Row {
        Row::Routed(
            StoredModel::new(model, enabled),
            StoredRouting::from(&model.routing),
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredModel {
    pub id: String,
    pub provider: String,
    pub upstream: String,
    pub input: Vec<Capability>,
    pub output: Vec<Capability>,
    pub context_window: u32,
    pub max_output_tokens: Option<u32>,
    pub pricing: StoredPricing,
    pub enabled: bool,
    pub updated_at: i64,
}

/// [`Pricing`] in the store's layout: the codec cannot read serde's
/// internally tagged enums back, so the stored form is externally tagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StoredPricing {
    PerToken {
        input_per_million: u64,
        output_per_million: u64,
        cached_input_per_million: Option<u64>,
    },
    PerImage(u64),
    PerSecond(u64),
    PerMinute(u64),
    PerCharacter(u64),
    PerRequest(u64),
}

impl From<Pricing> for StoredPricing {
    fn from(p: Pricing) -> Self {
        match p {
            Pricing::PerToken {
                input_per_million,
                output_per_million,
                cached_input_per_million,
            } => StoredPricing::PerToken {
                input_per_million,
                output_per_million,
                cached_input_per_million,
            },
            Pricing::PerImage { per_image } => StoredPricing::PerImage(per_image),
            Pricing::PerSecond { per_second } => StoredPricing::PerSecond(per_second),
            Pricing::PerMinute { per_minute } => StoredPricing::PerMinute(per_minute),
            Pricing::PerCharacter {
                per_million_characters,
            } => StoredPricing::PerCharacter(per_million_characters),
            Pricing::PerRequest { per_request } => StoredPricing::PerRequest(per_request),
        }
    }
}

impl From<StoredPricing> for Pricing {
    fn from(p: StoredPricing) -> Self {
        match p {
            StoredPricing::PerToken {
                input_per_million,
                output_per_million,
                cached_input_per_million,
            } => Pricing::PerToken {
                input_per_million,
                output_per_million,
                cached_input_per_million,
            },
            StoredPricing::PerImage(per_image) => Pricing::PerImage { per_image },
            StoredPricing::PerSecond(per_second) => Pricing::PerSecond { per_second },
            StoredPricing::PerMinute(per_minute) => Pricing::PerMinute { per_minute },
            StoredPricing::PerCharacter(per_million_characters) => Pricing::PerCharacter {
                per_million_characters,
            },
            StoredPricing::PerRequest(per_request) => Pricing::PerRequest { per_request },
        }
    }
}

impl StoredModel {
    pub(super) fn new(model: &ModelConfig, enabled: bool) -> StoredModel {
        StoredModel {
            id: model.id.clone(),
            provider: model.provider.clone(),
            upstream: model.upstream.clone(),
            input: model.input.clone(),
            output: model.output.clone(),
            context_window: model.context_window,
            max_output_tokens: model.max_output_tokens,
            pricing: model.pricing.into(),
            enabled,
            updated_at: now_ms(),
        }
    }

    pub(super) fn definition(&self) -> ModelConfig {
        ModelConfig {
            id: self.id.clone(),
            provider: self.provider.clone(),
            upstream: self.upstream.clone(),
            input: self.input.clone(),
            output: self.output.clone(),
            context_window: self.context_window,
            max_output_tokens: self.max_output_tokens,
            pricing: self.pricing.into(),
            routing: ModelRouting::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pricing_unit_survives_the_codec() {
        let all = [
            Pricing::PerToken {
                input_per_million: 1,
                output_per_million: 2,
                cached_input_per_million: Some(3),
            },
            Pricing::PerImage { per_image: 4 },
            Pricing::PerSecond { per_second: 5 },
            Pricing::PerMinute { per_minute: 6 },
            Pricing::PerCharacter {
                per_million_characters: 7,
            },
            Pricing::PerRequest { per_request: 8 },
        ];
        for pricing in all {
            let stored = StoredPricing::from(pricing);
            let bytes = crate::store::codec::encode(&stored);
            let back: StoredPricing = crate::store::codec::decode(&bytes).unwrap();
            assert_eq!(Pricing::from(back), pricing);
        }
    }
}
