//! The model catalogue: which models callers may name, which provider serves
//! each, what it accepts and returns, and what it costs.
//!
//! A [`Catalogue`] is built from the validated configuration, with the
//! entries stored from the dashboard merged over it ([`overlay`]); each
//! built catalogue is read-only and replaced whole when an entry changes.
//! Its closed sets (capabilities, pricing units, and the provider kinds it
//! re-exports from [`crate::upstream`]) are enums so that every `match`
//! over them is exhaustive.

pub mod access;
pub mod endpoint;
pub mod overlay;
pub mod settings;
pub mod upstream_name;

pub use crate::upstream::ProviderKind;
pub use endpoint::Endpoint;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::base::money::{MAX_CHARGE, add_charges, charge_for, micros_to_credits};
use crate::upstream::ProviderConfig;
use settings::ModelConfig;

/// How a model with several deployments picks one (docs/routing.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// At random, in proportion to each deployment's `weight`.
    #[default]
    Weighted,
    /// The deployment with the fewest requests in flight.
    LeastBusy,
    /// The deployment with the lowest moving average time to first byte.
    LowestLatency,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Weighted => "weighted",
            Strategy::LeastBusy => "least_busy",
            Strategy::LowestLatency => "lowest_latency",
        }
    }
}

/// One place a model is served from, resolved against its provider.
#[derive(Debug, Clone)]
pub struct Deployment {
    pub provider: Arc<ProviderConfig>,
    pub upstream: String,
    pub weight: u32,
}

impl Deployment {
    /// `provider/upstream`: how the deployment is named in responses,
    /// metrics and events.
    pub fn label(&self) -> String {
        format!("{}/{}", self.provider.id, self.upstream)
    }
}

/// A modality a model accepts or produces (spec, "Model catalogue entry").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Capability {
    Text,
    Image,
    Audio,
    Files,
    Video,
    /// Output only: vectors for `/v1/embeddings` (docs/embeddings.md). A
    /// model that produces it produces nothing else and serves no other
    /// route.
    Embedding,
}

/// An embedding model's capabilities and price: it produces `EMBEDDING`
/// and nothing else, accepts `TEXT` only, and is priced per token (its
/// input tokens; an output price is allowed but never used).
pub fn check_embedding(
    input: &[Capability],
    output: &[Capability],
    pricing: &Pricing,
) -> Result<(), String> {
    if !output.contains(&Capability::Embedding) {
        return Ok(());
    }
    if output.len() != 1 {
        return Err("an EMBEDDING model produces EMBEDDING only: list no other output".into());
    }
    if input != [Capability::Text] {
        return Err("an EMBEDDING model accepts TEXT only: input = [\"TEXT\"]".into());
    }
    if !matches!(pricing, Pricing::PerToken { .. }) {
        return Err("an EMBEDDING model is priced per_token (its input tokens)".into());
    }
    Ok(())
}

/// How a model is billed. Amounts are integer micro-credits
/// (1 credit = 1,000,000 micro-credits); floats exist only in the config file
/// and the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "unit", rename_all = "snake_case")]
pub enum Pricing {
    PerToken {
        input_per_million: u64,
        output_per_million: u64,
        cached_input_per_million: Option<u64>,
    },
    PerImage {
        per_image: u64,
    },
    PerSecond {
        per_second: u64,
    },
    PerMinute {
        per_minute: u64,
    },
    PerCharacter {
        per_million_characters: u64,
    },
    PerRequest {
        per_request: u64,
    },
}

