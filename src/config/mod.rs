//! Configuration: defaults < TOML file < `TOLLGATE_*` environment < CLI flags.
//!
//! Each part owns its settings types (`upstream::settings`,
//! `catalogue::settings`, `events::WebhookSettings`,
//! `traces::TraceSettings`, `sso::config`); this module only assembles
//! them: it reads the file and the environment, checks each value against
//! its one declaration (key, type and range, default, environment
//! variable, help: `top_level.rs`, `providers.rs`, `models.rs`), and checks
//! what spans parts (a model's provider must be declared). The
//! unknown-variable refusal and the tables of docs/configuration.md follow
//! from the same declarations.
//!
//! The file is deserialized into raw types (unknown keys refused), then
//! validated once into [`Config`]; after that nothing is optional that
//! cannot be missing. Every refusal names where the bad value came from (file
//! and line, environment variable, or flag), the key, and what is wrong, so an
//! operator fixes it on the first try. Provider secrets never live in the
//! file: a provider names the environment variable that holds its key, and
//! the value is kept in a [`Secret`] that prints as `***`.

mod models;
mod parse;
mod providers;
pub mod setting;
pub mod top_level;

#[cfg(test)]
mod docs_tests;
#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use url::Url;

// The parts' own types, under the names the layers above know them by.
pub use crate::base::config_error::ConfigError;
pub use crate::base::secret::Secret;
pub use crate::catalogue::settings::{DeploymentConfig, ModelConfig, ModelRouting};
use crate::compliance::Classifier;
use crate::events::WebhookSettings;
use crate::traces::TraceSettings;
pub use crate::upstream::{
    BedrockSettings, CooldownPolicy, DEFAULT_REQUEST_TIMEOUT, ProviderConfig, ResponsesMode,
    RetryPolicy,
};
pub use models::MODEL_KEYS;
pub use providers::PROVIDER_KEYS;
pub use top_level::TOP_LEVEL;

/// The embedded demo configuration: the built-in mock provider and demo
/// models, so `tollgate serve` works offline with no file at all.
pub const EMBEDDED_DEFAULT: &str = include_str!("../../assets/default-config.toml");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("`{other}` is not a log format; use text or json")),
        }
    }
}

/// Where the configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// No file given: the embedded demo configuration.
    Embedded,
    File(PathBuf),
}

/// The validated configuration. Each field's key, default and range are
/// declared in `top_level.rs`.
#[derive(Debug, Clone)]
pub struct Config {
    pub source: ConfigSource,
    /// Address the HTTP server listens on.
    pub listen: SocketAddr,
    /// Directory holding the redb file and the admin socket.
    pub data_dir: PathBuf,
    /// `text` for people, `json` for log collectors.
    pub log_format: LogFormat,
    /// A tracing filter such as `info` or `tollgate=debug,info`.
    pub log_level: String,
    /// Requests per minute for keys without their own `rateLimit`.
    pub default_rate_limit: u32,
    /// Multimodal requests per UTC day for a free-tier tenant.
    pub free_multimodal_per_day: u32,
    /// Lifetime of a dashboard session.
    pub session_ttl: Duration,
    /// How long shutdown waits for requests in flight.
    pub shutdown_grace: Duration,
    /// How long a client has to send a request's head, and then its body
    /// (slow clients are cut off: docs/reliability.md).
    pub header_read_timeout: Duration,
    pub body_read_timeout: Duration,
    /// Email of the owner account created at first start.
    pub owner_email: String,
    /// Operator-level webhook URLs (`WEBHOOK_URLS`): every event, unsigned.
    pub webhook_urls: Vec<Url>,
    /// Lets tenants register webhook URLs on private, loopback and
    /// link-local addresses (refused by default: no request forgery into
    /// the operator's network).
    pub webhook_allow_private_targets: bool,
    /// Events waiting for delivery; when full, new events are dropped.
    pub webhook_queue_capacity: usize,
    /// Deliveries in flight at once.
    pub webhook_concurrency: usize,
    /// Lets image URLs that a provider needs fetched (Gemini) point at
    /// private, loopback and link-local addresses.
    pub image_fetch_allow_private_targets: bool,
    /// When set, `GET /metrics` needs `Authorization: Bearer <token>`.
    pub metrics_token: Option<Secret>,
    /// OTLP/HTTP collector base URL: spans are posted to
    /// `{otlp_endpoint}/v1/traces`. Unset (the default): no traces.
    pub otlp_endpoint: Option<Url>,
    /// Headers sent with every export (a vendor's API key); never logged.
    pub otlp_headers: Vec<(String, Secret)>,
    /// Share of new traces recorded (0 to 1); a caller's sampled flag in
    /// `traceparent` decides for its own trace.
    pub otlp_sample_ratio: f64,
    /// Time allowed to the risk judge model before the rule result stands.
    pub judge_timeout_ms: u64,
    /// Share of served responses the incident sampler examines (0 to 1).
    pub incident_sample_share: f64,
    /// Window in which refusals of prohibited uses are counted.
    pub incident_window_seconds: u64,
    /// Refusals of prohibited uses by one tenant in one window that file
    /// an incident.
    pub incident_refusal_burst: u32,
    /// Interval of the compliance sweep (conversation retention, review
    /// expiry).
    pub compliance_sweep_seconds: u64,
    /// Days raw usage records are kept (their daily rollups stay).
    /// redb's page cache in MiB: bounds the store's resident memory
    /// whatever the file's size.
    pub store_cache_mb: u64,
    pub usage_retention_days: u32,
    /// Days audit entries are kept: at least 183 (six months, EU AI Act
    /// Articles 19 and 26(6)); the chain is verified from the checkpoint of
    /// the pruned prefix.
    pub audit_retention_days: u32,
    /// A directory of risk rule packs (`*.toml`) that replace the built-in
    /// packs of the same file name and add new ones.
    pub risk_rules_dir: Option<PathBuf>,
    /// The risk classifier: the built-in packs, or those of
    /// `risk_rules_dir` (compiled at load: a bad pack refuses the
    /// configuration).
    pub risk_rules: RiskRules,
    /// Single sign-on with an OpenID Connect provider (`[sso]`).
    pub sso: Option<crate::sso::config::SsoConfig>,
    pub providers: Vec<ProviderConfig>,
    pub models: Vec<ModelConfig>,
}

