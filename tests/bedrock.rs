//! The Bedrock provider (issue 23): AWS's SigV4 test suite against the
//! signer; chat, streams and tools through the Converse API against a
//! scripted Bedrock that recomputes every signature; the colon of model
//! ids; errors and throttling mapped to the router's decisions; secrets
//! kept out of errors and logs; configuration checks; the sub-processor
//! registry.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use common::bedrock::{Bedrock, Expect, PNG};
use common::scripted::Scripted;
use common::{
    BIN, TestServer, chat_events, chat_json, chat_post, client, error_code, get_json, login,
};
use serde_json::{Value, json};
use tollgate::providers::bedrock::sigv4;

const KEY_ID: &str = "AKIDTESTBEDROCK1";
const SECRET: &str = "bedrock-secret/Key+0123456789abcdefEXAMPLE";
const TOKEN: &str = "FwoGZXIvYXdzEXAMPLE-session-token-0123456789";
const CLAUDE: &str = "anthropic.claude-3-5-sonnet-20240620-v1:0";

// ---------------------------------------------------------------------
// The signer against AWS's signature test suite (tests/data/sigv4).

struct Vector {
    name: String,
    context: Value,
    request: String,
    dir: PathBuf,
}

fn vectors() -> Vec<Vector> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sigv4");
    let mut out: Vec<Vector> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let dir = e.path();
            Vector {
                name: e.file_name().to_string_lossy().into_owned(),
                context: serde_json::from_str(
                    &std::fs::read_to_string(dir.join("context.json")).unwrap(),
                )
                .unwrap(),
                request: std::fs::read_to_string(dir.join("request.txt")).unwrap(),
                dir,
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[test]
fn the_signer_passes_the_aws_signature_test_suite() {
    let vectors = vectors();
    assert!(vectors.len() >= 30, "the suite is present");
    for v in vectors {
        let (head, body) = v
            .request
            .split_once("\n\n")
            .unwrap_or((v.request.as_str(), ""));
        let mut lines = head.lines();
        let request_line = lines.next().unwrap();
        let request_line = request_line.strip_suffix(" HTTP/1.1").unwrap();
        let (method, target) = request_line.split_once(' ').unwrap();
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (target, None),
        };
        let mut headers: Vec<(String, String)> = lines
            .map(|l| {
                let (n, v) = l.split_once(':').unwrap();
                (n.to_owned(), v.to_owned())
            })
            .collect();
        let context = &v.context;
        let time = time::OffsetDateTime::parse(
            context["timestamp"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap();
        let scope = sigv4::Scope {
            region: context["region"].as_str().unwrap(),
            service: context["service"].as_str().unwrap(),
            time,
        };
        headers.push(("X-Amz-Date".into(), scope.amz_date()));
        let token = context["credentials"]["token"].as_str();
        if let Some(token) = token {
            headers.push(("X-Amz-Security-Token".into(), token.into()));
        }
        // This suite's signer adds the payload hash header when it signs
        // the body.
        if context["sign_body"] == true {
            headers.push((
                "X-Amz-Content-Sha256".into(),
                sigv4::sha256_hex(body.as_bytes()),
            ));
        }
        let request = sigv4::Request {
            method,
            path,
            query,
            headers: &headers,
            payload: body.as_bytes(),
            normalize: context["normalize"] == true,
        };
        let read = |f: &str| std::fs::read_to_string(v.dir.join(f)).unwrap();
        let (canonical, _) = sigv4::canonical_request(&request);
        assert_eq!(
            canonical,
            read("header-canonical-request.txt"),
            "{}: canonical request",
            v.name
        );
        let to_sign = sigv4::string_to_sign(&scope, &canonical);
        assert_eq!(
            to_sign,
            read("header-string-to-sign.txt"),
            "{}: string to sign",
            v.name
        );
        let secret = context["credentials"]["secret_access_key"]
            .as_str()
            .unwrap();
        assert_eq!(
            sigv4::signature(secret, &scope, &to_sign),
            read("header-signature.txt").trim(),
            "{}: signature",
            v.name
        );
    }
}

// ---------------------------------------------------------------------
// The gateway against a scripted Bedrock.

fn expect() -> Expect {
    Expect {
        access_key_id: KEY_ID.into(),
        secret_access_key: SECRET.into(),
        session_token: Some(TOKEN.into()),
        region: "eu-central-1".into(),
    }
}

fn model(id: &str, routing: &str) -> String {
    format!(
        "[[models]]\nid = \"{id}\"\n{routing}\ninput = [\"TEXT\", \"IMAGE\"]\noutput = [\"TEXT\"]\ncontext_window = 200000\n\
         pricing = {{ unit = \"per_token\", input_per_million = 3.0, output_per_million = 15.0 }}\n"
    )
}

/// Provider `aws` (the default credential variables, a session token),
/// `aws-wrong` (a wrong secret from its own variables), `up` (OpenAI
/// kind, the scripted fallback), and models.
fn config(bedrock: &str, scripted: &str) -> String {
    let mut out = format!(
        "[[providers]]\nid = \"aws\"\nkind = \"bedrock\"\nregion = \"eu-central-1\"\nbase_url = \"{bedrock}\"\nretry_backoff_ms = 1\n\
         [[providers]]\nid = \"aws-wrong\"\nkind = \"bedrock\"\nregion = \"eu-central-1\"\nbase_url = \"{bedrock}\"\n\
         aws_access_key_id_env = \"WRONG_KEY_ID\"\naws_secret_access_key_env = \"WRONG_SECRET\"\naws_session_token_env = \"WRONG_TOKEN\"\n\
         [[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{scripted}\"\nretry_backoff_ms = 1\n"
    );
    out += &model(
        "claude",
        &format!("provider = \"aws\"\nupstream = \"{CLAUDE}\""),
    );
    out += &model("tool", "provider = \"aws\"\nupstream = \"tool-model\"");
    out += &model(
        "wrong",
        &format!("provider = \"aws-wrong\"\nupstream = \"{CLAUDE}\""),
    );
    out += &model("invalid", "provider = \"aws\"\nupstream = \"invalid\"");
    for (id, upstream) in [
        ("throttled-chain", "throttled"),
        ("unavailable-chain", "unavailable"),
        ("invalid-chain", "invalid"),
        ("stream-throttled-chain", "stream-throttled"),
    ] {
        out += &model(
            id,
            &format!(
                "deployments = [{{ provider = \"aws\", upstream = \"{upstream}\", weight = 1000000 }}, \
                 {{ provider = \"up\", upstream = \"fallback-{upstream}\" }}]"
            ),
        );
    }
    out
}

struct Setup {
    bedrock: Bedrock,
    scripted: Scripted,
    server: TestServer,
    key: String,
}

async fn setup() -> Setup {
    let bedrock = Bedrock::start(expect()).await;
    let scripted = Scripted::start().await;
    let server = TestServer::start_with(
        Some(&config(&bedrock.base_url, &scripted.base_url)),
        &[
            ("AWS_ACCESS_KEY_ID", KEY_ID),
            ("AWS_SECRET_ACCESS_KEY", SECRET),
            ("AWS_SESSION_TOKEN", TOKEN),
            ("WRONG_KEY_ID", KEY_ID),
            ("WRONG_SECRET", "not-the-secret-0123456789"),
            ("WRONG_TOKEN", TOKEN),
            ("TOLLGATE_IMAGE_FETCH_ALLOW_PRIVATE_TARGETS", "true"),
        ],
    );
    let (_, key) = server.create_key(&["--rate-limit", "10000"]);
    Setup {
        bedrock,
        scripted,
        server,
        key,
    }
}

fn hi(model: &str) -> Value {
    json!({ "model": model, "messages": [{ "role": "user", "content": "hi" }] })
}

#[tokio::test]
async fn chat_is_translated_to_converse_signed_and_answered() {
    let s = setup().await;
    let tools = json!([{ "type": "function", "function": {
        "name": "get_weather", "description": "Weather of a city",
        "parameters": { "type": "object", "properties": { "city": { "type": "string" } } } } }]);
    let answer = chat_json(&s.server, &s.key, json!({
        "model": "claude",
        "messages": [
            { "role": "system", "content": "Be brief." },
            { "role": "user", "content": "Hi" },
            { "role": "assistant", "content": "Hello!" },
            { "role": "user", "content": [
                { "type": "text", "text": "What is this?" },
                { "type": "image_url", "image_url": { "url": "data:image/jpeg;base64,/9j/4AAQ" } },
                { "type": "image_url", "image_url": { "url": format!("{}/images/cat.png", s.bedrock.base_url) } }
            ] }
        ],
        "tools": tools,
        "tool_choice": "auto",
        "stop": ["END"],
        "temperature": 0.3,
        "top_p": 0.8,
        "max_tokens": 99
    }))
    .await;
    let calls = s.bedrock.calls();
    assert_eq!(calls.len(), 1);
    let call = &calls[0];
    assert_eq!(call.refused, None, "the signature verifies");
    // The colon of the model id is percent-encoded in the path.
    assert_eq!(
        call.path,
        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"
    );
    assert_eq!(call.model, CLAUDE);
    assert_eq!(call.headers["x-amz-security-token"], TOKEN);
    let auth = call.headers["authorization"].to_str().unwrap();
    assert!(auth.starts_with(&format!("AWS4-HMAC-SHA256 Credential={KEY_ID}/")));
    assert!(auth.contains("/eu-central-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature="));
    assert!(!auth.contains(SECRET));
    let png = base64::engine::general_purpose::STANDARD.encode(PNG);
    assert_eq!(
        call.body,
        json!({
            "system": [{ "text": "Be brief." }],
            "messages": [
                { "role": "user", "content": [{ "text": "Hi" }] },
                { "role": "assistant", "content": [{ "text": "Hello!" }] },
                { "role": "user", "content": [
                    { "text": "What is this?" },
                    { "image": { "format": "jpeg", "source": { "bytes": "/9j/4AAQ" } } },
                    { "image": { "format": "png", "source": { "bytes": png } } }
                ] }
            ],
            "inferenceConfig": { "maxTokens": 99, "temperature": 0.3, "topP": 0.8, "stopSequences": ["END"] },
            "toolConfig": {
                "tools": [{ "toolSpec": { "name": "get_weather", "description": "Weather of a city",
                    "inputSchema": { "json": { "type": "object", "properties": { "city": { "type": "string" } } } } } }],
                "toolChoice": { "auto": {} }
            }
        })
    );
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "Hello from Bedrock"
    );
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        answer["usage"],
        json!({ "prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19 })
    );
}

#[tokio::test]
async fn a_streamed_chat_is_decoded_from_event_stream_frames() {
    let s = setup().await;
    let events = chat_events(&s.server, &s.key, hi("claude")).await;
    let calls = s.bedrock.calls();
    assert_eq!(
        calls[0].path,
        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream"
    );
    assert_eq!(calls[0].refused, None);
    assert_eq!(events.last().unwrap(), "[DONE]");
    let text: String = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "Hello from Bedrock");
    let finish: Vec<&Value> = events
        .iter()
        .map(|e| &e["choices"][0]["finish_reason"])
        .filter(|f| !f.is_null())
        .collect();
    assert_eq!(finish, [&json!("stop")]);
    let usage = events.iter().find(|e| e["usage"].is_object()).unwrap();
    assert_eq!(usage["usage"]["prompt_tokens"], 12);
    assert_eq!(usage["usage"]["completion_tokens"], 7);
}

#[tokio::test]
async fn tools_round_trip_plain_and_streamed() {
    let s = setup().await;
    let tools = json!([{ "type": "function", "function": { "name": "get_weather",
        "parameters": { "type": "object", "properties": { "city": { "type": "string" } } } } }]);
    let mut body = hi("tool");
    body["tools"] = tools.clone();
    body["tool_choice"] = json!({ "type": "function", "function": { "name": "get_weather" } });
    let answer = chat_json(&s.server, &s.key, body.clone()).await;
    let message = &answer["choices"][0]["message"];
    assert_eq!(answer["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(message["content"], Value::Null);
    let call = &message["tool_calls"][0];
    assert_eq!(call["id"], "tooluse_1");
    assert_eq!(call["function"]["name"], "get_weather");
    let args: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({ "city": "Paris" }));
    assert_eq!(
        s.bedrock.calls()[0].body["toolConfig"]["toolChoice"],
        json!({ "tool": { "name": "get_weather" } })
    );

    // The caller answers the call: toolUse and toolResult go back.
    let followup = json!({
        "model": "tool",
        "tools": tools,
        "tool_choice": "required",
        "messages": [
            { "role": "user", "content": "Weather in Paris?" },
            { "role": "assistant", "content": null, "tool_calls": [call] },
            { "role": "tool", "tool_call_id": "tooluse_1", "content": "18 C, sunny" }
        ]
    });
    chat_json(&s.server, &s.key, followup).await;
    let sent = &s.bedrock.calls()[1].body;
    assert_eq!(
        sent["messages"],
        json!([
            { "role": "user", "content": [{ "text": "Weather in Paris?" }] },
            { "role": "assistant", "content": [{ "toolUse": {
                "toolUseId": "tooluse_1", "name": "get_weather", "input": { "city": "Paris" } } }] },
            { "role": "user", "content": [{ "toolResult": {
                "toolUseId": "tooluse_1", "content": [{ "text": "18 C, sunny" }] } }] }
        ])
    );
    assert_eq!(sent["toolConfig"]["toolChoice"], json!({ "any": {} }));

    // Streamed: the call's id and name first, then the arguments in pieces.
    let events = chat_events(&s.server, &s.key, body).await;
    let deltas: Vec<&Value> = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["tool_calls"].get(0))
        .collect();
    assert_eq!(deltas[0]["id"], "tooluse_1");
    assert_eq!(deltas[0]["function"]["name"], "get_weather");
    let arguments: String = deltas
        .iter()
        .filter_map(|d| d["function"]["arguments"].as_str())
        .collect();
    assert_eq!(arguments, "{\"city\":\"Paris\"}");
    assert!(
        events
            .iter()
            .any(|e| e["choices"][0]["finish_reason"] == "tool_calls")
    );
}

#[tokio::test]
async fn throttling_and_service_errors_fall_back_and_validation_errors_do_not() {
    let s = setup().await;
    for (chain, upstream) in [
        ("throttled-chain", "throttled"),
        ("unavailable-chain", "unavailable"),
    ] {
        let answer = chat_json(&s.server, &s.key, hi(chain)).await;
        assert!(answer["choices"][0]["message"]["content"].is_string());
        // Retried on the same deployment first (max_retries 2), then the
        // fallback served it.
        assert_eq!(s.bedrock.count(upstream), 3, "{upstream}");
        assert_eq!(s.scripted.script.count(&format!("fallback-{upstream}")), 1);
    }
    // An exception frame before the first chunk is the same throttling.
    let events = chat_events(&s.server, &s.key, hi("stream-throttled-chain")).await;
    assert_eq!(events.last().unwrap(), "[DONE]");
    assert_eq!(s.bedrock.count("stream-throttled"), 3);
    assert_eq!(s.scripted.script.count("fallback-stream-throttled"), 1);

    // A ValidationException is the request's fault: no retry, no fallback.
    let response = chat_post(&s.server, &s.key, &hi("invalid-chain")).await;
    let code = error_code(response, 400).await;
    assert!(!code.is_empty());
    assert_eq!(s.bedrock.count("invalid"), 1);
    assert_eq!(s.scripted.script.count("fallback-invalid"), 0);
}

#[tokio::test]
async fn a_bad_signature_is_refused_and_no_secret_reaches_errors_or_logs() {
    let s = setup().await;
    // The mock itself refuses what AWS refuses: a tampered body.
    chat_json(&s.server, &s.key, hi("claude")).await;
    let good = s.bedrock.calls()[0].clone();
    let mut request = client()
        .post(format!("{}{}", s.bedrock.base_url, good.path))
        .body(r#"{"messages":[]}"#);
    for name in [
        "authorization",
        "x-amz-date",
        "x-amz-security-token",
        "content-type",
    ] {
        request = request.header(name, good.headers[name].to_str().unwrap());
    }
    assert_eq!(request.send().await.unwrap().status(), 403);
    let unsigned = client()
        .post(format!("{}{}", s.bedrock.base_url, good.path))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), 403);

    // Signed with the wrong secret: AWS's 403 quotes the canonical
    // request (the session token included); the caller gets an error
    // without it.
    let response = chat_post(&s.server, &s.key, &hi("wrong")).await;
    assert!(response.status().is_client_error() || response.status().is_server_error());
    let text = response.text().await.unwrap();
    let refused = s.bedrock.calls().last().unwrap().refused.clone().unwrap();
    assert!(
        refused.contains(TOKEN),
        "the mock quotes the token as AWS does"
    );
    // AWS's message is relayed, with the token cut out.
    assert!(
        text.contains("does not match") && text.contains("[redacted]"),
        "{text}"
    );
    for secret in [SECRET, TOKEN, "not-the-secret-0123456789"] {
        assert!(!text.contains(secret), "{text}");
    }
    let events = chat_post(
        &s.server,
        &s.key,
        &json!({ "model": "wrong", "stream": true,
        "messages": [{ "role": "user", "content": "hi" }] }),
    )
    .await
    .text()
    .await
    .unwrap();
    for secret in [SECRET, TOKEN, "not-the-secret-0123456789"] {
        assert!(!events.contains(secret), "{events}");
    }
    let log = s.server.log();
    for secret in [SECRET, TOKEN, "not-the-secret-0123456789"] {
        assert!(!log.contains(secret), "the log holds a secret");
    }
}

