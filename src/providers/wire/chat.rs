//! The OpenAI chat completion request (the internal request every
//! translation produces): parsing and validating it.
//!
//! The body is kept as a JSON map so that every field the caller sent,
//! including vendor extensions we do not know, is forwarded unchanged; the
//! service fields are taken out here, once. Validation names the field at
//! fault (`messages[2].content[0].image_url.url`).

use base64::Engine;
use serde_json::{Map, Value};

use crate::base::error::{ApiError, Code};

/// Fields of ours, removed before forwarding (spec, "Chat completion request").
pub const SERVICE_FIELDS: [&str; 6] = [
    "models",
    "auto_truncate",
    "purpose",
    "user_consent_id",
    "end_user_id",
    "deployer_context",
];

const ROLES: [&str; 6] = [
    "system",
    "developer",
    "user",
    "assistant",
    "tool",
    "function",
];
const MAX_CHAIN: usize = 16;

#[derive(Debug, Clone)]
pub struct ChatRequest {
    /// What is forwarded: the caller's body without the service fields.
    pub body: Map<String, Value>,
    /// The models to try, in order (`models` wins over `model`).
    pub chain: Vec<String>,
    pub stream: bool,
    pub auto_truncate: bool,
    /// The compliance service fields, taken out of the body.
    pub service: ServiceFields,
}

/// The compliance service fields of a request: a native request's come
/// from `x-tollgate-*` headers (its body has no room for them), a JSON
/// body's from the body ([`service_fields`]).
#[derive(Debug, Default, Clone)]
pub struct ServiceFields {
    pub purpose: Option<String>,
    pub user_consent_id: Option<String>,
    pub end_user_id: Option<String>,
    pub deployer_context: Option<Value>,
}

impl ServiceFields {
    /// These fields, each filled from `other` where it is absent (a body's
    /// own win over the headers').
    pub fn or(self, other: &ServiceFields) -> ServiceFields {
        ServiceFields {
            purpose: self.purpose.or_else(|| other.purpose.clone()),
            user_consent_id: self
                .user_consent_id
                .or_else(|| other.user_consent_id.clone()),
            end_user_id: self.end_user_id.or_else(|| other.end_user_id.clone()),
            deployer_context: self
                .deployer_context
                .or_else(|| other.deployer_context.clone()),
        }
    }
}

fn invalid(param: &str, message: impl Into<String>) -> ApiError {
    ApiError::invalid(param, message)
}

/// A JSON request body that must be an object.
pub fn object(bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice(bytes) {
        Ok(Value::Object(body)) => Ok(body),
        Ok(_) => Err(ApiError::new(
            Code::InvalidRequest,
            "the body must be a JSON object",
        )),
        Err(e) => Err(ApiError::new(
            Code::InvalidRequest,
            format!("malformed JSON: {e}"),
        )),
    }
}

/// Takes the service fields ([`SERVICE_FIELDS`]) out of a JSON body,
/// checking their types.
pub fn service_fields(body: &mut Map<String, Value>) -> Result<ServiceFields, ApiError> {
    let mut text = |field: &str| match body.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(field, format!("`{field}` must be a string"))),
    };
    let purpose = text("purpose")?;
    let user_consent_id = text("user_consent_id")?;
    let end_user_id = text("end_user_id")?;
    let deployer_context = match body.remove("deployer_context") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_)) => Some(v),
        Some(_) => {
            return Err(invalid(
                "deployer_context",
                "`deployer_context` must be an object",
            ));
        }
    };
    Ok(ServiceFields {
        purpose,
        user_consent_id,
        end_user_id,
        deployer_context,
    })
}

/// The names of a `models` fallback chain: 1 to `MAX_CHAIN` non-empty
/// strings, trimmed.
pub fn model_list(list: &[Value]) -> Result<Vec<String>, ApiError> {
    if list.is_empty() || list.len() > MAX_CHAIN {
        return Err(invalid(
            "models",
            format!("`models` must list 1 to {MAX_CHAIN} model names"),
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, m)| match m.as_str().map(str::trim) {
            Some(name) if !name.is_empty() => Ok(name.to_owned()),
            _ => Err(invalid(
                &format!("models[{i}]"),
                "each model must be a non-empty string",
            )),
        })
        .collect()
}

pub fn parse(bytes: &[u8]) -> Result<ChatRequest, ApiError> {
    let mut body = object(bytes)?;
    let service = service_fields(&mut body)?;
    let auto_truncate = match body.remove("auto_truncate") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => b,
        Some(_) => {
            return Err(invalid(
                "auto_truncate",
                "`auto_truncate` must be a boolean",
            ));
        }
    };
    let models = body.remove("models");
    let chain = match (&models, body.get("model")) {
        (Some(Value::Array(list)), _) => model_list(list)?,
        (Some(_), _) => {
            return Err(invalid(
                "models",
                "`models` must be an array of model names",
            ));
        }
        (None, Some(Value::String(name))) if !name.trim().is_empty() => {
            vec![name.trim().to_owned()]
        }
        (None, Some(_)) => return Err(invalid("model", "`model` must be a non-empty string")),
        (None, None) => {
            return Err(invalid(
                "model",
                "give `model` (a name) or `models` (a fallback chain)",
            ));
        }
    };
    let stream = match body.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(invalid("stream", "`stream` must be a boolean")),
    };
    validate_numbers(&body)?;
    validate_messages(body.get("messages"))?;
    Ok(ChatRequest {
        body,
        chain,
        stream,
        auto_truncate,
        service,
    })
}

