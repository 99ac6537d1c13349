//! The network edges a configuration or a tenant chooses (issue 20, items 3
//! and 8): upstream model names never rewrite the upstream URL, and
//! tenant-chosen targets (webhook URLs, remote images) never reach a
//! private address, however the address is written or routed.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::gemini::Gemini;
use common::upstream::Upstream;
use common::{BIN, TestServer, chat_json, chat_post, client, error_code, login, stderr};
use serde_json::{Value, json};

/// A configuration with one provider of `kind` and one model `m` whose
/// `upstream` is the TOML string `upstream` (written as TOML, escapes and
/// all).
fn one_model(kind: &str, base_url: &str, upstream: &str) -> String {
    let base = if kind == "mock" {
        String::new()
    } else {
        format!("base_url = \"{base_url}\"\n")
    };
    format!(
        "[[providers]]\nid = \"p\"\nkind = \"{kind}\"\n{base}\
         [[models]]\nid = \"m\"\nprovider = \"p\"\nupstream = {upstream}\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
         context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
    )
}

fn config_check(text: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tollgate.toml");
    std::fs::write(&path, text).unwrap();
    Command::new(BIN)
        .args(["config", "check"])
        .arg(&path)
        .output()
        .unwrap()
}

/// (provider kind, `upstream` as TOML) that must be refused.
const REFUSED_NAMES: &[(&str, &str)] = &[
    ("gemini", r#""x/../../other""#),
    ("gemini", r#""gemini-ok:generateContent?key=stolen""#),
    ("gemini", r#""gemini-ok#frag""#),
    ("gemini", r#""tunedModels/mine""#),
    ("gemini", r#""gemini-ok:countTokens""#),
    ("gemini", r#""gemini\\..\\admin""#),
    ("gemini", r#""gemini ok""#),
    ("openai", r#""../../admin""#),
    ("openai", r#""meta-llama/./x""#),
    ("openai", r#""gpt-4o?x=1""#),
    ("openai", r#""gpt-4o#x""#),
    ("openai", r#""gpt 4o""#),
    ("openai", r#""gpt-4o\t""#),
    ("openai", r#""gpt-4o\n""#),
    ("openai", r#""gpt\u0000""#),
    ("anthropic", r#""claude/../x""#),
    ("anthropic", r#""claude\u007f""#),
];

#[test]
fn config_check_refuses_upstream_names_that_would_rewrite_the_url() {
    for (kind, name) in REFUSED_NAMES {
        let text = one_model(kind, "https://upstream.example/v1", name);
        let refused = config_check(&text);
        let message = stderr(&refused);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{kind} {name} was accepted: {message}"
        );
        assert!(
            message.contains("models[0].upstream"),
            "{kind} {name}: {message}"
        );
    }
    // What providers really call their models stays accepted; the mock's
    // names are scripts that never leave the process.
    for (kind, name) in [
        ("openai", r#""meta-llama/Llama-3-8B""#),
        ("openai", r#""llama3:8b-instruct-q4_0""#),
        ("openai", r#""accounts/fireworks/models/llama-v3-8b""#),
        ("anthropic", r#""claude-3-5-sonnet-20241022""#),
        ("gemini", r#""gemini-2.0-flash""#),
        ("mock", r#""fixed:some text, with spaces""#),
    ] {
        let text = one_model(kind, "https://upstream.example/v1", name);
        let checked = config_check(&text);
        assert!(
            checked.status.success(),
            "{kind} {name} was refused: {}",
            stderr(&checked)
        );
    }
}

#[test]
fn serve_refuses_to_start_with_a_path_bound_upstream_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tollgate.toml");
    let text = one_model(
        "gemini",
        "https://generativelanguage.googleapis.com/v1beta",
        r#""x/../../other""#,
    );
    std::fs::write(&path, text).unwrap();
    let data = dir.path().join("data");
    let mut child = Command::new(BIN)
        .arg("--config")
        .arg(&path)
        .arg("--data-dir")
        .arg(&data)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A server that accepted the name would run until killed.
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("the server started with a refused upstream name");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let refused = child.wait_with_output().unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("models[0].upstream"));
    assert!(!data.exists(), "a refused start creates nothing");
}

/// A server with an OpenAI-compatible provider `up` (a scripted upstream)
/// and a Gemini provider `google` (a scripted generate-content upstream).
async fn two_providers() -> (Upstream, Gemini, TestServer) {
    let upstream = Upstream::start().await;
    let gemini = Gemini::start().await;
    let text = format!(
        "{}[[providers]]\nid = \"google\"\nkind = \"gemini\"\nbase_url = \"{}\"\n\
         [[models]]\nid = \"gemini-ok\"\nprovider = \"google\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
         context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n",
        common::upstream::catalogue(&upstream.base_url, &[("llama", "meta-llama/Llama-3-8B")]),
        gemini.base_url,
    );
    let server = TestServer::start_with(Some(&text), &[]);
    (upstream, gemini, server)
}

fn new_model(id: &str, provider: &str, upstream: &str) -> Value {
    json!({
        "id": id, "provider": provider, "upstream": upstream,
        "inputCapabilities": ["TEXT"], "outputCapabilities": ["TEXT"],
        "contextWindow": 8192,
        "pricing": { "unit": "per_token", "input_per_million": 1, "output_per_million": 2 },
    })
}

/// Asserts a 400 `invalid_request` whose `param` is `upstream` and whose
/// message names the field.
async fn refused_upstream(response: reqwest::Response, what: &str) {
    assert_eq!(response.status(), 400, "{what}");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_request", "{what}: {body}");
    assert_eq!(body["error"]["param"], "upstream", "{what}: {body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("upstream"),
        "{what}: {body}"
    );
}

#[tokio::test]
async fn the_dashboard_refuses_upstream_names_that_would_rewrite_the_url() {
    let (_upstream, gemini, server) = two_providers().await;
    let owner = login(&server).await;
    let post = |body: Value| {
        client()
            .post(server.url("/api/v1/models"))
            .bearer_auth(&owner)
            .json(&body)
            .send()
    };
    for (provider, name) in [
        ("google", "x/../../other"),
        ("google", "gemini-ok:generateContent?key=x"),
        ("google", "tunedModels/mine"),
        ("google", "a#b"),
        ("up", "../../admin"),
        ("up", "gpt 4o"),
        ("up", "gpt\u{7}"),
    ] {
        let response = post(new_model("evil", provider, name)).await.unwrap();
        refused_upstream(response, &format!("POST {provider} {name}")).await;
    }
    // The id doubles as the upstream name when `upstream` is absent.
    let mut unnamed = new_model("x?y", "google", "");
    unnamed.as_object_mut().unwrap().remove("upstream");
    refused_upstream(post(unnamed).await.unwrap(), "POST id as upstream").await;

    for (path, change) in [
        (
            "/api/v1/models/gemini-ok",
            json!({ "upstream": "x/../../other" }),
        ),
        (
            "/api/v1/models/llama",
            json!({ "upstream": "meta-llama/../x" }),
        ),
        // A name fine for an OpenAI body is not fine in Gemini's path.
        ("/api/v1/models/llama", json!({ "provider": "google" })),
    ] {
        let response = client()
            .patch(server.url(path))
            .bearer_auth(&owner)
            .json(&change)
            .send()
            .await
            .unwrap();
        refused_upstream(response, &format!("PATCH {path} {change}")).await;
    }

    // Nothing was stored: the catalogue still serves the Gemini model
    // under its own name, at its own path.
    let key = server.create_key(&[]).1;
    chat_json(
        &server,
        &key,
        json!({ "model": "gemini-ok", "messages": [{ "role": "user", "content": "hi" }] }),
    )
    .await;
    assert_eq!(
        gemini.recorded.paths(),
        ["/v1beta/models/gemini-ok:generateContent"]
    );
}

#[tokio::test]
async fn a_slash_in_an_openai_upstream_name_still_travels_in_the_body() {
    let (upstream, _gemini, server) = two_providers().await;
    let key = server.create_key(&[]).1;
    let hi =
        |model: &str| json!({ "model": model, "messages": [{ "role": "user", "content": "hi" }] });
    let answer = chat_json(&server, &key, hi("llama")).await;
    assert_eq!(answer["model"], "llama");

    let owner = login(&server).await;
    let created = client()
        .post(server.url("/api/v1/models"))
        .bearer_auth(&owner)
        .json(&new_model(
            "mistral",
            "up",
            "mistralai/Mistral-7B-Instruct-v0.3",
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    chat_json(&server, &key, hi("mistral")).await;
    assert_eq!(
        upstream.recorded.models(),
        [
            "meta-llama/Llama-3-8B",
            "mistralai/Mistral-7B-Instruct-v0.3"
        ]
    );
}

#[tokio::test]
async fn webhook_urls_with_a_private_ipv4_inside_an_ipv6_address_are_refused() {
    let server = TestServer::start();
    let owner = login(&server).await;
    for url in [
        "http://[::ffff:127.0.0.1]:9000/hook",
        "http://[::ffff:0:a9fe:a9fe]/latest/meta-data",
        "http://[::127.0.0.1]/hook",
        "http://[64:ff9b::a9fe:a9fe]/latest/meta-data",
        "http://[64:ff9b:1::a00:1]/hook",
        "http://[2002:7f00:1::1]/hook",
        "http://[2002:a00:1::]/hook",
        // Teredo: the client address is the last 32 bits, inverted
        // (127.0.0.1 here).
        "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook",
        "http://192.0.0.170/hook",
        "http://198.18.0.1/hook",
        "http://100.100.100.200/latest/meta-data",
        "http://0.1.2.3/hook",
        "http://224.0.0.1/hook",
        "http://255.255.255.255/hook",
    ] {
        let response = client()
            .put(server.url("/api/v1/webhooks"))
            .bearer_auth(&owner)
            .json(&json!({ "urls": [url] }))
            .send()
            .await
            .unwrap();
        assert_eq!(
            error_code(response, 400).await,
            "invalid_request",
            "{url} was accepted"
        );
    }
}

/// An HTTP proxy from the environment would resolve and connect on the
/// gateway's behalf, out of the guard's sight: the image fetch must not
/// use it. Here the "proxy" is the scripted host, which would happily
/// serve the image for any host name; connecting directly, the `.invalid`
/// name resolves nowhere and the fetch is refused.
#[tokio::test]
async fn a_proxy_from_the_environment_is_no_way_around_the_image_fetch_guard() {
    let gemini = Gemini::start().await;
    let proxy = gemini.base_url.trim_end_matches("/v1beta").to_owned();
    let text = format!(
        "[[providers]]\nid = \"google\"\nkind = \"gemini\"\nbase_url = \"{}\"\n\
         [[models]]\nid = \"gemini-ok\"\nprovider = \"google\"\ninput = [\"TEXT\", \"IMAGE\"]\noutput = [\"TEXT\"]\n\
         context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n",
        gemini.base_url,
    );
    let server = TestServer::start_with(
        Some(&text),
        &[("HTTP_PROXY", &proxy), ("http_proxy", &proxy)],
    );
    let key = server.create_key(&[]).1;
    let response = chat_post(
        &server,
        &key,
        &json!({ "model": "gemini-ok", "messages": [{ "role": "user", "content": [
            { "type": "text", "text": "what is this?" },
            { "type": "image_url", "image_url": { "url": "http://images.tollgate.invalid/images/cat.png" } }
        ] }] }),
    )
    .await;
    assert_eq!(
        error_code(response, 400).await,
        "invalid_request",
        "the image was fetched through the proxy"
    );
    assert!(
        gemini.recorded.bodies().is_empty(),
        "nothing was sent upstream"
    );
}
