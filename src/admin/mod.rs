//! Administrative commands: the one implementation behind the CLI.
//!
//! A command is data ([`Command`]), so the CLI can run it in two ways with
//! the same result: sent over the server's Unix socket while a server runs
//! (redb allows one process on the file), or executed here on a store the
//! CLI opened itself when none runs.

pub mod socket;

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::audit;
use crate::auth::accounts::{self, Role};
use crate::auth::keys::{IssuedKey, KeySettings, KeyUpdate, Keys, Latitude};
use crate::auth::throttle::SignInThrottle;
use crate::base::money::credits_to_micros;
use crate::base::time::now_ms;
use crate::store::{Store, StoreError};
use crate::tenants::{self, Tier};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Command {
    TenantsCreate {
        name: String,
        tier: Tier,
    },
    TenantsList,
    TenantsShow {
        tenant: String,
    },
    TenantsTopup {
        tenant: String,
        credits: f64,
    },
    KeysCreate {
        tenant: String,
        settings: KeySettings,
    },
    KeysList {
        tenant: Option<String>,
    },
    KeysShow {
        id: String,
    },
    KeysUpdate {
        id: String,
        update: KeyUpdate,
    },
    KeysRevoke {
        id: String,
    },
    KeysRotate {
        id: String,
    },
    UsersCreate {
        email: String,
        tenant: String,
        role: Role,
        password: String,
    },
    UsersList {
        tenant: Option<String>,
    },
    UsersSetRole {
        who: String,
        role: Role,
    },
    UsersDisable {
        who: String,
    },
    UsersEnable {
        who: String,
    },
    /// Lifts the sign-in delays of one account (email or id), or of every
    /// account and address.
    UsersClearSignInThrottle {
        who: Option<String>,
    },
    Backup {
        out: PathBuf,
        /// Replace an existing file.
        #[serde(default)]
        force: bool,
    },
    AuditVerify,
    Usage {
        tenant: Option<String>,
        key: Option<String>,
        from: Option<String>,
        to: Option<String>,
        /// Only this endpoint (`chat`, `messages`, ...).
        #[serde(default)]
        endpoint: Option<String>,
    },
}

/// What a command needs: the store and the key service (whose cache must
/// see every key change).
#[derive(Clone)]
pub struct Context {
    pub store: Arc<Store>,
    pub keys: Keys,
    /// The server's sign-in throttle (an empty one when the CLI runs a
    /// command itself: no server, no delays to lift).
    pub sign_in_throttle: Arc<SignInThrottle>,
    /// The server's in-memory ledger, which a top-up updates (an empty one
    /// when the CLI runs a command itself: no server reads it).
    pub ledger: Arc<crate::billing::ledger::Ledger>,
}

impl Context {
    pub fn new(store: Arc<Store>) -> Context {
        Context {
            keys: Keys::new(store.clone()),
            store,
            sign_in_throttle: Arc::default(),
            ledger: Arc::default(),
        }
    }
}

fn issued_view(issued: IssuedKey) -> Value {
    let mut view = issued.key.view(now_ms());
    view["key"] = json!(issued.value);
    view
}

/// Runs a command; a command that changes something is recorded in the
/// audit log (actor `cli`) once it succeeded.
pub async fn execute(ctx: &Context, command: Command) -> Result<Value, StoreError> {
    let act = command.audited();
    let result = run(ctx, command).await?;
    if let Some((action, target)) = act {
        let draft = audit::Draft::new("-", "cli".into(), &action, &target)
            .details(json!({ "id": result.get("id") }));
        audit::record(&ctx.store, draft).await?;
    }
    Ok(result)
}

impl Command {
    /// The audit action and target of a command that changes something.
    fn audited(&self) -> Option<(String, String)> {
        let (action, target) = match self {
            Command::TenantsCreate { name, .. } => ("tenant.create", name.clone()),
            Command::TenantsTopup { tenant, credits } => {
                ("tenant.topup", format!("{tenant} (+{credits} credits)"))
            }
            Command::KeysCreate { tenant, .. } => ("key.create", tenant.clone()),
            Command::KeysUpdate { id, .. } => ("key.update", id.clone()),
            Command::KeysRevoke { id } => ("key.revoke", id.clone()),
            Command::KeysRotate { id } => ("key.rotate", id.clone()),
            Command::UsersCreate { email, role, .. } => {
                ("account.create", format!("{email} ({})", role.as_str()))
            }
            Command::UsersSetRole { who, role } => {
                ("account.role", format!("{who} -> {}", role.as_str()))
            }
            Command::UsersDisable { who } => ("account.disable", who.clone()),
            Command::UsersEnable { who } => ("account.enable", who.clone()),
            Command::UsersClearSignInThrottle { who } => (
                "account.clear_sign_in_throttle",
                who.clone().unwrap_or_else(|| "*".into()),
            ),
            Command::Backup { out, .. } => ("store.backup", out.display().to_string()),
            Command::TenantsList
            | Command::TenantsShow { .. }
            | Command::KeysList { .. }
            | Command::KeysShow { .. }
            | Command::UsersList { .. }
            | Command::Usage { .. }
            | Command::AuditVerify => return None,
        };
        Some((action.to_owned(), target))
    }
}