#[tokio::test]
async fn the_registry_lists_a_bedrock_provider_in_its_region() {
    let s = setup().await;
    let owner = login(&s.server).await;
    let registry = get_json(&s.server, &owner, "/api/v1/sub-processors").await;
    let entries = registry["subProcessors"].as_array().unwrap();
    let aws = entries.iter().find(|e| e["name"] == "aws").unwrap();
    assert_eq!(aws["location"], "AWS eu-central-1");
    assert_eq!(aws["legalName"], "aws (bedrock API)");
}

// ---------------------------------------------------------------------
// Configuration.

fn config_check(text: &str, env: &[(&str, &str)]) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    let mut command = Command::new(BIN);
    command.args(["config", "check"]).arg(&path);
    for name in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    ] {
        command.env_remove(name);
    }
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn one_provider(fields: &str) -> String {
    format!(
        "[[providers]]\nid = \"aws\"\n{fields}\n{}",
        model(
            "claude",
            &format!("provider = \"aws\"\nupstream = \"{CLAUDE}\"")
        )
    )
}

#[test]
fn config_check_names_what_a_bedrock_provider_lacks() {
    let (ok, _, err) = config_check(&one_provider("kind = \"bedrock\""), &[]);
    assert!(!ok);
    assert!(
        err.contains("providers[0].region") && err.contains("needs region"),
        "{err}"
    );

    let (ok, _, err) = config_check(
        &one_provider("kind = \"bedrock\"\nregion = \"eu central\""),
        &[],
    );
    assert!(!ok);
    assert!(
        err.contains("providers[0].region") && err.contains("not an AWS region"),
        "{err}"
    );

    let (ok, _, err) = config_check(
        &one_provider(
            "kind = \"bedrock\"\nregion = \"eu-west-1\"\naws_secret_access_key_env = \"A-B\"",
        ),
        &[],
    );
    assert!(!ok);
    assert!(
        err.contains("providers[0].aws_secret_access_key_env"),
        "{err}"
    );

    let (ok, _, err) = config_check(
        &one_provider(
            "kind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nregion = \"eu-west-1\"",
        ),
        &[],
    );
    assert!(!ok);
    assert!(
        err.contains("providers[0].region") && err.contains("only to providers of kind `bedrock`"),
        "{err}"
    );

    // Valid without credentials in the environment, with a note naming
    // the variables (never a value).
    let (ok, out, err) = config_check(
        &one_provider("kind = \"bedrock\"\nregion = \"eu-west-1\""),
        &[],
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("AWS_ACCESS_KEY_ID") && out.contains("AWS_SECRET_ACCESS_KEY"),
        "{out}"
    );
    let (ok, out, _) = config_check(
        &one_provider(
            "kind = \"bedrock\"\nregion = \"eu-west-1\"\naws_access_key_id_env = \"MY_ID\"\naws_secret_access_key_env = \"MY_SECRET\"",
        ),
        &[("MY_ID", KEY_ID), ("MY_SECRET", SECRET)],
    );
    assert!(ok);
    assert!(!out.contains("note"), "{out}");
    assert!(!out.contains(SECRET));
}

