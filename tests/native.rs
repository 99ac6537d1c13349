//! The native passthroughs (`/v1/messages`, Gemini generate-content):
//! bodies forwarded byte for byte with the provider's key, answers relayed
//! unchanged, billed from the native usage, and every cap, limit and gate
//! of the chat route applied, with our errors in each route's dialect.

mod common;

use common::anthropic::Anthropic;
use common::gemini::Gemini;
use common::{TestServer, chat_post, client, login};
use serde_json::{Value, json};

const ANTHROPIC_SECRET: &str = "sk-ant-native-secret";
const GEMINI_SECRET: &str = "gm-native-secret";
const LOAN: &str = "Score this loan applicant and decide: approve or reject.";

fn config(anthropic: &str, gemini: &str) -> String {
    let mut out = format!(
        "[[providers]]\nid = \"claude\"\nkind = \"anthropic\"\nbase_url = \"{anthropic}\"\napi_key_env = \"TEST_ANTHROPIC_KEY\"\n\
         [[providers]]\nid = \"gem\"\nkind = \"gemini\"\nbase_url = \"{gemini}\"\napi_key_env = \"TEST_GEMINI_KEY\"\n\
         [[providers]]\nid = \"mock\"\nkind = \"mock\"\n"
    );
    for (id, provider, upstream) in [
        ("claude-ok", "claude", "claude-ok"),
        ("claude-public", "claude", "claude-ok"),
        ("claude-bad", "claude", "claude-bad"),
        ("claude-error-mid", "claude", "claude-error-mid"),
        ("gemini-ok", "gem", "gemini-ok"),
        ("gemini-503", "gem", "gemini-503"),
        ("mock-chat", "mock", "echo"),
    ] {
        out.push_str(&format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{upstream}\"\ninput = [\"TEXT\", \"IMAGE\"]\noutput = [\"TEXT\"]\n\
             context_window = 200000\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
        ));
    }
    out
}

struct Setup {
    anthropic: Anthropic,
    gemini: Gemini,
    server: TestServer,
}

async fn setup() -> Setup {
    let anthropic = Anthropic::start().await;
    let gemini = Gemini::start().await;
    let server = TestServer::start_with(
        Some(&config(&anthropic.base_url, &gemini.base_url)),
        &[
            ("TEST_ANTHROPIC_KEY", ANTHROPIC_SECRET),
            ("TEST_GEMINI_KEY", GEMINI_SECRET),
        ],
    );
    Setup {
        anthropic,
        gemini,
        server,
    }
}

/// A Messages API body as a client would write it: odd spacing, fields we
/// do not know, which must all arrive unchanged.
fn message_body(model: &str, stream: bool, text: &str) -> String {
    format!(
        "{{\n  \"model\":\"{model}\",  \"max_tokens\": 64,\n  \"system\": [{{\"type\":\"text\",\"text\":\"Be brief.\",\"cache_control\":{{\"type\":\"ephemeral\"}}}}],\n  \"messages\": [{{\"role\":\"user\",\"content\":\"{text}\"}}],\n  \"stream\": {stream},\n  \"metadata\": {{\"user_id\": \"u-1\"}}, \"x_unknown\": [1, 2.50, null]\n}}"
    )
}

fn gemini_body(text: &str) -> String {
    format!(
        "{{ \"contents\": [ {{\"role\": \"user\", \"parts\": [{{\"text\": \"{text}\"}}]}} ],\n  \"generationConfig\": {{\"temperature\": 0.20}}, \"safetySettings\": [] }}"
    )
}

