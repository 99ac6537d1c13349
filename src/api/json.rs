//! A JSON body extractor whose rejections are [`ApiError`]s, so a malformed
//! or oversized body gets the documented error shape, not axum's text.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
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
