//! Tollgate as it runs in production: the real binary
//! (`target/release/tollgate serve`) as a child process, on a data
//! directory and configuration prepared here, with everything on:
//!
//! - API-key authentication, and a per-key rate limit (high enough never
//!   to refuse, so it is checked on every request but not what is timed);
//! - risk classification of every request, the monitoring sampler;
//! - a durable charge per request (usage record, key consumption, audit
//!   entry, all in one group-committed transaction);
//! - events: an operator webhook URL pointing at the benchmark's loopback
//!   receiver, so `request.completed` is delivered for every request;
//! - metrics (always on), logging at `info` to a file.
//!
//! Before the server starts, the store can be seeded through the library
//! with many keys and many usage records (with their daily rollups),
//! written in large batched transactions (the scaling runs).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tollgate::auth::keys::{self, ApiKey, KeySettings, Keys, Latitude, ResetInterval};
use tollgate::base::time::now_ms;
use tollgate::billing::{USAGE_TABLE, UsageRecord, rollups};
use tollgate::catalogue::Endpoint;
use tollgate::config::{self, Overrides};
use tollgate::store::Store;

use super::procs::Server;

/// The rate limit on every benchmark key, per minute: checked on every
/// request, never reached.
const RATE_LIMIT: u32 = 1_000_000_000;

/// The owner's password (`owner@localhost`), set at first start.
pub const OWNER_PASSWORD: &str = "bench-password-0";

/// What the store holds before the server starts.
#[derive(Debug, Clone, Copy)]
pub struct Seed {
    pub keys: usize,
    pub records: u64,
}

/// A prepared data directory: its configuration and the key values.
pub struct Prepared {
    pub dir: PathBuf,
    pub config: PathBuf,
    pub keys: Vec<String>,
    /// Seconds spent writing the usage records.
    pub seed_seconds: f64,
}

/// The bench's configuration; an empty `hook` registers no webhook URL
/// (`--no-webhooks`).
fn config_text(mock: SocketAddr, hook: &str) -> String {
    let pricing =
        "pricing = { unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }";
    let webhooks = if hook.is_empty() {
        String::new()
    } else {
        format!("webhook_urls = [\"{hook}\"]\n")
    };
    let mut text = format!(
        "{webhooks}log_level = \"info\"\n\
         [[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"http://{mock}/v1\"\n\
         [[providers]]\nid = \"mock\"\nkind = \"mock\"\n"
    );
    for (id, provider, upstream) in [
        ("bench", "up", "bench"),
        ("bench-slow", "up", "bench-slow"),
        ("bench-mock", "mock", "fixed:Hello, benchmark."),
    ] {
        text.push_str(&format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{upstream}\"\n\
             input = [\"TEXT\"]\noutput = [\"TEXT\"]\ncontext_window = 8192\n{pricing}\n"
        ));
    }
    text
}

/// Writes the configuration, initializes the store, creates `seed.keys`
/// keys and `seed.records` usage records, and closes the store.
pub async fn prepare(dir: &Path, mock: SocketAddr, hook: &str, seed: Seed) -> Prepared {
    std::fs::create_dir_all(dir).expect("cannot create the bench directory");
    let config_path = dir.join("tollgate.toml");
    std::fs::write(&config_path, config_text(mock, hook)).expect("cannot write the config");
    let overrides = Overrides {
        listen: None,
        data_dir: Some(dir.join("data")),
        log_format: None,
    };
    let config = config::load(Some(&config_path), &|_| None, &[], &overrides)
        .expect("the bench configuration is valid");
    let store = Arc::new(Store::open(&config.data_dir).expect("cannot open the store"));
    tollgate::setup::first_start(&store, &config, Some(OWNER_PASSWORD.into()))
        .await
        .expect("first start");
    let first = Keys::new(store.clone())
        .create(
            "default",
            KeySettings {
                name: "bench-0".into(),
                rate_limit: Some(RATE_LIMIT),
                ..Default::default()
            },
            Latitude::Any,
        )
        .await
        .expect("a key");
    let mut values = vec![first.value];
    let mut ids = vec![first.key.id.clone()];
    let tenant = first.key.tenant_id.clone();
    // The other keys, 5,000 to a transaction.
    while values.len() < seed.keys {
        let batch: Vec<(ApiKey, String)> = (values.len()..seed.keys.min(values.len() + 5_000))
            .map(|i| bench_key(&tenant, i))
            .collect();
        let records: Vec<ApiKey> = batch.iter().map(|(k, _)| k.clone()).collect();
        store
            .write(move |txn| {
                for key in &records {
                    keys::insert(txn, key)?;
                }
                Ok(())
            })
            .await
            .expect("seeding keys");
        for (key, value) in batch {
            ids.push(key.id);
            values.push(value);
        }
    }
    let started = Instant::now();
    seed_usage(&store, &tenant, Arc::new(ids), seed.records).await;
    let seed_seconds = started.elapsed().as_secs_f64();
    store.close();
    drop(store);
    Prepared {
        dir: dir.to_owned(),
        config: config_path,
        keys: values,
        seed_seconds,
    }
}

