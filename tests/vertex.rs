//! The Vertex AI provider kind, against a mock that checks what Google
//! checks: the service account's signed grant (RS256 against the
//! account's public key; iss, scope, aud, iat and exp) at its token_uri,
//! the bearer token on every call, the publisher paths, and the Anthropic
//! body Vertex takes (`anthropic_version`, no `model`). Tokens are reused
//! until five minutes before they expire and exchanged once however many
//! requests wait; errors map to the right retry decision; secrets stay out
//! of answers and logs; `config check` validates the settings.

mod common;

use std::process::Command;

use common::vertex::{CLIENT_EMAIL, Google, KEY_PEM, LOCATION, PROJECT, STATIC_TOKEN, key_file};
use common::{BIN, TestServer, chat_events, chat_json, chat_post, client, error_code, stderr};
use serde_json::{Value, json};

struct Setup {
    google: Google,
    server: TestServer,
    key: String,
    _task: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

async fn setup(lifetimes: &[u64]) -> Setup {
    let (google, base, task) = common::vertex::start(lifetimes).await;
    let dir = tempfile::tempdir().unwrap();
    let good = key_file(dir.path(), "sa.json", &format!("{base}/token"));
    let refused = key_file(dir.path(), "refused.json", &format!("{base}/token-refused"));
    let provider = |id: &str, credentials: String| {
        format!(
            "[[providers]]\nid = \"{id}\"\nkind = \"vertex\"\nbase_url = \"{base}\"\nproject = \"{PROJECT}\"\n\
             location = \"{LOCATION}\"\n{credentials}\nmax_retries = 0\n"
        )
    };
    let mut config = provider("vx", format!("credentials_file = \"{}\"", good.display()));
    config.push_str(&provider(
        "vx-refused",
        format!("credentials_file = \"{}\"", refused.display()),
    ));
    config.push_str(&provider(
        "vx-static",
        "access_token_env = \"TEST_VERTEX_TOKEN\"".into(),
    ));
    let model = |id: &str, provider: &str, upstream: &str, output: &str| {
        format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{upstream}\"\ninput = [\"TEXT\"]\noutput = [\"{output}\"]\n\
             context_window = 128000\npricing = {{ unit = \"per_token\", input_per_million = 1000.0, output_per_million = 2000.0 }}\n"
        )
    };
    for name in [
        "gemini-2.0-flash",
        "gemini-503",
        "gemini-400",
        "claude-sonnet-4@20250514",
        "claude-busy",
    ] {
        config.push_str(&model(name, "vx", name, "TEXT"));
    }
    config.push_str(&model("refused", "vx-refused", "gemini-2.0-flash", "TEXT"));
    config.push_str(&model("static", "vx-static", "gemini-2.0-flash", "TEXT"));
    config.push_str(&model("embed", "vx", "text-embedding-005", "EMBEDDING"));
    let server = TestServer::start_with(
        Some(&config),
        &[
            ("TEST_VERTEX_TOKEN", STATIC_TOKEN),
            ("TOLLGATE_LOG_LEVEL", "debug"),
        ],
    );
    let (_, key) = server.create_key(&["--rate-limit", "1000"]);
    Setup {
        google,
        server,
        key,
        _task: task,
        _dir: dir,
    }
}

fn hi(model: &str) -> Value {
    json!({ "model": model, "messages": [{ "role": "user", "content": "hi" }] })
}

fn bearer(n: usize) -> Option<String> {
    Some(format!("Bearer ya29.test-token-{n}"))
}

#[tokio::test]
async fn the_token_is_reused_until_five_minutes_before_expiry_then_refreshed() {
    // The first token expires in 200 s: inside the five-minute margin, so
    // the next request exchanges again; the second lasts an hour.
    let s = setup(&[200, 3600]).await;
    for _ in 0..4 {
        chat_json(&s.server, &s.key, hi("gemini-2.0-flash")).await;
    }
    let used: Vec<Option<String>> = s
        .google
        .calls()
        .into_iter()
        .map(|c| c.authorization)
        .collect();
    assert_eq!(used, [bearer(1), bearer(2), bearer(2), bearer(2)]);
    assert_eq!(s.google.grants(), 2);
    let claims = &s.google.inner.lock().unwrap().grants[0];
    assert_eq!(claims["iss"], CLIENT_EMAIL);
    assert_eq!(
        claims["scope"],
        "https://www.googleapis.com/auth/cloud-platform"
    );
}

