//! JSON body and query-string extractors whose rejections are
//! [`ApiError`]s, so a malformed or oversized body, or a bad query
//! parameter, gets the documented error shape, not axum's text.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::{ApiError, Code};

pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(Json(value)),
            Err(rejection) => Err(reject(rejection)),
        }
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

/// For `Option<Option<T>>` fields: absent is `None` (keep), `null` is
/// `Some(None)` (clear), a value is `Some(Some(v))` (set). Use with
/// `#[serde(default, deserialize_with = "...")]`.
pub fn nullable<'de, T, D>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
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
            crate::app::payload_too_large()
        }
        other => ApiError::new(Code::InvalidRequest, other.body_text()),
    }
}
