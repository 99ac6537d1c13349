//! Compliance end to end (DESIGN section 5): the request gates, the human
//! review queue, the hash-chained audit log (and `tollgate audit verify`
//! against a tampered file), the conversation log with its retention,
//! incidents, the sub-processor registry, consents, erasure, the permission
//! table of every compliance route and tenant isolation. Everything runs
//! against the real binary with upstreams and webhook receivers on loopback.

mod common;

use std::time::Duration;

use common::receiver::Receiver;
use common::upstream::{Upstream, catalogue};
use common::{TestServer, account, client, error_code, get_json, login};
use reqwest::{Method, Response};
use serde_json::{Value, json};

/// Classified high (Annex III 5(b), creditworthiness).
const LOAN: &str = "Score this loan applicant and decide: approve or reject.";
/// Classified prohibited (Article 5(1)(c), social scoring).
const SOCIAL: &str =
    "Build a social credit system and deny loans to people with a low social score.";
/// A purpose classified high (Annex III 4(a), recruitment).
const RECRUIT_PURPOSE: &str = "Recruitment: CV screening";
/// A purpose classified limited (Article 50(1), a customer-facing chatbot).
const CHATBOT_PURPOSE: &str = "customer support chatbot";
const DAY_MS: i64 = 86_400_000;

const ROLES: [&str; 7] = [
    "owner", "admin", "billing", "auditor", "reviewer", "user", "tester",
];

// ---- helpers ----

/// A server on a catalogue with the scripted upstream's `ok` model;
/// `top` is TOML placed before the tables (top-level keys).
async fn setup(top: &str) -> (Upstream, TestServer) {
    let upstream = Upstream::start().await;
    let config = format!("{top}\n{}", catalogue(&upstream.base_url, &[("ok", "ok")]));
    let server = TestServer::start_with(
        Some(&config),
        &[("TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")],
    );
    (upstream, server)
}