#[tokio::test]
async fn concurrent_requests_on_a_cold_cache_make_one_exchange() {
    let s = setup(&[]).await;
    let body = hi("gemini-2.0-flash");
    let requests = (0..8).map(|_| chat_post(&s.server, &s.key, &body));
    for response in futures::future::join_all(requests).await {
        assert_eq!(response.status(), 200);
    }
    assert_eq!(s.google.grants(), 1);
    assert!(
        s.google
            .calls()
            .iter()
            .all(|c| c.authorization == bearer(1))
    );
}

#[tokio::test]
async fn gemini_models_go_to_the_google_publisher_path() {
    let s = setup(&[]).await;
    let answer = chat_json(&s.server, &s.key, json!({ "model": "gemini-2.0-flash", "max_tokens": 50,
        "messages": [{ "role": "system", "content": "Be brief." }, { "role": "user", "content": "hi" }] })).await;
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "hello from gemini-2.0-flash"
    );
    assert_eq!(answer["usage"]["prompt_tokens"], 11);
    let call = &s.google.calls()[0];
    assert_eq!(
        call.path,
        "/v1/projects/test-project/locations/europe-west4/publishers/google/models/gemini-2.0-flash:generateContent"
    );
    assert_eq!(
        call.body,
        json!({ "contents": [{ "role": "user", "parts": [{ "text": "hi" }] }],
                "systemInstruction": { "parts": [{ "text": "Be brief." }] },
                "generationConfig": { "maxOutputTokens": 50 } })
    );
    let events = chat_events(&s.server, &s.key, hi("gemini-2.0-flash")).await;
    let text: String = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "hello from gemini-2.0-flash");
    assert!(
        events.iter().any(|e| e["usage"]["completion_tokens"] == 6),
        "{events:?}"
    );
    let call = &s.google.calls()[1];
    assert!(
        call.path
            .ends_with("/publishers/google/models/gemini-2.0-flash:streamGenerateContent")
    );
    assert_eq!(call.query.as_deref(), Some("alt=sse"));
}

#[tokio::test]
async fn claude_models_go_to_raw_predict_with_the_vertex_version_and_no_model() {
    let s = setup(&[]).await;
    let answer = chat_json(&s.server, &s.key, hi("claude-sonnet-4@20250514")).await;
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "hello from claude-sonnet-4@20250514"
    );
    assert_eq!(answer["usage"]["prompt_tokens"], 9);
    let call = &s.google.calls()[0];
    assert_eq!(
        call.path,
        "/v1/projects/test-project/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict"
    );
    assert_eq!(call.body["anthropic_version"], "vertex-2023-10-16");
    assert!(call.body.get("model").is_none());
    assert_eq!(
        call.body["messages"],
        json!([{ "role": "user", "content": [{ "type": "text", "text": "hi" }] }])
    );
    assert_eq!(call.authorization, bearer(1));

    let events = chat_events(&s.server, &s.key, hi("claude-sonnet-4@20250514")).await;
    let text: String = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "hello from claude-sonnet-4@20250514");
    assert_eq!(events.last().unwrap(), &json!("[DONE]"));
    let call = &s.google.calls()[1];
    assert!(call.path.ends_with(":streamRawPredict"), "{}", call.path);
    assert_eq!(call.body["stream"], true);
}

#[tokio::test]
async fn embeddings_go_to_predict_and_bill_the_token_count() {
    let s = setup(&[]).await;
    let response = client()
        .post(s.server.url("/v1/embeddings"))
        .bearer_auth(&s.key)
        .json(&json!({ "model": "embed", "input": ["one two three", "four"], "dimensions": 3 }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["data"][1]["embedding"], json!([1.0, 0.5, 0.0]));
    assert_eq!(answer["usage"]["prompt_tokens"], 40, "{answer}");
    let call = &s.google.calls()[0];
    assert!(
        call.path
            .ends_with("/publishers/google/models/text-embedding-005:predict")
    );
    assert_eq!(
        call.body,
        json!({ "instances": [{ "content": "one two three" }, { "content": "four" }],
                "parameters": { "outputDimensionality": 3 } })
    );
    // Token arrays cannot be embedded by Vertex: refused before any call.
    let response = client()
        .post(s.server.url("/v1/embeddings"))
        .bearer_auth(&s.key)
        .json(&json!({ "model": "embed", "input": [1, 2, 3] }))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(response, 400).await, "invalid_request");
    assert_eq!(s.google.calls().len(), 1);
}

