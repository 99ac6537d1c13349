//! The network edges a configuration or a tenant chooses (issue 20, items 3
//! and 8): upstream model names never rewrite the upstream URL, and
//! tenant-chosen targets (webhook URLs, remote images) never reach a
//! private address, however the address is written or routed.

mod common;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// A host name other than `localhost` (which the URL check refuses by
/// name) that this machine resolves to loopback only, from `/etc/hosts`:
/// the machine's own name, `ip6-localhost`, ... Such a name passes every
/// check made on the URL, so only the decision on the resolved address
/// can stop a request to it.
fn loopback_alias() -> String {
    use std::net::ToSocketAddrs;
    let hosts = std::fs::read_to_string("/etc/hosts").unwrap_or_default();
    let names = hosts.lines().filter_map(|line| {
        let line = line.split('#').next().unwrap_or("");
        let mut fields = line.split_whitespace();
        let ip: std::net::IpAddr = fields.next()?.parse().ok()?;
        ip.is_loopback().then_some(fields)
    });
    names
        .flatten()
        .map(str::to_ascii_lowercase)
        .filter(|name| name != "localhost" && !name.ends_with(".localhost"))
        .find(|name| {
            (name.as_str(), 0)
                .to_socket_addrs()
                .is_ok_and(|mut found| found.all(|a| a.ip().is_loopback()))
        })
        .unwrap_or_else(|| {
            panic!(
                "this test needs a host name other than `localhost` that /etc/hosts maps to a \
                 loopback address (such as the machine's name or `ip6-localhost`); found none in:\n{hosts}"
            )
        })
}

async fn webhook_deliveries(server: &TestServer, token: &str) -> Vec<Value> {
    let list = common::get_json(server, token, "/api/v1/webhooks/deliveries").await;
    list["data"].as_array().unwrap().clone()
}

