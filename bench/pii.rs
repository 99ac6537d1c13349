//! PII redaction benchmark: microseconds per KiB of text for the built-in
//! detectors, on the labelled set (dense in personal data, 8 languages)
//! and on ordinary prose with numbers but no personal data, plus a whole
//! request's redaction (placeholders included).
//!
//! `cargo bench --bench pii` (add `-- --quick` for a short run). Figures go
//! to stdout and to `target/bench/pii.json`. The aim (issue 26) is under
//! 20 µs per KiB; nothing here asserts a timing.

use std::hint::black_box;
use std::time::Instant;

use tollgate::pii::{Mode, Session, detect};

/// Median nanoseconds of `f` over `runs` calls.
fn median(runs: usize, mut f: impl FnMut()) -> u64 {
    for _ in 0..runs / 10 {
        f();
    }
    let mut samples: Vec<u64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_nanos() as u64
        })
        .collect();
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn per_kib(nanos: u64, bytes: usize) -> f64 {
    nanos as f64 / 1000.0 / (bytes as f64 / 1024.0)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 200 } else { 2_000 };
    let labelled = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pii/labelled.jsonl"),
    )
    .unwrap();
    let dense: String = labelled
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n");
    let prose = "Our nightly export job failed again with a timeout after about 40 minutes; \
        the logs mention the database connection pool (size 20, version 3.2.1). Invoice \
        2024-00017 for 1.234,56 EUR was paid on 12.03.2024 at 10:30. Please check the \
        query plan, the index on orders(customer_id, created_at) and the 16 worker threads. "
        .repeat(40);
    let scan_dense = median(runs, || {
        black_box(detect::scan(black_box(&dense)));
    });
    let scan_prose = median(runs, || {
        black_box(detect::scan(black_box(&prose)));
    });
    let redact_dense = median(runs, || {
        let mut session = Session::new(Mode::Logs, &[]);
        black_box(session.redact(black_box(&dense)).len());
    });
    let figures = serde_json::json!({
        "dense_bytes": dense.len(),
        "prose_bytes": prose.len(),
        "scan_dense_us_per_kib": per_kib(scan_dense, dense.len()),
        "scan_prose_us_per_kib": per_kib(scan_prose, prose.len()),
        "redact_dense_us_per_kib": per_kib(redact_dense, dense.len()),
        "aim_us_per_kib": 20,
    });
    println!("PII detection, median of {runs} runs");
    println!(
        "  labelled set ({} KiB, dense in PII): scan {:.2} µs/KiB, redact {:.2} µs/KiB",
        dense.len() / 1024,
        per_kib(scan_dense, dense.len()),
        per_kib(redact_dense, dense.len())
    );
    println!(
        "  prose without PII ({} KiB): scan {:.2} µs/KiB (aim < 20)",
        prose.len() / 1024,
        per_kib(scan_prose, prose.len())
    );
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pii.json"), figures.to_string()).unwrap();
}
