//! The Azure OpenAI provider kind, against a mock that checks what Azure
//! checks: the deployment URL, the `api-version` query and the `api-key`
//! header (and that no `Authorization` header is sent); chat, streams,
//! embeddings and images at the same pattern; the content filter's
//! refusals and finish reasons; retry decisions; the key kept out of
//! answers and logs; and `config check` naming missing fields.

mod common;

use std::process::Command;

use axum::Router;
use common::azure::{API_VERSION, Calls, SECRET, azure};
use common::{BIN, TestServer, chat_events, chat_json, chat_post, client, error_code, stderr};
use serde_json::{Value, json};

fn config(base: &str) -> String {
    let mut out = format!(
        "[[providers]]\nid = \"az\"\nkind = \"azure\"\nbase_url = \"{base}\"\napi_version = \"{API_VERSION}\"\n\
         api_key_env = \"TEST_AZURE_KEY\"\nmax_retries = 0\n\
         [[providers]]\nid = \"gone\"\nkind = \"azure\"\nbase_url = \"http://127.0.0.1:9\"\napi_version = \"{API_VERSION}\"\n\
         api_key_env = \"TEST_AZURE_KEY\"\nmax_retries = 0\n"
    );
    let model = |id: &str, provider: &str, upstream: &str, output: &str, pricing: &str| {
        format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{upstream}\"\ninput = [\"TEXT\"]\noutput = [\"{output}\"]\n\
             context_window = 128000\npricing = {pricing}\n"
        )
    };
    let tokens = "{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }";
    for (id, upstream) in [
        ("chat", "gpt-4o.eu"),
        ("filtered", "filtered"),
        ("finish-filtered", "finish-filtered"),
        ("busy", "busy"),
        ("down", "down"),
        ("bad", "bad"),
    ] {
        out.push_str(&model(id, "az", upstream, "TEXT", tokens));
    }
    out.push_str(&model("unreachable", "gone", "gpt-4o", "TEXT", tokens));
    out.push_str(&model("emb", "az", "embed-small", "EMBEDDING", tokens));
    out.push_str(&model(
        "img",
        "az",
        "dalle",
        "IMAGE",
        "{ unit = \"per_image\", per_image = 0.04 }",
    ));
    out
}

async fn setup() -> (Calls, TestServer, String, tokio::task::JoinHandle<()>) {
    let calls = Calls::default();
    let app = Router::new().fallback(azure).with_state(calls.clone());
    let (addr, task) = common::serve(app).await;
    let server = TestServer::start_with(
        Some(&config(&format!("http://{addr}"))),
        &[("TEST_AZURE_KEY", SECRET), ("TOLLGATE_LOG_LEVEL", "debug")],
    );
    let (_, key) = server.create_key(&["--rate-limit", "1000"]);
    (calls, server, key, task)
}

fn hi(model: &str) -> Value {
    json!({ "model": model, "messages": [{ "role": "user", "content": "hi" }] })
}

#[tokio::test]
async fn chat_goes_to_the_deployment_url_with_the_api_key_header_and_no_authorization() {
    let (calls, server, key, _task) = setup().await;
    let answer = chat_json(&server, &key, hi("chat")).await;
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "hello from gpt-4o.eu"
    );
    assert_eq!(answer["usage"]["prompt_tokens"], 12);
    let call = &calls.all()[0];
    assert_eq!(call.path, "/openai/deployments/gpt-4o.eu/chat/completions");
    assert_eq!(call.query.as_deref(), Some("api-version=2024-10-21"));
    assert_eq!(call.headers["api-key"], SECRET);
    assert!(call.headers.get("authorization").is_none());
    assert_eq!(call.body["messages"][0]["content"], "hi");
}

#[tokio::test]
async fn a_stream_relays_azure_chunks_and_usage() {
    let (calls, server, key, _task) = setup().await;
    let events = chat_events(&server, &key, hi("chat")).await;
    let text: String = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "hello from gpt-4o.eu");
    assert_eq!(events.last().unwrap(), &json!("[DONE]"));
    assert!(
        events.iter().any(|e| e["usage"]["completion_tokens"] == 4),
        "{events:?}"
    );
    let call = &calls.all()[0];
    assert_eq!(call.body["stream"], true);
    assert_eq!(call.path, "/openai/deployments/gpt-4o.eu/chat/completions");
}

