//! Findings of the black-box security probe (issue 20, items 4, 6, 7, 13
//! and 14), against the real server: refused requests must not flood the
//! store, bodies with duplicate keys are refused everywhere, transcription
//! billing follows the audio actually forwarded, small bad inputs get clear
//! errors, and the code answers as the documentation says.

mod common;

use common::media::MediaUpstream;
use common::{TestServer, account, client, error_code, get_json, login, scrape_metrics, stderr};
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

/// The size of every file under `dir`, in bytes.
fn dir_size(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                dir_size(&entry.path())
            } else {
                meta.len()
            }
        })
        .sum()
}

/// A path of about `len` bytes under `/v1/`.
fn long_path(len: usize) -> String {
    format!("/v1/{}", "a".repeat(len))
}

async fn audit(server: &TestServer, token: &str, action: &str) -> Vec<Value> {
    let page = get_json(
        server,
        token,
        &format!("/api/v1/audit?action={action}&limit=500"),
    )
    .await;
    page["data"].as_array().cloned().unwrap_or_default()
}

// --- 4. refused requests do not flood the store ---

#[tokio::test]
async fn unauthenticated_refusals_are_counted_and_logged_not_stored() {
    let server = TestServer::start();
    let http = client();
    let before = dir_size(&server.data_dir());
    for i in 0..400 {
        let response = http
            .get(server.url(&long_path(30 * 1024)))
            .header("x-api-key", format!("not-a-key-{i}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401);
    }
    let growth = dir_size(&server.data_dir()).saturating_sub(before);
    assert!(growth < 1024 * 1024, "the store grew by {growth} bytes");

    let token = login(&server).await;
    assert!(audit(&server, &token, "inference.refused").await.is_empty());
    let metrics = scrape_metrics(&server).await;
    assert!(
        metrics.contains("tollgate_errors_total{code=\"invalid_api_key\"} 400"),
        "{metrics}"
    );
    // Logged once for this source in each minute, the path cut short. The
    // 400 requests take seconds, so they may straddle one minute's end:
    // then a second line opens the next minute and counts the refusals of
    // the one before.
    let log = server.log();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("unauthenticated request refused"))
        .collect();
    assert!(matches!(lines.len(), 1 | 2), "{log}");
    for line in &lines {
        assert!(line.contains("127.0.0.1"), "{line}");
        assert!(line.len() < 2048, "{line}");
    }
    if let [_, second] = lines.as_slice() {
        assert!(
            !second.contains("refused_in_previous_minute=0"),
            "the next minute's line counts the minute before: {second}"
        );
    }
}

#[tokio::test]
async fn what_a_key_is_refused_for_stays_audited_in_bounded_size() {
    let server = TestServer::start();
    let (key_id, key) = server.create_key(&[]);
    let http = client();
    let before = dir_size(&server.data_dir());
    for _ in 0..400 {
        let response = http
            .get(server.url(&long_path(30 * 1024)))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 404);
    }
    let growth = dir_size(&server.data_dir()).saturating_sub(before);
    assert!(growth < 1024 * 1024, "the store grew by {growth} bytes");

    let token = login(&server).await;
    let entries = audit(&server, &token, "inference.refused").await;
    assert_eq!(entries.len(), 400);
    let entry = &entries[0];
    assert_eq!(entry["actor"], format!("key:{key_id}"));
    assert_eq!(entry["outcome"], "not_found");
    let target = entry["target"].as_str().unwrap();
    assert!(
        target.starts_with("/v1/aaa") && target.len() <= 300,
        "{target}"
    );
    assert_eq!(entry["details"]["pathBytes"], 30 * 1024 + 4);
}

// --- 6. duplicate keys ---

