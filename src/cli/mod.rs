//! The command line. Each option's doc comment is its `--help` text.
//!
//! Administrative commands build an [`admin::Command`] and run it through
//! the running server's socket, or on the store directly when no server
//! runs. Exit codes: 0 success, 1 failure, 2 bad configuration or usage.

mod admin;
mod args;
mod output;
mod risk;

use std::path::Path;

use serde_json::Value;

use crate::admin::{Command as Admin, socket};
use crate::app::{Server, shutdown_signal};
use crate::catalogue::Catalogue;
use crate::config::{self, Config, LogFormat, Overrides};
use crate::setup;
use crate::store::{Store, StoreError, backup};
pub use args::{
    AuditCommand, ClassifyArgs, Cli, Command, ConfigCommand, KeysCommand, ModelsCommand,
    RiskCommand, ServeArgs, TenantsCommand, UsersCommand,
};

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
    let load = |serve: Option<&ServeArgs>| {
        config::load_from_process(cli.config.as_deref(), &overrides(serve))
    };
    match &cli.command {
        Command::Config(ConfigCommand::Check { file }) => check_config(file),
        Command::Risk(command) => risk::run(&load(None)?.risk_rules.classifier(), command),
        Command::Classify(args) => {
            risk::classify(&load(None)?.risk_rules.classifier(), args);
            Ok(())
        }
        Command::Serve(args) => {
            let start_up = crate::base::memory::StartUp::begin();
            serve(load(Some(args))?, start_up).await
        }
        Command::Init => init(&load(None)?).await,
        Command::Models(ModelsCommand::List { json }) => {
            let config = load(None)?;
            output::models(
                &Catalogue::from_definitions(&config.providers, &config.models),
                *json,
            );
            Ok(())
        }
        Command::Restore { from, force } => restore(&load(None)?, from, *force).await,
        other => administer(&load(None)?, other).await,
    }
}

/// `config check`: loads the file as `serve` would, and notes the secrets
/// it names that this environment does not set.
fn check_config(file: &Path) -> Result<(), Failure> {
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

/// `init`: the first start's setup without serving.
async fn init(config: &Config) -> Result<(), Failure> {
    let store = open_store(&config.data_dir, config.store_cache_mb)?;
    match setup::first_start(
        &store,
        config,
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

/// `restore`: refused while a server answers on the data directory.
async fn restore(config: &Config, from: &Path, force: bool) -> Result<(), Failure> {
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
    let summary = backup::restore(from, &config.data_dir, force)?;
    println!(
        "restored {} into {}",
        from.display(),
        summary.path.display()
    );
    output::summary(&summary);
    Ok(())
}

/// Every other command: an admin command, its result printed.
async fn administer(config: &Config, command: &Command) -> Result<(), Failure> {
    let (admin_command, json) = admin::admin_command(command)?;
    let generated = match (command, &admin_command) {
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
    let result = admin::run_admin(config, admin_command).await?;
    if let Command::Audit(AuditCommand::Verify { .. }) = command {
        output::result(command, &result, json);
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
    output::result(command, &result, json);
    Ok(())
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

fn init_logging(config: &Config) {
    use tracing_subscriber::EnvFilter;
    // Validated when the configuration was loaded.
    let filter = EnvFilter::try_new(&config.log_level).unwrap_or_else(|_| EnvFilter::new("info"));
    // Colours only on a terminal: a log file or journald gets plain text
    // (every request's span was also formatted with the escape codes).
    let colours = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colours)
        .with_writer(std::io::stderr);
    let _ = match config.log_format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

async fn serve(config: Config, start_up: crate::base::memory::StartUp) -> Result<(), Failure> {
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
    let state = crate::app::build(config, store);
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
    start_up.done();
    if let Some(first) = first {
        print!("{}", first.announce(&base_url));
    }
    println!(
        "tollgate listening on {base_url} (data in {})",
        data_dir.display()
    );
    tracing::info!(%addr, data_dir = %data_dir.display(), "listening");
    let token = server.shutdown.clone();
    let tasks = server.state.tasks.clone();
    server.state.tasks.spawn(async move {
        tokio::select! {
            () = signal => {
                tracing::info!("shutdown requested; finishing requests in flight");
                token.cancel();
            }
            () = tasks.stopping() => {}
        }
    });
    server
        .run()
        .await
        .map_err(|e| Failure::new(format!("server error: {e}")))
}
