//! The gateway benchmark: one command measures, in one run and in turn,
//! the same mock upstream called
//!
//! - **direct** (the client calls the mock);
//! - through the **bare proxy** (axum + reqwest, bytes in and out: the
//!   floor);
//! - through **Tollgate** with everything on (the real binary, `serve`,
//!   as a child process: auth, per-key rate limit, classification, durable
//!   billing, audit log, events delivered to a loopback webhook receiver,
//!   metrics), and `tollgate/mock` (the same server answering from its
//!   built-in mock provider: its own cost without the upstream hop);
//! - with `--peers`, through **LiteLLM**'s proxy and **Portkey**'s gateway
//!   (installed by `bench/peers/install.sh`).
//!
//! Every server is a separate process (the mock and the bare proxy are
//! this program started again with `--role`), so its CPU time and memory
//! are read from `/proc` on their own; the load generator is this process.
//! Printed: requests per second at c=1, 32 and 256; p50, p99 and p99.9;
//! added latency; CPU seconds per 1,000 requests; peak resident memory;
//! streaming time to first byte and memory with many slow streams; then
//! the scaling runs (keys, usage records: `common::scale`). Each figure has its ratio to the
//! bare proxy of the same run. JSON in `target/bench/gateway.json`.
//!
//! `cargo bench --bench gateway -- [--quick] [--peers] [--only a,b]
//! [--seconds N] [--streams N] [--keys 1,100,10000] [--records 1000000,10000000]
//! [--latency-us N] [--no-scaling] [--no-webhooks]`. Nothing is asserted: the
//! aims are printed beside what was reached (`docs/benchmarks.md`).

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::load::{self, Target};
use common::mock::MockOptions;
use common::procs::{self, Server};
use common::receiver::Receiver;
use common::report::{Phase, Report, Streams, TargetFigures, WebhookOutcomes};
use common::tollgate::{self, Seed};

/// The allocator the binary uses, for the in-process roles.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// What the command line asked for.
struct Options {
    quick: bool,
    peers: bool,
    only: Option<Vec<String>>,
    phase: Duration,
    streams: usize,
    keys: Vec<usize>,
    records: Vec<u64>,
    scaling: bool,
    /// Register the loopback receiver as an operator webhook URL (every
    /// request then sends `request.completed`); off with `--no-webhooks`.
    webhooks: bool,
    mock: MockOptions,
}

fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn list<T: std::str::FromStr>(args: &[String], name: &str, default: Vec<T>) -> Vec<T> {
    match flag(args, name) {
        Some(v) => v
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.replace('_', "")
                    .parse()
                    .unwrap_or_else(|_| panic!("{name}: `{s}` is not a number"))
            })
            .collect(),
        None => default,
    }
}

impl Options {
    fn parse(args: &[String]) -> Options {
        let quick = args.iter().any(|a| a == "--quick");
        let number = |name: &str, default: u64| {
            flag(args, name).map_or(default, |v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("{name}: `{v}` is not a number"))
            })
        };
        Options {
            quick,
            peers: args.iter().any(|a| a == "--peers"),
            only: flag(args, "--only").map(|v| v.split(',').map(str::to_owned).collect()),
            phase: Duration::from_secs(number("--seconds", if quick { 2 } else { 8 })),
            streams: number("--streams", if quick { 1_000 } else { 5_000 }) as usize,
            keys: list(args, "--keys", vec![1, 100, 10_000]),
            records: list(
                args,
                "--records",
                if quick {
                    vec![100_000]
                } else {
                    vec![1_000_000, 10_000_000]
                },
            ),
            scaling: !args.iter().any(|a| a == "--no-scaling"),
            webhooks: !args.iter().any(|a| a == "--no-webhooks"),
            mock: MockOptions {
                latency: Duration::from_micros(number("--latency-us", 0)),
                chunks: 16,
                slow_interval: Duration::from_millis(1_000),
            },
        }
    }

    fn wants(&self, name: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|o| o == name))
    }
}

/// This program again, as a server role.
fn role_command(role: &str, port: u16, extra: &[String]) -> Command {
    let mut command = Command::new(std::env::current_exe().expect("own path"));
    command
        .args(["--role", role, "--port", &port.to_string()])
        .args(extra);
    command
}

