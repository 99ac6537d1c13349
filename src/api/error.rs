//! The one place errors meet HTTP. A [`Code`] gets its HTTP status
//! ([`status`]) and its OpenAI `type` ([`kind`]) here; each domain's error
//! becomes an [`ApiError`] here (`impl From<...> for ApiError`, so handlers
//! use `?`); and an [`ApiError`] becomes the caller's response here, in the
//! dialect of the route (OpenAI, Anthropic or Google; DESIGN 7.1). The
//! codes' names are the table in `src/base/error.rs`, which knows nothing
//! of HTTP.

use axum::Json;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::auth::AuthError;
use crate::base::error::{ApiError, Code};
use crate::store::StoreError;

/// The HTTP status `code` is always answered with.
pub fn status(code: Code) -> StatusCode {
    match code {
        Code::InvalidRequest
        | Code::ContentFiltered
        | Code::WrongModelKind
        | Code::PurposeRequired
        | Code::ConsentRequired
        | Code::ConsentInvalid => StatusCode::BAD_REQUEST,
        Code::MissingApiKey | Code::InvalidApiKey => StatusCode::UNAUTHORIZED,
        Code::MissingToken
        | Code::InvalidToken
        | Code::InvalidCredentials
        | Code::InvalidSsoCode => StatusCode::UNAUTHORIZED,
        Code::BudgetExceeded | Code::InsufficientCredits => StatusCode::PAYMENT_REQUIRED,
        Code::RevokedApiKey
        | Code::KeyExpired
        | Code::AccountDisabled
        | Code::PasswordSignInDisabled
        | Code::Forbidden
        | Code::HighRiskNotAllowed
        | Code::ProhibitedUse
        | Code::ReviewRejected => StatusCode::FORBIDDEN,
        Code::NotFound | Code::ModelNotFound => StatusCode::NOT_FOUND,
        Code::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        Code::Conflict => StatusCode::CONFLICT,
        Code::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        Code::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
        Code::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        Code::RateLimitExceeded
        | Code::TokenRateLimitExceeded
        | Code::ModelRateLimitExceeded
        | Code::MultimodalCapExceeded
        | Code::TooManySignInAttempts => StatusCode::TOO_MANY_REQUESTS,
        Code::UpstreamUnprocessable | Code::CapabilityUnsupported => {
            StatusCode::UNPROCESSABLE_ENTITY
        }
        Code::AllProvidersFailed => StatusCode::BAD_GATEWAY,
        Code::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// The `type` field of the OpenAI-shaped body: the families the OpenAI
/// SDKs already know how to read.
pub fn kind(code: Code) -> &'static str {
    if matches!(
        code,
        Code::HighRiskNotAllowed | Code::ProhibitedUse | Code::ReviewRejected
    ) {
        return "permission_error";
    }
    match status(code) {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => "authentication_error",
        StatusCode::PAYMENT_REQUIRED => "insufficient_quota",
        StatusCode::NOT_FOUND => "not_found_error",
        StatusCode::TOO_MANY_REQUESTS => "rate_limit_error",
        s if s.is_server_error() => "server_error",
        _ => "invalid_request_error",
    }
}

/// A storage failure or a store-backed domain's refusal (tenants, accounts,
/// key management, billing, the registry...): the refusal's own code and
/// message; a storage failure is logged and answered `internal_error`.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        let code = e.code();
        match e {
            StoreError::NotFound(m)
            | StoreError::Conflict(m)
            | StoreError::Invalid(m)
            | StoreError::Forbidden(m) => ApiError::new(code, m),
            other => ApiError::internal("storage", other),
        }
    }
}

/// For `.map_err(store_error)`, where `?` cannot name the target.
pub fn store_error(e: StoreError) -> ApiError {
    e.into()
}