#[tokio::test]
async fn outages_throttling_and_refused_grants_fall_back_and_a_bad_request_does_not() {
    let s = setup(&[]).await;
    let chain = |models: &[&str]| json!({ "models": models, "messages": [{ "role": "user", "content": "hi" }] });
    let served = chat_json(
        &s.server,
        &s.key,
        chain(&["gemini-503", "claude-busy", "refused", "gemini-2.0-flash"]),
    )
    .await;
    assert_eq!(served["model"], "gemini-2.0-flash");
    let attempts = &served["explainability"]["attempts"];
    assert_eq!(attempts[0]["status"], "503");
    assert_eq!(attempts[1]["status"], "429");
    // The refused grant is the provider's credential problem: a 401.
    assert_eq!(attempts[2]["status"], "401");

    let response = chat_post(
        &s.server,
        &s.key,
        &chain(&["gemini-400", "claude-sonnet-4@20250514"]),
    )
    .await;
    assert_eq!(error_code(response, 400).await, "invalid_request");
    assert_eq!(s.google.calls_to("gemini-400"), 1);
    assert_eq!(s.google.calls_to("claude-sonnet-4@20250514"), 0);
}

#[tokio::test]
async fn an_access_token_from_the_environment_is_sent_as_it_is() {
    let s = setup(&[]).await;
    chat_json(&s.server, &s.key, hi("static")).await;
    assert_eq!(
        s.google.calls()[0].authorization,
        Some(format!("Bearer {STATIC_TOKEN}"))
    );
    assert_eq!(s.google.grants(), 0);
}

#[tokio::test]
async fn the_key_and_tokens_never_reach_answers_or_logs() {
    let s = setup(&[]).await;
    let mut bodies = Vec::new();
    for model in [
        "gemini-2.0-flash",
        "gemini-400",
        "gemini-503",
        "refused",
        "static",
    ] {
        bodies.push(
            chat_post(&s.server, &s.key, &hi(model))
                .await
                .text()
                .await
                .unwrap(),
        );
    }
    // A line from the middle of the private key.
    let key_line = KEY_PEM.lines().nth(5).unwrap();
    let log = s.server.log();
    for text in bodies.iter().chain([&log]) {
        assert!(!text.contains("ya29."), "a token leaked: {text}");
        assert!(!text.contains(key_line), "the private key leaked: {text}");
    }
    assert!(s.google.grants() >= 1);
}

#[tokio::test]
async fn the_registry_lists_a_vertex_provider_at_its_location() {
    let s = setup(&[]).await;
    let owner = common::login(&s.server).await;
    let registry = common::get_json(&s.server, &owner, "/api/v1/sub-processors").await;
    let entries = registry["subProcessors"].as_array().unwrap();
    let vx = entries
        .iter()
        .find(|e| e["name"] == "vx")
        .expect("vx listed");
    assert_eq!(vx["location"], "Google Cloud europe-west4");
}

