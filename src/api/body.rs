//! A raw request body whose rejections are [`ApiError`]s (the body limit
//! above all), for routes that parse the bytes themselves: the multipart
//! routes. A JSON body is read with [`crate::api::json::JsonBody`], which
//! adds the checks every JSON endpoint owes.

use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use bytes::Bytes;

use crate::base::error::{ApiError, Code};

pub struct Body(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        match Bytes::from_request(request, state).await {
            Ok(bytes) => Ok(Body(bytes)),
            Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err(crate::api::router::payload_too_large())
            }
            Err(rejection) => Err(ApiError::new(Code::InvalidRequest, rejection.body_text())),
        }
    }
}
