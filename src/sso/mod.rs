//! Single sign-on for the dashboard with an OpenID Connect provider.
//!
//! The authorization code flow with PKCE (S256), `state` and `nonce`:
//! [`Sso::begin`] remembers a pending sign-in under its `state` and binds it
//! to the browser that started it (a cookie holding a random value whose
//! digest the pending sign-in keeps), so a callback URL carried to another
//! browser is refused. [`Sso::complete`] redeems the provider's code,
//! verifies the ID token ([`token`]), maps the claims to an account, and
//! hands the dashboard a one-time code, never a session token in a URL:
//! the page redeems it ([`Sso::redeem`]) once, within 60 s, for a session.
//!
//! Pending sign-ins and one-time codes are kept in memory (bounded, short
//! lived): a restart only makes a sign-in in progress start again. Every
//! refusal and every SSO sign-in is an audit entry.

pub mod config;
mod handoff;
pub mod provider;
pub mod token;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;

use self::config::SsoConfig;
use self::provider::Provider;
use self::token::{Expected, Failure, IdClaims};
use crate::audit::{self, Draft};
use crate::auth::accounts::{self, Account, Role};
use crate::base::ids::{random_token, sha256};
use crate::store::{Store, StoreError};

/// How long a started sign-in may take at the provider.
const PENDING_TTL: Duration = Duration::from_secs(600);
/// The most sign-ins (and one-time codes) kept at once; the oldest go first.
const MAX_ENTRIES: usize = 10_000;
/// The cookie binding a sign-in to the browser that started it.
pub const BINDING_COOKIE: &str = "tollgate_sso";

/// Why a sign-in was refused: the code the dashboard shows a message for
/// and the audit entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    BadState,
    ProviderDenied,
    ProviderError,
    InvalidToken,
    WrongIssuer,
    WrongAudience,
    TokenExpired,
    WrongNonce,
    EmailMissing,
    EmailUnverified,
    DomainNotAllowed,
    NoMappedRole,
    NoAccount,
    AccountDisabled,
    Internal,
}

impl Refusal {
    pub const ALL: [Refusal; 15] = [
        Refusal::BadState,
        Refusal::ProviderDenied,
        Refusal::ProviderError,
        Refusal::InvalidToken,
        Refusal::WrongIssuer,
        Refusal::WrongAudience,
        Refusal::TokenExpired,
        Refusal::WrongNonce,
        Refusal::EmailMissing,
        Refusal::EmailUnverified,
        Refusal::DomainNotAllowed,
        Refusal::NoMappedRole,
        Refusal::NoAccount,
        Refusal::AccountDisabled,
        Refusal::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::BadState => "sso_bad_state",
            Refusal::ProviderDenied => "sso_provider_denied",
            Refusal::ProviderError => "sso_provider_error",
            Refusal::InvalidToken => "sso_invalid_token",
            Refusal::WrongIssuer => "sso_wrong_issuer",
            Refusal::WrongAudience => "sso_wrong_audience",
            Refusal::TokenExpired => "sso_token_expired",
            Refusal::WrongNonce => "sso_wrong_nonce",
            Refusal::EmailMissing => "sso_email_missing",
            Refusal::EmailUnverified => "sso_email_unverified",
            Refusal::DomainNotAllowed => "sso_domain_not_allowed",
            Refusal::NoMappedRole => "sso_no_mapped_role",
            Refusal::NoAccount => "sso_no_account",
            Refusal::AccountDisabled => "sso_account_disabled",
            Refusal::Internal => "sso_internal",
        }
    }

    /// What the sign-in page says.
    pub fn message(self) -> &'static str {
        match self {
            Refusal::BadState => {
                "The single sign-on answer did not match a sign-in started in this browser (or it took more than 10 minutes). Start again."
            }
            Refusal::ProviderDenied => "The identity provider did not sign you in.",
            Refusal::ProviderError => {
                "The identity provider could not be reached or refused the gateway. Try again later or ask your operator."
            }
            Refusal::InvalidToken => "The identity provider's answer could not be verified.",
            Refusal::WrongIssuer => {
                "The identity token was issued by another provider than the one configured."
            }
            Refusal::WrongAudience => "The identity token was issued for another application.",
            Refusal::TokenExpired => {
                "The identity token has expired. Check the clocks, then sign in again."
            }
            Refusal::WrongNonce => {
                "The identity token does not belong to this sign-in. Start again."
            }
            Refusal::EmailMissing => "The identity provider did not share your email address.",
            Refusal::EmailUnverified => {
                "Your email address is not verified at the identity provider."
            }
            Refusal::DomainNotAllowed => "Your email domain is not allowed to sign in here.",
            Refusal::NoMappedRole => {
                "Your identity provider groups do not give you a role on this gateway."
            }
            Refusal::NoAccount => {
                "There is no dashboard account for your email address. Ask an owner or admin to create one."
            }
            Refusal::AccountDisabled => "Your dashboard account is disabled.",
            Refusal::Internal => {
                "The sign-in could not be completed. Try again; the gateway's log says why."
            }
        }
    }
}

