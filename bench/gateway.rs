//! Gateway overhead: one mock upstream called three ways on loopback, in
//! one run, so every figure has its baseline beside it:
//!
//! - **direct**: the client calls the upstream;
//! - **bare proxy**: through a reverse proxy written here (axum + the same
//!   reqwest client settings, no auth, no parsing, no billing): the floor
//!   any Rust gateway pays;
//! - **tollgate**: through the real router (API-key auth, JSON parsing,
//!   classification, the fallback walk, response extensions), on a real
//!   store in a temporary directory, logging at `info` as `serve` does;
//!   every request is billed, its charge durable before the answer leaves
//!   (the writer's batch sizes at c=32 are printed).
//!
//! Printed: requests per second at concurrency 32, and median and p99
//! latency at concurrency 1, each as a ratio to the direct call; the median
//! added latency in microseconds; Tollgate's throughput as a share of the
//! bare proxy's. `cargo bench --bench gateway` (`-- --quick` for a short
//! run). Figures also go to `target/bench/gateway.json`. Nothing is
//! asserted: the aims are printed beside what was reached.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;
use tollgate::app::{AppState, Server};
use tollgate::auth::keys::KeySettings;
use tollgate::config::{self, Overrides};
use tollgate::store::Store;

/// The allocator the binary uses (src/main.rs), so the figures are the
/// binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BODY: &str = r#"{"model":"bench","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello to the benchmark."}]}"#;

const MOCK_BODY: &str = r#"{"model":"bench-mock","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello to the benchmark."}]}"#;

fn upstream_completion() -> Bytes {
    Bytes::from(
        json!({
            "id": "chatcmpl-bench", "object": "chat.completion", "created": 1_700_000_000, "model": "bench",
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": "Hello, benchmark." }, "finish_reason": "stop" }],
            "usage": { "prompt_tokens": 18, "completion_tokens": 4, "total_tokens": 22 },
        })
        .to_string(),
    )
}

async fn serve(router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    addr
}

/// The mock upstream: reads the body, answers a fixed completion.
async fn start_upstream() -> SocketAddr {
    let completion = upstream_completion();
    let router = Router::new().route(
        "/v1/chat/completions",
        post(move |body: Bytes| {
            let completion = completion.clone();
            async move {
                std::hint::black_box(body);
                ([(header::CONTENT_TYPE, "application/json")], completion)
            }
        }),
    );
    serve(router).await
}

/// The floor: forwards the bytes both ways and nothing else.
async fn start_bare_proxy(upstream: SocketAddr) -> SocketAddr {
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .pool_idle_timeout(Duration::from_secs(90))
        .build()
        .unwrap();
    let target = Arc::new(format!("http://{upstream}/v1/chat/completions"));
    let router = Router::new()
        .route(
            "/v1/chat/completions",
            post(
                |State((http, target)): State<(reqwest::Client, Arc<String>)>,
                 headers: HeaderMap,
                 body: Bytes| async move {
                    let mut request = http.post(target.as_str()).body(body);
                    if let Some(kind) = headers.get(header::CONTENT_TYPE) {
                        request = request.header(header::CONTENT_TYPE, kind);
                    }
                    match request.send().await {
                        Ok(response) => {
                            let status = response.status();
                            let bytes = response.bytes().await.unwrap_or_default();
                            let mut out: Response = bytes.into_response();
                            *out.status_mut() = StatusCode::from_u16(status.as_u16()).unwrap();
                            out.headers_mut()
                                .insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
                            out
                        }
                        Err(_) => StatusCode::BAD_GATEWAY.into_response(),
                    }
                },
            ),
        )
        .with_state((http, target));
    serve(router).await
}

/// The real gateway, in process, on a fresh store. Returns its address
/// and an API key.
async fn start_tollgate(
    upstream: SocketAddr,
    dir: &std::path::Path,
) -> (SocketAddr, String, Arc<Store>) {
    let config_path = dir.join("bench.toml");
    std::fs::write(
        &config_path,
        format!(
            "[[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"http://{upstream}/v1\"\n\
             [[providers]]\nid = \"mock\"\nkind = \"mock\"\n\
             [[models]]\nid = \"bench-mock\"\nprovider = \"mock\"\nupstream = \"fixed:Hello, benchmark.\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
             context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n\
             [[models]]\nid = \"bench\"\nprovider = \"up\"\nupstream = \"bench\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
             context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
        ),
    )
    .unwrap();
    let overrides = Overrides {
        listen: Some("127.0.0.1:0".parse().unwrap()),
        data_dir: Some(dir.join("data")),
        log_format: None,
    };
    let config = config::load(Some(&config_path), &|_| None, &[], &overrides).unwrap();
    // Logging as `serve` does (at `info`), written to a sink.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(&config.log_level))
        .with_writer(std::io::sink)
        .try_init();
    let store = Store::open(&config.data_dir).unwrap();
    tollgate::setup::first_start(&store, &config, Some("bench-password".into()))
        .await
        .unwrap();
    let state = AppState::new(config, store);
    let key = state
        .keys
        .create(
            "default",
            KeySettings {
                name: "bench".into(),
                // The per-minute limit is not what is measured.
                rate_limit: Some(u32::MAX),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .value;
    let store = state.store.clone();
    let server = Server::bind(state).await.unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.run());
    (addr, key, store)
}

#[derive(Clone)]
struct Target {
    name: &'static str,
    url: String,
    key: Option<String>,
    body: &'static str,
}

async fn call(http: &reqwest::Client, target: &Target) {
    let mut request = http
        .post(&target.url)
        .header(header::CONTENT_TYPE, "application/json")
        .body(target.body);
    if let Some(key) = &target.key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.unwrap();
    assert_eq!(
        response.status(),
        200,
        "{}: {:?}",
        target.name,
        response.text().await
    );
    std::hint::black_box(response.bytes().await.unwrap());
}

/// Median and p99 in microseconds of `n` sequential calls.
async fn latency(http: &reqwest::Client, target: &Target, n: usize) -> (f64, f64) {
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        call(http, target).await;
        samples.push(started.elapsed().as_nanos() as u64);
    }
    samples.sort_unstable();
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize] as f64 / 1000.0;
    (at(0.5), at(0.99))
}

