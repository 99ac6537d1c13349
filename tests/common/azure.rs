//! A scripted Azure OpenAI resource on loopback that checks what Azure
//! checks: the deployment URL (`/openai/deployments/{name}/...`), the
//! `api-version` query and the `api-key` header, with no `Authorization`
//! header. Answers chat (plain and streamed, as Azure streams: a first
//! chunk of prompt filter results), embeddings and image generation; the
//! deployments `filtered`, `busy`, `down` and `bad` answer Azure's content
//! filter refusal, 429, 503 and 400; `finish-filtered` ends with
//! `finish_reason: "content_filter"`.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

pub const SECRET: &str = "azure-test-api-key-7f3a9c";
pub const API_VERSION: &str = "2024-10-21";

#[derive(Clone, Debug)]
pub struct Call {
    pub path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Clone, Default)]
pub struct Calls(pub Arc<Mutex<Vec<Call>>>);

impl Calls {
    pub fn all(&self) -> Vec<Call> {
        self.0.lock().unwrap().clone()
    }
    pub fn to(&self, deployment: &str) -> usize {
        let prefix = format!("/openai/deployments/{deployment}/");
        self.all()
            .iter()
            .filter(|c| c.path.starts_with(&prefix))
            .count()
    }
}

pub fn azure_error(status: StatusCode, body: Value) -> Response {
    (status, axum::Json(body)).into_response()
}

/// Answers as an Azure OpenAI resource: by the deployment in the path.
pub async fn azure(
    State(calls): State<Calls>,
    uri: Uri,
    headers: HeaderMap,
    raw: String,
) -> Response {
    let body: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    calls.0.lock().unwrap().push(Call {
        path: uri.path().to_owned(),
        query: uri.query().map(str::to_owned),
        headers: headers.clone(),
        body: body.clone(),
    });
    if headers.get("api-key").and_then(|v| v.to_str().ok()) != Some(SECRET)
        || headers.contains_key("authorization")
    {
        return azure_error(
            StatusCode::UNAUTHORIZED,
            json!({ "error": { "code": "401", "message": "Access denied due to invalid subscription key or wrong API endpoint." } }),
        );
    }
    if uri.query() != Some(&format!("api-version={API_VERSION}")) {
        return azure_error(
            StatusCode::NOT_FOUND,
            json!({ "error": { "code": "404", "message": "Resource not found" } }),
        );
    }
    let Some(rest) = uri.path().strip_prefix("/openai/deployments/") else {
        return azure_error(
            StatusCode::NOT_FOUND,
            json!({ "error": { "code": "404", "message": "Resource not found" } }),
        );
    };
    let (deployment, operation) = rest.split_once('/').unwrap_or((rest, ""));
    match deployment {
        "filtered" => {
            return azure_error(
                StatusCode::BAD_REQUEST,
                json!({ "error": {
                    "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
                    "type": null, "param": "prompt", "code": "content_filter", "status": 400,
                    "innererror": { "code": "ResponsibleAIPolicyViolation",
                        "content_filter_result": { "hate": { "filtered": true, "severity": "high" } } } } }),
            );
        }
        "busy" => {
            return azure_error(
                StatusCode::TOO_MANY_REQUESTS,
                json!({ "error": { "code": "429", "message": "Requests to the ChatCompletions_Create Operation have exceeded call rate limit." } }),
            );
        }
        "down" => {
            return azure_error(
                StatusCode::SERVICE_UNAVAILABLE,
                json!({ "error": { "code": "503", "message": "Service unavailable" } }),
            );
        }
        "bad" => {
            return azure_error(
                StatusCode::BAD_REQUEST,
                json!({ "error": { "code": "invalid_request", "message": "Invalid value for 'temperature'." } }),
            );
        }
        _ => {}
    }
    let finish = if deployment == "finish-filtered" {
        "content_filter"
    } else {
        "stop"
    };
    match operation {
        "chat/completions" if body["stream"] == true => {
            let chunk = |choices: Value| {
                json!({ "id": "chatcmpl-az", "object": "chat.completion.chunk", "created": 1_700_000_000,
                        "model": "gpt-4o-2024-08-06", "choices": choices })
            };
            // Azure opens a stream with the prompt filter's results and no choices.
            let mut events = vec![json!({ "id": "", "object": "", "created": 0, "model": "", "choices": [],
                "prompt_filter_results": [{ "prompt_index": 0, "content_filter_results": {} }] })];
            events.push(chunk(json!([{ "index": 0, "delta": { "role": "assistant", "content": "" }, "finish_reason": null }])));
            for word in ["hello ", "from ", deployment] {
                events.push(chunk(json!([{ "index": 0, "delta": { "content": word }, "finish_reason": null }])));
            }
            events.push(chunk(json!([{ "index": 0, "delta": {}, "finish_reason": finish }])));
            let mut usage = chunk(json!([]));
            usage["usage"] = json!({ "prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16 });
            events.push(usage);
            let mut text: Vec<String> = events.iter().map(|e| format!("data: {e}\n\n")).collect();
            text.push("data: [DONE]\n\n".into());
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(futures::stream::iter(
                    text.into_iter().map(Ok::<_, std::io::Error>),
                )))
                .unwrap()
        }
        "chat/completions" => axum::Json(json!({
            "id": "chatcmpl-az", "object": "chat.completion", "created": 1_700_000_000, "model": "gpt-4o-2024-08-06",
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": format!("hello from {deployment}") },
                          "finish_reason": finish, "content_filter_results": {} }],
            "usage": { "prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16 },
        }))
        .into_response(),
        "embeddings" => axum::Json(json!({
            "object": "list", "model": "text-embedding-3-small",
            "data": [{ "object": "embedding", "index": 0, "embedding": [0.25, 0.5] }],
            "usage": { "prompt_tokens": 3, "total_tokens": 3 },
        }))
        .into_response(),
        "images/generations" => axum::Json(json!({
            "created": 1_700_000_000, "data": [{ "b64_json": "iVBORw0KGgo=", "revised_prompt": "a boat" }],
        }))
        .into_response(),
        _ => azure_error(StatusCode::NOT_FOUND, json!({ "error": { "code": "404", "message": "Resource not found" } })),
    }
}
