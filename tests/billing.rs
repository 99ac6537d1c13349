//! Billing and limits end to end: the real server, a scripted upstream, the
//! ledger read back through the CLI and the dashboard API.
//!
//! Prices in the test catalogue: 1 credit per million input tokens, 2 per
//! million output tokens. The upstream's `ok` answer reports 10 + 5 tokens,
//! so one request costs 10 + 10 = 20 micro-credits.
#![allow(clippy::disallowed_methods)] // Test and bench code spawns its own clients and servers.

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::upstream::Upstream;
use common::{TestServer, client, error_code, login, login_as};
use futures::StreamExt;
use serde_json::{Value, json};

const COST: u64 = 20;

fn config(upstream: &str) -> String {
    let model = |id: &str, up: &str, input: &str| {
        format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"up\"\nupstream = \"{up}\"\ninput = {input}\noutput = [\"TEXT\"]\n\
             context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
        )
    };
    let mut out = format!(
        "[[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{upstream}\"\nfirst_byte_timeout_ms = 5000\n"
    );
    out.push_str(&model("ok", "ok", "[\"TEXT\", \"IMAGE\"]"));
    out.push_str(&model("endless", "endless", "[\"TEXT\"]"));
    out.push_str(&model("s500", "status-500", "[\"TEXT\"]"));
    out
}

async fn setup() -> (Upstream, TestServer) {
    let upstream = Upstream::start().await;
    let server = TestServer::start_with(Some(&config(&upstream.base_url)), &[]);
    (upstream, server)
}

fn hello() -> Value {
    json!({ "model": "ok", "messages": [{ "role": "user", "content": "hi" }] })
}

async fn post(server: &TestServer, key: &str, body: &Value) -> reqwest::Response {
    client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap()
}

fn usage(server: &TestServer, key_id: &str) -> Value {
    server.cli_json(&["usage", "--key", key_id])
}

fn key_view(server: &TestServer, key_id: &str) -> Value {
    server.cli_json(&["keys", "show", key_id])
}

fn micros(credits: &Value) -> u64 {
    (credits.as_f64().unwrap() * 1_000_000.0).round() as u64
}

/// The enterprise tenant's wallet may go negative.
fn signed_micros(credits: &Value) -> i64 {
    (credits.as_f64().unwrap() * 1_000_000.0).round() as i64
}