/// Requests per second with `concurrency` callers for `duration`.
async fn throughput(
    http: &reqwest::Client,
    target: &Target,
    concurrency: usize,
    duration: Duration,
) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let (http, target, done) = (http.clone(), target.clone(), done.clone());
            tokio::spawn(async move {
                while Instant::now() < deadline {
                    call(&http, &target).await;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // `--only NAME` measures one target (for profiling).
    let only = std::env::args().skip_while(|a| a != "--only").nth(1);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (samples, duration) = if quick {
        (2_000, Duration::from_secs(2))
    } else {
        (10_000, Duration::from_secs(8))
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let figures = runtime.block_on(async {
        let upstream = start_upstream().await;
        let proxy = start_bare_proxy(upstream).await;
        let (gateway, key, store) = start_tollgate(upstream, dir.path()).await;
        let targets = [
            Target {
                name: "direct",
                url: format!("http://{upstream}/v1/chat/completions"),
                key: None,
                body: BODY,
            },
            Target {
                name: "bare proxy",
                url: format!("http://{proxy}/v1/chat/completions"),
                key: None,
                body: BODY,
            },
            Target {
                name: "tollgate",
                url: format!("http://{gateway}/v1/chat/completions"),
                key: Some(key.clone()),
                body: BODY,
            },
            // The gateway alone: the in-process mock provider, no upstream hop.
            Target {
                name: "tollgate/mock",
                url: format!("http://{gateway}/v1/chat/completions"),
                key: Some(key),
                body: MOCK_BODY,
            },
        ];
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .build()
            .unwrap();
        let mut figures = Vec::new();
        let mut batches = Vec::new();
        for target in &targets {
            if only.as_deref().is_some_and(|only| only != target.name) {
                figures.push((target.name, 1.0, 1.0, 1.0));
                continue;
            }
            // Warm the pools and caches (connections, the key cache).
            for _ in 0..200 {
                call(&http, target).await;
            }
            let (p50, p99) = latency(&http, target, samples).await;
            let stats = store.writer_stats();
            let (commits, jobs) = (
                stats.commits.load(Ordering::Relaxed),
                stats.jobs.load(Ordering::Relaxed),
            );
            stats.largest_batch.store(0, Ordering::Relaxed);
            let rps = throughput(&http, target, 32, duration).await;
            if target.key.is_some() {
                let commits = stats.commits.load(Ordering::Relaxed) - commits;
                let jobs = stats.jobs.load(Ordering::Relaxed) - jobs;
                batches.push((
                    target.name,
                    jobs,
                    commits,
                    jobs as f64 / commits.max(1) as f64,
                    stats.largest_batch.load(Ordering::Relaxed),
                ));
            }
            figures.push((target.name, p50, p99, rps));
        }
        (figures, batches)
    });
    let (figures, batches) = figures;

    let (_, direct_p50, direct_p99, direct_rps) = figures[0];
    let proxy_rps = figures[1].3;
    println!("Chat completion through a gateway, loopback, mock upstream");
    println!(
        "{:<14}{:>12}{:>12}{:>10}{:>10}{:>14}{:>10}",
        "", "p50 (us)", "p99 (us)", "p50 x", "p99 x", "rps (c=32)", "rps x"
    );
    for (name, p50, p99, rps) in &figures {
        println!(
            "{:<14}{:>12.1}{:>12.1}{:>10.2}{:>10.2}{:>14.0}{:>10.2}",
            name,
            p50,
            p99,
            p50 / direct_p50,
            p99 / direct_p99,
            rps,
            rps / direct_rps
        );
    }
    let (_, gate_p50, gate_p99, gate_rps) = figures[2];
    let added = gate_p50 - direct_p50;
    let share = gate_rps / proxy_rps;
    println!(
        "tollgate adds {added:.0} us to the median at c=1 (aim: under 200), bare proxy adds {:.0} us",
        figures[1].1 - direct_p50
    );
    println!(
        "tollgate reaches {:.0} % of the bare proxy's requests per second at c=32 (aim: at least 70 %)",
        share * 100.0
    );
    for (name, jobs, commits, mean, largest) in &batches {
        println!(
            "{name}: every charge durable; writer at c=32: {jobs} writes in {commits} commits (mean batch {mean:.1}, largest {largest})"
        );
    }
    let json = json!({
        "direct": { "p50_us": direct_p50, "p99_us": direct_p99, "rps_c32": direct_rps },
        "bare_proxy": { "p50_us": figures[1].1, "p99_us": figures[1].2, "rps_c32": proxy_rps },
        "tollgate": { "p50_us": gate_p50, "p99_us": gate_p99, "rps_c32": gate_rps },
        "added_median_us": added,
        "share_of_bare_proxy_rps": share,
        "writer_batches": batches.iter().map(|(name, jobs, commits, mean, largest)| json!({
            "target": name, "writes": jobs, "commits": commits, "mean_batch": mean, "largest_batch": largest,
        })).collect::<Vec<_>>(),
    });
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    let _ = std::fs::create_dir_all(&out);
    let _ = std::fs::write(
        out.join("gateway.json"),
        serde_json::to_string_pretty(&json).unwrap(),
    );
}
