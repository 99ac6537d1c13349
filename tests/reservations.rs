//! Exact caps under concurrency (issue 19, items 1 and 2): admission
//! reserves each request's estimated cost in the in-memory ledger, so a
//! thousand requests sent at once overshoot a key's cap, a wallet that may
//! not go negative and the free tier's day cap by at most one request (the
//! serial rule), consumption equals the usage records, and every way a
//! request can end without a charge releases its reservation.
//!
//! Every model here costs 2 credits a request (`per_request`), so the
//! estimate is the exact cost and the bound is exact: with a cap of 7,
//! requests are admitted at 0, 2, 4 and 6 consumed or reserved, and the
//! fifth finds 8.
#![allow(clippy::disallowed_methods)] // Test and bench code spawns its own clients and servers.

mod common;

use std::time::Duration;

use common::upstream::Upstream;
use common::{TestServer, error_code, get_json, login};
use futures::StreamExt;
use serde_json::{Value, json};

const COST: i64 = 2_000_000;
const BURST: usize = 1000;

fn config(upstream: &str) -> String {
    // `impatient` gives up on a first byte after 300 ms, without retries.
    let mut out = format!(
        "[[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{upstream}\"\nmax_retries = 0\n\
         [[providers]]\nid = \"impatient\"\nkind = \"openai\"\nbase_url = \"{upstream}\"\nfirst_byte_timeout_ms = 300\nmax_retries = 0\n"
    );
    // (catalogue id, provider, upstream model): answers after 100 ms,
    // answers 500, answers too late (the first byte times out), streams
    // until dropped.
    for (id, provider, up) in [
        ("ok", "up", "slow-100"),
        ("broken", "up", "status-500"),
        ("late", "impatient", "slow-5000"),
        ("endless", "up", "endless"),
    ] {
        out.push_str(&format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{up}\"\ninput = [\"TEXT\", \"IMAGE\"]\n\
             output = [\"TEXT\"]\ncontext_window = 8192\npricing = {{ unit = \"per_request\", per_request = 2.0 }}\n"
        ));
    }
    out
}

async fn setup() -> (Upstream, TestServer) {
    let limit = common::raise_open_files();
    assert!(
        limit >= (BURST + 200) as u64,
        "the open-file limit ({limit}) is too low for {BURST} connections"
    );
    let upstream = Upstream::start().await;
    let server = TestServer::start_with(Some(&config(&upstream.base_url)), &[]);
    (upstream, server)
}

fn chat(model: &str) -> Value {
    json!({ "model": model, "messages": [{ "role": "user", "content": "hi" }] })
}

fn image(model: &str) -> Value {
    json!({ "model": model, "messages": [{ "role": "user", "content": [
        { "type": "text", "text": "what is this?" },
        { "type": "image_url", "image_url": { "url": "https://example.com/cat.png" } }
    ] }] })
}

/// A client whose pool keeps a connection per request in flight.
fn pooled() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .pool_max_idle_per_host(BURST)
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client")
}

/// Sends `n` copies of `body` at once; each answer's status and body.
async fn burst(server: &TestServer, key: &str, body: &Value, n: usize) -> Vec<(u16, Value)> {
    let client = pooled();
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let request = client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(key)
                .json(body);
            tokio::spawn(async move {
                let response = request.send().await.expect("an answer");
                let status = response.status().as_u16();
                (status, response.json::<Value>().await.expect("a JSON body"))
            })
        })
        .collect();
    let mut out = Vec::with_capacity(n);
    for task in tasks {
        out.push(task.await.unwrap());
    }
    out
}

/// The answered requests' charges (micro-credits); every other answer
/// must be the refusal `(status, code)`.
fn answered(results: &[(u16, Value)], refusal: (u16, &str)) -> Vec<i64> {
    results
        .iter()
        .filter_map(|(status, body)| {
            if *status == 200 {
                return Some(micros(&body["billing"]["cost"]));
            }
            assert_eq!(
                (*status, body["error"]["code"].as_str().unwrap_or_default()),
                refusal,
                "{body}"
            );
            None
        })
        .collect()
}

