//! Dashboard sessions: opaque bearer tokens for `/api/v1`.
//!
//! `POST /api/v1/auth/login` verifies the password and issues a token
//! (`tgs_` and 32 random bytes); only its digest is stored, with an expiry.
//! Logout deletes it; disabling an account deletes all of its sessions.
//! Failed sign-ins are slowed down ([`super::throttle`]) and every failed
//! or throttled one is written to the audit log, never with its password.

use serde::{Deserialize, Serialize};

use std::net::IpAddr;
use std::time::Instant;

use super::accounts::{self, ACCOUNT_TABLE, Account, Permission, Role};
use super::error::AuthError;
use super::throttle::SignInThrottle;
use crate::audit::{self, Draft};
use crate::base::error::Code;
use crate::base::ids::{random_token, sha256};
use crate::base::time::now_ms;
use crate::store::tables::SESSIONS;
use crate::store::{Store, StoreError, Table};

pub const SESSION_TABLE: Table<Session> = Table::new(SESSIONS);
pub const TOKEN_PREFIX: &str = "tgs_";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    pub account_id: String,
    pub created_at: i64,
    pub expires_at: i64,
}

/// A signed-in account, as handlers see it.
#[derive(Debug, Clone)]
pub struct CurrentAccount {
    pub account: Account,
    pub token_digest: [u8; 32],
    pub expires_at: i64,
    /// The account belongs to the operator tenant (read at each request,
    /// like the account itself).
    pub operator: bool,
}

impl CurrentAccount {
    /// The permission table, with the operator's permissions reserved to
    /// the operator tenant's accounts.
    pub fn can(&self, permission: Permission) -> bool {
        self.account.role.can(permission) && (self.operator || !permission.operator_only())
    }

    /// Every permission this account has, for `GET /api/v1/me`.
    pub fn permissions(&self) -> Vec<&'static str> {
        Permission::ALL
            .iter()
            .filter(|p| self.can(**p))
            .map(|p| p.as_str())
            .collect()
    }

    /// Whether the account sees and acts across tenants: the operator
    /// tenant's owners and admins. Everyone else stays in its tenant.
    pub fn reaches_all_tenants(&self) -> bool {
        self.operator && matches!(self.account.role, Role::Owner | Role::Admin)
    }
}

pub struct Issued {
    pub token: String,
    pub expires_at: i64,
    pub account: Account,
}

/// A PHC hash of a random password, verified when the email is unknown so a
/// failed login takes the same time whether or not the account exists.
static DECOY_HASH: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    accounts::hash_password(&random_token(18)).expect("hashing a decoy")
});

/// Computes the decoy hash now, so the first failed login after a start is
/// not slower than the others.
pub fn warm_up() {
    std::sync::LazyLock::force(&DECOY_HASH);
}

/// A sign-in attempt: what was sent, and from where.
pub struct Attempt<'a> {
    pub email: &'a str,
    pub password: &'a str,
    /// The peer's address; `None` when the router is driven without a
    /// connection (tests).
    pub address: Option<IpAddr>,
}

/// The longest email kept in an audit entry of a failed sign-in.
const MAX_AUDITED_EMAIL: usize = 254;

/// Writes the audit entry of a failed or throttled sign-in: under the
/// account's tenant when the email names one, else among the operator's
/// entries (`-`, as the CLI's), so a tenant's auditors do not read the
/// emails others tried.
async fn audit_refusal(
    store: &Store,
    attempt: &Attempt<'_>,
    account: Option<&Account>,
    action: &str,
    code: Code,
    mut details: serde_json::Value,
) {
    let (tenant, actor) = match account {
        Some(a) => (a.tenant_id.as_str(), format!("account:{}", a.id)),
        None => ("-", "anonymous".to_owned()),
    };
    let email: String = attempt.email.chars().take(MAX_AUDITED_EMAIL).collect();
    details["address"] = serde_json::json!(attempt.address.map(|a| a.to_string()));
    let draft = Draft::new(tenant, actor, action, &email)
        .outcome(code.as_str())
        .details(details);
    if let Err(e) = audit::record(store, draft).await {
        tracing::error!(error = %e, "writing the audit entry of a failed sign-in failed");
    }
}