#[test]
fn config_check_validates_the_vertex_settings() {
    let dir = tempfile::tempdir().unwrap();
    let sa = key_file(dir.path(), "sa.json", "https://oauth2.googleapis.com/token");
    let good = format!(
        "[[providers]]\nid = \"vx\"\nkind = \"vertex\"\nproject = \"p\"\nlocation = \"europe-west4\"\ncredentials_file = \"{}\"\n\
         [[models]]\nid = \"g\"\nprovider = \"vx\"\nupstream = \"gemini-2.0-flash\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
         context_window = 1000000\npricing = {{ unit = \"per_token\", input_per_million = 0.1, output_per_million = 0.4 }}\n",
        sa.display()
    );
    let check = |text: &str| {
        let path = dir.path().join("tollgate.toml");
        std::fs::write(&path, text).unwrap();
        Command::new(BIN)
            .args(["config", "check"])
            .arg(&path)
            .output()
            .unwrap()
    };
    let ok = check(&good);
    assert!(ok.status.success(), "{}", stderr(&ok));

    let not_sa = dir.path().join("user.json");
    std::fs::write(
        &not_sa,
        json!({ "type": "authorized_user", "private_key": KEY_PEM }).to_string(),
    )
    .unwrap();
    let bad_key = dir.path().join("badkey.json");
    std::fs::write(&bad_key, json!({ "type": "service_account", "client_email": CLIENT_EMAIL,
        "token_uri": "https://oauth2.googleapis.com/token", "private_key": "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n" }).to_string()).unwrap();
    let sa_line = format!("credentials_file = \"{}\"", sa.display());
    let cases = [
        (
            good.replace("project = \"p\"\n", ""),
            "providers[0].project",
            "needs project",
        ),
        (
            good.replace("location = \"europe-west4\"\n", ""),
            "providers[0].location",
            "needs location",
        ),
        (
            good.replace(&format!("{sa_line}\n"), ""),
            "providers[0].credentials_file",
            "access_token_env",
        ),
        (
            good.replace(&sa_line, "credentials_file = \"/nonexistent/sa.json\""),
            "providers[0].credentials_file",
            "cannot read",
        ),
        (
            good.replace(
                &sa_line,
                &format!("credentials_file = \"{}\"", not_sa.display()),
            ),
            "providers[0].credentials_file",
            "`type`",
        ),
        (
            good.replace(
                &sa_line,
                &format!("credentials_file = \"{}\"", bad_key.display()),
            ),
            "providers[0].credentials_file",
            "RSA private key",
        ),
        (
            good.replace("location = \"europe-west4\"", "location = \"europe west4\""),
            "providers[0].location",
            "location",
        ),
        (
            good.replace("project = \"p\"", "project = \"p\"\napi_version = \"1\""),
            "providers[0].api_version",
            "not a setting",
        ),
        (
            good.replace(
                "upstream = \"gemini-2.0-flash\"",
                "upstream = \"models/gemini\"",
            ),
            "models[0].upstream",
            "path segment",
        ),
    ];
    let key_line = KEY_PEM.lines().nth(5).unwrap();
    for (text, key, why) in cases {
        let refused = check(&text);
        assert_eq!(refused.status.code(), Some(2), "{text}");
        let message = stderr(&refused);
        assert!(
            message.contains(key) && message.contains(why),
            "{key} {why}: {message}"
        );
        assert!(!message.contains(key_line), "{message}");
    }
}

#[tokio::test]
async fn native_generate_content_passes_through_to_a_vertex_gemini_model() {
    let s = setup(&[]).await;
    let body = json!({ "contents": [{ "role": "user", "parts": [{ "text": "hi" }] }], "generationConfig": { "temperature": 0.2 } });
    let response = client()
        .post(
            s.server
                .url("/v1beta/models/gemini-2.0-flash:generateContent"),
        )
        .header("x-goog-api-key", &s.key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(
        answer["candidates"][0]["content"]["parts"][0]["text"],
        "hello from gemini-2.0-flash"
    );
    let call = &s.google.calls()[0];
    assert_eq!(
        call.path,
        "/v1/projects/test-project/locations/europe-west4/publishers/google/models/gemini-2.0-flash:generateContent"
    );
    assert_eq!(call.body, body, "the body is forwarded as it is");
    assert_eq!(call.authorization, bearer(1));

    let response = client()
        .post(
            s.server
                .url("/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"),
        )
        .header("x-goog-api-key", &s.key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    assert!(text.contains("from gemini-2.0-flash"), "{text}");
    let call = &s.google.calls()[1];
    assert!(call.path.ends_with(":streamGenerateContent"));
    assert_eq!(call.query.as_deref(), Some("alt=sse"));

    // A Claude model on Vertex does not take generate-content.
    let response = client()
        .post(
            s.server
                .url("/v1beta/models/claude-sonnet-4@20250514:generateContent"),
        )
        .header("x-goog-api-key", &s.key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(s.google.calls().len(), 2);
}
