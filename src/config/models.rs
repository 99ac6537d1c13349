//! The `[[models]]` tables: each key declared once (the "Models" table of
//! docs/configuration.md is these rows), the table as written, and its
//! reading into the catalogue's own settings ([`ModelConfig`]), checked
//! against the providers declared before.

use std::collections::HashSet;
use std::ops::Range;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::setting::Default::{Doc, Required};
use super::setting::Ty::{self, Shape};
use super::setting::{At, Default, Setting};
use crate::base::config_error::ConfigError;
use crate::base::money::credits_to_micros;
// A price as the file writes it has the API's shape.
use crate::catalogue::overlay::PricingInput as RawPricing;
use crate::catalogue::settings::{DeploymentConfig, ModelConfig, ModelRouting};
use crate::catalogue::{Capability, ProviderKind, Strategy, upstream_name};
use crate::upstream::ProviderConfig;

const ID: Setting = Setting::new(
    "id",
    Shape("string"),
    Required,
    "The name clients send. Unique and non-empty (surrounding spaces are trimmed).",
);
const PROVIDER: Setting = Setting::new(
    "provider",
    Shape("string"),
    Doc("required unless `deployments`"),
    "The `id` of a declared `[[providers]]` entry: the model's one deployment.",
);
const UPSTREAM: Setting = Setting::new(
    "upstream",
    Shape("string"),
    Doc("the model's `id`"),
    "The provider's own name for the model (with `provider`; in `deployments`, each deployment's own). Refused, here and on the dashboard API, when it could rewrite the upstream URL: control characters, whitespace, `?`, `#`, or a `.` or `..` path segment. For a `bedrock` provider the whole name is percent-encoded into one path segment (`model/{upstream}/converse`), so `:` and `/` are safe there. For a `gemini` provider the name is one URL path segment (`models/{upstream}:generateContent`), so `/`, `\\` and `:` are refused too; `/` stays allowed for `openai` and `anthropic` providers, whose names travel in the request body (`meta-llama/Llama-3-8B`). `mock` names are not checked ([security.md](security.md#outbound-requests-chosen-by-tenants)).",
);
const DEPLOYMENTS: Setting = Setting::new(
    "deployments",
    Shape("array of inline tables"),
    Default::None,
    "Several deployments instead of `provider` + `upstream` (exactly one of the two forms): `[{ provider = \"p1\", upstream = \"u1\", weight = 2 }, { provider = \"p2\", upstream = \"u2\" }]`. Each names a declared provider; `upstream` defaults to the model's `id`; `weight` is 1 to 1000000, default 1 (leave a deployment out rather than weigh it 0).",
);
/// A deployment's share of traffic (inside `deployments`, described there).
const WEIGHT: Setting = Setting::new("weight", Ty::whole(1, 1_000_000, ""), Default::Whole(1), "")
    .why("leave a deployment out rather than weigh it 0");
const STRATEGY: Setting = Setting::new(
    "strategy",
    Shape("`weighted`, `least_busy` or `lowest_latency`"),
    Doc("`weighted`"),
    "How a deployment is chosen: at random in proportion to `weight`; the fewest requests in flight; the lowest moving average time to first byte ([routing.md](routing.md)).",
);
const REQUEST_TIMEOUT_MS: Setting = Setting::new(
    "request_timeout_ms",
    Ty::whole(1, 3_600_000, "milliseconds"),
    Doc("none: each deployment's provider's"),
    "Time a request may spend on all this model's deployments together, from its first attempt, retries included ([routing.md](routing.md#time-budget)).",
);
const RPM_LIMIT: Setting = Setting::new(
    "rpm_limit",
    Ty::whole(1, 100_000_000, "requests per minute"),
    Default::None,
    "Requests per minute to this model across all keys; over it, `429 model_rate_limit_exceeded` with `Retry-After`.",
);
const TPM_LIMIT: Setting = Setting::new(
    "tpm_limit",
    Ty::whole(1, u32::MAX as u64, "tokens per minute"),
    Default::None,
    "Tokens (prompt + completion) per minute to this model across all keys. The prompt estimate plus the request's `max_tokens` (else the model's `max_output_tokens`) is reserved at admission and replaced by the upstream's usage at completion.",
);
const INPUT: Setting = Setting::new(
    "input",
    Shape("array of capabilities"),
    Required,
    "What the model accepts. At least one of `\"TEXT\"`, `\"IMAGE\"`, `\"AUDIO\"`, `\"FILES\"`, `\"VIDEO\"` (upper case).",
);
const OUTPUT: Setting = Setting::new(
    "output",
    Shape("array of capabilities"),
    Required,
    "What the model produces. At least one, same values, or `\"EMBEDDING\"`: an embedding model, which must have `output = [\"EMBEDDING\"]` alone, `input = [\"TEXT\"]` and `per_token` pricing (output price 0 allowed, never used), and serves only `/v1/embeddings` ([embeddings.md](embeddings.md)).",
);
const CONTEXT_WINDOW: Setting = Setting::new(
    "context_window",
    Ty::whole(1, u32::MAX as u64, "tokens"),
    Required,
    "Tokens (prompt plus completion).",
);
const MAX_OUTPUT_TOKENS: Setting = Setting::new(
    "max_output_tokens",
    Ty::whole(0, u32::MAX as u64, "tokens"),
    Default::None,
    "Optional cap on completion tokens.",
);
const PRICING: Setting = Setting::new("pricing", Shape("inline table"), Required, "See below.");