async fn call(
    server: &TestServer,
    token: Option<&str>,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Response {
    let mut request = client().request(method, server.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    request.send().await.unwrap()
}

/// A request with a raw (possibly malformed) JSON body.
async fn call_raw(
    server: &TestServer,
    token: &str,
    method: Method,
    path: &str,
    raw: &str,
) -> Response {
    client()
        .request(method, server.url(path))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(raw.to_owned())
        .send()
        .await
        .unwrap()
}

/// A call that must answer `status`; its JSON body.
async fn expect(
    server: &TestServer,
    token: &str,
    method: Method,
    path: &str,
    body: Option<&Value>,
    status: u16,
) -> Value {
    let response = call(server, Some(token), method.clone(), path, body).await;
    let got = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!(got, status, "{method} {path}: {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

async fn put_policy(server: &TestServer, token: &str, tenant: Option<&str>, body: Value) -> Value {
    let path = match tenant {
        Some(t) => format!("/api/v1/policies?tenant={t}"),
        None => "/api/v1/policies".to_owned(),
    };
    expect(server, token, Method::PUT, &path, Some(&body), 200).await
}

fn ask(content: &str) -> Value {
    json!({ "model": "ok", "messages": [{ "role": "user", "content": content }] })
}

fn with(mut body: Value, fields: Value) -> Value {
    for (k, v) in fields.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

async fn chat(server: &TestServer, key: &str, body: &Value) -> Response {
    common::chat_post(server, key, body).await
}

fn request_id(response: &Response) -> String {
    response.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned()
}

/// A served chat completion: (request id, body).
async fn served(server: &TestServer, key: &str, body: &Value) -> (String, Value) {
    let response = chat(server, key, body).await;
    let id = request_id(&response);
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!(status, 200, "{text}");
    (id, serde_json::from_str(&text).unwrap())
}

/// A held chat completion: the review id.
async fn held(server: &TestServer, key: &str, body: &Value) -> String {
    let response = chat(server, key, body).await;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!(status, 202, "{text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["object"], "review");
    assert_eq!(body["status"], "pending");
    body["id"].as_str().unwrap().to_owned()
}

async fn poll(server: &TestServer, key: &str, review: &str) -> Response {
    client()
        .get(server.url(&format!("/v1/reviews/{review}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
}

/// Every audit entry the token may read, newest first.
async fn audit(server: &TestServer, token: &str) -> Vec<Value> {
    get_json(server, token, "/api/v1/audit?limit=500").await["data"]
        .as_array()
        .unwrap()
        .clone()
}

fn ms(text: &Value) -> i64 {
    tollgate::base::time::parse_rfc3339(text.as_str().expect("a time")).expect("RFC 3339")
}

fn ids(list: &Value, field: &str) -> Vec<String> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[field].as_str().unwrap().to_owned())
        .collect()
}

/// A second tenant with credits and a key that may send high-risk requests.
fn second_tenant(server: &TestServer, name: &str) -> (String, String) {
    let created = server.cli_json(&["tenants", "create", "--name", name, "--tier", "paid"]);
    server.cli_json(&["tenants", "topup", name, "--credits", "10"]);
    let (_, key) = server.create_key(&["--tenant", name, "--allow-high-risk"]);
    (created["id"].as_str().unwrap().to_owned(), key)
}

async fn set_webhooks(server: &TestServer, owner: &str, tenant: Option<&str>, url: String) {
    let path = match tenant {
        Some(t) => format!("/api/v1/webhooks?tenant={t}"),
        None => "/api/v1/webhooks".to_owned(),
    };
    expect(
        server,
        owner,
        Method::PUT,
        &path,
        Some(&json!({ "urls": [url] })),
        200,
    )
    .await;
}

/// Polls `path` (bounded) until `found` holds for its JSON.
async fn eventually(
    server: &TestServer,
    token: &str,
    path: &str,
    found: impl Fn(&Value) -> bool,
) -> Value {
    for _ in 0..100 {
        let body = get_json(server, token, path).await;
        if found(&body) {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{path} never showed what was expected: {}",
        get_json(server, token, path).await
    );
}

// ---- gates ----

#[tokio::test]
async fn every_gate_refuses_with_its_status_and_code_and_is_audited() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;
    let (plain_id, plain) = server.create_key(&[]);
    let (high_id, high) = server.create_key(&["--allow-high-risk"]);

    // Prohibited: refused for every key, even one with allowHighRisk.
    for key in [&plain, &high] {
        let refused = chat(&server, key, &ask(SOCIAL)).await;
        assert_eq!(error_code(refused, 403).await, "prohibited_use");
    }
    // High-risk on a key without allowHighRisk.
    let refused = chat(&server, &plain, &ask(LOAN)).await;
    assert_eq!(error_code(refused, 403).await, "high_risk_not_allowed");
    // Minimal content passes on any key.
    let (_, answer) = served(&server, &plain, &ask("What is the capital of France?")).await;
    assert_eq!(answer["risk_classification"]["level"], "minimal");

    put_policy(
        &server,
        &owner,
        None,
        json!({ "requirePurpose": true, "requireConsent": true }),
    )
    .await;
    let loan = ask(LOAN);
    let refused = chat(&server, &high, &loan).await;
    assert_eq!(error_code(refused, 400).await, "purpose_required");
    let blank = with(loan.clone(), json!({ "purpose": "   " }));
    let refused = chat(&server, &high, &blank).await;
    assert_eq!(error_code(refused, 400).await, "purpose_required");
    let with_purpose = with(
        loan.clone(),
        json!({ "purpose": "Credit decision for a loan application" }),
    );
    let refused = chat(&server, &high, &with_purpose).await;
    assert_eq!(error_code(refused, 400).await, "consent_required");
    let unknown = with(
        with_purpose.clone(),
        json!({ "user_consent_id": "cns_does_not_exist", "end_user_id": "alice" }),
    );
    let refused = chat(&server, &high, &unknown).await;
    assert_eq!(error_code(refused, 400).await, "consent_invalid");

    let consent = expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/consents",
        Some(&json!({ "endUserId": "alice", "purpose": "credit assessment" })),
        201,
    )
    .await;
    assert_eq!(consent["status"], "active");
    let consent_id = consent["id"].as_str().unwrap().to_owned();
    // Another end user's consent.
    let other_user = with(
        with_purpose.clone(),
        json!({ "user_consent_id": consent_id, "end_user_id": "bob" }),
    );
    let refused = chat(&server, &high, &other_user).await;
    assert_eq!(error_code(refused, 400).await, "consent_invalid");
    // Another tenant's consent reads as unknown.
    second_tenant(&server, "beta");
    let foreign = expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/consents?tenant=beta",
        Some(&json!({ "endUserId": "alice", "purpose": "credit assessment" })),
        201,
    )
    .await;
    let foreign_ref = with(
        with_purpose.clone(),
        json!({ "user_consent_id": foreign["id"], "end_user_id": "alice" }),
    );
    let refused = chat(&server, &high, &foreign_ref).await;
    assert_eq!(error_code(refused, 400).await, "consent_invalid");

    // The valid consent passes every gate.
    let valid = with(
        with_purpose.clone(),
        json!({ "user_consent_id": consent_id, "end_user_id": "alice" }),
    );
    let (_, answer) = served(&server, &high, &valid).await;
    assert_eq!(answer["risk_classification"]["level"], "high");

    // Withdrawal keeps the record and makes the next request fail.
    let withdrawn = expect(
        &server,
        &owner,
        Method::DELETE,
        &format!("/api/v1/consents/{consent_id}"),
        None,
        200,
    )
    .await;
    assert_eq!(withdrawn["status"], "withdrawn");
    assert!(withdrawn["withdrawnAt"].is_string());
    let kept = get_json(&server, &owner, &format!("/api/v1/consents/{consent_id}")).await;
    assert_eq!(kept["status"], "withdrawn");
    let refused = chat(&server, &high, &valid).await;
    assert_eq!(error_code(refused, 400).await, "consent_invalid");

    // A refusal of an unknown key is counted and logged, not audited:
    // anyone may send one (docs/security.md, refused requests).
    let unknown_key = chat(&server, "kp_live_not_a_key", &ask("Hello")).await;
    assert_eq!(unknown_key.status(), 401);
    // Each refusal is audited as inference.refused with its code.
    let entries = audit(&server, &owner).await;
    let refusals: Vec<(String, String)> = entries
        .iter()
        .filter(|e| e["action"] == "inference.refused")
        .map(|e| {
            assert_eq!(e["target"], "/v1/chat/completions");
            (
                e["actor"].as_str().unwrap().to_owned(),
                e["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let key = |id: &str| format!("key:{id}");
    for expected in [
        (key(&plain_id), "prohibited_use"),
        (key(&high_id), "prohibited_use"),
        (key(&plain_id), "high_risk_not_allowed"),
        (key(&high_id), "purpose_required"),
        (key(&high_id), "consent_required"),
    ] {
        assert!(
            refusals
                .iter()
                .any(|(a, o)| a == &expected.0 && o == expected.1),
            "{expected:?} in {refusals:?}"
        );
    }
    assert!(
        !refusals.iter().any(|(a, _)| a == "key:unknown"),
        "{refusals:?}"
    );
    let invalid = refusals
        .iter()
        .filter(|(a, o)| a == &key(&high_id) && o == "consent_invalid")
        .count();
    assert_eq!(invalid, 4, "{refusals:?}");
    // The served requests are audited as inference.
    let served_entries: Vec<&Value> = entries
        .iter()
        .filter(|e| e["action"] == "inference")
        .collect();
    assert_eq!(served_entries.len(), 2);
    assert_eq!(served_entries[0]["details"]["riskLevel"], "high");
    assert_eq!(
        served_entries[0]["details"]["consentId"],
        consent_id.as_str()
    );
    assert_eq!(served_entries[1]["details"]["riskLevel"], "minimal");
}

#[tokio::test]
async fn a_purpose_raises_the_level_and_content_raises_it_above_a_purpose() {
    let (_upstream, server) = setup("").await;
    let (_, plain) = server.create_key(&[]);
    let (_, high) = server.create_key(&["--allow-high-risk"]);
    let hello = with(
        ask("Hello, please summarise our meeting."),
        json!({ "purpose": RECRUIT_PURPOSE }),
    );

    // Minimal content under a high-risk purpose is high.
    let refused = chat(&server, &plain, &hello).await;
    assert_eq!(error_code(refused, 403).await, "high_risk_not_allowed");
    let (_, answer) = served(&server, &high, &hello).await;
    let risk = &answer["risk_classification"];
    assert_eq!(risk["level"], "high", "{risk}");
    assert!(
        risk["triggered_rules"]
            .as_array()
            .unwrap()
            .contains(&json!("annex3_4a_recruitment")),
        "{risk}"
    );
    assert_eq!(risk["requires_human_review"], true);

    // A limited purpose alone is limited; high content raises it above.
    let chatbot = with(
        ask("Hello, how are you?"),
        json!({ "purpose": CHATBOT_PURPOSE }),
    );
    let (_, answer) = served(&server, &plain, &chatbot).await;
    assert_eq!(
        answer["risk_classification"]["level"], "limited",
        "{}",
        answer["risk_classification"]
    );
    let raised = with(ask(LOAN), json!({ "purpose": CHATBOT_PURPOSE }));
    let refused = chat(&server, &plain, &raised).await;
    assert_eq!(error_code(refused, 403).await, "high_risk_not_allowed");
    let (_, answer) = served(&server, &high, &raised).await;
    let risk = &answer["risk_classification"];
    assert_eq!(risk["level"], "high", "{risk}");
    let rules = risk["triggered_rules"].as_array().unwrap();
    assert!(
        rules.contains(&json!("annex3_5b_creditworthiness")),
        "{risk}"
    );
    assert!(rules.contains(&json!("art50_1_ai_interaction")), "{risk}");
}

// ---- reviews ----

#[tokio::test]
async fn a_held_response_is_released_after_approval_with_the_reviewers_edit() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;
    let reviewer = account(&server, "default", "reviewer@example.test", "reviewer").await;
    let (key_id, key) = server.create_key(&[]);
    let (_, other_key) = server.create_key(&[]);
    put_policy(&server, &owner, None, json!({ "reviewMode": "all" })).await;

    let review = held(&server, &key, &ask("Write a friendly greeting.")).await;
    // The caller polls with the same key; another key does not see it.
    let pending = poll(&server, &key, &review).await;
    assert_eq!(pending.status(), 202);
    let body: Value = pending.json().await.unwrap();
    assert_eq!(
        body,
        json!({ "id": review, "object": "review", "status": "pending" })
    );
    assert_eq!(
        error_code(poll(&server, &other_key, &review).await, 404).await,
        "not_found"
    );

    // The reviewer sees the request and the held answer.
    let queue = get_json(&server, &reviewer, "/api/v1/reviews?status=pending").await;
    assert_eq!(ids(&queue, "id"), std::slice::from_ref(&review));
    let item = get_json(&server, &reviewer, &format!("/api/v1/reviews/{review}")).await;
    assert_eq!(item["status"], "pending");
    assert_eq!(item["keyId"], key_id.as_str());
    assert_eq!(
        item["request"]["messages"][0]["content"],
        "Write a friendly greeting."
    );
    assert_eq!(
        item["completion"]["choices"][0]["message"]["content"],
        "hello from upstream"
    );

    let decided = expect(
        &server,
        &reviewer,
        Method::POST,
        &format!("/api/v1/reviews/{review}/approve"),
        Some(&json!({ "note": "NOTE-APPROVE: tone fixed", "content": "Good morning, dear customer!" })),
        200,
    )
    .await;
    assert_eq!(decided["status"], "approved");
    assert_eq!(decided["edited"], true);
    assert_eq!(decided["note"], "NOTE-APPROVE: tone fixed");
    assert!(
        decided["decidedBy"]
            .as_str()
            .unwrap()
            .contains("reviewer@example.test")
    );

    let released = poll(&server, &key, &review).await;
    assert_eq!(released.status(), 200);
    let completion: Value = released.json().await.unwrap();
    assert_eq!(
        completion["choices"][0]["message"]["content"],
        "Good morning, dear customer!"
    );
    assert_eq!(completion["review"]["status"], "approved");
    assert_eq!(completion["review"]["edited"], true);
    assert!(completion["billing"]["cost"].is_number(), "{completion}");

    // Deciding twice is a conflict.
    for verb in ["approve", "reject"] {
        let again = call(
            &server,
            Some(&reviewer),
            Method::POST,
            &format!("/api/v1/reviews/{review}/{verb}"),
            Some(&json!({})),
        )
        .await;
        assert_eq!(error_code(again, 409).await, "conflict");
    }

    // The decision is audited with the reviewer and the note.
    let entries = audit(&server, &owner).await;
    let approval = entries
        .iter()
        .find(|e| e["action"] == "POST /api/v1/reviews/{id}/approve" && e["outcome"] == "ok")
        .expect("the approval's audit entry");
    assert_eq!(
        approval["target"],
        format!("/api/v1/reviews/{review}/approve")
    );
    assert_eq!(approval["details"]["email"], "reviewer@example.test");
    assert_eq!(approval["details"]["role"], "reviewer");
    assert_eq!(
        approval["details"]["body"]["note"],
        "NOTE-APPROVE: tone fixed"
    );
    assert!(approval["actor"].as_str().unwrap().starts_with("account:"));
    // The held request is audited as served, naming its review.
    let inference = entries.iter().find(|e| e["action"] == "inference").unwrap();
    assert_eq!(inference["details"]["review"], review.as_str());
}

#[tokio::test]
async fn a_rejected_or_expired_review_answers_review_rejected() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;
    let reviewer = account(&server, "default", "reviewer@example.test", "reviewer").await;
    let (_, key) = server.create_key(&["--allow-high-risk"]);
    put_policy(&server, &owner, None, json!({ "reviewMode": "high_risk" })).await;

    // Only high-risk requests are held.
    served(&server, &key, &ask("Write a friendly greeting.")).await;
    let review = held(&server, &key, &ask(LOAN)).await;
    let item = get_json(&server, &reviewer, &format!("/api/v1/reviews/{review}")).await;
    assert_eq!(item["riskLevel"], "high");
    let rejected = expect(
        &server,
        &reviewer,
        Method::POST,
        &format!("/api/v1/reviews/{review}/reject"),
        Some(&json!({ "note": "automated credit decision" })),
        200,
    )
    .await;
    assert_eq!(rejected["status"], "rejected");
    let refused = poll(&server, &key, &review).await;
    assert_eq!(refused.status(), 403);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "review_rejected");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("automated credit decision"),
        "the message carries the note: {body}"
    );
    let again = call(
        &server,
        Some(&reviewer),
        Method::POST,
        &format!("/api/v1/reviews/{review}/approve"),
        None,
    )
    .await;
    assert_eq!(error_code(again, 409).await, "conflict");

    // Undecided past its time: expired, read as rejected, no longer decidable.
    put_policy(&server, &owner, None, json!({ "reviewTtlSeconds": 1 })).await;
    let expiring = held(&server, &key, &ask(LOAN)).await;
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    assert_eq!(
        error_code(poll(&server, &key, &expiring).await, 403).await,
        "review_rejected"
    );
    let expired = get_json(&server, &reviewer, "/api/v1/reviews?status=expired").await;
    assert_eq!(ids(&expired, "id"), std::slice::from_ref(&expiring));
    let late = call(
        &server,
        Some(&reviewer),
        Method::POST,
        &format!("/api/v1/reviews/{expiring}/approve"),
        None,
    )
    .await;
    assert_eq!(error_code(late, 409).await, "conflict");
    let rejected_list = get_json(&server, &reviewer, "/api/v1/reviews?status=rejected").await;
    assert_eq!(ids(&rejected_list, "id"), [review]);
}

#[tokio::test]
async fn a_streamed_request_under_review_gets_a_202_json_answer() {
    let (upstream, server) = setup("").await;
    let owner = login(&server).await;
    let (_, key) = server.create_key(&[]);
    put_policy(&server, &owner, None, json!({ "reviewMode": "all" })).await;
    let body = with(
        ask("Write a friendly greeting."),
        json!({ "stream": true, "stream_options": { "include_usage": true } }),
    );
    let response = chat(&server, &key, &body).await;
    assert_eq!(response.status(), 202);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["object"], "review");
    assert_eq!(answer["status"], "pending");
    // The upstream was asked for the whole answer.
    assert_eq!(upstream.recorded.bodies()[0]["stream"], false);
    let reviewer = account(&server, "default", "reviewer@example.test", "reviewer").await;
    let id = answer["id"].as_str().unwrap();
    expect(
        &server,
        &reviewer,
        Method::POST,
        &format!("/api/v1/reviews/{id}/approve"),
        None,
        200,
    )
    .await;
    let released = poll(&server, &key, id).await;
    assert_eq!(released.status(), 200);
    let completion: Value = released.json().await.unwrap();
    assert_eq!(
        completion["choices"][0]["message"]["content"],
        "hello from upstream"
    );
    assert_eq!(completion["review"]["edited"], false);
}

// ---- audit ----

/// Rewrites one audit entry in the stopped server's file.
fn forge_outcome(server: &TestServer, seq: u64) {
    use redb::ReadableTable;
    use tollgate::audit::Entry;
    use tollgate::store::compact;
    let db = redb::Database::open(server.data_dir().join("tollgate.redb")).unwrap();
    let txn = db.begin_write().unwrap();
    {
        let mut table = txn.open_table(tollgate::store::tables::AUDIT).unwrap();
        let key = seq.to_be_bytes();
        let mut entry: Entry = {
            let guard = table.get(key.as_slice()).unwrap().expect("the entry");
            compact::decode(&key, guard.value()).unwrap()
        };
        assert_eq!(entry.seq, seq);
        entry.outcome = "forged".into();
        table
            .insert(key.as_slice(), compact::encode(&entry).as_slice())
            .unwrap();
    }
    txn.commit().unwrap();
}

/// Runs `tollgate audit verify --json`: (exit code, stdout JSON if any, stderr).
fn verify_cli(server: &TestServer) -> (Option<i32>, Option<Value>, String) {
    let output = server.cli(&["audit", "verify", "--json"]);
    (
        output.status.code(),
        serde_json::from_slice(&output.stdout).ok(),
        common::stderr(&output),
    )
}

#[tokio::test]
async fn the_audit_chain_verifies_and_a_changed_entry_is_named_by_audit_verify() {
    let (_upstream, mut server) = setup("").await;
    let owner = login(&server).await;
    let (_, key) = server.create_key(&[]);
    served(
        &server,
        &key,
        &with(
            ask("Hello there"),
            json!({ "end_user_id": "alice@example.test" }),
        ),
    )
    .await;
    let refused = chat(&server, &key, &ask(SOCIAL)).await;
    assert_eq!(error_code(refused, 403).await, "prohibited_use");
    put_policy(&server, &owner, None, json!({ "retentionDays": 200 })).await;
    served(&server, &key, &ask("Hello again")).await;

    let entries = audit(&server, &owner).await;
    assert!(entries.len() >= 4, "{entries:?}");
    // Newest first, each linked to the one before.
    for pair in entries.windows(2) {
        assert_eq!(
            pair[0]["seq"].as_u64().unwrap(),
            pair[1]["seq"].as_u64().unwrap() + 1
        );
        assert_eq!(pair[0]["prevHash"], pair[1]["hash"]);
    }
    let first = entries.last().unwrap();
    assert_eq!(first["seq"], 1);
    assert_eq!(first["prevHash"], "0".repeat(64));
    // The served request names its subject by pseudonym only.
    let inference = entries
        .iter()
        .rev()
        .find(|e| e["action"] == "inference")
        .unwrap();
    let subject = inference["details"]["subject"].as_str().unwrap();
    assert!(subject.starts_with("sub_"), "{subject}");
    assert!(
        !Value::Array(entries.clone())
            .to_string()
            .contains("alice@example.test")
    );
    assert_eq!(inference["details"]["model"], "ok");
    assert!(inference["details"]["cost"].is_number());
    let policy_entry = entries
        .iter()
        .find(|e| e["action"] == "PUT /api/v1/policies")
        .unwrap();
    assert_eq!(policy_entry["details"]["body"]["retentionDays"], 200);

    let cli_act = entries
        .iter()
        .find(|e| e["action"] == "key.create")
        .expect("the CLI's key creation");
    assert_eq!(cli_act["actor"], "cli");
    // Paging backwards with `before`.
    let page = get_json(&server, &owner, "/api/v1/audit?limit=2").await;
    assert_eq!(page["data"].as_array().unwrap().len(), 2);
    let before = page["nextBefore"].as_u64().expect("a next page");
    assert_eq!(before, page["data"][1]["seq"].as_u64().unwrap());
    let next = get_json(
        &server,
        &owner,
        &format!("/api/v1/audit?limit=2&before={before}"),
    )
    .await;
    assert_eq!(next["data"][0]["seq"].as_u64().unwrap(), before - 1);
    let refusals = get_json(&server, &owner, "/api/v1/audit?action=inference.refused").await;
    assert_eq!(refusals["data"].as_array().unwrap().len(), 1);
    assert_eq!(refusals["data"][0]["outcome"], "prohibited_use");

    let verified = get_json(&server, &owner, "/api/v1/audit/verify").await;
    assert_eq!(verified["valid"], true, "{verified}");
    assert_eq!(verified["entries"], entries.len());
    assert!(verified["firstBroken"].is_null());
    let (code, out, err) = verify_cli(&server);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.unwrap()["valid"], true);

    // Someone with write access to the file changes one entry's outcome.
    let target = policy_entry["seq"].as_u64().unwrap();
    server.terminate();
    forge_outcome(&server, target);
    let (code, out, err) = verify_cli(&server);
    assert_eq!(code, Some(1), "stdout {out:?} stderr {err}");
    assert!(err.contains(&format!("entry {target}")), "{err}");
    let out = out.expect("the JSON result");
    assert_eq!(out["valid"], false);
    assert_eq!(out["firstBroken"]["seq"], target);

    // The server reports the same through the API.
    server.launch().unwrap();
    let owner = login(&server).await;
    let verified = get_json(&server, &owner, "/api/v1/audit/verify").await;
    assert_eq!(verified["valid"], false);
    assert_eq!(verified["firstBroken"]["seq"], target);
}

#[tokio::test]
async fn a_flipped_byte_in_the_database_file_breaks_the_chain() {
    let (_upstream, mut server) = setup("").await;
    let owner = login(&server).await;
    let (_, key) = server.create_key(&[]);
    served(&server, &key, &ask("Hello there")).await;
    expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/incidents",
        Some(&json!({ "severity": "serious", "category": "test", "description": "NOTE-XYZZY" })),
        201,
    )
    .await;
    served(&server, &key, &ask("Hello again")).await;
    let entries = audit(&server, &owner).await;
    let target = entries
        .iter()
        .find(|e| e["details"]["body"]["description"] == "NOTE-XYZZY")
        .expect("the filing's audit entry")["seq"]
        .as_u64()
        .unwrap();
    server.terminate();

    let path = server.data_dir().join("tollgate.redb");
    let mut bytes = std::fs::read(&path).unwrap();
    let needle = b"NOTE-XYZZY";
    let mut flipped = 0;
    for i in 0..=bytes.len() - needle.len() {
        if &bytes[i..i + needle.len()] == needle {
            bytes[i + 5] ^= 0x01; // X -> Y
            flipped += 1;
        }
    }
    assert!(flipped >= 1, "the note is in the file in clear");
    std::fs::write(&path, &bytes).unwrap();

    let (code, out, err) = verify_cli(&server);
    assert_ne!(code, Some(0), "a flipped byte must not verify: {out:?}");
    match out {
        Some(out) if out["firstBroken"].is_object() => {
            assert_eq!(out["firstBroken"]["seq"], target, "{out}");
            assert!(err.contains(&format!("entry {target}")), "{err}");
        }
        // The storage engine may refuse the damaged file itself.
        other => eprintln!(
            "audit verify failed without naming an entry ({flipped} occurrence(s) flipped): {other:?} {err}"
        ),
    }
}

// ---- conversations ----

#[tokio::test]
async fn the_conversation_log_filters_pages_and_keeps_high_risk_records_six_months() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;
    let auditor = account(&server, "default", "auditor@example.test", "auditor").await;
    let (key1_id, key1) = server.create_key(&["--allow-high-risk"]);
    let (key2_id, key2) = server.create_key(&[]);
    put_policy(
        &server,
        &owner,
        None,
        json!({ "retentionDays": 7, "highRiskRetentionDays": 190 }),
    )
    .await;

    let as_user = |user: &str, content: &str| with(ask(content), json!({ "end_user_id": user }));
    let (r1, _) = served(&server, &key1, &as_user("u1", "Hello one")).await;
    let (r2, _) = served(&server, &key1, &as_user("u1", "Hello two")).await;
    let (r3, _) = served(
        &server,
        &key1,
        &with(as_user("u2", LOAN), json!({ "purpose": "loan desk" })),
    )
    .await;
    let (r4, _) = served(&server, &key2, &as_user("u1", "Hello four")).await;

    let all = get_json(&server, &auditor, "/api/v1/conversations").await;
    assert_eq!(
        ids(&all, "requestId"),
        [r4.clone(), r3.clone(), r2.clone(), r1.clone()]
    );
    assert!(all["nextCursor"].is_null());
    let by_key = get_json(
        &server,
        &auditor,
        &format!("/api/v1/conversations?keyId={key2_id}"),
    )
    .await;
    assert_eq!(ids(&by_key, "requestId"), std::slice::from_ref(&r4));
    assert_eq!(by_key["data"][0]["keyId"], key2_id.as_str());
    let by_key1 = get_json(
        &server,
        &auditor,
        &format!("/api/v1/conversations?keyId={key1_id}"),
    )
    .await;
    assert_eq!(by_key1["data"].as_array().unwrap().len(), 3);
    let by_user = get_json(&server, &auditor, "/api/v1/conversations?endUserId=u1").await;
    assert_eq!(
        ids(&by_user, "requestId"),
        [r4.clone(), r2.clone(), r1.clone()]
    );
    let high = get_json(&server, &auditor, "/api/v1/conversations?level=high").await;
    assert_eq!(ids(&high, "requestId"), std::slice::from_ref(&r3));
    let record = &high["data"][0];
    assert_eq!(record["riskLevel"], "high");
    assert!(
        record["triggeredRules"]
            .as_array()
            .unwrap()
            .contains(&json!("annex3_5b_creditworthiness"))
    );
    assert_eq!(record["purpose"], "loan desk");
    assert_eq!(record["endUserId"], "u2");
    assert_eq!(record["model"], "ok");
    assert_eq!(record["erased"], false);
    assert_eq!(record["request"]["messages"][0]["content"], LOAN);
    assert_eq!(
        record["response"]["choices"][0]["message"]["content"],
        "hello from upstream"
    );
    let none = get_json(
        &server,
        &auditor,
        "/api/v1/conversations?from=2999-01-01T00:00:00Z",
    )
    .await;
    assert!(none["data"].as_array().unwrap().is_empty());
    let before_all = get_json(
        &server,
        &auditor,
        "/api/v1/conversations?to=2000-01-01T00:00:00Z",
    )
    .await;
    assert!(before_all["data"].as_array().unwrap().is_empty());

    // Pages of two: no record twice, none left out.
    let first = get_json(&server, &auditor, "/api/v1/conversations?limit=2").await;
    assert_eq!(ids(&first, "requestId"), [r4.clone(), r3.clone()]);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let second = get_json(
        &server,
        &auditor,
        &format!("/api/v1/conversations?limit=2&cursor={cursor}"),
    )
    .await;
    assert_eq!(ids(&second, "requestId"), [r2.clone(), r1.clone()]);
    assert!(second["nextCursor"].is_null(), "{second}");

    // Retention: high-risk records at least six months, others the policy's days.
    for record in all["data"].as_array().unwrap() {
        let kept = ms(&record["expiresAt"]) - ms(&record["at"]);
        if record["riskLevel"] == "high" {
            assert!(kept >= 183 * DAY_MS, "{record}");
            assert_eq!(kept, 190 * DAY_MS);
        } else {
            assert_eq!(kept, 7 * DAY_MS, "{record}");
        }
    }
    let one = get_json(&server, &auditor, &format!("/api/v1/conversations/{r1}")).await;
    assert_eq!(one["request"]["messages"][0]["content"], "Hello one");

    // Without logBodies nothing is written (the audit entry still is).
    put_policy(&server, &owner, None, json!({ "logBodies": false })).await;
    let (r5, _) = served(&server, &key1, &as_user("u1", "Hello five")).await;
    let after = get_json(&server, &auditor, "/api/v1/conversations").await;
    assert_eq!(after["data"].as_array().unwrap().len(), 4);
    let missing = call(
        &server,
        Some(&auditor),
        Method::GET,
        &format!("/api/v1/conversations/{r5}"),
        None,
    )
    .await;
    assert_eq!(error_code(missing, 404).await, "not_found");
    let entries = audit(&server, &auditor).await;
    assert!(
        entries
            .iter()
            .any(|e| e["action"] == "inference" && e["target"] == r5.as_str())
    );
}

#[tokio::test]
async fn high_risk_retention_stays_at_least_six_months_whatever_the_policy() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;
    let (_, key) = server.create_key(&["--allow-high-risk"]);
    // The shortest settings the API accepts.
    put_policy(
        &server,
        &owner,
        None,
        json!({ "retentionDays": 1, "highRiskRetentionDays": 183 }),
    )
    .await;
    let (minimal, _) = served(&server, &key, &ask("Hello")).await;
    let (high, _) = served(&server, &key, &ask(LOAN)).await;
    let record = get_json(&server, &owner, &format!("/api/v1/conversations/{high}")).await;
    assert!(
        ms(&record["expiresAt"]) - ms(&record["at"]) >= 183 * DAY_MS,
        "{record}"
    );
    let record = get_json(&server, &owner, &format!("/api/v1/conversations/{minimal}")).await;
    assert_eq!(
        ms(&record["expiresAt"]) - ms(&record["at"]),
        DAY_MS,
        "{record}"
    );
    // A stream's record keeps the streamed text.
    let response = chat(
        &server,
        &key,
        &with(ask("Hello stream"), json!({ "stream": true })),
    )
    .await;
    assert_eq!(response.status(), 200);
    let streamed = request_id(&response);
    response.text().await.unwrap();
    let record = eventually(&server, &owner, "/api/v1/conversations", |l| {
        l["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["requestId"] == streamed.as_str())
    })
    .await["data"][0]
        .clone();
    assert_eq!(record["requestId"], streamed.as_str());
    assert_eq!(record["request"]["messages"][0]["content"], "Hello stream");
    assert!(
        record["response"]
            .to_string()
            .contains("hello from upstream"),
        "{record}"
    );
}

// ---- incidents ----

/// An OpenAI-compatible upstream whose every answer is a prohibited text.
async fn prohibited_upstream() -> (String, tokio::task::JoinHandle<()>) {
    async fn answer() -> axum::Json<Value> {
        axum::Json(json!({
            "id": "chatcmpl-bad-1", "object": "chat.completion", "created": 1_700_000_000, "model": "x",
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": SOCIAL }, "finish_reason": "stop" }],
            "usage": { "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 },
        }))
    }
    let app = axum::Router::new().route("/v1/chat/completions", axum::routing::post(answer));
    let (addr, task) = common::serve(app).await;
    (format!("http://{addr}/v1"), task)
}

#[tokio::test]
async fn incidents_get_their_article_73_deadline_and_an_event() {
    let upstream = Upstream::start().await;
    let (bad_url, _bad) = prohibited_upstream().await;
    let config = format!(
        "incident_refusal_burst = 3\nincident_sample_share = 1.0\nincident_window_seconds = 600\n{}\
         [[providers]]\nid = \"bad\"\nkind = \"openai\"\nbase_url = \"{bad_url}\"\n\
         [[models]]\nid = \"says-bad\"\nprovider = \"bad\"\nupstream = \"x\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
         context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n",
        catalogue(&upstream.base_url, &[("ok", "ok")])
    );
    let server = TestServer::start_with(
        Some(&config),
        &[("TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")],
    );
    let receiver = Receiver::start().await;
    let owner = login(&server).await;
    let admin = account(&server, "default", "admin@example.test", "admin").await;
    let auditor = account(&server, "default", "auditor@example.test", "auditor").await;
    set_webhooks(&server, &owner, None, receiver.url("/hooks")).await;

    let mut filed = Vec::new();
    for (severity, days) in [("critical", 2), ("fatal", 10), ("serious", 15)] {
        let incident = expect(
            &server,
            &admin,
            Method::POST,
            "/api/v1/incidents",
            Some(&json!({ "severity": severity, "category": "harm", "description": format!("a {severity} one") })),
            201,
        )
        .await;
        assert_eq!(incident["severity"], severity);
        assert_eq!(incident["status"], "open");
        assert_eq!(incident["source"], "manual");
        assert_eq!(
            ms(&incident["reportDeadline"]) - ms(&incident["createdAt"]),
            days * DAY_MS,
            "{incident}"
        );
        filed.push(incident);
    }
    let deliveries = receiver.wait_for("/hooks", 3).await;
    for incident in &filed {
        let event = deliveries
            .iter()
            .map(|d| d.json())
            .find(|d| d["data"]["incidentId"] == incident["id"])
            .expect("an incident.created delivery per incident");
        assert_eq!(event["event"], "incident.created");
        let data = &event["data"];
        assert_eq!(data["tenantId"], incident["tenantId"]);
        assert_eq!(data["severity"], incident["severity"]);
        assert_eq!(data["category"], "harm");
        assert_eq!(data["source"], "manual");
        assert_eq!(data["reportDeadline"], incident["reportDeadline"]);
        assert_eq!(data["createdAt"], incident["createdAt"]);
    }

    let id = filed[0]["id"].as_str().unwrap();
    let listed = get_json(&server, &auditor, "/api/v1/incidents").await;
    assert_eq!(listed["data"].as_array().unwrap().len(), 3);
    let reported = expect(
        &server,
        &admin,
        Method::PATCH,
        &format!("/api/v1/incidents/{id}"),
        Some(&json!({ "status": "reported" })),
        200,
    )
    .await;
    assert_eq!(reported["status"], "reported");
    assert!(reported["reportedAt"].is_string());
    let closed = expect(
        &server,
        &admin,
        Method::PATCH,
        &format!("/api/v1/incidents/{id}"),
        Some(&json!({ "status": "closed" })),
        200,
    )
    .await;
    assert!(closed["closedAt"].is_string());
    let shown = get_json(&server, &auditor, &format!("/api/v1/incidents/{id}")).await;
    assert_eq!(shown["status"], "closed");
    let open = get_json(&server, &auditor, "/api/v1/incidents?status=open").await;
    assert_eq!(open["data"].as_array().unwrap().len(), 2);
    let closed_list = get_json(&server, &auditor, "/api/v1/incidents?status=closed").await;
    assert_eq!(ids(&closed_list, "id"), [id.to_owned()]);
    assert_eq!(shown["reportedAt"], reported["reportedAt"]);

    // A burst of prohibited requests is an incident of its own.
    let (_, key) = server.create_key(&[]);
    let mut refused_ids = Vec::new();
    for _ in 0..3 {
        let refused = chat(&server, &key, &ask(SOCIAL)).await;
        refused_ids.push(request_id(&refused));
        assert_eq!(error_code(refused, 403).await, "prohibited_use");
    }
    // A served answer that reads as prohibited is one too.
    let (bad_request, _) = served(&server, &key, &json!({ "model": "says-bad", "messages": [{ "role": "user", "content": "Tell me a story." }] })).await;
    // Ordinary answers are sampled and are not.
    served(&server, &key, &ask("Hello")).await;

    let listed = eventually(&server, &auditor, "/api/v1/incidents", |l| {
        l["data"].as_array().unwrap().len() >= 5
    })
    .await;
    let sampled: Vec<&Value> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["source"] == "sampler")
        .collect();
    assert_eq!(sampled.len(), 2, "{listed}");
    let burst = sampled
        .iter()
        .find(|i| i["category"] == "refusal_burst")
        .expect("a refusal_burst incident");
    let mut linked: Vec<String> = burst["requestIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    linked.sort();
    refused_ids.sort();
    assert_eq!(linked, refused_ids);
    let output = sampled
        .iter()
        .find(|i| i["category"] == "prohibited_output")
        .expect("a prohibited_output incident");
    assert_eq!(output["requestIds"], json!([bad_request]));
    let mut categories: Vec<String> = Vec::new();
    for _ in 0..100 {
        categories = receiver
            .at("/hooks")
            .iter()
            .map(|d| d.json())
            .filter(|e| e["event"] == "incident.created")
            .map(|e| e["data"]["category"].as_str().unwrap().to_owned())
            .collect();
        if categories.len() >= 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(categories.len(), 5, "{categories:?}");
    assert!(
        categories.contains(&"refusal_burst".to_owned()),
        "{categories:?}"
    );
    assert!(
        categories.contains(&"prohibited_output".to_owned()),
        "{categories:?}"
    );
    // The sampler's filings are audited as the system's.
    let entries = audit(&server, &owner).await;
    assert_eq!(
        entries
            .iter()
            .filter(|e| e["action"] == "incident.file" && e["actor"] == "system")
            .count(),
        2
    );
    // A fourth refusal in the same window does not file another.
    let refused = chat(&server, &key, &ask(SOCIAL)).await;
    assert_eq!(error_code(refused, 403).await, "prohibited_use");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        get_json(&server, &auditor, "/api/v1/incidents").await["data"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
}

// ---- registry ----

#[tokio::test]
async fn registry_changes_reach_every_tenant_and_bump_the_version() {
    let receiver = Receiver::start().await;
    let upstream = Upstream::start().await;
    let operator = receiver.url("/operator");
    let server = TestServer::start_with(
        Some(&catalogue(&upstream.base_url, &[("ok", "ok")])),
        &[
            ("TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
            ("WEBHOOK_URLS", &operator),
        ],
    );
    let owner = login(&server).await;
    second_tenant(&server, "beta");
    let beta_user = account(&server, "beta", "user@beta.test", "user").await;
    set_webhooks(&server, &owner, None, receiver.url("/default")).await;
    set_webhooks(&server, &owner, Some("beta"), receiver.url("/beta")).await;

    // Any signed-in account reads it; the configured provider is listed.
    let registry = get_json(&server, &beta_user, "/api/v1/sub-processors").await;
    assert_eq!(registry["version"], "1");
    let entries = registry["subProcessors"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["name"], "up");
    assert_eq!(entries[0]["source"], "configured");

    let created = expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/sub-processors",
        Some(&json!({ "name": "acme-ai", "legalName": "Acme AI GmbH", "purpose": "inference", "location": "DE",
                      "dataCategories": ["prompts"], "dpaUrl": "https://acme.example/dpa" })),
        201,
    )
    .await;
    assert_eq!(created["registryVersion"], "2");
    assert_eq!(created["legalName"], "Acme AI GmbH");
    assert_eq!(created["source"], "manual");
    let duplicate = call(
        &server,
        Some(&owner),
        Method::POST,
        "/api/v1/sub-processors",
        Some(&json!({ "name": "acme-ai" })),
    )
    .await;
    assert_eq!(error_code(duplicate, 409).await, "conflict");
    let updated = expect(
        &server,
        &owner,
        Method::PUT,
        "/api/v1/sub-processors/acme-ai",
        Some(&json!({ "location": "FR" })),
        200,
    )
    .await;
    assert_eq!(updated["registryVersion"], "3");
    assert_eq!(updated["location"], "FR");
    assert_eq!(updated["legalName"], "Acme AI GmbH");
    let deleted = expect(
        &server,
        &owner,
        Method::DELETE,
        "/api/v1/sub-processors/acme-ai",
        None,
        200,
    )
    .await;
    assert_eq!(deleted["registryVersion"], "4");
    assert_eq!(deleted["deleted"], true);
    let registry = get_json(&server, &beta_user, "/api/v1/sub-processors").await;
    assert_eq!(registry["version"], "4");
    assert_eq!(registry["subProcessors"].as_array().unwrap().len(), 1);

    for path in ["/default", "/beta", "/operator"] {
        let deliveries = receiver.wait_for(path, 3).await;
        let mut seen: Vec<(String, String, String)> = deliveries
            .iter()
            .map(|d| {
                let e = d.json();
                assert_eq!(e["event"], "sub_processor.changed");
                assert!(e["data"]["changed_at"].is_string());
                (
                    e["data"]["version"].as_str().unwrap().to_owned(),
                    e["data"]["action"].as_str().unwrap().to_owned(),
                    e["data"]["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        seen.sort();
        let expected: Vec<(String, String, String)> =
            [("2", "created"), ("3", "updated"), ("4", "deleted")]
                .iter()
                .map(|(v, a)| (v.to_string(), a.to_string(), "acme-ai".to_owned()))
                .collect();
        assert_eq!(seen, expected, "{path}");
    }
    // A refused change fires nothing and bumps nothing.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(receiver.at("/default").len(), 3);
    assert_eq!(receiver.at("/beta").len(), 3);
    assert_eq!(receiver.at("/operator").len(), 3);
}

#[tokio::test]
async fn every_registry_change_keeps_a_revision_that_every_role_reads_newest_first() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;
    let admin = account(&server, "default", "admin@example.test", "admin").await;
    second_tenant(&server, "beta");
    let beta_billing = account(&server, "beta", "billing@beta.test", "billing").await;
    // The configured provider was proposed at first start, by the system.
    let start = get_json(&server, &beta_billing, "/api/v1/sub-processors/up/history").await;
    assert!(start["historySince"].is_string(), "{start}");
    assert_eq!(start["data"].as_array().unwrap().len(), 1, "{start}");
    assert_eq!(start["data"][0]["change"], "created");
    assert_eq!(start["data"][0]["version"], "1");
    assert_eq!(start["data"][0]["actor"], "system");
    assert_eq!(start["data"][0]["email"], Value::Null);

    expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/sub-processors",
        Some(&json!({ "name": "acme-ai", "legalName": "Acme AI GmbH", "location": "DE" })),
        201,
    )
    .await;
    expect(
        &server,
        &admin,
        Method::PUT,
        "/api/v1/sub-processors/acme-ai",
        Some(&json!({ "location": "FR" })),
        200,
    )
    .await;
    // A refused change keeps nothing.
    let refused = call(
        &server,
        Some(&admin),
        Method::PUT,
        "/api/v1/sub-processors/acme-ai",
        Some(&json!({ "dpaUrl": "ftp://nope" })),
    )
    .await;
    assert_eq!(error_code(refused, 400).await, "invalid_request");
    expect(
        &server,
        &owner,
        Method::DELETE,
        "/api/v1/sub-processors/acme-ai",
        None,
        200,
    )
    .await;
    let me = get_json(&server, &owner, "/api/v1/me").await;
    let admin_me = get_json(&server, &admin, "/api/v1/me").await;
    let owner_actor = format!("account:{}", me["id"].as_str().unwrap());
    let admin_actor = format!("account:{}", admin_me["id"].as_str().unwrap());

    let mut tokens = vec![("owner", owner.clone())];
    for role in &ROLES[1..] {
        tokens.push((
            role,
            account(&server, "default", &format!("{role}@reader.test"), role).await,
        ));
    }
    tokens.push(("beta billing", beta_billing.clone()));
    for (role, token) in &tokens {
        // A deleted entry's history stays readable.
        let history = get_json(&server, token, "/api/v1/sub-processors/acme-ai/history").await;
        let changes: Vec<(&str, &str, &str, &str)> = history["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["version"].as_str().unwrap(),
                    r["change"].as_str().unwrap(),
                    r["actor"].as_str().unwrap(),
                    r["entry"]["location"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            changes,
            vec![
                ("4", "deleted", owner_actor.as_str(), "FR"),
                ("3", "updated", admin_actor.as_str(), "FR"),
                ("2", "created", owner_actor.as_str(), "DE"),
            ],
            "as {role}"
        );
        assert_eq!(history["data"][1]["email"], "admin@example.test");
        assert_eq!(history["data"][2]["entry"]["legalName"], "Acme AI GmbH");
        assert_eq!(history["data"][2]["entry"]["version"], "2");
        // The registry-wide history: every entry's changes, newest first.
        let all = get_json(&server, token, "/api/v1/sub-processor-history").await;
        let versions: Vec<(&str, &str)> = all["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["version"].as_str().unwrap(), r["name"].as_str().unwrap()))
            .collect();
        assert_eq!(
            versions,
            vec![
                ("4", "acme-ai"),
                ("3", "acme-ai"),
                ("2", "acme-ai"),
                ("1", "up")
            ],
            "as {role}"
        );
        assert_eq!(all["more"], false);
    }
    let named = get_json(
        &server,
        &beta_billing,
        "/api/v1/sub-processor-history?name=up",
    )
    .await;
    assert_eq!(named["data"].as_array().unwrap().len(), 1);
    let page = get_json(
        &server,
        &beta_billing,
        "/api/v1/sub-processor-history?limit=2",
    )
    .await;
    assert_eq!(page["data"].as_array().unwrap().len(), 2);
    assert_eq!(page["more"], true);
    assert_eq!(page["data"][0]["version"], "4");

    // A name the registry never had: 404 in the documented shape.
    for path in [
        "/api/v1/sub-processors/never-listed/history",
        "/api/v1/sub-processor-history?name=never-listed",
    ] {
        let unknown = call(&server, Some(&beta_billing), Method::GET, path, None).await;
        assert_eq!(error_code(unknown, 404).await, "not_found", "{path}");
    }
    let bad_limit = call(
        &server,
        Some(&beta_billing),
        Method::GET,
        "/api/v1/sub-processor-history?limit=0",
        None,
    )
    .await;
    assert_eq!(error_code(bad_limit, 400).await, "invalid_request");
    let anonymous = call(
        &server,
        None,
        Method::GET,
        "/api/v1/sub-processors/up/history",
        None,
    )
    .await;
    assert_eq!(anonymous.status(), 401);
}

#[tokio::test]
async fn enforce_registry_routes_only_to_registered_providers() {
    let (upstream, server) = setup("").await;
    let owner = login(&server).await;
    let (_, key) = server.create_key(&[]);
    put_policy(&server, &owner, None, json!({ "enforceRegistry": true })).await;
    served(&server, &key, &ask("Hello")).await;
    expect(
        &server,
        &owner,
        Method::DELETE,
        "/api/v1/sub-processors/up",
        None,
        200,
    )
    .await;
    let refused = chat(&server, &key, &ask("Hello")).await;
    let status = refused.status().as_u16();
    let body: Value = refused.json().await.unwrap();
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["error"]["code"], "all_providers_failed");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not_in_registry"),
        "{body}"
    );
    assert_eq!(
        upstream.recorded.bodies().len(),
        1,
        "nothing was sent to the unregistered provider"
    );
    // A tenant without the policy still routes there.
    let (_, beta_key) = second_tenant(&server, "beta");
    served(&server, &beta_key, &ask("Hello")).await;
    // Registered again, the tenant's requests go through.
    expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/sub-processors",
        Some(&json!({ "name": "up" })),
        201,
    )
    .await;
    served(&server, &key, &ask("Hello")).await;
}

// ---- erasure ----

#[tokio::test]
async fn an_export_alone_answers_the_subjects_data_and_erases_nothing() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;
    let auditor = account(&server, "default", "auditor@example.test", "auditor").await;
    let (_, key) = server.create_key(&[]);
    let carol = "carol@example.test";
    let consent = expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/consents",
        Some(&json!({ "endUserId": carol, "purpose": "support" })),
        201,
    )
    .await;
    let (asked, _) = served(
        &server,
        &key,
        &with(ask("Carol asks"), json!({ "end_user_id": carol })),
    )
    .await;
    served(
        &server,
        &key,
        &with(ask("Dave asks"), json!({ "end_user_id": "dave" })),
    )
    .await;

    let export = expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/erasure/export",
        Some(&json!({ "endUserId": carol })),
        200,
    )
    .await;
    assert_eq!(export["endUserId"], carol);
    assert!(export["pseudonym"].as_str().unwrap().starts_with("sub_"));
    let conversations = export["conversations"].as_array().unwrap();
    assert_eq!(conversations.len(), 1, "{export}");
    assert_eq!(
        conversations[0]["request"]["messages"][0]["content"],
        "Carol asks"
    );
    assert_eq!(
        ids(&json!({ "data": export["consents"] }), "id"),
        [consent["id"].as_str().unwrap().to_owned()]
    );
    assert_eq!(export["usage"].as_array().unwrap().len(), 1);

    // Nothing was erased: the record keeps its body, the consent stays.
    let one = get_json(&server, &auditor, &format!("/api/v1/conversations/{asked}")).await;
    assert_eq!(one["erased"], false);
    assert_eq!(one["request"]["messages"][0]["content"], "Carol asks");
    let consents = get_json(
        &server,
        &owner,
        &format!("/api/v1/consents?endUserId={carol}"),
    )
    .await;
    assert_eq!(consents["data"].as_array().unwrap().len(), 1);
    // The export is in the audit log, without the subject's id.
    let entries = audit(&server, &auditor).await;
    assert!(
        entries
            .iter()
            .any(|e| e["action"] == "POST /api/v1/erasure/export"),
        "the export's entry"
    );
    assert!(
        !Value::Array(entries).to_string().contains(carol),
        "the audit log never names the subject"
    );
    // An empty id is refused at the field.
    let refused = call(
        &server,
        Some(&owner),
        Method::POST,
        "/api/v1/erasure/export",
        Some(&json!({ "endUserId": " " })),
    )
    .await;
    assert_eq!(refused.status(), 400);
}

#[tokio::test]
async fn erasure_exports_then_erases_exactly_that_subjects_data() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;
    let auditor = account(&server, "default", "auditor@example.test", "auditor").await;
    let reviewer = account(&server, "default", "reviewer@example.test", "reviewer").await;
    let (_, key) = server.create_key(&[]);
    let alice = "alice@example.test";
    let alice_consent = expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/consents",
        Some(&json!({ "endUserId": alice, "purpose": "support" })),
        201,
    )
    .await;
    let bob_consent = expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/consents",
        Some(&json!({ "endUserId": "bob", "purpose": "support" })),
        201,
    )
    .await;
    let as_user = |user: &str, content: &str| with(ask(content), json!({ "end_user_id": user }));
    let (a1, _) = served(&server, &key, &as_user(alice, "Alice asks one")).await;
    let (b1, _) = served(&server, &key, &as_user("bob", "Bob asks")).await;
    put_policy(&server, &owner, None, json!({ "reviewMode": "all" })).await;
    let review = held(&server, &key, &as_user(alice, "Alice asks two")).await;

    let report = expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/erasure",
        Some(&json!({ "endUserId": alice })),
        200,
    )
    .await;
    let export = &report["export"];
    let pseudonym = export["pseudonym"].as_str().unwrap().to_owned();
    assert!(pseudonym.starts_with("sub_"));
    let exported: Vec<&str> = export["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["request"]["messages"][0]["content"].as_str().unwrap())
        .collect();
    assert_eq!(exported.len(), 2, "{export}");
    assert!(
        exported.contains(&"Alice asks one") && exported.contains(&"Alice asks two"),
        "{exported:?}"
    );
    assert_eq!(export["consents"].as_array().unwrap().len(), 1);
    assert_eq!(export["consents"][0]["id"], alice_consent["id"]);
    assert_eq!(export["reviews"].as_array().unwrap().len(), 1);
    assert_eq!(export["reviews"][0]["id"], review.as_str());
    assert_eq!(export["usage"].as_array().unwrap().len(), 2);
    assert_eq!(
        report["erased"],
        json!({ "conversations": 2, "consents": 1, "reviews": 1, "responses": 0 })
    );

    // Alice's records keep their metadata under the pseudonym, without bodies.
    assert!(
        get_json(
            &server,
            &auditor,
            &format!("/api/v1/conversations?endUserId={alice}")
        )
        .await["data"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let erased = get_json(
        &server,
        &auditor,
        &format!("/api/v1/conversations?endUserId={pseudonym}"),
    )
    .await;
    assert_eq!(erased["data"].as_array().unwrap().len(), 2);
    for record in erased["data"].as_array().unwrap() {
        assert_eq!(record["erased"], true);
        assert!(
            record["request"].is_null() && record["response"].is_null(),
            "{record}"
        );
    }
    let one = get_json(&server, &auditor, &format!("/api/v1/conversations/{a1}")).await;
    assert_eq!(one["erased"], true);
    assert_eq!(one["endUserId"], pseudonym.as_str());
    // Bob's are untouched.
    let bob = get_json(&server, &auditor, &format!("/api/v1/conversations/{b1}")).await;
    assert_eq!(bob["erased"], false);
    assert_eq!(bob["endUserId"], "bob");
    assert_eq!(bob["request"]["messages"][0]["content"], "Bob asks");
    let consents = get_json(&server, &owner, "/api/v1/consents").await;
    assert_eq!(
        ids(&consents, "id"),
        [bob_consent["id"].as_str().unwrap().to_owned()]
    );
    let item = get_json(&server, &reviewer, &format!("/api/v1/reviews/{review}")).await;
    assert!(!item.to_string().contains("Alice asks two"), "{item}");

    // The chain still verifies; the erasure is audited, by pseudonym only.
    let verified = get_json(&server, &auditor, "/api/v1/audit/verify").await;
    assert_eq!(verified["valid"], true, "{verified}");
    let entries = audit(&server, &auditor).await;
    let erasure = entries
        .iter()
        .find(|e| e["action"] == "subject.erase")
        .expect("the erasure's entry");
    assert_eq!(erasure["target"], pseudonym.as_str());
    assert!(
        !Value::Array(entries.clone()).to_string().contains(alice),
        "the audit log never names the subject"
    );
}

// ---- permissions and isolation ----

/// Every compliance route with the roles allowed on it.
fn route_table() -> Vec<(Method, &'static str, Option<Value>, &'static [&'static str])> {
    const POLICIES: &[&str] = &["owner", "admin"];
    const AUDIT: &[&str] = &["owner", "auditor"];
    const REVIEWS: &[&str] = &["owner", "reviewer"];
    const INCIDENTS_VIEW: &[&str] = &["owner", "admin", "auditor"];
    const INCIDENTS: &[&str] = &["owner", "admin"];
    const CONSENTS: &[&str] = &["owner", "admin"];
    const OWNER: &[&str] = &["owner"];
    // The operator tenant's owners and admins (every account here is of
    // the operator tenant; another tenant's: tests/security_access.rs).
    const REGISTRY: &[&str] = &["owner", "admin"];
    const ANY: &[&str] = &ROLES;
    // Write bodies are invalid (or ids unknown) so an allowed role changes
    // nothing: it gets 400 or 404, a refused one 403 first.
    let empty = Some(json!({}));
    vec![
        (Method::GET, "/api/v1/policies", None, POLICIES),
        (
            Method::PUT,
            "/api/v1/policies",
            Some(json!({ "reviewMode": "bogus" })),
            POLICIES,
        ),
        (Method::GET, "/api/v1/audit", None, AUDIT),
        (Method::GET, "/api/v1/audit/verify", None, AUDIT),
        (Method::GET, "/api/v1/conversations", None, AUDIT),
        (Method::GET, "/api/v1/conversations/nope", None, AUDIT),
        (Method::GET, "/api/v1/reviews", None, REVIEWS),
        (Method::GET, "/api/v1/reviews/nope", None, REVIEWS),
        (
            Method::POST,
            "/api/v1/reviews/nope/approve",
            empty.clone(),
            REVIEWS,
        ),
        (
            Method::POST,
            "/api/v1/reviews/nope/reject",
            empty.clone(),
            REVIEWS,
        ),
        (Method::GET, "/api/v1/incidents", None, INCIDENTS_VIEW),
        (Method::GET, "/api/v1/incidents/nope", None, INCIDENTS_VIEW),
        (Method::POST, "/api/v1/incidents", empty.clone(), INCIDENTS),
        (
            Method::PATCH,
            "/api/v1/incidents/nope",
            Some(json!({ "status": "closed" })),
            INCIDENTS,
        ),
        (Method::GET, "/api/v1/sub-processors", None, ANY),
        (
            Method::POST,
            "/api/v1/sub-processors",
            empty.clone(),
            REGISTRY,
        ),
        (
            Method::PUT,
            "/api/v1/sub-processors/nope",
            empty.clone(),
            REGISTRY,
        ),
        (
            Method::DELETE,
            "/api/v1/sub-processors/nope",
            None,
            REGISTRY,
        ),
        (Method::GET, "/api/v1/sub-processors/up/history", None, ANY),
        (Method::GET, "/api/v1/sub-processor-history", None, ANY),
        (Method::GET, "/api/v1/consents", None, CONSENTS),
        (Method::POST, "/api/v1/consents", empty.clone(), CONSENTS),
        (Method::GET, "/api/v1/consents/nope", None, CONSENTS),
        (Method::DELETE, "/api/v1/consents/nope", None, CONSENTS),
        (Method::POST, "/api/v1/erasure", empty.clone(), OWNER),
        (Method::POST, "/api/v1/erasure/export", empty.clone(), OWNER),
    ]
}

#[tokio::test]
async fn a_role_without_the_permission_gets_forbidden_on_every_compliance_route() {
    let (_upstream, server) = setup("").await;
    let mut tokens = vec![("owner", login(&server).await)];
    for role in &ROLES[1..] {
        tokens.push((
            role,
            account(&server, "default", &format!("{role}@example.test"), role).await,
        ));
    }
    let mut failures = Vec::new();
    for (method, path, body, allowed) in route_table() {
        let anonymous = call(&server, None, method.clone(), path, body.as_ref()).await;
        if anonymous.status() != 401 {
            failures.push(format!(
                "{method} {path} without a token: {}",
                anonymous.status()
            ));
        }
        for (role, token) in &tokens {
            let response = call(&server, Some(token), method.clone(), path, body.as_ref()).await;
            let status = response.status().as_u16();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            let code = body["error"]["code"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let ok = if allowed.contains(role) {
                status != 401 && status != 403 && status < 500
            } else {
                status == 403 && code == "forbidden" && body["error"]["message"].is_string()
            };
            if !ok {
                failures.push(format!("{method} {path} as {role}: {status} {code}"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test]
async fn another_tenant_cannot_read_or_act_on_a_tenants_records() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;
    let (_, key) = server.create_key(&[]);
    let (beta_id, beta_key) = second_tenant(&server, "beta");
    // Tenant A (default): a conversation, a held review, a consent, an incident.
    put_policy(&server, &owner, None, json!({ "reviewMode": "all" })).await;
    let review = held(&server, &key, &ask("Hello from tenant A")).await;
    let conversation = get_json(&server, &owner, "/api/v1/conversations?tenant=default").await["data"][0]["requestId"]
        .as_str()
        .unwrap()
        .to_owned();
    let consent = expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/consents",
        Some(&json!({ "endUserId": "alice", "purpose": "support" })),
        201,
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let incident = expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/incidents",
        Some(&json!({ "severity": "serious", "category": "harm" })),
        201,
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Tenant B has records of its own.
    served(&server, &beta_key, &ask("Hello from tenant B")).await;

    let auditor = account(&server, "beta", "auditor@beta.test", "auditor").await;
    let reviewer = account(&server, "beta", "reviewer@beta.test", "reviewer").await;
    let admin = account(&server, "beta", "admin@beta.test", "admin").await;

    let listed = get_json(&server, &auditor, "/api/v1/conversations").await;
    assert_eq!(listed["data"].as_array().unwrap().len(), 1);
    assert_eq!(
        listed["data"][0]["request"]["messages"][0]["content"],
        "Hello from tenant B"
    );
    let not_found = |r: Response| error_code(r, 404);
    assert_eq!(
        not_found(
            call(
                &server,
                Some(&auditor),
                Method::GET,
                &format!("/api/v1/conversations/{conversation}"),
                None
            )
            .await
        )
        .await,
        "not_found"
    );
    let cross = call(
        &server,
        Some(&auditor),
        Method::GET,
        "/api/v1/conversations?tenant=default",
        None,
    )
    .await;
    assert_eq!(error_code(cross, 403).await, "forbidden");
    let entries = audit(&server, &auditor).await;
    assert!(!entries.is_empty());
    for entry in entries {
        let tenant = entry["tenantId"].as_str().unwrap_or("");
        assert!(tenant.is_empty() || tenant == beta_id, "{entry}");
    }
    let incidents = get_json(&server, &auditor, "/api/v1/incidents").await;
    assert!(incidents["data"].as_array().unwrap().is_empty());

    for (token, path) in [
        (&reviewer, "/api/v1/reviews"),
        (&admin, "/api/v1/consents"),
        (&admin, "/api/v1/incidents"),
    ] {
        let list = get_json(&server, token, path).await;
        assert!(
            list["data"].as_array().unwrap().is_empty(),
            "{path}: {list}"
        );
    }
    let closing = json!({ "status": "closed" });
    for (token, method, path, body) in [
        (
            &reviewer,
            Method::GET,
            format!("/api/v1/reviews/{review}"),
            None,
        ),
        (
            &reviewer,
            Method::POST,
            format!("/api/v1/reviews/{review}/approve"),
            None,
        ),
        (
            &admin,
            Method::GET,
            format!("/api/v1/consents/{consent}"),
            None,
        ),
        (
            &admin,
            Method::DELETE,
            format!("/api/v1/consents/{consent}"),
            None,
        ),
        (
            &admin,
            Method::GET,
            format!("/api/v1/incidents/{incident}"),
            None,
        ),
        (
            &admin,
            Method::PATCH,
            format!("/api/v1/incidents/{incident}"),
            Some(&closing),
        ),
    ] {
        let response = call(&server, Some(token), method.clone(), &path, body).await;
        assert_eq!(not_found(response).await, "not_found", "{method} {path}");
    }
    assert_eq!(
        not_found(poll(&server, &beta_key, &review).await).await,
        "not_found"
    );

    // Nothing of tenant A changed.
    assert_eq!(
        get_json(&server, &owner, &format!("/api/v1/reviews/{review}")).await["status"],
        "pending"
    );
    assert_eq!(
        get_json(&server, &owner, &format!("/api/v1/consents/{consent}")).await["status"],
        "active"
    );
    assert_eq!(
        get_json(&server, &owner, &format!("/api/v1/incidents/{incident}")).await["status"],
        "open"
    );
}

// ---- bad inputs ----

async fn refused_invalid(server: &TestServer, token: &str, method: Method, path: &str, raw: &str) {
    let response = call_raw(server, token, method.clone(), path, raw).await;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!(status, 400, "{method} {path} {raw}: {text}");
    let body: Value = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("{method} {path} {raw}: not JSON: {text}"));
    assert_eq!(
        body["error"]["code"], "invalid_request",
        "{method} {path} {raw}: {text}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{text}"
    );
    assert!(body["error"]["type"].is_string(), "{text}");
    assert!(body["error"].get("param").is_some(), "{text}");
}

#[tokio::test]
async fn bad_inputs_are_refused_as_invalid_requests_and_change_nothing() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;

    let policy = get_json(&server, &owner, "/api/v1/policies").await;
    for raw in [
        "{\"requirePurpose\": tru",
        "[]",
        "{\"requirePurpose\": true, \"unknownField\": 1}",
        "{\"reviewMode\": \"sometimes\"}",
        "{\"reviewMode\": 3}",
        "{\"requirePurpose\": \"yes\"}",
        "{\"reviewTtlSeconds\": 0}",
        "{\"reviewTtlSeconds\": 2592001}",
        "{\"retentionDays\": 0}",
        "{\"retentionDays\": 3651}",
        "{\"retentionDays\": -5}",
        "{\"highRiskRetentionDays\": 182}",
        "{\"highRiskRetentionDays\": 3651}",
        "{\"judgeModel\": \"not-in-catalogue\"}",
        "{\"judgeEnabled\": true}",
        // A valid field with an invalid one: nothing is applied.
        "{\"requirePurpose\": true, \"logBodies\": false, \"retentionDays\": 0}",
    ] {
        refused_invalid(&server, &owner, Method::PUT, "/api/v1/policies", raw).await;
    }
    assert_eq!(get_json(&server, &owner, "/api/v1/policies").await, policy);

    for raw in [
        "{\"severity\": ",
        "{\"severity\": \"serious\", \"category\": \"x\", \"extra\": true}",
        "{\"severity\": \"minor\", \"category\": \"x\"}",
        "{\"severity\": \"SERIOUS\", \"category\": \"x\"}",
        "{\"category\": \"x\"}",
        "{\"severity\": \"serious\", \"category\": \"\"}",
        "{\"severity\": \"serious\", \"category\": \"x\", \"requestIds\": \"r1\"}",
    ] {
        refused_invalid(&server, &owner, Method::POST, "/api/v1/incidents", raw).await;
    }
    let long = format!(
        "{{\"severity\": \"serious\", \"category\": \"x\", \"description\": \"{}\"}}",
        "d".repeat(10_001)
    );
    refused_invalid(&server, &owner, Method::POST, "/api/v1/incidents", &long).await;
    assert!(
        get_json(&server, &owner, "/api/v1/incidents").await["data"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let incident = expect(
        &server,
        &owner,
        Method::POST,
        "/api/v1/incidents",
        Some(&json!({ "severity": "fatal", "category": "harm" })),
        201,
    )
    .await;
    let incident_path = format!("/api/v1/incidents/{}", incident["id"].as_str().unwrap());
    for raw in [
        "{\"status\": \"done\"}",
        "{\"status\": \"closed\", \"severity\": \"critical\"}",
        "{}",
        "{status}",
    ] {
        refused_invalid(&server, &owner, Method::PATCH, &incident_path, raw).await;
    }
    let kept = get_json(&server, &owner, &incident_path).await;
    assert_eq!(kept, incident);
    let bad_status = call(
        &server,
        Some(&owner),
        Method::GET,
        "/api/v1/incidents?status=done",
        None,
    )
    .await;
    assert_eq!(error_code(bad_status, 400).await, "invalid_request");

    let too_long = format!(
        "{{\"endUserId\": \"{}\", \"purpose\": \"p\"}}",
        "u".repeat(257)
    );
    for raw in [
        "{\"endUserId\": \"alice\"",
        "{\"endUserId\": \"alice\", \"purpose\": \"p\", \"scope\": \"all\"}",
        "{\"endUserId\": \"alice\"}",
        "{\"endUserId\": \"\", \"purpose\": \"p\"}",
        "{\"endUserId\": \"alice\", \"purpose\": \"   \"}",
        "{\"endUserId\": 42, \"purpose\": \"p\"}",
        too_long.as_str(),
    ] {
        refused_invalid(&server, &owner, Method::POST, "/api/v1/consents", raw).await;
    }
    assert!(
        get_json(&server, &owner, "/api/v1/consents").await["data"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    let registry = get_json(&server, &owner, "/api/v1/sub-processors").await;
    let many = format!(
        "{{\"name\": \"many\", \"dataCategories\": [{}]}}",
        vec!["\"c\""; 51].join(",")
    );
    for raw in [
        "{\"name\": ",
        "{\"name\": \"acme\", \"owner\": \"x\"}",
        "{\"name\": \"bad name!\"}",
        "{\"name\": \"\"}",
        "{\"legalName\": \"no name\"}",
        "{\"name\": \"acme\", \"dpaUrl\": \"ftp://acme.example/dpa\"}",
        "{\"name\": \"acme\", \"dpaUrl\": \"not a url\"}",
        "{\"name\": \"acme\", \"legalName\": \"\"}",
        "{\"name\": \"acme\", \"dataCategories\": \"prompts\"}",
        many.as_str(),
    ] {
        refused_invalid(&server, &owner, Method::POST, "/api/v1/sub-processors", raw).await;
    }
    for raw in [
        "{\"name\": \"renamed\"}",
        "{\"location\": \"\"}",
        "{\"location\": 5}",
        "{\"dpaUrl\": \"javascript:alert(1)\"}",
    ] {
        refused_invalid(
            &server,
            &owner,
            Method::PUT,
            "/api/v1/sub-processors/up",
            raw,
        )
        .await;
    }
    assert_eq!(
        get_json(&server, &owner, "/api/v1/sub-processors").await,
        registry
    );

    for raw in [
        "{\"endUserId\": ",
        "{\"endUserId\": \"\"}",
        "{\"endUserId\": \"a\", \"everything\": true}",
        "{}",
    ] {
        refused_invalid(&server, &owner, Method::POST, "/api/v1/erasure", raw).await;
    }
    for raw in ["{\"note\": ", "{\"verdict\": \"yes\"}"] {
        refused_invalid(
            &server,
            &owner,
            Method::POST,
            "/api/v1/reviews/nope/approve",
            raw,
        )
        .await;
    }
    for path in [
        "/api/v1/conversations?level=extreme",
        "/api/v1/reviews?status=maybe",
        "/api/v1/audit?limit=0",
        "/api/v1/conversations?cursor=zz",
    ] {
        let response = call(&server, Some(&owner), Method::GET, path, None).await;
        assert_eq!(error_code(response, 400).await, "invalid_request", "{path}");
    }
}

// ---- bugs found ----

#[tokio::test]
async fn query_string_errors_use_the_documented_error_shape() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;
    for path in [
        "/api/v1/audit?limit=abc",
        "/api/v1/audit?bogus=1",
        "/api/v1/conversations?unknownFilter=1",
        "/api/v1/conversations?limit=-1",
        "/api/v1/reviews?colour=red",
        "/api/v1/incidents?severity=fatal",
    ] {
        let response = call(&server, Some(&owner), Method::GET, path, None).await;
        assert_eq!(error_code(response, 400).await, "invalid_request", "{path}");
    }
}

#[tokio::test]
async fn a_null_judge_model_clears_it() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;
    let set = put_policy(&server, &owner, None, json!({ "judgeModel": "ok" })).await;
    assert_eq!(set["judgeModel"], "ok");
    let cleared = put_policy(&server, &owner, None, json!({ "judgeModel": null })).await;
    assert!(cleared["judgeModel"].is_null(), "{cleared}");
}

#[tokio::test]
async fn a_null_dpa_url_clears_it() {
    let (_upstream, server) = setup("").await;
    let owner = login(&server).await;
    let set = expect(
        &server,
        &owner,
        Method::PUT,
        "/api/v1/sub-processors/up",
        Some(&json!({ "dpaUrl": "https://up.example/dpa" })),
        200,
    )
    .await;
    assert_eq!(set["dpaUrl"], "https://up.example/dpa");
    let cleared = expect(
        &server,
        &owner,
        Method::PUT,
        "/api/v1/sub-processors/up",
        Some(&json!({ "dpaUrl": null })),
        200,
    )
    .await;
    assert!(cleared["dpaUrl"].is_null(), "{cleared}");
}