/// Waits (bounded) for the delivery to `url` to be recorded, and returns it.
async fn delivery_to(server: &TestServer, token: &str, url: &str) -> Value {
    for _ in 0..200 {
        let found = webhook_deliveries(server, token)
            .await
            .into_iter()
            .find(|d| d["url"] == url);
        if let Some(found) = found {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "no delivery to {url} was recorded: {:?}",
        webhook_deliveries(server, token).await
    );
}

fn hello() -> Value {
    json!({ "model": "mock-chat", "messages": [{ "role": "user", "content": "hello" }] })
}

async fn put_webhook(server: &TestServer, token: &str, url: &str) -> reqwest::Response {
    client()
        .put(server.url("/api/v1/webhooks"))
        .bearer_auth(token)
        .json(&json!({ "urls": [url] }))
        .send()
        .await
        .unwrap()
}

/// `localhost` by name, registered while the operator allowed private
/// targets; then the guard is switched on (the opt-out removed, the server
/// restarted). The stored URL is no IP literal, so nothing but the
/// resolver's decision on the address stands between it and the receiver.
#[tokio::test]
async fn a_webhook_to_a_name_of_loopback_is_blocked_after_dns_and_never_received() {
    let receiver = common::receiver::Receiver::start().await;
    let port = receiver.base_url.rsplit(':').next().unwrap().to_owned();
    let url = format!("http://localhost:{port}/hook");
    let mut server =
        TestServer::start_with(None, &[("TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")]);
    let owner = login(&server).await;
    assert_eq!(put_webhook(&server, &owner, &url).await.status(), 200);
    let key = server.demo_key();
    // With the opt-out the receiver is reached: the name leads to it.
    chat_json(&server, &key, hello()).await;
    receiver.wait_for("/hook", 1).await;
    assert_eq!(
        delivery_to(&server, &owner, &url).await["result"],
        "success"
    );

    // The guard on: the default, no opt-out in the environment.
    server.env.clear();
    server.restart();
    let owner = login(&server).await;
    chat_json(&server, &key, hello()).await;
    let blocked = delivery_to(&server, &owner, &url).await;
    assert_eq!(blocked["status"], "blocked", "{blocked}");
    assert_eq!(blocked["result"], "blocked", "{blocked}");
    assert_eq!(blocked["signed"], true, "{blocked}");
    // A second event, to be sure the first was not merely slow.
    chat_json(&server, &key, hello()).await;
    for _ in 0..200 {
        if webhook_deliveries(&server, &owner).await.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let rows = webhook_deliveries(&server, &owner).await;
    assert!(rows.len() >= 2, "{rows:?}");
    assert!(rows.iter().all(|d| d["result"] == "blocked"), "{rows:?}");
    let metrics = common::scrape_metrics(&server).await;
    let counted = format!(
        "tollgate_webhook_deliveries_total{{target=\"tenant\",result=\"blocked\"}} {}",
        rows.len()
    );
    assert!(metrics.contains(&counted), "{metrics}");
    assert_eq!(
        receiver.at("/hook").len(),
        1,
        "the receiver got only the delivery made under the opt-out"
    );
}

/// With the guard on from the start: a name of loopback that is not
/// `localhost` is accepted when registered (a name is only a name), and
/// refused on the address it resolves to at delivery.
#[tokio::test]
async fn a_webhook_host_name_that_resolves_to_loopback_is_blocked_with_the_guard_on() {
    let alias = loopback_alias();
    let receiver = common::receiver::Receiver::start().await;
    let port = receiver.base_url.rsplit(':').next().unwrap().to_owned();
    let url = format!("http://{alias}:{port}/hook");
    let server = TestServer::start();
    let owner = login(&server).await;
    assert_eq!(put_webhook(&server, &owner, &url).await.status(), 200);

    chat_json(&server, &server.demo_key(), hello()).await;
    let blocked = delivery_to(&server, &owner, &url).await;
    assert_eq!(blocked["status"], "blocked", "{blocked}");
    assert_eq!(blocked["result"], "blocked", "{blocked}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(receiver.at("/hook").is_empty(), "the receiver was reached");
}

/// An image server on loopback that counts the requests it gets.
async fn counting_image_server() -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = axum::Router::new().route(
        "/cat.png",
        axum::routing::get(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            async {
                (
                    [("content-type", "image/png")],
                    vec![0x89, b'P', b'N', b'G'],
                )
            }
        }),
    );
    let (addr, _task) = common::serve(app).await;
    (addr.port().to_string(), hits)
}

fn gemini_catalogue(base_url: &str) -> String {
    format!(
        "[[providers]]\nid = \"google\"\nkind = \"gemini\"\nbase_url = \"{base_url}\"\n\
         [[models]]\nid = \"gemini-ok\"\nprovider = \"google\"\ninput = [\"TEXT\", \"IMAGE\"]\noutput = [\"TEXT\"]\n\
         context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
    )
}

fn with_image(url: &str) -> Value {
    json!({ "model": "gemini-ok", "messages": [{ "role": "user", "content": [
        { "type": "text", "text": "what is this?" },
        { "type": "image_url", "image_url": { "url": url } }
    ] }] })
}

/// A remote image whose host name resolves to loopback: refused as the
/// caller's mistake (400 `invalid_request`, docs/chat.md "Remote images"),
/// nothing fetched and nothing sent to the provider. With the operator's
/// opt-out the same URL is fetched, so the refusal is the guard's.
#[tokio::test]
async fn an_image_url_whose_host_name_resolves_to_loopback_is_refused_and_never_fetched() {
    let alias = loopback_alias();
    let (port, hits) = counting_image_server().await;
    let url = format!("http://{alias}:{port}/cat.png");
    let gemini = Gemini::start().await;
    let server = TestServer::start_with(Some(&gemini_catalogue(&gemini.base_url)), &[]);
    let key = server.create_key(&[]).1;

    let refused = chat_post(&server, &key, &with_image(&url)).await;
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_request", "{body}");
    assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&url) && message.contains("private addresses"),
        "{body}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the image was fetched");
    assert!(
        gemini.recorded.bodies().is_empty(),
        "the provider was called"
    );

    let allowed = TestServer::start_with(
        Some(&gemini_catalogue(&gemini.base_url)),
        &[("TOLLGATE_IMAGE_FETCH_ALLOW_PRIVATE_TARGETS", "true")],
    );
    let key = allowed.create_key(&[]).1;
    chat_json(&allowed, &key, with_image(&url)).await;
    assert_eq!(hits.load(Ordering::SeqCst), 1, "fetched with the opt-out");
}
