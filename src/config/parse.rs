//! The file as written (`RawConfig`, unknown keys refused) and its
//! reading into [`Config`]: each top-level value is checked against its
//! declaration (src/config/top_level.rs), the environment applied over the
//! file, then the `[sso]` table, the providers and the models are handed to
//! their readers, and the flags go on top.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;
use url::Url;

use super::setting::{At, env_error};
use super::top_level as decl;
use super::{Config, ConfigSource, LogFormat, Overrides, RiskRules, models, providers};
use crate::base::config_error::ConfigError;
use crate::base::secret::Secret;
use crate::compliance::Classifier;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    listen: Option<SocketAddr>,
    data_dir: Option<PathBuf>,
    log_format: Option<LogFormat>,
    log_level: Option<Spanned<String>>,
    default_rate_limit: Option<Spanned<i64>>,
    free_multimodal_per_day: Option<Spanned<i64>>,
    session_ttl_hours: Option<Spanned<i64>>,
    shutdown_grace_seconds: Option<Spanned<i64>>,
    header_read_timeout_seconds: Option<Spanned<i64>>,
    body_read_timeout_seconds: Option<Spanned<i64>>,
    owner_email: Option<Spanned<String>>,
    webhook_urls: Option<Vec<Spanned<String>>>,
    webhook_allow_private_targets: Option<bool>,
    webhook_queue_capacity: Option<Spanned<i64>>,
    webhook_concurrency: Option<Spanned<i64>>,
    metrics_token: Option<Spanned<String>>,
    otlp_endpoint: Option<Spanned<String>>,
    otlp_headers: Option<Spanned<BTreeMap<String, String>>>,
    otlp_sample_ratio: Option<Spanned<f64>>,
    image_fetch_allow_private_targets: Option<bool>,
    judge_timeout_ms: Option<Spanned<i64>>,
    incident_sample_share: Option<Spanned<f64>>,
    incident_window_seconds: Option<Spanned<i64>>,
    incident_refusal_burst: Option<Spanned<i64>>,
    compliance_sweep_seconds: Option<Spanned<i64>>,
    store_cache_mb: Option<Spanned<i64>>,
    usage_retention_days: Option<Spanned<i64>>,
    audit_retention_days: Option<Spanned<i64>>,
    risk_rules_dir: Option<Spanned<PathBuf>>,
    sso: Option<crate::sso::config::RawSso>,
    #[serde(default)]
    providers: Vec<providers::RawProvider>,
    #[serde(default)]
    models: Vec<models::RawModel>,
}

/// The file's text deserialized; a syntax error, an unknown key or a wrong
/// type names its line and key.
pub(super) fn deserialize(at: &At) -> Result<RawConfig, ConfigError> {
    let file = || at.file_name.clone();
    let deserializer = toml::Deserializer::parse(at.text).map_err(|e| ConfigError {
        origin: e.span().map_or_else(file, |s| at.line(s)),
        key: String::new(),
        message: e.message().trim().to_owned(),
    })?;
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        // `Spanned` shows up in the path as a private field; hide it.
        let key = e
            .path()
            .to_string()
            .replace(".$__serde_spanned_private_value", "");
        let inner = e.into_inner();
        ConfigError {
            origin: inner.span().map_or_else(file, |s| at.line(s)),
            key: if key == "." { String::new() } else { key },
            message: inner.message().trim().to_owned(),
        }
    })
}

