//! Image and audio routes under `/v1` (OpenAI's shapes, DESIGN 7.4):
//! `images/generations` and `audio/speech` take JSON, `images/edits` and
//! `audio/transcriptions` take `multipart/form-data`.
//!
//! A handler counts the request against the key's per-minute limit, parses
//! and validates the body (naming the field at fault), and hands it to the
//! media pipeline (`gateway::media`). The body is read once into one buffer
//! (up to the 50 MB limit); uploaded files stay slices of it all the way
//! to the upstream.

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::api::body::Body;
use crate::api::inference::Inference;
use crate::api::json::JsonBody;
use crate::api::state::AppState;
use crate::base::error::{ApiError, Code};
use crate::gateway::media::{self, MediaAnswer, MediaRequest, Route, ServiceFields};

use crate::providers::form::{self, FormPart};
use crate::providers::media::MediaCall;
use crate::traces;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/images/generations", post(create_image))
        .route("/v1/images/edits", post(edit_image))
        .route("/v1/audio/transcriptions", post(create_transcription))
        .route("/v1/audio/speech", post(create_speech))
}

/// The caller's fields of ours, removed before forwarding.
const SERVICE_FIELDS: [&str; 4] = [
    "purpose",
    "user_consent_id",
    "end_user_id",
    "deployer_context",
];
const IMAGE_FORMATS: [&str; 2] = ["url", "b64_json"];
const TRANSCRIPT_FORMATS: [&str; 5] = ["json", "text", "srt", "verbose_json", "vtt"];
const SPEECH_FORMATS: [&str; 6] = ["mp3", "opus", "aac", "flac", "wav", "pcm"];
/// The fields of a transcription form (OpenAI's), besides ours. Any other
/// part is refused: it would be forwarded unchecked, and a second file
/// could be transcribed while the first one is billed.
const TRANSCRIPTION_FIELDS: [&str; 10] = [
    "file",
    "model",
    "language",
    "prompt",
    "response_format",
    "temperature",
    "timestamp_granularities[]",
    "timestamp_granularities",
    "chunking_strategy",
    "include[]",
];
const MAX_IMAGES: u64 = 10;
const MAX_SIDE: u32 = 16_384;

/// `POST /v1/images/generations`
async fn create_image(req: Inference, body: JsonBody) -> Response {
    let operation = Route::Generation.operation();
    handle(&req, operation, || parse_generation(&body.0)).await
}

/// `POST /v1/images/edits`
async fn edit_image(req: Inference, body: Body) -> Response {
    let operation = Route::Edit.operation();
    handle(&req, operation, || parse_edit(&req.headers, &body.0)).await
}

/// `POST /v1/audio/transcriptions`
async fn create_transcription(req: Inference, body: Body) -> Response {
    let operation = Route::Transcription.operation();
    handle(&req, operation, || {
        parse_transcription(&req.headers, &body.0)
    })
    .await
}

/// `POST /v1/audio/speech`
async fn create_speech(req: Inference, body: JsonBody) -> Response {
    let operation = Route::Speech.operation();
    handle(&req, operation, || parse_speech(&body.0)).await
}

/// The per-minute limit first (its headers go on every answer), then the
/// parsed request through the pipeline, in its server span named for
/// `operation` (docs/observability.md).
async fn handle(
    req: &Inference,
    operation: &'static str,
    parse: impl FnOnce() -> Result<MediaRequest, ApiError>,
) -> Response {
    req.serve(operation, async {
        let request = parse()?;
        let model = request.model.clone();
        traces::request_model(operation, &model);
        let response =
            match media::serve(&req.state.gateway, &req.key, req.request_id(), request).await {
                Ok(answer) => respond(answer),
                Err(error) => error.into_response(),
            };
        Ok(req.label_known(model, response))
    })
    .await
}

fn respond(answer: MediaAnswer) -> Response {
    match answer {
        MediaAnswer::Json(value) => axum::Json(value).into_response(),
        MediaAnswer::Held(review) => (StatusCode::ACCEPTED, axum::Json(review)).into_response(),
        MediaAnswer::Text {
            body,
            content_type,
            headers,
        } => with_headers((body, content_type, headers)),
        MediaAnswer::Audio {
            content_type,
            headers,
            body,
        } => {
            let body = axum::body::Body::from_stream(futures::StreamExt::map(body, |chunk| {
                chunk.map_err(|e| std::io::Error::other(e.message))
            }));
            with_headers((body, content_type, headers))
        }
    }
}

