//! A scripted OpenAI-compatible upstream for the image and audio routes on
//! `127.0.0.1:0`. It records what it received (JSON bodies as they are;
//! multipart forms as `{name: text}` for fields and `{name: {filename,
//! contentType, bytes}}` for files, read by its own small parser) and
//! answers as the `model` says:
//!
//! | route | model | answer |
//! |---|---|---|
//! | images | `img` | `n` images (URLs, or base64 when asked) |
//! | images | `img-cost` | the same, reporting `usage.cost_per_image` 0.05 |
//! | any | `status-NNN` | HTTP NNN with an OpenAI error body |
//! | transcriptions | any | `json`: text only; `verbose_json`: `duration` 42.5 (none for a model ending in `-quiet`); `text`; `srt` ending at 7 s |
//! | speech | any | 3 chunks of "audio" bytes, `audio/mpeg` |
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Map, Value, json};

/// The speech answer, sent in three chunks.
pub const SPEECH: [&[u8]; 3] = [b"ID3-first-chunk|", b"middle-of-the-audio|", b"last-chunk"];
pub const TRANSCRIPT: &str = "hello from upstream audio";

#[derive(Clone, Default)]
pub struct Recorded(Arc<Mutex<Vec<(String, Value)>>>);

impl Recorded {
    /// Every request received: (path, body).
    pub fn all(&self) -> Vec<(String, Value)> {
        self.0.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    pub fn last(&self) -> (String, Value) {
        self.all().pop().expect("a request reached the upstream")
    }
}

pub struct MediaUpstream {
    pub base_url: String,
    pub recorded: Recorded,
    _task: tokio::task::JoinHandle<()>,
}

impl MediaUpstream {
    pub async fn start() -> MediaUpstream {
        let recorded = Recorded::default();
        let app = Router::new()
            .route("/v1/images/generations", post(json_route))
            .route("/v1/audio/speech", post(json_route))
            .route("/v1/images/edits", post(form_route))
            .route("/v1/audio/transcriptions", post(form_route))
            .with_state(recorded.clone());
        let (addr, task) = super::serve(app).await;
        MediaUpstream {
            base_url: format!("http://{addr}/v1"),
            recorded,
            _task: task,
        }
    }
}

fn refusal(model: &str) -> Option<Response> {
    let status = model.strip_prefix("status-")?;
    let status = StatusCode::from_u16(status.parse().ok()?).ok()?;
    let error = json!({ "error": { "message": format!("upstream says {status}"), "type": "upstream", "code": null } });
    Some((status, axum::Json(error)).into_response())
}

async fn json_route(State(recorded): State<Recorded>, uri: Uri, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    recorded
        .0
        .lock()
        .unwrap()
        .push((uri.path().to_owned(), body.clone()));
    let model = body["model"].as_str().unwrap_or_default();
    if let Some(refused) = refusal(model) {
        return refused;
    }
    if uri.path().ends_with("/speech") {
        let chunks = SPEECH.map(|c| Ok::<_, std::io::Error>(Bytes::from_static(c)));
        return Response::builder()
            .header("content-type", "audio/mpeg")
            .body(Body::from_stream(futures::stream::iter(chunks)))
            .unwrap();
    }
    let n = body["n"].as_u64().unwrap_or(1);
    let b64 = body["response_format"] == "b64_json";
    let mut answer = images(n, b64);
    if model == "img-cost" {
        answer["usage"] = json!({ "cost_per_image": 0.05 });
    }
    axum::Json(answer).into_response()
}

fn images(n: u64, b64: bool) -> Value {
    let data: Vec<Value> = (0..n)
        .map(|i| {
            if b64 {
                json!({ "b64_json": "aW1hZ2U=", "revised_prompt": "a revised prompt" })
            } else {
                json!({ "url": format!("https://images.invalid/{i}.png"), "revised_prompt": "a revised prompt" })
            }
        })
        .collect();
    json!({ "created": 1_700_000_000, "data": data })
}

async fn form_route(
    State(recorded): State<Recorded>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let form = parse_form(content_type, &body);
    recorded
        .0
        .lock()
        .unwrap()
        .push((uri.path().to_owned(), form.clone()));
    let model = form["model"].as_str().unwrap_or_default();
    if let Some(refused) = refusal(model) {
        return refused;
    }
    if uri.path().ends_with("/edits") {
        let n = form["n"].as_str().and_then(|n| n.parse().ok()).unwrap_or(1);
        return axum::Json(images(n, true)).into_response();
    }
    match form["response_format"].as_str().unwrap_or("json") {
        // Some OpenAI-compatible servers give no duration.
        "verbose_json" if model.ends_with("-quiet") => {
            axum::Json(json!({ "task": "transcribe", "text": TRANSCRIPT })).into_response()
        }
        "verbose_json" => axum::Json(json!({
            "task": "transcribe", "language": "english", "duration": 42.5, "text": TRANSCRIPT,
            "segments": [{ "id": 0, "start": 0.0, "end": 42.5, "text": TRANSCRIPT }],
        }))
        .into_response(),
        "text" => ([("content-type", "text/plain; charset=utf-8")], TRANSCRIPT).into_response(),
        "srt" => (
            [("content-type", "text/plain; charset=utf-8")],
            format!("1\n00:00:00,000 --> 00:00:07,000\n{TRANSCRIPT}\n"),
        )
            .into_response(),
        _ => axum::Json(json!({ "text": TRANSCRIPT })).into_response(),
    }
}

/// A minimal multipart reader, independent of the gateway's.
pub fn parse_form(content_type: &str, body: &[u8]) -> Value {
    let boundary = content_type
        .split("boundary=")
        .nth(1)
        .unwrap_or_default()
        .trim_matches('"');
    let delimiter = format!("--{boundary}");
    let mut out = Map::new();
    let mut segments = split(body, delimiter.as_bytes());
    segments.remove(0);
    for segment in segments {
        if segment.starts_with(b"--") {
            break;
        }
        let segment = segment.strip_prefix(b"\r\n").unwrap_or(segment);
        let segment = segment.strip_suffix(b"\r\n").unwrap_or(segment);
        let split_at = find(segment, b"\r\n\r\n").expect("part headers");
        let head = String::from_utf8_lossy(&segment[..split_at]).to_string();
        let data = &segment[split_at + 4..];
        let param = |key: &str| {
            head.split(';')
                .map(str::trim)
                .find_map(|p| p.strip_prefix(&format!("{key}=\"")))
                .map(|v| v.split('"').next().unwrap_or_default().to_owned())
        };
        let name = param("name").expect("part name");
        let value = match param("filename") {
            Some(filename) => {
                let content_type = head
                    .lines()
                    .find_map(|l| {
                        l.strip_prefix("content-type: ")
                            .or_else(|| l.strip_prefix("Content-Type: "))
                    })
                    .map(str::to_owned);
                json!({ "filename": filename, "contentType": content_type, "bytes": data.len() })
            }
            None => Value::String(String::from_utf8_lossy(data).into_owned()),
        };
        out.insert(name, value);
    }
    Value::Object(out)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn split<'a>(mut body: &'a [u8], delimiter: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    while let Some(at) = find(body, delimiter) {
        out.push(&body[..at]);
        body = &body[at + delimiter.len()..];
    }
    out.push(body);
    out
}