/// The whole configuration from the file's raw values and the
/// environment, with the flags on top.
pub(super) fn assemble(
    source: ConfigSource,
    raw: RawConfig,
    at: &At,
    overrides: &Overrides,
) -> Result<Config, ConfigError> {
    let mut config = Config {
        source,
        listen: listen(raw.listen, at)?,
        data_dir: at
            .env("TOLLGATE_DATA_DIR")
            .map(PathBuf::from)
            .or(raw.data_dir)
            .unwrap_or_else(|| PathBuf::from(decl::DATA_DIR.text_default())),
        log_format: log_format(raw.log_format, at)?,
        log_level: log_level(raw.log_level, at)?,
        default_rate_limit: decl::DEFAULT_RATE_LIMIT.whole(raw.default_rate_limit, at)? as u32,
        free_multimodal_per_day: decl::FREE_MULTIMODAL_PER_DAY
            .whole(raw.free_multimodal_per_day, at)? as u32,
        session_ttl: Duration::from_secs(
            decl::SESSION_TTL_HOURS.whole(raw.session_ttl_hours, at)? * 3600,
        ),
        shutdown_grace: Duration::from_secs(
            decl::SHUTDOWN_GRACE_SECONDS.whole(raw.shutdown_grace_seconds, at)?,
        ),
        header_read_timeout: Duration::from_secs(
            decl::HEADER_READ_TIMEOUT_SECONDS.whole(raw.header_read_timeout_seconds, at)?,
        ),
        body_read_timeout: Duration::from_secs(
            decl::BODY_READ_TIMEOUT_SECONDS.whole(raw.body_read_timeout_seconds, at)?,
        ),
        owner_email: owner_email(raw.owner_email, at)?,
        webhook_urls: webhook_urls(raw.webhook_urls, at)?,
        webhook_allow_private_targets: decl::WEBHOOK_ALLOW_PRIVATE_TARGETS
            .flag(raw.webhook_allow_private_targets, at)?,
        webhook_queue_capacity: decl::WEBHOOK_QUEUE_CAPACITY
            .whole(raw.webhook_queue_capacity, at)? as usize,
        webhook_concurrency: decl::WEBHOOK_CONCURRENCY.whole(raw.webhook_concurrency, at)? as usize,
        image_fetch_allow_private_targets: decl::IMAGE_FETCH_ALLOW_PRIVATE_TARGETS
            .flag(raw.image_fetch_allow_private_targets, at)?,
        metrics_token: metrics_token(raw.metrics_token, at)?,
        otlp_endpoint: otlp_endpoint(raw.otlp_endpoint, at)?,
        otlp_headers: otlp_headers(raw.otlp_headers, at)?,
        otlp_sample_ratio: decl::OTLP_SAMPLE_RATIO.number(raw.otlp_sample_ratio, at)?,
        judge_timeout_ms: decl::JUDGE_TIMEOUT_MS.whole(raw.judge_timeout_ms, at)?,
        incident_sample_share: decl::INCIDENT_SAMPLE_SHARE.number(raw.incident_sample_share, at)?,
        incident_window_seconds: decl::INCIDENT_WINDOW_SECONDS
            .whole(raw.incident_window_seconds, at)?,
        incident_refusal_burst: decl::INCIDENT_REFUSAL_BURST
            .whole(raw.incident_refusal_burst, at)? as u32,
        compliance_sweep_seconds: decl::COMPLIANCE_SWEEP_SECONDS
            .whole(raw.compliance_sweep_seconds, at)?,
        store_cache_mb: decl::STORE_CACHE_MB.whole(raw.store_cache_mb, at)?,
        usage_retention_days: decl::USAGE_RETENTION_DAYS.whole(raw.usage_retention_days, at)?
            as u32,
        audit_retention_days: decl::AUDIT_RETENTION_DAYS.whole(raw.audit_retention_days, at)?
            as u32,
        risk_rules_dir: None,
        risk_rules: RiskRules::BuiltIn,
        sso: None,
        providers: Vec::new(),
        models: Vec::new(),
    };
    (config.risk_rules_dir, config.risk_rules) = risk_rules(raw.risk_rules_dir, at)?;
    let bad = |span, key: String, message| at.bad(span, &key, message);
    config.sso = (raw.sso)
        .map(|raw| crate::sso::config::validate(raw, &bad, at.env))
        .transpose()?;
    config.providers = providers::read(raw.providers, at)?;
    config.models = models::read(raw.models, &config.providers, at)?;
    apply_flags(&mut config, overrides);
    Ok(config)
}

/// The command line's flags: the top layer.
fn apply_flags(config: &mut Config, overrides: &Overrides) {
    if let Some(v) = overrides.listen {
        config.listen = v;
    }
    if let Some(v) = &overrides.data_dir {
        config.data_dir = v.clone();
    }
    if let Some(v) = overrides.log_format {
        config.log_format = v;
    }
}

fn listen(file: Option<SocketAddr>, at: &At) -> Result<SocketAddr, ConfigError> {
    match at.env("TOLLGATE_LISTEN") {
        Some(v) => v.parse().map_err(|_| {
            env_error(
                "TOLLGATE_LISTEN",
                format!("`{v}` is not an address like 127.0.0.1:8080"),
            )
        }),
        None => Ok(file.unwrap_or_else(|| decl::LISTEN.text_default().parse().expect("declared"))),
    }
}

fn log_format(file: Option<LogFormat>, at: &At) -> Result<LogFormat, ConfigError> {
    match at.env("TOLLGATE_LOG_FORMAT") {
        Some(v) => v.parse().map_err(|m| env_error("TOLLGATE_LOG_FORMAT", m)),
        None => {
            Ok(file.unwrap_or_else(|| decl::LOG_FORMAT.text_default().parse().expect("declared")))
        }
    }
}

fn log_level(file: Option<Spanned<String>>, at: &At) -> Result<String, ConfigError> {
    match (at.env("TOLLGATE_LOG_LEVEL"), file) {
        (Some(v), _) => {
            check_log_level(&v).map_err(|m| env_error("TOLLGATE_LOG_LEVEL", m))?;
            Ok(v)
        }
        (None, Some(v)) => {
            check_log_level(v.get_ref()).map_err(|m| at.bad(v.span(), "log_level", m))?;
            Ok(v.into_inner())
        }
        (None, None) => Ok(decl::LOG_LEVEL.text_default().to_owned()),
    }
}

fn check_log_level(filter: &str) -> Result<(), String> {
    tracing_subscriber::EnvFilter::try_new(filter)
        .map(|_| ())
        .map_err(|e| {
            format!("`{filter}` is not a log filter such as `info` or `tollgate=debug,info` ({e})")
        })
}

