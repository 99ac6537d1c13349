//! `POST /v1/embeddings` in OpenAI's shape (docs/embeddings.md).
//!
//! The handler counts the request against the key's per-minute limit,
//! parses and validates the body (naming the field at fault), and hands it
//! to the embeddings pipeline (`gateway::embeddings`). Fields it does not
//! know are forwarded as they are to OpenAI-compatible servers.

use axum::Router;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;

use crate::api::inference::Inference;
use crate::api::json::JsonBody;
use crate::api::media::{no_chain, object, service_fields_json};
use crate::api::state::AppState;
use crate::base::error::ApiError;
use crate::gateway::embeddings::{self, EmbeddingRequest, Inputs, OPERATION};
use crate::traces;

/// The most inputs one request may carry (OpenAI's limit).
pub const MAX_INPUTS: usize = 2048;
/// The largest `dimensions` asked for.
const MAX_DIMENSIONS: u64 = 65_536;
const FORMATS: [&str; 2] = ["float", "base64"];

pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/embeddings", post(create_embedding))
}

/// `POST /v1/embeddings`
async fn create_embedding(req: Inference, body: JsonBody) -> Response {
    req.serve(OPERATION, async {
        let request = parse(&body.0)?;
        let model = request.model.clone();
        traces::request_model(OPERATION, &model);
        let response = match embeddings::serve(
            &req.state.gateway,
            &req.key,
            req.request_id(),
            request,
        )
        .await
        {
            Ok(answer) => axum::Json(answer).into_response(),
            Err(error) => error.into_response(),
        };
        Ok(req.label_known(model, response))
    })
    .await
}

pub fn parse(bytes: &[u8]) -> Result<EmbeddingRequest, ApiError> {
    let mut body = object(bytes)?;
    let service = service_fields_json(&mut body)?;
    no_chain(body.contains_key("models"))?;
    let model = match body.get("model") {
        Some(Value::String(m)) if !m.trim().is_empty() => m.trim().to_owned(),
        _ => return Err(ApiError::invalid("model", "`model` is required: a string")),
    };
    let inputs = inputs(body.get("input"))?;
    match body.get("encoding_format") {
        None | Some(Value::Null) => {}
        Some(Value::String(f)) if FORMATS.contains(&f.as_str()) => {}
        Some(_) => {
            return Err(ApiError::invalid(
                "encoding_format",
                "`encoding_format` must be `float` or `base64`",
            ));
        }
    }
    match body.get("dimensions") {
        None | Some(Value::Null) => {}
        Some(d)
            if d.as_u64()
                .is_some_and(|d| (1..=MAX_DIMENSIONS).contains(&d)) => {}
        Some(_) => {
            return Err(ApiError::invalid(
                "dimensions",
                format!("`dimensions` must be a whole number from 1 to {MAX_DIMENSIONS}"),
            ));
        }
    }
    if !matches!(
        body.get("user"),
        None | Some(Value::Null | Value::String(_))
    ) {
        return Err(ApiError::invalid("user", "`user` must be a string"));
    }
    body.retain(|_, v| !v.is_null());
    Ok(EmbeddingRequest {
        model,
        inputs,
        service,
        logged: String::from_utf8_lossy(bytes).into_owned(),
        body,
    })
}

/// `input`: a string, an array of strings, an array of tokens, or an array
/// of token arrays; never empty, at most [`MAX_INPUTS`] entries.
fn inputs(value: Option<&Value>) -> Result<Inputs, ApiError> {
    let bad = |why: &str| {
        ApiError::invalid(
            "input",
            format!(
                "`input` {why}: send a string, an array of strings or an array of token arrays (at most {MAX_INPUTS} entries)"
            ),
        )
    };
    let items = match value {
        None | Some(Value::Null) => return Err(bad("is required")),
        Some(Value::String(text)) if text.is_empty() => return Err(bad("must not be empty")),
        Some(Value::String(text)) => return Ok(Inputs::Texts(vec![text.clone()])),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(bad("has the wrong type")),
    };
    if items.is_empty() {
        return Err(bad("must not be an empty array"));
    }
    if items.len() > MAX_INPUTS {
        return Err(bad(&format!("has {} entries", items.len())));
    }
    // One token array, as OpenAI takes it.
    if items.iter().all(Value::is_number) {
        return Ok(Inputs::Tokens(vec![
            tokens(items).ok_or_else(|| bad("holds a token that is no whole number"))?,
        ]));
    }
    if items.iter().all(Value::is_string) {
        let texts: Vec<String> = items
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect();
        if texts.iter().any(String::is_empty) {
            return Err(bad("holds an empty string"));
        }
        return Ok(Inputs::Texts(texts));
    }
    if items.iter().all(Value::is_array) {
        let arrays: Option<Vec<Vec<u32>>> = items
            .iter()
            .map(|a| a.as_array().and_then(|a| tokens(a)))
            .collect();
        let arrays = arrays.ok_or_else(|| bad("holds a token that is no whole number"))?;
        if arrays.iter().any(Vec::is_empty) {
            return Err(bad("holds an empty token array"));
        }
        return Ok(Inputs::Tokens(arrays));
    }
    Err(bad(
        "mixes types or holds something that is neither text nor tokens",
    ))
}

fn tokens(items: &[Value]) -> Option<Vec<u32>> {
    items
        .iter()
        .map(|t| t.as_u64().and_then(|t| u32::try_from(t).ok()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_take_openais_three_shapes() {
        let parsed = |input: &str| {
            parse(format!(r#"{{"model": "e", "input": {input}}}"#).as_bytes()).map(|r| r.inputs)
        };
        assert_eq!(parsed(r#""hi""#).unwrap(), Inputs::Texts(vec!["hi".into()]));
        assert_eq!(parsed(r#"["a", "b"]"#).unwrap().len(), 2);
        assert_eq!(
            parsed("[[1, 2], [3]]").unwrap(),
            Inputs::Tokens(vec![vec![1, 2], vec![3]])
        );
        assert_eq!(parsed("[1, 2]").unwrap(), Inputs::Tokens(vec![vec![1, 2]]));
        for bad in [
            r#""""#,
            "[]",
            "[\"\"]",
            "[[]]",
            "5",
            "{}",
            r#"["a", 1]"#,
            "[1.5]",
            "[-1]",
        ] {
            assert_eq!(
                parsed(bad).err().and_then(|e| e.param).as_deref(),
                Some("input"),
                "{bad}"
            );
        }
        let many = format!("[{}]", vec!["\"x\""; MAX_INPUTS + 1].join(","));
        assert!(parsed(&many).is_err());
    }
}
