//! The figures of one run: printed as tables, each with its ratio to the
//! bare proxy measured in the same run, and written as JSON.

use serde_json::{Value, json};

use super::load::{Held, Samples};

/// One load phase of one target.
#[derive(Debug, Default, Clone)]
pub struct Phase {
    pub concurrency: usize,
    pub ok: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub rps: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    /// The server's CPU seconds (user + system) per 1,000 answered requests.
    pub cpu_per_1k: f64,
}

impl Phase {
    pub fn new(concurrency: usize, samples: &Samples, cpu_seconds: f64) -> Phase {
        Phase {
            concurrency,
            ok: samples.ok,
            errors: samples.errors,
            first_error: samples.first_error.clone(),
            rps: samples.rps(),
            p50_us: samples.us(0.5),
            p99_us: samples.us(0.99),
            p999_us: samples.us(0.999),
            cpu_per_1k: cpu_seconds * 1000.0 / samples.ok.max(1) as f64,
        }
    }

    fn json(&self) -> Value {
        json!({
            "concurrency": self.concurrency, "ok": self.ok, "errors": self.errors,
            "first_error": self.first_error, "rps": self.rps,
            "p50_us": self.p50_us, "p99_us": self.p99_us, "p999_us": self.p999_us,
            "cpu_seconds_per_1k": self.cpu_per_1k,
        })
    }
}

/// Everything measured for one target.
#[derive(Debug, Default, Clone)]
pub struct TargetFigures {
    pub name: String,
    /// Requests answered while warming up (not in any figure).
    pub warmup_ok: u64,
    /// c=1, c=32, c=256.
    pub phases: Vec<Phase>,
    /// VmHWM of the server process tree after the plain phases, bytes.
    pub peak_rss: u64,
    pub ttfb: Option<Phase>,
    pub streams: Option<Streams>,
}

/// The many-slow-streams figure.
#[derive(Debug, Default, Clone)]
pub struct Streams {
    pub requested: usize,
    pub opened: usize,
    pub completed: usize,
    pub errors: u64,
    pub first_error: Option<String>,
    /// VmRSS before the streams, bytes.
    pub idle_rss: u64,
    /// VmRSS while the most streams were open, bytes.
    pub rss_at_peak: u64,
    /// VmHWM after the streams, bytes.
    pub hwm: u64,
}

impl Streams {
    pub fn new(requested: usize, idle_rss: u64, held: Held, hwm: u64) -> Streams {
        Streams {
            requested,
            opened: held.open_at_peak,
            completed: held.completed,
            errors: held.errors,
            first_error: held.first_error,
            idle_rss,
            rss_at_peak: held.peak.0,
            hwm,
        }
    }
}

impl TargetFigures {
    fn phase(&self, concurrency: usize) -> Option<&Phase> {
        self.phases.iter().find(|p| p.concurrency == concurrency)
    }

    fn json(&self) -> Value {
        json!({
            "name": self.name,
            "phases": self.phases.iter().map(Phase::json).collect::<Vec<_>>(),
            "peak_rss_bytes": self.peak_rss,
            "ttfb": self.ttfb.as_ref().map(Phase::json),
            "streams": self.streams.as_ref().map(|s| json!({
                "requested": s.requested, "open_at_peak": s.opened, "completed": s.completed,
                "errors": s.errors, "first_error": s.first_error,
                "idle_rss_bytes": s.idle_rss, "rss_at_peak_bytes": s.rss_at_peak, "hwm_bytes": s.hwm,
            })),
        })
    }
}

/// One scaling run: Tollgate on a store seeded with `keys` and `records`.
#[derive(Debug, Clone)]
pub struct Scaling {
    pub keys: usize,
    pub records: u64,
    pub seed_seconds: f64,
    pub db_bytes: u64,
    /// Resident memory once started, before the first request.
    pub idle_rss: u64,
    pub c1: Phase,
    pub c32: Phase,
    pub peak_rss: u64,
    /// The dashboard's and operators' reads (the largest store only).
    pub reads: Option<Reads>,
}

