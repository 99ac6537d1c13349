//! The Vertex AI provider kind, against a mock that checks what Google
//! checks: the service account's signed grant (RS256 against the
//! account's public key; iss, scope, aud, iat and exp) at its token_uri,
//! the bearer token on every call, the publisher paths, and the Anthropic
//! body Vertex takes (`anthropic_version`, no `model`). Tokens are reused
//! until five minutes before they expire and exchanged once however many
//! requests wait; errors map to the right retry decision; secrets stay out
//! of answers and logs; `config check` validates the settings.

mod common;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use common::{BIN, TestServer, chat_events, chat_json, chat_post, client, error_code, stderr};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use rsa::pkcs1::EncodeRsaPublicKey;
use rsa::pkcs8::DecodePrivateKey;
use serde_json::{Value, json};

const KEY_PEM: &str = include_str!("fixtures/vertex-test-service-account.pem");
const CLIENT_EMAIL: &str = "tollgate-test@test-project.iam.gserviceaccount.com";
const PROJECT: &str = "test-project";
const LOCATION: &str = "europe-west4";
const STATIC_TOKEN: &str = "ya29.static-operator-token";

#[derive(Clone, Debug)]
struct Call {
    path: String,
    query: Option<String>,
    authorization: Option<String>,
    body: Value,
}

#[derive(Default)]
struct Inner {
    /// `expires_in` of the next grants (3600 once empty).
    lifetimes: VecDeque<u64>,
    /// Every token issued, in order.
    issued: Vec<String>,
    /// Claims of every grant that verified.
    grants: Vec<Value>,
    calls: Vec<Call>,
}

#[derive(Clone)]
struct Google {
    inner: Arc<Mutex<Inner>>,
    public: Arc<DecodingKey>,
    token_uri: Arc<Mutex<String>>,
}

impl Google {
    fn grants(&self) -> usize {
        self.inner.lock().unwrap().grants.len()
    }
    fn calls(&self) -> Vec<Call> {
        self.inner.lock().unwrap().calls.clone()
    }
    fn calls_to(&self, model: &str) -> usize {
        let needle = format!("/models/{model}:");
        self.calls()
            .iter()
            .filter(|c| c.path.contains(&needle))
            .count()
    }
}

fn google_error(status: StatusCode, message: &str) -> Response {
    let body =
        json!({ "error": { "code": status.as_u16(), "message": message, "status": "ERROR" } });
    (status, axum::Json(body)).into_response()
}

fn sse(events: Vec<Value>) -> Response {
    let text: Vec<String> = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(futures::stream::iter(
            text.into_iter().map(Ok::<_, std::io::Error>),
        )))
        .unwrap()
}

/// The token endpoint: verifies the jwt-bearer grant as Google does.
fn token(google: &Google, path: &str, raw: &str) -> Response {
    if path == "/token-refused" {
        let body =
            json!({ "error": "invalid_grant", "error_description": "Invalid JWT Signature." });
        return (StatusCode::BAD_REQUEST, axum::Json(body)).into_response();
    }
    let form: Vec<(String, String)> = url::form_urlencoded::parse(raw.as_bytes())
        .into_owned()
        .collect();
    let field = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    if field("grant_type").as_deref() != Some("urn:ietf:params:oauth:grant-type:jwt-bearer") {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({ "error": "unsupported_grant_type" })),
        )
            .into_response();
    }
    let token_uri = google.token_uri.lock().unwrap().clone();
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_audience(&[token_uri.as_str()]);
    validation.set_issuer(&[CLIENT_EMAIL]);
    validation.set_required_spec_claims(&["exp", "iat", "aud", "iss"]);
    let assertion = field("assertion").unwrap_or_default();
    let claims = match jsonwebtoken::decode::<Value>(&assertion, &google.public, &validation) {
        Ok(data) => data.claims,
        Err(_) => {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({ "error": "invalid_grant" })),
            )
                .into_response();
        }
    };
    let lifetime = claims["exp"].as_i64().unwrap_or(0) - claims["iat"].as_i64().unwrap_or(0);
    if claims["scope"] != "https://www.googleapis.com/auth/cloud-platform"
        || !(1..=3600).contains(&lifetime)
    {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({ "error": "invalid_scope" })),
        )
            .into_response();
    }
    let mut inner = google.inner.lock().unwrap();
    inner.grants.push(claims);
    let token = format!("ya29.test-token-{}", inner.issued.len() + 1);
    inner.issued.push(token.clone());
    let expires_in = inner.lifetimes.pop_front().unwrap_or(3600);
    axum::Json(json!({ "access_token": token, "expires_in": expires_in, "token_type": "Bearer" }))
        .into_response()
}

