//! The one error-code table.
//!
//! Every refusal the gateway makes is an [`ApiError`] carrying a [`Code`]. One
//! table ([`Code::status`] and [`Code::kind`]) fixes each code's HTTP status
//! and type, so a code can never be answered with two statuses. The HTTP
//! layer renders it (`src/api/error.rs`: the OpenAI-shaped body, rewritten
//! into the Anthropic or Google shape on the routes whose callers expect
//! those). Codes are documented in `docs/errors.md`.

use http::StatusCode;

/// A stable, snake_case error code. Adding one makes the compiler list the
/// table entries to fill in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    InvalidRequest,
    MissingApiKey,
    InvalidApiKey,
    RevokedApiKey,
    KeyExpired,
    BudgetExceeded,
    MissingToken,
    InvalidToken,
    InvalidCredentials,
    AccountDisabled,
    Forbidden,
    HighRiskNotAllowed,
    InsufficientCredits,
    MultimodalCapExceeded,
    ProhibitedUse,
    PurposeRequired,
    ConsentRequired,
    ConsentInvalid,
    ReviewRejected,
    NotFound,
    ModelNotFound,
    MethodNotAllowed,
    Conflict,
    PayloadTooLarge,
    RequestTimeout,
    UnsupportedMediaType,
    RateLimitExceeded,
    TooManySignInAttempts,
    TokenRateLimitExceeded,
    ModelRateLimitExceeded,
    PasswordSignInDisabled,
    InvalidSsoCode,
    UpstreamUnprocessable,
    /// The upstream's content filter refused the prompt (Azure OpenAI).
    ContentFiltered,
    CapabilityUnsupported,
    WrongModelKind,
    AllProvidersFailed,
    Internal,
    Unavailable,
}

impl Code {
    /// The code as it appears in error bodies.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidRequest => "invalid_request",
            Code::MissingApiKey => "missing_api_key",
            // The spec names both the unknown key (401) and the revoked key
            // (403) `invalid_api_key`; the status tells them apart.
            Code::InvalidApiKey | Code::RevokedApiKey => "invalid_api_key",
            Code::KeyExpired => "key_expired",
            Code::BudgetExceeded => "budget_exceeded",
            Code::MissingToken => "missing_token",
            Code::InvalidToken => "invalid_token",
            Code::InvalidCredentials => "invalid_credentials",
            Code::AccountDisabled => "account_disabled",
            Code::Forbidden => "forbidden",
            Code::HighRiskNotAllowed => "high_risk_not_allowed",
            Code::InsufficientCredits => "insufficient_credits",
            Code::MultimodalCapExceeded => "multimodal_cap_exceeded",
            Code::ProhibitedUse => "prohibited_use",
            Code::PurposeRequired => "purpose_required",
            Code::ConsentRequired => "consent_required",
            Code::ConsentInvalid => "consent_invalid",
            Code::ReviewRejected => "review_rejected",
            Code::NotFound => "not_found",
            Code::ModelNotFound => "model_not_found",
            Code::MethodNotAllowed => "method_not_allowed",
            Code::Conflict => "conflict",
            Code::PayloadTooLarge => "payload_too_large",
            Code::RequestTimeout => "request_timeout",
            Code::UnsupportedMediaType => "unsupported_media_type",
            Code::RateLimitExceeded => "rate_limit_exceeded",
            Code::TooManySignInAttempts => "too_many_sign_in_attempts",
            Code::TokenRateLimitExceeded => "token_rate_limit_exceeded",
            Code::ModelRateLimitExceeded => "model_rate_limit_exceeded",
            Code::PasswordSignInDisabled => "password_sign_in_disabled",
            Code::InvalidSsoCode => "invalid_sso_code",
            Code::UpstreamUnprocessable => "unprocessable_request",
            Code::ContentFiltered => "content_filtered",
            Code::CapabilityUnsupported => "capability_unsupported",
            Code::WrongModelKind => "wrong_model_kind",
            Code::AllProvidersFailed => "all_providers_failed",
            Code::Internal => "internal_error",
            Code::Unavailable => "service_unavailable",
        }
    }

    /// The HTTP status this code is always answered with.
    pub fn status(self) -> StatusCode {
        match self {
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
    pub fn kind(self) -> &'static str {
        if matches!(
            self,
            Code::HighRiskNotAllowed | Code::ProhibitedUse | Code::ReviewRejected
        ) {
            return "permission_error";
        }
        match self.status() {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => "authentication_error",
            StatusCode::PAYMENT_REQUIRED => "insufficient_quota",
            StatusCode::NOT_FOUND => "not_found_error",
            StatusCode::TOO_MANY_REQUESTS => "rate_limit_error",
            s if s.is_server_error() => "server_error",
            _ => "invalid_request_error",
        }
    }
}

/// A refusal, with the message shown to the caller. Internal details go to
/// the log, never into `message`.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: Code,
    pub message: String,
    /// The request field at fault, when there is one.
    pub param: Option<String>,
    /// Seconds for a `Retry-After` header.
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            param: None,
            retry_after: None,
        }
    }

    pub fn invalid(param: impl Into<String>, message: impl Into<String>) -> Self {
        let mut error = Self::new(Code::InvalidRequest, message);
        error.param = Some(param.into());
        error
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        Self::new(Code::NotFound, what)
    }

    /// An unexpected failure: logged in full, answered with a generic message.
    pub fn internal(context: &str, detail: impl std::fmt::Display) -> Self {
        tracing::error!(%detail, "{context}");
        Self::new(Code::Internal, format!("internal error: {context}"))
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code.as_str())
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_codes_have_spec_statuses() {
        assert_eq!(Code::InvalidApiKey.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(Code::RevokedApiKey.status(), StatusCode::FORBIDDEN);
        assert_eq!(Code::RevokedApiKey.as_str(), "invalid_api_key");
        assert_eq!(Code::KeyExpired.status(), StatusCode::FORBIDDEN);
        assert_eq!(Code::BudgetExceeded.status(), StatusCode::PAYMENT_REQUIRED);
        assert_eq!(
            Code::PayloadTooLarge.status(),
            StatusCode::PAYLOAD_TOO_LARGE
        );
        assert_eq!(
            Code::RateLimitExceeded.status(),
            StatusCode::TOO_MANY_REQUESTS
        );
    }
}
