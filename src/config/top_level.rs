//! The top-level settings, each declared once: key, type and range,
//! default, environment variable and help text. The reader
//! (src/config/parse.rs) takes ranges and defaults from here, the
//! unknown-variable refusal lists the variables declared here, and the
//! "Top-level settings" table of docs/configuration.md is these rows
//! (a unit test compares them).

use super::setting::Default::{Bool, Doc, Number, Text, Whole};
use super::setting::Ty::Shape;
use super::setting::{Default, Setting, Ty};

pub const LISTEN: Setting = Setting::new(
    "listen",
    Shape(r#"`"IP:PORT"`"#),
    Text("127.0.0.1:8080"),
    r#"A socket address. An IP, not a host name: `"localhost:8080"` is refused. Flag: `serve --listen`."#,
)
.env("TOLLGATE_LISTEN");

pub const DATA_DIR: Setting = Setting::new(
    "data_dir",
    Shape("path"),
    Text("./tollgate-data"),
    "Holds `tollgate.redb` and `tollgate.sock` (see [storage.md](storage.md)). A relative path is taken relative to the **working directory** of the process, not to the config file. Flag: `--data-dir`.",
)
.env("TOLLGATE_DATA_DIR");

pub const LOG_FORMAT: Setting = Setting::new(
    "log_format",
    Shape(r#"`"text"` or `"json"`"#),
    Text("text"),
    "Logs go to standard error, in colour only when it is a terminal (a file, a pipe or journald gets plain text). Flag: `serve --log-format`.",
)
.env("TOLLGATE_LOG_FORMAT");

pub const LOG_LEVEL: Setting = Setting::new(
    "log_level",
    Shape("string"),
    Text("info"),
    "A `tracing` filter such as `info` or `tollgate=debug,info`. An invalid filter is refused when the configuration is loaded, like any other bad value. Per-request log lines come from `tower_http` at `debug` level, so use `tower_http=debug,info` to see them.",
)
.env("TOLLGATE_LOG_LEVEL");

pub const DEFAULT_RATE_LIMIT: Setting = Setting::new(
    "default_rate_limit",
    Ty::whole(1, u32::MAX as u64, "requests per minute"),
    Whole(60),
    "Requests per minute for keys without their own `rateLimit` (a sliding 60-second window; see [billing.md](billing.md#rate-limits)).",
)
.env("TOLLGATE_DEFAULT_RATE_LIMIT");

pub const FREE_MULTIMODAL_PER_DAY: Setting = Setting::new(
    "free_multimodal_per_day",
    Ty::whole(0, u32::MAX as u64, "requests per day"),
    Whole(5),
    "Multimodal requests (an image or audio part) per UTC day for each free-tier tenant. Reserved at admission, counted durably by the request's charge ([billing.md](billing.md#free-tier-multimodal-cap)).",
)
.env("TOLLGATE_FREE_MULTIMODAL_PER_DAY");

pub const SESSION_TTL_HOURS: Setting = Setting::new(
    "session_ttl_hours",
    Ty::whole(1, u32::MAX as u64, "hours"),
    Whole(12),
    "Lifetime of a dashboard session, counted from sign-in.",
)
.env("TOLLGATE_SESSION_TTL_HOURS");

pub const SHUTDOWN_GRACE_SECONDS: Setting = Setting::new(
    "shutdown_grace_seconds",
    Ty::whole(0, u32::MAX as u64, "seconds"),
    Whole(30),
    "How long shutdown (SIGTERM or Ctrl-C) may take in total. Requests in flight get this less a reserve (a quarter, at most 3 s) for charging, flushing and saving queued webhook events; streams still running then are cut and charged. The order is in [cli.md](cli.md#serve). The systemd unit's `TimeoutStopSec=35` leaves room for it.",
)
.env("TOLLGATE_SHUTDOWN_GRACE_SECONDS");

pub const HEADER_READ_TIMEOUT_SECONDS: Setting = Setting::new(
    "header_read_timeout_seconds",
    Ty::whole(1, 3600, "seconds"),
    Whole(30),
    "How long a client has to send a request's head (HTTP/1); a client sending a byte at a time is disconnected after it. Each connection is served on its own, so a slow client never delays others ([reliability.md](reliability.md)).",
);

pub const BODY_READ_TIMEOUT_SECONDS: Setting = Setting::new(
    "body_read_timeout_seconds",
    Ty::whole(1, 3600, "seconds"),
    Whole(300),
    "How long a client has, once the head arrived, to send the whole body; past it the answer is 408 `request_timeout` ([errors.md](errors.md)).",
);

pub const OWNER_EMAIL: Setting = Setting::new(
    "owner_email",
    Shape("email"),
    Text("owner@localhost"),
    "The owner account created at first start. It is trimmed and lower-cased, and it must have one `@` with a dot (or `localhost`) after it. Ignored once the store is initialized.",
)
.env("TOLLGATE_OWNER_EMAIL");

pub const WEBHOOK_URLS: Setting = Setting::new(
    "webhook_urls",
    Shape("array of URLs"),
    Doc("`[]`"),
    "Operator-level webhook URLs: they get **every** event of every tenant, unsigned ([webhooks.md](webhooks.md)). Each must be `http` or `https` with a host. The operator is trusted: these may point at private addresses. `WEBHOOK_URLS` adds to this list (see below).",
)
// The spec fixes this name, without the `TOLLGATE_` prefix.
.env("WEBHOOK_URLS");

pub const WEBHOOK_ALLOW_PRIVATE_TARGETS: Setting = Setting::new(
    "webhook_allow_private_targets",
    Ty::Bool,
    Bool(false),
    "Lets tenants register webhook URLs on private, loopback and link-local addresses (`10.0.0.0/8`, `127.0.0.1`, `localhost`, `169.254.169.254`, `fc00::/7`, ...). Off, such URLs are refused when registered, and a host name that resolves only to such addresses is not delivered to: no request forgery into your network through the gateway.",
)
.env("TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS");

pub const WEBHOOK_QUEUE_CAPACITY: Setting = Setting::new(
    "webhook_queue_capacity",
    Ty::whole(1, 1_000_000, "events"),
    Whole(10_000),
    "Events waiting for delivery. When the queue is full a new event is dropped, logged and counted (`tollgate_webhook_events_dropped_total`); the API caller never waits.",
);

pub const WEBHOOK_CONCURRENCY: Setting = Setting::new(
    "webhook_concurrency",
    Ty::whole(1, 1024, "deliveries"),
    Whole(32),
    "Deliveries in flight at once.",
);

pub const METRICS_TOKEN: Setting = Setting::new(
    "metrics_token",
    Shape("string, 16 characters or more"),
    Default::None,
    "When set, `GET /metrics` needs `Authorization: Bearer <token>` ([metrics.md](metrics.md)). Without it `/metrics` is public, as Prometheus scrapers expect; keep the port private or set a token.",
)
.env("TOLLGATE_METRICS_TOKEN");

pub const OTLP_ENDPOINT: Setting = Setting::new(
    "otlp_endpoint",
    Shape("http(s) URL"),
    Doc("none (no traces)"),
    "OpenTelemetry collector base URL: spans are posted as OTLP/HTTP protobuf to `{otlp_endpoint}/v1/traces`, e.g. `http://127.0.0.1:4318` ([observability.md](observability.md)). An empty `TOLLGATE_OTLP_ENDPOINT` turns traces off.",
)
.env("TOLLGATE_OTLP_ENDPOINT");

pub const OTLP_HEADERS: Setting = Setting::new(
    "otlp_headers",
    Shape("table of header name → value"),
    Default::None,
    r#"Headers sent with every export, such as a vendor's API key (`otlp_headers = { "x-honeycomb-team" = "..." }`). Values are secrets: never logged, never printed."#,
);

pub const OTLP_SAMPLE_RATIO: Setting = Setting::new(
    "otlp_sample_ratio",
    Ty::Number { min: 0.0, max: 1.0 },
    Number(1.0),
    "Share of new traces recorded. A caller's `traceparent` decides for its own trace (parent-based sampling).",
);

pub const JUDGE_TIMEOUT_MS: Setting = Setting::new(
    "judge_timeout_ms",
    Ty::whole(100, 60_000, "milliseconds"),
    Whole(5_000),
    "Time the risk judge model has to answer; past it the rule result stands and `risk_classification.judge.error` says so ([compliance-operations.md](compliance-operations.md#llm-judge)).",
);

pub const INCIDENT_SAMPLE_SHARE: Setting = Setting::new(
    "incident_sample_share",
    Ty::Number { min: 0.0, max: 1.0 },
    Number(0.05),
    "Share of served responses the monitoring sampler classifies; an answer rated `prohibited` files an incident ([compliance-operations.md](compliance-operations.md#incidents-article-73)). `0` turns the output sampling off.",
);

pub const INCIDENT_WINDOW_SECONDS: Setting = Setting::new(
    "incident_window_seconds",
    Ty::whole(1, 86_400, "seconds"),
    Whole(300),
    "Window in which the sampler counts a tenant's refusals of prohibited uses.",
);

pub const INCIDENT_REFUSAL_BURST: Setting = Setting::new(
    "incident_refusal_burst",
    Ty::whole(1, 1_000_000, "refusals"),
    Whole(20),
    "Refusals of prohibited uses by one tenant within one window that file a `refusal_burst` incident (once per window).",
);

pub const COMPLIANCE_SWEEP_SECONDS: Setting = Setting::new(
    "compliance_sweep_seconds",
    Ty::whole(1, 86_400, "seconds"),
    Whole(60),
    "Interval of the sweep that deletes conversation records past their retention, expires undecided review items, and prunes raw usage records and audit entries past theirs.",
);

pub const STORE_CACHE_MB: Setting = Setting::new(
    "store_cache_mb",
    Ty::whole(8, 1_048_576, "MiB"),
    Whole(crate::store::DEFAULT_CACHE_MB),
    "MiB of the store's page cache (redb's read and write cache). It bounds the store's share of resident memory whatever the store file's size: a 3 GB store on the default takes about 128 MiB of it, not the file. More cache keeps more of a large store's pages in memory (fewer disk reads for dashboards and key lookups); the hot path (admission, the charge journal) does not read the store. Also used by administrative commands run without a server (`tollgate usage`, `backup`) ([scaling.md](scaling.md#memory)).",
)
.env("TOLLGATE_STORE_CACHE_MB");

/// About a hundred years: in effect, keep everything.
pub const MAX_RETENTION_DAYS: u64 = 36_500;

pub const USAGE_RETENTION_DAYS: Setting = Setting::new(
    "usage_retention_days",
    Ty::whole(1, MAX_RETENTION_DAYS, "days"),
    Whole(400),
    "Days raw usage records (`GET /api/v1/usage/records`) are kept, counted in whole UTC days. Older records are deleted by the sweep in batches of 2,000 (one short transaction each). Their daily rollups are kept, so `/api/v1/usage`, `/api/v1/stats`, the wallet history and `tollgate usage` answer the same totals after the records are gone ([storage.md](storage.md#rollups-and-retention)).",
);

/// The shortest audit retention: six months (EU AI Act Article 19 for
/// providers' logs, Article 26(6) for deployers').
pub const AUDIT_RETENTION_DAYS: Setting = Setting::new(
    "audit_retention_days",
    Ty::whole(183, MAX_RETENTION_DAYS, "days"),
    Whole(400),
    "Days audit entries are kept. At least 183 (six months: EU AI Act Articles 19 and 26(6)); a smaller value refuses the configuration (`must be 183 to 36500: audit entries are kept at least six months (EU AI Act Articles 19 and 26(6))`). The oldest entries are pruned from the start of the chain; the last pruned entry's sequence number and digest are kept as a checkpoint that `audit verify` starts from ([compliance-operations.md](compliance-operations.md#audit-log)).",
)
.why("audit entries are kept at least six months (EU AI Act Articles 19 and 26(6))");

pub const IMAGE_FETCH_ALLOW_PRIVATE_TARGETS: Setting = Setting::new(
    "image_fetch_allow_private_targets",
    Ty::Bool,
    Bool(false),
    "Lets image URLs that the gateway fetches for a provider (Gemini takes bytes) point at private, loopback and link-local addresses. Off, such URLs are refused with 400 ([chat.md](chat.md#remote-images)).",
)
.env("TOLLGATE_IMAGE_FETCH_ALLOW_PRIVATE_TARGETS");

pub const RISK_RULES_DIR: Setting = Setting::new(
    "risk_rules_dir",
    Shape("directory path"),
    Default::None,
    "A directory of EU AI Act rule packs (`*.toml`): a file replaces the built-in pack of the same name (`en.toml`, `de.toml`, `fr.toml`, `es.toml`, `rules.toml`), any other adds one (`it.toml`). Relative paths are read from the working directory. Every pack is compiled at start; a bad one refuses the configuration with exit code 2 and names the file ([compliance.md](compliance.md#rule-packs)).",
)
.env("TOLLGATE_RISK_RULES_DIR");

pub const SSO: Setting = Setting::new(
    "[sso]",
    Shape("table"),
    Default::None,
    "See [Single sign-on](#single-sign-on).",
);

pub const PROVIDERS: Setting = Setting::new(
    "[[providers]]",
    Shape("array of tables"),
    Default::None,
    "See [Providers](#providers).",
);

pub const MODELS: Setting = Setting::new(
    "[[models]]",
    Shape("array of tables"),
    Default::None,
    "See [Models](#models).",
);

/// Every top-level setting, in the docs' order.
pub const TOP_LEVEL: &[Setting] = &[
    LISTEN,
    DATA_DIR,
    LOG_FORMAT,
    LOG_LEVEL,
    DEFAULT_RATE_LIMIT,
    FREE_MULTIMODAL_PER_DAY,
    SESSION_TTL_HOURS,
    SHUTDOWN_GRACE_SECONDS,
    HEADER_READ_TIMEOUT_SECONDS,
    BODY_READ_TIMEOUT_SECONDS,
    OWNER_EMAIL,
    WEBHOOK_URLS,
    WEBHOOK_ALLOW_PRIVATE_TARGETS,
    WEBHOOK_QUEUE_CAPACITY,
    WEBHOOK_CONCURRENCY,
    METRICS_TOKEN,
    OTLP_ENDPOINT,
    OTLP_HEADERS,
    OTLP_SAMPLE_RATIO,
    JUDGE_TIMEOUT_MS,
    INCIDENT_SAMPLE_SHARE,
    INCIDENT_WINDOW_SECONDS,
    INCIDENT_REFUSAL_BURST,
    COMPLIANCE_SWEEP_SECONDS,
    STORE_CACHE_MB,
    USAGE_RETENTION_DAYS,
    AUDIT_RETENTION_DAYS,
    IMAGE_FETCH_ALLOW_PRIVATE_TARGETS,
    RISK_RULES_DIR,
    SSO,
    PROVIDERS,
    MODELS,
];

/// Environment variables that are not a setting's override: the file's
/// path, a first-start secret, the documented home of the single sign-on
/// client secret (any variable named by `sso.client_secret_env` works),
/// and the store writer's checkpoint interval (docs/storage.md).
pub const ENV_OTHER: &[&str] = &[
    "TOLLGATE_CONFIG",
    "TOLLGATE_OWNER_PASSWORD",
    "TOLLGATE_SSO_CLIENT_SECRET",
    "TOLLGATE_JOURNAL_CHECKPOINT_MS",
];

/// Every `TOLLGATE_*` variable Tollgate reads: the settings' overrides,
/// in declaration order, then the others.
pub fn known_env() -> Vec<&'static str> {
    TOP_LEVEL
        .iter()
        .filter_map(|s| s.env)
        .filter(|name| name.starts_with("TOLLGATE_"))
        .chain(ENV_OTHER.iter().copied())
        .collect()
}
