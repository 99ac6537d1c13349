//! Foundation benchmarks: API-key authentication and the group-commit
//! writer, each printed beside a baseline measured in the same run.
//!
//! `cargo bench --bench foundation` (add `-- --quick` for a short run).
//! Figures go to stdout and to `target/bench/foundation.json`. Nothing here
//! asserts a timing: the aims are printed next to what was reached.
#![allow(clippy::disallowed_methods)] // Test and bench code spawns its own clients and servers.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use axum::http::{HeaderMap, HeaderValue};
use serde_json::json;
use tollgate::api::extract::presented_key;
use tollgate::auth::keys::{KeySettings, Keys, Latitude};
use tollgate::base::time::now_ms;
use tollgate::store::Store;
use tollgate::store::tables::META;
use tollgate::tenants::{self, Tier};

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn summarize(mut samples: Vec<u64>) -> (u64, u64) {
    samples.sort_unstable();
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

/// One small durable write (16 bytes under `key`) through the writer.
async fn small_write(store: &Store, key: String) {
    store
        .write(move |txn| {
            txn.open_table(META)?
                .insert(key.as_bytes(), [1u8; 16].as_slice())?;
            Ok(())
        })
        .await
        .unwrap();
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path()).unwrap());
    let keys = Keys::new(store.clone());

    // ---- Authentication: header to key record -------------------------
    let key_count = if quick { 1_000 } else { 10_000 };
    let values: Vec<String> = runtime.block_on(async {
        tenants::create(&store, "bench", Tier::Paid).await.unwrap();
        let mut values = Vec::with_capacity(key_count);
        for i in 0..key_count {
            let settings = KeySettings {
                name: format!("k{i}"),
                ..Default::default()
            };
            values.push(
                keys.create("bench", settings, Latitude::Any)
                    .await
                    .unwrap()
                    .value,
            );
        }
        values
    });
    let headers: Vec<HeaderMap> = values
        .iter()
        .map(|v| {
            let mut h = HeaderMap::new();
            h.insert(
                "authorization",
                HeaderValue::from_str(&format!("Bearer {v}")).unwrap(),
            );
            h
        })
        .collect();
    let rounds = if quick { 50_000 } else { 400_000 };
    let now = now_ms();

    // Cold: a fresh service, so every key is read from redb once; then
    // warm: the cache serves.
    let cold_keys = Keys::new(store.clone());
    let time_auth = |count: usize| -> Vec<u64> {
        (0..count)
            .map(|i| {
                let h = &headers[i % headers.len()];
                let start = Instant::now();
                let key = cold_keys
                    .authenticate(presented_key(h).unwrap(), now)
                    .unwrap();
                let elapsed = start.elapsed().as_nanos() as u64;
                std::hint::black_box(key);
                elapsed
            })
            .collect()
    };
    let cold = time_auth(key_count);
    let warm = time_auth(rounds);
    // Baseline: the digest alone, the floor of any digest-based lookup.
    let mut digest = Vec::with_capacity(rounds);
    for i in 0..rounds {
        let v = &values[i % values.len()];
        let start = Instant::now();
        std::hint::black_box(tollgate::base::ids::sha256(v.as_bytes()));
        digest.push(start.elapsed().as_nanos() as u64);
    }
    let (warm_p50, warm_p99) = summarize(warm);
    let (cold_p50, cold_p99) = summarize(cold);
    let (digest_p50, _) = summarize(digest);

    // ---- Writer: many callers, small durable writes --------------------
    let callers = 256;
    let per_caller = if quick { 100 } else { 400 };
    let total = callers * per_caller;
    let before_commits = store.writer_stats().commits.load(Ordering::Relaxed);
    let before_jobs = store.writer_stats().jobs.load(Ordering::Relaxed);
    let elapsed = runtime.block_on(async {
        let start = Instant::now();
        let mut tasks = Vec::new();
        for c in 0..callers {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..per_caller {
                    small_write(&store, format!("bench-{c}-{i}")).await;
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        start.elapsed()
    });
    let stats = store.writer_stats();
    let commits = stats.commits.load(Ordering::Relaxed) - before_commits;
    let jobs = stats.jobs.load(Ordering::Relaxed) - before_jobs;
    let grouped_rate = total as f64 / elapsed.as_secs_f64();

    // Baseline: one caller, so one durable commit per write.
    let single_count = if quick { 300 } else { 2_000 };
    let single_elapsed = runtime.block_on(async {
        let start = Instant::now();
        for i in 0..single_count {
            small_write(&store, format!("single-{i}")).await;
        }
        start.elapsed()
    });
    let single_rate = single_count as f64 / single_elapsed.as_secs_f64();
    store.close();

    let us = |ns: u64| ns as f64 / 1000.0;
    println!("Tollgate foundation benchmarks ({} keys)", key_count);
    println!();
    println!("API-key authentication, header to key record");
    println!(
        "  {:<28} {:>10} {:>10} {:>12}",
        "", "p50 (us)", "p99 (us)", "p50 ratio"
    );
    println!(
        "  {:<28} {:>10.2} {:>10} {:>12}",
        "baseline: SHA-256 only",
        us(digest_p50),
        "-",
        "1.00"
    );
    println!(
        "  {:<28} {:>10.2} {:>10.2} {:>12.2}",
        "authenticate (cached)",
        us(warm_p50),
        us(warm_p99),
        warm_p50 as f64 / digest_p50.max(1) as f64
    );
    println!(
        "  {:<28} {:>10.2} {:>10.2} {:>12.2}",
        "authenticate (first, redb)",
        us(cold_p50),
        us(cold_p99),
        cold_p50 as f64 / digest_p50.max(1) as f64
    );
    println!(
        "  aim: median under 5 us -> {}",
        if us(warm_p50) < 5.0 { "met" } else { "NOT met" }
    );
    println!();
    println!("Writer, small durable writes ({callers} concurrent callers)");
    println!("  {:<28} {:>12} {:>10}", "", "writes/s", "ratio");
    println!(
        "  {:<28} {:>12.0} {:>10}",
        "baseline: 1 caller", single_rate, "1.00"
    );
    println!(
        "  {:<28} {:>12.0} {:>10.2}",
        "group commit",
        grouped_rate,
        grouped_rate / single_rate
    );
    println!(
        "  batches: {commits} commits for {jobs} writes (mean {:.1} per commit, largest {})",
        jobs as f64 / commits.max(1) as f64,
        stats.largest_batch.load(Ordering::Relaxed)
    );
    println!(
        "  aim: at least 20,000 writes/s -> {}",
        if grouped_rate >= 20_000.0 {
            "met"
        } else {
            "NOT met"
        }
    );

    let report = json!({
        "auth": {
            "keys": key_count,
            "baseline_sha256_p50_ns": digest_p50,
            "cached_p50_ns": warm_p50,
            "cached_p99_ns": warm_p99,
            "first_lookup_p50_ns": cold_p50,
            "first_lookup_p99_ns": cold_p99,
        },
        "writer": {
            "callers": callers,
            "writes": total,
            "seconds": elapsed.as_secs_f64(),
            "writes_per_second": grouped_rate,
            "baseline_single_caller_writes_per_second": single_rate,
            "commits": commits,
            "mean_batch": jobs as f64 / commits.max(1) as f64,
        },
    });
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    let _ = std::fs::create_dir_all(&out);
    let _ = std::fs::write(
        out.join("foundation.json"),
        serde_json::to_vec_pretty(&report).unwrap(),
    );
}
