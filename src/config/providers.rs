//! The `[[providers]]` tables: each key declared once (the "Providers"
//! table of docs/configuration.md is these rows), the table as written,
//! and its reading into the providers' own settings
//! ([`ProviderConfig`]). A cloud kind's fields are checked by
//! `upstream::cloud`, which owns them.

use std::collections::HashSet;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::parse::parse_http_url;
use super::setting::Default::{Doc, Required, Text, Whole};
use super::setting::Ty::{self, Shape};
use super::setting::{At, Setting, is_env_name};
use crate::base::config_error::ConfigError;
use crate::base::secret::Secret;
use crate::catalogue::ProviderKind;
use crate::upstream::{
    BedrockSettings, CooldownPolicy, ProviderConfig, ResponsesMode, RetryPolicy,
};

const ID: Setting = Setting::new(
    "id",
    Shape("string"),
    Required,
    "Unique and non-empty (surrounding spaces are trimmed).",
);
const KIND: Setting = Setting::new(
    "kind",
    Shape("`openai`, `anthropic`, `gemini`, `azure`, `vertex`, `bedrock` or `mock`"),
    Required,
    "The wire format. `openai` also covers OpenAI-compatible servers (vLLM, Ollama, Groq, ...). `azure` (Azure OpenAI), `vertex` (Google Vertex AI) and `bedrock` (AWS Bedrock's Converse API) take the keys below ([providers.md](providers.md)). `mock` is the built-in deterministic provider.",
);
const BASE_URL: Setting = Setting::new(
    "base_url",
    Shape("URL"),
    Doc(
        "required unless `kind` is `mock`, `vertex` (default `https://{location}-aiplatform.googleapis.com`) or `bedrock` (default `https://bedrock-runtime.{region}.amazonaws.com`)",
    ),
    "The API root, for example `https://api.openai.com/v1`. It must be `http` or `https` with a host.",
);
const API_KEY_ENV: Setting = Setting::new(
    "api_key_env",
    Shape("string"),
    Doc("none (required for `azure`)"),
    "The **name** of the environment variable holding the provider's API key. Letters, digits and `_` only.",
);
const API_VERSION: Setting = Setting::new(
    "api_version",
    Shape("string"),
    Doc("required for `azure`, refused otherwise"),
    "Azure OpenAI's `api-version` query parameter ([providers.md](providers.md#azure-openai-kind--azure)).",
);
const PROJECT: Setting = Setting::new(
    "project",
    Shape("string"),
    Doc("required for `vertex`, refused otherwise"),
    "The Google Cloud project of a Vertex AI provider ([providers.md](providers.md#google-vertex-ai-kind--vertex)).",
);
const LOCATION: Setting = Setting::new(
    "location",
    Shape("string"),
    Doc("required for `vertex`, refused otherwise"),
    "The Google Cloud region of a Vertex AI provider, such as `europe-west4`.",
);
const CREDENTIALS_FILE: Setting = Setting::new(
    "credentials_file",
    Shape("path"),
    Doc("`vertex` only"),
    "A service account key file, read and validated at start. Exactly one of it and `access_token_env`.",
);
const ACCESS_TOKEN_ENV: Setting = Setting::new(
    "access_token_env",
    Shape("string"),
    Doc("`vertex` only"),
    "The **name** of the environment variable holding an OAuth access token, instead of `credentials_file`.",
);
const REGION: Setting = Setting::new(
    "region",
    Shape("string"),
    Doc("required for `bedrock`, refused otherwise"),
    "The AWS region, such as `eu-central-1`: the signing scope and the default endpoint's host ([providers.md](providers.md#aws-bedrock-kind--bedrock)).",
);
const AWS_ACCESS_KEY_ID_ENV: Setting = Setting::new(
    "aws_access_key_id_env",
    Shape("string"),
    Text("AWS_ACCESS_KEY_ID"),
    "`bedrock` only (refused on other kinds): the **name** of the variable holding the access key id.",
);
const AWS_SECRET_ACCESS_KEY_ENV: Setting = Setting::new(
    "aws_secret_access_key_env",
    Shape("string"),
    Text("AWS_SECRET_ACCESS_KEY"),
    "`bedrock` only: the **name** of the variable holding the secret access key.",
);
const AWS_SESSION_TOKEN_ENV: Setting = Setting::new(
    "aws_session_token_env",
    Shape("string"),
    Text("AWS_SESSION_TOKEN"),
    "`bedrock` only: the **name** of the variable holding a session token (unset: none is sent).",
);
const CONNECT_TIMEOUT_MS: Setting = Setting::new(
    "connect_timeout_ms",
    Ty::whole(0, u64::MAX, "milliseconds"),
    Whole(5_000),
    "Connect timeout per upstream attempt.",
);
const FIRST_BYTE_TIMEOUT_MS: Setting = Setting::new(
    "first_byte_timeout_ms",
    Ty::whole(0, u64::MAX, "milliseconds"),
    Whole(60_000),
    "Time allowed per attempt until the first response byte. A stream that then goes silent for as long ends with an error event.",
);
const MAX_RETRIES: Setting = Setting::new(
    "max_retries",
    Ty::whole(0, 100, "retries"),
    Whole(2),
    "Retries of the same deployment after a retryable failure (connect error, timeout before the first byte, 429, 5xx). 400, 401, 403, 404, 413 and 422 are never retried, nor a stream whose first byte reached the caller ([routing.md](routing.md)).",
);
const RETRY_BACKOFF_MS: Setting = Setting::new(
    "retry_backoff_ms",
    Ty::whole(0, 600_000, "milliseconds"),
    Whole(200),
    "Base of the exponential backoff with full jitter: retry *n* waits a random time between 0 and `retry_backoff_ms` × 2^(*n*−1).",
);
const RETRY_AFTER_CAP_MS: Setting = Setting::new(
    "retry_after_cap_ms",
    Ty::whole(0, 3_600_000, "milliseconds"),
    Whole(10_000),
    "An upstream `retry-after-ms` or `Retry-After` (seconds) up to this is waited out before retrying the same deployment; a longer one moves on to the next deployment at once.",
);
const REQUEST_TIMEOUT_MS: Setting = Setting::new(
    "request_timeout_ms",
    Ty::whole(1, 3_600_000, "milliseconds"),
    Whole(120_000),
    "Time a request may spend on one of this provider's deployments, counted from its first attempt there, retries included: no attempt (the first included) runs past it and no retry starts that would. A model's own `request_timeout_ms` wins ([routing.md](routing.md#time-budget)).",
);
const COOLDOWN_AFTER_FAILURES: Setting = Setting::new(
    "cooldown_after_failures",
    Ty::whole(1, 1_000, "failures"),
    Whole(3),
    "Consecutive retryable failures of a deployment that put it in cooldown.",
);
const COOLDOWN_SECONDS: Setting = Setting::new(
    "cooldown_seconds",
    Ty::whole(0, 86_400, "seconds"),
    Whole(30),
    "How long a deployment in cooldown gets no traffic while another deployment of its model is healthy; then one probe request decides (half-open).",
);
const RESPONSES: Setting = Setting::new(
    "responses",
    Shape("`passthrough` or `translate`"),
    Doc("`passthrough`"),
    "`kind = \"openai\"` only. How `POST /v1/responses` reaches this provider: forwarded to `{base_url}/responses` (OpenAI), or `translate`d to `{base_url}/chat/completions` for OpenAI-compatible servers without a Responses API (vLLM, Ollama, ...). Any other value, or the key on another kind (always translated), is refused at start and by `tollgate config check` ([responses.md](responses.md)).",
);