pub async fn login(
    store: &Store,
    throttle: &SignInThrottle,
    attempt: Attempt<'_>,
    ttl_ms: i64,
) -> Result<Issued, AuthError> {
    let (email, address) = (attempt.email, attempt.address);
    let account = store
        .read(|tx| accounts::find_by_email(tx, email))
        .map_err(|e| AuthError::internal("reading an account", e))?;
    // Before the password is verified: a waiting attempt costs nothing and
    // learns nothing, not even whether its password was right.
    if let Err(throttled) = throttle.check(email, address, Instant::now()) {
        if let Some(unaudited) = throttled.audit {
            let details = serde_json::json!({
                "retryAfter": throttled.retry_after,
                "refusedSinceLastEntry": unaudited,
            });
            let code = Code::TooManySignInAttempts;
            audit_refusal(
                store,
                &attempt,
                account.as_ref(),
                "auth.sign_in_throttled",
                code,
                details,
            )
            .await;
        }
        // Debug only: refused attempts are free to send, a log line each
        // would let them flood the log.
        tracing::debug!(
            retry_after = throttled.retry_after,
            "a sign-in waits out its delay"
        );
        return Err(AuthError::TooManySignInAttempts {
            retry_after: throttled.retry_after,
        });
    }
    let hash = account
        .as_ref()
        .map_or_else(|| DECOY_HASH.clone(), |a| a.password_hash.clone());
    let password = attempt.password.to_owned();
    let matches = tokio::task::spawn_blocking(move || accounts::verify_password(&password, &hash))
        .await
        .map_err(|e| AuthError::internal("verifying a password", e))?;
    let failure = match &account {
        Some(account) if matches && account.disabled => Some(AuthError::AccountDisabled),
        Some(_) if matches => None,
        _ => Some(AuthError::InvalidCredentials),
    };
    if let Some(error) = failure {
        throttle.failed(email, address, Instant::now());
        let details = serde_json::json!({});
        audit_refusal(
            store,
            &attempt,
            account.as_ref(),
            "auth.sign_in_failed",
            error.code(),
            details,
        )
        .await;
        return Err(error);
    }
    let account = account.expect("a matched password has an account");
    throttle.succeeded(email);
    issue(store, account, ttl_ms).await
}

/// Issues a session for an account that has proven who it is (a password,
/// or a single sign-on's one-time code).
pub async fn issue(store: &Store, account: Account, ttl_ms: i64) -> Result<Issued, AuthError> {
    let token = format!("{TOKEN_PREFIX}{}", random_token(32));
    let digest = sha256(token.as_bytes());
    let now = now_ms();
    let session = Session {
        account_id: account.id.clone(),
        created_at: now,
        expires_at: now + ttl_ms,
    };
    let expires_at = session.expires_at;
    store
        .write(move |txn| {
            // Expired sessions of this account are swept at each login, so
            // the table cannot grow without bound.
            let mut table = txn.open_table(SESSIONS)?;
            let mut stale = Vec::new();
            for item in redb::ReadableTable::iter(&table)? {
                let (k, v) = item?;
                let s: Session = crate::store::codec::decode(v.value())?;
                if s.account_id == session.account_id && s.expires_at <= now {
                    stale.push(k.value().to_vec());
                }
            }
            for k in stale {
                table.remove(k.as_slice())?;
            }
            drop(table);
            SESSION_TABLE.put(txn, &digest, &session)
        })
        .await
        .map_err(|e| AuthError::internal("storing a session", e))?;
    Ok(Issued {
        token,
        expires_at,
        account,
    })
}

/// Resolves a bearer token to its account, refusing unknown, expired and
/// disabled ones.
pub fn authenticate(store: &Store, token: &str, now: i64) -> Result<CurrentAccount, AuthError> {
    let invalid = || AuthError::InvalidToken;
    if !token.starts_with(TOKEN_PREFIX) || token.len() > 100 {
        return Err(invalid());
    }
    let digest = sha256(token.as_bytes());
    let found = store
        .read(|tx| {
            let Some(session) = SESSION_TABLE.get(tx, &digest)? else {
                return Ok(None);
            };
            let account = ACCOUNT_TABLE.get(tx, session.account_id.as_bytes())?;
            let operator = crate::tenants::operator_id(tx)?;
            Ok(account.map(|a| (session, a, operator)))
        })
        .map_err(|e| AuthError::internal("reading a session", e))?;
    let (session, account, operator) = found.ok_or_else(invalid)?;
    let operator = operator.as_deref() == Some(account.tenant_id.as_str());
    if session.expires_at <= now {
        return Err(invalid());
    }
    if account.disabled {
        return Err(AuthError::AccountDisabled);
    }
    Ok(CurrentAccount {
        account,
        token_digest: digest,
        expires_at: session.expires_at,
        operator,
    })
}

pub async fn logout(store: &Store, digest: [u8; 32]) -> Result<(), StoreError> {
    store
        .write(move |txn| SESSION_TABLE.remove(txn, &digest).map(|_| ()))
        .await
}

pub fn remove_all_of(txn: &redb::WriteTransaction, account_id: &str) -> Result<(), StoreError> {
    let mut table = txn.open_table(SESSIONS)?;
    let mut doomed = Vec::new();
    for item in redb::ReadableTable::iter(&table)? {
        let (k, v) = item?;
        let s: Session = crate::store::codec::decode(v.value())?;
        if s.account_id == account_id {
            doomed.push(k.value().to_vec());
        }
    }
    for k in doomed {
        table.remove(k.as_slice())?;
    }
    Ok(())
}
