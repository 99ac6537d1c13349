//! Configuration: defaults < TOML file < `TOLLGATE_*` environment < CLI flags.
//!
//! The file is deserialized into raw types (unknown keys refused), then
//! validated once into [`Config`]; after that nothing is optional that
//! cannot be missing. Every refusal names where the bad value came from (file
//! and line, environment variable, or flag), the key, and what is wrong, so an
//! operator fixes it on the first try. Provider secrets never live in the
//! file: a provider names the environment variable that holds its key, and
//! the value is kept in a [`Secret`] that prints as `***`.

// A price as the file writes it has the API's shape.
use crate::catalogue::overlay::PricingInput as RawPricing;
use std::collections::HashSet;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;
use url::Url;

use crate::base::money::credits_to_micros;
use crate::catalogue::{Capability, Pricing, ProviderKind, Strategy, upstream_name};
use crate::compliance::Classifier;

/// The embedded demo configuration: the built-in mock provider and demo
/// models, so `tollgate serve` works offline with no file at all.
pub const EMBEDDED_DEFAULT: &str = include_str!("../assets/default-config.toml");

/// The accepted `store_cache_mb`, in MiB.
const STORE_CACHE_MB_RANGE: std::ops::RangeInclusive<u64> = 8..=1_048_576;

/// Environment variables read as configuration, beside `TOLLGATE_CONFIG`
/// (the file) and `TOLLGATE_OWNER_PASSWORD` (a first-start secret).
const ENV_KEYS: &[&str] = &[
    "TOLLGATE_LISTEN",
    "TOLLGATE_DATA_DIR",
    "TOLLGATE_LOG_FORMAT",
    "TOLLGATE_LOG_LEVEL",
    "TOLLGATE_DEFAULT_RATE_LIMIT",
    "TOLLGATE_FREE_MULTIMODAL_PER_DAY",
    "TOLLGATE_SESSION_TTL_HOURS",
    "TOLLGATE_SHUTDOWN_GRACE_SECONDS",
    "TOLLGATE_OWNER_EMAIL",
    "TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS",
    "TOLLGATE_METRICS_TOKEN",
    "TOLLGATE_OTLP_ENDPOINT",
    "TOLLGATE_IMAGE_FETCH_ALLOW_PRIVATE_TARGETS",
    "TOLLGATE_RISK_RULES_DIR",
    "TOLLGATE_STORE_CACHE_MB",
];
/// `TOLLGATE_SSO_CLIENT_SECRET` is the documented home of the single
/// sign-on client secret (any variable named by `sso.client_secret_env`
/// works). `TOLLGATE_JOURNAL_CHECKPOINT_MS` is read by the store's writer
/// (docs/storage.md, the charge journal).
const ENV_OTHER: &[&str] = &[
    "TOLLGATE_CONFIG",
    "TOLLGATE_OWNER_PASSWORD",
    "TOLLGATE_SSO_CLIENT_SECRET",
    "TOLLGATE_JOURNAL_CHECKPOINT_MS",
];

/// A secret value (an upstream API key). Never printed, never serialized.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

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

/// The validated configuration.
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
    pub usage_retention_days: u32,
    /// redb's page cache in MiB: bounds the store's resident memory
    /// whatever the file's size.
    pub store_cache_mb: u64,
    /// Days audit entries are kept: at least 183 (six months, EU AI Act
    /// Articles 19 and 26(6)); the chain is verified from the checkpoint of
    /// the pruned prefix.
    pub audit_retention_days: u32,
    /// A directory of risk rule packs (`*.toml`) that replace the built-in
    /// packs of the same file name and add new ones.
    pub risk_rules_dir: Option<PathBuf>,
    /// The risk classifier compiled from the built-in packs and those of
    /// `risk_rules_dir`: a bad pack refuses the configuration.
    pub risk_rules: Arc<Classifier>,
    /// Single sign-on with an OpenID Connect provider (`[sso]`).
    pub sso: Option<crate::sso::config::SsoConfig>,
    pub providers: Vec<ProviderConfig>,
    pub models: Vec<ModelConfig>,
}

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
    pub cloud: crate::providers::cloud::Cloud,
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

