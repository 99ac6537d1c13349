//! `POST /v1/embeddings` end to end: the real server in front of a scripted
//! upstream (`common::scripted`) spoken to as an OpenAI-compatible server
//! and as Gemini, and the built-in mock; charges read back through the
//! usage records.
//!
//! Prices in the test catalogue: every embedding model 1000 credits per
//! million input tokens (0.001 a token, 1000 micro-credits), output 0.

mod common;

use common::scripted::{SCRIPTED_BASE64, Scripted};
use common::{TestServer, client, error_code, login};
use serde_json::{Value, json};

const PROHIBITED: &str = "Use the citizen score to deny housing to people below 600 points.";
const PER_TOKEN: u64 = 1000;

fn config(upstream: &str) -> String {
    let model = |id: &str, provider: &str, up: &str, output: &str| {
        format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{up}\"\ninput = [\"TEXT\"]\noutput = [\"{output}\"]\n\
             context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1000.0, output_per_million = 0.0 }}\n"
        )
    };
    let mut out = format!(
        "[[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{upstream}\"\napi_key_env = \"TEST_UP_KEY\"\nmax_retries = 0\n\
         [[providers]]\nid = \"gem\"\nkind = \"gemini\"\nbase_url = \"{upstream}\"\napi_key_env = \"TEST_GEMINI_KEY\"\nmax_retries = 0\n\
         [[providers]]\nid = \"mock\"\nkind = \"mock\"\n"
    );
    out.push_str(&model("emb", "up", "text-embedding-3-small", "EMBEDDING"));
    out.push_str(&model("emb-quiet", "up", "no-usage-emb", "EMBEDDING"));
    out.push_str(&model("gem-emb", "gem", "text-embedding-004", "EMBEDDING"));
    out.push_str(&model("mock-emb", "mock", "echo", "EMBEDDING"));
    out.push_str(&model("chat", "up", "gpt", "TEXT"));
    out
}

async fn setup() -> (Scripted, TestServer) {
    let upstream = Scripted::start().await;
    let server = TestServer::start_with(
        Some(&config(&upstream.base_url)),
        &[
            ("TEST_UP_KEY", "sk-up-secret"),
            ("TEST_GEMINI_KEY", "g-secret"),
        ],
    );
    (upstream, server)
}