/// What the provider's redirect carried.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    pub error: Option<String>,
}

/// A started sign-in: where to send the browser, and the cookie value
/// binding the sign-in to it.
pub struct Begun {
    pub location: String,
    pub binding: String,
}

/// A finished sign-in: the account, and the one-time code for the page.
pub struct Completed {
    pub account: Account,
    pub code: String,
}

struct Pending {
    binding: [u8; 32],
    verifier: String,
    nonce: String,
    at: Instant,
}

/// A refusal with what is known of who was refused, for the audit entry.
struct Refused {
    refusal: Refusal,
    email: Option<String>,
    account: Option<Account>,
    /// Logged, never shown: what went wrong in detail.
    detail: Option<String>,
}

impl From<Refusal> for Refused {
    fn from(refusal: Refusal) -> Self {
        Refused {
            refusal,
            email: None,
            account: None,
            detail: None,
        }
    }
}

pub struct Sso {
    pub config: Arc<SsoConfig>,
    provider: Provider,
    pending: Mutex<HashMap<String, Pending>>,
    handoffs: handoff::Handoffs,
}

/// Drops the entries expired at `now`, then the oldest ones while the
/// map is full.
fn make_room<K: Clone + Eq + std::hash::Hash, V>(
    map: &mut HashMap<K, V>,
    at: impl Fn(&V) -> Instant,
    ttl: Duration,
    now: Instant,
) {
    map.retain(|_, v| now.duration_since(at(v)) < ttl);
    while map.len() >= MAX_ENTRIES {
        let oldest = map
            .iter()
            .min_by_key(|(_, v)| at(v))
            .map(|(k, _)| k.clone())
            .expect("a full map has an oldest entry");
        map.remove(&oldest);
    }
}

impl Sso {
    pub fn new(config: SsoConfig) -> Sso {
        let config = Arc::new(config);
        Sso {
            provider: Provider::new(config.clone()),
            config,
            pending: Mutex::default(),
            handoffs: handoff::Handoffs::default(),
        }
    }