impl Pricing {
    /// The pricing in credits, as the API and the CLI show it.
    pub fn view(&self) -> serde_json::Value {
        use serde_json::json;
        let c = |micros: u64| micros_to_credits(micros);
        match *self {
            Pricing::PerToken {
                input_per_million,
                output_per_million,
                cached_input_per_million,
            } => json!({
                "unit": "per_token",
                "input_per_million": c(input_per_million),
                "output_per_million": c(output_per_million),
                "cached_input_per_million": cached_input_per_million.map(c),
            }),
            Pricing::PerImage { per_image } => {
                json!({ "unit": "per_image", "per_image": c(per_image) })
            }
            Pricing::PerSecond { per_second } => {
                json!({ "unit": "per_second", "per_second": c(per_second) })
            }
            Pricing::PerMinute { per_minute } => {
                json!({ "unit": "per_minute", "per_minute": c(per_minute) })
            }
            Pricing::PerCharacter {
                per_million_characters,
            } => json!({
                "unit": "per_character",
                "per_million_characters": c(per_million_characters),
            }),
            Pricing::PerRequest { per_request } => {
                json!({ "unit": "per_request", "per_request": c(per_request) })
            }
        }
    }

    /// Refuses a price whose charge for one request filling `context_window`
    /// (that many tokens in and as many out) could not be recorded: such a
    /// charge would have to be refused at every request. Other units are
    /// priced by what the upstream reports, and an overflowing charge is
    /// refused when it happens.
    pub fn check_fits(&self, context_window: u32) -> Result<(), String> {
        if let Pricing::PerToken {
            input_per_million,
            output_per_million,
            cached_input_per_million,
        } = *self
        {
            let window = u64::from(context_window);
            let input = input_per_million.max(cached_input_per_million.unwrap_or(0));
            let fits = charge_for(window, input, 1_000_000)
                .zip(charge_for(window, output_per_million, 1_000_000))
                .and_then(|(i, o)| add_charges(i, o));
            if fits.is_none() {
                return Err(format!(
                    "a request filling the context window ({context_window} tokens in and out) \
                     would cost more than the {} credits a wallet can hold; lower the price or the context window",
                    MAX_CHARGE / 1_000_000
                ));
            }
        }
        Ok(())
    }

    pub fn unit(&self) -> &'static str {
        match self {
            Pricing::PerToken { .. } => "per_token",
            Pricing::PerImage { .. } => "per_image",
            Pricing::PerSecond { .. } => "per_second",
            Pricing::PerMinute { .. } => "per_minute",
            Pricing::PerCharacter { .. } => "per_character",
            Pricing::PerRequest { .. } => "per_request",
        }
    }
}

/// One catalogue entry, resolved against its providers. `provider` and
/// `upstream` are the deployment this value stands for: the first one in
/// the catalogue, the one being tried in a view from [`Model::on`].
#[derive(Debug, Clone)]
pub struct Model {
    pub id: String,
    pub provider: Arc<ProviderConfig>,
    pub upstream: String,
    /// Every deployment, the first (`provider` + `upstream`) first; never
    /// empty.
    pub deployments: Vec<Deployment>,
    pub strategy: Strategy,
    /// The model's own `request_timeout_ms`: the time a request may spend
    /// on all its deployments, from the first attempt. Without it, each
    /// deployment is bounded by its own provider's `request_timeout_ms`,
    /// from the first attempt on that deployment.
    pub request_timeout: Option<Duration>,
    /// Requests and tokens per minute across all keys.
    pub rpm_limit: Option<u32>,
    pub tpm_limit: Option<u64>,
    pub input: Vec<Capability>,
    pub output: Vec<Capability>,
    pub context_window: u32,
    pub max_output_tokens: Option<u32>,
    pub pricing: Pricing,
}

impl Model {
    pub fn accepts(&self, capability: Capability) -> bool {
        self.input.contains(&capability)
    }

    pub fn produces(&self, capability: Capability) -> bool {
        self.output.contains(&capability)
    }

    /// An embedding model: it serves `/v1/embeddings` and nothing else.
    pub fn is_embedding(&self) -> bool {
        self.produces(Capability::Embedding)
    }

    /// This model as served by its deployment `index`.
    pub fn on(&self, index: usize) -> Model {
        let d = &self.deployments[index];
        Model {
            provider: d.provider.clone(),
            upstream: d.upstream.clone(),
            ..self.clone()
        }
    }
}

/// Every model callers may name, in configuration order.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    models: Vec<Arc<Model>>,
    by_id: HashMap<String, Arc<Model>>,
}