async fn post_messages(
    server: &TestServer,
    auth: (&str, &str),
    body: String,
    extra: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = client()
        .post(server.url("/v1/messages"))
        .header("content-type", "application/json")
        .header(auth.0, auth.1)
        .body(body);
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

async fn post_gemini(
    server: &TestServer,
    path_and_query: &str,
    key: Option<&str>,
    body: String,
) -> reqwest::Response {
    let mut request = client()
        .post(server.url(path_and_query))
        .header("content-type", "application/json")
        .body(body);
    if let Some(key) = key {
        request = request.header("x-goog-api-key", key);
    }
    request.send().await.unwrap()
}

/// The same request sent to the mock upstream directly: what the caller
/// must get through the gateway, byte for byte.
async fn direct(url: String, headers: &[(&str, &str)], body: String) -> String {
    let mut request = client()
        .post(url)
        .header("content-type", "application/json")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap().text().await.unwrap()
}

/// The raw usage records of a key, through the dashboard API (owner).
async fn usage_records(server: &TestServer, key_id: &str) -> Vec<Value> {
    let token = login(server).await;
    common::get_json(
        server,
        &token,
        &format!("/api/v1/usage/records?keyId={key_id}"),
    )
    .await["data"]
        .as_array()
        .unwrap()
        .clone()
}

/// Waits for a stream's usage record (it is charged as the stream ends).
async fn records_after_stream(server: &TestServer, key_id: &str, count: usize) -> Vec<Value> {
    for _ in 0..100 {
        let records = usage_records(server, key_id).await;
        if records.len() >= count {
            return records;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the stream was never billed");
}

/// The first and third of four recordings.
fn through_gateway<T: Clone>(list: Vec<T>) -> [T; 2] {
    [list[0].clone(), list[2].clone()]
}

fn record_for(records: &[Value], streamed: bool) -> &Value {
    records
        .iter()
        .find(|r| r["streamed"] == streamed)
        .expect("a usage record")
}

/// Asserts the Anthropic error shape and returns its type (our code).
async fn anthropic_error(response: reqwest::Response, status: u16) -> String {
    assert_eq!(response.status().as_u16(), status);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["type"], "error", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    body["error"]["type"]
        .as_str()
        .expect("error.type")
        .to_owned()
}

/// Asserts the Google error shape and returns our code from its details.
async fn google_error(response: reqwest::Response, status: u16) -> String {
    assert_eq!(response.status().as_u16(), status);
    let body: Value = response.json().await.unwrap();
    let error = &body["error"];
    assert_eq!(error["code"], status, "{body}");
    assert!(error["status"].is_string(), "{body}");
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
    error["details"][0]["reason"]
        .as_str()
        .expect("reason")
        .to_owned()
}

#[tokio::test]
async fn messages_reach_anthropic_unchanged_with_the_providers_key_and_are_billed_from_native_usage()
 {
    let Setup {
        anthropic, server, ..
    } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let body = message_body("claude-ok", false, "hello");
    let versions = [
        ("anthropic-version", "2023-06-01"),
        ("anthropic-beta", "prompt-caching-2024-07-31"),
    ];
    let response = post_messages(&server, ("x-api-key", &key), body.clone(), &versions).await;
    assert_eq!(response.status(), 200);
    assert!(
        response
            .headers()
            .contains_key("x-ratelimit-remaining-requests")
    );
    assert_eq!(response.headers()["x-tollgate-cost"], "0.000029");
    assert_eq!(response.headers()["x-tollgate-risk-level"], "minimal");
    let answer = response.text().await.unwrap();

    // The upstream got the caller's bytes, the provider's key and the
    // caller's version headers; nothing of ours.
    assert_eq!(anthropic.recorded.raw_bodies(), [body.as_str()]);
    let headers = &anthropic.recorded.headers()[0];
    assert_eq!(headers["x-api-key"], ANTHROPIC_SECRET);
    assert_eq!(headers["anthropic-version"], "2023-06-01");
    assert_eq!(headers["anthropic-beta"], "prompt-caching-2024-07-31");
    assert!(headers.get("authorization").is_none());
    assert!(
        !format!("{headers:?}").contains(&key),
        "our key went upstream"
    );

    // The caller got the upstream's answer, byte for byte.
    let expected = direct(
        format!("{}/messages", anthropic.base_url),
        &versions,
        body.clone(),
    )
    .await;
    assert_eq!(answer, expected);

    // Billed from usage: 12 input + 3 cached = 15 prompt, 7 output.
    let records = usage_records(&server, &key_id).await;
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record["model"], "claude-ok");
    assert_eq!(record["provider"], "claude");
    assert_eq!(record["promptTokens"], 15);
    assert_eq!(record["completionTokens"], 7);
    assert_eq!(record["estimated"], false);
    assert_eq!(record["cost"], json!(0.000029));

    // An audit entry and the metrics, as for a chat completion.
    let token = login(&server).await;
    let audit = common::get_json(&server, &token, "/api/v1/audit?limit=50").await;
    assert!(
        audit["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["action"] == "inference" && e["details"]["model"] == "claude-ok"),
        "an inference audit entry: {audit}"
    );
    let metrics = common::scrape_metrics(&server).await;
    assert!(
        metrics.contains("tollgate_credits_charged_total{model=\"claude-ok\"}"),
        "credits counted by model"
    );
}

#[tokio::test]
async fn streamed_messages_are_relayed_byte_for_byte_and_billed_at_their_end() {
    let Setup {
        anthropic, server, ..
    } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let body = message_body("claude-ok", true, "stream please");
    let bearer = format!("Bearer {key}");
    let response = post_messages(&server, ("authorization", &bearer), body.clone(), &[]).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let relayed = response.text().await.unwrap();
    let expected = direct(
        format!("{}/messages", anthropic.base_url),
        &[],
        body.clone(),
    )
    .await;
    assert_eq!(relayed, expected, "every event relayed unchanged");
    assert_eq!(anthropic.recorded.raw_bodies()[0], body);
    // No version from the caller: the gateway's default goes up.
    assert_eq!(
        anthropic.recorded.headers()[0]["anthropic-version"],
        "2023-06-01"
    );

    let records = records_after_stream(&server, &key_id, 1).await;
    let record = record_for(&records, true);
    assert_eq!(record["promptTokens"], 15, "message_start's input + cached");
    assert_eq!(record["completionTokens"], 7, "message_delta's output");
    assert_eq!(record["cost"], json!(0.000029));
}

#[tokio::test]
async fn a_renamed_model_is_the_only_change_to_the_forwarded_body() {
    let Setup {
        anthropic, server, ..
    } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let body = message_body("claude-public", false, "hi");
    let response = post_messages(&server, ("x-api-key", &key), body.clone(), &[]).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        anthropic.recorded.raw_bodies(),
        [body.replace("\"claude-public\"", "\"claude-ok\"")]
    );
    let records = usage_records(&server, &key_id).await;
    assert_eq!(
        records[0]["model"], "claude-public",
        "billed as the caller named it"
    );
}

#[tokio::test]
async fn generate_content_reaches_gemini_unchanged_on_v1beta_and_v1() {
    let Setup { gemini, server, .. } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let body = gemini_body("hello");

    // Plain, /v1beta, key in x-goog-api-key.
    let response = post_gemini(
        &server,
        "/v1beta/models/gemini-ok:generateContent",
        Some(&key),
        body.clone(),
    )
    .await;
    assert_eq!(response.status(), 200);
    let answer = response.text().await.unwrap();
    let expected = direct(
        format!("{}/models/gemini-ok:generateContent", gemini.base_url),
        &[],
        body.clone(),
    )
    .await;
    assert_eq!(answer, expected);

    // Streamed, /v1, key in `?key=` as Google clients may send it.
    let response = post_gemini(
        &server,
        &format!("/v1/models/gemini-ok:streamGenerateContent?alt=sse&key={key}"),
        None,
        body.clone(),
    )
    .await;
    assert_eq!(response.status(), 200);
    let relayed = response.text().await.unwrap();
    let expected = direct(
        format!(
            "{}/models/gemini-ok:streamGenerateContent?alt=sse",
            gemini.base_url
        ),
        &[],
        body.clone(),
    )
    .await;
    assert_eq!(relayed, expected, "every chunk relayed unchanged");

    // Recorded: the gateway's plain call, the direct one, the gateway's
    // stream, the direct one.
    assert_eq!(
        through_gateway(gemini.recorded.raw_bodies()),
        [body.clone(), body.clone()]
    );
    assert_eq!(
        through_gateway(gemini.recorded.paths()),
        [
            "/v1beta/models/gemini-ok:generateContent",
            "/v1beta/models/gemini-ok:streamGenerateContent"
        ]
    );
    assert_eq!(
        through_gateway(gemini.recorded.queries()),
        [None, Some("alt=sse".to_owned())],
        "the caller's `?key=` never goes upstream"
    );
    for headers in through_gateway(gemini.recorded.headers()) {
        assert_eq!(headers["x-goog-api-key"], GEMINI_SECRET);
    }
    assert!(
        !server.log().contains(&key),
        "the `?key=` never reaches the log"
    );

    // 11 prompt; 6 candidates + 2 thoughts (the last chunk's counts).
    let records = records_after_stream(&server, &key_id, 2).await;
    for streamed in [false, true] {
        let record = record_for(&records, streamed);
        assert_eq!(record["model"], "gemini-ok");
        assert_eq!(record["promptTokens"], 11);
        assert_eq!(record["completionTokens"], 8);
        assert_eq!(record["cost"], json!(0.000027));
    }
}

#[tokio::test]
async fn a_key_over_its_cap_gets_402_on_every_route_in_its_dialect() {
    let Setup {
        anthropic,
        gemini,
        server,
    } = setup().await;
    // One answer (29 micro-credits) takes the key over its 10.
    let (_, key) = server.create_key(&["--credit-limit", "0.00001"]);
    let first = post_messages(
        &server,
        ("x-api-key", &key),
        message_body("claude-ok", false, "hi"),
        &[],
    )
    .await;
    assert_eq!(first.status(), 200);
    let sent = (anthropic.recorded.count(), gemini.recorded.count());

    let refused = post_messages(
        &server,
        ("x-api-key", &key),
        message_body("claude-ok", true, "hi"),
        &[],
    )
    .await;
    assert_eq!(anthropic_error(refused, 402).await, "budget_exceeded");
    for path in [
        "/v1beta/models/gemini-ok:generateContent",
        "/v1/models/gemini-ok:streamGenerateContent?alt=sse",
    ] {
        let refused = post_gemini(&server, path, Some(&key), gemini_body("hi")).await;
        assert_eq!(
            google_error(refused, 402).await,
            "budget_exceeded",
            "{path}"
        );
    }
    let chat = chat_post(
        &server,
        &key,
        &json!({ "model": "mock-chat", "messages": [{ "role": "user", "content": "hi" }] }),
    )
    .await;
    assert_eq!(common::error_code(chat, 402).await, "budget_exceeded");
    assert_eq!(
        (anthropic.recorded.count(), gemini.recorded.count()),
        sent,
        "nothing more reached an upstream"
    );
}

#[tokio::test]
async fn a_rate_limited_key_gets_429_on_every_route() {
    let Setup {
        anthropic,
        gemini,
        server,
    } = setup().await;
    let (_, key) = server.create_key(&["--rate-limit", "1"]);
    let first = post_gemini(
        &server,
        "/v1beta/models/gemini-ok:generateContent",
        Some(&key),
        gemini_body("hi"),
    )
    .await;
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["x-ratelimit-limit-requests"], "1");

    let refused = post_messages(
        &server,
        ("x-api-key", &key),
        message_body("claude-ok", false, "hi"),
        &[],
    )
    .await;
    assert!(refused.headers().contains_key("retry-after"));
    assert_eq!(refused.headers()["x-ratelimit-remaining-requests"], "0");
    assert_eq!(anthropic_error(refused, 429).await, "rate_limit_exceeded");
    for path in [
        "/v1beta/models/gemini-ok:generateContent",
        "/v1beta/models/gemini-ok:streamGenerateContent?alt=sse",
        "/v1/models/gemini-ok:generateContent",
    ] {
        let refused = post_gemini(&server, path, Some(&key), gemini_body("hi")).await;
        assert!(refused.headers().contains_key("retry-after"));
        assert_eq!(
            google_error(refused, 429).await,
            "rate_limit_exceeded",
            "{path}"
        );
    }
    assert_eq!(anthropic.recorded.count(), 0);
    assert_eq!(gemini.recorded.count(), 1);
}

#[tokio::test]
async fn a_high_risk_prompt_is_gated_on_both_passthroughs_with_no_upstream_call() {
    let Setup {
        anthropic,
        gemini,
        server,
    } = setup().await;
    let (_, key) = server.create_key(&[]);
    for stream in [false, true] {
        let refused = post_messages(
            &server,
            ("x-api-key", &key),
            message_body("claude-ok", stream, LOAN),
            &[],
        )
        .await;
        assert_eq!(anthropic_error(refused, 403).await, "high_risk_not_allowed");
    }
    for path in [
        "/v1beta/models/gemini-ok:generateContent",
        "/v1/models/gemini-ok:streamGenerateContent?alt=sse",
    ] {
        let refused = post_gemini(&server, path, Some(&key), gemini_body(LOAN)).await;
        assert_eq!(google_error(refused, 403).await, "high_risk_not_allowed");
    }
    assert_eq!(anthropic.recorded.count() + gemini.recorded.count(), 0);

    // A key allowed high-risk uses is served, and the declared purpose
    // rides in a header (the native body has no room for it).
    let (_, allowed) = server.create_key(&["--allow-high-risk"]);
    let served = post_messages(
        &server,
        ("x-api-key", &allowed),
        message_body("claude-ok", false, LOAN),
        &[("x-tollgate-purpose", "Credit scoring of applicants")],
    )
    .await;
    assert_eq!(served.status(), 200);
    assert_eq!(served.headers()["x-tollgate-risk-level"], "high");
    assert!(
        anthropic.recorded.headers()[0]
            .get("x-tollgate-purpose")
            .is_none(),
        "service headers are ours, never forwarded"
    );
}

#[tokio::test]
async fn bad_native_requests_get_clear_errors_in_each_dialect() {
    let Setup {
        anthropic,
        gemini,
        server,
    } = setup().await;
    let (_, key) = server.create_key(&[]);
    let auth = ("x-api-key", key.as_str());

    let malformed = post_messages(&server, auth, "{\"model\": ".into(), &[]).await;
    assert_eq!(anthropic_error(malformed, 400).await, "invalid_request");
    let unknown = post_messages(&server, auth, message_body("claude-nope", false, "hi"), &[]).await;
    assert_eq!(anthropic_error(unknown, 404).await, "model_not_found");
    // A model of another kind is translated, not refused: tests/messages_any.rs.
    let no_messages = post_messages(&server, auth, "{\"model\": \"claude-ok\"}".into(), &[]).await;
    assert_eq!(anthropic_error(no_messages, 400).await, "invalid_request");
    let no_key = client()
        .post(server.url("/v1/messages"))
        .body(message_body("claude-ok", false, "hi"))
        .send()
        .await
        .unwrap();
    assert_eq!(anthropic_error(no_key, 401).await, "missing_api_key");

    let malformed = post_gemini(
        &server,
        "/v1beta/models/gemini-ok:generateContent",
        Some(&key),
        "[1,".into(),
    )
    .await;
    assert_eq!(google_error(malformed, 400).await, "invalid_request");
    // Google's routes: (path and query, key sent, status, our code).
    let bad_google: [(&str, Option<&str>, u16, &str); 6] = [
        (
            "/v1beta/models/gemini-nope:generateContent",
            Some(&key),
            404,
            "model_not_found",
        ),
        (
            "/v1/models/claude-ok:generateContent",
            Some(&key),
            400,
            "invalid_request",
        ),
        (
            "/v1beta/models/gemini-ok:countTokens",
            Some(&key),
            404,
            "not_found",
        ),
        (
            "/v1beta/models/gemini-ok:streamGenerateContent",
            Some(&key),
            400,
            "invalid_request",
        ),
        (
            "/v1beta/models/gemini-ok:generateContent",
            None,
            401,
            "missing_api_key",
        ),
        (
            "/v1beta/models/gemini-ok:generateContent?key=kp_live_not-a-key",
            None,
            401,
            "invalid_api_key",
        ),
    ];
    for (path, key, status, code) in bad_google {
        let response = post_gemini(&server, path, key, gemini_body("hi")).await;
        assert_eq!(google_error(response, status).await, code, "{path}");
    }
    assert_eq!(anthropic.recorded.count() + gemini.recorded.count(), 0);

    // The catalogue list is still the OpenAI one.
    let list = client()
        .get(server.url("/v1/models"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), 200);
    let list: Value = list.json().await.unwrap();
    assert_eq!(list["object"], "list");
}

#[tokio::test]
async fn upstream_refusals_are_relayed_as_the_upstream_sent_them_and_not_billed() {
    let Setup {
        anthropic,
        gemini,
        server,
    } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let bad = post_messages(
        &server,
        ("x-api-key", &key),
        message_body("claude-bad", false, "hi"),
        &[],
    )
    .await;
    assert_eq!(bad.status(), 400);
    let body: Value = bad.json().await.unwrap();
    assert_eq!(
        body["error"]["type"], "invalid_request_error",
        "Anthropic's own error"
    );
    let down = post_gemini(
        &server,
        "/v1beta/models/gemini-503:generateContent",
        Some(&key),
        gemini_body("hi"),
    )
    .await;
    assert_eq!(down.status(), 503);
    let body: Value = down.json().await.unwrap();
    assert_eq!(body["error"]["status"], "UNAVAILABLE", "Google's own error");
    // The 400 is final; the 503 is retried (max_retries = 2 by default),
    // then the last answer is relayed.
    assert_eq!(anthropic.recorded.count(), 1);
    assert_eq!(gemini.recorded.count(), 3);
    assert!(usage_records(&server, &key_id).await.is_empty());
}

#[tokio::test]
async fn a_stream_cut_by_its_upstream_is_billed_for_what_was_relayed() {
    let Setup {
        anthropic, server, ..
    } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let body = message_body("claude-error-mid", true, "hi");
    let response = post_messages(&server, ("x-api-key", &key), body.clone(), &[]).await;
    assert_eq!(response.status(), 200);
    let relayed = response.text().await.unwrap();
    let expected = direct(format!("{}/messages", anthropic.base_url), &[], body).await;
    assert_eq!(relayed, expected, "the upstream's own error event relayed");
    assert!(!relayed.contains("message_stop"));
    let records = records_after_stream(&server, &key_id, 1).await;
    let record = &records[0];
    assert_eq!(record["promptTokens"], 15);
    assert_eq!(record["estimated"], true, "no final count: estimated");
    assert!(record["completionTokens"].as_u64().unwrap() >= 1);
}

#[tokio::test]
async fn a_held_native_answer_is_billed_queued_and_released_once_approved() {
    let Setup { server, .. } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let owner = login(&server).await;
    let policy = client()
        .put(server.url("/api/v1/policies"))
        .bearer_auth(&owner)
        .json(&json!({ "reviewMode": "all" }))
        .send()
        .await
        .unwrap();
    assert_eq!(policy.status(), 200);

    let held = post_messages(
        &server,
        ("x-api-key", &key),
        message_body("claude-ok", false, "Hello"),
        &[],
    )
    .await;
    assert_eq!(held.status(), 202);
    let held: Value = held.json().await.unwrap();
    assert_eq!(held["status"], "pending");
    let review = held["id"].as_str().unwrap().to_owned();
    // Billed in the same transaction that queued it.
    assert_eq!(usage_records(&server, &key_id).await.len(), 1);
    let poll = || {
        client()
            .get(server.url(&format!("/v1/reviews/{review}")))
            .bearer_auth(&key)
            .send()
    };
    assert_eq!(poll().await.unwrap().status(), 202);

    // A stream cannot be held: its body would have to change.
    let streamed = post_messages(
        &server,
        ("x-api-key", &key),
        message_body("claude-ok", true, "Hello"),
        &[],
    )
    .await;
    assert_eq!(anthropic_error(streamed, 400).await, "invalid_request");

    let approved = client()
        .post(server.url(&format!("/api/v1/reviews/{review}/approve")))
        .bearer_auth(&owner)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), 200);
    let released = poll().await.unwrap();
    assert_eq!(released.status(), 200);
    let released: Value = released.json().await.unwrap();
    assert_eq!(released["type"], "message", "the native answer: {released}");
    assert_eq!(usage_records(&server, &key_id).await.len(), 1);
}

