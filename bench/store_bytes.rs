//! Bytes stored per request: the real binary on the embedded demo
//! configuration, fed `mock-chat` requests (short prompt, minimal risk),
//! once with the default policy (bodies logged: usage record, audit entry,
//! conversation record) and once with `logBodies: false` (usage record and
//! audit entry).
//!
//! Per policy: a fresh data directory, 200 warm-up requests, a clean stop
//! (the journal is flushed into redb), the store file's size and each
//! table's redb statistics. Then three phases, each one server run ended by
//! a clean stop and the same figures: the first 2,000 requests (start-up:
//! redb's first regions, little freed space to reuse yet), then the rest
//! of `REQUESTS` (20,000 by default) in two halves; the second half is the
//! steady state, where region growth and the reuse of freed pages have
//! settled. Per phase it prints the file's growth and the growth of the
//! live (allocated) pages per request and, per table, the growth of the
//! bytes stored (keys and values), of the pages' overhead and of the leaf
//! pages.
//!
//! `cargo bench --profile dev --bench store_bytes` (the bytes do not depend
//! on the optimization level; `REQUESTS=100000` for a longer run;
//! `TOLLGATE_BIN=path` measures another build of the binary, e.g. an
//! older release). Nothing is asserted.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use redb::{ReadableDatabase, ReadableTableMetadata};
use tollgate::store::tables::ALL;

const BIN: &str = env!("CARGO_BIN_EXE_tollgate");
const WARM_UP: usize = 200;
/// The first phase after the warm-up (the figures of the short run).
const START_UP: usize = 2_000;

/// A running server: the child and its base URL.
struct Running {
    child: Child,
    url: String,
    banner: Vec<String>,
}

fn bin() -> String {
    std::env::var("TOLLGATE_BIN").unwrap_or_else(|_| BIN.to_owned())
}

/// A key of the operator tenant whose rate limit is never reached (the
/// default one would refuse the run), made through the CLI.
fn create_key(dir: &Path) -> String {
    let output = Command::new(bin())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .arg("--data-dir")
        .arg(dir.join("data"))
        .args([
            "keys",
            "create",
            "--name",
            "bytes",
            "--rate-limit",
            "1000000000",
        ])
        .arg("--json")
        .output()
        .expect("tollgate keys create");
    assert!(output.status.success(), "keys create failed");
    let created: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    created["key"].as_str().expect("a key value").to_owned()
}