// A flat dispatch over the closed `Command` enum, one arm per command; arms
// longer than a call live in the named helpers below it.
async fn run(ctx: &Context, command: Command) -> Result<Value, StoreError> {
    let now = now_ms();
    match command {
        Command::TenantsCreate { name, tier } => {
            Ok(tenants::create(&ctx.store, &name, tier).await?.view())
        }
        Command::TenantsList => Ok(json!(
            tenants::list(&ctx.store)?
                .iter()
                .map(|t| t.view())
                .collect::<Vec<_>>()
        )),
        Command::TenantsShow { tenant } => {
            Ok(ctx.store.read(|tx| tenants::resolve(tx, &tenant))?.view())
        }
        Command::TenantsTopup { tenant, credits } => top_up(ctx, &tenant, credits).await,
        Command::KeysCreate { tenant, settings } => Ok(issued_view(
            ctx.keys.create(&tenant, settings, Latitude::Any).await?,
        )),
        Command::KeysList { tenant } => Ok(json!(
            ctx.keys
                .list(tenant.as_deref())?
                .iter()
                .map(|k| k.view(now))
                .collect::<Vec<_>>()
        )),
        Command::KeysShow { id } => Ok(ctx.keys.get(&id)?.view(now)),
        Command::KeysUpdate { id, update } => {
            Ok(ctx.keys.update(&id, update, Latitude::Any).await?.view(now))
        }
        Command::KeysRevoke { id } => Ok(ctx.keys.revoke(&id).await?.view(now)),
        Command::KeysRotate { id } => Ok(issued_view(ctx.keys.rotate(&id).await?)),
        Command::UsersCreate {
            email,
            tenant,
            role,
            password,
        } => Ok(
            accounts::create(&ctx.store, &email, &tenant, role, &password)
                .await?
                .view(),
        ),
        Command::UsersList { tenant } => Ok(json!(
            accounts::list(&ctx.store, tenant.as_deref())?
                .iter()
                .map(|a| a.view())
                .collect::<Vec<_>>()
        )),
        Command::UsersSetRole { who, role } => Ok(accounts::modify(&ctx.store, &who, move |a| {
            a.role = role;
            Ok(())
        })
        .await?
        .view()),
        Command::UsersDisable { who } => Ok(accounts::modify(&ctx.store, &who, |a| {
            a.disabled = true;
            Ok(())
        })
        .await?
        .view()),
        Command::UsersEnable { who } => Ok(accounts::modify(&ctx.store, &who, |a| {
            a.disabled = false;
            Ok(())
        })
        .await?
        .view()),
        Command::UsersClearSignInThrottle { who } => clear_sign_in_throttle(ctx, who),
        Command::Usage {
            tenant,
            key,
            from,
            to,
            endpoint,
        } => usage_report(ctx, now, tenant, key, from, to, endpoint),
        Command::AuditVerify => Ok(ctx.store.read(audit::verify)?.view()),
        Command::Backup { out, force } => backup(ctx, out, force).await,
    }
}

/// Adds credits to a tenant's balance; zero credits is refused.
async fn top_up(ctx: &Context, tenant: &str, credits: f64) -> Result<Value, StoreError> {
    let micros = credits_to_micros(credits).map_err(StoreError::Invalid)?;
    if micros == 0 {
        return Err(StoreError::Invalid(
            "a top-up must add a positive amount of credits".into(),
        ));
    }
    Ok(
        crate::billing::top_up(&ctx.store, &ctx.ledger, tenant, micros, "cli")
            .await?
            .view(),
    )
}

/// Clears the sign-in throttle of one account, or of every account.
fn clear_sign_in_throttle(ctx: &Context, who: Option<String>) -> Result<Value, StoreError> {
    let email = match who {
        Some(who) => Some(ctx.store.read(|tx| accounts::find(tx, &who))?.email),
        None => None,
    };
    let cleared = ctx.sign_in_throttle.clear(email.as_deref());
    Ok(json!({ "account": email, "cleared": cleared }))
}

/// The usage report for a scope (default: the last 30 days), with its
/// events.
fn usage_report(
    ctx: &Context,
    now: i64,
    tenant: Option<String>,
    key: Option<String>,
    from: Option<String>,
    to: Option<String>,
    endpoint: Option<String>,
) -> Result<Value, StoreError> {
    use crate::billing::usage;
    let parse = |t: Option<String>, default: i64| {
        t.map_or(Ok(default), |t| {
            crate::base::time::parse_rfc3339(&t).map_err(StoreError::Invalid)
        })
    };
    let tenant_id = tenant
        .map(|t| ctx.store.read(|tx| tenants::resolve(tx, &t)).map(|t| t.id))
        .transpose()?;
    let scope = usage::Scope {
        tenant_id,
        key_ids: key.map(|k| vec![k]),
        from: parse(from, usage::default_from(now))?,
        to: parse(to, now + 1)?,
        endpoint: endpoint
            .map(|e| usage::Endpoint::parse(&e).map_err(|e| StoreError::Invalid(e.to_string())))
            .transpose()?,
    };
    let mut report = usage::aggregate(&ctx.store, &scope)?;
    report["events"] = json!(
        usage::events(&ctx.store, &scope)?
            .iter()
            .map(crate::billing::StoredEvent::envelope)
            .collect::<Vec<_>>()
    );
    Ok(report)
}

/// Copies the store to `out` on a blocking thread.
async fn backup(ctx: &Context, out: PathBuf, force: bool) -> Result<Value, StoreError> {
    let store = ctx.store.clone();
    let summary = tokio::task::spawn_blocking(move || store.backup_to(&out, force))
        .await
        .map_err(|e| StoreError::Database(e.to_string()))??;
    Ok(json!(summary))
}
