//! A scripted Vertex AI endpoint on loopback that checks what Google
//! checks: at `/token` the service account's jwt-bearer grant (RS256
//! against the account's public key; iss, scope, aud, iat and exp), and
//! on every model call a bearer token it issued (or `STATIC_TOKEN`), the
//! project and location in the path and the publisher's method: Google
//! models' `:generateContent`, `:streamGenerateContent?alt=sse` and
//! `:predict`; Anthropic models' `:rawPredict` and `:streamRawPredict`,
//! which refuse a body without `anthropic_version: "vertex-2023-10-16"` or
//! with a `model`. `/token-refused` refuses every grant; the models
//! `gemini-503`, `gemini-400` and `claude-busy` answer 503, 400 and 429.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use rsa::pkcs1::EncodeRsaPublicKey;
use rsa::pkcs8::DecodePrivateKey;
use serde_json::{Value, json};

pub const KEY_PEM: &str = include_str!("../fixtures/vertex-test-service-account.pem");
pub const CLIENT_EMAIL: &str = "tollgate-test@test-project.iam.gserviceaccount.com";
pub const PROJECT: &str = "test-project";
pub const LOCATION: &str = "europe-west4";
pub const STATIC_TOKEN: &str = "ya29.static-operator-token";

#[derive(Clone, Debug)]
pub struct Call {
    pub path: String,
    pub query: Option<String>,
    pub authorization: Option<String>,
    pub body: Value,
}

#[derive(Default)]
pub struct Inner {
    /// `expires_in` of the next grants (3600 once empty).
    pub lifetimes: VecDeque<u64>,
    /// Every token issued, in order.
    pub issued: Vec<String>,
    /// Claims of every grant that verified.
    pub grants: Vec<Value>,
    pub calls: Vec<Call>,
}

#[derive(Clone)]
pub struct Google {
    pub inner: Arc<Mutex<Inner>>,
    pub public: Arc<DecodingKey>,
    pub token_uri: Arc<Mutex<String>>,
}

impl Google {
    pub fn grants(&self) -> usize {
        self.inner.lock().unwrap().grants.len()
    }
    pub fn calls(&self) -> Vec<Call> {
        self.inner.lock().unwrap().calls.clone()
    }
    pub fn calls_to(&self, model: &str) -> usize {
        let needle = format!("/models/{model}:");
        self.calls()
            .iter()
            .filter(|c| c.path.contains(&needle))
            .count()
    }
}

pub fn google_error(status: StatusCode, message: &str) -> Response {
    let body =
        json!({ "error": { "code": status.as_u16(), "message": message, "status": "ERROR" } });
    (status, axum::Json(body)).into_response()
}

pub fn sse(events: Vec<Value>) -> Response {
    let text: Vec<String> = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(futures::stream::iter(
            text.into_iter().map(Ok::<_, std::io::Error>),
        )))
        .unwrap()
}

/// Anthropic's event stream, as `:streamRawPredict` sends it: each event
/// named by its type.
pub fn anthropic_sse(events: Vec<Value>) -> Response {
    let text: Vec<String> = events
        .iter()
        .map(|e| {
            format!(
                "event: {}\ndata: {e}\n\n",
                e["type"].as_str().unwrap_or_default()
            )
        })
        .collect();
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(futures::stream::iter(
            text.into_iter().map(Ok::<_, std::io::Error>),
        )))
        .unwrap()
}

/// The token endpoint: verifies the jwt-bearer grant as Google does.
pub fn token(google: &Google, path: &str, raw: &str) -> Response {
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

pub async fn google(
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
            // The model's own validation, answered in Anthropic's shape.
            if body["messages"].as_array().is_none_or(Vec::is_empty) || !body["max_tokens"].is_u64() {
                let error = json!({ "type": "error", "error": { "type": "invalid_request_error",
                                    "message": "messages: at least one message is required" } });
                return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
            }
            if action == "rawPredict" {
                return axum::Json(json!({
                    "id": "msg_vrtx_1", "type": "message", "role": "assistant", "model": model,
                    "content": [{ "type": "text", "text": format!("hello from {model}") }],
                    "stop_reason": "end_turn", "usage": { "input_tokens": 9, "output_tokens": 3 },
                }))
                .into_response();
            }
            anthropic_sse(vec![
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

/// A service account key file for the mock, as Google issues them.
pub fn key_file(dir: &Path, name: &str, token_uri: &str) -> PathBuf {
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

/// Starts the mock on loopback; the grants answer `expires_in` from
/// `lifetimes` in turn (3600 once used up). Returns its base URL, whose
/// `/token` is the token endpoint.
pub async fn start(lifetimes: &[u64]) -> (Google, String, tokio::task::JoinHandle<()>) {
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
    let app = axum::Router::new()
        .fallback(self::google)
        .with_state(google.clone());
    let (addr, task) = super::serve(app).await;
    let base = format!("http://{addr}");
    *google.token_uri.lock().unwrap() = format!("{base}/token");
    (google, base, task)
}
