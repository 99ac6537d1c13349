//! The `[sso]` table: raw as the file writes it, validated once into
//! [`SsoConfig`]. The client secret never lives in the file: the table names
//! the environment variable that holds it, and the value is kept in a
//! [`Secret`] that prints as `***`.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;
use url::Url;

use crate::auth::accounts::Role;
use crate::base::config_error::ConfigError;
use crate::base::secret::Secret;

/// The path the provider sends the browser back to.
pub const CALLBACK_PATH: &str = "/api/v1/auth/oidc/callback";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSso {
    issuer: Spanned<String>,
    client_id: Spanned<String>,
    client_secret_env: Spanned<String>,
    redirect_url: Spanned<String>,
    scopes: Option<Spanned<Vec<String>>>,
    role_claim: Option<Spanned<String>>,
    #[serde(default)]
    role_map: BTreeMap<String, Spanned<String>>,
    default_tenant: Option<Spanned<String>>,
    #[serde(default)]
    allowed_email_domains: Vec<Spanned<String>>,
    #[serde(default)]
    create_accounts: bool,
    password_login: Option<bool>,
}

/// Single sign-on with an OpenID Connect provider, validated.
#[derive(Debug, Clone)]
pub struct SsoConfig {
    /// The provider's issuer identifier, exactly as its ID tokens' `iss`.
    pub issuer: String,
    pub client_id: String,
    /// The environment variable holding the client secret.
    pub client_secret_env: String,
    pub client_secret: Secret,
    /// The public URL of `GET /api/v1/auth/oidc/callback`.
    pub redirect_url: Url,
    /// Scopes asked for; always include `openid`.
    pub scopes: Vec<String>,
    /// The ID token claim whose value(s) pick the role, with `role_map`.
    pub role_claim: Option<String>,
    pub role_map: BTreeMap<String, Role>,
    /// The tenant of accounts created by a first sign-in.
    pub default_tenant: Option<String>,
    /// Lower-cased email domains allowed to sign in; empty allows any.
    pub allowed_email_domains: Vec<String>,
    /// A first sign-in of an unknown email creates its account.
    pub create_accounts: bool,
    /// Password sign-in stays open (false: only the bootstrap owner may).
    pub password_login: bool,
}

impl SsoConfig {
    /// The discovery document's URL.
    pub fn discovery_url(&self) -> String {
        format!(
            "{}/.well-known/openid-configuration",
            self.issuer.trim_end_matches('/')
        )
    }
}

/// A URL the gateway talks to the provider through: https, or http on a
/// loopback host (a provider on the same machine, tests).
fn provider_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text.trim()).map_err(|e| format!("`{text}` is not a URL: {e}"))?;
    let loopback = matches!(
        url.host(),
        Some(url::Host::Domain("localhost"))
            | Some(url::Host::Ipv4(std::net::Ipv4Addr::LOCALHOST))
            | Some(url::Host::Ipv6(std::net::Ipv6Addr::LOCALHOST))
    );
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        _ => {
            return Err(format!(
                "`{text}` must be an https URL (http only on loopback)"
            ));
        }
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("`{text}` must not have a query or a fragment"));
    }
    Ok(url)
}

/// Builds the error for a field: its span, its dotted key, the message.
type Bad<'a> = &'a dyn Fn(Range<usize>, String, String) -> ConfigError;

fn key(field: &str) -> String {
    format!("sso.{field}")
}

