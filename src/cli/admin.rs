//! Administrative commands: a CLI command translated into an
//! [`admin::Command`], run through the running server's socket, or on the
//! store directly when no server answers.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::Failure;
use super::args::{
    AuditCommand, Command, KeysCommand, TenantsCommand, UsersCommand, parse_credits,
};
use crate::admin::{self, Command as Admin, socket};
use crate::auth::keys::{KeySettings, KeyUpdate, Patch};
use crate::base::money::credits_to_micros;
use crate::base::time::parse_rfc3339;
use crate::config::Config;
use crate::store::{Store, StoreError};

/// Translates a CLI command into an admin command (and its `--json`).
pub(super) fn admin_command(command: &Command) -> Result<(Admin, bool), Failure> {
    Ok(match command {
        Command::Tenants(command) => tenants_command(command),
        Command::Keys(command) => keys_command(command)?,
        Command::Users(command) => users_command(command)?,
        Command::Usage {
            tenant,
            key,
            from,
            to,
            endpoint,
            json,
        } => (
            Admin::Usage {
                tenant: tenant.clone(),
                key: key.clone(),
                from: from.clone(),
                to: to.clone(),
                endpoint: endpoint.clone(),
            },
            *json,
        ),
        Command::Audit(AuditCommand::Verify { json }) => (Admin::AuditVerify, *json),
        Command::Backup { out, force } => {
            // The server resolves the path in its own working directory.
            let out =
                std::path::absolute(out).map_err(|e| Failure::usage(format!("--out: {e}")))?;
            (Admin::Backup { out, force: *force }, false)
        }
        Command::Serve(_)
        | Command::Init
        | Command::Models(_)
        | Command::Restore { .. }
        | Command::Risk(_)
        | Command::Classify(_)
        | Command::Config(_) => {
            unreachable!("handled before admin commands")
        }
    })
}

fn tenants_command(command: &TenantsCommand) -> (Admin, bool) {
    match command {
        TenantsCommand::Create { name, tier, json } => (
            Admin::TenantsCreate {
                name: name.clone(),
                tier: *tier,
            },
            *json,
        ),
        TenantsCommand::List { json } => (Admin::TenantsList, *json),
        TenantsCommand::Show { tenant, json } => (
            Admin::TenantsShow {
                tenant: tenant.clone(),
            },
            *json,
        ),
        TenantsCommand::Topup {
            tenant,
            credits,
            json,
        } => (
            Admin::TenantsTopup {
                tenant: tenant.clone(),
                credits: *credits,
            },
            *json,
        ),
    }
}

fn keys_command(command: &KeysCommand) -> Result<(Admin, bool), Failure> {
    Ok(match command {
        KeysCommand::Create {
            tenant,
            name,
            credit_limit,
            reset,
            rate_limit,
            tpm_limit,
            expires_at,
            allow_high_risk,
            owner,
            json,
        } => {
            let settings = KeySettings {
                name: name.clone(),
                credit_limit: credit_limit.map(credits).transpose()?,
                reset_interval: Some(*reset),
                rate_limit: *rate_limit,
                expires_at: expires_at.as_deref().map(time).transpose()?,
                allow_high_risk: *allow_high_risk,
                owner_account_id: owner.clone(),
                tpm_limit: *tpm_limit,
            };
            let tenant = tenant.clone();
            (Admin::KeysCreate { tenant, settings }, *json)
        }
        KeysCommand::List { tenant, json } => (
            Admin::KeysList {
                tenant: tenant.clone(),
            },
            *json,
        ),
        KeysCommand::Show { id, json } => (Admin::KeysShow { id: id.clone() }, *json),
        KeysCommand::Update { id, json, .. } => (
            Admin::KeysUpdate {
                id: id.clone(),
                update: key_update(command)?,
            },
            *json,
        ),
        KeysCommand::Revoke { id, json } => (Admin::KeysRevoke { id: id.clone() }, *json),
        KeysCommand::Rotate { id, json } => (Admin::KeysRotate { id: id.clone() }, *json),
    })
}

/// The change `keys update` asks for: a nullable option given as `none`
/// clears the field, left out keeps it.
fn key_update(command: &KeysCommand) -> Result<KeyUpdate, Failure> {
    let KeysCommand::Update {
        name,
        credit_limit,
        reset,
        rate_limit,
        tpm_limit,
        expires_at,
        allow_high_risk,
        ..
    } = command
    else {
        unreachable!("called for `keys update` only")
    };
    Ok(KeyUpdate {
        name: name.clone(),
        credit_limit: patch(credit_limit.as_deref(), |v| {
            parse_credits(v)
                .map_err(|m| Failure::usage(format!("--credit-limit: {m}, or `none`")))
                .and_then(credits)
        })?,
        reset_interval: *reset,
        rate_limit: patch(rate_limit.as_deref(), whole_number("--rate-limit"))?,
        expires_at: patch(expires_at.as_deref(), time)?,
        allow_high_risk: *allow_high_risk,
        tpm_limit: patch(tpm_limit.as_deref(), whole_number("--tpm-limit"))?,
    })
}

