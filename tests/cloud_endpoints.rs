//! The new endpoints on the cloud provider kinds (issue 23, item 4):
//! `/v1/messages` and `/v1/responses`, plain and streamed, on an Azure
//! deployment, a Bedrock model (Converse) and Vertex's Gemini and Claude
//! models; `/v1/embeddings` on Azure and Vertex (and Bedrock's clear
//! refusal); `/v1/messages/count_tokens` counted locally, with no call
//! upstream. Each cloud is the scripted mock its own tests use, verifying
//! what the real service verifies: Azure's deployment path, `api-version`
//! and `api-key`; Bedrock's SigV4 signature, recomputed from the request;
//! Vertex's jwt-bearer grant, checked against the account's public key,
//! and the bearer token it issued.

mod common;

use common::azure::{API_VERSION, Calls, SECRET as AZURE_KEY, azure};
use common::bedrock::{Bedrock, Expect};
use common::vertex::{Google, LOCATION, PROJECT, key_file};
use common::{TestServer, client};
use serde_json::{Value, json};

const KEY_ID: &str = "AKIDTESTCLOUDEP1";
const AWS_SECRET: &str = "cloud-endpoints/Secret+0123456789abcdefEXAMPLE";
const CLAUDE_BEDROCK: &str = "anthropic.claude-3-5-sonnet-20240620-v1:0";
const CLAUDE_VERTEX: &str = "claude-sonnet-4@20250514";

struct Setup {
    azure: Calls,
    bedrock: Bedrock,
    google: Google,
    server: TestServer,
    key: String,
    _tasks: Vec<tokio::task::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

fn model(id: &str, provider: &str, upstream: &str, output: &str) -> String {
    format!(
        "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{upstream}\"\ninput = [\"TEXT\"]\noutput = [\"{output}\"]\n\
         context_window = 128000\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
    )
}

async fn setup() -> Setup {
    let (azure_calls, azure_addr, azure_task) = {
        let calls = Calls::default();
        let app = axum::Router::new()
            .fallback(azure)
            .with_state(calls.clone());
        let (addr, task) = common::serve(app).await;
        (calls, addr, task)
    };
    let bedrock = Bedrock::start(Expect {
        access_key_id: KEY_ID.into(),
        secret_access_key: AWS_SECRET.into(),
        session_token: None,
        region: "eu-central-1".into(),
    })
    .await;
    let (google, google_base, google_task) = common::vertex::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let account = key_file(dir.path(), "sa.json", &format!("{google_base}/token"));
    let mut config = format!(
        "[[providers]]\nid = \"az\"\nkind = \"azure\"\nbase_url = \"http://{azure_addr}\"\napi_version = \"{API_VERSION}\"\n\
         api_key_env = \"TEST_AZURE_KEY\"\nmax_retries = 0\n\
         [[providers]]\nid = \"aws\"\nkind = \"bedrock\"\nregion = \"eu-central-1\"\nbase_url = \"{}\"\nmax_retries = 0\n\
         [[providers]]\nid = \"vx\"\nkind = \"vertex\"\nbase_url = \"{google_base}\"\nproject = \"{PROJECT}\"\n\
         location = \"{LOCATION}\"\ncredentials_file = \"{}\"\nmax_retries = 0\n",
        bedrock.base_url,
        account.display()
    );
    for (id, provider, upstream, output) in [
        ("az-chat", "az", "gpt-4o.eu", "TEXT"),
        ("az-embed", "az", "embed-small", "EMBEDDING"),
        ("br-claude", "aws", CLAUDE_BEDROCK, "TEXT"),
        (
            "br-embed",
            "aws",
            "amazon.titan-embed-text-v2:0",
            "EMBEDDING",
        ),
        ("vx-gemini", "vx", "gemini-2.0-flash", "TEXT"),
        ("vx-claude", "vx", CLAUDE_VERTEX, "TEXT"),
        ("vx-embed", "vx", "text-embedding-005", "EMBEDDING"),
    ] {
        config.push_str(&model(id, provider, upstream, output));
    }
    let server = TestServer::start_with(
        Some(&config),
        &[
            ("TEST_AZURE_KEY", AZURE_KEY),
            ("AWS_ACCESS_KEY_ID", KEY_ID),
            ("AWS_SECRET_ACCESS_KEY", AWS_SECRET),
        ],
    );
    let (_, key) = server.create_key(&["--rate-limit", "10000"]);
    Setup {
        azure: azure_calls,
        bedrock,
        google,
        server,
        key,
        _tasks: vec![azure_task, google_task],
        _dir: dir,
    }
}

impl Setup {
    async fn post(&self, path: &str, body: &Value) -> reqwest::Response {
        client()
            .post(self.server.url(path))
            .header("x-api-key", &self.key)
            .header("anthropic-version", "2023-06-01")
            .json(body)
            .send()
            .await
            .unwrap()
    }