fn with_headers<B: Into<axum::body::Body>>(
    (body, content_type, headers): (B, String, Vec<(&'static str, String)>),
) -> Response {
    let mut response = Response::new(body.into());
    let map = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&content_type) {
        map.insert(header::CONTENT_TYPE, value);
    }
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            map.insert(name, value);
        }
    }
    response
}

// --- JSON routes ---

fn parse_generation(bytes: &[u8]) -> Result<MediaRequest, ApiError> {
    let mut body = object(bytes)?;
    let service = service_fields_json(&mut body)?;
    no_chain(body.contains_key("models"))?;
    let model = required(body.get("model"), "model")?;
    let prompt = required(body.get("prompt"), "prompt")?;
    count(body.get("n"), "n")?;
    if let Some(size) = body.get("size").filter(|v| !v.is_null()) {
        size_of(size.as_str(), "size")?;
    }
    one_of(
        body.get("response_format"),
        "response_format",
        &IMAGE_FORMATS,
    )?;
    for field in ["quality", "style", "user"] {
        optional_string(body.get(field), field)?;
    }
    Ok(MediaRequest {
        route: Route::Generation,
        model,
        text: prompt,
        service,
        logged: String::from_utf8_lossy(bytes).into_owned(),
        call: MediaCall::Generate(Value::Object(body)),
    })
}

fn parse_speech(bytes: &[u8]) -> Result<MediaRequest, ApiError> {
    let mut body = object(bytes)?;
    let service = service_fields_json(&mut body)?;
    no_chain(body.contains_key("models"))?;
    let model = required(body.get("model"), "model")?;
    let input = required(body.get("input"), "input")?;
    match body.get("voice") {
        Some(Value::String(v)) if !v.trim().is_empty() => {}
        Some(Value::Object(_)) => {}
        _ => {
            return Err(ApiError::invalid(
                "voice",
                "`voice` is required: a voice name such as `alloy`",
            ));
        }
    }
    one_of(
        body.get("response_format"),
        "response_format",
        &SPEECH_FORMATS,
    )?;
    if let Some(speed) = body.get("speed").filter(|v| !v.is_null())
        && !speed.as_f64().is_some_and(|s| (0.25..=4.0).contains(&s))
    {
        return Err(ApiError::invalid(
            "speed",
            "`speed` must be a number from 0.25 to 4.0",
        ));
    }
    Ok(MediaRequest {
        route: Route::Speech,
        model,
        text: input,
        service,
        logged: String::from_utf8_lossy(bytes).into_owned(),
        call: MediaCall::Speak(Value::Object(body)),
    })
}

pub(crate) use crate::providers::wire::chat::{object, service_fields as service_fields_json};

// --- multipart routes ---

fn parse_edit(headers: &HeaderMap, bytes: &Bytes) -> Result<MediaRequest, ApiError> {
    let mut parts = parts(headers, bytes)?;
    let service = service_fields_form(&mut parts)?;
    no_chain(parts.iter().any(|p| p.name == "models"))?;
    let model = required_field(&parts, "model")?;
    let prompt = required_field(&parts, "prompt")?;
    if !parts
        .iter()
        .any(|p| (p.name == "image" || p.name == "image[]") && is_file(p))
    {
        return Err(ApiError::invalid(
            "image",
            "`image` is required: the image to edit, as a file part",
        ));
    }
    if let Some(mask) = parts.iter().find(|p| p.name == "mask")
        && !is_file(mask)
    {
        return Err(ApiError::invalid("mask", "`mask` must be a file part"));
    }
    if let Some(n) = field(&parts, "n")? {
        // Text that is no whole number stays text, which `count` refuses.
        let n = n
            .trim()
            .parse::<u64>()
            .map_or_else(|_| json!(n), |n| json!(n));
        count(Some(&n), "n")?;
    }
    if let Some(size) = field(&parts, "size")? {
        size_of(Some(size), "size")?;
    }
    let format = field(&parts, "response_format")?.map(|f| json!(f));
    one_of(format.as_ref(), "response_format", &IMAGE_FORMATS)?;
    Ok(MediaRequest {
        route: Route::Edit,
        model,
        text: prompt,
        service: service.clone(),
        logged: logged(&parts, &service),
        call: MediaCall::Edit(parts),
    })
}