fn users_command(command: &UsersCommand) -> Result<(Admin, bool), Failure> {
    Ok(match command {
        UsersCommand::Create {
            email,
            role,
            tenant,
            password_stdin,
            json,
        } => {
            let password = if *password_stdin {
                let mut text = String::new();
                std::io::stdin().read_to_string(&mut text).map_err(|e| {
                    Failure::usage(format!("reading the password from standard input: {e}"))
                })?;
                text.trim_end_matches(['\n', '\r']).to_owned()
            } else {
                crate::auth::accounts::generate_password()
            };
            (
                Admin::UsersCreate {
                    email: email.clone(),
                    tenant: tenant.clone(),
                    role: *role,
                    password,
                },
                *json,
            )
        }
        UsersCommand::List { tenant, json } => (
            Admin::UsersList {
                tenant: tenant.clone(),
            },
            *json,
        ),
        UsersCommand::SetRole {
            account,
            role,
            json,
        } => (
            Admin::UsersSetRole {
                who: account.clone(),
                role: *role,
            },
            *json,
        ),
        UsersCommand::Disable { account, json } => (
            Admin::UsersDisable {
                who: account.clone(),
            },
            *json,
        ),
        UsersCommand::Enable { account, json } => (
            Admin::UsersEnable {
                who: account.clone(),
            },
            *json,
        ),
        UsersCommand::ClearSignInThrottle { account, json } => (
            Admin::UsersClearSignInThrottle {
                who: account.clone(),
            },
            *json,
        ),
    })
}

fn credits(amount: f64) -> Result<u64, Failure> {
    credits_to_micros(amount).map_err(Failure::usage)
}

fn time(text: &str) -> Result<i64, Failure> {
    parse_rfc3339(text).map_err(Failure::usage)
}

/// A parser for a whole-number option that also takes `none`.
fn whole_number<T: std::str::FromStr>(flag: &str) -> impl Fn(&str) -> Result<T, Failure> {
    move |v| {
        v.parse::<T>()
            .map_err(|_| Failure::usage(format!("{flag}: `{v}` is not a whole number or `none`")))
    }
}

fn patch<T>(
    value: Option<&str>,
    parse: impl Fn(&str) -> Result<T, Failure>,
) -> Result<Patch<T>, Failure> {
    match value {
        None => Ok(Patch::Keep),
        Some("none") => Ok(Patch::Clear),
        Some(v) => parse(v).map(Patch::Set),
    }
}

/// Runs an admin command through the server's socket, or locally when no
/// server runs.
pub(super) async fn run_admin(config: &Config, command: Admin) -> Result<Value, Failure> {
    match socket::call(&config.data_dir, &command).await {
        Ok(Some(reply)) if reply.ok => return Ok(reply.result),
        Ok(Some(reply)) => {
            let error = reply
                .error
                .map(|e| e.message)
                .unwrap_or_else(|| "the server refused the command".into());
            return Err(Failure::new(error));
        }
        Ok(None) => {}
        Err(e) => {
            return Err(Failure::new(format!(
                "talking to the server's admin socket: {e}"
            )));
        }
    }
    let store = Arc::new(open_existing_store(
        &config.data_dir,
        config.store_cache_mb,
    )?);
    let result = admin::execute(&admin::Context::new(store.clone()), command).await;
    store.close();
    Ok(result?)
}

/// Opens an existing store for an administrative command when no server
/// answers on its socket. A missing store is an error, not a new store: a
/// mistyped --data-dir must not create an empty one.
fn open_existing_store(data_dir: &Path, cache_mb: u64) -> Result<Store, Failure> {
    if !data_dir.join(crate::store::DB_FILE).is_file() {
        return Err(Failure::new(format!(
            "no tollgate data in {}: start the server or run `tollgate init` first, \
             or give the server's --config / --data-dir",
            data_dir.display()
        )));
    }
    Store::open_cached(data_dir, super::upgrades(), cache_mb).map_err(|e| match e {
        StoreError::Locked(_) => Failure::new(format!(
            "{e}; its admin socket {} does not answer, so it cannot be reached",
            data_dir.join(crate::store::SOCKET_FILE).display()
        )),
        other => Failure::from(other),
    })
}