fn owner_email(file: Option<Spanned<String>>, at: &At) -> Result<String, ConfigError> {
    use crate::auth::accounts::normalize_email;
    match (at.env("TOLLGATE_OWNER_EMAIL"), file) {
        (Some(v), _) => normalize_email(&v).map_err(|m| env_error("TOLLGATE_OWNER_EMAIL", m)),
        (None, Some(v)) => {
            normalize_email(v.get_ref()).map_err(|m| at.bad(v.span(), "owner_email", m))
        }
        (None, None) => Ok(decl::OWNER_EMAIL.text_default().to_owned()),
    }
}

fn webhook_urls(file: Option<Vec<Spanned<String>>>, at: &At) -> Result<Vec<Url>, ConfigError> {
    let mut urls = Vec::new();
    for (i, url) in file.unwrap_or_default().into_iter().enumerate() {
        let parsed = parse_http_url(url.get_ref())
            .map_err(|m| at.bad(url.span(), &format!("webhook_urls[{i}]"), m))?;
        urls.push(parsed);
    }
    // The spec fixes this name; it adds to the file's list rather than
    // replacing it, so operator URLs can live in either place.
    if let Some(v) = at.env("WEBHOOK_URLS") {
        for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            urls.push(parse_http_url(part).map_err(|m| env_error("WEBHOOK_URLS", m))?);
        }
    }
    Ok(urls)
}

fn metrics_token(file: Option<Spanned<String>>, at: &At) -> Result<Option<Secret>, ConfigError> {
    const SHORT: &str = "must be at least 16 characters";
    let mut token = match file {
        Some(v) if v.get_ref().trim().len() < 16 => {
            return Err(at.bad(v.span(), "metrics_token", SHORT.into()));
        }
        Some(v) => Some(Secret::new(v.into_inner().trim().to_owned())),
        None => None,
    };
    if let Some(v) = at.env("TOLLGATE_METRICS_TOKEN") {
        if v.trim().len() < 16 {
            return Err(env_error("TOLLGATE_METRICS_TOKEN", SHORT.into()));
        }
        token = Some(Secret::new(v.trim().to_owned()));
    }
    Ok(token)
}

fn otlp_endpoint(file: Option<Spanned<String>>, at: &At) -> Result<Option<Url>, ConfigError> {
    let mut endpoint = match file {
        Some(v) => {
            Some(parse_http_url(v.get_ref()).map_err(|m| at.bad(v.span(), "otlp_endpoint", m))?)
        }
        None => None,
    };
    if let Some(v) = at.env("TOLLGATE_OTLP_ENDPOINT") {
        endpoint = if v.trim().is_empty() {
            None
        } else {
            Some(parse_http_url(v.trim()).map_err(|m| env_error("TOLLGATE_OTLP_ENDPOINT", m))?)
        };
    }
    Ok(endpoint)
}

fn otlp_headers(
    file: Option<Spanned<BTreeMap<String, String>>>,
    at: &At,
) -> Result<Vec<(String, Secret)>, ConfigError> {
    let Some(headers) = file else {
        return Ok(Vec::new());
    };
    let span = headers.span();
    let mut out = Vec::new();
    for (name, value) in headers.into_inner() {
        let valid = axum::http::HeaderName::from_bytes(name.as_bytes()).is_ok()
            && axum::http::HeaderValue::from_str(&value).is_ok();
        if !valid {
            // The value is a secret: the message names the header only.
            return Err(at.bad(
                span,
                "otlp_headers",
                format!(
                    "`{name}` is not a valid header name, or its value is not a valid header value"
                ),
            ));
        }
        out.push((name, Secret::new(value)));
    }
    Ok(out)
}

/// The risk rules directory (the environment's over the file's) and the
/// classifier compiled from it; a bad pack refuses the configuration.
fn risk_rules(
    file: Option<Spanned<PathBuf>>,
    at: &At,
) -> Result<(Option<PathBuf>, RiskRules), ConfigError> {
    let (dir, span) = match (at.env("TOLLGATE_RISK_RULES_DIR"), file) {
        (Some(v), _) => (PathBuf::from(v), None),
        (None, Some(v)) => (v.get_ref().clone(), Some(v.span())),
        // Compiled on first use; configurations without an override
        // share one compiled copy.
        (None, None) => return Ok((None, RiskRules::BuiltIn)),
    };
    let classifier = Classifier::load(Some(&dir)).map_err(|e| match span {
        Some(span) => at.bad(span, "risk_rules_dir", e.to_string()),
        None => env_error("TOLLGATE_RISK_RULES_DIR", e.to_string()),
    })?;
    Ok((Some(dir), RiskRules::Loaded(Arc::new(classifier))))
}

/// An http(s) URL with a host.
pub(super) fn parse_http_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|e| format!("`{text}` is not a URL ({e})"))?;
    match url.scheme() {
        "http" | "https" if url.host().is_some() => Ok(url),
        _ => Err(format!("`{text}` must be an http(s) URL with a host")),
    }
}
