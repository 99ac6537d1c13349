//! Crash safety (issue 9, reliability 1): concurrent billed chat load
//! against the real binary, `kill -9` at a random moment, restart on the
//! same data directory, several rounds. After every restart:
//!
//! - every request answered 200 (whole body received) has its usage record;
//! - each key's consumption and the tenant's wallet equal the sum of the
//!   usage records;
//! - no spend threshold event (key, percentage) is stored or delivered
//!   twice, across all rounds;
//! - the audit chain verifies (`tollgate audit verify --json`).
//!
//! The kill moments come from a seeded generator; the seed is printed and
//! `TOLLGATE_TEST_SEED=<seed>` replays it (docs/reliability.md).
#![allow(clippy::disallowed_methods)] // Test and bench code spawns its own clients and servers.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::receiver::Receiver;
use common::rng::Rng;
use common::upstream::{Upstream, catalogue};
use common::{TestServer, client, get_json, login};
use serde_json::{Value, json};

const ROUNDS: usize = 5;
const CLIENTS: usize = 12;
/// One `ok` answer: 10 input + 5 output tokens at 1 and 2 credits per million.
const COST: i64 = 20;
/// Credit caps in credits: 10, 30, 100 and 300 requests, so thresholds
/// fire in different rounds (and some keys go over budget: 402 is fine).
const LIMITS: [&str; 4] = ["0.0002", "0.0006", "0.002", "0.006"];
const THRESHOLD_EVENTS: [&str; 3] = ["spend.50_percent", "spend.80_percent", "budget.exceeded"];

fn micros(credits: &Value) -> i64 {
    (credits.as_f64().expect("a credit amount") * 1_000_000.0).round() as i64
}

fn wallet(server: &TestServer) -> i64 {
    micros(&server.cli_json(&["tenants", "show", "default"])["walletBalance"])
}

/// One client: requests round-robin over the keys until the server goes
/// away; returns the request ids answered 200 with their whole body.
async fn load(
    url: String,
    keys: Arc<Vec<String>>,
    client_no: usize,
    stop: Arc<AtomicBool>,
) -> Vec<String> {
    let http = client();
    let mut answered = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut n = client_no;
    while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
        n += 1;
        let stream = n.is_multiple_of(8);
        // `max_tokens` bounds the output as the upstream's answer is long,
        // so each request reserves about its cost at admission (without a
        // bound it reserves a whole default output, and a tiny cap then
        // takes one request at a time: docs/billing.md).
        let body = json!({ "model": "ok", "stream": stream, "max_tokens": 5,
            "messages": [{ "role": "user", "content": format!("hello {n}") }] });
        let Ok(response) = http
            .post(&url)
            .bearer_auth(&keys[n % keys.len()])
            .json(&body)
            .send()
            .await
        else {
            break;
        };
        let status = response.status().as_u16();
        let id = response
            .headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let Ok(text) = response.text().await else {
            break;
        };
        match status {
            200 if !stream && serde_json::from_str::<Value>(&text).is_ok() => answered.push(id),
            200 if stream && text.contains("data: [DONE]") => answered.push(id),
            200 => break, // cut by the kill
            402 => {}
            other => panic!("unexpected status {other}: {text}"),
        }
    }
    answered
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_under_billed_load_loses_no_answered_request_and_repeats_no_event() {
    let mut rng = Rng::seeded("reliability_crash");
    let upstream = Upstream::start().await;
    let receiver = Receiver::start().await;
    let mut server = TestServer::start_with(
        Some(&catalogue(&upstream.base_url, &[("ok", "ok")])),
        &[("TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")],
    );
    let owner = login(&server).await;
    let put = client()
        .put(server.url("/api/v1/webhooks"))
        .bearer_auth(&owner)
        .json(&json!({ "urls": [receiver.url("/events")] }))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    let mut key_ids = Vec::new();
    let mut keys = Vec::new();
    for limit in LIMITS {
        let (id, key) = server.create_key(&["--credit-limit", limit, "--rate-limit", "100000"]);
        key_ids.push(id);
        keys.push(key);
    }
    let keys = Arc::new(keys);
    let wallet_start = wallet(&server);
    let mut answered_all: HashSet<String> = HashSet::new();

    for round in 1..=ROUNDS {
        let stop = Arc::new(AtomicBool::new(false));
        let url = server.url("/v1/chat/completions");
        let clients: Vec<_> = (0..CLIENTS)
            .map(|c| tokio::spawn(load(url.clone(), keys.clone(), c * 7 + round, stop.clone())))
            .collect();
        let kill_after = rng.range(300, 1500);
        tokio::time::sleep(Duration::from_millis(kill_after)).await;
        server.kill_9();
        stop.store(true, Ordering::SeqCst);
        let mut answered = 0;
        for task in clients {
            let ids = task.await.expect("a client task");
            answered += ids.len();
            answered_all.extend(ids);
        }
        println!("round {round}: killed after {kill_after} ms, {answered} answered");
        server.launch().expect("restart on the same data directory");
        check(
            &server,
            &key_ids,
            &answered_all,
            wallet_start,
            &receiver,
            round,
        )
        .await;
    }
    assert!(!answered_all.is_empty(), "no request was answered at all");
    let fired = receiver
        .at("/events")
        .iter()
        .filter(|r| THRESHOLD_EVENTS.contains(&r.event().as_str()))
        .count();
    println!(
        "{} answered over {ROUNDS} rounds, {fired} threshold events delivered",
        answered_all.len()
    );
    assert!(
        fired > 0,
        "no threshold was crossed: the caps are too high for this machine"
    );
}