/// `--role mock|proxy|receiver`: serve until killed (the receiver counts
/// webhook deliveries to `/hook`, for runs of a server outside the bench).
fn run_role(role: &str, args: &[String]) {
    let port: u16 = flag(args, "--port")
        .and_then(|p| p.parse().ok())
        .expect("--port");
    let router = match role {
        "mock" => common::mock::router(MockOptions::from_args(args)),
        "proxy" => common::proxy::router(flag(args, "--upstream").expect("--upstream").to_owned()),
        "receiver" => Receiver::default().router(),
        other => panic!("unknown role {other}"),
    };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async move {
        let (listener, _) = common::listen(port).await;
        common::serve_on(listener, router).await;
    });
}

/// Short warm-up: connections, caches, the key cache.
async fn warm(http: &reqwest::Client, target: &Target) -> load::Samples {
    load::closed_loop(http, target, 8, Duration::from_millis(700)).await
}

/// The plain phases (c=1, 32, 256), then, if `streaming`, time to first
/// byte and the slow streams.
async fn measure(
    http: &reqwest::Client,
    target: &Target,
    server: &Server,
    options: &Options,
    streaming: bool,
) -> TargetFigures {
    eprintln!("bench: measuring {}", target.name);
    let mut figures = TargetFigures {
        name: target.name.clone(),
        ..Default::default()
    };
    let warmed = warm(http, target).await;
    figures.warmup_ok = warmed.ok;
    if warmed.ok == 0 {
        let mut phase = Phase::new(1, &warmed, 0.0);
        phase.first_error = warmed.first_error.or(Some("no answer".into()));
        figures.phases.push(phase);
        return figures;
    }
    for concurrency in [1, 32, 256] {
        let cpu = server.cpu_seconds();
        let samples = load::closed_loop(http, target, concurrency, options.phase).await;
        let cpu = server.cpu_seconds() - cpu;
        figures.phases.push(Phase::new(concurrency, &samples, cpu));
    }
    figures.peak_rss = server.memory().1;
    if !streaming {
        return figures;
    }
    let cpu = server.cpu_seconds();
    let samples = load::first_bytes(http, target, options.phase).await;
    figures.ttfb = Some(Phase::new(1, &samples, server.cpu_seconds() - cpu));
    if options.streams > 0 {
        // A client of its own, dropped afterwards with its sockets.
        let streams_client = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .expect("a reqwest client");
        tokio::time::sleep(Duration::from_millis(500)).await;
        let idle = server.memory().0;
        let held = load::hold_streams(
            &streams_client,
            target,
            options.streams,
            256,
            Duration::from_secs(60),
            || server.memory(),
        )
        .await;
        figures.streams = Some(Streams::new(options.streams, idle, held, server.memory().1));
    }
    figures
}