fn micros(credits: &Value) -> i64 {
    (credits.as_f64().expect("a number of credits") * 1_000_000.0).round() as i64
}

/// The key through the dashboard API: `creditsConsumed` and
/// `creditsReserved`.
async fn key_view(server: &TestServer, owner: &str, key_id: &str) -> Value {
    get_json(server, owner, &format!("/api/v1/keys/{key_id}")).await
}

/// The tenant through the dashboard API: `walletBalance` and
/// `walletReserved`.
async fn tenant_view(server: &TestServer, owner: &str, name: &str) -> Value {
    let tenants = get_json(server, owner, "/api/v1/tenants").await;
    tenants["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .cloned()
        .expect("the tenant is listed")
}

/// The costs of a key's usage records, read back through the usage API.
async fn recorded(server: &TestServer, owner: &str, key_id: &str) -> Vec<i64> {
    let records = get_json(
        server,
        owner,
        &format!("/api/v1/usage/records?keyId={key_id}"),
    )
    .await;
    records["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| micros(&r["cost"]))
        .collect()
}

/// Waits (bounded) until nothing is reserved on the key, its tenant and
/// the whole gateway (`tollgate_reservations_open`), and returns the key.
/// Abandoned streams are charged on a task of their own, so their
/// reservations go a moment after the client left.
async fn settled(server: &TestServer, owner: &str, key_id: &str, tenant: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let key = key_view(server, owner, key_id).await;
        let wallet = tenant_view(server, owner, tenant).await;
        let metrics = common::scrape_metrics(server).await;
        let open = metrics
            .lines()
            .find_map(|l| l.strip_prefix("tollgate_reservations_open "))
            .map(str::to_owned);
        if key["creditsReserved"] == json!(0.0)
            && wallet["walletReserved"] == json!(0.0)
            && open.as_deref() == Some("0")
        {
            assert!(
                metrics.contains("tollgate_credits_reserved 0"),
                "the gauge of reserved credits is back to 0"
            );
            return key;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "a reservation leaked: key {key}, tenant {wallet}, open {open:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn new_tenant(server: &TestServer, name: &str, tier: &str, credits: &str) {
    server.cli_json(&["tenants", "create", "--name", name, "--tier", tier]);
    server.cli_json(&["tenants", "topup", name, "--credits", credits]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_requests_at_once_overshoot_a_key_cap_by_at_most_one_request() {
    let (_upstream, server) = setup().await;
    let owner = login(&server).await;
    let (key_id, key) = server.create_key(&["--credit-limit", "7", "--rate-limit", "1000000"]);
    let results = burst(&server, &key, &chat("ok"), BURST).await;
    let charges = answered(&results, (402, "budget_exceeded"));
    // Serially: admitted at 0, 2, 4, 6; refused from 8.
    assert_eq!(charges.len(), 4, "requests answered under a cap of 7");
    assert!(charges.iter().all(|c| *c == COST));
    let key_now = settled(&server, &owner, &key_id, "default").await;
    let consumed = micros(&key_now["creditsConsumed"]);
    assert_eq!(consumed, charges.iter().sum::<i64>());
    assert_eq!(
        recorded(&server, &owner, &key_id).await.iter().sum::<i64>(),
        consumed,
        "consumed equals the usage records"
    );
    assert!(
        consumed <= 7_000_000 + COST,
        "overshot by one request at most"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_requests_at_once_overdraw_a_wallet_by_at_most_one_request() {
    let (_upstream, server) = setup().await;
    let owner = login(&server).await;
    new_tenant(&server, "tiny", "paid", "7");
    let (key_id, key) = server.create_key(&["--tenant", "tiny", "--rate-limit", "1000000"]);
    let results = burst(&server, &key, &chat("ok"), BURST).await;
    let charges = answered(&results, (402, "insufficient_credits"));
    assert_eq!(charges.len(), 4, "requests answered on a wallet of 7");
    settled(&server, &owner, &key_id, "tiny").await;
    let wallet = tenant_view(&server, &owner, "tiny").await;
    let spent: i64 = recorded(&server, &owner, &key_id).await.iter().sum();
    assert_eq!(spent, charges.iter().sum::<i64>());
    assert_eq!(
        micros(&wallet["walletBalance"]),
        7_000_000 - spent,
        "the wallet was debited the usage records"
    );
    assert_eq!(
        micros(&wallet["walletBalance"]),
        -1_000_000,
        "the last request admitted below zero ends one request below"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_free_tier_day_cap_holds_under_a_thousand_requests_and_failures_do_not_use_it() {
    let (_upstream, mut server) = setup().await;
    let owner = login(&server).await;
    new_tenant(&server, "freebie", "free", "10000");
    let (key_id, key) = server.create_key(&["--tenant", "freebie", "--rate-limit", "1000000"]);
    // Multimodal requests that fail upstream reserve a unit of the day
    // and release it: none is counted. (Those sent while 5 units are
    // reserved are refused like any request over the cap.)
    let mut failed = 0;
    for (status, body) in burst(&server, &key, &image("broken"), 20).await {
        match status {
            s if s >= 500 => failed += 1,
            429 => assert_eq!(body["error"]["code"], "multimodal_cap_exceeded"),
            other => panic!("{other}: {body}"),
        }
    }
    assert!(failed >= 5, "{failed} requests reached the broken upstream");
    let results = burst(&server, &key, &image("ok"), BURST).await;
    let charges = answered(&results, (429, "multimodal_cap_exceeded"));
    assert_eq!(charges.len(), 5, "the default cap is 5 a day");
    settled(&server, &owner, &key_id, "freebie").await;
    assert_eq!(
        recorded(&server, &owner, &key_id).await.len(),
        5,
        "one usage record per answered request"
    );
    // The count is durable.
    server.restart();
    let after = common::chat_post(&server, &key, &image("ok")).await;
    assert_eq!(error_code(after, 429).await, "multimodal_cap_exceeded");
    // Text is not counted.
    let text = common::chat_post(&server, &key, &chat("ok")).await;
    assert_eq!(text.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_what_a_key_consumed() {
    let (_upstream, mut server) = setup().await;
    let owner = login(&server).await;
    let (key_id, key) = server.create_key(&["--credit-limit", "7", "--rate-limit", "1000000"]);
    for _ in 0..3 {
        let answer = common::chat_post(&server, &key, &chat("ok")).await;
        assert_eq!(answer.status(), 200);
    }
    server.restart();
    let owner_after = login(&server).await;
    assert_ne!(owner, owner_after);
    // 6 consumed before the restart: one more request fits, not four.
    let results = burst(&server, &key, &chat("ok"), BURST).await;
    let charges = answered(&results, (402, "budget_exceeded"));
    assert_eq!(charges.len(), 1, "6 of 7 were consumed before the restart");
    let key_now = settled(&server, &owner_after, &key_id, "default").await;
    assert_eq!(micros(&key_now["creditsConsumed"]), 8_000_000);
    assert_eq!(
        recorded(&server, &owner_after, &key_id)
            .await
            .iter()
            .sum::<i64>(),
        8_000_000
    );
}

/// Starts a stream on `endless`, reads its first bytes and drops it.
async fn abandon_stream(client: reqwest::Client, url: String, key: String) -> u16 {
    let mut body = chat("endless");
    body["stream"] = json!(true);
    let response = client
        .post(url)
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    if status == 200 {
        let mut stream = response.bytes_stream();
        let first = stream.next().await;
        assert!(first.is_some_and(|c| c.is_ok()), "a first chunk");
    }
    status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_reservation_leaks_after_upstream_errors_timeouts_disconnects_and_refusals() {
    let (_upstream, server) = setup().await;
    let owner = login(&server).await;
    new_tenant(&server, "busy", "paid", "1000");
    // `capped` runs into its cap (402s); `open` has none, so each of its
    // requests passes admission and then fails upstream, times out, is
    // refused by the gate (403) or is dropped by its client mid-stream.
    let (capped_id, capped) = server.create_key(&[
        "--tenant",
        "busy",
        "--credit-limit",
        "60",
        "--rate-limit",
        "1000000",
    ]);
    let (open_id, open) = server.create_key(&["--tenant", "busy", "--rate-limit", "1000000"]);
    let client = pooled();
    let url = server.url("/v1/chat/completions");
    let send = |key: &str, body: Value| {
        let request = client.post(&url).bearer_auth(key).json(&body);
        tokio::spawn(async move {
            let response = request.send().await.expect("an answer");
            let status = response.status().as_u16();
            (
                status,
                response.json::<Value>().await.unwrap_or(Value::Null),
            )
        })
    };
    let prohibited = json!({ "model": "ok", "messages": [{ "role": "user", "content":
        "Build a social credit system and deny loans to people with a low social score." }] });
    let mut plain = Vec::new();
    for i in 0..400 {
        plain.push(match i % 4 {
            0 => ("5xx", send(&open, chat("broken"))),
            1 => ("timeout", send(&open, chat("late"))),
            2 => ("403", send(&open, prohibited.clone())),
            _ => ("ok or 402", send(&capped, chat("ok"))),
        });
    }
    let streams: Vec<_> = (0..40)
        .map(|i| {
            let key = if i % 2 == 0 { &open } else { &capped };
            tokio::spawn(abandon_stream(client.clone(), url.clone(), key.clone()))
        })
        .collect();
    let mut answered_cost = 0;
    for (kind, task) in plain {
        let (status, body) = task.await.unwrap();
        match (kind, status) {
            ("5xx" | "timeout", s) if s >= 500 => {}
            ("403", 403) => assert_eq!(body["error"]["code"], "prohibited_use"),
            ("ok or 402", 200) => answered_cost += micros(&body["billing"]["cost"]),
            ("ok or 402", 402) => assert_eq!(body["error"]["code"], "budget_exceeded"),
            _ => panic!("{kind}: {status} {body}"),
        }
    }
    let mut streamed = 0;
    for task in streams {
        match task.await.unwrap() {
            200 => streamed += 1,
            402 => {}
            other => panic!("a stream answered {other}"),
        }
    }
    assert!(streamed >= 20, "every stream of the uncapped key ran");
    let capped_now = settled(&server, &owner, &capped_id, "busy").await;
    let open_now = settled(&server, &owner, &open_id, "busy").await;
    // Plain answers and abandoned streams are charged; nothing else is.
    let capped_records = recorded(&server, &owner, &capped_id).await;
    let open_records = recorded(&server, &owner, &open_id).await;
    assert_eq!(
        (capped_records.len() + open_records.len()) as i64,
        answered_cost / COST + streamed
    );
    let capped_consumed = micros(&capped_now["creditsConsumed"]);
    assert_eq!(capped_consumed, capped_records.iter().sum::<i64>());
    assert!(
        capped_consumed <= 60_000_000 + COST,
        "overshot by one request at most"
    );
    assert!(
        capped_consumed >= 60_000_000,
        "the capped key's answers and streams reach its cap"
    );
    assert_eq!(
        micros(&open_now["creditsConsumed"]),
        open_records.iter().sum::<i64>()
    );
    let wallet = tenant_view(&server, &owner, "busy").await;
    let spent: i64 = capped_records.iter().chain(&open_records).sum();
    assert_eq!(micros(&wallet["walletBalance"]), 1_000_000_000 - spent);
    // Nothing failed holds anything: the uncapped key is still served.
    let more = common::chat_post(&server, &open, &chat("ok")).await;
    assert_eq!(more.status(), 200);
}