    /// Starts a sign-in: the authorization URL (code flow, PKCE S256,
    /// state, nonce) and the browser's binding cookie value.
    pub async fn begin(&self) -> Result<Begun, provider::ProviderError> {
        let discovery = self.provider.discovery().await?;
        let state = random_token(24);
        let nonce = random_token(24);
        let verifier = random_token(32);
        let binding = random_token(32);
        let challenge = URL_SAFE_NO_PAD.encode(sha256(verifier.as_bytes()));
        let mut location = discovery.authorization_endpoint.clone();
        location
            .query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.config.client_id)
            .append_pair("redirect_uri", self.config.redirect_url.as_str())
            .append_pair("scope", &self.config.scopes.join(" "))
            .append_pair("state", &state)
            .append_pair("nonce", &nonce)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256");
        let mut pending = self.pending.lock().expect("pending lock");
        make_room(&mut pending, |p| p.at, PENDING_TTL, Instant::now());
        pending.insert(
            state,
            Pending {
                binding: sha256(binding.as_bytes()),
                verifier,
                nonce,
                at: Instant::now(),
            },
        );
        Ok(Begun {
            location: location.into(),
            binding,
        })
    }

    /// Finishes a sign-in from the provider's redirect; every outcome is
    /// audited.
    pub async fn complete(
        &self,
        store: &Store,
        callback: Callback,
        binding: Option<&str>,
    ) -> Result<Completed, Refusal> {
        match self.attempt(store, callback, binding).await {
            Ok((completed, created)) => {
                let account = &completed.account;
                let draft = Draft::new(
                    &account.tenant_id,
                    format!("account:{}", account.id),
                    "auth.sso_sign_in",
                    &account.email,
                )
                .outcome("ok")
                .details(json!({
                    "issuer": self.config.issuer,
                    "role": account.role.as_str(),
                    "accountCreated": created,
                }));
                record(store, draft).await;
                tracing::info!(account = %account.id, created, "signed in with SSO");
                Ok(completed)
            }
            Err(refused) => {
                let (tenant, actor) = match &refused.account {
                    Some(a) => (a.tenant_id.as_str(), format!("account:{}", a.id)),
                    None => ("-", "anonymous".to_owned()),
                };
                let target = refused.email.as_deref().unwrap_or("-");
                let draft = Draft::new(tenant, actor, "auth.sso_refused", target)
                    .outcome(refused.refusal.as_str())
                    .details(json!({ "issuer": self.config.issuer }));
                record(store, draft).await;
                tracing::warn!(
                    refusal = refused.refusal.as_str(),
                    detail = refused.detail.as_deref().unwrap_or(""),
                    "an SSO sign-in was refused"
                );
                Err(refused.refusal)
            }
        }
    }

    async fn attempt(
        &self,
        store: &Store,
        callback: Callback,
        binding: Option<&str>,
    ) -> Result<(Completed, bool), Refused> {
        let pending = self.take_pending(callback.state.as_deref(), binding)?;
        if let Some(error) = callback.error {
            let mut refused = Refused::from(Refusal::ProviderDenied);
            refused.detail = Some(format!("the provider answered `{}`", cut(&error)));
            return Err(refused);
        }
        let code = callback.code.ok_or(Refusal::BadState)?;
        let claims = self.verified_claims(&code, &pending).await?;
        let (account, created) = self.account_for(store, &claims).await?;
        let code = self.handoffs.issue(&account.id, Instant::now());
        Ok((Completed { account, code }, created))
    }

    /// The unexpired pending sign-in the callback's `state` names, taken
    /// out (a state works once), if the browser's cookie binds it.
    fn take_pending(&self, state: Option<&str>, binding: Option<&str>) -> Result<Pending, Refusal> {
        let pending = state
            .and_then(|state| self.pending.lock().expect("pending lock").remove(state))
            .filter(|p| p.at.elapsed() < PENDING_TTL)
            .ok_or(Refusal::BadState)?;
        let bound = binding.is_some_and(|b| {
            subtle::ConstantTimeEq::ct_eq(&sha256(b.as_bytes())[..], &pending.binding[..]).into()
        });
        if !bound {
            return Err(Refusal::BadState);
        }
        Ok(pending)
    }

    /// Redeems the code and verifies the ID token, fetching the JWKS again
    /// once when the token's key is unknown (the provider rotated keys).
    async fn verified_claims(&self, code: &str, pending: &Pending) -> Result<IdClaims, Refused> {
        let provider_error = |e: provider::ProviderError| Refused {
            detail: Some(e.0),
            ..Refused::from(Refusal::ProviderError)
        };
        let id_token = self
            .provider
            .redeem(code, &pending.verifier)
            .await
            .map_err(provider_error)?;
        let expected = Expected {
            issuer: &self.config.issuer,
            client_id: &self.config.client_id,
            nonce: &pending.nonce,
        };
        let keys = self.provider.keys(false).await.map_err(provider_error)?;
        match token::verify(&id_token, &keys, &expected) {
            Err(Failure::UnknownKey) => {
                let keys = self.provider.keys(true).await.map_err(provider_error)?;
                token::verify(&id_token, &keys, &expected)
            }
            other => other,
        }
        .map_err(|f| match f {
            Failure::UnknownKey => Refused {
                detail: Some("the token's key is not in the provider's JWKS".into()),
                ..Refused::from(Refusal::InvalidToken)
            },
            Failure::Refused(r) => r.into(),
        })
    }

    /// The account the verified token signs in (created on a first sign-in
    /// when configured so), and whether it was created.
    async fn account_for(
        &self,
        store: &Store,
        claims: &IdClaims,
    ) -> Result<(Account, bool), Refused> {
        let email = claims.email.as_deref().ok_or(Refusal::EmailMissing)?;
        let email = accounts::normalize_email(email).map_err(|_| Refusal::EmailMissing)?;
        let with_email = |refusal: Refusal, account: Option<&Account>| Refused {
            refusal,
            email: Some(email.clone()),
            account: account.cloned(),
            detail: None,
        };
        let unverified =
            matches!(&claims.email_verified, Some(v) if v == &json!(false) || v == &json!("false"));
        if unverified {
            return Err(with_email(Refusal::EmailUnverified, None));
        }
        let domain = email.rsplit_once('@').map_or("", |(_, d)| d);
        let allowed = &self.config.allowed_email_domains;
        if !allowed.is_empty() && !allowed.iter().any(|d| d == domain) {
            return Err(with_email(Refusal::DomainNotAllowed, None));
        }
        let found = store
            .read(|tx| accounts::find_by_email(tx, &email))
            .map_err(|e| internal(e, &email))?;
        let role = match &self.config.role_claim {
            Some(claim) => Some(
                mapped_role(&self.config, claims.other.get(claim))
                    .ok_or_else(|| with_email(Refusal::NoMappedRole, found.as_ref()))?,
            ),
            None => None,
        };
        Ok(match (found, role) {
            (Some(account), _) if account.disabled => {
                return Err(with_email(Refusal::AccountDisabled, Some(&account)));
            }
            (Some(account), Some(role)) if account.role != role => {
                (self.sync_role(store, account, role).await, false)
            }
            (Some(account), _) => (account, false),
            (None, Some(role)) if self.config.create_accounts => {
                let tenant = self.config.default_tenant.as_deref().unwrap_or_default();
                let account =
                    accounts::create(store, &email, tenant, role, &accounts::generate_password())
                        .await
                        .map_err(|e| internal(e, &email))?;
                (account, true)
            }
            (None, _) => return Err(with_email(Refusal::NoAccount, None)),
        })
    }

    /// The provider's groups decide the role at each sign-in. A change that
    /// would leave a tenant without an owner is refused by the accounts
    /// module; the stored role then stays.
    async fn sync_role(&self, store: &Store, account: Account, role: Role) -> Account {
        match accounts::modify(store, &account.id, move |a| {
            a.role = role;
            Ok(())
        })
        .await
        {
            Ok(changed) => changed,
            Err(e) => {
                tracing::warn!(account = %account.id, error = %e, "the role from single sign-on was not applied");
                account
            }
        }
    }

    /// The account a one-time code was issued for; the code is spent.
    pub fn redeem(&self, code: &str) -> Option<String> {
        self.handoffs.redeem(code, Instant::now())
    }
}

/// The most privileged role that any of the claim's values maps to (the
/// claim is a string or a list of strings).
fn mapped_role(config: &SsoConfig, claim: Option<&serde_json::Value>) -> Option<Role> {
    let values: Vec<&str> = match claim? {
        serde_json::Value::String(s) => vec![s.as_str()],
        serde_json::Value::Array(items) => items.iter().filter_map(|v| v.as_str()).collect(),
        _ => Vec::new(),
    };
    Role::ALL
        .into_iter()
        .find(|role| values.iter().any(|v| config.role_map.get(*v) == Some(role)))
}

fn internal(e: StoreError, email: &str) -> Refused {
    Refused {
        refusal: Refusal::Internal,
        email: Some(email.to_owned()),
        account: None,
        detail: Some(e.to_string()),
    }
}

/// A provider-sent value, cut short for the log.
fn cut(text: &str) -> String {
    text.chars().take(100).collect()
}

async fn record(store: &Store, draft: Draft) {
    if let Err(e) = audit::record(store, draft).await {
        tracing::error!(error = %e, "writing the audit entry of an SSO sign-in failed");
    }
}