#[tokio::test]
async fn embeddings_and_images_follow_the_deployment_pattern() {
    let (calls, server, key, _task) = setup().await;
    let response = client()
        .post(server.url("/v1/embeddings"))
        .bearer_auth(&key)
        .json(&json!({ "model": "emb", "input": "hello" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["data"][0]["embedding"], json!([0.25, 0.5]));
    let response = client()
        .post(server.url("/v1/images/generations"))
        .bearer_auth(&key)
        .json(&json!({ "model": "img", "prompt": "a boat", "response_format": "b64_json" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let paths: Vec<(String, Option<String>)> =
        calls.all().into_iter().map(|c| (c.path, c.query)).collect();
    let version = Some(format!("api-version={API_VERSION}"));
    assert_eq!(
        paths,
        [
            (
                "/openai/deployments/embed-small/embeddings".to_owned(),
                version.clone()
            ),
            (
                "/openai/deployments/dalle/images/generations".to_owned(),
                version
            ),
        ]
    );
    assert!(
        calls
            .all()
            .iter()
            .all(|c| c.headers["api-key"] == SECRET && c.headers.get("authorization").is_none())
    );
}

#[tokio::test]
async fn a_content_filter_refusal_is_content_filtered_and_final() {
    let (calls, server, key, _task) = setup().await;
    // The chain's second model is never tried: the prompt itself was refused.
    let chain = json!({ "models": ["filtered", "chat"], "messages": [{ "role": "user", "content": "hi" }] });
    let response = chat_post(&server, &key, &chain).await;
    assert_eq!(error_code(response, 400).await, "content_filtered");
    assert_eq!(calls.to("filtered"), 1);
    assert_eq!(calls.to("gpt-4o.eu"), 0);
    // So is a streamed one: the refusal comes before any byte.
    let mut streamed = hi("filtered");
    streamed["stream"] = json!(true);
    let response = chat_post(&server, &key, &streamed).await;
    assert_eq!(error_code(response, 400).await, "content_filtered");
    // A completion the filter cut keeps its finish reason.
    let answer = chat_json(&server, &key, hi("finish-filtered")).await;
    assert_eq!(answer["choices"][0]["finish_reason"], "content_filter");
    let events = chat_events(&server, &key, hi("finish-filtered")).await;
    assert!(
        events
            .iter()
            .any(|e| e["choices"][0]["finish_reason"] == "content_filter"),
        "{events:?}"
    );
}

#[tokio::test]
async fn throttling_and_outages_fall_back_and_a_bad_request_does_not() {
    let (calls, server, key, _task) = setup().await;
    let chain = |models: &[&str]| json!({ "models": models, "messages": [{ "role": "user", "content": "hi" }] });
    let served = chat_json(&server, &key, chain(&["busy", "down", "chat"])).await;
    assert_eq!(served["model"], "chat");
    let attempts = &served["explainability"]["attempts"];
    assert_eq!(attempts[0]["status"], "429");
    assert_eq!(attempts[1]["status"], "503");

    let response = chat_post(&server, &key, &chain(&["bad", "chat"])).await;
    assert_eq!(error_code(response, 400).await, "invalid_request");
    assert_eq!(calls.to("bad"), 1);
    assert_eq!(calls.to("gpt-4o.eu"), 1, "only the first chain reached it");
}

#[tokio::test]
async fn the_api_key_never_appears_in_answers_or_logs() {
    let (_calls, server, key, _task) = setup().await;
    let mut bodies = Vec::new();
    for model in ["filtered", "bad", "down", "unreachable"] {
        let response = chat_post(&server, &key, &hi(model)).await;
        assert!(!response.status().is_success(), "{model}");
        bodies.push(response.text().await.unwrap());
    }
    bodies.push(
        chat_post(&server, &key, &hi("chat"))
            .await
            .text()
            .await
            .unwrap(),
    );
    for body in &bodies {
        assert!(!body.contains(SECRET), "{body}");
    }
    let log = server.log();
    assert!(
        log.contains("debug") || log.contains("DEBUG"),
        "the log is at debug level"
    );
    assert!(!log.contains(SECRET), "the api-key reached the log");
}

#[test]
fn config_check_names_the_missing_azure_fields() {
    let dir = tempfile::tempdir().unwrap();
    let good = "[[providers]]\nid = \"az\"\nkind = \"azure\"\nbase_url = \"https://res.openai.azure.com\"\n\
                api_version = \"2024-10-21\"\napi_key_env = \"AZURE_OPENAI_API_KEY\"\n\
                [[models]]\nid = \"gpt-4o\"\nprovider = \"az\"\nupstream = \"gpt-4o-eu\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
                context_window = 128000\npricing = { unit = \"per_token\", input_per_million = 2.5, output_per_million = 10.0 }\n";
    let check = |text: &str| {
        let path = dir.path().join("tollgate.toml");
        std::fs::write(&path, text).unwrap();
        Command::new(BIN)
            .args(["config", "check"])
            .arg(&path)
            .output()
            .unwrap()
    };
    let ok = check(good);
    assert!(ok.status.success(), "{}", stderr(&ok));
    for (text, key) in [
        (
            good.replace("api_version = \"2024-10-21\"\n", ""),
            "providers[0].api_version",
        ),
        (
            good.replace("api_key_env = \"AZURE_OPENAI_API_KEY\"\n", ""),
            "providers[0].api_key_env",
        ),
        (
            good.replace("base_url = \"https://res.openai.azure.com\"\n", ""),
            "providers[0].base_url",
        ),
        (
            good.replace("api_version", "project"),
            "providers[0].project",
        ),
    ] {
        let refused = check(&text);
        assert_eq!(refused.status.code(), Some(2), "{text}");
        let message = stderr(&refused);
        assert!(message.contains(key), "{key}: {message}");
    }
}