/// Median milliseconds of the reads on a large store.
#[derive(Debug, Clone)]
pub struct Reads {
    pub stats_14_ms: f64,
    pub stats_90_ms: f64,
    pub usage_ms: f64,
    /// `tollgate usage --json`, the whole process, through the server.
    pub cli_served_ms: f64,
    /// The same with the server stopped (the command opens the store).
    pub cli_offline_ms: f64,
    /// The server's resident memory after the reads.
    pub rss_after: u64,
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// `v` with one decimal, or `-` when it could not be measured.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}")
    } else {
        "-".into()
    }
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 && a.is_finite() {
        format!("{:.2}", a / b)
    } else {
        "-".into()
    }
}

/// The whole run.
pub struct Report {
    pub quick: bool,
    pub seconds_per_phase: f64,
    pub targets: Vec<TargetFigures>,
    pub scaling: Vec<Scaling>,
    pub webhook_deliveries: u64,
    pub webhook_outcomes: Option<WebhookOutcomes>,
    pub tollgate_requests: u64,
}

/// The server's own count of its webhook events (its `/metrics`).
#[derive(Debug, Default, Clone, Copy)]
pub struct WebhookOutcomes {
    /// Deliveries the receiver answered with a success.
    pub delivered: u64,
    /// Deliveries that failed (timeout, error status, refused).
    pub failed: u64,
    /// Events dropped because the delivery queue was full.
    pub dropped: u64,
}

impl Report {
    fn get(&self, name: &str) -> Option<&TargetFigures> {
        self.targets.iter().find(|t| t.name == name)
    }

    fn c1_p50(&self, name: &str) -> f64 {
        self.get(name)
            .and_then(|t| t.phase(1))
            .map_or(f64::NAN, |p| p.p50_us)
    }

    fn ttfb_p50(&self, name: &str) -> f64 {
        self.get(name)
            .and_then(|t| t.ttfb.as_ref())
            .map_or(f64::NAN, |p| p.p50_us)
    }

