//! Webhooks end to end: the real server delivers to receivers on loopback.
//!
//! Prices in the test catalogue: one request served by the upstream's `ok`
//! answer costs 20 micro-credits (10 prompt + 5 completion tokens at 1 and
//! 2 credits per million).

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::receiver::{Received, Receiver};
use common::upstream::Upstream;
use common::{TestServer, account, client, error_code, login};
use serde_json::{Value, json};

#[path = "../docs/examples/verify_webhook.rs"]
mod verify_webhook;

fn config(upstream: &str) -> String {
    common::upstream::catalogue(upstream, &[("ok", "ok"), ("s503", "status-503")])
}

/// A server that allows loopback webhook targets, with `operator` as its
/// operator-level URL (when given).
async fn setup(operator: Option<&str>) -> (Upstream, TestServer) {
    let upstream = Upstream::start().await;
    let mut env = vec![("TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")];
    if let Some(url) = operator {
        env.push(("WEBHOOK_URLS", url));
    }
    let server = TestServer::start_with(Some(&config(&upstream.base_url)), &env);
    (upstream, server)
}

async fn put_urls(
    server: &TestServer,
    token: &str,
    tenant: Option<&str>,
    urls: Value,
) -> reqwest::Response {
    let path = match tenant {
        Some(t) => format!("/api/v1/webhooks?tenant={t}"),
        None => "/api/v1/webhooks".to_owned(),
    };
    client()
        .put(server.url(&path))
        .bearer_auth(token)
        .json(&json!({ "urls": urls }))
        .send()
        .await
        .unwrap()
}

/// Rotates the tenant's secret and returns the new one.
async fn rotate(server: &TestServer, token: &str, tenant: Option<&str>) -> String {
    let path = match tenant {
        Some(t) => format!("/api/v1/webhooks/secret/rotate?tenant={t}"),
        None => "/api/v1/webhooks/secret/rotate".to_owned(),
    };
    let response = client()
        .post(server.url(&path))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let secret = body["signingSecret"].as_str().unwrap().to_owned();
    assert_eq!(
        body["signingSecretHint"],
        format!("...{}", &secret[secret.len() - 4..]),
        "the hint is the secret's last four characters"
    );
    secret
}