impl Config {
    /// The webhook dispatcher's settings.
    pub fn webhooks(&self) -> WebhookSettings {
        WebhookSettings {
            operator_urls: self.webhook_urls.clone(),
            allow_private_targets: self.webhook_allow_private_targets,
            queue_capacity: self.webhook_queue_capacity,
            concurrency: self.webhook_concurrency,
        }
    }

    /// The trace exporter's settings.
    pub fn traces(&self) -> TraceSettings {
        TraceSettings {
            endpoint: self.otlp_endpoint.clone(),
            headers: self.otlp_headers.clone(),
            sample_ratio: self.otlp_sample_ratio,
        }
    }
}

/// Values given as command-line flags: the top layer.
/// A configuration's risk classifier. The built-in packs are compiled on
/// first use, once per process: an admin command that never classifies
/// (`tollgate usage`, `keys list`) does not pay the tenth of a second their
/// compilation takes. A `risk_rules_dir` is compiled when the
/// configuration loads, so that a bad pack refuses it.
#[derive(Debug, Clone)]
pub enum RiskRules {
    BuiltIn,
    Loaded(Arc<Classifier>),
}

impl RiskRules {
    pub fn classifier(&self) -> Arc<Classifier> {
        static BUILT_IN: std::sync::OnceLock<Arc<Classifier>> = std::sync::OnceLock::new();
        match self {
            RiskRules::BuiltIn => BUILT_IN
                .get_or_init(|| Arc::new(Classifier::built_in()))
                .clone(),
            RiskRules::Loaded(classifier) => classifier.clone(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub listen: Option<SocketAddr>,
    pub data_dir: Option<PathBuf>,
    pub log_format: Option<LogFormat>,
}

/// Loads the configuration: `path` (or the embedded demo), then the
/// environment as read by `env`, then the flags.
pub fn load(
    path: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
    env_names: &[String],
    overrides: &Overrides,
) -> Result<Config, ConfigError> {
    let (source, text) = match path {
        None => (ConfigSource::Embedded, EMBEDDED_DEFAULT.to_owned()),
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
                origin: path.display().to_string(),
                key: String::new(),
                message: format!("cannot read the file: {e}"),
            })?;
            (ConfigSource::File(path.to_owned()), text)
        }
    };
    refuse_unknown_env(env_names)?;
    let at = setting::At {
        file_name: match &source {
            ConfigSource::Embedded => "embedded default config".to_owned(),
            ConfigSource::File(p) => p.display().to_string(),
        },
        text: &text,
        env,
    };
    let raw = parse::deserialize(&at)?;
    parse::assemble(source.clone(), raw, &at, overrides)
}

/// A `TOLLGATE_*` variable that is not declared is a typo: refused, with
/// the declared ones listed.
fn refuse_unknown_env(env_names: &[String]) -> Result<(), ConfigError> {
    let known = top_level::known_env();
    match env_names
        .iter()
        .find(|name| name.starts_with("TOLLGATE_") && !known.contains(&name.as_str()))
    {
        Some(name) => Err(ConfigError {
            origin: format!("environment {name}"),
            key: name.clone(),
            message: format!(
                "unknown setting; known TOLLGATE_* variables: {}",
                known.join(", ")
            ),
        }),
        None => Ok(()),
    }
}

/// Loads with the process environment.
pub fn load_from_process(
    path: Option<&Path>,
    overrides: &Overrides,
) -> Result<Config, ConfigError> {
    let names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .collect();
    load(path, &|name| std::env::var(name).ok(), &names, overrides)
}
