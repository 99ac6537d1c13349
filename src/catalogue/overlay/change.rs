//! What the dashboard asks of the catalogue: pricing in credits, a change
//! to an entry, and the checks an entry passes before it is stored.

use serde::Deserialize;

use crate::base::money::credits_to_micros;
use crate::catalogue::settings::{DeploymentConfig, ModelConfig};
use crate::catalogue::{Capability, Pricing, Strategy, upstream_name};
use crate::store::StoreError;
use crate::upstream::ProviderConfig;

/// Pricing as the API takes it: the shape of [`Pricing::view`], amounts in
/// credits.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "unit", rename_all = "snake_case", deny_unknown_fields)]
#[allow(clippy::enum_variant_names)] // the names are the API's `unit` values
pub enum PricingInput {
    PerToken {
        input_per_million: f64,
        output_per_million: f64,
        #[serde(default)]
        cached_input_per_million: Option<f64>,
    },
    PerImage {
        per_image: f64,
    },
    PerSecond {
        per_second: f64,
    },
    PerMinute {
        per_minute: f64,
    },
    PerCharacter {
        per_million_characters: f64,
    },
    PerRequest {
        per_request: f64,
    },
}

impl PricingInput {
    /// Amounts to micro-credits, refusing what cannot be money (negative,
    /// not finite, too large), as configuration loading does.
    pub fn to_pricing(&self) -> Result<Pricing, String> {
        self.priced(|v, field| credits_to_micros(v).map_err(|e| format!("`pricing.{field}`: {e}")))
    }

    /// The pricing with each amount converted by `price` (given the amount
    /// and its field name), the configuration file's way or the API's.
    pub fn priced<E>(&self, price: impl Fn(f64, &str) -> Result<u64, E>) -> Result<Pricing, E> {
        Ok(match *self {
            PricingInput::PerToken {
                input_per_million,
                output_per_million,
                cached_input_per_million,
            } => Pricing::PerToken {
                input_per_million: price(input_per_million, "input_per_million")?,
                output_per_million: price(output_per_million, "output_per_million")?,
                cached_input_per_million: cached_input_per_million
                    .map(|v| price(v, "cached_input_per_million"))
                    .transpose()?,
            },
            PricingInput::PerImage { per_image } => Pricing::PerImage {
                per_image: price(per_image, "per_image")?,
            },
            PricingInput::PerSecond { per_second } => Pricing::PerSecond {
                per_second: price(per_second, "per_second")?,
            },
            PricingInput::PerMinute { per_minute } => Pricing::PerMinute {
                per_minute: price(per_minute, "per_minute")?,
            },
            PricingInput::PerCharacter {
                per_million_characters,
            } => Pricing::PerCharacter {
                per_million_characters: price(per_million_characters, "per_million_characters")?,
            },
            PricingInput::PerRequest { per_request } => Pricing::PerRequest {
                per_request: price(per_request, "per_request")?,
            },
        })
    }
}

/// A change to an entry: `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct ModelChange {
    pub provider: Option<String>,
    pub upstream: Option<String>,
    pub input: Option<Vec<Capability>>,
    pub output: Option<Vec<Capability>>,
    pub context_window: Option<u32>,
    /// `Some(None)` clears it.
    pub max_output_tokens: Option<Option<u32>>,
    pub pricing: Option<Pricing>,
    pub enabled: Option<bool>,
    /// Replaces every deployment (the first becomes `provider` +
    /// `upstream`).
    pub deployments: Option<Vec<DeploymentConfig>>,
    pub strategy: Option<Strategy>,
    /// `Some(None)` clears it.
    pub rpm_limit: Option<Option<u32>>,
    pub tpm_limit: Option<Option<u64>>,
}

impl ModelChange {
    /// Applies the change to a definition (`enabled` is the caller's: it
    /// is not part of the definition). The result is not yet validated.
    pub(super) fn apply(self, model: &mut ModelConfig) -> Result<(), StoreError> {
        if let Some(v) = self.provider {
            model.provider = v;
        }
        if let Some(v) = self.upstream {
            model.upstream = v;
        }
        if let Some(v) = self.input {
            model.input = v;
        }
        if let Some(v) = self.output {
            model.output = v;
        }
        if let Some(v) = self.context_window {
            model.context_window = v;
        }
        if let Some(v) = self.max_output_tokens {
            model.max_output_tokens = v;
        }
        if let Some(v) = self.pricing {
            model.pricing = v;
        }
        if let Some(list) = self.deployments {
            let mut list = list.into_iter();
            let Some(first) = list.next() else {
                return Err(StoreError::Invalid(
                    "`deployments` must list at least one deployment".into(),
                ));
            };
            model.provider = first.provider;
            model.upstream = first.upstream;
            model.routing.primary_weight = first.weight;
            model.routing.more = list.collect();
        }
        if let Some(v) = self.strategy {
            model.routing.strategy = v;
        }
        if let Some(v) = self.rpm_limit {
            model.routing.rpm_limit = v;
        }
        if let Some(v) = self.tpm_limit {
            model.routing.tpm_limit = v;
        }
        Ok(())
    }
}

/// The longest model id accepted from the dashboard.
const MAX_ID_LEN: usize = 200;

/// How a refusal of the pricing begins, so the API can name the field.
pub const PRICING_REFUSED: &str = "`pricing`: ";

/// The checks configuration loading makes, plus a printable id.
pub(super) fn validate(
    model: &ModelConfig,
    providers: &[ProviderConfig],
) -> Result<(), StoreError> {
    let invalid = |m: String| Err(StoreError::Invalid(m));
    let id = &model.id;
    if id.is_empty()
        || id.len() > MAX_ID_LEN
        || id.trim() != id
        || id.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return invalid(format!(
            "a model id must be 1 to {MAX_ID_LEN} printable characters without spaces"
        ));
    }
    for (i, d) in model.deployments().iter().enumerate() {
        let at = if i == 0 {
            String::new()
        } else {
            format!("deployments[{i}]: ")
        };
        let Some(provider) = providers.iter().find(|p| p.id == d.provider) else {
            let known: Vec<&str> = providers.iter().map(|p| p.id.as_str()).collect();
            return invalid(format!(
                "{at}unknown provider `{}` (configured: {})",
                d.provider,
                known.join(", ")
            ));
        };
        if d.upstream.trim().is_empty() {
            return invalid(format!("{at}`upstream` must not be empty"));
        }
        if let Err(why) = upstream_name::check(&d.upstream, provider.kind) {
            return invalid(format!("{at}`upstream`: {why}"));
        }
        if d.weight == 0 {
            return invalid(format!("{at}`weight` must be at least 1"));
        }
    }
    if model.routing.rpm_limit == Some(0) || model.routing.tpm_limit == Some(0) {
        return invalid("`rpmLimit` and `tpmLimit` must be at least 1".into());
    }
    if model.input.is_empty() {
        return invalid("a model must accept at least one capability".into());
    }
    if model.output.is_empty() {
        return invalid("a model must produce at least one capability".into());
    }
    if let Err(why) = crate::catalogue::check_embedding(&model.input, &model.output, &model.pricing)
    {
        return invalid(why);
    }
    if model.context_window == 0 {
        return invalid("`contextWindow` must be at least 1 token".into());
    }
    if model.max_output_tokens == Some(0) {
        return invalid("`maxOutputTokens` must be at least 1 token".into());
    }
    model
        .pricing
        .check_fits(model.context_window)
        .map_err(|m| StoreError::Invalid(format!("{PRICING_REFUSED}{m}")))?;
    Ok(())
}