    /// Upstream calls so far: Azure, Bedrock, Vertex (token grants aside).
    fn upstream_calls(&self) -> (usize, usize, usize) {
        (
            self.azure.all().len(),
            self.bedrock.calls().len(),
            self.google.calls().len(),
        )
    }

    /// Checks the last call reached `model`'s cloud as that cloud requires,
    /// at `method` (Azure's operation, Vertex's method, Bedrock's action).
    fn assert_last_call(&self, model: &str, method: &str) {
        match model {
            "az-chat" | "az-embed" => {
                let call = self.azure.all().pop().expect("a call to Azure");
                let deployment = if model == "az-chat" {
                    "gpt-4o.eu"
                } else {
                    "embed-small"
                };
                assert_eq!(
                    call.path,
                    format!("/openai/deployments/{deployment}/{method}")
                );
                assert_eq!(
                    call.query.as_deref(),
                    Some(format!("api-version={API_VERSION}").as_str())
                );
                assert_eq!(call.headers["api-key"], AZURE_KEY);
                assert!(!call.headers.contains_key("authorization"));
            }
            "br-claude" => {
                let call = self.bedrock.calls().pop().expect("a call to Bedrock");
                assert_eq!(call.refused, None, "the SigV4 signature verifies");
                assert_eq!(call.model, CLAUDE_BEDROCK);
                assert!(call.path.ends_with(&format!("/{method}")), "{}", call.path);
            }
            _ => {
                let call = self.google.calls().pop().expect("a call to Vertex");
                let (publisher, upstream) = match model {
                    "vx-claude" => ("anthropic", CLAUDE_VERTEX),
                    "vx-embed" => ("google", "text-embedding-005"),
                    _ => ("google", "gemini-2.0-flash"),
                };
                assert_eq!(
                    call.path,
                    format!(
                        "/v1/projects/{PROJECT}/locations/{LOCATION}/publishers/{publisher}/models/{upstream}:{method}"
                    )
                );
                // A token the mock issued for a verified grant.
                assert_eq!(
                    call.authorization.as_deref(),
                    Some("Bearer ya29.test-token-1")
                );
                assert_eq!(self.google.grants(), 1, "one grant, reused");
            }
        }
    }
}

/// The events of an SSE stream, each `data:` checked against its `event:`.
async fn events(response: reqwest::Response) -> Vec<Value> {
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.unwrap();
    let mut events = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(event) = line.strip_prefix("event: ") {
            name = Some(event.to_owned());
        } else if let Some(data) = line.strip_prefix("data: ") {
            let event: Value = serde_json::from_str(data).unwrap();
            assert_eq!(name.take().as_deref(), event["type"].as_str(), "{text}");
            events.push(event);
        }
    }
    events
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().filter_map(|e| e["type"].as_str()).collect()
}

fn joined<'a>(events: &'a [Value], kind: &str, field: impl Fn(&'a Value) -> &'a Value) -> String {
    events
        .iter()
        .filter(|e| e["type"] == kind)
        .filter_map(|e| field(e).as_str())
        .collect()
}

/// What each chat model's mock answers, and the chat method it is reached at
/// (plain, stream).
const CHAT_MODELS: [(&str, &str, &str, &str); 4] = [
    (
        "az-chat",
        "hello from gpt-4o.eu",
        "chat/completions",
        "chat/completions",
    ),
    (
        "br-claude",
        "Hello from Bedrock",
        "converse",
        "converse-stream",
    ),
    (
        "vx-gemini",
        "hello from gemini-2.0-flash",
        "generateContent",
        "streamGenerateContent",
    ),
    (
        "vx-claude",
        "hello from claude-sonnet-4@20250514",
        "rawPredict",
        "streamRawPredict",
    ),
];

#[tokio::test]
async fn messages_on_every_cloud_kind_are_answered_as_messages_plain_and_streamed() {
    let s = setup().await;
    for (model, text, plain, stream) in CHAT_MODELS {
        let ask = json!({ "model": model, "max_tokens": 64, "system": "Be brief.",
                          "messages": [{ "role": "user", "content": "hi" }] });
        let response = s.post("/v1/messages", &ask).await;
        assert_eq!(response.status(), 200, "{model}");
        let message: Value = response.json().await.unwrap();
        assert_eq!(message["type"], "message", "{model}: {message}");
        // The passthrough relays Vertex's answer as sent, which names the upstream model.
        let named = if model == "vx-claude" {
            CLAUDE_VERTEX
        } else {
            model
        };
        assert_eq!(message["model"], named, "{model}");
        assert_eq!(message["content"][0]["text"], text, "{model}");
        assert_eq!(message["stop_reason"], "end_turn", "{model}");
        assert!(message["usage"]["output_tokens"].as_u64().unwrap() > 0);
        s.assert_last_call(model, plain);

        let mut streamed = ask.clone();
        streamed["stream"] = json!(true);
        let events = events(s.post("/v1/messages", &streamed).await).await;
        let kinds = kinds(&events);
        assert_eq!(kinds.first(), Some(&"message_start"), "{model}: {kinds:?}");
        assert_eq!(kinds.last(), Some(&"message_stop"), "{model}: {kinds:?}");
        assert_eq!(
            joined(&events, "content_block_delta", |e| &e["delta"]["text"]),
            text,
            "{model}"
        );
        s.assert_last_call(model, stream);
    }
}