fn start(dir: &Path) -> Running {
    let mut child = Command::new(bin())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .arg("--data-dir")
        .arg(dir.join("data"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawning tollgate");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut banner = Vec::new();
    let url = loop {
        let line = lines
            .next()
            .expect("the server exited before listening")
            .expect("stdout");
        if let Some(rest) = line.strip_prefix("tollgate listening on ") {
            break rest.split_whitespace().next().expect("url").to_owned();
        }
        banner.push(line);
    };
    std::thread::spawn(move || for _ in lines {});
    Running { child, url, banner }
}

/// SIGTERM and wait: the server drains and flushes its journal into redb.
fn stop(mut running: Running) {
    let status = Command::new("kill")
        .args(["-TERM", &running.child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(status.success(), "kill -TERM failed");
    running.child.wait().expect("waiting for the server");
}

async fn send(client: &reqwest::Client, url: &str, key: &str, count: usize) {
    let body = serde_json::json!({
        "model": "mock-chat",
        "messages": [{ "role": "user", "content": "Say hello in five words." }],
    });
    for _ in 0..count {
        let response = client
            .post(format!("{url}/v1/chat/completions"))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .expect("request");
        assert_eq!(response.status(), 200, "a mock-chat request failed");
        response.bytes().await.expect("body");
    }
}

/// Per table: (stored bytes, metadata + fragmented bytes, leaf pages).
type Tables = BTreeMap<String, (u64, u64, u64)>;

/// A stopped store's figures.
struct Figures {
    /// The file's size.
    file: u64,
    /// The bytes of its allocated (live) pages.
    live: u64,
    tables: Tables,
}

fn measure(dir: &Path) -> Figures {
    let path = dir.join("data").join(tollgate::store::DB_FILE);
    let file = std::fs::metadata(&path).expect("store file").len();
    let db = redb::Database::open(&path).expect("opening the store");
    let live = {
        let write = db.begin_write().expect("write");
        let stats = write.stats().expect("stats");
        let bytes = stats.allocated_pages() * stats.page_size() as u64;
        write.abort().expect("abort");
        bytes
    };
    let tx = db.begin_read().expect("read");
    let mut tables = Tables::new();
    for def in ALL {
        let Ok(table) = tx.open_table(*def) else {
            continue;
        };
        let stats = table.stats().expect("stats");
        tables.insert(
            redb::TableHandle::name(def).to_owned(),
            (
                stats.stored_bytes(),
                stats.metadata_bytes() + stats.fragmented_bytes(),
                stats.leaf_pages(),
            ),
        );
    }
    Figures { file, live, tables }
}

/// Prints the growth per request from `before` to `after`.
fn report(label: &str, before: &Figures, after: &Figures, requests: usize) {
    let per = |v: u64, w: u64| (w as f64 - v as f64) / requests as f64;
    println!(
        "  {label}: file {:.0} bytes per request ({} -> {} bytes over {requests} requests); \
         live pages {:.0} bytes per request",
        per(before.file, after.file),
        before.file,
        after.file,
        per(before.live, after.live)
    );
    println!("    table                  stored/req  overhead/req  leaf pages/1000 req");
    for (name, (stored, overhead, leaves)) in &after.tables {
        let (s0, o0, l0) = before.tables.get(name).copied().unwrap_or_default();
        if (stored, overhead, leaves) == (&s0, &o0, &l0) {
            continue;
        }
        println!(
            "    {name:<22} {:>10.0} {:>13.0} {:>20.1}",
            per(s0, *stored),
            per(o0, *overhead),
            per(l0, *leaves) * 1000.0
        );
    }
}

/// Sets the operator tenant's `logBodies` as its owner would.
async fn set_log_bodies(client: &reqwest::Client, running: &Running, on: bool) {
    let password = banner_value(running, "Owner password");
    let login: serde_json::Value = client
        .post(format!("{}/api/v1/auth/login", running.url))
        .json(&serde_json::json!({ "email": "owner@localhost", "password": password }))
        .send()
        .await
        .expect("login")
        .json()
        .await
        .expect("login answer");
    let token = login["token"].as_str().expect("a session token");
    let put = client
        .put(format!("{}/api/v1/policies", running.url))
        .bearer_auth(token)
        .json(&serde_json::json!({ "logBodies": on }))
        .send()
        .await
        .expect("policy");
    assert_eq!(put.status(), 200, "setting logBodies failed");
}

fn banner_value(running: &Running, label: &str) -> String {
    running
        .banner
        .iter()
        .find(|l| l.contains(label))
        .and_then(|l| l.rsplit(": ").next())
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|| panic!("no {label} in the banner"))
}

/// One server run of `count` requests, a clean stop, the figures.
async fn phase(client: &reqwest::Client, dir: &Path, key: &str, count: usize) -> Figures {
    let running = start(dir);
    send(client, &running.url, key, count).await;
    stop(running);
    measure(dir)
}

async fn run(log_bodies: bool, requests: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let warm = start(dir.path());
    let key = create_key(dir.path());
    set_log_bodies(&client, &warm, log_bodies).await;
    send(&client, &warm.url, &key, WARM_UP).await;
    stop(warm);
    let warmed = measure(dir.path());
    println!("logBodies: {log_bodies}");
    let first = START_UP.min(requests);
    let started = phase(&client, dir.path(), &key, first).await;
    report("start-up (first requests)", &warmed, &started, first);
    let rest = requests - first;
    if rest < 2 {
        return;
    }
    let half = phase(&client, dir.path(), &key, rest / 2).await;
    report("after start-up, first half", &started, &half, rest / 2);
    let end = phase(&client, dir.path(), &key, rest - rest / 2).await;
    report("steady state (second half)", &half, &end, rest - rest / 2);
    report("whole run after warm-up", &warmed, &end, requests);
}

#[tokio::main]
async fn main() {
    let requests: usize = std::env::var("REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    run(true, requests).await;
    run(false, requests).await;
}