fn parse_transcription(headers: &HeaderMap, bytes: &Bytes) -> Result<MediaRequest, ApiError> {
    let mut parts = parts(headers, bytes)?;
    let service = service_fields_form(&mut parts)?;
    no_chain(parts.iter().any(|p| p.name == "models"))?;
    if let Some(unknown) = parts
        .iter()
        .find(|p| !TRANSCRIPTION_FIELDS.contains(&p.name.as_str()))
    {
        let name: String = unknown.name.chars().take(100).collect();
        return Err(ApiError::invalid(
            name.clone(),
            format!(
                "`{name}` is not a field of a transcription request; send {}",
                TRANSCRIPTION_FIELDS.join(", ")
            ),
        ));
    }
    let files = parts.iter().filter(|p| p.filename.is_some()).count();
    if files > 1 {
        return Err(ApiError::invalid(
            "file",
            format!("send one audio file per transcription; this body has {files} file parts"),
        ));
    }
    let model = required_field(&parts, "model")?;
    if !parts.iter().any(|p| p.name == "file" && is_file(p)) {
        return Err(ApiError::invalid(
            "file",
            "`file` is required: the audio to transcribe, as a file part",
        ));
    }
    let format = field(&parts, "response_format")?.map(|f| json!(f));
    one_of(format.as_ref(), "response_format", &TRANSCRIPT_FORMATS)?;
    if let Some(t) = field(&parts, "temperature")?
        && !t
            .trim()
            .parse::<f64>()
            .is_ok_and(|t| (0.0..=1.0).contains(&t))
    {
        return Err(ApiError::invalid(
            "temperature",
            "`temperature` must be a number from 0 to 1",
        ));
    }
    field(&parts, "language")?;
    let prompt = field(&parts, "prompt")?.unwrap_or_default().to_owned();
    Ok(MediaRequest {
        route: Route::Transcription,
        model,
        text: prompt,
        service: service.clone(),
        logged: logged(&parts, &service),
        call: MediaCall::Transcribe(parts),
    })
}

fn parts(headers: &HeaderMap, bytes: &Bytes) -> Result<Vec<FormPart>, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if form::boundary(content_type).is_err() {
        return Err(ApiError::new(
            Code::UnsupportedMediaType,
            "send this route's body as `multipart/form-data` (with its boundary)",
        ));
    }
    form::parse(content_type, bytes).map_err(|e| {
        ApiError::new(
            Code::InvalidRequest,
            format!("malformed multipart body: {e}"),
        )
    })
}

fn is_file(part: &FormPart) -> bool {
    part.filename.is_some() && !part.data.is_empty()
}

/// A text field, once; a file or non-UTF-8 data where text belongs is
/// refused, and so is a field given twice (it could be checked here in
/// one copy and read upstream in the other).
fn field<'a>(parts: &'a [FormPart], name: &str) -> Result<Option<&'a str>, ApiError> {
    let mut named = parts.iter().filter(|p| p.name == name);
    let first = named.next();
    if named.next().is_some() {
        return Err(ApiError::invalid(
            name,
            format!("`{name}` is given more than once"),
        ));
    }
    match first {
        None => Ok(None),
        Some(part) => part
            .text()
            .map(Some)
            .ok_or_else(|| ApiError::invalid(name, format!("`{name}` must be a text field"))),
    }
}

fn required_field(parts: &[FormPart], name: &str) -> Result<String, ApiError> {
    match field(parts, name)? {
        Some(value) if !value.trim().is_empty() => Ok(value.trim().to_owned()),
        _ => Err(ApiError::invalid(name, format!("`{name}` is required"))),
    }
}

fn service_fields_form(parts: &mut Vec<FormPart>) -> Result<ServiceFields, ApiError> {
    let text = |name: &str| field(parts, name).map(|v| v.map(str::to_owned));
    let purpose = text("purpose")?;
    let user_consent_id = text("user_consent_id")?;
    let end_user_id = text("end_user_id")?;
    let deployer_context = match text("deployer_context")? {
        None => None,
        Some(raw) => match serde_json::from_str::<Value>(&raw) {
            Ok(v @ Value::Object(_)) => Some(v),
            _ => {
                return Err(ApiError::invalid(
                    "deployer_context",
                    "`deployer_context` must be a JSON object",
                ));
            }
        },
    };
    parts.retain(|p| !SERVICE_FIELDS.contains(&p.name.as_str()));
    Ok(ServiceFields {
        purpose,
        user_consent_id,
        end_user_id,
        deployer_context,
    })
}

