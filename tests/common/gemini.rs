//! A scripted Gemini generate-content upstream on loopback, and a small
//! image host. It records each request (path, query, headers, body as
//! parsed and as raw bytes) and answers by
//! the model in the path:
//!
//! | model | answer |
//! |---|---|
//! | `gemini-ok` | text, `STOP`, 11 prompt, 6 candidate and 2 thought tokens |
//! | `gemini-tool` | a `get_weather` function call |
//! | `gemini-len` | `MAX_TOKENS` |
//! | `gemini-safety` | `SAFETY` |
//! | `gemini-503` | 503 `UNAVAILABLE` |
//! | `gemini-error-mid` | (streamed) one chunk, then an error |
//! | `gemini-image` | per candidate asked (`generationConfig.candidateCount`, default 1): the text `a red boat` and one `inlineData` PNG ([`PNG`]); 9 prompt, 1290 candidate tokens |
//! | `gemini-no-image` | text only, finish reason `IMAGE_SAFETY` |
//!
//! Images: `GET /images/cat.png` (a PNG), `/images/big.png` (21 MB),
//! `/images/page.html` (not an image).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

pub const PNG: &[u8] = b"\x89PNG\r\n\x1a\nnot-really-a-png";

#[derive(Clone, Default)]
pub struct Recorded(Arc<Mutex<Vec<Request>>>);

pub struct Request {
    path: String,
    query: Option<String>,
    headers: HeaderMap,
    body: Value,
    raw: String,
}

impl Recorded {
    pub fn bodies(&self) -> Vec<Value> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.body.clone())
            .collect()
    }
    pub fn paths(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.path.clone())
            .collect()
    }
    pub fn headers(&self) -> Vec<HeaderMap> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.headers.clone())
            .collect()
    }
    /// Each request's query string, as it arrived.
    pub fn queries(&self) -> Vec<Option<String>> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.query.clone())
            .collect()
    }
    /// Each body as the bytes that arrived.
    pub fn raw_bodies(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.raw.clone())
            .collect()
    }
    pub fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

pub struct Gemini {
    pub base_url: String,
    pub images: String,
    pub recorded: Recorded,
    _task: tokio::task::JoinHandle<()>,
}

impl Gemini {
    pub async fn start() -> Gemini {
        let recorded = Recorded::default();
        let app = Router::new()
            .route(
                "/images/cat.png",
                get(|| async { ([("content-type", "image/png")], PNG) }),
            )
            .route(
                "/images/big.png",
                get(|| async { ([("content-type", "image/png")], vec![0u8; 21 * 1024 * 1024]) }),
            )
            .route(
                "/images/page.html",
                get(|| async { ([("content-type", "text/html")], "<html></html>") }),
            )
            .fallback(generate)
            .with_state(recorded.clone());
        let (addr, task) = super::serve(app).await;
        Gemini {
            base_url: format!("http://{addr}/v1beta"),
            images: format!("http://{addr}/images"),
            recorded,
            _task: task,
        }
    }
}

fn candidate(parts: Value, finish: Option<&str>) -> Value {
    let mut c = json!({ "content": { "role": "model", "parts": parts }, "index": 0 });
    if let Some(f) = finish {
        c["finishReason"] = json!(f);
    }
    c
}

async fn generate(
    State(recorded): State<Recorded>,
    uri: Uri,
    headers: HeaderMap,
    body: String,
) -> Response {
    let raw = body;
    let body: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    let path = uri.path().to_owned();
    recorded.0.lock().unwrap().push(Request {
        path: path.clone(),
        query: uri.query().map(str::to_owned),
        headers,
        body,
        raw,
    });
    let Some((model, action)) = path
        .rsplit('/')
        .next()
        .and_then(|last| last.split_once(':'))
    else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let stream = action == "streamGenerateContent" && uri.query() == Some("alt=sse");
    if model == "gemini-503" {
        let error = json!({ "error": { "code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE" } });
        return (StatusCode::SERVICE_UNAVAILABLE, axum::Json(error)).into_response();
    }
    if model == "gemini-image" {
        return image_answer(&recorded);
    }
    let usage = json!({ "promptTokenCount": 11, "candidatesTokenCount": 6, "thoughtsTokenCount": 2, "totalTokenCount": 19 });
    let (parts, finish): (Vec<Value>, &str) = match model {
        "gemini-tool" => (
            vec![json!({ "functionCall": { "name": "get_weather", "args": { "city": "Paris" } } })],
            "STOP",
        ),
        "gemini-len" => (vec![json!({ "text": "cut sh" })], "MAX_TOKENS"),
        "gemini-safety" => (vec![], "SAFETY"),
        "gemini-no-image" => (
            vec![json!({ "text": "I cannot draw that." })],
            "IMAGE_SAFETY",
        ),
        _ => (
            vec![
                json!({ "text": "thinking...", "thought": true }),
                json!({ "text": "hello from gemini" }),
            ],
            "STOP",
        ),
    };
    if !stream {
        return axum::Json(json!({
            "candidates": [candidate(Value::Array(parts), Some(finish))],
            "usageMetadata": usage, "modelVersion": model, "responseId": "resp-1",
        }))
        .into_response();
    }
    let mut out = String::new();
    let mut push = |value: Value| out.push_str(&format!("data: {value}\r\n\r\n"));
    if model == "gemini-tool" {
        push(
            json!({ "candidates": [candidate(Value::Array(parts), Some(finish))], "usageMetadata": usage }),
        );
    } else {
        let text: String = parts
            .iter()
            .filter(|p| p["thought"] != true)
            .filter_map(|p| p["text"].as_str())
            .collect();
        let (a, b) = text.split_at(text.len() / 2);
        push(
            json!({ "candidates": [candidate(json!([{ "text": a }]), None)], "usageMetadata": { "promptTokenCount": 11 } }),
        );
        if model == "gemini-error-mid" {
            push(
                json!({ "error": { "code": 500, "message": "Internal error mid-stream", "status": "INTERNAL" } }),
            );
        } else {
            push(
                json!({ "candidates": [candidate(json!([{ "text": b }]), Some(finish))], "usageMetadata": usage }),
            );
        }
    }
    ([("content-type", "text/event-stream")], out).into_response()
}

/// `gemini-image`: as many candidates as asked, each a text and a PNG.
fn image_answer(recorded: &Recorded) -> Response {
    use base64::Engine;
    let asked = recorded.0.lock().unwrap().last().map_or(1, |r| {
        r.body["generationConfig"]["candidateCount"]
            .as_u64()
            .unwrap_or(1)
    });
    let png = base64::engine::general_purpose::STANDARD.encode(PNG);
    let candidates: Vec<Value> = (0..asked)
        .map(|i| {
            let mut c = candidate(
                json!([{ "text": "a red boat" }, { "inlineData": { "mimeType": "image/png", "data": png } }]),
                Some("STOP"),
            );
            c["index"] = json!(i);
            c
        })
        .collect();
    axum::Json(json!({
        "candidates": candidates,
        "usageMetadata": { "promptTokenCount": 9, "candidatesTokenCount": 1290, "totalTokenCount": 1299 },
        "modelVersion": "gemini-image",
    }))
    .into_response()
}