fn events(report: &Value) -> Vec<(String, u64)> {
    report["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap().to_owned(),
                e["data"]["percentage"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn concurrent_requests_fire_each_threshold_once_and_the_ledger_matches_the_records() {
    let (upstream, server) = setup().await;
    // 150 requests reach the cap (3000 micro-credits); 200 are sent at once.
    let (key_id, key) = server.create_key(&["--credit-limit", "0.003", "--rate-limit", "1000"]);
    let wallet_before =
        signed_micros(&server.cli_json(&["tenants", "show", "default"])["walletBalance"]);
    // The requests bound their output as the upstream's answer is long, so
    // each reserves about what it costs at admission (without a bound, it
    // reserves a whole default output: see docs/billing.md).
    let mut bounded = hello();
    bounded["max_tokens"] = json!(5);
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let (url, key) = (server.url("/v1/chat/completions"), key.clone());
            let body = bounded.clone();
            tokio::spawn(async move {
                let response = client()
                    .post(url)
                    .bearer_auth(key)
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                let status = response.status().as_u16();
                let body: Value = response.json().await.unwrap();
                (status, body)
            })
        })
        .collect();
    let mut ok = 0u64;
    for task in tasks {
        let (status, body) = task.await.unwrap();
        match status {
            200 => {
                ok += 1;
                assert_eq!(micros(&body["billing"]["cost"]), COST);
            }
            402 => assert_eq!(body["error"]["code"], "budget_exceeded"),
            other => panic!("unexpected status {other}: {body}"),
        }
    }
    assert!(ok >= 150, "only {ok} requests were served before the cap");

    let report = usage(&server, &key_id);
    assert_eq!(
        events(&report),
        [
            ("spend.50_percent".to_owned(), 50),
            ("spend.80_percent".to_owned(), 80),
            ("budget.exceeded".to_owned(), 100)
        ],
        "each threshold fires exactly once, in order"
    );
    assert_eq!(
        report["totals"]["requests"], ok,
        "one usage record per served request"
    );
    let recorded = micros(&report["totals"]["cost"]);
    assert_eq!(recorded, ok * COST);
    let shown = key_view(&server, &key_id);
    assert_eq!(
        micros(&shown["creditsConsumed"]),
        recorded,
        "the key's ledger equals its usage records"
    );
    assert_eq!(shown["state"], "over_budget");
    assert_eq!(shown["notifiedThresholds"], json!([50, 80, 100]));
    let wallet_after =
        signed_micros(&server.cli_json(&["tenants", "show", "default"])["walletBalance"]);
    assert_eq!(
        wallet_before - wallet_after,
        recorded as i64,
        "the wallet was debited the same"
    );

    // Over the cap: 402, and nothing more reaches the upstream.
    let received = upstream.recorded.bodies().len();
    let refused = post(&server, &key, &hello()).await;
    assert_eq!(error_code(refused, 402).await, "budget_exceeded");
    assert_eq!(upstream.recorded.bodies().len(), received);
}

#[tokio::test]
async fn thresholds_survive_a_restart_without_firing_twice() {
    let (_upstream, mut server) = setup().await;
    // 10 requests = 200 micro-credits = 50 % of 400.
    let (key_id, key) = server.create_key(&["--credit-limit", "0.0004"]);
    for _ in 0..10 {
        assert_eq!(post(&server, &key, &hello()).await.status(), 200);
    }
    assert_eq!(
        events(&usage(&server, &key_id)),
        [("spend.50_percent".to_owned(), 50)]
    );
    server.restart();
    // 6 more: 320 = 80 %.
    for _ in 0..6 {
        assert_eq!(post(&server, &key, &hello()).await.status(), 200);
    }
    assert_eq!(
        events(&usage(&server, &key_id)),
        [
            ("spend.50_percent".to_owned(), 50),
            ("spend.80_percent".to_owned(), 80)
        ]
    );
}

#[tokio::test]
async fn every_answered_request_survives_kill_9() {
    let (_upstream, mut server) = setup().await;
    let (key_id, key) = server.create_key(&["--rate-limit", "100000"]);
    let url = server.url("/v1/chat/completions");
    // The server is killed once enough requests were answered (however
    // slow the machine), with more in flight; the clients stop on the
    // first failure (the dead server).
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (url, key, done) = (url.clone(), key.clone(), done.clone());
            tokio::spawn(async move {
                let mut answered = Vec::new();
                loop {
                    let Ok(response) = client()
                        .post(&url)
                        .bearer_auth(&key)
                        .json(&hello())
                        .send()
                        .await
                    else {
                        break;
                    };
                    if response.status() != 200 {
                        break;
                    }
                    let id = response.headers()["x-request-id"]
                        .to_str()
                        .unwrap()
                        .to_owned();
                    // Answered only when the whole body arrived.
                    if response.bytes().await.is_ok() {
                        answered.push(id);
                        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                answered
            })
        })
        .collect();
    let patience = Instant::now() + Duration::from_secs(120);
    while done.load(std::sync::atomic::Ordering::Relaxed) < 100 && Instant::now() < patience {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.kill_9();
    let mut answered = HashSet::new();
    for task in tasks {
        answered.extend(task.await.unwrap());
    }
    assert!(!answered.is_empty());
    server.launch().unwrap();
    let report = server.cli_json(&["usage", "--key", &key_id]);
    let recorded = report["totals"]["requests"].as_u64().unwrap();
    assert!(
        recorded >= answered.len() as u64,
        "{} answered, {recorded} recorded",
        answered.len()
    );
    // Every answered request id has its usage record.
    let records = usage_records(&server, &key_id).await;
    let ids: HashSet<String> = records
        .iter()
        .map(|r| r["requestId"].as_str().unwrap().to_owned())
        .collect();
    for id in &answered {
        assert!(
            ids.contains(id),
            "answered request {id} has no usage record"
        );
    }
    let key = key_view(&server, &key_id);
    assert_eq!(
        micros(&key["creditsConsumed"]),
        recorded * COST,
        "totals match after the restart"
    );
}

/// The raw usage records of a key, through the dashboard API (owner).
async fn usage_records(server: &TestServer, key_id: &str) -> Vec<Value> {
    let token = login(server).await;
    let records: Value = common::get_json(
        server,
        &token,
        &format!("/api/v1/usage/records?keyId={key_id}"),
    )
    .await;
    records["data"].as_array().unwrap().clone()
}

/// `POST /api/v1/tenants/default/credits` with `amount`.
async fn top_up(server: &TestServer, token: &str, amount: Value) -> reqwest::Response {
    client()
        .post(server.url("/api/v1/tenants/default/credits"))
        .bearer_auth(token)
        .json(&json!({ "amount": amount }))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn streams_are_billed_like_plain_answers_and_when_abandoned() {
    let (_upstream, server) = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let plain: Value = post(&server, &key, &hello()).await.json().await.unwrap();
    let mut streamed = hello();
    streamed["stream"] = json!(true);
    let text = post(&server, &key, &streamed).await.text().await.unwrap();
    assert!(text.ends_with("data: [DONE]\n\n"));
    let records = usage_records(&server, &key_id).await;
    assert_eq!(records.len(), 2);
    let (a, b) = (&records[0], &records[1]);
    assert_eq!(a["streamed"], false);
    assert_eq!(b["streamed"], true);
    for field in ["promptTokens", "completionTokens", "cost"] {
        assert_eq!(
            a[field], b[field],
            "{field}: streamed usage equals plain usage"
        );
    }
    assert_eq!(micros(&plain["billing"]["cost"]), COST);

    // A stream the caller abandons half way is billed for what it produced.
    let mut endless = json!({ "model": "endless", "stream": true, "messages": [{ "role": "user", "content": "go on" }] });
    endless["stream"] = json!(true);
    let response = post(&server, &key, &endless).await;
    let mut bytes = response.bytes_stream();
    let mut seen = String::new();
    while seen.matches("data: ").count() < 4 {
        seen.push_str(&String::from_utf8_lossy(
            &bytes.next().await.unwrap().unwrap(),
        ));
    }
    drop(bytes);
    let deadline = Instant::now() + Duration::from_secs(20);
    let abandoned = loop {
        let records = usage_records(&server, &key_id).await;
        if let Some(r) = records.iter().find(|r| r["model"] == "endless") {
            break r.clone();
        }
        assert!(
            Instant::now() < deadline,
            "the abandoned stream was never billed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(abandoned["streamed"], true);
    assert_eq!(abandoned["estimated"], true);
    // At least the four chunks read ("more " is 5 characters, 2 tokens each
    // at 4 characters per token, rounded up over the whole text).
    assert!(
        abandoned["completionTokens"].as_u64().unwrap() >= 5,
        "{abandoned}"
    );
    assert!(micros(&abandoned["cost"]) > 0);
}

#[tokio::test]
async fn the_rate_limit_refuses_with_headers_and_recovers() {
    let (_upstream, server) = setup().await;
    // The default: 60 per minute.
    let (_, default_key) = server.create_key(&[]);
    for i in 0..60 {
        let response = post(&server, &default_key, &hello()).await;
        assert_eq!(response.status(), 200, "request {}", i + 1);
        assert_eq!(response.headers()["x-ratelimit-limit-requests"], "60");
        assert_eq!(
            response.headers()["x-ratelimit-remaining-requests"],
            (59 - i).to_string().as_str()
        );
    }
    let refused = post(&server, &default_key, &hello()).await;
    assert_eq!(refused.headers()["x-ratelimit-remaining-requests"], "0");
    assert!(refused.headers().contains_key("x-ratelimit-reset-requests"));
    assert!(refused.headers().contains_key("retry-after"));
    assert_eq!(error_code(refused, 429).await, "rate_limit_exceeded");

    // A key's own limit.
    let (_, key) = server.create_key(&["--rate-limit", "5"]);
    for _ in 0..5 {
        assert_eq!(post(&server, &key, &hello()).await.status(), 200);
    }
    let refused = post(&server, &key, &hello()).await;
    assert_eq!(refused.headers()["x-ratelimit-limit-requests"], "5");
    let wait: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait));
    assert_eq!(error_code(refused, 429).await, "rate_limit_exceeded");
    // The window slides: once the oldest request is a minute old, there is room.
    tokio::time::sleep(Duration::from_secs(wait)).await;
    let recovered = post(&server, &key, &hello()).await;
    assert_eq!(recovered.status(), 200);
}

fn image_request() -> Value {
    json!({ "model": "ok", "messages": [{ "role": "user", "content": [
        { "type": "text", "text": "what is this?" },
        { "type": "image_url", "image_url": { "url": "https://example.com/cat.png" } }
    ] }] })
}

#[tokio::test]
async fn the_free_tier_multimodal_cap_is_durable_and_spares_paid_tenants() {
    let (_upstream, mut server) = setup().await;
    server.cli_json(&["tenants", "create", "--name", "freebie", "--tier", "free"]);
    server.cli_json(&["tenants", "topup", "freebie", "--credits", "10"]);
    let (_, free_key) = server.create_key(&["--tenant", "freebie"]);
    // An empty wallet refuses a paid tenant's request before anything else.
    server.cli_json(&["tenants", "create", "--name", "paying", "--tier", "paid"]);
    let (_, paid_key) = server.create_key(&["--tenant", "paying"]);
    let empty = post(&server, &paid_key, &hello()).await;
    assert_eq!(error_code(empty, 402).await, "insufficient_credits");
    server.cli_json(&["tenants", "topup", "paying", "--credits", "10"]);

    for _ in 0..5 {
        assert_eq!(
            post(&server, &free_key, &image_request()).await.status(),
            200
        );
    }
    // Text-only requests are not counted.
    assert_eq!(post(&server, &free_key, &hello()).await.status(), 200);
    let sixth = post(&server, &free_key, &image_request()).await;
    let retry: u64 = sixth.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (1..=86_400).contains(&retry),
        "Retry-After points to the next UTC midnight"
    );
    assert_eq!(error_code(sixth, 429).await, "multimodal_cap_exceeded");

    server.restart();
    let after_restart = post(&server, &free_key, &image_request()).await;
    assert_eq!(
        error_code(after_restart, 429).await,
        "multimodal_cap_exceeded"
    );
    for _ in 0..7 {
        assert_eq!(
            post(&server, &paid_key, &image_request()).await.status(),
            200
        );
    }
}

#[tokio::test]
async fn the_usage_api_is_scoped_by_role_and_tenant() {
    let (_upstream, server) = setup().await;
    let (key_id, key) = server.create_key(&["--credit-limit", "1"]);
    for _ in 0..3 {
        assert_eq!(post(&server, &key, &hello()).await.status(), 200);
    }
    let token = login(&server).await;
    let get = |path: String, token: String| {
        let url = server.url(&path);
        async move { client().get(url).bearer_auth(token).send().await.unwrap() }
    };
    let report: Value = get("/api/v1/usage".into(), token.clone())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(report["totals"]["requests"], 3);
    assert_eq!(report["data"][0]["keyId"], key_id);
    assert_eq!(report["data"][0]["model"], "ok");
    assert_eq!(micros(&report["data"][0]["cost"]), 3 * COST);

    let shown: Value = get(format!("/api/v1/keys/{key_id}"), token.clone())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(micros(&shown["creditsConsumed"]), 3 * COST);
    assert_eq!(shown["notifiedThresholds"], json!([]));

    // Top-up by the owner, visible in the wallet history.
    let topped: Value = top_up(&server, &token, json!(12.5))
        .await
        .json()
        .await
        .unwrap();
    assert!(topped["walletBalance"].as_f64().unwrap() > 12.0);
    let history: Value = get("/api/v1/billing/history".into(), token.clone())
        .await
        .json()
        .await
        .unwrap();
    let kinds: Vec<&str> = history["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"top_up") && kinds.contains(&"charges"),
        "{history}"
    );

    // Bad input: a negative amount, a malformed date.
    let bad = top_up(&server, &token, json!(-3)).await;
    assert_eq!(error_code(bad, 400).await, "invalid_request");
    let bad = get("/api/v1/usage?from=yesterday".into(), token.clone()).await;
    assert_eq!(error_code(bad, 400).await, "invalid_request");

    // Another tenant's user sees none of it.
    server.cli_json(&["tenants", "create", "--name", "other", "--tier", "paid"]);
    server.cli_with_stdin(
        &[
            "users",
            "create",
            "--email",
            "u@other.test",
            "--tenant",
            "other",
            "--role",
            "user",
            "--password-stdin",
        ],
        "correct horse battery\n",
    );
    let other = login_as(&server, "u@other.test", "correct horse battery").await;
    let theirs: Value = get("/api/v1/usage".into(), other.clone())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(theirs["totals"]["requests"], 0);
    let hidden = get(format!("/api/v1/keys/{key_id}"), other.clone()).await;
    assert_eq!(error_code(hidden, 404).await, "not_found");
    let denied = top_up(&server, &other, json!(1)).await;
    assert_eq!(error_code(denied, 403).await, "forbidden");
}