impl Catalogue {
    /// Builds a catalogue of `models`, in order; a model whose provider is
    /// not among `providers` is left out.
    pub fn from_definitions<'a>(
        providers: &[ProviderConfig],
        models: impl IntoIterator<Item = &'a ModelConfig>,
    ) -> Catalogue {
        let providers: HashMap<&str, Arc<ProviderConfig>> = providers
            .iter()
            .map(|p| (p.id.as_str(), Arc::new(p.clone())))
            .collect();
        let mut catalogue = Catalogue::default();
        for config in models {
            let ModelConfig {
                id,
                input,
                output,
                context_window,
                max_output_tokens,
                pricing,
                routing,
                ..
            } = config;
            let deployments: Vec<Deployment> = config
                .deployments()
                .into_iter()
                .filter_map(|d| {
                    Some(Deployment {
                        provider: providers.get(d.provider.as_str())?.clone(),
                        upstream: d.upstream,
                        weight: d.weight,
                    })
                })
                .collect();
            let Some(first) = deployments.first() else {
                continue;
            };
            let model = Arc::new(Model {
                id: id.clone(),
                provider: first.provider.clone(),
                upstream: first.upstream.clone(),
                strategy: routing.strategy,
                request_timeout: routing.request_timeout,
                rpm_limit: routing.rpm_limit,
                tpm_limit: routing.tpm_limit,
                deployments,
                input: input.clone(),
                output: output.clone(),
                context_window: *context_window,
                max_output_tokens: *max_output_tokens,
                pricing: *pricing,
            });
            catalogue.by_id.insert(id.clone(), model.clone());
            catalogue.models.push(model);
        }
        catalogue
    }

    pub fn get(&self, id: &str) -> Option<&Arc<Model>> {
        self.by_id.get(id)
    }

    pub fn models(&self) -> &[Arc<Model>] {
        &self.models
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::money::*;

    #[test]
    fn credits_convert_exactly_at_micro_precision() {
        assert_eq!(credits_to_micros(0.15).unwrap(), 150_000);
        assert_eq!(credits_to_micros(1.0).unwrap(), 1_000_000);
        assert_eq!(credits_to_micros(0.000_001).unwrap(), 1);
        assert!(credits_to_micros(-1.0).is_err());
        assert!(credits_to_micros(f64::NAN).is_err());
        assert!(credits_to_micros(f64::INFINITY).is_err());
        assert!(credits_to_micros(1e300).is_err());
        assert_eq!(micros_to_credits(2_500_000), 2.5);
        // A u64 beyond i64 converts as it is, never wrapped negative.
        assert!(micros_to_credits(u64::MAX) > 0.0);
    }

    #[test]
    fn charges_are_checked_never_wrapped_nor_saturated() {
        assert_eq!(charge_for(2500, 100, 1000), Some(250));
        assert_eq!(charge_for(1, 500_000, 1_000_000), Some(1));
        assert_eq!(charge_for(1, MAX_CHARGE, 1), Some(MAX_CHARGE));
        assert_eq!(charge_for(2, MAX_CHARGE, 1), None);
        assert_eq!(charge_for(u64::MAX, u64::MAX, 1), None);
        assert_eq!(add_charges(MAX_CHARGE, 0), Some(MAX_CHARGE));
        assert_eq!(add_charges(MAX_CHARGE, 1), None);
        assert_eq!(add_charges(u64::MAX, 1), None);
    }

    #[test]
    fn a_price_must_fit_its_context_window() {
        let price = |input: u64| Pricing::PerToken {
            input_per_million: input,
            output_per_million: 1,
            cached_input_per_million: None,
        };
        let absurd = 9_000_000_000_000 * 1_000_000;
        assert!(price(absurd).check_fits(1000).is_ok());
        assert!(price(absurd).check_fits(4_000_000_000).is_err());
        assert!(price(3_000_000).check_fits(u32::MAX).is_ok());
        let per_request = Pricing::PerRequest {
            per_request: MAX_CHARGE,
        };
        assert!(per_request.check_fits(u32::MAX).is_ok());
    }
}