async fn post_raw(
    server: &TestServer,
    path: &str,
    auth: (&str, &str),
    body: &'static str,
) -> reqwest::Response {
    client()
        .post(server.url(path))
        .header(auth.0, auth.1)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_body_with_a_duplicate_key_is_refused_on_every_endpoint_in_the_callers_dialect() {
    let server = TestServer::start();
    let key = server.demo_key();
    let bearer = format!("Bearer {key}");
    let auth = ("authorization", bearer.as_str());

    // OpenAI shape, at the top level and deep inside.
    for (body, name) in [
        (
            r#"{"model":"mock-chat","model":"other","messages":[{"role":"user","content":"hi"}]}"#,
            "model",
        ),
        (
            r#"{"model":"mock-chat","messages":[{"role":"user","content":"hi","content":"x"}]}"#,
            "content",
        ),
        // The same key spelt with an escape is the same key.
        (
            r#"{"model":"mock-chat","messages":[{"role":"user","content":"hi"}],"a":{"b":1,"\u0062":2}}"#,
            "b",
        ),
    ] {
        let response = post_raw(&server, "/v1/chat/completions", auth, body).await;
        assert_eq!(response.status(), 400, "{body}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["code"], "invalid_request", "{error}");
        assert_eq!(error["error"]["param"], name, "{error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("`{name}`")), "{message}");
    }

    // Anthropic shape on the native passthrough.
    let response = post_raw(
        &server,
        "/v1/messages",
        ("x-api-key", &key),
        r#"{"model":"mock-chat","max_tokens":5,"messages":[{"role":"user","content":"hi","content":"x"}]}"#,
    )
    .await;
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["type"], "invalid_request");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`content`")
    );

    // Google shape.
    let response = post_raw(
        &server,
        "/v1beta/models/mock-chat:generateContent",
        ("x-goog-api-key", &key),
        r#"{"contents":[{"role":"user","parts":[{"text":"hi","text":"x"}]}]}"#,
    )
    .await;
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
    assert_eq!(error["error"]["details"][0]["reason"], "invalid_request");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`text`")
    );

    // Media JSON routes.
    let response = post_raw(
        &server,
        "/v1/images/generations",
        auth,
        r#"{"model":"mock-image","prompt":"a cat","prompt":"x"}"#,
    )
    .await;
    assert_eq!(error_code(response, 400).await, "invalid_request");

    // The dashboard API, and nothing was created.
    let token = login(&server).await;
    let session = format!("Bearer {token}");
    let response = post_raw(
        &server,
        "/api/v1/keys",
        ("authorization", &session),
        r#"{"keyName":"first","keyName":"second"}"#,
    )
    .await;
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["param"], "keyName");
    let keys = get_json(&server, &token, "/api/v1/keys").await;
    assert!(
        !keys.to_string().contains("second") && !keys.to_string().contains("first"),
        "{keys}"
    );

    // Well-formed bodies still pass.
    let response = post_raw(
        &server,
        "/v1/chat/completions",
        auth,
        r#"{"model":"mock-chat","messages":[{"role":"user","content":"hi"},{"role":"user","content":"again"}]}"#,
    )
    .await;
    assert_eq!(response.status(), 200);
}

// --- 7. transcription billing ---

fn media_config(upstream: &str) -> String {
    format!(
        "[[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{upstream}\"\n\
         [[models]]\nid = \"whisper\"\nprovider = \"up\"\ninput = [\"AUDIO\"]\noutput = [\"TEXT\"]\n\
         context_window = 8192\npricing = {{ unit = \"per_minute\", per_minute = 0.006 }}\n\
         [[models]]\nid = \"img\"\nprovider = \"up\"\ninput = [\"TEXT\", \"IMAGE\"]\noutput = [\"IMAGE\"]\n\
         context_window = 8192\npricing = {{ unit = \"per_image\", per_image = 0.04 }}\n"
    )
}

/// A WAV of silence, 8 kHz mono 16-bit, `ms` long, whose header claims
/// `byte_rate` bytes per second.
fn wav(ms: u32, byte_rate: u32) -> Vec<u8> {
    let data = ms * 16;
    let mut out = b"RIFF".to_vec();
    out.extend((36 + data).to_le_bytes());
    out.extend(b"WAVEfmt ");
    out.extend(16u32.to_le_bytes());
    out.extend([1, 0, 1, 0]);
    out.extend(8000u32.to_le_bytes());
    out.extend(byte_rate.to_le_bytes());
    out.extend([2, 0, 16, 0]);
    out.extend(b"data");
    out.extend(data.to_le_bytes());
    out.resize(44 + data as usize, 0);
    out
}

fn audio(bytes: Vec<u8>, name: &str) -> Part {
    Part::bytes(bytes)
        .file_name(name.to_owned())
        .mime_str("audio/wav")
        .unwrap()
}

