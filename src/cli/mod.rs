//! The command line. Each option's doc comment is its `--help` text.
//!
//! Administrative commands build an [`admin::Command`] and run it through
//! the running server's socket, or on the store directly when no server
//! runs. Exit codes: 0 success, 1 failure, 2 bad configuration or usage.

mod output;
mod risk;

use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use serde_json::Value;

use crate::admin::{self, Command as Admin, socket};
use crate::app::{AppState, Server, shutdown_signal};
use crate::auth::accounts::Role;
use crate::auth::keys::{KeySettings, KeyUpdate, Patch, ResetInterval};
use crate::base::money::credits_to_micros;
use crate::base::time::parse_rfc3339;
use crate::catalogue::Catalogue;
use crate::config::{self, Config, LogFormat, Overrides};
use crate::setup;
use crate::store::{Store, StoreError, backup};
use crate::tenants::{DEFAULT_TENANT, Tier};

/// Tollgate: a single-binary AI inference gateway.
#[derive(Debug, Parser)]
#[command(name = "tollgate", version, long_about = None)]
pub struct Cli {
    /// Configuration file (TOML). Without one, the embedded demo
    /// configuration is used (mock provider, ./tollgate-data).
    #[arg(long, global = true, env = "TOLLGATE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Data directory (overrides the configuration and TOLLGATE_DATA_DIR).
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gateway.
    Serve(ServeArgs),
    /// Initialize the data directory (default tenant, owner account) without serving.
    Init,
    /// Manage tenants.
    #[command(subcommand)]
    Tenants(TenantsCommand),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Manage dashboard accounts.
    #[command(subcommand)]
    Users(UsersCommand),
    /// The hash-chained audit log.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Inspect the model catalogue.
    #[command(subcommand)]
    Models(ModelsCommand),
    /// Usage by day, key, model and endpoint, with the spend events of the
    /// period (works while serving).
    Usage {
        /// Only this tenant (id or name).
        #[arg(long)]
        tenant: Option<String>,
        /// Only this key (id).
        #[arg(long)]
        key: Option<String>,
        /// Start, RFC 3339 (default: 30 days ago).
        #[arg(long)]
        from: Option<String>,
        /// End, RFC 3339, exclusive (default: now).
        #[arg(long)]
        to: Option<String>,
        /// Only this endpoint: chat, messages, generate_content, images,
        /// audio, embeddings, responses or completions.
        #[arg(long, value_parser = endpoint_name)]
        endpoint: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a consistent snapshot of the store to a file (works while serving).
    /// The file must be outside the data directory.
    Backup {
        /// Where to write the backup: a file outside the data directory.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Replace the file if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Replace the store with a backup. The server must be stopped.
    Restore {
        /// The backup file to restore.
        #[arg(long, value_name = "FILE")]
        from: PathBuf,
        /// Replace a data directory that already holds data.
        #[arg(long)]
        force: bool,
    },
    /// Configuration tools.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Try the EU AI Act risk rules (the configured packs, rules only).
    #[command(subcommand)]
    Risk(RiskCommand),
}

#[derive(Debug, Subcommand)]
pub enum RiskCommand {
    /// Classify every case of a labelled JSONL file (id, purpose, messages,
    /// expected_level) and print accuracy per level, the confusion matrix,
    /// the catch rate, the false-raise rate and the misses.
    Eval {
        /// The labelled file, one JSON object a line.
        file: PathBuf,
        /// Only the cases whose `split` field is this (`train`, `heldout`).
        #[arg(long)]
        split: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Classify one request made of a purpose, an optional system message
    /// and one user message.
    Classify {
        /// The declared purpose.
        #[arg(long)]
        purpose: Option<String>,
        /// A system message (instructions of the deployer or of a tool).
        #[arg(long)]
        system: Option<String>,
        /// The user message.
        text: String,
        /// Also show, for each rule, the words that made it match or why a
        /// match was set aside (suppressed, negated, a tool's own prompt).
        #[arg(long)]
        explain: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on, such as 127.0.0.1:8080 (overrides config and TOLLGATE_LISTEN).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// Log format: text or json (overrides config and TOLLGATE_LOG_FORMAT).
    #[arg(long, value_name = "FORMAT")]
    pub log_format: Option<LogFormat>,
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Walk the whole chain and check every link (works while serving).
    /// Exits 1 and names the first broken entry when the log was altered.
    Verify {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum TenantsCommand {
    /// Create a tenant.
    Create {
        /// Unique tenant name.
        #[arg(long)]
        name: String,
        /// free, paid or enterprise.
        #[arg(long, default_value = "paid")]
        tier: Tier,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List tenants.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show one tenant (by id or name).
    Show {
        tenant: String,
        #[arg(long)]
        json: bool,
    },
    /// Add credits to a tenant's wallet.
    Topup {
        tenant: String,
        /// Credits to add (a finite number above 0).
        #[arg(long, value_parser = parse_credits, allow_hyphen_values = true)]
        credits: f64,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create an API key; its value is printed once.
    Create {
        /// Tenant id or name.
        #[arg(long, default_value = DEFAULT_TENANT)]
        tenant: String,
        /// Human name of the key.
        #[arg(long)]
        name: String,
        /// Spend cap in credits per reset interval (none: no cap).
        #[arg(long, value_parser = parse_credits, allow_hyphen_values = true)]
        credit_limit: Option<f64>,
        /// When consumption returns to zero: never, daily, weekly, monthly.
        #[arg(long, default_value = "never")]
        reset: ResetInterval,
        /// Requests per minute (default: the configured default_rate_limit).
        #[arg(long)]
        rate_limit: Option<u32>,
        /// Tokens per minute, prompt + completion (none: no token limit).
        #[arg(long)]
        tpm_limit: Option<u64>,
        /// Expiry, RFC 3339 (e.g. 2027-01-31T23:59:00Z).
        #[arg(long)]
        expires_at: Option<String>,
        /// Allow requests classified as high-risk.
        #[arg(long)]
        allow_high_risk: bool,
        /// Email or id of the account that owns the key.
        #[arg(long)]
        owner: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// List API keys (values are never shown again).
    List {
        /// Only this tenant's keys.
        #[arg(long)]
        tenant: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Show one key.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Change a key's settings. Expired and revoked keys cannot be changed.
    Update {
        id: String,
        #[arg(long)]
        name: Option<String>,
        /// New cap in credits, or `none` to remove it.
        #[arg(long)]
        credit_limit: Option<String>,
        /// never, daily, weekly or monthly.
        #[arg(long)]
        reset: Option<ResetInterval>,
        /// Requests per minute, or `none` for the default.
        #[arg(long)]
        rate_limit: Option<String>,
        /// Tokens per minute, or `none` for no token limit.
        #[arg(long)]
        tpm_limit: Option<String>,
        /// RFC 3339 expiry, or `none`.
        #[arg(long)]
        expires_at: Option<String>,
        /// true or false.
        #[arg(long)]
        allow_high_risk: Option<bool>,
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key at once; requests with it get 403 invalid_api_key.
    Revoke {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Create a new key with the same settings; the old one stays valid until revoked.
    Rotate {
        id: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// Create a dashboard account. The password is read from standard input
    /// with --password-stdin, else generated and printed once.
    Create {
        #[arg(long)]
        email: String,
        /// owner, admin, billing, auditor, reviewer, user or tester.
        #[arg(long)]
        role: Role,
        #[arg(long, default_value = DEFAULT_TENANT)]
        tenant: String,
        /// Read the password from standard input.
        #[arg(long)]
        password_stdin: bool,
        #[arg(long)]
        json: bool,
    },
    /// List accounts.
    List {
        #[arg(long)]
        tenant: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Change an account's role.
    SetRole {
        /// Email or id.
        account: String,
        role: Role,
        #[arg(long)]
        json: bool,
    },
    /// Disable an account; its sessions end at once.
    Disable {
        /// Email or id.
        account: String,
        #[arg(long)]
        json: bool,
    },
    /// Enable a disabled account.
    Enable {
        /// Email or id.
        account: String,
        #[arg(long)]
        json: bool,
    },
    /// Lift the sign-in delays of an account at once (without an account:
    /// of every account and source address). Needs the running server.
    ClearSignInThrottle {
        /// Email or id.
        account: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// List the catalogue of the configuration.
    List {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Validate a configuration file; exit code 2 when it is refused.
    Check {
        /// The file to check.
        file: PathBuf,
    },
}

/// A failure of a command: the message for the operator and an exit code.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub exit_code: u8,
}

impl Failure {
    fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            exit_code: 1,
        }
    }
    fn usage(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            exit_code: 2,
        }
    }
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Failure {
        Failure::new(e.to_string())
    }
}

impl From<config::ConfigError> for Failure {
    fn from(e: config::ConfigError) -> Failure {
        Failure::usage(format!("configuration refused: {e}"))
    }
}

pub async fn run(cli: Cli) -> Result<(), Failure> {
    let overrides = |serve: Option<&ServeArgs>| Overrides {
        listen: serve.and_then(|s| s.listen),
        data_dir: cli.data_dir.clone(),
        log_format: serve.and_then(|s| s.log_format),
    };
    match &cli.command {
        Command::Config(ConfigCommand::Check { file }) => {
            let config = config::load_from_process(Some(file), &Overrides::default())?;
            println!(
                "{}: valid ({} providers, {} models)",
                file.display(),
                config.providers.len(),
                config.models.len()
            );
            for p in config
                .providers
                .iter()
                .filter(|p| p.api_key_env.is_some() && p.api_key.is_none())
            {
                println!(
                    "  note: provider `{}` reads its key from {}, which is not set in this environment",
                    p.id,
                    p.api_key_env.as_deref().unwrap_or_default()
                );
            }
            for p in &config.providers {
                let Some(aws) = &p.bedrock else { continue };
                for (name, value) in [
                    (&aws.access_key_id_env, &aws.access_key_id),
                    (&aws.secret_access_key_env, &aws.secret_access_key),
                ] {
                    if value.is_none() {
                        println!(
                            "  note: bedrock provider `{}` reads its AWS credentials from {name}, which is not set in this environment",
                            p.id
                        );
                    }
                }
            }
            Ok(())
        }
        Command::Risk(command) => {
            let config = config::load_from_process(cli.config.as_deref(), &overrides(None))?;
            risk::run(&config.risk_rules, command)
        }
        Command::Serve(args) => {
            let config = config::load_from_process(cli.config.as_deref(), &overrides(Some(args)))?;
            serve(config).await
        }
        Command::Init => {
            let config = config::load_from_process(cli.config.as_deref(), &overrides(None))?;
            let store = open_store(&config.data_dir, config.store_cache_mb)?;
            match setup::first_start(
                &store,
                &config,
                std::env::var("TOLLGATE_OWNER_PASSWORD").ok(),
            )
            .await?
            {
                Some(first) => print!("{}", first.announce(&format!("http://{}", config.listen))),
                None => println!("{} is already initialized", config.data_dir.display()),
            }
            store.close();
            Ok(())
        }
        Command::Models(ModelsCommand::List { json }) => {
            let config = config::load_from_process(cli.config.as_deref(), &overrides(None))?;
            output::models(&Catalogue::from_config(&config), *json);
            Ok(())
        }
        Command::Restore { from, force } => {
            let config = config::load_from_process(cli.config.as_deref(), &overrides(None))?;
            if socket::call(&config.data_dir, &Admin::TenantsList)
                .await
                .ok()
                .flatten()
                .is_some()
            {
                return Err(Failure::new(format!(
                    "a tollgate server is running on {}; stop it before restoring",
                    config.data_dir.display()
                )));
            }
            let summary = backup::restore(from, &config.data_dir, *force)?;
            println!(
                "restored {} into {}",
                from.display(),
                summary.path.display()
            );
            output::summary(&summary);
            Ok(())
        }
        other => {
            let config = config::load_from_process(cli.config.as_deref(), &overrides(None))?;
            let (command, json) = admin_command(other)?;
            let generated = match (other, &command) {
                (
                    Command::Users(UsersCommand::Create {
                        password_stdin: false,
                        email,
                        ..
                    }),
                    Admin::UsersCreate { password, .. },
                ) => Some((email.clone(), password.clone())),
                _ => None,
            };
            let result = run_admin(&config, command).await?;
            if let Command::Audit(AuditCommand::Verify { .. }) = other {
                output::result(other, &result, json);
                return match &result["firstBroken"] {
                    Value::Null => Ok(()),
                    broken => Err(Failure::new(format!(
                        "the audit chain is broken at entry {}: {}",
                        broken["seq"],
                        broken["reason"].as_str().unwrap_or_default()
                    ))),
                };
            }
            if let Some((email, password)) = generated {
                // Only once the account exists; on stderr, so `--json`
                // output on stdout stays parseable.
                eprintln!("Generated password for {email} (shown once): {password}");
            }
            output::result(other, &result, json);
            Ok(())
        }
    }
}

/// An amount of credits on the command line: a finite number, 0 or more.
/// `NaN` and `inf` parse as `f64` but are no amount, and would reach the
/// server as JSON `null`.
/// `--endpoint`: one of the closed set (checked here, so a typo is a usage
/// error before the server is asked).
fn endpoint_name(text: &str) -> Result<String, String> {
    crate::catalogue::Endpoint::parse(text).map(|e| e.as_str().to_owned())
}

fn parse_credits(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(amount) if amount.is_finite() && amount >= 0.0 => Ok(amount),
        _ => Err(format!(
            "`{text}` is not an amount of credits: give a finite number, 0 or more (such as 25 or 2.5)"
        )),
    }
}

/// Translates a CLI command into an admin command (and its `--json`).
fn admin_command(command: &Command) -> Result<(Admin, bool), Failure> {
    let credits = |v: f64| credits_to_micros(v).map_err(Failure::usage);
    let time = |v: &str| parse_rfc3339(v).map_err(Failure::usage);
    Ok(match command {
        Command::Tenants(TenantsCommand::Create { name, tier, json }) => (
            Admin::TenantsCreate {
                name: name.clone(),
                tier: *tier,
            },
            *json,
        ),
        Command::Tenants(TenantsCommand::List { json }) => (Admin::TenantsList, *json),
        Command::Tenants(TenantsCommand::Show { tenant, json }) => (
            Admin::TenantsShow {
                tenant: tenant.clone(),
            },
            *json,
        ),
        Command::Tenants(TenantsCommand::Topup {
            tenant,
            credits,
            json,
        }) => (
            Admin::TenantsTopup {
                tenant: tenant.clone(),
                credits: *credits,
            },
            *json,
        ),
        Command::Keys(KeysCommand::Create {
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
        }) => {
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
            (
                Admin::KeysCreate {
                    tenant: tenant.clone(),
                    settings,
                },
                *json,
            )
        }
        Command::Keys(KeysCommand::List { tenant, json }) => (
            Admin::KeysList {
                tenant: tenant.clone(),
            },
            *json,
        ),
        Command::Keys(KeysCommand::Show { id, json }) => {
            (Admin::KeysShow { id: id.clone() }, *json)
        }
        Command::Keys(KeysCommand::Update {
            id,
            name,
            credit_limit,
            reset,
            rate_limit,
            tpm_limit,
            expires_at,
            allow_high_risk,
            json,
        }) => {
            let update = KeyUpdate {
                name: name.clone(),
                credit_limit: patch(credit_limit.as_deref(), |v| {
                    parse_credits(v)
                        .map_err(|m| Failure::usage(format!("--credit-limit: {m}, or `none`")))
                        .and_then(credits)
                })?,
                reset_interval: *reset,
                rate_limit: patch(rate_limit.as_deref(), |v| {
                    v.parse::<u32>().map_err(|_| {
                        Failure::usage(format!(
                            "--rate-limit: `{v}` is not a whole number or `none`"
                        ))
                    })
                })?,
                expires_at: patch(expires_at.as_deref(), time)?,
                allow_high_risk: *allow_high_risk,
                tpm_limit: patch(tpm_limit.as_deref(), |v| {
                    v.parse::<u64>().map_err(|_| {
                        Failure::usage(format!(
                            "--tpm-limit: `{v}` is not a whole number or `none`"
                        ))
                    })
                })?,
            };
            (
                Admin::KeysUpdate {
                    id: id.clone(),
                    update,
                },
                *json,
            )
        }
        Command::Keys(KeysCommand::Revoke { id, json }) => {
            (Admin::KeysRevoke { id: id.clone() }, *json)
        }
        Command::Keys(KeysCommand::Rotate { id, json }) => {
            (Admin::KeysRotate { id: id.clone() }, *json)
        }
        Command::Users(UsersCommand::Create {
            email,
            role,
            tenant,
            password_stdin,
            json,
        }) => {
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
        Command::Users(UsersCommand::List { tenant, json }) => (
            Admin::UsersList {
                tenant: tenant.clone(),
            },
            *json,
        ),
        Command::Users(UsersCommand::SetRole {
            account,
            role,
            json,
        }) => (
            Admin::UsersSetRole {
                who: account.clone(),
                role: *role,
            },
            *json,
        ),
        Command::Users(UsersCommand::Disable { account, json }) => (
            Admin::UsersDisable {
                who: account.clone(),
            },
            *json,
        ),
        Command::Users(UsersCommand::Enable { account, json }) => (
            Admin::UsersEnable {
                who: account.clone(),
            },
            *json,
        ),
        Command::Users(UsersCommand::ClearSignInThrottle { account, json }) => (
            Admin::UsersClearSignInThrottle {
                who: account.clone(),
            },
            *json,
        ),
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
        | Command::Config(_) => {
            unreachable!("handled before admin commands")
        }
    })
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
async fn run_admin(config: &Config, command: Admin) -> Result<Value, Failure> {
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

/// The domain's part of opening a store: its migrations and the replay of
/// journaled charges.
fn upgrades() -> crate::store::Upgrades {
    crate::store::Upgrades {
        migrations: crate::migrations::ALL,
        replay: Some(crate::gateway::charge_record::replay),
    }
}

/// Opens the store to serve or initialize it (creating it if needed).
fn open_store(data_dir: &Path, cache_mb: u64) -> Result<Store, Failure> {
    Store::open_cached(data_dir, upgrades(), cache_mb).map_err(|e| match e {
        StoreError::Locked(_) => Failure::new(format!(
            "{e}: a tollgate server is already using {}",
            data_dir.display()
        )),
        other => Failure::from(other),
    })
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
    Store::open_cached(data_dir, upgrades(), cache_mb).map_err(|e| match e {
        StoreError::Locked(_) => Failure::new(format!(
            "{e}; its admin socket {} does not answer, so it cannot be reached",
            data_dir.join(crate::store::SOCKET_FILE).display()
        )),
        other => Failure::from(other),
    })
}

fn init_logging(config: &Config) {
    use tracing_subscriber::EnvFilter;
    // Validated when the configuration was loaded.
    let filter = EnvFilter::try_new(&config.log_level).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match config.log_format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

async fn serve(config: Config) -> Result<(), Failure> {
    init_logging(&config);
    crate::auth::sessions::warm_up();
    let store = open_store(&config.data_dir, config.store_cache_mb)?;
    let first = setup::first_start(
        &store,
        &config,
        std::env::var("TOLLGATE_OWNER_PASSWORD").ok(),
    )
    .await?;
    let proposed = crate::compliance::registry::seed(&store, &config.providers).await?;
    if proposed > 0 {
        tracing::info!(
            entries = proposed,
            "every configured provider was proposed as a sub-processor registry entry"
        );
    }
    for p in config
        .providers
        .iter()
        .filter(|p| p.api_key_env.is_some() && p.api_key.is_none())
    {
        tracing::warn!(provider = %p.id, variable = p.api_key_env.as_deref().unwrap_or_default(), "the provider's API key variable is not set");
    }
    let data_dir = config.data_dir.clone();
    let signal = shutdown_signal();
    let state = AppState::new(config, store);
    let server = match Server::bind(state.clone()).await {
        Ok(server) => server,
        Err(e) => {
            state.store.close();
            return Err(Failure::new(format!(
                "cannot listen on {}: {e}",
                state.config.listen
            )));
        }
    };
    let addr = server
        .local_addr()
        .map_err(|e| Failure::new(e.to_string()))?;
    let base_url = format!("http://{addr}");
    if let Some(first) = first {
        print!("{}", first.announce(&base_url));
    }
    println!(
        "tollgate listening on {base_url} (data in {})",
        data_dir.display()
    );
    tracing::info!(%addr, data_dir = %data_dir.display(), "listening");
    let token = server.shutdown.clone();
    tokio::spawn(async move {
        signal.await;
        tracing::info!("shutdown requested; finishing requests in flight");
        token.cancel();
    });
    server
        .run()
        .await
        .map_err(|e| Failure::new(format!("server error: {e}")))
}
