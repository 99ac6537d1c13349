//! A clean stop loses nothing (issue 19 item 7, issue 18 item 3): SIGTERM
//! to the real binary while streams and a burst of requests run, then a
//! restart on the same data directory.
//!
//! - every request answered 200 (a whole plain answer, or a stream that
//!   started) has its usage record after the restart, and each key's
//!   consumption and the tenant's wallet equal the sum of those records;
//! - a stream its client dropped just before the SIGTERM is charged;
//! - streams still running when the grace period runs out are cut and
//!   charged for what they relayed, and the process exits (`endless`
//!   streams would otherwise hold it forever);
//! - webhook events not yet delivered at the stop are delivered after the
//!   restart, once each, signed with the tenant's secret.
//!
//! The one time bound asserted is the grace period plus a wide margin: it
//! tells a server that waited on the endless streams from one that cut
//! them, whatever the machine's speed.

#![allow(clippy::disallowed_methods)] // Test clients run on their own tasks.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::receiver::Receiver;
use common::upstream::{Upstream, catalogue};
use common::{TestServer, client, get_json, login};
use futures::StreamExt;
use serde_json::{Value, json};

#[path = "../docs/examples/verify_webhook.rs"]
mod verify_webhook;

const GRACE_SECONDS: u64 = 4;
/// Far above the grace period: only a server that waits on streams that
/// never end goes past it.
const EXIT_BOUND: Duration = Duration::from_secs(GRACE_SECONDS + 8);

fn micros(credits: &Value) -> i64 {
    (credits.as_f64().expect("a credit amount") * 1_000_000.0).round() as i64
}

fn wallet(server: &TestServer, tenant: &str) -> i64 {
    micros(&server.cli_json(&["tenants", "show", tenant])["walletBalance"])
}

fn request_id(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .expect("a request id")
        .to_owned()
}

fn body(model: &str, stream: bool, n: usize) -> Value {
    json!({ "model": model, "stream": stream, "max_tokens": 5,
        "messages": [{ "role": "user", "content": format!("hello {n}") }] })
}

/// Plain and streamed `ok` requests until the server goes away; returns
/// the ids of those answered 200 (a whole plain body, or a stream that
/// started: a stream cut by the stop is charged for what it relayed).
async fn burst(url: String, key: String, from: usize, stop: Arc<AtomicBool>) -> Vec<String> {
    let http = client();
    let mut answered = Vec::new();
    let mut n = from;
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        let stream = n.is_multiple_of(3);
        let Ok(response) = http
            .post(&url)
            .bearer_auth(&key)
            .json(&body("ok", stream, n))
            .send()
            .await
        else {
            break;
        };
        let status = response.status().as_u16();
        let id = request_id(&response);
        if status != 200 {
            // The listener closed between connect and request, or the
            // stop refused it: not answered.
            break;
        }
        if stream {
            answered.push(id);
            let _ = response.bytes().await;
        } else if let Ok(text) = response.text().await
            && serde_json::from_str::<Value>(&text).is_ok()
        {
            answered.push(id);
        } else {
            break;
        }
    }
    answered
}

/// Opens an `endless` stream, reads its first chunks and returns the open
/// byte stream with the request id.
async fn open_endless(
    url: &str,
    key: &str,
) -> (
    String,
    impl futures::Stream<Item = reqwest::Result<bytes::Bytes>> + use<>,
) {
    let response = client()
        .post(url)
        .bearer_auth(key)
        .json(&body("endless", true, 0))
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 200);
    let id = request_id(&response);
    let mut bytes = response.bytes_stream();
    let mut seen = String::new();
    while seen.matches("data: ").count() < 2 {
        let chunk = bytes.next().await.expect("a chunk").expect("bytes");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    (id, bytes)
}