async fn chat(server: &TestServer, key: &str, body: Value) -> reqwest::Response {
    client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

fn hello(model: &str) -> Value {
    json!({ "model": model, "messages": [{ "role": "user", "content": "hi" }] })
}

fn chain(models: &[&str]) -> Value {
    json!({ "models": models, "messages": [{ "role": "user", "content": "hi" }] })
}

/// The headers every delivery carries, and the signature when signed.
fn assert_delivery(received: &Received, secret: Option<&str>) {
    assert_eq!(
        received.header("content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(
        received.header("user-agent").as_deref(),
        Some("Service-Webhook/1.0")
    );
    assert_eq!(received.header("x-service-event"), Some(received.event()));
    let envelope = received.json();
    let timestamp = envelope["timestamp"].as_str().unwrap();
    assert!(
        timestamp.len() == 24 && timestamp.ends_with('Z') && timestamp.as_bytes()[19] == b'.',
        "ISO 8601 UTC with milliseconds: {timestamp}"
    );
    assert!(envelope["data"].is_object());
    let signature = received.header("x-service-signature");
    match secret {
        Some(secret) => assert!(
            verify_webhook::verify(secret.as_bytes(), signature.as_deref(), &received.body),
            "signed with the tenant's secret over the raw body"
        ),
        None => assert_eq!(signature, None, "operator deliveries are unsigned"),
    }
}

fn events_of(received: &[Received]) -> Vec<String> {
    let mut names: Vec<String> = received.iter().map(Received::event).collect();
    names.sort();
    names
}

#[tokio::test]
async fn every_event_reaches_its_tenant_signed_the_operator_unsigned_and_no_other_tenant() {
    let receiver = Receiver::start().await;
    let (_upstream, server) = setup(Some(&receiver.url("/operator"))).await;
    let owner = login(&server).await;
    server.cli_json(&["tenants", "create", "--name", "other", "--tier", "paid"]);
    server.cli_json(&["tenants", "topup", "other", "--credits", "10"]);
    let response = put_urls(&server, &owner, None, json!([receiver.url("/tenant-a")])).await;
    assert_eq!(response.status(), 200);
    let response = put_urls(
        &server,
        &owner,
        Some("other"),
        json!([receiver.url("/tenant-b")]),
    )
    .await;
    assert_eq!(response.status(), 200);
    let secret_a = rotate(&server, &owner, None).await;
    let secret_b = rotate(&server, &owner, Some("other")).await;

    // Two requests on a key capped at 40 micro-credits: 50 % after the
    // first, 80 % and 100 % after the second.
    let (capped_id, capped) = server.create_key(&["--credit-limit", "0.00004"]);
    assert_eq!(chat(&server, &capped, hello("ok")).await.status(), 200);
    assert_eq!(chat(&server, &capped, hello("ok")).await.status(), 200);
    // A fallback, then a chain that fails entirely.
    let (key_id, key) = server.create_key(&[]);
    let fallback = chat(&server, &key, chain(&["s503", "ok"])).await;
    assert_eq!(fallback.status(), 200);
    let fallback_id = fallback.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let exhausted = chat(&server, &key, chain(&["s503"])).await;
    let exhausted_id = exhausted.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(error_code(exhausted, 502).await, "all_providers_failed");

    let expected = [
        "budget.exceeded",
        "fallback.triggered",
        "providers.exhausted",
        "request.completed",
        "request.completed",
        "request.completed",
        "spend.50_percent",
        "spend.80_percent",
    ];
    let tenant_a = receiver.wait_for("/tenant-a", expected.len()).await;
    assert_eq!(events_of(&tenant_a), expected);
    for delivery in &tenant_a {
        assert_delivery(delivery, Some(&secret_a));
    }
    let operator = receiver.wait_for("/operator", expected.len()).await;
    assert_eq!(events_of(&operator), expected);
    for delivery in &operator {
        assert_delivery(delivery, None);
    }

    // The data of each kind.
    let data = |name: &str| -> Vec<Value> {
        tenant_a
            .iter()
            .filter(|r| r.event() == name)
            .map(|r| r.json()["data"].clone())
            .collect()
    };
    let spend = &data("spend.80_percent")[0];
    assert_eq!(spend["keyId"], capped_id.as_str());
    assert_eq!(spend["percentage"], 80);
    assert_eq!(spend["consumed"].as_f64(), Some(0.00004));
    assert_eq!(spend["limit"].as_f64(), Some(0.00004));
    assert!(spend["keyName"].is_string() && spend["tenantId"].is_string());
    assert_eq!(data("budget.exceeded")[0]["percentage"], 100);
    let fallback = &data("fallback.triggered")[0];
    assert_eq!(fallback["requestId"], fallback_id.as_str());
    assert_eq!(fallback["modelChain"], json!(["s503", "ok"]));
    assert_eq!(fallback["servedBy"], "ok");
    let attempts = fallback["providerAttempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0]["status"], "503");
    assert_eq!(attempts[0]["provider"], "up");
    assert!(attempts[0]["latencyMs"].is_u64());
    assert_eq!(attempts[1]["status"], "ok");
    let exhausted = &data("providers.exhausted")[0];
    assert_eq!(exhausted["requestId"], exhausted_id.as_str());
    assert_eq!(exhausted["modelChain"], json!(["s503"]));
    assert_eq!(exhausted["providerAttempts"][0]["status"], "503");
    let completed = data("request.completed");
    let served_by_fallback = completed
        .iter()
        .find(|d| d["requestId"] == fallback_id.as_str())
        .expect("the fallback's request.completed");
    assert_eq!(served_by_fallback["keyId"], key_id.as_str());
    assert_eq!(served_by_fallback["model"], "ok");
    assert_eq!(served_by_fallback["provider"], "up");
    assert_eq!(served_by_fallback["promptTokens"], 10);
    assert_eq!(served_by_fallback["completionTokens"], 5);
    assert_eq!(served_by_fallback["cost"].as_f64(), Some(0.00002));
    assert_eq!(served_by_fallback["isFallback"], true);
    assert!(served_by_fallback["latencyMs"].is_u64());

    // The other tenant got none of that; its own request reaches only it.
    assert!(receiver.at("/tenant-b").is_empty());
    let (_, other_key) = server.create_key(&["--tenant", "other"]);
    assert_eq!(chat(&server, &other_key, hello("ok")).await.status(), 200);
    let tenant_b = receiver.wait_for("/tenant-b", 1).await;
    assert_eq!(events_of(&tenant_b), ["request.completed"]);
    assert_delivery(&tenant_b[0], Some(&secret_b));
    assert!(!verify_webhook::verify(
        secret_a.as_bytes(),
        tenant_b[0].header("x-service-signature").as_deref(),
        &tenant_b[0].body
    ));
    receiver.wait_for("/operator", expected.len() + 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        receiver.at("/tenant-a").len(),
        expected.len(),
        "nothing else for tenant a"
    );

    // Rotation changes the signing key for the very next delivery.
    let rotated = rotate(&server, &owner, None).await;
    assert_eq!(chat(&server, &key, hello("ok")).await.status(), 200);
    let latest = receiver.wait_for("/tenant-a", expected.len() + 1).await;
    let last = latest.last().unwrap();
    assert_delivery(last, Some(&rotated));
    assert!(!verify_webhook::verify(
        secret_a.as_bytes(),
        last.header("x-service-signature").as_deref(),
        &last.body
    ));

    // The deliveries list shows them, newest first, with status and latency.
    let list: Value = common::get_json(&server, &owner, "/api/v1/webhooks/deliveries").await;
    let rows = list["data"].as_array().unwrap();
    assert_eq!(rows.len(), expected.len() + 1);
    assert!(rows.iter().all(|r| r["status"] == "204"
        && r["result"] == "success"
        && r["signed"] == true
        && r["url"] == receiver.url("/tenant-a")
        && r["latencyMs"].is_u64()));
}

#[tokio::test]
async fn a_hanging_receiver_never_delays_the_caller_and_is_abandoned_after_five_seconds() {
    let receiver = Receiver::start().await;
    let (_upstream, server) = setup(None).await;
    let owner = login(&server).await;
    // A port nobody listens on: the connection is refused.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/gone", listener.local_addr().unwrap())
    };
    let urls = json!([receiver.url("/hang"), receiver.url("/fail"), closed]);
    assert_eq!(put_urls(&server, &owner, None, urls).await.status(), 200);
    let (_, key) = server.create_key(&[]);

    assert_eq!(chat(&server, &key, hello("ok")).await.status(), 200);
    // The caller has its answer; the receiver has the delivery, which is
    // still pending (it hangs for 60 s, the gateway waits 5).
    receiver.wait_for("/hang", 1).await;
    let pending = deliveries(&server, &owner).await;
    assert!(
        pending.iter().all(|d| d["url"] != receiver.url("/hang")),
        "the hanging delivery is still in flight after the caller was answered: {pending:?}"
    );
    // And the next caller is not held up by it either.
    assert_eq!(chat(&server, &key, hello("ok")).await.status(), 200);

    let mut timed_out = Vec::new();
    for _ in 0..200 {
        timed_out = deliveries(&server, &owner)
            .await
            .into_iter()
            .filter(|d| d["url"] == receiver.url("/hang"))
            .collect();
        if timed_out.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(timed_out.len(), 2, "both hanging deliveries were abandoned");
    for d in &timed_out {
        assert_eq!(d["status"], "timeout");
        assert_eq!(d["result"], "timeout");
        assert!(
            d["latencyMs"].as_u64().unwrap() >= 5000,
            "abandoned at 5 s: {d}"
        );
    }
    let failed: Vec<Value> = deliveries(&server, &owner)
        .await
        .into_iter()
        .filter(|d| d["url"] == receiver.url("/fail"))
        .collect();
    assert_eq!(failed.len(), 2);
    assert!(
        failed
            .iter()
            .all(|d| d["status"] == "500" && d["result"] == "http_error")
    );
    let refused: Vec<Value> = deliveries(&server, &owner)
        .await
        .into_iter()
        .filter(|d| d["url"] == closed.as_str())
        .collect();
    assert_eq!(refused.len(), 2);
    assert!(
        refused
            .iter()
            .all(|d| d["status"] == "refused" && d["result"] == "refused")
    );

    // No retry: one delivery per event and URL, even well after the timeout.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(receiver.at("/hang").len(), 2);
    assert_eq!(receiver.at("/fail").len(), 2);
    let metrics = common::scrape_metrics(&server).await;
    assert!(
        metrics
            .contains("tollgate_webhook_deliveries_total{target=\"tenant\",result=\"timeout\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "tollgate_webhook_deliveries_total{target=\"tenant\",result=\"http_error\"} 2"
        ),
        "{metrics}"
    );
    assert!(
        metrics
            .contains("tollgate_webhook_deliveries_total{target=\"tenant\",result=\"refused\"} 2"),
        "{metrics}"
    );
}

async fn deliveries(server: &TestServer, token: &str) -> Vec<Value> {
    let list: Value = common::get_json(server, token, "/api/v1/webhooks/deliveries").await;
    list["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn the_url_list_is_replaced_idempotently_and_private_targets_are_refused_by_default() {
    // The default: no private targets.
    let server = TestServer::start();
    let owner = login(&server).await;
    for private in [
        "http://127.0.0.1:9000/hook",
        "http://localhost/hook",
        "http://[::1]/hook",
        "http://10.0.0.7/hook",
        "http://169.254.169.254/latest/meta-data",
    ] {
        let response = put_urls(&server, &owner, None, json!([private])).await;
        assert_eq!(
            error_code(response, 400).await,
            "invalid_request",
            "{private}"
        );
    }
    for bad in [
        json!(["ftp://hooks.example.invalid/x"]),
        json!(["not a url"]),
        json!("https://a.example.invalid"),
    ] {
        let response = put_urls(&server, &owner, None, bad.clone()).await;
        assert_eq!(error_code(response, 400).await, "invalid_request", "{bad}");
    }
    let response = client()
        .put(server.url("/api/v1/webhooks"))
        .bearer_auth(&owner)
        .header("content-type", "application/json")
        .body("{\"urls\": [")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(response, 400).await, "invalid_request");

    let first = json!([
        "https://hooks.example.invalid/a",
        "https://hooks.example.invalid/b"
    ]);
    let set: Value = put_urls(&server, &owner, None, first.clone())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(set["urls"], first);
    assert!(
        set["signingSecretHint"]
            .as_str()
            .unwrap()
            .starts_with("...")
    );
    let again: Value = put_urls(&server, &owner, None, first.clone())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        again, set,
        "the same list again changes nothing, not even updatedAt"
    );
    let shown: Value = common::get_json(&server, &owner, "/api/v1/webhooks").await;
    assert_eq!(shown, set);
    let replaced: Value = put_urls(
        &server,
        &owner,
        None,
        json!(["https://hooks.example.invalid/b"]),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        replaced["urls"],
        json!(["https://hooks.example.invalid/b"]),
        "the whole list is replaced"
    );
    let cleared: Value = put_urls(&server, &owner, None, json!([]))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(cleared["urls"], json!([]));

    // Roles: owner and admin manage webhooks; nobody else reads or writes.
    let admin = account(&server, "default", "admin@hooks.test", "admin").await;
    assert_eq!(
        put_urls(&server, &admin, None, first.clone())
            .await
            .status(),
        200
    );
    for role in ["billing", "auditor", "reviewer", "user", "tester"] {
        let token = account(&server, "default", &format!("{role}@hooks.test"), role).await;
        let get = client()
            .get(server.url("/api/v1/webhooks"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(error_code(get, 403).await, "forbidden", "{role}");
        let put = put_urls(&server, &token, None, json!([])).await;
        assert_eq!(error_code(put, 403).await, "forbidden", "{role}");
        let rotate = client()
            .post(server.url("/api/v1/webhooks/secret/rotate"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(error_code(rotate, 403).await, "forbidden", "{role}");
    }
    // The operator's admin reaches every tenant (an unknown one is 404);
    // another tenant's admin manages its own tenant only.
    let other = put_urls(&server, &admin, Some("elsewhere"), json!([])).await;
    assert_eq!(error_code(other, 404).await, "not_found");
    server.cli_json(&["tenants", "create", "--name", "elsewhere", "--tier", "paid"]);
    let stranger = account(&server, "elsewhere", "admin@elsewhere.test", "admin").await;
    let other = put_urls(&server, &stranger, Some("default"), json!([])).await;
    assert_eq!(error_code(other, 403).await, "forbidden");
    let unsigned = client()
        .get(server.url("/api/v1/webhooks"))
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), 401);
    // The list survived all of that.
    let shown: Value = common::get_json(&server, &owner, "/api/v1/webhooks").await;
    assert_eq!(shown["urls"], first);
}

/// The Python receiver of `docs/webhooks.md`, run as documented, gets a
/// real delivery and verifies it; a tampered body is refused.
#[tokio::test]
async fn the_documented_python_receiver_verifies_real_deliveries() {
    let (_upstream, server) = setup(None).await;
    let owner = login(&server).await;
    let secret = rotate(&server, &owner, None).await;
    let python = std::env::var("TOLLGATE_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut child = Command::new(python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/examples/verify_webhook.py"
        ))
        .arg("0")
        .env("WEBHOOK_SECRET", &secret)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 runs the documented receiver");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let port = first
        .strip_prefix("listening on ")
        .expect(&first)
        .to_owned();
    let url = format!("http://127.0.0.1:{port}/hooks");
    assert_eq!(
        put_urls(&server, &owner, None, json!([url])).await.status(),
        200
    );
    let (_, key) = server.create_key(&[]);
    assert_eq!(chat(&server, &key, hello("ok")).await.status(), 200);
    // The reader is handed back: closing the pipe would break the
    // receiver's next print.
    let (verified, _lines) = tokio::task::spawn_blocking(move || {
        let line = lines.next().unwrap().unwrap();
        (line, lines)
    })
    .await
    .unwrap();
    assert!(
        verified.starts_with("verified request.completed at "),
        "{verified}"
    );

    // Forged or tampered deliveries are refused by the same receiver.
    let body = br#"{"data":{},"event":"request.completed","timestamp":"2026-01-01T00:00:00.000Z"}"#;
    let good = tollgate::events::signature(&secret, body);
    for (signature, payload) in [
        (
            Some(good.clone()),
            &b"{\"data\":{},\"event\":\"budget.exceeded\"}"[..],
        ),
        (Some(good.replace("sha256=", "sha1=")), &body[..]),
        (None, &body[..]),
    ] {
        let mut request = client().post(&url).body(payload.to_vec());
        if let Some(s) = signature {
            request = request.header("x-service-signature", s);
        }
        assert_eq!(request.send().await.unwrap().status(), 401);
    }
    let accepted = client()
        .post(&url)
        .header("x-service-signature", good)
        .body(body.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), 204);
    let _ = child.kill();
    let _ = child.wait();
}

/// The guide shows the very examples the tests run.
#[test]
fn the_receiver_guide_embeds_the_tested_examples() {
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/webhooks.md")).unwrap();
    for example in ["verify_webhook.py", "verify_webhook.rs"] {
        let code = std::fs::read_to_string(format!(
            "{}/docs/examples/{example}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert!(
            guide.contains(code.trim()),
            "docs/webhooks.md must contain docs/examples/{example} verbatim"
        );
    }
}

#[test]
fn the_rust_verifier_refuses_other_schemes_and_bad_hex() {
    let body = b"{}";
    let good = tollgate::events::signature("s3cret", body);
    assert!(verify_webhook::verify(b"s3cret", Some(&good), body));
    assert!(!verify_webhook::verify(b"other", Some(&good), body));
    assert!(!verify_webhook::verify(
        b"s3cret",
        Some(&good.replace("sha256=", "sha512=")),
        body
    ));
    assert!(!verify_webhook::verify(b"s3cret", Some("sha256=zz"), body));
    assert!(!verify_webhook::verify(b"s3cret", None, body));
    assert!(!verify_webhook::verify(b"s3cret", Some(&good), b"{ }"));
}

/// With one delivery slot held by a hanging receiver and a queue of one,
/// further events are dropped and counted; every caller is still answered.
#[tokio::test]
async fn a_full_queue_drops_and_counts_events_without_touching_the_caller() {
    let receiver = Receiver::start().await;
    let upstream = Upstream::start().await;
    let text = format!(
        "webhook_queue_capacity = 1\nwebhook_concurrency = 1\nwebhook_allow_private_targets = true\n{}",
        config(&upstream.base_url)
    );
    let server = TestServer::start_with(Some(&text), &[]);
    let owner = login(&server).await;
    let urls = json!([receiver.url("/hang")]);
    assert_eq!(put_urls(&server, &owner, None, urls).await.status(), 200);
    let (_, key) = server.create_key(&[]);
    assert_eq!(chat(&server, &key, hello("ok")).await.status(), 200);
    receiver.wait_for("/hang", 1).await;
    for _ in 0..6 {
        assert_eq!(chat(&server, &key, hello("ok")).await.status(), 200);
    }
    let metrics = common::scrape_metrics(&server).await;
    let value = |name: &str| -> f64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
            .unwrap_or(0.0)
    };
    let fired = value("tollgate_events_total{event=\"request.completed\"}");
    let dropped = value("tollgate_webhook_events_dropped_total");
    let queued = value("tollgate_webhook_queue_depth");
    assert_eq!(fired, 7.0);
    // One delivering, at most one waiting for the slot, at most one queued.
    assert!(dropped >= 4.0, "dropped {dropped}\n{metrics}");
    assert!(queued <= 1.0);
    assert!(
        server.log().contains("webhook queue full; event dropped"),
        "the drop is logged"
    );
}

/// Routing on a real store: a tenant's event goes to that tenant's URLs
/// (signed with its secret) and the operator's (unsigned);
/// `sub_processor.changed` goes to every tenant, each signed with its own.
#[tokio::test]
async fn events_are_routed_to_their_tenant_and_registry_changes_to_every_tenant() {
    use tollgate::events::dispatch::targets;
    use tollgate::events::{Event, EventKind};
    use tollgate::tenants::{self, Tier};

    let dir = tempfile::tempdir().unwrap();
    let store = tollgate::store::Store::open(dir.path()).unwrap();
    let a = tenants::create(&store, "a", Tier::Paid).await.unwrap();
    let b = tenants::create(&store, "b", Tier::Paid).await.unwrap();
    let silent = tenants::create(&store, "silent", Tier::Free).await.unwrap();
    let a = tenants::set_webhook_urls(
        &store,
        &a.id,
        vec![
            "https://a.example.invalid/1".into(),
            "https://a.example.invalid/2".into(),
        ],
        false,
    )
    .await
    .unwrap();
    let b = tenants::set_webhook_urls(
        &store,
        &b.id,
        vec!["https://b.example.invalid/".into()],
        false,
    )
    .await
    .unwrap();
    let operator = vec![url::Url::parse("http://10.0.0.1/ops").unwrap()];
    let view = |targets: Vec<tollgate::events::dispatch::Target>| -> Vec<(String, Option<String>)> {
        targets
            .into_iter()
            .map(|t| (t.url.to_string(), t.secret))
            .collect()
    };

    let incident = Event::incident_created("inc_1", &a.id, "serious", "health", "manual", 0, 0);
    assert_eq!(incident.kind, EventKind::IncidentCreated);
    assert_eq!(incident.kind.as_str(), "incident.created");
    assert_eq!(
        view(targets(&store, &operator, &incident).unwrap()),
        [
            ("http://10.0.0.1/ops".to_owned(), None),
            (
                "https://a.example.invalid/1".to_owned(),
                Some(a.webhook_secret.clone())
            ),
            (
                "https://a.example.invalid/2".to_owned(),
                Some(a.webhook_secret.clone())
            ),
        ]
    );
    let registry = Event::sub_processor_changed("updated", "openai", "4", 0);
    let mut everyone = view(targets(&store, &[], &registry).unwrap());
    everyone.sort();
    assert_eq!(
        everyone,
        [
            (
                "https://a.example.invalid/1".to_owned(),
                Some(a.webhook_secret.clone())
            ),
            (
                "https://a.example.invalid/2".to_owned(),
                Some(a.webhook_secret.clone())
            ),
            (
                "https://b.example.invalid/".to_owned(),
                Some(b.webhook_secret.clone())
            ),
        ]
    );
    let quiet = Event::incident_created("inc_2", &silent.id, "serious", "health", "sampler", 0, 0);
    assert!(targets(&store, &[], &quiet).unwrap().is_empty());
    store.close();
}