async fn post_form(server: &TestServer, key: &str, path: &str, form: Form) -> reqwest::Response {
    client()
        .post(server.url(path))
        .bearer_auth(key)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

fn header_micros(response: &reqwest::Response, name: &str) -> u64 {
    let value: f64 = response.headers()[name].to_str().unwrap().parse().unwrap();
    (value * 1_000_000.0).round() as u64
}

#[tokio::test]
async fn a_transcription_is_billed_for_the_audio_forwarded_and_refuses_extra_parts() {
    let upstream = MediaUpstream::start().await;
    let server = TestServer::start_with(Some(&media_config(&upstream.base_url)), &[]);
    let (_, key) = server.create_key(&[]);
    let path = "/v1/audio/transcriptions";

    // A second file part rides along: refused, nothing forwarded.
    let form = Form::new()
        .text("model", "whisper")
        .part("file", audio(wav(100, 16_000), "tiny.wav"))
        .part("file", audio(wav(60_000, 16_000), "long.wav"));
    let response = post_form(&server, &key, path, form).await;
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["code"], "invalid_request", "{error}");
    assert_eq!(error["error"]["param"], "file");
    // A file under another name, and an unknown field.
    let form = Form::new()
        .text("model", "whisper")
        .part("file", audio(wav(100, 16_000), "tiny.wav"))
        .part("extra", audio(wav(60_000, 16_000), "long.wav"));
    let response = post_form(&server, &key, path, form).await;
    assert_eq!(error_code(response, 400).await, "invalid_request");
    let form = Form::new()
        .text("model", "whisper")
        .text("stream", "true")
        .part("file", audio(wav(100, 16_000), "tiny.wav"));
    let response = post_form(&server, &key, path, form).await;
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["param"], "stream", "{error}");
    assert_eq!(upstream.recorded.count(), 0);

    // 60 s of audio whose header claims 60 times the byte rate: billed for
    // the 60 s a decoder plays (0.006 per minute), not the 1 s the byte rate
    // says.
    let form = Form::new()
        .text("model", "whisper")
        .text("response_format", "text")
        .part("file", audio(wav(60_000, 16_000 * 60), "a.wav"));
    let response = post_form(&server, &key, path, form).await;
    assert_eq!(response.status(), 200);
    assert_eq!(header_micros(&response, "x-tollgate-cost"), 6000);

    // The upstream's report wins over the file when it gives one (42.5 s).
    let form = Form::new()
        .text("model", "whisper")
        .text("response_format", "verbose_json")
        .part("file", audio(wav(1000, 16_000), "b.wav"));
    let response = post_form(&server, &key, path, form).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let cost = (body["billing"]["cost"].as_f64().unwrap() * 1e6).round() as u64;
    assert_eq!(cost, 4250, "{body}");
}

// --- 13. small bad inputs ---

