//! The scaling runs of the gateway benchmark: is the cost of a request
//! flat however much the store holds? Each run seeds a fresh store before
//! the server starts (keys, and usage records with their daily rollups,
//! written in bulk through the library the way the charge writes them),
//! starts `tollgate serve` on it, reads its idle resident memory, then
//! measures c=1 (median, p99) and c=32 (requests/s) closed loops, the same
//! phases as the main run, so each row compares with the empty store's row
//! and with the bare proxy of the same run.
//!
//! On the largest store, the reads the dashboard and operators make are
//! timed too: `GET /api/v1/stats?days=14|90` (the Overview),
//! `GET /api/v1/usage` (30 days), and `tollgate usage` as a process, once
//! through the running server's admin socket and once on the store alone.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::load::{self, Target};
use super::procs::Server;
use super::report::{Phase, Reads, Scaling};
use super::tollgate::{self, Prepared, Seed};

/// Timed runs of each read; the median is reported.
const READ_RUNS: usize = 5;

/// What the scaling runs measure: one row per key count (no records),
/// then one per record count (one key).
pub struct Plan {
    pub keys: Vec<usize>,
    pub records: Vec<u64>,
    pub phase: Duration,
}

pub async fn run(plan: &Plan, work: &Path, mock: SocketAddr, hook: &str) -> Vec<Scaling> {
    let mut seeds: Vec<Seed> = plan
        .keys
        .iter()
        .map(|&keys| Seed { keys, records: 0 })
        .collect();
    seeds.extend(
        plan.records
            .iter()
            .filter(|&&r| r > 0)
            .map(|&records| Seed { keys: 1, records }),
    );
    let largest = plan.records.iter().copied().max().unwrap_or(0);
    let http = load::client();
    let mut out = Vec::new();
    for seed in seeds {
        eprintln!(
            "bench: scaling, {} keys, {} usage records (seeding)",
            seed.keys, seed.records
        );
        let dir = work.join(format!("scale-{}-{}", seed.keys, seed.records));
        let prepared = tollgate::prepare(&dir, mock, hook, seed).await;
        let db_bytes = std::fs::metadata(dir.join("data/tollgate.redb")).map_or(0, |m| m.len());
        let server = tollgate::start(&prepared, "tollgate");
        // Idle: started, nothing asked yet.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let idle_rss = server.memory().0;
        let target = Target::new(
            "tollgate",
            format!("http://{}/v1/chat/completions", server.addr),
            "bench",
            "bench-slow",
        )
        .with_keys(prepared.keys.clone());
        load::closed_loop(&http, &target, 8, Duration::from_millis(700)).await;
        let mut phases = Vec::new();
        for concurrency in [1, 32] {
            let cpu = server.cpu_seconds();
            let samples = load::closed_loop(&http, &target, concurrency, plan.phase).await;
            phases.push(Phase::new(
                concurrency,
                &samples,
                server.cpu_seconds() - cpu,
            ));
        }
        let peak_rss = server.memory().1;
        let reads = if seed.records > 0 && seed.records == largest {
            Some(reads(&http, &server, &prepared).await)
        } else {
            None
        };
        let after_reads_rss = server.memory().0;
        drop(server);
        let reads = reads.map(|mut r| {
            r.cli_offline_ms = cli_usage_ms(&prepared);
            r.rss_after = after_reads_rss;
            r
        });
        out.push(Scaling {
            keys: seed.keys,
            records: seed.records,
            seed_seconds: prepared.seed_seconds,
            db_bytes,
            idle_rss,
            c1: phases.remove(0),
            c32: phases.remove(0),
            peak_rss,
            reads,
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
    out
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Median milliseconds of `GET path` with the owner's session.
async fn time_get(http: &reqwest::Client, base: &str, token: &str, path: &str) -> f64 {
    let mut samples = Vec::new();
    for _ in 0..READ_RUNS {
        let started = Instant::now();
        let response = http
            .get(format!("{base}{path}"))
            .bearer_auth(token)
            .send()
            .await
            .and_then(|r| r.error_for_status());
        match response {
            Ok(r) => {
                let _ = r.bytes().await;
                samples.push(started.elapsed().as_secs_f64() * 1000.0);
            }
            Err(e) => {
                eprintln!("bench: GET {path}: {e}");
                return f64::NAN;
            }
        }
    }
    median(samples)
}

async fn reads(http: &reqwest::Client, server: &Server, prepared: &Prepared) -> Reads {
    let base = format!("http://{}", server.addr);
    let login = http
        .post(format!("{base}/api/v1/auth/login"))
        .json(&serde_json::json!({
            "email": "owner@localhost",
            "password": tollgate::OWNER_PASSWORD,
        }))
        .send()
        .await
        .and_then(|r| r.error_for_status());
    let token = match login {
        Ok(r) => r
            .json::<serde_json::Value>()
            .await
            .ok()
            .and_then(|v| v["token"].as_str().map(str::to_owned))
            .unwrap_or_default(),
        Err(e) => {
            eprintln!("bench: signing in for the reads: {e}");
            String::new()
        }
    };
    Reads {
        stats_14_ms: time_get(http, &base, &token, "/api/v1/stats?days=14").await,
        stats_90_ms: time_get(http, &base, &token, "/api/v1/stats?days=90").await,
        usage_ms: time_get(http, &base, &token, "/api/v1/usage").await,
        cli_served_ms: cli_usage_ms(prepared),
        cli_offline_ms: f64::NAN,
        rss_after: 0,
    }
}

/// Median milliseconds of the whole `tollgate usage --json` process (its
/// start, the configuration's loading, the answer): through the server's
/// admin socket while it runs, on the store itself once it stopped.
fn cli_usage_ms(prepared: &Prepared) -> f64 {
    let mut samples = Vec::new();
    for _ in 0..READ_RUNS {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_tollgate"))
            .arg("--config")
            .arg(&prepared.config)
            .arg("--data-dir")
            .arg(prepared.dir.join("data"))
            .args(["usage", "--json"])
            .env_remove("TOLLGATE_CONFIG")
            .current_dir(&prepared.dir)
            .output();
        match out {
            Ok(o) if o.status.success() => {
                samples.push(started.elapsed().as_secs_f64() * 1000.0);
            }
            Ok(o) => {
                eprintln!(
                    "bench: tollgate usage failed: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                return f64::NAN;
            }
            Err(e) => {
                eprintln!("bench: cannot run tollgate usage: {e}");
                return f64::NAN;
            }
        }
    }
    median(samples)
}
