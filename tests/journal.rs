//! The charge journal (issue 19, items 3 to 5) against the real binary: a
//! charge is answered once its journal record is durable, redb catches up
//! at checkpoints, and a `kill -9` in between loses nothing answered.
//!
//! The server runs with the periodic checkpoint pushed out of reach
//! (`TOLLGATE_JOURNAL_CHECKPOINT_MS`), so at the kill every charge of the
//! burst is in the journal and in no durable redb commit: the restart must
//! replay them, and a second restart must replay nothing.
#![allow(clippy::disallowed_methods)] // Test and bench code spawns its own clients and servers.

mod common;

use std::collections::{HashMap, HashSet};

use common::upstream::{Upstream, catalogue};
use common::{TestServer, client, get_json, login};
use serde_json::{Value, json};

const REQUESTS: usize = 48;
/// One `ok` answer: 10 input + 5 output tokens at 1 and 2 credits per million.
const COST: i64 = 20;

fn micros(credits: &Value) -> i64 {
    (credits.as_f64().expect("a credit amount") * 1_000_000.0).round() as i64
}

fn wallet(server: &TestServer) -> i64 {
    micros(&server.cli_json(&["tenants", "show", "default"])["walletBalance"])
}

fn journal_server(upstream: &Upstream) -> TestServer {
    TestServer::start_with(
        Some(&catalogue(&upstream.base_url, &[("ok", "ok")])),
        &[("TOLLGATE_JOURNAL_CHECKPOINT_MS", "3600000")],
    )
}

/// `REQUESTS` concurrent chats (every fourth streamed); the ids answered
/// 200 with a whole body.
async fn burst(server: &TestServer, keys: &[String]) -> Vec<String> {
    let url = server.url("/v1/chat/completions");
    let tasks: Vec<_> = (0..REQUESTS)
        .map(|n| {
            let (url, key) = (url.clone(), keys[n % keys.len()].clone());
            tokio::spawn(async move {
                let stream = n % 4 == 0;
                let response = client()
                    .post(&url)
                    .bearer_auth(&key)
                    .json(&json!({ "model": "ok", "stream": stream,
                        "messages": [{ "role": "user", "content": format!("hello {n}") }] }))
                    .send()
                    .await
                    .expect("an answer");
                assert_eq!(response.status(), 200);
                let id = response.headers()["x-request-id"]
                    .to_str()
                    .unwrap()
                    .to_owned();
                let text = response.text().await.unwrap();
                if stream {
                    assert!(text.contains("data: [DONE]"), "{text}");
                } else {
                    serde_json::from_str::<Value>(&text).expect("a completion");
                }
                id
            })
        })
        .collect();
    let mut ids = Vec::new();
    for task in tasks {
        ids.push(task.await.unwrap());
    }
    ids
}

/// Every answered request has exactly one usage record and one `inference`
/// audit entry; each key's consumption and the wallet equal the records;
/// the audit chain verifies.
async fn check_ledger(
    server: &TestServer,
    key_ids: &[String],
    answered: &HashSet<String>,
    wallet_start: i64,
) {
    let owner = login(server).await;
    let records = get_json(server, &owner, "/api/v1/usage/records").await;
    let records = records["data"].as_array().expect("records").clone();
    let mut ids = HashSet::new();
    let mut by_key: HashMap<String, i64> = HashMap::new();
    for record in &records {
        let id = record["requestId"].as_str().unwrap().to_owned();
        assert!(ids.insert(id.clone()), "request {id} recorded twice");
        *by_key
            .entry(record["keyId"].as_str().unwrap().to_owned())
            .or_default() += micros(&record["cost"]);
    }
    assert_eq!(&ids, answered, "usage records == answered requests");
    for key_id in key_ids {
        let shown = server.cli_json(&["keys", "show", key_id]);
        assert_eq!(
            micros(&shown["creditsConsumed"]),
            by_key.get(key_id).copied().unwrap_or(0),
            "key {key_id}: ledger == Σ usage"
        );
    }
    let total: i64 = by_key.values().sum();
    assert_eq!(total, COST * answered.len() as i64);
    assert_eq!(wallet_start - wallet(server), total, "wallet == Σ usage");

    let output = server.cli(&["audit", "verify", "--json"]);
    let verdict: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    assert!(
        output.status.success() && verdict["valid"] == true,
        "the audit chain does not verify: {verdict} {}",
        common::stderr(&output)
    );
    let audit = get_json(server, &owner, "/api/v1/audit?action=inference&limit=500").await;
    let inference: Vec<&str> = audit["data"]
        .as_array()
        .expect("audit entries")
        .iter()
        .map(|e| e["target"].as_str().unwrap())
        .collect();
    let targets: HashSet<String> = inference.iter().map(|t| t.to_string()).collect();
    assert_eq!(
        inference.len(),
        answered.len(),
        "one audit entry per charge"
    );
    assert_eq!(&targets, answered);
}

