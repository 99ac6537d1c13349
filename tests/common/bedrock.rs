//! A scripted Bedrock runtime on loopback that checks what AWS checks: the
//! SigV4 `Authorization` header is parsed, its scope must name the
//! expected key id, region and service `bedrock`, `x-amz-date` must be
//! near now and match the scope's day, a session token must be the
//! expected one, and the signature is recomputed from the request as
//! received (path as sent, signed headers, body) with the secret key. A
//! bad signature is answered 403 `InvalidSignatureException` with the
//! canonical request in the message, as AWS does. The signing functions
//! used are the gateway's own (`tollgate::providers::bedrock::sigv4`),
//! pinned by AWS's test suite in tests/bedrock.rs.
//!
//! Answers by model id (the path's `{id}`, decoded):
//!
//! | model id | answer |
//! |---|---|
//! | contains `tool` | a `get_weather` toolUse (`{"city":"Paris"}`), `tool_use` |
//! | `throttled` | 429 `ThrottlingException` |
//! | `unavailable` | 503 `ServiceUnavailableException` |
//! | `invalid` | 400 `ValidationException` |
//! | `stream-throttled` | (stream) an exception frame `throttlingException` first |
//! | anything else | text `Hello from Bedrock`, `end_turn`, 12 input + 7 output tokens |
//!
//! Streams are written with an event-stream encoder of this file's own (on
//! `crc32fast`), sent in 7-byte pieces so frames cross chunk boundaries.
//! `GET /images/cat.png` serves a PNG.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tollgate::providers::bedrock::sigv4;

pub const PNG: &[u8] = b"\x89PNG\r\n\x1a\nnot-really-a-png";

/// What the mock expects a request to be signed with.
#[derive(Clone)]
pub struct Expect {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
    pub region: String,
}

#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    pub model: String,
    pub headers: HeaderMap,
    pub body: Value,
    /// How the signature check ended: `None` when it passed.
    pub refused: Option<String>,
}

#[derive(Clone)]
struct Shared {
    expect: Expect,
    calls: Arc<Mutex<Vec<Recorded>>>,
}

pub struct Bedrock {
    pub base_url: String,
    calls: Arc<Mutex<Vec<Recorded>>>,
    _task: tokio::task::JoinHandle<()>,
}

impl Bedrock {
    pub async fn start(expect: Expect) -> Bedrock {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared {
            expect,
            calls: calls.clone(),
        };
        let app = Router::new().fallback(answer).with_state(shared);
        let (addr, task) = super::serve(app).await;
        Bedrock {
            base_url: format!("http://{addr}"),
            calls,
            _task: task,
        }
    }

    pub fn calls(&self) -> Vec<Recorded> {
        self.calls.lock().unwrap().clone()
    }

    pub fn count(&self, model: &str) -> usize {
        self.calls().iter().filter(|c| c.model == model).count()
    }
}

fn aws_error(status: u16, kind: &str, message: &str) -> Response {
    let mut response = (
        StatusCode::from_u16(status).unwrap(),
        axum::Json(json!({ "message": message })),
    )
        .into_response();
    response
        .headers_mut()
        .insert("x-amzn-errortype", kind.parse().unwrap());
    response
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Why AWS would refuse the request's signature, or `None`.
fn check_signature(
    expect: &Expect,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Option<String> {
    check(expect, method, uri, headers, body).err()
}

fn check(
    expect: &Expect,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(), String> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| format!("MissingAuthenticationToken: no {name}"))
    };
    let auth = header("authorization")?;
    let rest = auth
        .strip_prefix("AWS4-HMAC-SHA256 ")
        .ok_or("IncompleteSignature: not AWS4-HMAC-SHA256")?;
    let mut credential = None;
    let mut signed = None;
    let mut signature = None;
    for part in rest.split(", ") {
        match part.split_once('=') {
            Some(("Credential", v)) => credential = Some(v),
            Some(("SignedHeaders", v)) => signed = Some(v),
            Some(("Signature", v)) => signature = Some(v),
            _ => return Err(format!("malformed Authorization part {part}")),
        }
    }
    let (Some(credential), Some(signed), Some(signature)) = (credential, signed, signature) else {
        return Err("incomplete Authorization".into());
    };
    let scope: Vec<&str> = credential.split('/').collect();
    if scope.len() != 5
        || scope[0] != expect.access_key_id
        || scope[2] != expect.region
        || scope[3] != "bedrock"
        || scope[4] != "aws4_request"
    {
        return Err(format!("bad credential scope {credential}"));
    }
    let date = header("x-amz-date")?;
    let time = time::PrimitiveDateTime::parse(
        date,
        time::macros::format_description!("[year][month][day]T[hour][minute][second]Z"),
    )
    .map_err(|_| "bad x-amz-date".to_owned())?
    .assume_utc();
    if (time::OffsetDateTime::now_utc() - time).abs() > time::Duration::minutes(5) {
        return Err("RequestTimeTooSkewed".into());
    }
    if !date.starts_with(scope[1]) {
        return Err("the scope's date is not the request's".into());
    }
    let names: Vec<&str> = signed.split(';').collect();
    if !names.contains(&"host") || !names.contains(&"x-amz-date") {
        return Err("host and x-amz-date must be signed".into());
    }
    let token = headers
        .get("x-amz-security-token")
        .and_then(|v| v.to_str().ok());
    if token != expect.session_token.as_deref() {
        return Err("UnrecognizedClientException: the security token is invalid".into());
    }
    let mut signed_headers = Vec::new();
    for name in &names {
        let Some(value) = headers.get(*name) else {
            return Err(format!("signed header {name} is missing"));
        };
        signed_headers.push((name.to_string(), value.to_str().unwrap().to_owned()));
    }
    let request = sigv4::Request {
        method: method.as_str(),
        path: uri.path(),
        query: uri.query(),
        headers: &signed_headers,
        payload: body,
        normalize: true,
    };
    let scope = sigv4::Scope {
        region: &expect.region,
        service: "bedrock",
        time,
    };
    let (canonical, _) = sigv4::canonical_request(&request);
    let to_sign = sigv4::string_to_sign(&scope, &canonical);
    let expected = sigv4::signature(&expect.secret_access_key, &scope, &to_sign);
    if expected == signature {
        return Ok(());
    }
    Err(format!(
        "The request signature we calculated does not match the signature you provided. \
             Check your AWS Secret Access Key and signing method. Consult the service documentation for details.\n\n\
             The Canonical String for this request should have been\n'{canonical}'\n\n\
             The String-to-Sign should have been\n'{to_sign}'\n"
    ))
}