async fn google(
    State(google): State<Google>,
    uri: Uri,
    headers: HeaderMap,
    raw: String,
) -> Response {
    let path = uri.path().to_owned();
    if path.starts_with("/token") {
        return token(&google, &path, &raw);
    }
    let body: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    let authorization = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    google.inner.lock().unwrap().calls.push(Call {
        path: path.clone(),
        query: uri.query().map(str::to_owned),
        authorization: authorization.clone(),
        body: body.clone(),
    });
    let known = {
        let inner = google.inner.lock().unwrap();
        authorization.as_deref().is_some_and(|a| {
            a == format!("Bearer {STATIC_TOKEN}")
                || inner.issued.iter().any(|t| a == format!("Bearer {t}"))
        })
    };
    if !known {
        return google_error(
            StatusCode::UNAUTHORIZED,
            "Request had invalid authentication credentials.",
        );
    }
    let prefix = format!("/v1/projects/{PROJECT}/locations/{LOCATION}/publishers/");
    let Some(rest) = path.strip_prefix(&prefix) else {
        return google_error(StatusCode::NOT_FOUND, "not found");
    };
    let Some((publisher, rest)) = rest.split_once("/models/") else {
        return google_error(StatusCode::NOT_FOUND, "not found");
    };
    let Some((model, action)) = rest.split_once(':') else {
        return google_error(StatusCode::NOT_FOUND, "not found");
    };
    match model {
        "gemini-503" => {
            return google_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "The service is currently unavailable.",
            );
        }
        "gemini-400" => {
            return google_error(StatusCode::BAD_REQUEST, "Invalid JSON payload received.");
        }
        "claude-busy" => {
            let body = json!({ "type": "error", "error": { "type": "rate_limit_error", "message": "Quota exceeded" } });
            return (StatusCode::TOO_MANY_REQUESTS, axum::Json(body)).into_response();
        }
        _ => {}
    }
    match (publisher, action) {
        ("google", "generateContent") => axum::Json(json!({
            "candidates": [{ "content": { "role": "model", "parts": [{ "text": format!("hello from {model}") }] }, "finishReason": "STOP" }],
            "usageMetadata": { "promptTokenCount": 11, "candidatesTokenCount": 6 },
            "responseId": "vertex-1",
        }))
        .into_response(),
        ("google", "streamGenerateContent") if uri.query() == Some("alt=sse") => sse(vec![
            json!({ "candidates": [{ "content": { "role": "model", "parts": [{ "text": "hello " }] } }] }),
            json!({ "candidates": [{ "content": { "role": "model", "parts": [{ "text": format!("from {model}") }] }, "finishReason": "STOP" }],
                    "usageMetadata": { "promptTokenCount": 11, "candidatesTokenCount": 6 } }),
        ]),
        ("google", "predict") => {
            let predictions: Vec<Value> = body["instances"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, instance)| {
                    let length = body["parameters"]["outputDimensionality"].as_u64().unwrap_or(2) as usize;
                    let mut values = vec![json!(i as f64), json!(0.5)];
                    values.resize(length.max(2), json!(0.0));
                    // Ten a word: far from any estimate, so the test sees whose count is billed.
                    let tokens = 10 * instance["content"].as_str().unwrap_or_default().split_whitespace().count();
                    json!({ "embeddings": { "values": values, "statistics": { "token_count": tokens, "truncated": false } } })
                })
                .collect();
            axum::Json(json!({ "predictions": predictions, "metadata": { "billableCharacterCount": 10 } })).into_response()
        }
        ("anthropic", "rawPredict" | "streamRawPredict") => {
            // What Vertex requires of an Anthropic body.
            if body["anthropic_version"] != "vertex-2023-10-16" || body.get("model").is_some() {
                return google_error(StatusCode::BAD_REQUEST, "anthropic_version must be vertex-2023-10-16 and model must be absent");
            }
            if action == "rawPredict" {
                return axum::Json(json!({
                    "id": "msg_vrtx_1", "type": "message", "role": "assistant", "model": model,
                    "content": [{ "type": "text", "text": format!("hello from {model}") }],
                    "stop_reason": "end_turn", "usage": { "input_tokens": 9, "output_tokens": 3 },
                }))
                .into_response();
            }
            sse(vec![
                json!({ "type": "message_start", "message": { "id": "msg_vrtx_2", "type": "message", "role": "assistant",
                        "content": [], "model": model, "usage": { "input_tokens": 9, "output_tokens": 1 } } }),
                json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }),
                json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "hello " } }),
                json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": format!("from {model}") } }),
                json!({ "type": "content_block_stop", "index": 0 }),
                json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn" }, "usage": { "output_tokens": 3 } }),
                json!({ "type": "message_stop" }),
            ])
        }
        _ => google_error(StatusCode::NOT_FOUND, "no such method"),
    }
}

struct Setup {
    google: Google,
    server: TestServer,
    key: String,
    _task: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

/// A service account key file for the mock, as Google issues them.
fn key_file(dir: &Path, name: &str, token_uri: &str) -> PathBuf {
    let path = dir.join(name);
    let file = json!({
        "type": "service_account",
        "project_id": PROJECT,
        "private_key_id": "0123456789abcdef",
        "private_key": KEY_PEM,
        "client_email": CLIENT_EMAIL,
        "client_id": "1234567890",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": token_uri,
    });
    std::fs::write(&path, file.to_string()).unwrap();
    path
}

async fn setup(lifetimes: &[u64]) -> Setup {
    let private = rsa::RsaPrivateKey::from_pkcs8_pem(KEY_PEM).unwrap();
    let public = private.to_public_key().to_pkcs1_der().unwrap();
    let google = Google {
        inner: Arc::new(Mutex::new(Inner {
            lifetimes: lifetimes.iter().copied().collect(),
            ..Inner::default()
        })),
        public: Arc::new(DecodingKey::from_rsa_der(public.as_bytes())),
        token_uri: Arc::default(),
    };
    let app = Router::new()
        .fallback(self::google)
        .with_state(google.clone());
    let (addr, task) = common::serve(app).await;
    let base = format!("http://{addr}");
    *google.token_uri.lock().unwrap() = format!("{base}/token");
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