fn bench_key(tenant: &str, i: usize) -> (ApiKey, String) {
    let issued = keys::generate_value();
    let key = ApiKey {
        id: tollgate::base::ids::new_id("key"),
        tenant_id: tenant.to_owned(),
        owner_account_id: None,
        name: format!("bench-{i}"),
        digest: issued.digest,
        hint: issued.hint,
        credit_limit: None,
        credits_consumed: 0,
        reset_interval: ResetInterval::Never,
        cycle_start: 0,
        rate_limit: Some(RATE_LIMIT),
        expires_at: None,
        allow_high_risk: false,
        notified_thresholds: Vec::new(),
        created_at: now_ms(),
        revoked_at: None,
        rotated_from: None,
        tpm_limit: None,
    };
    (key, issued.value)
}

/// `count` usage records over the last 90 days, spread over the keys,
/// 250,000 to a transaction, written as the charge's applier writes them:
/// the record and its share of the daily rollup.
async fn seed_usage(store: &Store, tenant: &str, key_ids: Arc<Vec<String>>, count: u64) {
    const BATCH: u64 = 250_000;
    const SPAN_MS: i64 = 90 * 24 * 3600 * 1000;
    let since = now_ms() - SPAN_MS;
    let step = (SPAN_MS as f64 / count.max(1) as f64).max(0.001);
    let mut from = 0;
    while from < count {
        let to = count.min(from + BATCH);
        let (tenant, key_ids) = (tenant.to_owned(), key_ids.clone());
        store
            .write(move |txn| {
                for i in from..to {
                    let record = UsageRecord {
                        request_id: format!("req_seed{i:012}"),
                        key_id: key_ids[(i % key_ids.len() as u64) as usize].clone(),
                        tenant_id: tenant.clone(),
                        model: "bench".into(),
                        provider: "up".into(),
                        prompt_tokens: 18,
                        completion_tokens: 16,
                        cost: 50,
                        latency_ms: 1,
                        is_fallback: false,
                        streamed: false,
                        estimated: false,
                        at: since + (i as f64 * step) as i64,
                        endpoint: Endpoint::Chat,
                    };
                    USAGE_TABLE.put(txn, &record.row_key(), &record)?;
                    rollups::add(txn, &record)?;
                }
                Ok(())
            })
            .await
            .expect("seeding usage records");
        from = to;
    }
}

/// Starts `tollgate serve` on the prepared directory.
pub fn start(prepared: &Prepared, name: &str) -> Server {
    let port = super::free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut command = Command::new(env!("CARGO_BIN_EXE_tollgate"));
    command
        .arg("--config")
        .arg(&prepared.config)
        .arg("--data-dir")
        .arg(prepared.dir.join("data"))
        .args(["serve", "--listen", &addr.to_string()])
        .env_remove("TOLLGATE_CONFIG")
        .current_dir(&prepared.dir);
    let server = Server::start(name, command, addr, &prepared.dir.join("tollgate.log"));
    // The server answers once its catalogue and packs are ready; give its
    // background tasks a moment too.
    std::thread::sleep(Duration::from_millis(200));
    server
}