async fn answer(
    State(shared): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if uri.path() == "/images/cat.png" {
        return ([("content-type", "image/png")], PNG).into_response();
    }
    let refused = check_signature(&shared.expect, &method, &uri, &headers, &body);
    // The id is one path segment, encoded; the action follows it.
    let (model, action) = uri
        .path()
        .strip_prefix("/model/")
        .and_then(|rest| rest.split_once('/'))
        .map(|(id, action)| (percent_decode(id), action.to_owned()))
        .unwrap_or_default();
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.calls.lock().unwrap().push(Recorded {
        path: uri.path().to_owned(),
        model: model.clone(),
        headers: headers.clone(),
        body: parsed,
        refused: refused.clone(),
    });
    if let Some(why) = refused {
        return aws_error(403, "InvalidSignatureException", &why);
    }
    if method != Method::POST || !matches!(action.as_str(), "converse" | "converse-stream") {
        return aws_error(404, "UnknownOperationException", "no such operation");
    }
    match model.as_str() {
        "throttled" => {
            return aws_error(
                429,
                "ThrottlingException",
                "Too many requests, please wait before trying again.",
            );
        }
        "unavailable" => {
            return aws_error(503, "ServiceUnavailableException", "Service unavailable");
        }
        "invalid" => {
            return aws_error(
                400,
                "ValidationException",
                "The model returned the following errors: messages: bad",
            );
        }
        _ => {}
    }
    if action == "converse-stream" {
        return stream(&model);
    }
    let content = if model.contains("tool") {
        json!([{ "toolUse": { "toolUseId": "tooluse_1", "name": "get_weather", "input": { "city": "Paris" } } }])
    } else {
        json!([{ "text": "Hello from Bedrock" }])
    };
    let stop = if model.contains("tool") {
        "tool_use"
    } else {
        "end_turn"
    };
    axum::Json(json!({
        "output": { "message": { "role": "assistant", "content": content } },
        "stopReason": stop,
        "usage": { "inputTokens": 12, "outputTokens": 7, "totalTokens": 19 },
        "metrics": { "latencyMs": 5 },
    }))
    .into_response()
}

/// One event-stream message (the framing written independently of the
/// gateway's decoder).
pub fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut block = Vec::new();
    for (name, value) in headers {
        block.push(name.len() as u8);
        block.extend_from_slice(name.as_bytes());
        block.push(7u8);
        block.extend_from_slice(&(value.len() as u16).to_be_bytes());
        block.extend_from_slice(value.as_bytes());
    }
    let total = 12 + block.len() + payload.len() + 4;
    let mut out = Vec::new();
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(block.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&block);
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

fn event(kind: &str, payload: Value) -> Vec<u8> {
    frame(
        &[
            (":event-type", kind),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload.to_string().as_bytes(),
    )
}

fn stream(model: &str) -> Response {
    let mut bytes = Vec::new();
    if model == "stream-throttled" {
        bytes.extend(frame(
            &[
                (":exception-type", "throttlingException"),
                (":content-type", "application/json"),
                (":message-type", "exception"),
            ],
            br#"{"message":"Too many requests, please wait before trying again."}"#,
        ));
    } else {
        bytes.extend(event(
            "messageStart",
            json!({ "role": "assistant", "p": "abcd" }),
        ));
        if model.contains("tool") {
            bytes.extend(event(
                "contentBlockStart",
                json!({ "contentBlockIndex": 0,
                "start": { "toolUse": { "toolUseId": "tooluse_1", "name": "get_weather" } } }),
            ));
            for piece in ["{\"city\":", "\"Paris\"}"] {
                bytes.extend(event(
                    "contentBlockDelta",
                    json!({ "contentBlockIndex": 0,
                    "delta": { "toolUse": { "input": piece } } }),
                ));
            }
        } else {
            for piece in ["Hello", " from", " Bedrock"] {
                bytes.extend(event(
                    "contentBlockDelta",
                    json!({ "contentBlockIndex": 0,
                    "delta": { "text": piece } }),
                ));
            }
        }
        bytes.extend(event("contentBlockStop", json!({ "contentBlockIndex": 0 })));
        let stop = if model.contains("tool") {
            "tool_use"
        } else {
            "end_turn"
        };
        bytes.extend(event("messageStop", json!({ "stopReason": stop })));
        bytes.extend(event(
            "metadata",
            json!({
            "usage": { "inputTokens": 12, "outputTokens": 7, "totalTokens": 19 },
            "metrics": { "latencyMs": 5 } }),
        ));
    }
    let pieces: Vec<Result<Bytes, std::io::Error>> = bytes
        .chunks(7)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    Response::builder()
        .header("content-type", "application/vnd.amazon.eventstream")
        .body(Body::from_stream(futures::stream::iter(pieces)))
        .unwrap()
}