/// SIGTERM; returns how long the process took to exit.
fn terminate(server: &mut TestServer) -> Duration {
    let started = Instant::now();
    let status = server.terminate();
    let took = started.elapsed();
    assert!(status.success(), "a clean stop exits 0: {status}");
    took
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_during_streams_and_a_burst_charges_every_answered_request() {
    let upstream = Upstream::start().await;
    let grace = GRACE_SECONDS.to_string();
    let mut server = TestServer::start_with(
        Some(&catalogue(
            &upstream.base_url,
            &[("ok", "ok"), ("endless", "endless")],
        )),
        &[("TOLLGATE_SHUTDOWN_GRACE_SECONDS", &grace)],
    );
    let (key_id, key) = server.create_key(&["--rate-limit", "1000000"]);
    let wallet_start = wallet(&server, "default");
    let url = server.url("/v1/chat/completions");

    // Streams that never end on their own: the stop must cut them.
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(open_endless(&url, &key).await);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..8)
        .map(|c| tokio::spawn(burst(url.clone(), key.clone(), c * 1000, stop.clone())))
        .collect();
    // Readers keep the held streams flowing until the server cuts them.
    let held_ids: Vec<String> = held.iter().map(|(id, _)| id.clone()).collect();
    let readers: Vec<_> = held
        .into_iter()
        .map(|(_, mut bytes)| {
            tokio::spawn(async move { while let Some(Ok(_)) = bytes.next().await {} })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(600)).await;
    // The client gives up on a stream just before the stop.
    let (dropped_id, dropped) = open_endless(&url, &key).await;
    drop(dropped);

    let took = terminate(&mut server);
    stop.store(true, Ordering::SeqCst);
    assert!(
        took < EXIT_BOUND,
        "the process took {took:?} to stop with a grace of {GRACE_SECONDS} s"
    );
    let mut answered: HashSet<String> = HashSet::new();
    for task in clients {
        answered.extend(task.await.expect("a client task"));
    }
    for reader in readers {
        reader.await.expect("a reader");
    }
    assert!(!answered.is_empty(), "no request of the burst was answered");
    answered.extend(held_ids.iter().cloned());
    answered.insert(dropped_id.clone());
    let log = server.log();
    assert!(!log.contains("charge failed"), "a charge failed: {log}");

    server.launch().expect("restart on the same data directory");
    let owner = login(&server).await;
    let records = get_json(&server, &owner, "/api/v1/usage/records").await;
    let records = records["data"].as_array().expect("records").clone();
    let by_id: HashMap<String, &Value> = records
        .iter()
        .map(|r| (r["requestId"].as_str().unwrap().to_owned(), r))
        .collect();
    assert_eq!(by_id.len(), records.len(), "a request recorded twice");
    let missing: Vec<&String> = answered
        .iter()
        .filter(|id| !by_id.contains_key(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "answered requests without a usage record after the stop: {missing:?}"
    );
    for id in held_ids.iter().chain([&dropped_id]) {
        let record = by_id[id];
        assert_eq!(record["model"], "endless");
        assert_eq!(record["streamed"], true);
        assert!(micros(&record["cost"]) > 0, "{record}");
    }
    let total: i64 = records.iter().map(|r| micros(&r["cost"])).sum();
    let shown = server.cli_json(&["keys", "show", &key_id]);
    assert_eq!(
        micros(&shown["creditsConsumed"]),
        total,
        "the key's ledger equals its usage records"
    );
    assert_eq!(
        wallet_start - wallet(&server, "default"),
        total,
        "the wallet was debited the sum of the usage records"
    );
    let output = server.cli(&["audit", "verify", "--json"]);
    let verdict: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    assert_eq!(verdict["valid"], true, "{verdict}");
}

/// Tenant `slow`'s URLs hang (the receiver never answers; each delivery
/// waits out its 5 s timeout), and the server delivers one at a time
/// (`webhook_concurrency = 1`): the events of tenant `fast` wait in the
/// queue behind them when the SIGTERM comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn webhook_events_undelivered_at_a_stop_are_delivered_after_the_restart() {
    let upstream = Upstream::start().await;
    let receiver = Receiver::start().await;
    let grace = GRACE_SECONDS.to_string();
    let config = format!(
        "webhook_concurrency = 1\n{}",
        catalogue(&upstream.base_url, &[("ok", "ok")])
    );
    let mut server = TestServer::start_with(
        Some(&config),
        &[
            ("TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
            ("TOLLGATE_SHUTDOWN_GRACE_SECONDS", &grace),
        ],
    );
    let owner = login(&server).await;
    let mut secrets = HashMap::new();
    for (tenant, urls) in [
        (
            "slow",
            json!([receiver.url("/hang-1"), receiver.url("/hang-2")]),
        ),
        ("fast", json!([receiver.url("/events")])),
    ] {
        server.cli_json(&["tenants", "create", "--name", tenant, "--tier", "paid"]);
        server.cli_json(&["tenants", "topup", tenant, "--credits", "10"]);
        let put = client()
            .put(server.url(&format!("/api/v1/webhooks?tenant={tenant}")))
            .bearer_auth(&owner)
            .json(&json!({ "urls": urls }))
            .send()
            .await
            .unwrap();
        assert_eq!(put.status(), 200);
        let rotated: Value = client()
            .post(server.url(&format!("/api/v1/webhooks/secret/rotate?tenant={tenant}")))
            .bearer_auth(&owner)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let secret = rotated["signingSecret"].as_str().unwrap().to_owned();
        secrets.insert(tenant, secret);
    }
    let (_, slow_key) = server.create_key(&["--tenant", "slow"]);
    // 20 micro-credits a request against 100: 50 %, 80 % and 100 % fire
    // on the third, fourth and fifth.
    let (_, fast_key) = server.create_key(&["--tenant", "fast", "--credit-limit", "0.0001"]);
    let url = server.url("/v1/chat/completions");
    let http = client();
    let slow = http
        .post(&url)
        .bearer_auth(&slow_key)
        .json(&body("ok", false, 0))
        .send()
        .await
        .unwrap();
    assert_eq!(slow.status(), 200);
    // The slot is taken by the first hanging delivery.
    receiver.wait_for("/hang-1", 1).await;
    let mut fast_ids = Vec::new();
    for n in 1..=5 {
        let response = http
            .post(&url)
            .bearer_auth(&fast_key)
            .json(&body("ok", false, n))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "request {n}");
        fast_ids.push(request_id(&response));
    }
    let before = receiver.at("/events").len();
    let took = terminate(&mut server);
    assert!(took < EXIT_BOUND, "the process took {took:?} to stop");
    assert!(
        before < 8,
        "every event was delivered before the stop: the machine was too slow for this test"
    );

    server.launch().expect("restart on the same data directory");
    let received = receiver.wait_for("/events", 8).await;
    // Anything late would show up now.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let received = receiver.at("/events").len().max(received.len());
    let all = receiver.at("/events");
    assert_eq!(received, 8, "each event delivered once");
    let mut completed = HashSet::new();
    let mut spend = Vec::new();
    for delivery in &all {
        assert!(
            verify_webhook::verify(
                secrets["fast"].as_bytes(),
                delivery.header("x-service-signature").as_deref(),
                &delivery.body,
            ),
            "signed with tenant fast's secret over the raw body"
        );
        let envelope = delivery.json();
        match delivery.event().as_str() {
            "request.completed" => {
                completed.insert(envelope["data"]["requestId"].as_str().unwrap().to_owned());
            }
            other => spend.push(other.to_owned()),
        }
    }
    assert_eq!(
        completed,
        fast_ids.iter().cloned().collect::<HashSet<_>>(),
        "one request.completed per request of tenant fast"
    );
    spend.sort();
    assert_eq!(
        spend,
        ["budget.exceeded", "spend.50_percent", "spend.80_percent"]
    );
    assert!(
        server
            .log()
            .contains("delivering the events left undelivered by the last stop"),
        "the restart delivered pending events"
    );
}
