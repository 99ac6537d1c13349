//! JSON body and query-string extractors whose rejections are
//! [`ApiError`]s, so a malformed or oversized body, or a bad query
//! parameter, gets the documented error shape, not axum's text.
//!
//! Every JSON body goes through [`JsonBody`] (typed bodies through
//! [`Json`], which reads it), so the two checks every JSON endpoint owes
//! its callers are made in one place: the body is declared JSON (415
//! otherwise), and no object in it names a key twice ([`duplicate_key`]).
//! A duplicate is refused because parsers disagree on it: serde_json keeps
//! the last copy, other parsers the first, so the classifier and the
//! provider could read two different requests.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashSet;

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, StatusCode, header};
use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::de::Error as _;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::base::error::{ApiError, Code};
pub use crate::base::json::nullable;

/// A typed JSON body: a [`JsonBody`], then deserialized.
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let JsonBody(bytes) = JsonBody::from_request(request, state).await?;
        match axum::Json::<T>::from_bytes(&bytes) {
            Ok(axum::Json(value)) => Ok(Json(value)),
            Err(rejection) => Err(reject(rejection)),
        }
    }
}

/// The raw bytes of a JSON body, for routes that parse it themselves:
/// declared JSON, within the body limit, and without a duplicate key.
/// Malformed JSON passes, so each route words its own parse error.
pub struct JsonBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        if !declared_json(request.headers()) {
            return Err(not_json());
        }
        let crate::api::body::Body(bytes) =
            crate::api::body::Body::from_request(request, state).await?;
        refuse_duplicates(&bytes)?;
        Ok(JsonBody(bytes))
    }
}

/// The checks of [`JsonBody`] for a body that may be empty (an empty one
/// needs no content type).
pub fn optional_body(headers: &HeaderMap, bytes: &[u8]) -> Result<(), ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    if !declared_json(headers) {
        return Err(not_json());
    }
    refuse_duplicates(bytes)
}

/// A list answer, `{"object": "list", "data": [...]}`: OpenAI's list
/// shape, which the dashboard's lists share.
pub fn list_answer<T: serde::Serialize>(data: impl IntoIterator<Item = T>) -> serde_json::Value {
    serde_json::json!({ "object": "list", "data": data.into_iter().collect::<Vec<_>>() })
}

fn not_json() -> ApiError {
    ApiError::new(
        Code::UnsupportedMediaType,
        "send the body as JSON with `Content-Type: application/json`",
    )
}

/// `application/json` or any `application/*+json`, parameters allowed.
fn declared_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    essence.split_once('/').is_some_and(|(kind, subtype)| {
        let subtype = subtype.to_ascii_lowercase();
        kind.eq_ignore_ascii_case("application")
            && (subtype == "json" || subtype.ends_with("+json"))
    })
}

fn refuse_duplicates(bytes: &[u8]) -> Result<(), ApiError> {
    match duplicate_key(bytes) {
        Ok(Some(key)) => {
            let shown: String = key.chars().take(100).collect();
            Err(ApiError::invalid(
                shown.clone(),
                format!(
                    "the JSON body names the key `{shown}` twice in one object; send each key once"
                ),
            ))
        }
        // Malformed: the route's own parser refuses it in its words.
        Ok(None) | Err(_) => Ok(()),
    }
}

/// The first key an object of `bytes` names twice, at any depth (keys are
/// compared after unescaping, so `"a"` and `"\u0061"` are one key).
/// `Ok(None)` for well-formed JSON without one, `Err` for malformed JSON.
///
/// It runs on every request, so it walks the text with serde_json's
/// streaming parser and builds no value: it holds the keys of the objects
/// open at the moment, borrowed from `bytes` unless they hold an escape.
pub fn duplicate_key(bytes: &[u8]) -> Result<Option<String>, serde_json::Error> {
    let found = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let walked = Walk { found: &found }
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    match (walked, found.into_inner()) {
        (_, Some(key)) => Ok(Some(key)),
        (Ok(()), None) => Ok(None),
        (Err(e), None) => Err(e),
    }
}