/// A key's `tpmLimit` holds on the passthroughs too: each request reserves
/// its prompt and the completion it allows itself (`max_tokens`,
/// `generationConfig.maxOutputTokens`), the answer's usage replaces the
/// reservation, and a request with no room left is refused in its dialect.
#[tokio::test]
async fn the_passthroughs_count_against_the_keys_token_limit() {
    let Setup {
        anthropic, server, ..
    } = setup().await;
    let (_, key) = server.create_key(&["--tpm-limit", "50"]);
    let bearer = format!("Bearer {key}");
    // Alone in an empty window, a request larger than the limit passes.
    let first = post_messages(
        &server,
        ("authorization", &bearer),
        message_body("claude-ok", false, "hello"),
        &[],
    )
    .await;
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["x-ratelimit-limit-tokens"], "50");
    let calls = anthropic.recorded.count();
    // Its usage is counted: 64 more tokens do not fit in what is left.
    let refused = post_messages(
        &server,
        ("authorization", &bearer),
        message_body("claude-ok", false, "hello again"),
        &[],
    )
    .await;
    assert!(refused.headers().contains_key("retry-after"));
    assert_eq!(
        anthropic_error(refused, 429).await,
        "token_rate_limit_exceeded"
    );
    let gemini = post_gemini(
        &server,
        "/v1beta/models/gemini-ok:generateContent",
        Some(&key),
        "{ \"contents\": [ {\"role\": \"user\", \"parts\": [{\"text\": \"hi\"}]} ], \"generationConfig\": {\"maxOutputTokens\": 64} }".into(),
    )
    .await;
    assert_eq!(gemini.status(), 429);
    let body: Value = gemini.json().await.unwrap();
    assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED", "{body}");
    assert_eq!(
        anthropic.recorded.count(),
        calls,
        "nothing refused reached the upstream"
    );
}