fn validate_numbers(body: &Map<String, Value>) -> Result<(), ApiError> {
    let integer = |field: &str, min: u64, max: u64| {
        in_range(body, field, (min, max), Value::as_u64, "a whole number")
    };
    integer("n", 1, 128)?;
    integer("max_tokens", 1, 10_000_000)?;
    integer("max_completion_tokens", 1, 10_000_000)?;
    let number = |field: &str, min: f64, max: f64| {
        in_range(body, field, (min, max), Value::as_f64, "a number")
    };
    number("temperature", 0.0, 2.0)?;
    number("top_p", 0.0, 1.0)?;
    number("presence_penalty", -2.0, 2.0)?;
    number("frequency_penalty", -2.0, 2.0)?;
    if let Some(tools) = body.get("tools").filter(|t| !t.is_null())
        && !tools.is_array()
    {
        return Err(invalid("tools", "`tools` must be an array"));
    }
    Ok(())
}

/// `field` is absent, null, or `what` (as `read` takes it) from `min` to
/// `max`; 400 naming it otherwise.
fn in_range<T: Copy + PartialOrd + std::fmt::Display>(
    body: &Map<String, Value>,
    field: &str,
    (min, max): (T, T),
    read: fn(&Value) -> Option<T>,
    what: &str,
) -> Result<(), ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(()),
        Some(v) => match read(v) {
            Some(n) if (min..=max).contains(&n) => Ok(()),
            _ => Err(invalid(
                field,
                format!("`{field}` must be {what} from {min} to {max}"),
            )),
        },
    }
}

fn validate_messages(messages: Option<&Value>) -> Result<(), ApiError> {
    let messages = match messages {
        Some(Value::Array(m)) if !m.is_empty() => m,
        Some(Value::Array(_)) => return Err(invalid("messages", "`messages` must not be empty")),
        Some(_) => return Err(invalid("messages", "`messages` must be an array")),
        None => return Err(invalid("messages", "`messages` is required")),
    };
    for (i, message) in messages.iter().enumerate() {
        let at = format!("messages[{i}]");
        let Value::Object(message) = message else {
            return Err(invalid(&at, "each message must be an object"));
        };
        match message.get("role").and_then(Value::as_str) {
            Some(role) if ROLES.contains(&role) => {}
            _ => {
                return Err(invalid(
                    &format!("{at}.role"),
                    format!("`role` must be one of {}", ROLES.join(", ")),
                ));
            }
        }
        match message.get("content") {
            None | Some(Value::Null) | Some(Value::String(_)) => {}
            Some(Value::Array(parts)) => {
                for (j, part) in parts.iter().enumerate() {
                    validate_part(part, &format!("{at}.content[{j}]"))?;
                }
            }
            Some(_) => {
                return Err(invalid(
                    &format!("{at}.content"),
                    "`content` must be a string or an array of parts",
                ));
            }
        }
    }
    Ok(())
}

fn validate_part(part: &Value, at: &str) -> Result<(), ApiError> {
    match part["type"].as_str() {
        Some("text") => match part["text"].as_str() {
            Some(_) => Ok(()),
            None => Err(invalid(
                &format!("{at}.text"),
                "a text part needs a `text` string",
            )),
        },
        Some("image_url") => {
            let url = part["image_url"]["url"]
                .as_str()
                .or_else(|| part["image_url"].as_str())
                .ok_or_else(|| {
                    invalid(
                        &format!("{at}.image_url.url"),
                        "an image part needs `image_url.url`",
                    )
                })?;
            image_source(url)
                .map(|_| ())
                .map_err(|m| invalid(&format!("{at}.image_url.url"), m))
        }
        Some("input_audio") => {
            let data = part["input_audio"]["data"].as_str();
            let format = part["input_audio"]["format"].as_str();
            match (data, format) {
                (Some(data), Some(_))
                    if base64::engine::general_purpose::STANDARD
                        .decode(data)
                        .is_ok() =>
                {
                    Ok(())
                }
                (Some(_), Some(_)) => Err(invalid(
                    &format!("{at}.input_audio.data"),
                    "`data` must be base64",
                )),
                _ => Err(invalid(
                    &format!("{at}.input_audio"),
                    "an audio part needs `data` (base64) and `format`",
                )),
            }
        }
        Some(other) => Err(invalid(
            &format!("{at}.type"),
            format!("unknown part type `{other}`; use text, image_url or input_audio"),
        )),
        None => Err(invalid(&format!("{at}.type"), "each part needs a `type`")),
    }
}