    pub fn print(&self) {
        let proxy = self.get("bare proxy").cloned().unwrap_or_default();
        let direct_p50 = self.c1_p50("direct");
        let proxy_added = self.c1_p50("bare proxy") - direct_p50;
        println!(
            "\nChat completions on loopback, mock upstream ({} s per phase{})",
            self.seconds_per_phase,
            if self.quick { ", --quick" } else { "" }
        );
        println!("\nThroughput (requests/s; x: ratio to the bare proxy)");
        println!(
            "{:<16}{:>10}{:>10}{:>10}{:>8}{:>10}{:>8}{:>9}",
            "", "c=1", "c=32", "x", "c=256", "x", "", "errors"
        );
        for t in &self.targets {
            let rps = |c| t.phase(c).map_or(0.0, |p| p.rps);
            let prps = |c| proxy.phase(c).map_or(0.0, |p| p.rps);
            let errors: u64 = t.phases.iter().map(|p| p.errors).sum();
            println!(
                "{:<16}{:>10.0}{:>10.0}{:>10}{:>8.0}{:>10}{:>8}{:>9}",
                t.name,
                rps(1),
                rps(32),
                ratio(rps(32), prps(32)),
                rps(256),
                ratio(rps(256), prps(256)),
                "",
                errors
            );
        }
        println!("\nLatency (us) at c=1, and what each adds to the direct call's median");
        println!(
            "{:<16}{:>10}{:>10}{:>10}{:>10}{:>8}{:>12}{:>12}",
            "", "p50", "p99", "p99.9", "added", "x", "p50 c=32", "p99 c=256"
        );
        for t in &self.targets {
            let Some(c1) = t.phase(1) else { continue };
            let added = c1.p50_us - direct_p50;
            println!(
                "{:<16}{:>10.1}{:>10.1}{:>10.1}{:>10}{:>8}{:>12.1}{:>12.1}",
                t.name,
                c1.p50_us,
                c1.p99_us,
                c1.p999_us,
                num(added),
                ratio(added, proxy_added),
                t.phase(32).map_or(0.0, |p| p.p50_us),
                t.phase(256).map_or(0.0, |p| p.p99_us),
            );
        }
        println!(
            "\nServer cost: CPU seconds per 1,000 requests (user+system, server process only), peak resident memory"
        );
        println!(
            "{:<16}{:>10}{:>10}{:>8}{:>10}{:>8}{:>14}{:>8}",
            "", "cpu c=1", "cpu c=32", "x", "cpu c=256", "x", "peak RSS MB", "x"
        );
        for t in &self.targets {
            let cpu = |c| t.phase(c).map_or(0.0, |p| p.cpu_per_1k);
            let pcpu = |c| proxy.phase(c).map_or(0.0, |p| p.cpu_per_1k);
            println!(
                "{:<16}{:>10.3}{:>10.3}{:>8}{:>10.3}{:>8}{:>14.1}{:>8}",
                t.name,
                cpu(1),
                cpu(32),
                ratio(cpu(32), pcpu(32)),
                cpu(256),
                ratio(cpu(256), pcpu(256)),
                mb(t.peak_rss),
                ratio(t.peak_rss as f64, proxy.peak_rss as f64),
            );
        }
        println!("  (direct: the mock upstream's own cost; every other row excludes the mock)");
        let direct_ttfb = self.ttfb_p50("direct");
        let proxy_ttfb_added = self.ttfb_p50("bare proxy") - direct_ttfb;
        println!("\nStreaming: time to first byte at c=1 (us), and many slow streams at once");
        println!(
            "{:<16}{:>9}{:>9}{:>9}{:>7}{:>9}{:>9}{:>10}{:>10}{:>7}",
            "", "ttfb p50", "p99", "added", "x", "streams", "open", "idle MB", "peak MB", "x"
        );
        let proxy_streams = proxy.streams.as_ref().map_or(0, |s| s.rss_at_peak);
        for t in &self.targets {
            let Some(ttfb) = &t.ttfb else { continue };
            if ttfb.ok == 0 {
                println!("{:<16}{:>9}", t.name, "failed");
                continue;
            }
            let added = ttfb.p50_us - direct_ttfb;
            let (n, open, idle, peak) = t.streams.as_ref().map_or((0, 0, 0, 0), |s| {
                (s.requested, s.opened, s.idle_rss, s.rss_at_peak)
            });
            println!(
                "{:<16}{:>9.1}{:>9.1}{:>9}{:>7}{:>9}{:>9}{:>10.1}{:>10.1}{:>7}",
                t.name,
                ttfb.p50_us,
                ttfb.p99_us,
                num(added),
                ratio(added, proxy_ttfb_added),
                n,
                open,
                mb(idle),
                mb(peak),
                ratio(peak as f64, proxy_streams as f64),
            );
        }
        if !self.scaling.is_empty() {
            self.print_scaling(&proxy);
        }
        self.print_aims(direct_p50, proxy_added);
        for t in &self.targets {
            for p in &t.phases {
                if let Some(e) = &p.first_error {
                    println!("{} (c={}): first error: {e}", t.name, p.concurrency);
                }
            }
            if let Some(e) = t.ttfb.as_ref().and_then(|p| p.first_error.as_ref()) {
                println!("{} (streamed): first error: {e}", t.name);
            }
            if let Some(e) = t.streams.as_ref().and_then(|s| s.first_error.as_ref()) {
                println!("{} (streams): first error: {e}", t.name);
            }
        }
    }

    /// The scaling rows: each against the first row (the empty store,
    /// one key) and against the bare proxy of the same run.
    fn print_scaling(&self, proxy: &TargetFigures) {
        let base = &self.scaling[0];
        let proxy32 = proxy.phase(32).map_or(f64::NAN, |p| p.rps);
        println!(
            "\nScaling: Tollgate with a store seeded before start (x0: ratio to the first row; xP: to the bare proxy)"
        );
        println!(
            "{:>6}{:>10}{:>9}{:>8}{:>8}{:>8}{:>6}{:>8}{:>6}{:>8}{:>6}{:>6}{:>8}{:>8}{:>7}",
            "keys",
            "records",
            "store MB",
            "seed s",
            "idle MB",
            "c1 p50",
            "x0",
            "c1 p99",
            "x0",
            "c32 rps",
            "x0",
            "xP",
            "cpu/1k",
            "RSS MB",
            "errors"
        );
        for s in &self.scaling {
            println!(
                "{:>6}{:>10}{:>9.0}{:>8.1}{:>8.1}{:>8.0}{:>6}{:>8.0}{:>6}{:>8.0}{:>6}{:>6}{:>8.3}{:>8.1}{:>7}",
                s.keys,
                s.records,
                mb(s.db_bytes),
                s.seed_seconds,
                mb(s.idle_rss),
                s.c1.p50_us,
                ratio(s.c1.p50_us, base.c1.p50_us),
                s.c1.p99_us,
                ratio(s.c1.p99_us, base.c1.p99_us),
                s.c32.rps,
                ratio(s.c32.rps, base.c32.rps),
                ratio(s.c32.rps, proxy32),
                s.c32.cpu_per_1k,
                mb(s.peak_rss),
                s.c1.errors + s.c32.errors
            );
        }
        for s in &self.scaling {
            if let Some(r) = &s.reads {
                println!(
                    "Reads at {} stored usage records (median of 5, ms): stats?days=14 {}, stats?days=90 {}, usage (30 days) {}, `tollgate usage` process via the server {}, on the store alone {}; RSS after {:.1} MB",
                    s.records,
                    num(r.stats_14_ms),
                    num(r.stats_90_ms),
                    num(r.usage_ms),
                    num(r.cli_served_ms),
                    num(r.cli_offline_ms),
                    mb(r.rss_after)
                );
            }
        }
    }

