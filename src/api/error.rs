//! Error rendering: an [`ApiError`] becomes the caller's response, in the
//! dialect of the route (OpenAI, Anthropic or Google; DESIGN 7.1). The
//! codes, statuses and types come from the one table in
//! `src/base/error.rs`; this file only shapes the body.

use axum::Json;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::base::error::ApiError;

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({
            "error": {
                "message": self.message,
                "type": self.code.kind(),
                "code": self.code.as_str(),
                "param": self.param,
            }
        });
        let mut response = (self.code.status(), Json(body)).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        // Kept so the dialect middleware can re-render without parsing JSON.
        response.extensions_mut().insert(self);
        response
    }
}

/// The error-body dialect a route's callers expect (DESIGN 7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    OpenAi,
    Anthropic,
    Google,
}

impl Dialect {
    /// Decided by path alone, so even a refusal made before routing (body
    /// limit, authentication) speaks the caller's dialect.
    pub fn for_path(path: &str) -> Dialect {
        if path == "/v1/messages" || path.starts_with("/v1/messages/") {
            Dialect::Anthropic
        } else if path.starts_with("/v1beta/")
            || (path.starts_with("/v1/models/") && path.contains(':'))
        {
            Dialect::Google
        } else {
            Dialect::OpenAi
        }
    }

    fn render(self, error: &ApiError) -> serde_json::Value {
        match self {
            Dialect::OpenAi => json!({
                "error": {
                    "message": error.message,
                    "type": error.code.kind(),
                    "code": error.code.as_str(),
                    "param": error.param,
                }
            }),
            Dialect::Anthropic => json!({
                "type": "error",
                "error": { "type": error.code.as_str(), "message": error.message }
            }),
            Dialect::Google => json!({
                "error": {
                    "code": error.code.status().as_u16(),
                    "message": error.message,
                    "status": google_status(error.code.status()),
                    "details": [{ "reason": error.code.as_str() }],
                }
            }),
        }
    }
}

fn google_status(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 413 | 415 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        408 => "DEADLINE_EXCEEDED",
        402 | 429 => "RESOURCE_EXHAUSTED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        405 => "UNIMPLEMENTED",
        409 => "ALREADY_EXISTS",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    }
}

/// Middleware: re-renders our own error bodies in the dialect of the route.
pub async fn render_in_dialect(request: Request, next: Next) -> Response {
    let dialect = Dialect::for_path(request.uri().path());
    let response = next.run(request).await;
    if dialect == Dialect::OpenAi {
        return response;
    }
    match response.extensions().get::<ApiError>().cloned() {
        Some(error) => {
            let (mut parts, _) = response.into_parts();
            parts.headers.remove(header::CONTENT_LENGTH);
            let body = serde_json::to_vec(&dialect.render(&error)).unwrap_or_default();
            Response::from_parts(parts, axum::body::Body::from(body))
        }
        None => response,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::error::Code;

    #[test]
    fn dialect_follows_the_path() {
        assert_eq!(Dialect::for_path("/v1/chat/completions"), Dialect::OpenAi);
        assert_eq!(Dialect::for_path("/v1/messages"), Dialect::Anthropic);
        assert_eq!(
            Dialect::for_path("/v1beta/models/gemini-2.0-flash:generateContent"),
            Dialect::Google
        );
        assert_eq!(
            Dialect::for_path("/v1/models/gemini:streamGenerateContent"),
            Dialect::Google
        );
        assert_eq!(Dialect::for_path("/v1/models"), Dialect::OpenAi);
    }

    #[test]
    fn anthropic_and_google_shapes() {
        let error = ApiError::new(Code::KeyExpired, "expired");
        let anthropic = Dialect::Anthropic.render(&error);
        assert_eq!(anthropic["type"], "error");
        assert_eq!(anthropic["error"]["type"], "key_expired");
        let google = Dialect::Google.render(&error);
        assert_eq!(google["error"]["code"], 403);
        assert_eq!(google["error"]["status"], "PERMISSION_DENIED");
    }
}