/// Every key of a `[[providers]]` table, in the docs' order.
pub const PROVIDER_KEYS: &[Setting] = &[
    ID,
    KIND,
    BASE_URL,
    API_KEY_ENV,
    API_VERSION,
    PROJECT,
    LOCATION,
    CREDENTIALS_FILE,
    ACCESS_TOKEN_ENV,
    REGION,
    AWS_ACCESS_KEY_ID_ENV,
    AWS_SECRET_ACCESS_KEY_ENV,
    AWS_SESSION_TOKEN_ENV,
    CONNECT_TIMEOUT_MS,
    FIRST_BYTE_TIMEOUT_MS,
    MAX_RETRIES,
    RETRY_BACKOFF_MS,
    RETRY_AFTER_CAP_MS,
    REQUEST_TIMEOUT_MS,
    COOLDOWN_AFTER_FAILURES,
    COOLDOWN_SECONDS,
    RESPONSES,
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProvider {
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
    connect_timeout_ms: Option<Spanned<i64>>,
    first_byte_timeout_ms: Option<Spanned<i64>>,
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

/// Every provider, checked; ids are unique.
pub(super) fn read(raw: Vec<RawProvider>, at: &At) -> Result<Vec<ProviderConfig>, ConfigError> {
    let mut providers = Vec::new();
    let mut ids = HashSet::new();
    for (i, p) in raw.into_iter().enumerate() {
        let key = |field: &str| format!("providers[{i}].{field}");
        let id = p.id.get_ref().trim().to_owned();
        if id.is_empty() || !ids.insert(id.clone()) {
            let why = if id.is_empty() {
                "must not be empty".to_owned()
            } else {
                format!("provider `{id}` is declared twice")
            };
            return Err(at.bad(p.id.span(), &key("id"), why));
        }
        providers.push(provider(id, p, &key, at)?);
    }
    Ok(providers)
}

/// A declared whole number of a provider, or its default.
fn whole(
    setting: &Setting,
    value: &Option<Spanned<i64>>,
    key: &impl Fn(&str) -> String,
    at: &At,
) -> Result<u64, ConfigError> {
    match value {
        Some(v) => setting.check_whole(v, &key(setting.key), at),
        None => Ok(setting.whole_default()),
    }
}

fn provider(
    id: String,
    p: RawProvider,
    key: &impl Fn(&str) -> String,
    at: &At,
) -> Result<ProviderConfig, ConfigError> {
    let bedrock = bedrock_settings(&p, key, at)?;
    let cloud = crate::upstream::cloud::validate(
        p.kind,
        crate::upstream::cloud::RawCloud {
            api_version: p.api_version.clone(),
            project: p.project.clone(),
            location: p.location.clone(),
            credentials_file: p.credentials_file.clone(),
            access_token_env: p.access_token_env.clone(),
        },
        at.env,
    )
    .map_err(|(span, field, m)| at.bad(span.unwrap_or_else(|| p.id.span()), &key(field), m))?;
    let base_url = base_url(&p, bedrock.as_ref(), &cloud, key, at)?;
    let (api_key_env, api_key) = api_key(&p, key, at)?;
    let retry = RetryPolicy {
        max_retries: whole(&MAX_RETRIES, &p.max_retries, key, at)? as u32,
        backoff_base: Duration::from_millis(whole(
            &RETRY_BACKOFF_MS,
            &p.retry_backoff_ms,
            key,
            at,
        )?),
        retry_after_cap: Duration::from_millis(whole(
            &RETRY_AFTER_CAP_MS,
            &p.retry_after_cap_ms,
            key,
            at,
        )?),
    };
    let cooldown = CooldownPolicy {
        after_failures: whole(
            &COOLDOWN_AFTER_FAILURES,
            &p.cooldown_after_failures,
            key,
            at,
        )? as u32,
        duration: Duration::from_secs(whole(&COOLDOWN_SECONDS, &p.cooldown_seconds, key, at)?),
    };
    Ok(ProviderConfig {
        id,
        kind: p.kind,
        base_url,
        api_key_env,
        api_key,
        cloud,
        connect_timeout: Duration::from_millis(whole(
            &CONNECT_TIMEOUT_MS,
            &p.connect_timeout_ms,
            key,
            at,
        )?),
        first_byte_timeout: Duration::from_millis(whole(
            &FIRST_BYTE_TIMEOUT_MS,
            &p.first_byte_timeout_ms,
            key,
            at,
        )?),
        retry,
        cooldown,
        request_timeout: Duration::from_millis(whole(
            &REQUEST_TIMEOUT_MS,
            &p.request_timeout_ms,
            key,
            at,
        )?),
        bedrock,
        responses: responses(&p, key, at)?,
    })
}

fn base_url(
    p: &RawProvider,
    bedrock: Option<&BedrockSettings>,
    cloud: &crate::upstream::cloud::Cloud,
    key: &impl Fn(&str) -> String,
    at: &At,
) -> Result<Option<url::Url>, ConfigError> {
    Ok(match &p.base_url {
        Some(u) => {
            Some(parse_http_url(u.get_ref()).map_err(|m| at.bad(u.span(), &key("base_url"), m))?)
        }
        None if p.kind == ProviderKind::Bedrock => {
            bedrock.map(|b| crate::providers::bedrock::default_base_url(&b.region))
        }
        // Vertex: the location's regional endpoint.
        None if p.kind == ProviderKind::Vertex => match cloud.vertex() {
            Some(vertex) => Some(
                crate::providers::vertex::default_base_url(&vertex.location)
                    .map_err(|m| at.bad(p.id.span(), &key("location"), m))?,
            ),
            None => None,
        },
        None if p.kind.needs_base_url() => {
            return Err(at.bad(
                p.id.span(),
                &key("base_url"),
                format!("provider kind `{}` needs base_url", p.kind.as_str()),
            ));
        }
        None => None,
    })
}

/// The API key's variable and the key read from it (absent when unset
/// or empty; `azure` needs the variable named).
fn api_key(
    p: &RawProvider,
    key: &impl Fn(&str) -> String,
    at: &At,
) -> Result<(Option<String>, Option<Secret>), ConfigError> {
    let Some(name) = &p.api_key_env else {
        if p.kind == ProviderKind::Azure {
            return Err(at.bad(
                p.id.span(),
                &key("api_key_env"),
                "provider kind `azure` needs api_key_env (the variable holding its api-key)".into(),
            ));
        }
        return Ok((None, None));
    };
    let n = name.get_ref();
    if !is_env_name(n) {
        return Err(at.bad(
            name.span(),
            &key("api_key_env"),
            format!("`{n}` is not an environment variable name"),
        ));
    }
    let secret = at.env(n).filter(|v| !v.is_empty()).map(Secret::new);
    Ok((Some(n.clone()), secret))
}

fn responses(
    p: &RawProvider,
    key: &impl Fn(&str) -> String,
    at: &At,
) -> Result<ResponsesMode, ConfigError> {
    let Some(mode) = &p.responses else {
        return Ok(ResponsesMode::Passthrough);
    };
    if p.kind != ProviderKind::Openai {
        return Err(at.bad(
            mode.span(),
            &key("responses"),
            format!(
                "`responses` applies to providers of kind `openai` only (this one is `{}`); other kinds are always translated",
                p.kind.as_str()
            ),
        ));
    }
    match mode.get_ref().as_str() {
        "passthrough" => Ok(ResponsesMode::Passthrough),
        "translate" => Ok(ResponsesMode::Translate),
        other => Err(at.bad(
            mode.span(),
            &key("responses"),
            format!("`{other}` is not a mode: use `passthrough` or `translate`"),
        )),
    }
}

/// The `bedrock` settings of a provider: `region` required (it names the
/// endpoint's host and the signing scope), the credentials' variable names
/// defaulted to the AWS SDKs' own. The AWS fields on another kind are a
/// mistake and refused.
fn bedrock_settings(
    p: &RawProvider,
    key: &impl Fn(&str) -> String,
    at: &At,
) -> Result<Option<BedrockSettings>, ConfigError> {
    let aws_fields = [
        (&REGION, &p.region),
        (&AWS_ACCESS_KEY_ID_ENV, &p.aws_access_key_id_env),
        (&AWS_SECRET_ACCESS_KEY_ENV, &p.aws_secret_access_key_env),
        (&AWS_SESSION_TOKEN_ENV, &p.aws_session_token_env),
    ];
    if p.kind != ProviderKind::Bedrock {
        return match aws_fields
            .iter()
            .find_map(|(s, v)| v.as_ref().map(|v| (s.key, v)))
        {
            Some((name, value)) => Err(at.bad(
                value.span(),
                &key(name),
                format!(
                    "applies only to providers of kind `bedrock`, not `{}`",
                    p.kind.as_str()
                ),
            )),
            None => Ok(None),
        };
    }
    let Some(region) = &p.region else {
        return Err(at.bad(
            p.id.span(),
            &key("region"),
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
        return Err(at.bad(
            region.span(),
            &key("region"),
            format!("`{name}` is not an AWS region name (like `eu-central-1`)"),
        ));
    }
    let variable = |setting, value| credential(p, setting, value, key, at);
    let (access_key_id_env, access_key_id) =
        variable(&AWS_ACCESS_KEY_ID_ENV, &p.aws_access_key_id_env)?;
    let (secret_access_key_env, secret_access_key) =
        variable(&AWS_SECRET_ACCESS_KEY_ENV, &p.aws_secret_access_key_env)?;
    let (session_token_env, session_token) =
        variable(&AWS_SESSION_TOKEN_ENV, &p.aws_session_token_env)?;
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

/// One AWS credential: the variable named (or its declared default) and
/// its value, trimmed (absent when unset or empty).
fn credential(
    p: &RawProvider,
    setting: &Setting,
    value: &Option<Spanned<String>>,
    key: &impl Fn(&str) -> String,
    at: &At,
) -> Result<(String, Option<Secret>), ConfigError> {
    let n = value
        .as_ref()
        .map_or(setting.text_default(), |v| v.get_ref().as_str());
    if !is_env_name(n) {
        let span = value.as_ref().map_or(p.id.span(), Spanned::span);
        return Err(at.bad(
            span,
            &key(setting.key),
            format!("`{n}` is not an environment variable name"),
        ));
    }
    let secret = at
        .env(n)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .map(Secret::new);
    Ok((n.to_owned(), secret))
}