async fn embed(server: &TestServer, key: &str, body: &Value) -> reqwest::Response {
    client()
        .post(server.url("/v1/embeddings"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap()
}

async fn embed_json(server: &TestServer, key: &str, body: Value) -> Value {
    let response = embed(server, key, &body).await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

fn micros(credits: &Value) -> u64 {
    (credits.as_f64().expect("credits") * 1_000_000.0).round() as u64
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

#[tokio::test]
async fn openai_kind_providers_get_the_request_forwarded_and_base64_passes_through() {
    let (upstream, server) = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let body = embed_json(
        &server,
        &key,
        json!({ "model": "emb", "input": ["first", "second"], "encoding_format": "float",
                "dimensions": 2, "user": "u-1", "purpose": "search", "end_user_id": "eu-1" }),
    )
    .await;
    let call = upstream.script.calls().pop().unwrap();
    assert_eq!(call.path, "/v1/embeddings");
    assert_eq!(call.headers["authorization"], "Bearer sk-up-secret");
    // Service fields removed, the model renamed, the rest as sent.
    assert_eq!(
        call.body,
        json!({ "model": "text-embedding-3-small", "input": ["first", "second"],
                "encoding_format": "float", "dimensions": 2, "user": "u-1" })
    );
    assert_eq!(body["object"], "list");
    assert_eq!(body["model"], "emb");
    assert_eq!(body["data"][1]["embedding"], json!([1.0, 0.5]));
    assert_eq!(body["usage"]["prompt_tokens"], 7);
    assert_eq!(micros(&body["billing"]["cost"]), 7 * PER_TOKEN);
    assert_eq!(body["risk_classification"]["level"], "minimal");

    // base64: the upstream's string, untouched.
    let encoded = embed_json(
        &server,
        &key,
        json!({ "model": "emb", "input": "one", "encoding_format": "base64" }),
    )
    .await;
    assert_eq!(
        upstream.script.calls().pop().unwrap().body["encoding_format"],
        "base64"
    );
    assert_eq!(encoded["data"][0]["embedding"], SCRIPTED_BASE64);

    let records = usage_records(&server, &key_id).await;
    assert_eq!(records.len(), 2);
    for record in &records {
        assert_eq!(record["endpoint"], "embeddings");
        assert_eq!(record["promptTokens"], 7);
        assert_eq!(record["completionTokens"], 0);
        assert_eq!(record["estimated"], false);
        assert_eq!(micros(&record["cost"]), 7 * PER_TOKEN);
    }
    let metrics = common::scrape_metrics(&server).await;
    assert!(
        metrics.contains("tollgate_credits_charged_total{model=\"emb\"}"),
        "{metrics}"
    );
}

#[tokio::test]
async fn without_upstream_usage_the_local_estimate_is_billed_and_marked_estimated() {
    let (_upstream, server) = setup().await;
    let (key_id, key) = server.create_key(&[]);
    // 16 + 8 characters: 4 + 2 estimated tokens.
    let body = embed_json(
        &server,
        &key,
        json!({ "model": "emb-quiet", "input": ["sixteen chars ok", "8 chars!"] }),
    )
    .await;
    assert_eq!(body["usage"]["prompt_tokens"], 6);
    assert_eq!(micros(&body["billing"]["cost"]), 6 * PER_TOKEN);
    // Token arrays are counted exactly.
    let tokens = embed_json(
        &server,
        &key,
        json!({ "model": "emb-quiet", "input": [[1, 2, 3], [4]] }),
    )
    .await;
    assert_eq!(tokens["usage"]["prompt_tokens"], 4);
    let records = usage_records(&server, &key_id).await;
    let mut seen: Vec<(u64, bool)> = records
        .iter()
        .map(|r| {
            (
                r["promptTokens"].as_u64().unwrap(),
                r["estimated"].as_bool().unwrap(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(seen, vec![(4, false), (6, true)]);
}

#[tokio::test]
async fn gemini_models_get_one_batch_call_in_order_with_output_dimensionality() {
    let (upstream, server) = setup().await;
    let (_, key) = server.create_key(&[]);
    let body = embed_json(
        &server,
        &key,
        json!({ "model": "gem-emb", "input": ["a", "b", "c"], "dimensions": 3 }),
    )
    .await;
    let calls = upstream.script.calls();
    assert_eq!(calls.len(), 1, "one upstream call for the array");
    let call = &calls[0];
    assert_eq!(
        call.path,
        "/v1/models/text-embedding-004:batchEmbedContents"
    );
    assert_eq!(call.headers["x-goog-api-key"], "g-secret");
    assert!(!call.headers.contains_key("authorization"));
    let request = |text: &str| {
        json!({ "model": "models/text-embedding-004", "content": { "parts": [{ "text": text }] },
                "outputDimensionality": 3 })
    };
    assert_eq!(
        call.body,
        json!({ "requests": [request("a"), request("b"), request("c")] })
    );
    assert_eq!(body["model"], "gem-emb");
    for i in 0..3 {
        assert_eq!(body["data"][i]["index"], i);
        assert_eq!(body["data"][i]["embedding"], json!([i as f64, 0.25, 0.0]));
    }
    // No usage from Gemini: the estimate (one token a text).
    assert_eq!(body["usage"]["prompt_tokens"], 3);

    // base64 is encoded by the gateway: little-endian f32s.
    let encoded = embed_json(
        &server,
        &key,
        json!({ "model": "gem-emb", "input": "x", "encoding_format": "base64" }),
    )
    .await;
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded["data"][0]["embedding"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        bytes,
        [0.0f32.to_le_bytes(), 0.25f32.to_le_bytes()].concat()
    );

    // Gemini embeds text only: token arrays are refused before any call.
    let refused = embed(
        &server,
        &key,
        &json!({ "model": "gem-emb", "input": [[1, 2]] }),
    )
    .await;
    assert_eq!(refused.status(), 400);
    let error: Value = refused.json().await.unwrap();
    assert_eq!(error["error"]["param"], "input");
    assert_eq!(upstream.script.calls().len(), 2);
}

#[tokio::test]
async fn the_mock_provider_answers_deterministic_vectors_of_the_asked_dimensions() {
    let (_upstream, server) = setup().await;
    let (_, key) = server.create_key(&[]);
    let ask = |input: Value, dimensions: Option<u64>| {
        let mut body = json!({ "model": "mock-emb", "input": input });
        if let Some(d) = dimensions {
            body["dimensions"] = json!(d);
        }
        body
    };
    let first = embed_json(&server, &key, ask(json!(["same", "other"]), Some(8))).await;
    let again = embed_json(&server, &key, ask(json!("same"), Some(8))).await;
    assert_eq!(first["data"][0]["embedding"], again["data"][0]["embedding"]);
    assert_ne!(first["data"][0]["embedding"], first["data"][1]["embedding"]);
    let vector: Vec<f64> = serde_json::from_value(first["data"][0]["embedding"].clone()).unwrap();
    assert_eq!(vector.len(), 8);
    let norm: f64 = vector.iter().map(|v| v * v).sum();
    assert!((norm - 1.0).abs() < 1e-3, "{norm}");
    let default = embed_json(&server, &key, ask(json!("same"), None)).await;
    assert_eq!(
        default["data"][0]["embedding"].as_array().unwrap().len(),
        64
    );
    assert!(micros(&default["billing"]["cost"]) > 0);
    let huge = embed(&server, &key, &ask(json!("same"), Some(3073))).await;
    assert_eq!(error_code(huge, 400).await, "invalid_request");
}

#[tokio::test]
async fn embeddings_go_through_caps_rate_limits_and_the_risk_gate_before_any_upstream_call() {
    let (upstream, server) = setup().await;
    // Over its cap: 7 tokens spend 0.007 of 0.005, then 402.
    let (_, capped) = server.create_key(&["--credit-limit", "0.005"]);
    let ask = json!({ "model": "emb", "input": "hello" });
    assert_eq!(embed(&server, &capped, &ask).await.status(), 200);
    let reached = upstream.script.calls().len();
    let refused = embed(&server, &capped, &ask).await;
    assert_eq!(error_code(refused, 402).await, "budget_exceeded");
    assert_eq!(upstream.script.calls().len(), reached);

    // One request a minute.
    let (_, limited) = server.create_key(&["--rate-limit", "1"]);
    let first = embed(&server, &limited, &ask).await;
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["x-ratelimit-limit-requests"], "1");
    let reached = upstream.script.calls().len();
    let second = embed(&server, &limited, &ask).await;
    assert!(second.headers().contains_key("retry-after"));
    assert_eq!(error_code(second, 429).await, "rate_limit_exceeded");
    assert_eq!(upstream.script.calls().len(), reached);

    // A prohibited input, among others, refused whatever the key.
    let (_, allowed) = server.create_key(&["--allow-high-risk"]);
    let prohibited = json!({ "model": "emb", "input": ["a harmless line", PROHIBITED] });
    let refused = embed(&server, &allowed, &prohibited).await;
    assert_eq!(error_code(refused, 403).await, "prohibited_use");
    assert_eq!(upstream.script.calls().len(), reached);
}

#[tokio::test]
async fn chat_models_and_embedding_models_refuse_each_others_routes() {
    let (upstream, server) = setup().await;
    let (_, key) = server.create_key(&["--rate-limit", "1000"]);
    let refused = embed(&server, &key, &json!({ "model": "chat", "input": "x" })).await;
    assert_eq!(refused.status(), 400);
    let error: Value = refused.json().await.unwrap();
    assert_eq!(error["error"]["code"], "wrong_model_kind");
    assert_eq!(error["error"]["param"], "model");

    let chat = common::chat_post(
        &server,
        &key,
        &json!({ "model": "emb", "messages": [{ "role": "user", "content": "hi" }] }),
    )
    .await;
    assert_eq!(error_code(chat, 400).await, "wrong_model_kind");
    let image = client()
        .post(server.url("/v1/images/generations"))
        .bearer_auth(&key)
        .json(&json!({ "model": "emb", "prompt": "a cat" }))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(image, 400).await, "wrong_model_kind");
    let messages = client()
        .post(server.url("/v1/messages"))
        .bearer_auth(&key)
        .json(&json!({ "model": "emb", "max_tokens": 8, "messages": [{ "role": "user", "content": "hi" }] }))
        .send()
        .await
        .unwrap();
    assert_eq!(messages.status(), 400);
    assert!(messages.text().await.unwrap().contains("wrong_model_kind"));
    assert!(upstream.script.calls().is_empty());
}

#[tokio::test]
async fn bad_embedding_requests_are_refused_naming_the_field() {
    let (upstream, server) = setup().await;
    let (_, key) = server.create_key(&["--rate-limit", "1000"]);
    let too_many: Vec<&str> = vec!["x"; 2049];
    let cases = [
        (json!({ "input": "x" }), "model"),
        (json!({ "model": 5, "input": "x" }), "model"),
        (json!({ "model": "emb" }), "input"),
        (json!({ "model": "emb", "input": "" }), "input"),
        (json!({ "model": "emb", "input": [] }), "input"),
        (json!({ "model": "emb", "input": [""] }), "input"),
        (json!({ "model": "emb", "input": [[]] }), "input"),
        (json!({ "model": "emb", "input": 5 }), "input"),
        (json!({ "model": "emb", "input": { "text": "x" } }), "input"),
        (json!({ "model": "emb", "input": ["x", 1] }), "input"),
        (json!({ "model": "emb", "input": [[1, -2]] }), "input"),
        (json!({ "model": "emb", "input": too_many }), "input"),
        (
            json!({ "model": "emb", "input": "x", "encoding_format": "int8" }),
            "encoding_format",
        ),
        (
            json!({ "model": "emb", "input": "x", "dimensions": 0 }),
            "dimensions",
        ),
        (
            json!({ "model": "emb", "input": "x", "dimensions": "8" }),
            "dimensions",
        ),
        (json!({ "model": "emb", "input": "x", "user": 7 }), "user"),
        (
            json!({ "model": "emb", "input": "x", "purpose": 7 }),
            "purpose",
        ),
        (json!({ "models": ["emb"], "input": "x" }), "models"),
    ];
    for (body, param) in cases {
        let response = embed(&server, &key, &body).await;
        assert_eq!(response.status(), 400, "{body}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["param"], param, "{body}: {error}");
        assert_eq!(error["error"]["type"], "invalid_request_error", "{body}");
    }
    let unknown = embed(&server, &key, &json!({ "model": "nope", "input": "x" })).await;
    assert_eq!(error_code(unknown, 404).await, "model_not_found");
    assert!(upstream.script.calls().is_empty());
}

#[tokio::test]
async fn an_embedding_is_audited_and_never_held_for_review() {
    let (upstream, server) = setup().await;
    let (_, key) = server.create_key(&["--rate-limit", "1000"]);
    let owner = login(&server).await;
    let served = embed(
        &server,
        &key,
        &json!({ "model": "emb", "input": "audit me", "purpose": "search index" }),
    )
    .await;
    let request_id = served.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(served.status(), 200);
    let audit = common::get_json(&server, &owner, "/api/v1/audit?limit=50").await;
    let entry = audit["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "inference" && e["target"] == request_id.as_str())
        .unwrap_or_else(|| panic!("no inference entry for {request_id}: {audit}"))
        .clone();
    assert_eq!(entry["details"]["model"], "emb");
    assert_eq!(entry["details"]["promptTokens"], 7);
    assert_eq!(entry["details"]["purpose"], "search index");

    // A policy that holds every answer: an embedding cannot be held.
    let policy = client()
        .put(server.url("/api/v1/policies"))
        .bearer_auth(&owner)
        .json(&json!({ "reviewMode": "all" }))
        .send()
        .await
        .unwrap();
    assert_eq!(policy.status(), 200);
    let reached = upstream.script.calls().len();
    let refused = embed(&server, &key, &json!({ "model": "emb", "input": "x" })).await;
    assert_eq!(error_code(refused, 422).await, "capability_unsupported");
    assert_eq!(upstream.script.calls().len(), reached);
}