/// A form as the conversation log keeps it: text fields as they are,
/// files by name, type and size.
fn logged(parts: &[FormPart], service: &ServiceFields) -> String {
    let mut out = Map::new();
    for part in parts {
        let value = match part.text() {
            Some(text) => json!(text),
            None => json!({
                "filename": part.filename,
                "contentType": part.content_type,
                "bytes": part.data.len(),
            }),
        };
        out.insert(part.name.clone(), value);
    }
    for (name, value) in [
        ("purpose", service.purpose.clone().map(Value::String)),
        (
            "user_consent_id",
            service.user_consent_id.clone().map(Value::String),
        ),
        (
            "end_user_id",
            service.end_user_id.clone().map(Value::String),
        ),
        ("deployer_context", service.deployer_context.clone()),
    ] {
        if let Some(value) = value {
            out.insert(name.into(), value);
        }
    }
    Value::Object(out).to_string()
}

// --- shared validation ---

pub(crate) fn no_chain(present: bool) -> Result<(), ApiError> {
    if present {
        return Err(ApiError::invalid(
            "models",
            "fallback chains are for chat completions; name one `model` here",
        ));
    }
    Ok(())
}

fn required(value: Option<&Value>, field: &str) -> Result<String, ApiError> {
    match value {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err(ApiError::invalid(
            field,
            format!("`{field}` is required: a non-empty string"),
        )),
    }
}

fn optional_string(value: Option<&Value>, field: &str) -> Result<(), ApiError> {
    match value {
        None | Some(Value::Null) | Some(Value::String(_)) => Ok(()),
        Some(_) => Err(ApiError::invalid(
            field,
            format!("`{field}` must be a string"),
        )),
    }
}

fn count(value: Option<&Value>, field: &str) -> Result<(), ApiError> {
    match value {
        None | Some(Value::Null) => Ok(()),
        Some(v) if v.as_u64().is_some_and(|n| (1..=MAX_IMAGES).contains(&n)) => Ok(()),
        Some(_) => Err(ApiError::invalid(
            field,
            format!("`{field}` must be a whole number from 1 to {MAX_IMAGES}"),
        )),
    }
}

fn one_of(value: Option<&Value>, field: &str, allowed: &[&str]) -> Result<(), ApiError> {
    match value {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(()),
        Some(_) => Err(ApiError::invalid(
            field,
            format!("`{field}` must be one of {}", allowed.join(", ")),
        )),
    }
}

/// `<width>x<height>` (each 1 to 16384), or `auto`.
fn size_of(value: Option<&str>, field: &str) -> Result<(), ApiError> {
    let valid = value.is_some_and(|size| {
        size == "auto"
            || size.split_once('x').is_some_and(|(w, h)| {
                [w, h].iter().all(|side| {
                    side.bytes().all(|b| b.is_ascii_digit())
                        && side
                            .parse::<u32>()
                            .is_ok_and(|n| (1..=MAX_SIDE).contains(&n))
                })
            })
    });
    if valid {
        Ok(())
    } else {
        Err(ApiError::invalid(
            field,
            format!(
                "`{field}` must be `<width>x<height>` (such as 1024x1024, each side 1 to {MAX_SIDE}) or `auto`"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_width_x_height_or_auto() {
        for good in ["1024x1024", "256x512", "auto"] {
            assert!(size_of(Some(good), "size").is_ok(), "{good}");
        }
        for bad in [
            "1024", "1024x", "x1024", "0x10", "-1x5", "10x10x10", "big", "+5x5",
        ] {
            assert_eq!(
                size_of(Some(bad), "size").unwrap_err().param.as_deref(),
                Some("size"),
                "{bad}"
            );
        }
    }

    #[test]
    fn generation_strips_service_fields_and_names_bad_fields() {
        let request = parse_generation(
            br#"{"model": "m", "prompt": "a cat", "n": 2, "purpose": "art", "end_user_id": "u1", "style": "vivid"}"#,
        )
        .unwrap();
        assert_eq!(request.service.purpose.as_deref(), Some("art"));
        let MediaCall::Generate(body) = request.call else {
            panic!("generation")
        };
        assert!(body.get("purpose").is_none() && body.get("end_user_id").is_none());
        assert_eq!(body["style"], "vivid");
        for (body, param) in [
            (r#"{"prompt": "x"}"#, "model"),
            (r#"{"model": "m"}"#, "prompt"),
            (r#"{"model": "m", "prompt": "x", "n": 11}"#, "n"),
            (r#"{"model": "m", "prompt": "x", "size": "huge"}"#, "size"),
            (
                r#"{"model": "m", "prompt": "x", "response_format": "png"}"#,
                "response_format",
            ),
            (r#"{"models": ["m"], "prompt": "x"}"#, "models"),
        ] {
            let Err(error) = parse_generation(body.as_bytes()) else {
                panic!("{body} was accepted")
            };
            assert_eq!(error.param.as_deref(), Some(param), "{body}");
        }
    }
}