/// The invariants after a restart.
async fn check(
    server: &TestServer,
    key_ids: &[String],
    answered: &HashSet<String>,
    wallet_start: i64,
    receiver: &Receiver,
    round: usize,
) {
    let owner = login(server).await;
    let records = get_json(server, &owner, "/api/v1/usage/records").await;
    let records = records["data"].as_array().expect("records").clone();
    let mut by_key: HashMap<String, i64> = HashMap::new();
    let mut ids = HashSet::new();
    for record in &records {
        let id = record["requestId"].as_str().expect("requestId").to_owned();
        assert!(
            ids.insert(id.clone()),
            "round {round}: request {id} recorded twice"
        );
        *by_key
            .entry(record["keyId"].as_str().unwrap().to_owned())
            .or_default() += micros(&record["cost"]);
    }
    let missing: Vec<&String> = answered.iter().filter(|id| !ids.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "round {round}: answered requests without a usage record: {missing:?}"
    );
    for key_id in key_ids {
        let shown = server.cli_json(&["keys", "show", key_id]);
        assert_eq!(
            micros(&shown["creditsConsumed"]),
            by_key.get(key_id).copied().unwrap_or(0),
            "round {round}: key {key_id}'s ledger differs from its usage records"
        );
    }
    let total: i64 = by_key.values().sum();
    assert_eq!(total % COST, 0, "round {round}: every record costs {COST}");
    assert_eq!(
        wallet_start - wallet(server),
        total,
        "round {round}: the wallet was debited the sum of the usage records"
    );

    // Threshold events: stored once, delivered at most once.
    let report = get_json(server, &owner, "/api/v1/usage").await;
    let mut stored = HashSet::new();
    for event in report["events"].as_array().expect("events") {
        let name = event["event"].as_str().unwrap_or_default();
        if THRESHOLD_EVENTS.contains(&name) {
            let id = (
                event["data"]["keyId"].to_string(),
                event["data"]["percentage"].to_string(),
            );
            assert!(
                stored.insert(id.clone()),
                "round {round}: {name} {id:?} stored twice"
            );
        }
    }
    // Deliveries in flight when the server died may still arrive: give
    // them a moment before counting.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut delivered = HashSet::new();
    for received in receiver.at("/events") {
        let body = received.json();
        let name = body["event"].as_str().unwrap_or_default().to_owned();
        if THRESHOLD_EVENTS.contains(&name.as_str()) {
            let id = (
                body["data"]["keyId"].to_string(),
                body["data"]["percentage"].to_string(),
            );
            assert!(
                delivered.insert(id.clone()),
                "round {round}: {name} {id:?} delivered twice"
            );
            assert!(
                stored.contains(&id),
                "round {round}: {name} {id:?} delivered but not stored"
            );
        }
    }

    let output = server.cli(&["audit", "verify", "--json"]);
    let verdict: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    assert!(
        output.status.success() && verdict["valid"] == true,
        "round {round}: the audit chain does not verify: {verdict} {}",
        common::stderr(&output)
    );
}