/// A refusal of the configuration: where, which key, what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// `FILE:LINE`, `environment VAR`, or `flag --name`.
    pub origin: String,
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.origin, self.message)
        } else {
            write!(f, "{}: `{}`: {}", self.origin, self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// Values given as command-line flags: the top layer.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub listen: Option<SocketAddr>,
    pub data_dir: Option<PathBuf>,
    pub log_format: Option<LogFormat>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    listen: Option<SocketAddr>,
    data_dir: Option<PathBuf>,
    log_format: Option<LogFormat>,
    log_level: Option<Spanned<String>>,
    default_rate_limit: Option<Spanned<u32>>,
    free_multimodal_per_day: Option<u32>,
    session_ttl_hours: Option<Spanned<u32>>,
    shutdown_grace_seconds: Option<u64>,
    header_read_timeout_seconds: Option<Spanned<u64>>,
    body_read_timeout_seconds: Option<Spanned<u64>>,
    owner_email: Option<Spanned<String>>,
    webhook_urls: Option<Vec<Spanned<String>>>,
    webhook_allow_private_targets: Option<bool>,
    webhook_queue_capacity: Option<Spanned<usize>>,
    webhook_concurrency: Option<Spanned<usize>>,
    metrics_token: Option<Spanned<String>>,
    otlp_endpoint: Option<Spanned<String>>,
    otlp_headers: Option<Spanned<std::collections::BTreeMap<String, String>>>,
    otlp_sample_ratio: Option<Spanned<f64>>,
    image_fetch_allow_private_targets: Option<bool>,
    judge_timeout_ms: Option<Spanned<u64>>,
    incident_sample_share: Option<Spanned<f64>>,
    incident_window_seconds: Option<Spanned<u64>>,
    incident_refusal_burst: Option<Spanned<u32>>,
    compliance_sweep_seconds: Option<Spanned<u64>>,
    usage_retention_days: Option<Spanned<u32>>,
    audit_retention_days: Option<Spanned<u32>>,
    store_cache_mb: Option<Spanned<u64>>,
    risk_rules_dir: Option<Spanned<PathBuf>>,
    sso: Option<crate::sso::config::RawSso>,
    #[serde(default)]
    providers: Vec<RawProvider>,
    #[serde(default)]
    models: Vec<RawModel>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProvider {
    id: Spanned<String>,
    kind: ProviderKind,
    base_url: Option<Spanned<String>>,
    api_key_env: Option<Spanned<String>>,
    /// Azure OpenAI's `api-version`.
    api_version: Option<Spanned<String>>,
    /// Vertex AI's Google Cloud project, location and credentials.
    project: Option<Spanned<String>>,
    location: Option<Spanned<String>>,
    credentials_file: Option<Spanned<String>>,
    access_token_env: Option<Spanned<String>>,
    connect_timeout_ms: Option<u64>,
    first_byte_timeout_ms: Option<u64>,
    max_retries: Option<Spanned<i64>>,
    retry_backoff_ms: Option<Spanned<i64>>,
    retry_after_cap_ms: Option<Spanned<i64>>,
    request_timeout_ms: Option<Spanned<i64>>,
    cooldown_after_failures: Option<Spanned<i64>>,
    cooldown_seconds: Option<Spanned<i64>>,
    /// `bedrock` only.
    region: Option<Spanned<String>>,
    aws_access_key_id_env: Option<Spanned<String>>,
    aws_secret_access_key_env: Option<Spanned<String>>,
    aws_session_token_env: Option<Spanned<String>>,
    responses: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDeployment {
    provider: Spanned<String>,
    upstream: Option<String>,
    weight: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
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
    context_window: Spanned<u32>,
    max_output_tokens: Option<u32>,
    pricing: Spanned<RawPricing>,
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
    for name in env_names {
        if name.starts_with("TOLLGATE_")
            && !ENV_KEYS.contains(&name.as_str())
            && !ENV_OTHER.contains(&name.as_str())
        {
            return Err(ConfigError {
                origin: format!("environment {name}"),
                key: name.clone(),
                message: format!(
                    "unknown setting; known TOLLGATE_* variables: {}",
                    ENV_KEYS
                        .iter()
                        .chain(ENV_OTHER)
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
    }
    parse(source, &text, env, overrides)
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

fn parse(
    source: ConfigSource,
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
    overrides: &Overrides,
) -> Result<Config, ConfigError> {
    let file_name = match &source {
        ConfigSource::Embedded => "embedded default config".to_owned(),
        ConfigSource::File(p) => p.display().to_string(),
    };
    let at = |span: std::ops::Range<usize>| format!("{file_name}:{}", line_of(text, span.start));
    let deserializer = toml::Deserializer::parse(text).map_err(|e| ConfigError {
        origin: e.span().map_or_else(|| file_name.clone(), &at),
        key: String::new(),
        message: e.message().trim().to_owned(),
    })?;
    let raw: RawConfig = serde_path_to_error::deserialize(deserializer).map_err(|e| {
        // `Spanned` shows up in the path as a private field; hide it.
        let key = e
            .path()
            .to_string()
            .replace(".$__serde_spanned_private_value", "");
        let inner = e.into_inner();
        ConfigError {
            origin: inner.span().map_or_else(|| file_name.clone(), &at),
            key: if key == "." { String::new() } else { key },
            message: inner.message().trim().to_owned(),
        }
    })?;

    let bad = |span: std::ops::Range<usize>, key: String, message: String| ConfigError {
        origin: at(span),
        key,
        message,
    };
    let env_error = |name: &str, message: String| ConfigError {
        origin: format!("environment {name}"),
        key: name.to_owned(),
        message,
    };

    let mut listen = raw
        .listen
        .unwrap_or_else(|| "127.0.0.1:8080".parse().expect("literal"));
    if let Some(v) = env("TOLLGATE_LISTEN") {
        listen = v.parse().map_err(|_| {
            env_error(
                "TOLLGATE_LISTEN",
                format!("`{v}` is not an address like 127.0.0.1:8080"),
            )
        })?;
    }
    let mut data_dir = raw
        .data_dir
        .unwrap_or_else(|| PathBuf::from("./tollgate-data"));
    if let Some(v) = env("TOLLGATE_DATA_DIR") {
        data_dir = PathBuf::from(v);
    }
    let mut log_format = raw.log_format.unwrap_or(LogFormat::Text);
    if let Some(v) = env("TOLLGATE_LOG_FORMAT") {
        log_format = v.parse().map_err(|m| env_error("TOLLGATE_LOG_FORMAT", m))?;
    }
    let log_level = match (env("TOLLGATE_LOG_LEVEL"), raw.log_level) {
        (Some(v), _) => {
            check_log_level(&v).map_err(|m| env_error("TOLLGATE_LOG_LEVEL", m))?;
            v
        }
        (None, Some(v)) => {
            check_log_level(v.get_ref()).map_err(|m| bad(v.span(), "log_level".into(), m))?;
            v.into_inner()
        }
        (None, None) => "info".to_owned(),
    };

    let mut default_rate_limit = 60;
    if let Some(v) = raw.default_rate_limit {
        if *v.get_ref() == 0 {
            return Err(bad(
                v.span(),
                "default_rate_limit".into(),
                "must be at least 1 request per minute".into(),
            ));
        }
        default_rate_limit = v.into_inner();
    }
    if let Some(v) = env("TOLLGATE_DEFAULT_RATE_LIMIT") {
        default_rate_limit = v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
            env_error(
                "TOLLGATE_DEFAULT_RATE_LIMIT",
                format!("`{v}` is not a whole number of requests per minute (1 or more)"),
            )
        })?;
    }
    let mut free_multimodal_per_day = raw.free_multimodal_per_day.unwrap_or(5);
    if let Some(v) = env("TOLLGATE_FREE_MULTIMODAL_PER_DAY") {
        free_multimodal_per_day = v.parse().map_err(|_| {
            env_error(
                "TOLLGATE_FREE_MULTIMODAL_PER_DAY",
                format!("`{v}` is not a whole number of requests per day (0 or more)"),
            )
        })?;
    }
    let mut session_ttl_hours = 12;
    if let Some(v) = raw.session_ttl_hours {
        if *v.get_ref() == 0 {
            return Err(bad(
                v.span(),
                "session_ttl_hours".into(),
                "must be at least 1 hour".into(),
            ));
        }
        session_ttl_hours = v.into_inner();
    }
    if let Some(v) = env("TOLLGATE_SESSION_TTL_HOURS") {
        session_ttl_hours = v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
            env_error(
                "TOLLGATE_SESSION_TTL_HOURS",
                format!("`{v}` is not a whole number of hours (1 or more)"),
            )
        })?;
    }
    let mut shutdown_grace_seconds = raw.shutdown_grace_seconds.unwrap_or(30);
    if let Some(v) = env("TOLLGATE_SHUTDOWN_GRACE_SECONDS") {
        shutdown_grace_seconds = v.parse().map_err(|_| {
            env_error(
                "TOLLGATE_SHUTDOWN_GRACE_SECONDS",
                format!("`{v}` is not a whole number of seconds"),
            )
        })?;
    }
    let owner_email = match (env("TOLLGATE_OWNER_EMAIL"), raw.owner_email) {
        (Some(v), _) => crate::auth::accounts::normalize_email(&v)
            .map_err(|m| env_error("TOLLGATE_OWNER_EMAIL", m))?,
        (None, Some(v)) => crate::auth::accounts::normalize_email(v.get_ref())
            .map_err(|m| bad(v.span(), "owner_email".into(), m))?,
        (None, None) => "owner@localhost".to_owned(),
    };

    let mut webhook_urls = Vec::new();
    for (i, url) in raw.webhook_urls.unwrap_or_default().into_iter().enumerate() {
        let parsed = parse_http_url(url.get_ref())
            .map_err(|m| bad(url.span(), format!("webhook_urls[{i}]"), m))?;
        webhook_urls.push(parsed);
    }
    // The spec fixes this name; it adds to the file's list rather than
    // replacing it, so operator URLs can live in either place.
    if let Some(v) = env("WEBHOOK_URLS") {
        for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            webhook_urls.push(parse_http_url(part).map_err(|m| env_error("WEBHOOK_URLS", m))?);
        }
    }

    let mut webhook_allow_private_targets = raw.webhook_allow_private_targets.unwrap_or(false);
    if let Some(v) = env("TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS") {
        webhook_allow_private_targets = parse_bool(&v).ok_or_else(|| {
            env_error(
                "TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS",
                format!("`{v}` is not true or false"),
            )
        })?;
    }
    let mut image_fetch_allow_private_targets =
        raw.image_fetch_allow_private_targets.unwrap_or(false);
    if let Some(v) = env("TOLLGATE_IMAGE_FETCH_ALLOW_PRIVATE_TARGETS") {
        image_fetch_allow_private_targets = parse_bool(&v).ok_or_else(|| {
            env_error(
                "TOLLGATE_IMAGE_FETCH_ALLOW_PRIVATE_TARGETS",
                format!("`{v}` is not true or false"),
            )
        })?;
    }
    let (risk_rules_dir, risk_rules_origin) =
        match (env("TOLLGATE_RISK_RULES_DIR"), raw.risk_rules_dir) {
            (Some(v), _) => (Some(PathBuf::from(v)), None),
            (None, Some(v)) => (Some(v.get_ref().clone()), Some(v.span())),
            (None, None) => (None, None),
        };
    let risk_rules = match &risk_rules_dir {
        // Compiling the packs takes milliseconds; configurations without
        // an override share one compiled copy.
        None => built_in_risk_rules(),
        Some(dir) => Arc::new(Classifier::load(Some(dir)).map_err(
            |e| match risk_rules_origin {
                Some(span) => bad(span, "risk_rules_dir".into(), e.to_string()),
                None => env_error("TOLLGATE_RISK_RULES_DIR", e.to_string()),
            },
        )?),
    };
    let webhook_queue_capacity = match raw.webhook_queue_capacity {
        Some(v) if !(1..=1_000_000).contains(v.get_ref()) => {
            return Err(bad(
                v.span(),
                "webhook_queue_capacity".into(),
                "must be 1 to 1000000 events".into(),
            ));
        }
        Some(v) => v.into_inner(),
        None => 10_000,
    };
    let webhook_concurrency = match raw.webhook_concurrency {
        Some(v) if !(1..=1024).contains(v.get_ref()) => {
            return Err(bad(
                v.span(),
                "webhook_concurrency".into(),
                "must be 1 to 1024 deliveries".into(),
            ));
        }
        Some(v) => v.into_inner(),
        None => 32,
    };
    let mut metrics_token = match raw.metrics_token {
        Some(v) if v.get_ref().trim().len() < 16 => {
            return Err(bad(
                v.span(),
                "metrics_token".into(),
                "must be at least 16 characters".into(),
            ));
        }
        Some(v) => Some(Secret::new(v.into_inner().trim().to_owned())),
        None => None,
    };
    if let Some(v) = env("TOLLGATE_METRICS_TOKEN") {
        if v.trim().len() < 16 {
            return Err(env_error(
                "TOLLGATE_METRICS_TOKEN",
                "must be at least 16 characters".into(),
            ));
        }
        metrics_token = Some(Secret::new(v.trim().to_owned()));
    }
    let mut otlp_endpoint = match raw.otlp_endpoint {
        Some(v) => Some(
            parse_http_url(v.get_ref()).map_err(|m| bad(v.span(), "otlp_endpoint".into(), m))?,
        ),
        None => None,
    };
    if let Some(v) = env("TOLLGATE_OTLP_ENDPOINT") {
        otlp_endpoint = if v.trim().is_empty() {
            None
        } else {
            Some(parse_http_url(v.trim()).map_err(|m| env_error("TOLLGATE_OTLP_ENDPOINT", m))?)
        };
    }
    let mut otlp_headers = Vec::new();
    if let Some(headers) = raw.otlp_headers {
        let span = headers.span();
        for (name, value) in headers.into_inner() {
            let valid = axum::http::HeaderName::from_bytes(name.as_bytes()).is_ok()
                && axum::http::HeaderValue::from_str(&value).is_ok();
            if !valid {
                // The value is a secret: the message names the header only.
                return Err(bad(
                    span,
                    "otlp_headers".into(),
                    format!(
                        "`{name}` is not a valid header name, or its value is not a valid header value"
                    ),
                ));
            }
            otlp_headers.push((name, Secret::new(value)));
        }
    }
    let otlp_sample_ratio = ranged(
        &bad,
        raw.otlp_sample_ratio,
        "otlp_sample_ratio",
        0.0..=1.0,
        1.0,
    )?;
    let header_read_timeout_seconds = ranged(
        &bad,
        raw.header_read_timeout_seconds,
        "header_read_timeout_seconds",
        1..=3600,
        30,
    )?;
    let body_read_timeout_seconds = ranged(
        &bad,
        raw.body_read_timeout_seconds,
        "body_read_timeout_seconds",
        1..=3600,
        300,
    )?;
    let judge_timeout_ms = ranged(
        &bad,
        raw.judge_timeout_ms,
        "judge_timeout_ms",
        100..=60_000,
        5_000,
    )?;
    let incident_sample_share = ranged(
        &bad,
        raw.incident_sample_share,
        "incident_sample_share",
        0.0..=1.0,
        0.05,
    )?;
    let incident_window_seconds = ranged(
        &bad,
        raw.incident_window_seconds,
        "incident_window_seconds",
        1..=86_400,
        300,
    )?;
    let incident_refusal_burst = ranged(
        &bad,
        raw.incident_refusal_burst,
        "incident_refusal_burst",
        1..=1_000_000,
        20,
    )?;
    let compliance_sweep_seconds = ranged(
        &bad,
        raw.compliance_sweep_seconds,
        "compliance_sweep_seconds",
        1..=86_400,
        60,
    )?;
    let usage_retention_days = ranged(
        &bad,
        raw.usage_retention_days,
        "usage_retention_days",
        1..=MAX_RETENTION_DAYS,
        400,
    )?;
    let mut store_cache_mb = ranged(
        &bad,
        raw.store_cache_mb,
        "store_cache_mb",
        STORE_CACHE_MB_RANGE,
        crate::store::DEFAULT_CACHE_MB,
    )?;
    if let Some(v) = env("TOLLGATE_STORE_CACHE_MB") {
        store_cache_mb = v
            .parse()
            .ok()
            .filter(|n| STORE_CACHE_MB_RANGE.contains(n))
            .ok_or_else(|| {
                env_error(
                    "TOLLGATE_STORE_CACHE_MB",
                    format!("`{v}` is not a whole number of MiB from 8 to 1048576"),
                )
            })?;
    }
    let audit_retention_days = match raw.audit_retention_days {
        Some(v) if !(MIN_AUDIT_RETENTION_DAYS..=MAX_RETENTION_DAYS).contains(v.get_ref()) => {
            return Err(bad(
                v.span(),
                "audit_retention_days".into(),
                format!(
                    "must be {MIN_AUDIT_RETENTION_DAYS} to {MAX_RETENTION_DAYS}: audit entries are kept at least six months (EU AI Act Articles 19 and 26(6))"
                ),
            ));
        }
        Some(v) => v.into_inner(),
        None => 400,
    };

    let sso = raw
        .sso
        .map(|raw| crate::sso::config::validate(raw, &bad, env))
        .transpose()?;

    let mut providers = Vec::new();
    let mut provider_ids = HashSet::new();
    for (i, p) in raw.providers.into_iter().enumerate() {
        let key = |field: &str| format!("providers[{i}].{field}");
        let id = p.id.get_ref().trim().to_owned();
        if id.is_empty() || !provider_ids.insert(id.clone()) {
            let why = if id.is_empty() {
                "must not be empty".to_owned()
            } else {
                format!("provider `{id}` is declared twice")
            };
            return Err(bad(p.id.span(), key("id"), why));
        }
        let bedrock = bedrock_settings(&p, &bad, &key, env)?;
        let cloud = crate::providers::cloud::validate(
            p.kind,
            crate::providers::cloud::RawCloud {
                api_version: p.api_version,
                project: p.project,
                location: p.location,
                credentials_file: p.credentials_file,
                access_token_env: p.access_token_env,
            },
            env,
        )
        .map_err(|(span, field, m)| bad(span.unwrap_or_else(|| p.id.span()), key(field), m))?;
        let base_url = match &p.base_url {
            Some(u) => {
                Some(parse_http_url(u.get_ref()).map_err(|m| bad(u.span(), key("base_url"), m))?)
            }
            None if p.kind == ProviderKind::Bedrock => bedrock
                .as_ref()
                .map(|b| crate::providers::bedrock::default_base_url(&b.region)),
            // Vertex: the location's regional endpoint.
            None if p.kind == ProviderKind::Vertex => match cloud.vertex() {
                Some(vertex) => Some(
                    crate::providers::vertex::default_base_url(&vertex.location)
                        .map_err(|m| bad(p.id.span(), key("location"), m))?,
                ),
                None => None,
            },
            None if p.kind.needs_base_url() => {
                return Err(bad(
                    p.id.span(),
                    key("base_url"),
                    format!("provider kind `{}` needs base_url", p.kind.as_str()),
                ));
            }
            None => None,
        };
        let mut api_key = None;
        let mut api_key_env = None;
        if let Some(name) = &p.api_key_env {
            let n = name.get_ref();
            if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(bad(
                    name.span(),
                    key("api_key_env"),
                    format!("`{n}` is not an environment variable name"),
                ));
            }
            api_key = env(n).filter(|v| !v.is_empty()).map(Secret::new);
            api_key_env = Some(n.clone());
        }
        if p.kind == ProviderKind::Azure && api_key_env.is_none() {
            return Err(bad(
                p.id.span(),
                key("api_key_env"),
                "provider kind `azure` needs api_key_env (the variable holding its api-key)".into(),
            ));
        }
        let defaults = RetryPolicy::default();
        let retry = RetryPolicy {
            max_retries: whole(&bad, p.max_retries, &key("max_retries"), 0..=100, 2)? as u32,
            backoff_base: Duration::from_millis(whole(
                &bad,
                p.retry_backoff_ms,
                &key("retry_backoff_ms"),
                0..=600_000,
                defaults.backoff_base.as_millis() as u64,
            )?),
            retry_after_cap: Duration::from_millis(whole(
                &bad,
                p.retry_after_cap_ms,
                &key("retry_after_cap_ms"),
                0..=3_600_000,
                defaults.retry_after_cap.as_millis() as u64,
            )?),
        };
        let cooldown = CooldownPolicy {
            after_failures: whole(
                &bad,
                p.cooldown_after_failures,
                &key("cooldown_after_failures"),
                1..=1_000,
                3,
            )? as u32,
            duration: Duration::from_secs(whole(
                &bad,
                p.cooldown_seconds,
                &key("cooldown_seconds"),
                0..=86_400,
                30,
            )?),
        };
        let request_timeout = Duration::from_millis(whole(
            &bad,
            p.request_timeout_ms,
            &key("request_timeout_ms"),
            1..=3_600_000,
            DEFAULT_REQUEST_TIMEOUT.as_millis() as u64,
        )?);
        let responses = match &p.responses {
            None => ResponsesMode::Passthrough,
            Some(mode) if p.kind != ProviderKind::Openai => {
                return Err(bad(
                    mode.span(),
                    key("responses"),
                    format!(
                        "`responses` applies to providers of kind `openai` only (this one is `{}`); other kinds are always translated",
                        p.kind.as_str()
                    ),
                ));
            }
            Some(mode) => match mode.get_ref().as_str() {
                "passthrough" => ResponsesMode::Passthrough,
                "translate" => ResponsesMode::Translate,
                other => {
                    return Err(bad(
                        mode.span(),
                        key("responses"),
                        format!("`{other}` is not a mode: use `passthrough` or `translate`"),
                    ));
                }
            },
        };
        providers.push(ProviderConfig {
            id,
            kind: p.kind,
            base_url,
            api_key_env,
            api_key,
            cloud,
            connect_timeout: Duration::from_millis(p.connect_timeout_ms.unwrap_or(5_000)),
            first_byte_timeout: Duration::from_millis(p.first_byte_timeout_ms.unwrap_or(60_000)),
            retry,
            cooldown,
            request_timeout,
            bedrock,
            responses,
        });
    }

    let mut models = Vec::new();
    let mut model_ids = HashSet::new();
    for (i, m) in raw.models.into_iter().enumerate() {
        let key = |field: &str| format!("models[{i}].{field}");
        let id = m.id.get_ref().trim().to_owned();
        if id.is_empty() || !model_ids.insert(id.clone()) {
            let why = if id.is_empty() {
                "must not be empty".to_owned()
            } else {
                format!("model `{id}` is declared twice")
            };
            return Err(bad(m.id.span(), key("id"), why));
        }
        let kind_of = |span: std::ops::Range<usize>, at: String, provider: &str| {
            if let Some(declared) = providers.iter().find(|p| p.id == provider) {
                return Ok(declared.kind);
            }
            let known: Vec<_> = providers.iter().map(|p| p.id.as_str()).collect();
            Err(bad(
                span,
                at,
                format!(
                    "unknown provider `{provider}` (declared: {})",
                    known.join(", ")
                ),
            ))
        };
        let mut deployments = Vec::new();
        match (&m.provider, m.deployments) {
            (Some(provider), None) => {
                let kind = kind_of(provider.span(), key("provider"), provider.get_ref())?;
                // The name reaches the upstream's URL or body: see
                // `catalogue::upstream_name`. Absent, it is the id.
                let (upstream, upstream_span, defaulted) = match &m.upstream {
                    Some(u) => (u.get_ref().clone(), u.span(), ""),
                    None => (
                        id.clone(),
                        m.id.span(),
                        " (`upstream` is not set, so the id is used: set it to the provider's name)",
                    ),
                };
                upstream_name::check(&upstream, kind).map_err(|why| {
                    bad(upstream_span, key("upstream"), format!("{why}{defaulted}"))
                })?;
                deployments.push(DeploymentConfig {
                    provider: provider.get_ref().clone(),
                    upstream,
                    weight: 1,
                });
            }
            (None, Some(list)) => {
                let span = list.span();
                if m.upstream.is_some() {
                    return Err(bad(
                        span,
                        key("upstream"),
                        "`upstream` belongs inside each deployment when `deployments` is given"
                            .into(),
                    ));
                }
                let list = list.into_inner();
                if list.is_empty() {
                    return Err(bad(
                        span,
                        key("deployments"),
                        "a model needs at least one deployment".into(),
                    ));
                }
                for (j, d) in list.into_iter().enumerate() {
                    let dkey = |field: &str| key(&format!("deployments[{j}].{field}"));
                    let kind = kind_of(d.provider.span(), dkey("provider"), d.provider.get_ref())?;
                    let upstream = d.upstream.unwrap_or_else(|| id.clone());
                    upstream_name::check(&upstream, kind)
                        .map_err(|why| bad(span.clone(), dkey("upstream"), why))?;
                    let weight = match d.weight {
                        Some(w) if *w.get_ref() < 1 || *w.get_ref() > 1_000_000 => {
                            return Err(bad(
                                w.span(),
                                dkey("weight"),
                                "must be 1 to 1000000 (leave a deployment out rather than weigh it 0)"
                                    .into(),
                            ));
                        }
                        Some(w) => w.into_inner() as u32,
                        None => 1,
                    };
                    deployments.push(DeploymentConfig {
                        provider: d.provider.into_inner(),
                        upstream,
                        weight,
                    });
                }
            }
            (Some(provider), Some(_)) => {
                return Err(bad(
                    provider.span(),
                    key("deployments"),
                    "give either `provider` + `upstream` or `deployments`, not both".into(),
                ));
            }
            (None, None) => {
                return Err(bad(
                    m.id.span(),
                    key("provider"),
                    "a model needs `provider` (+ `upstream`) or `deployments`".into(),
                ));
            }
        }
        let request_timeout = match m.request_timeout_ms {
            Some(v) => Some(Duration::from_millis(whole(
                &bad,
                Some(v),
                &key("request_timeout_ms"),
                1..=3_600_000,
                0,
            )?)),
            None => None,
        };
        let rpm_limit = match m.rpm_limit {
            Some(v) => Some(whole(&bad, Some(v), &key("rpm_limit"), 1..=100_000_000, 0)? as u32),
            None => None,
        };
        let tpm_limit = match m.tpm_limit {
            Some(v) => Some(whole(
                &bad,
                Some(v),
                &key("tpm_limit"),
                1..=u32::MAX as u64,
                0,
            )?),
            None => None,
        };
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
            return Err(bad(
                m.input.span(),
                key("input"),
                "a model must accept at least one capability".into(),
            ));
        }
        if m.output.get_ref().is_empty() {
            return Err(bad(
                m.output.span(),
                key("output"),
                "a model must produce at least one capability".into(),
            ));
        }
        if *m.context_window.get_ref() == 0 {
            return Err(bad(
                m.context_window.span(),
                key("context_window"),
                "must be at least 1 token".into(),
            ));
        }
        let span = m.pricing.span();
        let price = |v: f64, field: &str| {
            credits_to_micros(v).map_err(|e| bad(span.clone(), key(&format!("pricing.{field}")), e))
        };
        let pricing = m.pricing.into_inner().priced(price)?;
        pricing
            .check_fits(*m.context_window.get_ref())
            .map_err(|e| bad(span.clone(), key("pricing"), e))?;
        crate::catalogue::check_embedding(m.input.get_ref(), m.output.get_ref(), &pricing)
            .map_err(|e| bad(m.output.span(), key("output"), e))?;
        models.push(ModelConfig {
            id,
            provider: first.provider,
            upstream: first.upstream,
            input: m.input.into_inner(),
            output: m.output.into_inner(),
            context_window: m.context_window.into_inner(),
            max_output_tokens: m.max_output_tokens,
            pricing,
            routing,
        });
    }

    if let Some(v) = overrides.listen {
        listen = v;
    }
    if let Some(v) = &overrides.data_dir {
        data_dir = v.clone();
    }
    if let Some(v) = overrides.log_format {
        log_format = v;
    }

    Ok(Config {
        source,
        listen,
        data_dir,
        log_format,
        log_level,
        default_rate_limit,
        free_multimodal_per_day,
        session_ttl: Duration::from_secs(u64::from(session_ttl_hours) * 3600),
        shutdown_grace: Duration::from_secs(shutdown_grace_seconds),
        header_read_timeout: Duration::from_secs(header_read_timeout_seconds),
        body_read_timeout: Duration::from_secs(body_read_timeout_seconds),
        owner_email,
        webhook_urls,
        webhook_allow_private_targets,
        webhook_queue_capacity,
        webhook_concurrency,
        metrics_token,
        otlp_endpoint,
        otlp_headers,
        otlp_sample_ratio,
        image_fetch_allow_private_targets,
        judge_timeout_ms,
        incident_sample_share,
        incident_window_seconds,
        incident_refusal_burst,
        compliance_sweep_seconds,
        usage_retention_days,
        audit_retention_days,
        store_cache_mb,
        risk_rules_dir,
        risk_rules,
        sso,
        providers,
        models,
    })
}

/// The shortest audit retention: six months (EU AI Act Article 19 for
/// providers' logs, Article 26(6) for deployers').
pub const MIN_AUDIT_RETENTION_DAYS: u32 = 183;
/// About a hundred years: in effect, keep everything.
pub const MAX_RETENTION_DAYS: u32 = 36_500;

/// A number key within `range`, or its default.
fn ranged<T>(
    bad: &impl Fn(std::ops::Range<usize>, String, String) -> ConfigError,
    value: Option<Spanned<T>>,
    key: &str,
    range: std::ops::RangeInclusive<T>,
    default: T,
) -> Result<T, ConfigError>
where
    T: PartialOrd + std::fmt::Display + Copy,
{
    match value {
        Some(v) if !range.contains(v.get_ref()) => Err(bad(
            v.span(),
            key.into(),
            format!("must be {} to {}", range.start(), range.end()),
        )),
        Some(v) => Ok(v.into_inner()),
        None => Ok(default),
    }
}

/// A whole-number key within `range` (read signed, so `-5` is told it
/// must be 0 or more rather than that it is not a `u64`), or its default.
fn whole(
    bad: &impl Fn(std::ops::Range<usize>, String, String) -> ConfigError,
    value: Option<Spanned<i64>>,
    key: &str,
    range: std::ops::RangeInclusive<u64>,
    default: u64,
) -> Result<u64, ConfigError> {
    match value {
        Some(v) => {
            let n = *v.get_ref();
            match u64::try_from(n) {
                Ok(n) if range.contains(&n) => Ok(n),
                _ => Err(bad(
                    v.span(),
                    key.into(),
                    format!(
                        "{n} is out of range: must be {} to {}",
                        range.start(),
                        range.end()
                    ),
                )),
            }
        }
        None => Ok(default),
    }
}

fn check_log_level(filter: &str) -> Result<(), String> {
    tracing_subscriber::EnvFilter::try_new(filter)
        .map(|_| ())
        .map_err(|e| {
            format!("`{filter}` is not a log filter such as `info` or `tollgate=debug,info` ({e})")
        })
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim() {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

/// The `bedrock` settings of a provider: `region` required (it names the
/// endpoint's host and the signing scope), the credentials' variable names
/// defaulted to the AWS SDKs' own. The AWS fields on another kind are a
/// mistake and refused.
fn bedrock_settings(
    p: &RawProvider,
    bad: &impl Fn(std::ops::Range<usize>, String, String) -> ConfigError,
    key: &impl Fn(&str) -> String,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<BedrockSettings>, ConfigError> {
    let aws_fields = [
        ("region", &p.region),
        ("aws_access_key_id_env", &p.aws_access_key_id_env),
        ("aws_secret_access_key_env", &p.aws_secret_access_key_env),
        ("aws_session_token_env", &p.aws_session_token_env),
    ];
    if p.kind != ProviderKind::Bedrock {
        return match aws_fields
            .iter()
            .find_map(|(n, v)| v.as_ref().map(|v| (n, v)))
        {
            Some((name, value)) => Err(bad(
                value.span(),
                key(name),
                format!(
                    "applies only to providers of kind `bedrock`, not `{}`",
                    p.kind.as_str()
                ),
            )),
            None => Ok(None),
        };
    }
    let Some(region) = &p.region else {
        return Err(bad(
            p.id.span(),
            key("region"),
            "provider kind `bedrock` needs region (for example \"eu-central-1\")".into(),
        ));
    };
    let name = region.get_ref().trim();
    // The region becomes part of a host name and of the signing scope.
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(bad(
            region.span(),
            key("region"),
            format!("`{name}` is not an AWS region name (like `eu-central-1`)"),
        ));
    }
    let variable = |field: &str,
                    value: &Option<Spanned<String>>,
                    default: &str|
     -> Result<(String, Option<Secret>), ConfigError> {
        let n = value.as_ref().map_or(default, |v| v.get_ref().as_str());
        if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            let span = value.as_ref().map_or(p.id.span(), Spanned::span);
            return Err(bad(
                span,
                key(field),
                format!("`{n}` is not an environment variable name"),
            ));
        }
        let secret = env(n)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .map(Secret::new);
        Ok((n.to_owned(), secret))
    };
    let (access_key_id_env, access_key_id) = variable(
        "aws_access_key_id_env",
        &p.aws_access_key_id_env,
        "AWS_ACCESS_KEY_ID",
    )?;
    let (secret_access_key_env, secret_access_key) = variable(
        "aws_secret_access_key_env",
        &p.aws_secret_access_key_env,
        "AWS_SECRET_ACCESS_KEY",
    )?;
    let (session_token_env, session_token) = variable(
        "aws_session_token_env",
        &p.aws_session_token_env,
        "AWS_SESSION_TOKEN",
    )?;
    Ok(Some(BedrockSettings {
        region: name.to_owned(),
        access_key_id_env,
        secret_access_key_env,
        session_token_env,
        access_key_id,
        secret_access_key,
        session_token,
    }))
}

fn parse_http_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|e| format!("`{text}` is not a URL ({e})"))?;
    match url.scheme() {
        "http" | "https" if url.host().is_some() => Ok(url),
        _ => Err(format!("`{text}` must be an http(s) URL with a host")),
    }
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The built-in risk rules, compiled once per process.
fn built_in_risk_rules() -> Arc<Classifier> {
    static BUILT_IN: std::sync::OnceLock<Arc<Classifier>> = std::sync::OnceLock::new();
    BUILT_IN
        .get_or_init(|| Arc::new(Classifier::built_in()))
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str, vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tollgate.toml");
        std::fs::write(&path, text).unwrap();
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let names: Vec<String> = vars.iter().map(|(k, _)| k.clone()).collect();
        let env = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        load(Some(&path), &env, &names, &Overrides::default())
    }

    #[test]
    fn risk_rules_dir_adds_packs_and_a_bad_pack_is_refused_naming_the_file() {
        let packs = tempfile::tempdir().unwrap();
        std::fs::write(packs.path().join("sv.toml"), "language = \"sv\"\n").unwrap();
        let dir = packs.path().display().to_string();
        let config = load_text(&format!("risk_rules_dir = {dir:?}\n"), &[]).unwrap();
        assert_eq!(
            config.risk_rules.languages(),
            ["de", "en", "es", "fr", "it", "nl", "pl", "pt", "sv"]
        );
        let default = load_text("", &[]).unwrap();
        assert_eq!(
            default.risk_rules.languages(),
            ["de", "en", "es", "fr", "it", "nl", "pl", "pt"]
        );

        std::fs::write(packs.path().join("sv.toml"), "language = 3\n").unwrap();
        let e = load_text(&format!("\nrisk_rules_dir = {dir:?}\n"), &[]).unwrap_err();
        assert_eq!(e.key, "risk_rules_dir");
        assert!(e.origin.ends_with(":2"), "{e}");
        assert!(e.message.starts_with("risk rule pack sv.toml:"), "{e}");
        let e = load_text("", &[("TOLLGATE_RISK_RULES_DIR", &dir)]).unwrap_err();
        assert_eq!(e.origin, "environment TOLLGATE_RISK_RULES_DIR");
        assert!(e.message.contains("sv.toml"), "{e}");
    }

    const GOOD: &str = r#"
listen = "127.0.0.1:9000"
data_dir = "/var/lib/tollgate"
[[providers]]
id = "openai"
kind = "openai"
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
[[models]]
id = "gpt-4o-mini"
provider = "openai"
upstream = "gpt-4o-mini"
input = ["TEXT", "IMAGE"]
output = ["TEXT"]
context_window = 128000
pricing = { unit = "per_token", input_per_million = 0.15, output_per_million = 0.60 }
"#;

    #[test]
    fn the_documented_shape_loads() {
        let config = load_text(GOOD, &[("OPENAI_API_KEY", "sk-test")]).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:9000");
        assert_eq!(
            config.providers[0].api_key.as_ref().unwrap().expose(),
            "sk-test"
        );
        assert_eq!(format!("{:?}", config.providers[0].api_key), "Some(***)");
        assert_eq!(
            config.models[0].pricing,
            Pricing::PerToken {
                input_per_million: 150_000,
                output_per_million: 600_000,
                cached_input_per_million: None
            }
        );
        assert_eq!(config.default_rate_limit, 60);
    }

    #[test]
    fn the_embedded_default_serves_the_mock_provider() {
        let config = load(None, &|_| None, &[], &Overrides::default()).unwrap();
        assert_eq!(config.source, ConfigSource::Embedded);
        assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(config.data_dir, PathBuf::from("./tollgate-data"));
        assert!(
            config
                .providers
                .iter()
                .any(|p| p.kind == ProviderKind::Mock)
        );
        assert!(!config.models.is_empty());
    }

    #[test]
    fn layers_apply_in_order_file_env_flags() {
        let config = load_text(GOOD, &[("TOLLGATE_LISTEN", "127.0.0.1:9100")]).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:9100");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, GOOD).unwrap();
        let env = |n: &str| (n == "TOLLGATE_LISTEN").then(|| "127.0.0.1:9100".to_owned());
        let flags = Overrides {
            listen: Some("127.0.0.1:9200".parse().unwrap()),
            ..Default::default()
        };
        let config = load(Some(&path), &env, &["TOLLGATE_LISTEN".into()], &flags).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:9200");
    }

    #[test]
    fn webhook_urls_come_from_the_exact_env_name() {
        let config = load_text(
            GOOD,
            &[(
                "WEBHOOK_URLS",
                "https://a.example/hook, https://b.example/h",
            )],
        )
        .unwrap();
        assert_eq!(config.webhook_urls.len(), 2);
        let err = load_text(GOOD, &[("WEBHOOK_URLS", "ftp://x")]).unwrap_err();
        assert_eq!(err.origin, "environment WEBHOOK_URLS");
    }

    #[test]
    fn an_unknown_key_names_the_line_and_key() {
        let text = GOOD.replace(
            "context_window = 128000",
            "context_window = 128000\ncontext_windw = 5",
        );
        let err = load_text(&text, &[]).unwrap_err();
        assert!(err.origin.ends_with(":16"), "{err}");
        assert!(
            err.message.contains("unknown field `context_windw`"),
            "{err}"
        );
    }

    #[test]
    fn a_wrong_type_names_the_line_and_key() {
        let text = GOOD.replace("context_window = 128000", "context_window = \"big\"");
        let err = load_text(&text, &[]).unwrap_err();
        assert!(err.origin.ends_with(":15"), "{err}");
        assert_eq!(err.key, "models[0].context_window");
    }

    #[test]
    fn the_responses_mode_is_passthrough_by_default_and_translate_for_openai_only() {
        let config = load_text(GOOD, &[]).unwrap();
        assert_eq!(config.providers[0].responses, ResponsesMode::Passthrough);
        let translate = GOOD.replace(
            "api_key_env = \"OPENAI_API_KEY\"",
            "api_key_env = \"OPENAI_API_KEY\"\nresponses = \"translate\"",
        );
        let config = load_text(&translate, &[]).unwrap();
        assert_eq!(config.providers[0].responses, ResponsesMode::Translate);
        let err = load_text(&translate.replace("\"translate\"", "\"sometimes\""), &[]).unwrap_err();
        assert_eq!(err.key, "providers[0].responses");
        assert!(err.message.contains("passthrough"), "{err}");
        let mock = format!(
            "{GOOD}[[providers]]\nid = \"m\"\nkind = \"mock\"\nresponses = \"translate\"\n"
        );
        let err = load_text(&mock, &[]).unwrap_err();
        assert_eq!(err.key, "providers[1].responses");
        assert!(err.message.contains("`openai` only"), "{err}");
    }

    #[test]
    fn an_unknown_provider_reference_names_the_line() {
        let text = GOOD.replace("provider = \"openai\"", "provider = \"opnai\"");
        let err = load_text(&text, &[]).unwrap_err();
        assert!(err.origin.ends_with(":11"), "{err}");
        assert_eq!(err.key, "models[0].provider");
        assert!(err.message.contains("unknown provider `opnai`"), "{err}");
    }

    #[test]
    fn bad_values_are_refused_with_their_key() {
        let cases = [
            (
                GOOD.replace("0.60", "-1.0"),
                "models[0].pricing.output_per_million",
            ),
            (
                GOOD.replace("\"TEXT\", \"IMAGE\"", "\"TEXT\", \"SMELL\""),
                "models[0].input[1]",
            ),
            (
                GOOD.replace("https://api.openai.com/v1", "api.openai.com"),
                "providers[0].base_url",
            ),
            (GOOD.replace("127.0.0.1:9000", "localhost"), "listen"),
            (
                GOOD.replace("kind = \"openai\"", "kind = \"watsonx\""),
                "providers[0].kind",
            ),
            (
                GOOD.replace(
                    "unit = \"per_token\"",
                    "unit = \"per_token\", per_image = 1.0",
                ),
                "models[0].pricing",
            ),
            (
                GOOD.replace("data_dir", "log_level = \"info,tollgate=[\"\ndata_dir"),
                "log_level",
            ),
            // An embedding model takes TEXT and produces EMBEDDING alone.
            (
                GOOD.replace("output = [\"TEXT\"]", "output = [\"TEXT\", \"EMBEDDING\"]"),
                "models[0].output",
            ),
            (
                GOOD.replace("output = [\"TEXT\"]", "output = [\"EMBEDDING\"]"),
                "models[0].output",
            ),
        ];
        for (text, key) in cases {
            let err = load_text(&text, &[]).unwrap_err();
            assert!(err.key.starts_with(key), "expected key {key}, got {err}");
        }
    }

    const DEPLOYED: &str = r#"
[[providers]]
id = "a"
kind = "openai"
base_url = "https://a.example/v1"
retry_backoff_ms = 50
[[providers]]
id = "b"
kind = "openai"
base_url = "https://b.example/v1"
[[models]]
id = "m"
deployments = [
  { provider = "a", upstream = "m-a", weight = 3 },
  { provider = "b" },
]
strategy = "least_busy"
rpm_limit = 100
tpm_limit = 5000
input = ["TEXT"]
output = ["TEXT"]
context_window = 1000
pricing = { unit = "per_request", per_request = 0.01 }
"#;

    #[test]
    fn deployments_load_with_their_weights_and_the_provider_retry_defaults() {
        let config = load_text(DEPLOYED, &[]).unwrap();
        let m = &config.models[0];
        let deployments = m.deployments();
        assert_eq!(deployments.len(), 2);
        assert_eq!(
            (
                deployments[0].provider.as_str(),
                deployments[0].upstream.as_str(),
                deployments[0].weight
            ),
            ("a", "m-a", 3)
        );
        assert_eq!(
            (
                deployments[1].provider.as_str(),
                deployments[1].upstream.as_str(),
                deployments[1].weight
            ),
            ("b", "m", 1)
        );
        assert_eq!(m.routing.strategy, Strategy::LeastBusy);
        assert_eq!(
            (m.routing.rpm_limit, m.routing.tpm_limit),
            (Some(100), Some(5000))
        );
        let a = &config.providers[0];
        assert_eq!(a.retry.backoff_base, Duration::from_millis(50));
        assert_eq!(a.retry.max_retries, 2);
        assert_eq!(a.retry.retry_after_cap, Duration::from_secs(10));
        assert_eq!(a.cooldown, CooldownPolicy::default());
        assert_eq!(a.request_timeout, DEFAULT_REQUEST_TIMEOUT);
        // The single form is one deployment of weight 1.
        let single = load_text(GOOD, &[]).unwrap();
        assert_eq!(single.models[0].deployments().len(), 1);
        assert_eq!(single.models[0].routing.strategy, Strategy::Weighted);
    }

    #[test]
    fn bad_deployments_are_refused_with_the_line_and_key() {
        let cases = [
            (
                DEPLOYED.replace("id = \"m\"\n", "id = \"m\"\nprovider = \"a\"\n"),
                "models[0].deployments",
                ":13",
                "not both",
            ),
            (
                DEPLOYED.replace("weight = 3", "weight = 0"),
                "models[0].deployments[0].weight",
                ":14",
                "must be 1",
            ),
            (
                DEPLOYED.replace("{ provider = \"b\" }", "{ provider = \"c\" }"),
                "models[0].deployments[1].provider",
                ":15",
                "unknown provider `c`",
            ),
            (
                DEPLOYED.replace("retry_backoff_ms = 50", "retry_backoff_ms = -5"),
                "providers[0].retry_backoff_ms",
                ":6",
                "-5 is out of range",
            ),
            (
                DEPLOYED.replace("strategy = \"least_busy\"", "strategy = \"fastest\""),
                "models[0].strategy",
                ":17",
                "unknown variant",
            ),
            (
                DEPLOYED.replace("rpm_limit = 100", "rpm_limit = 0"),
                "models[0].rpm_limit",
                ":18",
                "out of range",
            ),
            (
                DEPLOYED.replace("{ provider = \"b\" }", "{ provider = \"b\", wieght = 2 }"),
                "models[0].deployments[1]",
                ":15",
                "unknown field `wieght`",
            ),
        ];
        for (text, key, line, message) in cases {
            let err = load_text(&text, &[]).unwrap_err();
            assert!(err.key.starts_with(key), "expected key {key}, got {err}");
            assert!(err.origin.ends_with(line), "expected line {line}: {err}");
            assert!(err.message.contains(message), "{err}");
        }
        let neither = GOOD.replace("provider = \"openai\"\n", "");
        let err = load_text(&neither, &[]).unwrap_err();
        assert_eq!(err.key, "models[0].provider");
        assert!(err.message.contains("or `deployments`"), "{err}");
    }

    #[test]
    fn a_syntax_error_names_the_line() {
        let err = load_text("listen = \"127.0.0.1:1\"\n[[models]\n", &[]).unwrap_err();
        assert!(err.origin.ends_with(":2"), "{err}");
    }

    #[test]
    fn unknown_tollgate_env_vars_are_refused() {
        let err = load_text(GOOD, &[("TOLLGATE_LISTN", "x")]).unwrap_err();
        assert_eq!(err.key, "TOLLGATE_LISTN");
        let err = load_text(GOOD, &[("TOLLGATE_DEFAULT_RATE_LIMIT", "0")]).unwrap_err();
        assert_eq!(err.origin, "environment TOLLGATE_DEFAULT_RATE_LIMIT");
    }
}
