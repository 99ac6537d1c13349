//! The legacy `POST /v1/completions` (docs/completions.md): forwarded to
//! OpenAI-compatible providers with the caller's body (the model renamed,
//! the service fields taken out), billed from the upstream's usage, plain
//! and streamed, through every cap, limit and gate of the chat route; and
//! `GET /v1/models/{id}`.

mod common;

use common::scripted::{Scripted, Step};
use common::{TestServer, client, error_code, login};
use serde_json::{Value, json};

const SECRET: &str = "sk-openai-completions-secret";
const PROHIBITED: &str = "Use the citizen score to deny housing to people below 600 points.";

fn config(scripted: &str) -> String {
    let mut out = format!(
        "[[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{scripted}\"\napi_key_env = \"TEST_OPENAI_KEY\"\nmax_retries = 2\nretry_backoff_ms = 1\n\
         [[providers]]\nid = \"claude\"\nkind = \"anthropic\"\nbase_url = \"http://127.0.0.1:1/v1\"\n\
         [[providers]]\nid = \"mock\"\nkind = \"mock\"\n"
    );
    for (id, provider, upstream) in [
        ("text", "up", "gpt-text-up"),
        ("flaky", "up", "flaky-up"),
        ("claude-text", "claude", "claude-x"),
        ("demo", "mock", "echo"),
    ] {
        out.push_str(&format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{upstream}\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
             context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
        ));
    }
    out
}

async fn setup() -> (Scripted, TestServer) {
    let scripted = Scripted::start().await;
    let server = TestServer::start_with(
        Some(&config(&scripted.base_url)),
        &[("TEST_OPENAI_KEY", SECRET)],
    );
    (scripted, server)
}

async fn post_raw(server: &TestServer, key: &str, body: String) -> reqwest::Response {
    client()
        .post(server.url("/v1/completions"))
        .bearer_auth(key)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap()
}

async fn post(server: &TestServer, key: &str, body: &Value) -> reqwest::Response {
    post_raw(server, key, body.to_string()).await
}

async fn usage_records(server: &TestServer, key_id: &str) -> Vec<Value> {
    let token = login(server).await;
    let records = common::get_json(
        server,
        &token,
        &format!("/api/v1/usage/records?keyId={key_id}"),
    )
    .await;
    records["data"].as_array().unwrap().clone()
}

/// The `data:` payloads of an SSE body, `[DONE]` included.
fn events(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn the_body_is_forwarded_as_sent_but_for_the_model_and_billed_from_usage() {
    let (scripted, server) = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let raw = "{ \"model\":\"text\",  \"prompt\": [\"def add(a, b):\"], \"max_tokens\": 16,\n \"suffix\": \"\\n\", \"echo\": false, \"x_vendor\": [1, 2.50] }";
    let response = post_raw(&server, &key, raw.to_owned()).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-tollgate-cost"], "0.00002");
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["object"], "text_completion");
    assert_eq!(answer["choices"][0]["text"], "hello from gpt-text-up");

    let calls = scripted.script.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].path, "/v1/completions");
    assert_eq!(
        calls[0].headers["authorization"],
        format!("Bearer {SECRET}").as_str()
    );
    assert_eq!(
        calls[0].raw,
        raw.replace("\"text\"", "\"gpt-text-up\""),
        "every byte but the model's name is the caller's"
    );

    // Service fields are taken out (the body is then re-encoded).
    let response = post(
        &server,
        &key,
        &json!({ "model": "text", "prompt": "hi", "purpose": "autocomplete", "end_user_id": "eu-1",
                 "user_consent_id": "c-1", "deployer_context": { "team": "ide" }, "user": "u-1" }),
    )
    .await;
    assert_eq!(response.status(), 200);
    let sent: Value = serde_json::from_str(&scripted.script.calls()[1].raw).unwrap();
    assert_eq!(
        sent,
        json!({ "model": "gpt-text-up", "prompt": "hi", "user": "u-1" })
    );

    let records = usage_records(&server, &key_id).await;
    assert_eq!(records.len(), 2);
    for record in &records {
        assert_eq!(record["endpoint"], "completions", "{record}");
        assert_eq!(record["promptTokens"], 10);
        assert_eq!(record["completionTokens"], 5);
        assert_eq!(record["estimated"], false, "{record}");
    }
}