/// The number of charges the server's log says it re-applied at start.
fn replayed(server: &TestServer) -> Vec<u64> {
    // The log may be coloured: escape sequences out first.
    let mut log = String::new();
    let mut in_escape = false;
    for c in server.log().chars() {
        match (in_escape, c) {
            (false, '\u{1b}') => in_escape = true,
            (false, c) => log.push(c),
            (true, 'm') => in_escape = false,
            (true, _) => {}
        }
    }
    log.lines()
        .filter(|l| l.contains("re-applied the journaled charges"))
        .map(|l| {
            let at = l.find("charges=").expect("a count") + "charges=".len();
            l[at..]
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn answered_charges_only_in_the_journal_survive_kill_9_and_replay_once() {
    let upstream = Upstream::start().await;
    let mut server = journal_server(&upstream);
    let mut key_ids = Vec::new();
    let mut keys = Vec::new();
    for limit in ["1", "2"] {
        let (id, key) = server.create_key(&["--credit-limit", limit, "--rate-limit", "100000"]);
        key_ids.push(id);
        keys.push(key);
    }
    let wallet_start = wallet(&server);

    let answered: HashSet<String> = burst(&server, &keys).await.into_iter().collect();
    assert_eq!(answered.len(), REQUESTS);
    // Answered means durable: the journal on disk holds every charge now.
    let journal = tollgate::store::journal::scan(
        &server
            .data_dir()
            .join(tollgate::store::journal::JOURNAL_DIR),
        0,
    )
    .unwrap();
    assert!(
        journal.records.len() >= REQUESTS,
        "{}",
        journal.records.len()
    );
    server.kill_9();

    server.launch().expect("restart after kill -9");
    assert_eq!(replayed(&server), vec![REQUESTS as u64]);
    check_ledger(&server, &key_ids, &answered, wallet_start).await;

    // Replaying twice is replaying once: a second crash right after the
    // recovery finds nothing left to apply, and the ledger is unchanged.
    server.kill_9();
    server.launch().expect("second restart");
    assert_eq!(replayed(&server), vec![REQUESTS as u64]);
    check_ledger(&server, &key_ids, &answered, wallet_start).await;

    // And charging goes on from there, sequences continuing.
    let more: Vec<String> = burst(&server, &keys).await;
    let all: HashSet<String> = answered.iter().cloned().chain(more).collect();
    server.kill_9();
    server.launch().expect("third restart");
    assert_eq!(replayed(&server), vec![REQUESTS as u64, REQUESTS as u64]);
    check_ledger(&server, &key_ids, &all, wallet_start).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_clean_stop_applies_the_journal_and_leaves_it_empty() {
    let upstream = Upstream::start().await;
    let mut server = journal_server(&upstream);
    let (key_id, key) = server.create_key(&["--credit-limit", "1", "--rate-limit", "100000"]);
    let wallet_start = wallet(&server);
    let answered: HashSet<String> = burst(&server, std::slice::from_ref(&key))
        .await
        .into_iter()
        .collect();
    let status = server.terminate();
    assert!(status.success(), "{status}");
    let dir = server
        .data_dir()
        .join(tollgate::store::journal::JOURNAL_DIR);
    let left = tollgate::store::journal::scan(&dir, 0).unwrap();
    assert_eq!(
        left.records.len(),
        0,
        "the journal is emptied on a clean stop"
    );
    // Offline commands read the applied charges without the server.
    let shown = server.cli_json(&["keys", "show", &key_id]);
    assert_eq!(micros(&shown["creditsConsumed"]), COST * REQUESTS as i64);
    server.launch().expect("restart");
    assert!(
        replayed(&server).is_empty(),
        "nothing to replay after a clean stop"
    );
    check_ledger(&server, &[key_id], &answered, wallet_start).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn usage_read_right_after_a_charge_includes_it_before_any_checkpoint() {
    let upstream = Upstream::start().await;
    let server = journal_server(&upstream);
    let (key_id, key) = server.create_key(&["--credit-limit", "1", "--rate-limit", "100000"]);
    let answered: Vec<String> = burst(&server, std::slice::from_ref(&key)).await;
    // No checkpoint has run (an hour away): reads see the charges anyway.
    let owner = login(&server).await;
    let records = get_json(&server, &owner, "/api/v1/usage/records").await;
    assert_eq!(records["data"].as_array().unwrap().len(), answered.len());
    let shown = server.cli_json(&["keys", "show", &key_id]);
    assert_eq!(micros(&shown["creditsConsumed"]), COST * REQUESTS as i64);
    let usage = server.cli_json(&["usage", "--key", &key_id]);
    assert_eq!(usage["totals"]["requests"], REQUESTS, "{usage}");
}