#[tokio::test]
async fn missing_credentials_fail_the_attempt_with_the_variable_named() {
    let bedrock = Bedrock::start(expect()).await;
    let text = format!(
        "[[providers]]\nid = \"aws\"\nkind = \"bedrock\"\nregion = \"eu-central-1\"\nbase_url = \"{}\"\n\
         aws_access_key_id_env = \"UNSET_KEY_ID_FOR_TEST\"\naws_secret_access_key_env = \"UNSET_SECRET_FOR_TEST\"\n{}",
        bedrock.base_url,
        model(
            "claude",
            &format!("provider = \"aws\"\nupstream = \"{CLAUDE}\"")
        )
    );
    let server = TestServer::start_with(Some(&text), &[]);
    let (_, key) = server.create_key(&[]);
    let response = chat_post(&server, &key, &hi("claude")).await;
    assert!(!response.status().is_success());
    let text = response.text().await.unwrap();
    assert!(bedrock.calls().is_empty(), "nothing unsigned is sent");
    assert!(
        text.contains("UNSET_KEY_ID_FOR_TEST is not set"),
        "the error names the variable: {text}"
    );
}

// ---------------------------------------------------------------------
// The official OpenAI SDK.

#[tokio::test(flavor = "multi_thread")]
async fn the_openai_sdk_chats_streams_and_calls_tools_on_a_bedrock_model() {
    let s = setup().await;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    assert!(
        python.exists(),
        "no .venv with the SDKs: run `bash .ci/test`, which installs them"
    );
    let output = tokio::process::Command::new(python)
        .arg(root.join("tests/sdk/openai_bedrock.py"))
        .args([&s.server.base_url, &s.key])
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "openai_bedrock.py disagreed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(s.bedrock.calls().iter().all(|c| c.refused.is_none()));
}