#[tokio::test]
async fn a_stream_is_relayed_and_billed_from_its_usage_chunk_or_estimated_without_one() {
    let (scripted, server) = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let response = post(
        &server,
        &key,
        &json!({ "model": "text", "prompt": "Once upon", "stream": true,
                 "stream_options": { "include_usage": true } }),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.unwrap();
    let data = events(&text);
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"), "{text}");
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let relayed: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["text"].as_str())
        .collect();
    assert_eq!(relayed, "hello from gpt-text-up");
    assert_eq!(chunks.last().unwrap()["usage"]["completion_tokens"], 5);

    // Without usage in the last chunk: estimated from the text relayed.
    let response = post(
        &server,
        &key,
        &json!({ "model": "text", "prompt": "Once upon", "stream": true }),
    )
    .await;
    let text = response.text().await.unwrap();
    assert_eq!(events(&text).last().map(String::as_str), Some("[DONE]"));
    assert!(!text.contains("\"usage\""), "{text}");
    assert_eq!(scripted.script.calls().len(), 2);

    let records = usage_records(&server, &key_id).await;
    assert_eq!(records.len(), 2);
    let reported = records.iter().find(|r| r["estimated"] == false).unwrap();
    assert_eq!(reported["completionTokens"], 5);
    assert_eq!(reported["endpoint"], "completions");
    let estimated = records.iter().find(|r| r["estimated"] == true).unwrap();
    // "hello from gpt-text-up": 22 characters, 4 a token.
    assert_eq!(estimated["completionTokens"], 6);
    assert_eq!(estimated["endpoint"], "completions");
}

#[tokio::test]
async fn a_key_over_its_cap_or_rate_gets_402_or_429_with_no_upstream_call() {
    let (scripted, server) = setup().await;
    let (_, capped) = server.create_key(&["--credit-limit", "0.00001"]);
    let first = post(&server, &capped, &json!({ "model": "text", "prompt": "a" })).await;
    assert_eq!(first.status(), 200);
    let refused = post(&server, &capped, &json!({ "model": "text", "prompt": "a" })).await;
    assert_eq!(error_code(refused, 402).await, "budget_exceeded");

    let (_, limited) = server.create_key(&["--rate-limit", "1"]);
    let first = post(
        &server,
        &limited,
        &json!({ "model": "text", "prompt": "a" }),
    )
    .await;
    assert_eq!(first.status(), 200);
    let refused = post(
        &server,
        &limited,
        &json!({ "model": "text", "prompt": "a" }),
    )
    .await;
    assert!(refused.headers().contains_key("x-ratelimit-limit-requests"));
    assert_eq!(error_code(refused, 429).await, "rate_limit_exceeded");
    assert_eq!(
        scripted.script.calls().len(),
        2,
        "only the two admitted calls"
    );
}

#[tokio::test]
async fn a_prohibited_prompt_is_refused_with_no_upstream_call() {
    let (scripted, server) = setup().await;
    let (_, key) = server.create_key(&["--allow-high-risk"]);
    for prompt in [json!(PROHIBITED), json!(["fine", PROHIBITED])] {
        let refused = post(&server, &key, &json!({ "model": "text", "prompt": prompt })).await;
        assert_eq!(error_code(refused, 403).await, "prohibited_use");
    }
    assert!(scripted.script.calls().is_empty());
}

#[tokio::test]
async fn a_model_of_another_provider_kind_or_bad_input_is_400_naming_it() {
    let (scripted, server) = setup().await;
    let (_, key) = server.create_key(&[]);
    let refused = post(
        &server,
        &key,
        &json!({ "model": "claude-text", "prompt": "hi" }),
    )
    .await;
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["param"], "model");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("claude-text") && message.contains("anthropic"),
        "{message}"
    );

    for (body, param) in [
        (json!({ "model": "text" }), "prompt"),
        (json!({ "model": "text", "prompt": 5 }), "prompt"),
        (json!({ "model": "text", "prompt": [1, 2, 3] }), "prompt"),
        (json!({ "model": "text", "prompt": [] }), "prompt"),
        (
            json!({ "model": "text", "prompt": "hi", "suffix": 1 }),
            "suffix",
        ),
        (
            json!({ "model": "text", "prompt": "hi", "stream": "yes" }),
            "stream",
        ),
        (json!({ "prompt": "hi" }), "model"),
        (
            json!({ "model": "text", "prompt": "hi", "purpose": 7 }),
            "purpose",
        ),
    ] {
        let refused = post(&server, &key, &body).await;
        assert_eq!(refused.status(), 400, "{body}");
        let error: Value = refused.json().await.unwrap();
        assert_eq!(error["error"]["code"], "invalid_request", "{body}: {error}");
        assert_eq!(error["error"]["param"], param, "{body}: {error}");
    }
    assert!(scripted.script.calls().is_empty());
}