#[tokio::test]
async fn image_edits_refuse_a_count_that_is_not_a_whole_number_from_1() {
    let upstream = MediaUpstream::start().await;
    let server = TestServer::start_with(Some(&media_config(&upstream.base_url)), &[]);
    let (_, key) = server.create_key(&[]);
    for n in ["-1", "0", "abc", "1.5", "11"] {
        let form = Form::new()
            .part(
                "image",
                Part::bytes(b"\x89PNG".to_vec())
                    .file_name("a.png")
                    .mime_str("image/png")
                    .unwrap(),
            )
            .text("prompt", "a hat")
            .text("model", "img")
            .text("n", n);
        let response = post_form(&server, &key, "/v1/images/edits", form).await;
        assert_eq!(response.status(), 400, "n = {n}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["param"], "n", "n = {n}");
    }
    assert_eq!(upstream.recorded.count(), 0);
}

const HIDDEN: [char; 8] = [
    '\u{200B}', '\u{200E}', '\u{200F}', '\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}', '\u{FEFF}',
];

#[tokio::test]
async fn names_with_invisible_or_bidirectional_characters_are_refused() {
    let server = TestServer::start();
    let token = login(&server).await;
    for c in HIDDEN {
        let name = format!("ci{c}key");
        let out = server.cli(&["keys", "create", "--name", &name]);
        assert!(!out.status.success(), "key name with U+{:04X}", c as u32);
        assert!(stderr(&out).contains("key name"), "{}", stderr(&out));

        let response = client()
            .post(server.url("/api/v1/keys"))
            .bearer_auth(&token)
            .json(&json!({ "keyName": name }))
            .send()
            .await
            .unwrap();
        assert_eq!(error_code(response, 400).await, "invalid_request");

        let out = server.cli(&["tenants", "create", "--name", &format!("acme{c}")]);
        assert!(!out.status.success(), "tenant name with U+{:04X}", c as u32);

        let out = server.cli_with_stdin(
            &[
                "users",
                "create",
                "--email",
                &format!("ada{c}@example.com"),
                "--role",
                "user",
                "--password-stdin",
            ],
            "a-long-test-password",
        );
        assert!(!out.status.success(), "email with U+{:04X}", c as u32);
    }
    let keys = server.cli_json(&["keys", "list"]);
    assert_eq!(
        keys.as_array().unwrap().len(),
        1,
        "only the demo key: {keys}"
    );
    let tenants = server.cli_json(&["tenants", "list"]);
    assert_eq!(tenants.as_array().unwrap().len(), 1, "{tenants}");
}

#[tokio::test]
async fn a_top_up_of_nan_or_infinity_is_a_clear_usage_error() {
    let server = TestServer::start();
    for amount in ["NaN", "nan", "inf", "-inf", "infinity", "-5"] {
        let out = server.cli(&["tenants", "topup", "default", "--credits", amount]);
        assert!(!out.status.success(), "{amount}");
        let err = stderr(&out);
        assert!(
            err.contains("not an amount of credits") && err.contains(amount),
            "{amount}: {err}"
        );
    }
    let tenant = server.cli_json(&["tenants", "show", "default"]);
    assert_eq!(tenant["walletBalance"], 0.0);
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive_for_keys_and_sessions() {
    let server = TestServer::start();
    let key = server.demo_key();
    let token = login(&server).await;
    for scheme in ["BEARER", "Bearer", "bearer", "bEaReR"] {
        let response = client()
            .get(server.url("/v1/models"))
            .header("authorization", format!("{scheme} {key}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{scheme} with a key");
        let response = client()
            .get(server.url("/api/v1/me"))
            .header("authorization", format!("{scheme} {token}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{scheme} with a session");
    }
    // Another scheme is still no key.
    let response = client()
        .get(server.url("/v1/models"))
        .header("authorization", format!("Basic {key}"))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(response, 401).await, "missing_api_key");
}

#[tokio::test]
async fn tenant_names_are_unique_regardless_of_case() {
    let server = TestServer::start();
    let first = server.cli(&["tenants", "create", "--name", "TENA"]);
    assert!(first.status.success(), "{}", stderr(&first));
    for name in ["tenA", "tena", "TENA", " Tena "] {
        let out = server.cli(&["tenants", "create", "--name", name]);
        assert!(!out.status.success(), "{name}");
        assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
    }
    let tenants = server.cli_json(&["tenants", "list"]);
    assert_eq!(tenants.as_array().unwrap().len(), 2, "{tenants}");
}

/// Asserts a refusal with `status` and `code` whose `param` is `field`
/// and whose message contains `named`.
async fn refused_naming(
    response: reqwest::Response,
    status: u16,
    code: &str,
    field: &str,
    named: &str,
) {
    assert_eq!(response.status(), status, "{field}");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["error"]["param"], field, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains(named),
        "{body}"
    );
}

/// What the CLI refuses, the dashboard API refuses too: a name with a
/// hidden character is a 400 naming the field, whether it names a tenant
/// (the operator creating it), an account or a key.
#[tokio::test]
async fn the_dashboard_api_refuses_names_with_hidden_characters_naming_the_field() {
    let server = TestServer::start();
    let operator = login(&server).await;
    let post = |path: &str, body: Value| {
        client()
            .post(server.url(path))
            .bearer_auth(&operator)
            .json(&body)
            .send()
    };
    for c in HIDDEN {
        let response = post("/api/v1/tenants", json!({ "name": format!("acme{c}") }))
            .await
            .unwrap();
        refused_naming(response, 400, "invalid_request", "name", "tenant name").await;

        let email = format!("ada{c}@example.com");
        let response = post(
            "/api/v1/users",
            json!({ "email": email, "role": "user", "password": "a-long-test-password" }),
        )
        .await
        .unwrap();
        refused_naming(response, 400, "invalid_request", "email", "email").await;

        let response = post("/api/v1/keys", json!({ "keyName": format!("ci{c}key") }))
            .await
            .unwrap();
        refused_naming(response, 400, "invalid_request", "keyName", "key name").await;
    }
    // Nothing was created.
    let tenants = get_json(&server, &operator, "/api/v1/tenants").await;
    assert_eq!(tenants["data"].as_array().unwrap().len(), 1, "{tenants}");
    let users = get_json(&server, &operator, "/api/v1/users").await;
    assert_eq!(users["data"].as_array().unwrap().len(), 1, "{users}");
    let keys = server.cli_json(&["keys", "list"]);
    assert_eq!(
        keys.as_array().unwrap().len(),
        1,
        "only the demo key: {keys}"
    );
}

/// Tenant names differing only in case, through the dashboard API: the
/// second is refused as taken (409 `conflict`, docs/dashboard-api.md),
/// naming the field and the name it collides with.
#[tokio::test]
async fn the_dashboard_api_refuses_a_tenant_name_differing_only_in_case() {
    let server = TestServer::start();
    let operator = login(&server).await;
    let post = |name: &str| {
        client()
            .post(server.url("/api/v1/tenants"))
            .bearer_auth(&operator)
            .json(&json!({ "name": name }))
            .send()
    };
    assert_eq!(post("TENA").await.unwrap().status(), 201);
    for name in ["tenA", "tena", "TENA", " Tena "] {
        refused_naming(post(name).await.unwrap(), 409, "conflict", "name", "`TENA`").await;
    }
    let tenants = get_json(&server, &operator, "/api/v1/tenants").await;
    assert_eq!(tenants["data"].as_array().unwrap().len(), 2, "{tenants}");
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive_for_the_metrics_token() {
    let token = "metrics-token-0123456789";
    let server = TestServer::start_with(None, &[("TOLLGATE_METRICS_TOKEN", token)]);
    for scheme in ["BEARER", "Bearer", "bearer", "bEaReR"] {
        let response = client()
            .get(server.url("/metrics"))
            .header("authorization", format!("{scheme} {token}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{scheme}");
        let text = response.text().await.unwrap();
        assert!(text.contains("# TYPE tollgate_"), "{scheme}: {text}");
    }
    // The scheme is case-insensitive, the token is not; another scheme is
    // no token.
    for value in [
        format!("Bearer {}", token.to_uppercase()),
        format!("Basic {token}"),
        format!("Token {token}"),
        token.to_owned(),
    ] {
        let response = client()
            .get(server.url("/metrics"))
            .header("authorization", value.as_str())
            .send()
            .await
            .unwrap();
        assert_eq!(error_code(response, 401).await, "missing_token", "{value}");
    }
}

// --- 14. documentation and code agree ---

#[tokio::test]
async fn a_json_endpoint_refuses_a_body_that_is_not_json_with_415() {
    let server = TestServer::start();
    let key = server.demo_key();
    let body = r#"{"model":"mock-chat","messages":[{"role":"user","content":"hi"}]}"#;
    for (path, header, content_type) in [
        ("/v1/chat/completions", "authorization", Some("text/plain")),
        ("/v1/chat/completions", "authorization", None),
        (
            "/v1/chat/completions",
            "authorization",
            Some("application/x-www-form-urlencoded"),
        ),
        ("/v1/messages", "x-api-key", Some("text/plain")),
        (
            "/v1beta/models/mock-chat:generateContent",
            "x-goog-api-key",
            Some("text/plain"),
        ),
        (
            "/v1/images/generations",
            "authorization",
            Some("text/plain"),
        ),
    ] {
        let value = if header == "authorization" {
            format!("Bearer {key}")
        } else {
            key.clone()
        };
        let mut request = client()
            .post(server.url(path))
            .header(header, value)
            .body(body);
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 415, "{path} as {content_type:?}");
    }
    // JSON with a charset, and a +json type, are JSON.
    for content_type in [
        "application/json; charset=utf-8",
        "application/vnd.api+json",
    ] {
        let response = client()
            .post(server.url("/v1/chat/completions"))
            .bearer_auth(&key)
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{content_type}");
    }
}

#[tokio::test]
async fn roles_without_key_permissions_get_403_on_a_key_whether_it_exists_or_not() {
    let server = TestServer::start();
    let (key_id, _) = server.create_key(&[]);
    for role in ["reviewer", "tester"] {
        let token = account(&server, "default", &format!("{role}@default.test"), role).await;
        for id in [key_id.as_str(), "key_missing"] {
            let response = client()
                .get(server.url(&format!("/api/v1/keys/{id}")))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap();
            assert_eq!(error_code(response, 403).await, "forbidden", "{role} {id}");
        }
    }
}

#[tokio::test]
async fn usage_of_a_key_outside_the_callers_scope_is_404_like_a_missing_key() {
    let server = TestServer::start();
    let other = server.cli(&["tenants", "create", "--name", "other"]);
    assert!(other.status.success(), "{}", stderr(&other));
    // The admin of a tenant that is not the operator: the operator's own
    // admins reach every tenant (security.md, "The operator").
    let (other_key, _) = server.create_key(&[]);
    let (own_key, _) = server.create_key(&["--tenant", "other"]);
    let admin = account(&server, "other", "admin@other.test", "admin").await;
    for route in ["/api/v1/usage", "/api/v1/usage/records"] {
        let mut answers = Vec::new();
        for id in [other_key.as_str(), "key_missing"] {
            let response = client()
                .get(server.url(&format!("{route}?keyId={id}")))
                .bearer_auth(&admin)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 404, "{route} {id}");
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"]["code"], "not_found");
            answers.push(body["error"]["message"].as_str().unwrap().replace(id, "ID"));
        }
        // The same answer for a key of another tenant and no key at all.
        assert_eq!(answers[0], answers[1]);
        get_json(&server, &admin, &format!("{route}?keyId={own_key}")).await;
    }
}