/// Visits any JSON value; on a duplicate key, records it and stops.
#[derive(Clone, Copy)]
struct Walk<'a> {
    found: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// Objects this small are searched in a list; larger ones in a set.
const LINEAR_KEYS: usize = 16;

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut listed: Vec<Cow<'de, str>> = Vec::new();
        let mut hashed: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(key) = map.next_key_seed(Key)? {
            let repeated = if listed.len() < LINEAR_KEYS {
                let repeated = listed.contains(&key);
                if !repeated {
                    listed.push(key.clone());
                }
                repeated
            } else {
                if hashed.is_empty() {
                    hashed.extend(listed.iter().cloned());
                }
                !hashed.insert(key.clone())
            };
            if repeated {
                *self.found.borrow_mut() = Some(key.into_owned());
                return Err(A::Error::custom("duplicate key"));
            }
            map.next_value_seed(self)?;
        }
        Ok(())
    }
}

/// An object key, borrowed from the body when it has no escape.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(key))
    }
    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key.to_owned()))
    }
}

/// A query string, refused with 400 `invalid_request` when it does not fit.
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Query(value)),
            Err(rejection) => Err(ApiError::new(
                Code::InvalidRequest,
                format!("bad query string: {}", rejection.body_text()),
            )),
        }
    }
}

fn reject(rejection: JsonRejection) -> ApiError {
    match rejection {
        JsonRejection::MissingJsonContentType(_) => ApiError::new(
            Code::UnsupportedMediaType,
            "send the body as JSON with `Content-Type: application/json`",
        ),
        JsonRejection::JsonSyntaxError(e) => ApiError::new(
            Code::InvalidRequest,
            format!("malformed JSON: {}", e.body_text()),
        ),
        JsonRejection::JsonDataError(e) => ApiError::new(Code::InvalidRequest, e.body_text()),
        JsonRejection::BytesRejection(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            crate::api::router::payload_too_large()
        }
        other => ApiError::new(Code::InvalidRequest, other.body_text()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_in_one_object_is_found_at_any_depth() {
        for (body, key) in [
            (r#"{"a":1,"a":2}"#, "a"),
            (r#"{"m":[{"x":{"role":"u","role":"s"}}]}"#, "role"),
            (r#"[1,{"k":null,"k":null}]"#, "k"),
            (r#"{"a":1,"\u0061":2}"#, "a"),
            (r#"{"é":1,"\u00e9":2}"#, "é"),
        ] {
            assert_eq!(
                duplicate_key(body.as_bytes()).unwrap().as_deref(),
                Some(key),
                "{body}"
            );
        }
        // Large objects switch to a set.
        let mut big: String = (0..100).map(|i| format!("\"k{i}\":{i},")).collect();
        big.push_str("\"k42\":0");
        assert_eq!(
            duplicate_key(format!("{{{big}}}").as_bytes())
                .unwrap()
                .as_deref(),
            Some("k42")
        );
    }

    #[test]
    fn the_same_key_in_different_objects_is_no_duplicate() {
        for body in [
            r#"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}"#,
            r#"[]"#,
            r#""text""#,
            r#"{"A":1,"a":2}"#,
            "  {\"x\": [1, 2.5, -3, true, null, \"s\\n\"]}  ",
        ] {
            assert_eq!(duplicate_key(body.as_bytes()).unwrap(), None, "{body}");
        }
    }

    #[test]
    fn malformed_json_is_an_error_not_a_verdict() {
        for body in ["", "{", r#"{"a":1,}"#, r#"{"a":1} x"#, "nul"] {
            assert!(duplicate_key(body.as_bytes()).is_err(), "{body}");
        }
        let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        assert!(duplicate_key(deep.as_bytes()).is_err());
    }

    #[test]
    fn json_is_what_the_content_type_declares() {
        let with = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, value.parse().unwrap());
            declared_json(&headers)
        };
        assert!(with("application/json"));
        assert!(with("Application/JSON; charset=utf-8"));
        assert!(with("application/vnd.api+json"));
        assert!(!with("text/plain"));
        assert!(!with("application/x-www-form-urlencoded"));
        assert!(!with("text/json-ish"));
        assert!(!declared_json(&HeaderMap::new()));
    }
}