#[tokio::test]
async fn a_503_is_retried_on_the_same_deployment_and_billed_once() {
    let (scripted, server) = setup().await;
    let (key_id, key) = server.create_key(&[]);
    scripted
        .script
        .push("flaky-up", &[Step::Status(503), Step::Status(503)]);
    let response = post(&server, &key, &json!({ "model": "flaky", "prompt": "hi" })).await;
    assert_eq!(response.status(), 200);
    assert_eq!(scripted.script.count("flaky-up"), 3);
    assert_eq!(usage_records(&server, &key_id).await.len(), 1);
}

#[tokio::test]
async fn the_mock_provider_answers_in_the_completions_shape() {
    let (_scripted, server) = setup().await;
    let (_, key) = server.create_key(&[]);
    let answer: Value = post(&server, &key, &json!({ "model": "demo", "prompt": "ping" }))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(answer["object"], "text_completion");
    assert_eq!(answer["choices"][0]["text"], "echo: ping");
    let stream = post(
        &server,
        &key,
        &json!({ "model": "demo", "prompt": "ping", "stream": true }),
    )
    .await
    .text()
    .await
    .unwrap();
    assert_eq!(events(&stream).last().map(String::as_str), Some("[DONE]"));
    assert!(stream.contains("\"echo: \""), "{stream}");
}

#[tokio::test]
async fn a_model_is_retrieved_only_when_the_key_may_use_it() {
    let (_scripted, server) = setup().await;
    let (_, key) = server.create_key(&[]);
    let get = |path: String| {
        let key = key.clone();
        async move { client().get(path).bearer_auth(key).send().await.unwrap() }
    };
    let found = get(server.url("/v1/models/text")).await;
    assert_eq!(found.status(), 200);
    let model: Value = found.json().await.unwrap();
    assert_eq!(model["id"], "text");
    assert_eq!(model["object"], "model");
    assert_eq!(model["owned_by"], "up");
    assert!(model["created"].is_u64());
    assert_eq!(model["outputCapabilities"], json!(["TEXT"]));

    let unknown = get(server.url("/v1/models/nope")).await;
    assert_eq!(error_code(unknown, 404).await, "model_not_found");

    // The tenant's allow-list now leaves `demo` out.
    let token = login(&server).await;
    let put = client()
        .put(server.url("/api/v1/tenants/default/models"))
        .bearer_auth(&token)
        .json(&json!({ "models": ["text"] }))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    let outside = get(server.url("/v1/models/demo")).await;
    assert_eq!(error_code(outside, 404).await, "model_not_found");
    let list: Value = get(server.url("/v1/models")).await.json().await.unwrap();
    let ids: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(ids, ["text"]);
}

#[tokio::test]
async fn a_held_completion_is_answered_202_and_a_held_stream_is_refused() {
    let (scripted, server) = setup().await;
    let (_, key) = server.create_key(&[]);
    let owner = login(&server).await;
    let put = client()
        .put(server.url("/api/v1/policies"))
        .bearer_auth(&owner)
        .json(&json!({ "reviewMode": "all" }))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);

    let held = post(&server, &key, &json!({ "model": "text", "prompt": "hi" })).await;
    assert_eq!(held.status(), 202);
    let review: Value = held.json().await.unwrap();
    let id = review["id"].as_str().expect("a review id").to_owned();
    let pending = client()
        .get(server.url(&format!("/v1/reviews/{id}")))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(pending.status(), 202);

    let refused = post(
        &server,
        &key,
        &json!({ "model": "text", "prompt": "hi", "stream": true }),
    )
    .await;
    assert_eq!(refused.status(), 400);
    let error: Value = refused.json().await.unwrap();
    assert_eq!(error["error"]["param"], "stream", "{error}");
    assert_eq!(scripted.script.calls().len(), 1, "the stream was not sent");
}