/// Where an image comes from, with its MIME type when it can be told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageSource {
    Url {
        url: String,
        mime: Option<&'static str>,
    },
    Data {
        mime: String,
        base64: String,
    },
}

pub fn image_source(url: &str) -> Result<ImageSource, String> {
    if let Some(rest) = url.strip_prefix("data:") {
        let (meta, data) = rest
            .split_once(',')
            .ok_or("a data URI needs a `,` before its data")?;
        let mime = meta
            .strip_suffix(";base64")
            .ok_or("a data URI must be base64: data:<mime>;base64,<data>")?;
        if !mime.contains('/') {
            return Err(format!("`{mime}` is not a MIME type"));
        }
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|_| "the data URI's data is not valid base64".to_owned())?;
        return Ok(ImageSource::Data {
            mime: mime.to_owned(),
            base64: data.to_owned(),
        });
    }
    let parsed = url::Url::parse(url)
        .map_err(|_| format!("`{}` is not a URL or a data URI", truncate(url)))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("an image URL must be http(s) or a data URI".into());
    }
    let path = parsed.path().to_ascii_lowercase();
    let mime = [
        ("png", "image/png"),
        ("jpg", "image/jpeg"),
        ("jpeg", "image/jpeg"),
        ("gif", "image/gif"),
        ("webp", "image/webp"),
    ]
    .into_iter()
    .find(|(ext, _)| path.ends_with(&format!(".{ext}")))
    .map(|(_, mime)| mime);
    Ok(ImageSource::Url {
        url: url.to_owned(),
        mime,
    })
}

fn truncate(text: &str) -> String {
    text.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_json(value: serde_json::Value) -> Result<ChatRequest, ApiError> {
        parse(value.to_string().as_bytes())
    }

    #[test]
    fn service_fields_are_taken_out_and_models_wins() {
        let request = parse_json(serde_json::json!({
            "model": "a", "models": ["b", "c"], "messages": [{"role": "user", "content": "hi"}],
            "purpose": "p", "user_consent_id": "c", "end_user_id": "u", "deployer_context": {"team": "x"},
            "auto_truncate": true, "vendor_extra": {"k": 1}
        }))
        .unwrap();
        assert_eq!(request.chain, ["b", "c"]);
        for field in SERVICE_FIELDS {
            assert!(!request.body.contains_key(field), "{field}");
        }
        assert!(request.body.contains_key("vendor_extra"));
        assert!(request.auto_truncate);
        assert_eq!(request.service.purpose.as_deref(), Some("p"));
    }

    #[test]
    fn bad_requests_name_the_field() {
        let cases = [
            (serde_json::json!({"model": "a"}), "messages"),
            (
                serde_json::json!({"model": "a", "messages": []}),
                "messages",
            ),
            (
                serde_json::json!({"messages": [{"role": "user", "content": "x"}]}),
                "model",
            ),
            (
                serde_json::json!({"model": "a", "messages": [{"role": "robot", "content": "x"}]}),
                "messages[0].role",
            ),
            (
                serde_json::json!({"model": "a", "n": 0, "messages": [{"role": "user", "content": "x"}]}),
                "n",
            ),
            (
                serde_json::json!({"model": "a", "max_tokens": -1, "messages": [{"role": "user", "content": "x"}]}),
                "max_tokens",
            ),
            (
                serde_json::json!({"model": "a", "stream": "yes", "messages": [{"role": "user", "content": "x"}]}),
                "stream",
            ),
            (
                serde_json::json!({"model": "a", "messages": [{"role": "user", "content": [{"type": "video"}]}]}),
                "messages[0].content[0].type",
            ),
            (
                serde_json::json!({"model": "a", "messages": [{"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}]}]}),
                "messages[0].content[0].image_url.url",
            ),
            (
                serde_json::json!({"models": [], "messages": [{"role": "user", "content": "x"}]}),
                "models",
            ),
        ];
        for (body, param) in cases {
            let error = parse_json(body.clone()).unwrap_err();
            assert_eq!(error.code, Code::InvalidRequest);
            assert_eq!(error.param.as_deref(), Some(param), "{body}");
        }
        assert!(parse(b"{not json").is_err());
        assert!(parse(b"[1]").is_err());
    }

    #[test]
    fn image_sources_and_their_mime_types() {
        assert_eq!(
            image_source("data:image/webp;base64,AAAA").unwrap(),
            ImageSource::Data {
                mime: "image/webp".into(),
                base64: "AAAA".into()
            }
        );
        assert_eq!(
            image_source("https://x.io/cat.JPG?size=2").unwrap(),
            ImageSource::Url {
                url: "https://x.io/cat.JPG?size=2".into(),
                mime: Some("image/jpeg")
            }
        );
        assert!(image_source("ftp://x.io/a.png").is_err());
        assert!(image_source("data:image/png,AAAA").is_err());
    }
}