pub(crate) fn validate(
    raw: RawSso,
    bad: Bad<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<SsoConfig, ConfigError> {
    let issuer = raw.issuer.get_ref().trim().to_owned();
    provider_url(&issuer).map_err(|m| bad(raw.issuer.span(), key("issuer"), m))?;
    let client_id = raw.client_id.get_ref().trim().to_owned();
    if client_id.is_empty() {
        return Err(bad(
            raw.client_id.span(),
            key("client_id"),
            "must not be empty".into(),
        ));
    }
    let (name, client_secret) = client_secret(&raw.client_secret_env, bad, env)?;
    let redirect_url = redirect_url(&raw.redirect_url, bad)?;
    let scopes = scopes(raw.scopes, bad)?;
    let (role_claim, role_map) = roles(raw.role_claim, raw.role_map, raw.issuer.span(), bad)?;
    let default_tenant = raw.default_tenant.map(|t| t.into_inner().trim().to_owned());
    if raw.create_accounts && (role_claim.is_none() || default_tenant.is_none()) {
        return Err(bad(
            raw.issuer.span(),
            key("create_accounts"),
            "needs `role_claim`, `role_map` and `default_tenant`: a new account takes its role from the token and lives in that tenant".into(),
        ));
    }
    let allowed_email_domains = email_domains(raw.allowed_email_domains, bad)?;
    Ok(SsoConfig {
        issuer,
        client_id,
        client_secret_env: name,
        client_secret,
        redirect_url,
        scopes,
        role_claim,
        role_map,
        default_tenant,
        allowed_email_domains,
        create_accounts: raw.create_accounts,
        password_login: raw.password_login.unwrap_or(true),
    })
}

/// The secret's environment variable name, and its (non-blank) value.
fn client_secret(
    env_name: &Spanned<String>,
    bad: Bad<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(String, Secret), ConfigError> {
    let name = env_name.get_ref().trim().to_owned();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(bad(
            env_name.span(),
            key("client_secret_env"),
            format!("`{name}` is not an environment variable name"),
        ));
    }
    let client_secret = env(&name)
        .filter(|v| !v.trim().is_empty())
        .map(|v| Secret::new(v.trim().to_owned()))
        .ok_or_else(|| {
            bad(
                env_name.span(),
                key("client_secret_env"),
                format!(
                    "the environment variable `{name}` is not set; it must hold the client secret"
                ),
            )
        })?;
    Ok((name, client_secret))
}

/// The redirect URL: an http(s) URL whose path is [`CALLBACK_PATH`].
fn redirect_url(raw: &Spanned<String>, bad: Bad<'_>) -> Result<Url, ConfigError> {
    Url::parse(raw.get_ref().trim())
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.path() == CALLBACK_PATH)
        .filter(|u| u.query().is_none() && u.fragment().is_none())
        .ok_or_else(|| {
            bad(
                raw.span(),
                key("redirect_url"),
                format!(
                    "`{}` must be the public http(s) URL of {CALLBACK_PATH}, such as https://gateway.example.com{CALLBACK_PATH}",
                    raw.get_ref()
                ),
            )
        })
}

/// The scopes asked for: the configured list (with `openid`), or the
/// default `openid email profile`.
fn scopes(raw: Option<Spanned<Vec<String>>>, bad: Bad<'_>) -> Result<Vec<String>, ConfigError> {
    Ok(match raw {
        Some(s) => {
            let list: Vec<String> = s.get_ref().iter().map(|v| v.trim().to_owned()).collect();
            if !list.iter().any(|v| v == "openid")
                || list.iter().any(|v| v.is_empty() || v.contains(' '))
            {
                return Err(bad(
                    s.span(),
                    key("scopes"),
                    "must include `openid`, one scope per string".into(),
                ));
            }
            list
        }
        None => vec!["openid".into(), "email".into(), "profile".into()],
    })
}

/// The role claim and its value-to-role map: both or neither.
/// `issuer_span` points the error at the table when the claim is missing.
fn roles(
    raw_claim: Option<Spanned<String>>,
    raw_map: BTreeMap<String, Spanned<String>>,
    issuer_span: Range<usize>,
    bad: Bad<'_>,
) -> Result<(Option<String>, BTreeMap<String, Role>), ConfigError> {
    let mut role_map = BTreeMap::new();
    for (value, role) in raw_map {
        let parsed: Role = role
            .get_ref()
            .parse()
            .map_err(|m| bad(role.span(), key(&format!("role_map.{value}")), m))?;
        role_map.insert(value, parsed);
    }
    let role_claim = raw_claim.map(|c| {
        let claim = c.get_ref().trim().to_owned();
        (claim, c.span())
    });
    match &role_claim {
        Some((claim, span)) if claim.is_empty() || role_map.is_empty() => {
            return Err(bad(
                span.clone(),
                key("role_claim"),
                "needs a claim name and a non-empty `role_map` (claim value = role)".into(),
            ));
        }
        None if !role_map.is_empty() => {
            return Err(bad(
                issuer_span,
                key("role_map"),
                "has no effect without `role_claim`".into(),
            ));
        }
        _ => {}
    }
    Ok((role_claim.map(|(c, _)| c), role_map))
}

/// The allowed email domains, lower-cased, without a leading `@`.
fn email_domains(raw: Vec<Spanned<String>>, bad: Bad<'_>) -> Result<Vec<String>, ConfigError> {
    let mut allowed_email_domains = Vec::new();
    for d in raw {
        let domain = d.get_ref().trim().trim_start_matches('@').to_lowercase();
        if domain.is_empty() || domain.contains('@') || domain.contains(' ') {
            return Err(bad(
                d.span(),
                key("allowed_email_domains"),
                format!("`{}` is not an email domain", d.get_ref()),
            ));
        }
        allowed_email_domains.push(domain);
    }
    Ok(allowed_email_domains)
}