#[tokio::test]
async fn messages_on_a_claude_model_on_vertex_pass_the_body_through_to_raw_predict() {
    let s = setup().await;
    // Fields the chat translation has no place for reach Vertex as sent.
    let ask = json!({ "model": "vx-claude", "max_tokens": 64, "top_k": 5,
                      "metadata": { "user_id": "u-1" }, "system": "Be brief.",
                      "messages": [{ "role": "user", "content": "hi" }] });
    let response = s.post("/v1/messages", &ask).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("x-tollgate-cost"));
    let message: Value = response.json().await.unwrap();
    assert_eq!(
        message["id"], "msg_vrtx_1",
        "Vertex's own answer: {message}"
    );
    s.assert_last_call("vx-claude", "rawPredict");
    let mut expected = ask.clone();
    expected.as_object_mut().unwrap().remove("model");
    expected["anthropic_version"] = json!("vertex-2023-10-16");
    assert_eq!(s.google.calls().pop().unwrap().body, expected);

    let mut streamed = ask.clone();
    streamed["stream"] = json!(true);
    let events = events(s.post("/v1/messages", &streamed).await).await;
    assert_eq!(events[0]["message"]["id"], "msg_vrtx_2");
    assert_eq!(kinds(&events).last(), Some(&"message_stop"));
    s.assert_last_call("vx-claude", "streamRawPredict");
    let call = s.google.calls().pop().unwrap();
    assert_eq!(call.body["stream"], true);
    assert_eq!(call.body["top_k"], 5);
    assert!(call.body.get("model").is_none());

    // No `messages`: refused in Anthropic's shape before any call.
    let calls = s.upstream_calls();
    let bad = s
        .post(
            "/v1/messages",
            &json!({ "model": "vx-claude", "max_tokens": 64 }),
        )
        .await;
    assert_eq!(bad.status(), 400);
    let body: Value = bad.json().await.unwrap();
    assert_eq!(body["type"], "error", "{body}");
    assert_eq!(s.upstream_calls(), calls);
    // What the model itself refuses is relayed as Vertex sent it.
    let refused = s
        .post(
            "/v1/messages",
            &json!({ "model": "vx-claude", "max_tokens": 64, "messages": [] }),
        )
        .await;
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");
}

#[tokio::test]
async fn responses_on_every_cloud_kind_are_translated_plain_and_streamed() {
    let s = setup().await;
    for (model, text, plain, stream) in CHAT_MODELS {
        let ask = json!({ "model": model, "instructions": "Be brief.", "input": "hi" });
        let response = s.post("/v1/responses", &ask).await;
        assert_eq!(response.status(), 200, "{model}");
        let answer: Value = response.json().await.unwrap();
        assert_eq!(answer["object"], "response", "{model}: {answer}");
        assert_eq!(answer["status"], "completed", "{model}");
        let output: String = answer["output"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"] == "message")
            .flat_map(|i| i["content"].as_array().unwrap().iter())
            .filter_map(|p| p["text"].as_str())
            .collect();
        assert_eq!(output, text, "{model}");
        assert!(answer["usage"]["output_tokens"].as_u64().unwrap() > 0);
        s.assert_last_call(model, plain);

        let mut streamed = ask.clone();
        streamed["stream"] = json!(true);
        let events = events(s.post("/v1/responses", &streamed).await).await;
        assert_eq!(
            kinds(&events).last(),
            Some(&"response.completed"),
            "{model}"
        );
        assert_eq!(
            joined(&events, "response.output_text.delta", |e| &e["delta"]),
            text,
            "{model}"
        );
        s.assert_last_call(model, stream);
    }
}

#[tokio::test]
async fn embeddings_reach_azure_and_vertex_and_bedrock_is_refused_by_name() {
    let s = setup().await;
    for (model, method) in [("az-embed", "embeddings"), ("vx-embed", "predict")] {
        let response = s
            .post(
                "/v1/embeddings",
                &json!({ "model": model, "input": "two words" }),
            )
            .await;
        assert_eq!(response.status(), 200, "{model}");
        let answer: Value = response.json().await.unwrap();
        assert_eq!(answer["object"], "list", "{model}: {answer}");
        let vector = answer["data"][0]["embedding"].as_array().unwrap();
        assert_eq!(vector.len(), 2, "{model}");
        s.assert_last_call(model, method);
    }
    let before = s.upstream_calls();
    let refused = s
        .post(
            "/v1/embeddings",
            &json!({ "model": "br-embed", "input": "two words" }),
        )
        .await;
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("bedrock") && message.contains("no embeddings endpoint"),
        "{body}"
    );
    assert_eq!(s.upstream_calls(), before, "nothing was sent");
}

