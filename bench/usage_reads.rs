//! Usage reads at scale: pre-populates a store with many usage records
//! (`USAGE_RECORDS`, 1,000,000 by default) spread over 90 days, 100 keys,
//! 3 models and 2 endpoints, written as the charge writes them (the record
//! and its rollup in one transaction, here 20,000 records a transaction),
//! then times the reads of `GET /api/v1/usage` (30 days), the Overview
//! (`GET /api/v1/stats`, 14 and 90 days) and `tollgate usage`, against the
//! raw-record scan the same answers cost before rollups.
//!
//! `cargo bench --bench usage_reads` (`USAGE_RECORDS=10000000` for the
//! issue's 10 M). Nothing asserts a timing.

use std::time::Instant;

use tollgate::base::time::now_ms;
use tollgate::billing::usage::{self, Scope};
use tollgate::billing::{USAGE_TABLE, UsageRecord, rollups};
use tollgate::catalogue::Endpoint;
use tollgate::store::Store;

const DAY_MS: i64 = 86_400_000;
const BATCH: u64 = 20_000;

fn median_ms(mut runs: Vec<f64>) -> f64 {
    runs.sort_by(|a, b| a.total_cmp(b));
    runs[runs.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut out = None;
    let mut samples = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        out = Some(f());
        samples.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    (median_ms(samples), out.expect("one run"))
}

#[tokio::main]
async fn main() {
    let total: u64 = std::env::var("USAGE_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path()).expect("store");
    let now = now_ms();
    let start = now - 90 * DAY_MS;
    let step = (90 * DAY_MS) / total as i64;
    let models = ["gpt-4o-mini", "claude-haiku", "mock-chat"];
    let began = Instant::now();
    let mut written = 0;
    while written < total {
        let first = written;
        let n = BATCH.min(total - written);
        store
            .write(move |txn| {
                for i in first..first + n {
                    let record = UsageRecord {
                        request_id: format!("req_{i:026}"),
                        key_id: format!("key_{:026}", i % 100),
                        // A key belongs to one tenant.
                        tenant_id: format!("ten_{:026}", (i % 100) % 7),
                        model: models[(i % 3) as usize].to_owned(),
                        provider: "mock".to_owned(),
                        prompt_tokens: 20 + i % 50,
                        completion_tokens: 10 + i % 200,
                        cost: 150 + i % 1_000,
                        latency_ms: 40,
                        is_fallback: false,
                        streamed: i % 2 == 0,
                        estimated: false,
                        at: start + i as i64 * step,
                        endpoint: if i % 10 == 0 {
                            Endpoint::Embeddings
                        } else {
                            Endpoint::Chat
                        },
                    };
                    USAGE_TABLE.put(txn, &record.row_key(), &record)?;
                    rollups::add(txn, &record)?;
                }
                Ok(())
            })
            .await
            .expect("populating");
        written += n;
    }
    let populate_s = began.elapsed().as_secs_f64();
    let file_bytes = std::fs::metadata(store.path())
        .map(|m| m.len())
        .unwrap_or(0);
    println!(
        "populated {total} usage records in {populate_s:.1} s; store file {:.1} MB ({:.0} bytes a record with its rollup share)",
        file_bytes as f64 / 1e6,
        file_bytes as f64 / total as f64
    );

    let today = now.div_euclid(DAY_MS) * DAY_MS;
    let scope = |from: i64, to: i64| Scope {
        tenant_id: None,
        key_ids: None,
        from,
        to,
        endpoint: None,
    };
    let usage_30 = scope(usage::default_from(now), now + 1);
    let stats_14 = scope(today - 13 * DAY_MS, today + DAY_MS);
    let stats_90 = scope(today - 89 * DAY_MS, today + DAY_MS);
    let one_key = Scope {
        key_ids: Some(vec![format!("key_{:026}", 42)]),
        ..usage_30.clone()
    };
    let (ms, report) = time(5, || usage::aggregate(&store, &usage_30).expect("usage"));
    println!(
        "GET /api/v1/usage (30 days, every tenant; tollgate usage): {ms:.1} ms median, {} rows, {} requests",
        report["data"].as_array().map_or(0, Vec::len),
        report["totals"]["requests"]
    );
    let (ms, report) = time(5, || usage::aggregate(&store, &one_key).expect("usage"));
    println!(
        "GET /api/v1/usage?keyId= (30 days, one key): {ms:.1} ms median, {} requests",
        report["totals"]["requests"]
    );
    for (label, s) in [("14", &stats_14), ("90", &stats_90)] {
        let (ms, rows) = time(5, || usage::rows(&store, s).expect("rows"));
        let requests: u64 = rows.iter().map(|r| r.sum.requests).sum();
        println!(
            "GET /api/v1/stats?days={label} (Overview, rollup part): {ms:.1} ms median, {} rollup rows, {requests} requests",
            rows.len()
        );
    }
    let (ms, records) = time(1, || usage::records(&store, &stats_90).expect("records"));
    println!(
        "before rollups: scanning the raw records of 90 days: {ms:.0} ms ({} records)",
        records.len()
    );
    store.close();
}