/// Every key of a `[[models]]` table, in the docs' order.
pub const MODEL_KEYS: &[Setting] = &[
    ID,
    PROVIDER,
    UPSTREAM,
    DEPLOYMENTS,
    STRATEGY,
    REQUEST_TIMEOUT_MS,
    RPM_LIMIT,
    TPM_LIMIT,
    INPUT,
    OUTPUT,
    CONTEXT_WINDOW,
    MAX_OUTPUT_TOKENS,
    PRICING,
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDeployment {
    provider: Spanned<String>,
    upstream: Option<String>,
    weight: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawModel {
    id: Spanned<String>,
    provider: Option<Spanned<String>>,
    upstream: Option<Spanned<String>>,
    deployments: Option<Spanned<Vec<RawDeployment>>>,
    strategy: Option<Strategy>,
    request_timeout_ms: Option<Spanned<i64>>,
    rpm_limit: Option<Spanned<i64>>,
    tpm_limit: Option<Spanned<i64>>,
    input: Spanned<Vec<Capability>>,
    output: Spanned<Vec<Capability>>,
    context_window: Spanned<i64>,
    max_output_tokens: Option<Spanned<i64>>,
    pricing: Spanned<RawPricing>,
}

/// Every model, checked against `providers`; ids are unique.
pub(super) fn read(
    raw: Vec<RawModel>,
    providers: &[ProviderConfig],
    at: &At,
) -> Result<Vec<ModelConfig>, ConfigError> {
    let mut models = Vec::new();
    let mut ids = HashSet::new();
    for (i, m) in raw.into_iter().enumerate() {
        let key = |field: &str| format!("models[{i}].{field}");
        let id = m.id.get_ref().trim().to_owned();
        if id.is_empty() || !ids.insert(id.clone()) {
            let why = if id.is_empty() {
                "must not be empty".to_owned()
            } else {
                format!("model `{id}` is declared twice")
            };
            return Err(at.bad(m.id.span(), &key("id"), why));
        }
        models.push(model(id, m, providers, &key, at)?);
    }
    Ok(models)
}

/// A declared whole number of a model, if given.
fn optional(
    setting: &Setting,
    value: &Option<Spanned<i64>>,
    key: &impl Fn(&str) -> String,
    at: &At,
) -> Result<Option<u64>, ConfigError> {
    value
        .as_ref()
        .map(|v| setting.check_whole(v, &key(setting.key), at))
        .transpose()
}

fn model(
    id: String,
    m: RawModel,
    providers: &[ProviderConfig],
    key: &impl Fn(&str) -> String,
    at: &At,
) -> Result<ModelConfig, ConfigError> {
    let deployments = deployments(&id, &m, providers, key, at)?;
    let request_timeout =
        optional(&REQUEST_TIMEOUT_MS, &m.request_timeout_ms, key, at)?.map(Duration::from_millis);
    let rpm_limit = optional(&RPM_LIMIT, &m.rpm_limit, key, at)?.map(|n| n as u32);
    let tpm_limit = optional(&TPM_LIMIT, &m.tpm_limit, key, at)?;
    let mut deployments = deployments.into_iter();
    let first = deployments.next().expect("at least one deployment");
    let routing = ModelRouting {
        primary_weight: first.weight,
        more: deployments.collect(),
        strategy: m.strategy.unwrap_or_default(),
        request_timeout,
        rpm_limit,
        tpm_limit,
    };
    if m.input.get_ref().is_empty() {
        return Err(at.bad(
            m.input.span(),
            &key("input"),
            "a model must accept at least one capability".into(),
        ));
    }
    if m.output.get_ref().is_empty() {
        return Err(at.bad(
            m.output.span(),
            &key("output"),
            "a model must produce at least one capability".into(),
        ));
    }
    let context_window =
        CONTEXT_WINDOW.check_whole(&m.context_window, &key(CONTEXT_WINDOW.key), at)? as u32;
    let max_output_tokens =
        optional(&MAX_OUTPUT_TOKENS, &m.max_output_tokens, key, at)?.map(|n| n as u32);
    let span = m.pricing.span();
    let price = |v: f64, field: &str| {
        credits_to_micros(v).map_err(|e| at.bad(span.clone(), &key(&format!("pricing.{field}")), e))
    };
    let pricing = m.pricing.into_inner().priced(price)?;
    pricing
        .check_fits(context_window)
        .map_err(|e| at.bad(span.clone(), &key("pricing"), e))?;
    crate::catalogue::check_embedding(m.input.get_ref(), m.output.get_ref(), &pricing)
        .map_err(|e| at.bad(m.output.span(), &key("output"), e))?;
    Ok(ModelConfig {
        id,
        provider: first.provider,
        upstream: first.upstream,
        input: m.input.into_inner(),
        output: m.output.into_inner(),
        context_window,
        max_output_tokens,
        pricing,
        routing,
    })
}

/// The model's deployments: the single form (`provider` + `upstream`) or
/// the list (`deployments`), never both; each names a declared provider
/// and an upstream name that provider's URL can carry.
fn deployments(
    id: &str,
    m: &RawModel,
    providers: &[ProviderConfig],
    key: &impl Fn(&str) -> String,
    at: &At,
) -> Result<Vec<DeploymentConfig>, ConfigError> {
    let kind_of = |span: Range<usize>, at_key: String, provider: &str| {
        if let Some(declared) = providers.iter().find(|p| p.id == provider) {
            return Ok(declared.kind);
        }
        let known: Vec<_> = providers.iter().map(|p| p.id.as_str()).collect();
        Err(at.bad(
            span,
            &at_key,
            format!(
                "unknown provider `{provider}` (declared: {})",
                known.join(", ")
            ),
        ))
    };
    match (&m.provider, &m.deployments) {
        (Some(provider), None) => {
            let kind = kind_of(provider.span(), key("provider"), provider.get_ref())?;
            // The name reaches the upstream's URL or body: see
            // `catalogue::upstream_name`. Absent, it is the id.
            let (upstream, upstream_span, defaulted) = match &m.upstream {
                Some(u) => (u.get_ref().clone(), u.span(), ""),
                None => (
                    id.to_owned(),
                    m.id.span(),
                    " (`upstream` is not set, so the id is used: set it to the provider's name)",
                ),
            };
            upstream_name::check(&upstream, kind).map_err(|why| {
                at.bad(upstream_span, &key("upstream"), format!("{why}{defaulted}"))
            })?;
            Ok(vec![DeploymentConfig {
                provider: provider.get_ref().clone(),
                upstream,
                weight: 1,
            }])
        }
        (None, Some(list)) => deployment_list(id, m, list, &kind_of, key, at),
        (Some(provider), Some(_)) => Err(at.bad(
            provider.span(),
            &key("deployments"),
            "give either `provider` + `upstream` or `deployments`, not both".into(),
        )),
        (None, None) => Err(at.bad(
            m.id.span(),
            &key("provider"),
            "a model needs `provider` (+ `upstream`) or `deployments`".into(),
        )),
    }
}

fn deployment_list(
    id: &str,
    m: &RawModel,
    list: &Spanned<Vec<RawDeployment>>,
    kind_of: &impl Fn(Range<usize>, String, &str) -> Result<ProviderKind, ConfigError>,
    key: &impl Fn(&str) -> String,
    at: &At,
) -> Result<Vec<DeploymentConfig>, ConfigError> {
    let span = list.span();
    if m.upstream.is_some() {
        return Err(at.bad(
            span,
            &key("upstream"),
            "`upstream` belongs inside each deployment when `deployments` is given".into(),
        ));
    }
    if list.get_ref().is_empty() {
        return Err(at.bad(
            span,
            &key("deployments"),
            "a model needs at least one deployment".into(),
        ));
    }
    let mut deployments = Vec::new();
    for (j, d) in list.get_ref().iter().enumerate() {
        let dkey = |field: &str| key(&format!("deployments[{j}].{field}"));
        let kind = kind_of(d.provider.span(), dkey("provider"), d.provider.get_ref())?;
        let upstream = d.upstream.clone().unwrap_or_else(|| id.to_owned());
        upstream_name::check(&upstream, kind)
            .map_err(|why| at.bad(span.clone(), &dkey("upstream"), why))?;
        let weight = match &d.weight {
            Some(w) => WEIGHT.check_whole(w, &dkey(WEIGHT.key), at)? as u32,
            None => WEIGHT.whole_default() as u32,
        };
        deployments.push(DeploymentConfig {
            provider: d.provider.get_ref().clone(),
            upstream,
            weight,
        });
    }
    Ok(deployments)
}