    fn print_aims(&self, direct_p50: f64, proxy_added: f64) {
        println!("\nAims (2-core machine)");
        let gate = self.get("tollgate");
        let added = self.c1_p50("tollgate") - direct_p50;
        println!(
            "  median added latency at c=1: {added:.0} us (target: at most 300; the bare proxy adds {proxy_added:.0})"
        );
        let rps32 = |name: &str| {
            self.get(name)
                .and_then(|t| t.phase(32))
                .map_or(f64::NAN, |p| p.rps)
        };
        println!(
            "  throughput at c=32: {:.0} % of the bare proxy (target: at least 50 %)",
            100.0 * rps32("tollgate") / rps32("bare proxy")
        );
        for (peer, aim) in [("litellm", 20.0), ("portkey", 5.0)] {
            if self.get(peer).is_some() {
                println!(
                    "  throughput at c=32: {:.1} x {peer} (aim: at least {aim} x)",
                    rps32("tollgate") / rps32(peer)
                );
            }
        }
        if let Some(s) = gate.and_then(|t| t.streams.as_ref()) {
            println!(
                "  {} slow streams ({} open at once): {:.0} MB resident (aim: under 500 MB)",
                s.requested,
                s.opened,
                mb(s.rss_at_peak)
            );
        }
        println!(
            "  webhook deliveries received: {} for {} Tollgate requests",
            self.webhook_deliveries, self.tollgate_requests
        );
        if let Some(o) = self.webhook_outcomes {
            println!(
                "  the server's count: {} delivered, {} failed, {} dropped at its full queue",
                o.delivered, o.failed, o.dropped
            );
        }
    }

    pub fn json(&self) -> Value {
        let direct_p50 = self.c1_p50("direct");
        json!({
            "quick": self.quick,
            "seconds_per_phase": self.seconds_per_phase,
            "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            "targets": self.targets.iter().map(TargetFigures::json).collect::<Vec<_>>(),
            "added_median_us_c1": self.targets.iter().map(|t| (t.name.clone(), json!(self.c1_p50(&t.name) - direct_p50))).collect::<serde_json::Map<_, _>>(),
            "scaling": self.scaling.iter().map(|s| json!({
                "keys": s.keys, "records": s.records, "seed_seconds": s.seed_seconds,
                "store_bytes": s.db_bytes, "idle_rss_bytes": s.idle_rss,
                "c1": s.c1.json(), "c32": s.c32.json(), "peak_rss_bytes": s.peak_rss,
                "reads_ms": s.reads.as_ref().map(|r| json!({
                    "stats_14": r.stats_14_ms, "stats_90": r.stats_90_ms,
                    "usage": r.usage_ms, "cli_served": r.cli_served_ms,
                    "cli_offline": r.cli_offline_ms, "rss_after_bytes": r.rss_after,
                })),
            })).collect::<Vec<_>>(),
            "webhook_deliveries": self.webhook_deliveries,
            "webhook_outcomes": self.webhook_outcomes.map(|o| json!({
                "delivered": o.delivered, "failed": o.failed, "dropped": o.dropped,
            })),
            "tollgate_requests": self.tollgate_requests,
        })
    }
}