#[tokio::test]
async fn count_tokens_on_cloud_models_is_a_local_estimate_with_no_upstream_call() {
    let s = setup().await;
    let ask = |model: &str, text: &str| {
        json!({ "model": model, "system": "Be brief.",
                "messages": [{ "role": "user", "content": text }] })
    };
    for (model, ..) in CHAT_MODELS {
        let short = s.post("/v1/messages/count_tokens", &ask(model, "hi")).await;
        assert_eq!(short.status(), 200, "{model}");
        let short = short.json::<Value>().await.unwrap()["input_tokens"]
            .as_u64()
            .unwrap();
        let long = s
            .post(
                "/v1/messages/count_tokens",
                &ask(model, &"a longer question about the weather ".repeat(20)),
            )
            .await;
        let long = long.json::<Value>().await.unwrap()["input_tokens"]
            .as_u64()
            .unwrap();
        assert!(short > 0 && long > short + 100, "{model}: {short} {long}");
    }
    assert_eq!(s.upstream_calls(), (0, 0, 0), "counted without a call");
}

#[tokio::test]
async fn bad_requests_on_cloud_models_are_400_in_each_routes_shape_before_any_call() {
    let s = setup().await;
    for (model, ..) in CHAT_MODELS {
        // (The passthrough to Claude on Vertex leaves this to the model:
        // see messages_on_a_claude_model_on_vertex_pass_the_body_through_to_raw_predict.)
        if model == "vx-claude" {
            continue;
        }
        let empty = s
            .post(
                "/v1/messages",
                &json!({ "model": model, "max_tokens": 64, "messages": [] }),
            )
            .await;
        assert_eq!(empty.status(), 400, "{model}");
        let body: Value = empty.json().await.unwrap();
        assert_eq!(body["type"], "error", "Anthropic's shape: {body}");
        assert_eq!(body["error"]["type"], "invalid_request", "{body}");
    }
    for (model, ..) in CHAT_MODELS {
        let no_input = s.post("/v1/responses", &json!({ "model": model })).await;
        assert_eq!(no_input.status(), 400, "{model}");
        let body: Value = no_input.json().await.unwrap();
        assert!(
            body["error"]["message"].as_str().is_some(),
            "OpenAI's shape: {body}"
        );
        assert!(body.get("type").is_none(), "{body}");
    }
    assert_eq!(s.upstream_calls(), (0, 0, 0));
}

#[tokio::test]
async fn the_official_sdks_speak_messages_and_responses_to_cloud_models() {
    let s = setup().await;
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    assert!(
        python.exists(),
        "no .venv with the SDKs: run `bash .ci/test`, which installs them"
    );
    let output = tokio::process::Command::new(python)
        .arg(root.join("tests/sdk/anthropic_cloud.py"))
        .args([&s.server.base_url, &s.key])
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("ok"));
}

#[tokio::test]
async fn native_routes_a_cloud_kind_does_not_serve_are_400_before_any_call() {
    let s = setup().await;
    let hi = json!({ "contents": [{ "role": "user", "parts": [{ "text": "hi" }] }] });
    for (path, body) in [
        ("/v1beta/models/az-chat:generateContent", hi.clone()),
        ("/v1beta/models/br-claude:generateContent", hi.clone()),
        ("/v1beta/models/vx-claude:generateContent", hi.clone()),
        (
            "/v1/completions",
            json!({ "model": "az-chat", "prompt": "hi" }),
        ),
        (
            "/v1/completions",
            json!({ "model": "br-claude", "prompt": "hi" }),
        ),
        (
            "/v1/completions",
            json!({ "model": "vx-gemini", "prompt": "hi" }),
        ),
    ] {
        let response = client()
            .post(s.server.url(path))
            .bearer_auth(&s.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        assert_eq!(status, 400, "{path} {body}: {text}");
        assert!(
            text.contains("kind") || text.contains("provider"),
            "{path}: {text}"
        );
    }
    assert_eq!(s.upstream_calls(), (0, 0, 0));
}
