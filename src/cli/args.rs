//! The command line's shape: every command, subcommand and option. Each
//! option's doc comment is its `--help` text; the value parsers here make a
//! malformed value a usage error before anything runs.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::auth::accounts::Role;
use crate::auth::keys::ResetInterval;
use crate::config::LogFormat;
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
        /// Start, RFC 3339 (default: midnight UTC of the day 30 days ago).
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
    /// Try the EU AI Act risk classifier (the configured packs and the learned lexical and n-gram layers; no LLM judge).
    #[command(subcommand)]
    Risk(RiskCommand),
    /// Classify one request under the EU AI Act and show the rules that
    /// fired (`--explain`: the words that made each match, and the matches
    /// set aside and why); the same as `risk classify`.
    Classify(ClassifyArgs),
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
        /// Also cross-validate: each phrasing family, and each case, without
        /// the terms that only it uses.
        #[arg(long)]
        cross_validate: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Classify one request made of a purpose, an optional system message
    /// and one user message.
    Classify(ClassifyArgs),
}

/// One request to classify (`tollgate classify`, `tollgate risk classify`).
#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// The declared purpose.
    #[arg(long)]
    pub purpose: Option<String>,
    /// A system message (instructions of the deployer or of a tool).
    #[arg(long)]
    pub system: Option<String>,
    /// The user message.
    pub text: String,
    /// Also show, for each rule, the words that made it match or why a
    /// match was set aside (suppressed, negated, a tool's own prompt).
    #[arg(long)]
    pub explain: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
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

/// `--endpoint`: one of the closed set (checked here, so a typo is a usage
/// error before the server is asked).
fn endpoint_name(text: &str) -> Result<String, String> {
    crate::catalogue::Endpoint::parse(text)
        .map(|e| e.as_str().to_owned())
        .map_err(|e| e.to_string())
}

/// An amount of credits on the command line: a finite number, 0 or more.
/// `NaN` and `inf` parse as `f64` but are no amount, and would reach the
/// server as JSON `null`.
pub(super) fn parse_credits(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(amount) if amount.is_finite() && amount >= 0.0 => Ok(amount),
        _ => Err(format!(
            "`{text}` is not an amount of credits: give a finite number, 0 or more (such as 25 or 2.5)"
        )),
    }
}