async fn run(options: Options) -> Report {
    let work = tempfile::tempdir().expect("a temporary directory");
    let mock_port = common::free_port();
    let mock = Server::start(
        "mock",
        role_command("mock", mock_port, &options.mock.to_args()),
        ([127, 0, 0, 1], mock_port).into(),
        &work.path().join("mock.log"),
    );
    let proxy_port = common::free_port();
    let proxy = Server::start(
        "bare proxy",
        role_command(
            "proxy",
            proxy_port,
            &[
                "--upstream".into(),
                format!("http://{}/v1/chat/completions", mock.addr),
            ],
        ),
        ([127, 0, 0, 1], proxy_port).into(),
        &work.path().join("proxy.log"),
    );
    let receiver = Receiver::default();
    let (_, hook) = receiver.start().await;
    // `--no-webhooks`: no `request.completed` delivery per request.
    let hook = if options.webhooks {
        hook
    } else {
        String::new()
    };
    let prepared = tollgate::prepare(
        &work.path().join("tollgate"),
        mock.addr,
        &hook,
        Seed {
            keys: 1,
            records: 0,
        },
    )
    .await;
    let gate = tollgate::start(&prepared, "tollgate");
    let url = |server: &Server| format!("http://{}/v1/chat/completions", server.addr);
    let keys = prepared.keys.clone();
    let http = load::client();
    let mut targets = Vec::new();
    let plan: [(Target, &Server, bool); 4] = [
        (
            Target::new("direct", url(&mock), "bench", "bench-slow"),
            &mock,
            true,
        ),
        (
            Target::new("bare proxy", url(&proxy), "bench", "bench-slow"),
            &proxy,
            true,
        ),
        (
            Target::new("tollgate", url(&gate), "bench", "bench-slow").with_keys(keys.clone()),
            &gate,
            true,
        ),
        (
            Target::new("tollgate/mock", url(&gate), "bench-mock", "bench-mock").with_keys(keys),
            &gate,
            false,
        ),
    ];
    for (target, server, streaming) in &plan {
        if options.wants(&target.name) {
            targets.push(measure(&http, target, server, &options, *streaming).await);
        }
    }
    if options.peers {
        for peer in ["litellm", "portkey"] {
            if !options.wants(peer) {
                continue;
            }
            if let Some(why) = common::peers::missing(peer) {
                eprintln!("bench: {peer} skipped: {why}");
                continue;
            }
            let dir = work.path().join(peer);
            std::fs::create_dir_all(&dir).expect("a peer directory");
            let (server, target) = if peer == "litellm" {
                common::peers::start_litellm(mock.addr, &dir)
            } else {
                common::peers::start_portkey(mock.addr, &dir)
            };
            // The peers get the plain phases and the time to first byte;
            // thousands of streams are Tollgate's and the floor's figure.
            let mut figures = measure(
                &http,
                &target,
                &server,
                &Options {
                    streams: 0,
                    only: None,
                    keys: Vec::new(),
                    records: Vec::new(),
                    mock: options.mock.clone(),
                    ..options
                },
                true,
            )
            .await;
            figures.name = peer.to_owned();
            targets.push(figures);
        }
    }
    // Deliveries run off the request path: let the queue drain.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let tollgate_requests = targets
        .iter()
        .filter(|t| t.name.starts_with("tollgate"))
        .map(|t| {
            t.warmup_ok
                + t.phases.iter().map(|p| p.ok).sum::<u64>()
                + t.ttfb.as_ref().map_or(0, |p| p.ok)
                + t.streams.as_ref().map_or(0, |s| s.completed as u64)
        })
        .sum();
    let webhook_deliveries = receiver.count();
    let webhook_outcomes = webhook_outcomes(&http, &gate).await;
    drop(gate);
    let scaling = if options.scaling && options.wants("scaling") {
        let plan = common::scale::Plan {
            keys: options.keys.clone(),
            records: options.records.clone(),
            phase: options.phase,
        };
        common::scale::run(&plan, work.path(), mock.addr, &hook).await
    } else {
        Vec::new()
    };
    Report {
        quick: options.quick,
        seconds_per_phase: options.phase.as_secs_f64(),
        targets,
        scaling,
        webhook_deliveries,
        webhook_outcomes,
        tollgate_requests,
    }
}

/// What the server says became of its webhook events, from its
/// `/metrics`: events dropped at a full queue, and deliveries by result
/// (`None` when the metrics cannot be read).
async fn webhook_outcomes(http: &reqwest::Client, gate: &Server) -> Option<WebhookOutcomes> {
    let url = format!("http://{}/metrics", gate.addr);
    let text = http.get(url).send().await.ok()?.text().await.ok()?;
    let mut outcomes = WebhookOutcomes::default();
    for line in text.lines() {
        let Some((name, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        if name == "tollgate_webhook_events_dropped_total" {
            outcomes.dropped += value as u64;
        } else if name.starts_with("tollgate_webhook_deliveries_total{") {
            if name.contains("result=\"success\"") {
                outcomes.delivered += value as u64;
            } else {
                outcomes.failed += value as u64;
            }
        }
    }
    Some(outcomes)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let _ = rustls::crypto::ring::default_provider().install_default();
    if let Some(role) = flag(&args, "--role") {
        run_role(role, &args);
        return;
    }
    let options = Options::parse(&args);
    let nofile = procs::raise_nofile();
    if (nofile as usize) < 2 * options.streams + 1_000 {
        eprintln!(
            "bench: open-file limit {nofile} is low for {} streams; some may fail",
            options.streams
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let report = runtime.block_on(run(options));
    report.print();
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    let _ = std::fs::create_dir_all(&out);
    let path = out.join("gateway.json");
    match std::fs::write(
        &path,
        serde_json::to_string_pretty(&report.json()).unwrap_or_default(),
    ) {
        Ok(()) => println!("\nfigures written to {}", path.display()),
        Err(e) => eprintln!("bench: cannot write {}: {e}", path.display()),
    }
}