/// An authentication refusal: its code and message, and `Retry-After` for
/// a throttled sign-in; an internal failure is logged.
impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> ApiError {
        if let AuthError::Internal { context, detail } = &e {
            return ApiError::internal(context, detail);
        }
        let mut error = ApiError::new(e.code(), e.to_string());
        error.retry_after = e.retry_after();
        error
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({
            "error": {
                "message": self.message,
                "type": kind(self.code),
                "code": self.code.as_str(),
                "param": self.param,
            }
        });
        let mut response = (status(self.code), Json(body)).into_response();
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
                    "type": kind(error.code),
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
                    "code": status(error.code).as_u16(),
                    "message": error.message,
                    "status": google_status(status(error.code)),
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

    /// The rows of the codes table of docs/errors.md: (code, status, type).
    fn documented_rows() -> Vec<(String, u16, String)> {
        let doc = include_str!("../../docs/errors.md");
        let codes = doc
            .split_once("\n## Codes\n")
            .expect("docs/errors.md has a Codes section")
            .1;
        let table = codes.split("\n## ").next().unwrap_or_default();
        table
            .lines()
            .filter_map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
                let status = cells.get(2)?.trim_matches('*').parse().ok()?;
                let kind = cells.get(3)?.strip_prefix('`')?.strip_suffix('`')?;
                Some((name.to_owned(), status, kind.to_owned()))
            })
            .collect()
    }

    #[test]
    fn every_code_has_a_status_a_type_a_documented_row_and_three_dialects() {
        let rows = documented_rows();
        for &code in Code::ALL {
            let (name, status, kind) = (code.as_str(), status(code), kind(code));
            assert!(
                status.is_client_error() || status.is_server_error(),
                "{name}: {status}"
            );
            assert!(
                rows.iter()
                    .any(|(n, s, k)| n == name && *s == status.as_u16() && k == kind),
                "docs/errors.md has no row `{name}` | {} | `{kind}`",
                status.as_u16()
            );
            let error = ApiError::new(code, "why");
            let openai = Dialect::OpenAi.render(&error);
            assert_eq!(openai["error"]["code"], name);
            assert_eq!(openai["error"]["type"], kind);
            assert_eq!(openai["error"]["message"], "why");
            let anthropic = Dialect::Anthropic.render(&error);
            assert_eq!(anthropic["type"], "error");
            assert_eq!(anthropic["error"]["type"], name);
            assert_eq!(anthropic["error"]["message"], "why");
            let google = Dialect::Google.render(&error);
            assert_eq!(google["error"]["code"], status.as_u16());
            assert_eq!(google["error"]["details"][0]["reason"], name);
            assert!(
                google["error"]["status"]
                    .as_str()
                    .is_some_and(|s| !s.is_empty())
            );
            // The body a handler returns is the OpenAI one, with the status.
            let response = error.clone().into_response();
            assert_eq!(response.status(), status);
            assert_eq!(response.extensions().get::<ApiError>().unwrap().code, code);
        }
        // And no documented row names a code that does not exist.
        for (name, _, _) in &rows {
            assert!(
                Code::ALL.iter().any(|c| c.as_str() == name),
                "docs/errors.md documents `{name}`, which no code has"
            );
        }
    }

    #[test]
    fn spec_codes_have_spec_statuses() {
        assert_eq!(status(Code::InvalidApiKey), StatusCode::UNAUTHORIZED);
        assert_eq!(status(Code::RevokedApiKey), StatusCode::FORBIDDEN);
        assert_eq!(status(Code::KeyExpired), StatusCode::FORBIDDEN);
        assert_eq!(status(Code::BudgetExceeded), StatusCode::PAYMENT_REQUIRED);
        assert_eq!(status(Code::PayloadTooLarge), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(
            status(Code::RateLimitExceeded),
            StatusCode::TOO_MANY_REQUESTS
        );
    }

    #[test]
    fn domain_errors_keep_their_code_and_message() {
        let taken = ApiError::from(StoreError::Conflict("the email is taken".into()));
        assert_eq!(
            (taken.code, taken.message.as_str()),
            (Code::Conflict, "the email is taken")
        );
        let missing = ApiError::from(StoreError::NotFound("no key".into()));
        assert_eq!(missing.code, Code::NotFound);
        let broken = ApiError::from(StoreError::Database("disk on fire".into()));
        assert_eq!(broken.code, Code::Internal);
        assert!(!broken.message.contains("disk"), "details stay in the log");

        let revoked = ApiError::from(AuthError::RevokedKey);
        assert_eq!(revoked.code, Code::RevokedApiKey);
        assert_eq!(status(revoked.code), StatusCode::FORBIDDEN);
        let throttled = ApiError::from(AuthError::TooManySignInAttempts { retry_after: 7 });
        assert_eq!(throttled.code, Code::TooManySignInAttempts);
        assert_eq!(throttled.retry_after, Some(7));
        assert!(throttled.message.ends_with("try again in 7 s"));
        let failed = ApiError::from(AuthError::internal("reading a session", "io"));
        assert_eq!(failed.code, Code::Internal);
        assert_eq!(failed.message, "internal error: reading a session");
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
