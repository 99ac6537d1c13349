//! The one error-code table.
//!
//! Every refusal Tollgate makes is an [`ApiError`] carrying a [`Code`], the
//! stable snake_case name a caller matches on. The domains' own error types
//! (`StoreError`, `auth::AuthError`...) each name the `Code` of every
//! variant. This file knows nothing of HTTP: the HTTP layer alone
//! (`src/api/error.rs`) gives each code its status and type, converts the
//! domain errors, and renders the body in the caller's dialect (OpenAI,
//! Anthropic, Google). Codes are documented in `docs/errors.md`.

/// Declares [`Code`], its wire names and [`Code::ALL`] from one list, so
/// the list of every code cannot miss one.
macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident => $name:literal,)*) => {
        /// A stable, snake_case error code. Adding one makes the compiler
        /// list the HTTP table entry to fill in (`src/api/error.rs`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in the order of this table.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code as it appears in error bodies.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)*
                }
            }
        }
    };
}

codes! {
    InvalidRequest => "invalid_request",
    MissingApiKey => "missing_api_key",
    // The spec names both the unknown key (401) and the revoked key
    // (403) `invalid_api_key`; the status tells them apart.
    InvalidApiKey => "invalid_api_key",
    RevokedApiKey => "invalid_api_key",
    KeyExpired => "key_expired",
    BudgetExceeded => "budget_exceeded",
    MissingToken => "missing_token",
    InvalidToken => "invalid_token",
    InvalidCredentials => "invalid_credentials",
    AccountDisabled => "account_disabled",
    Forbidden => "forbidden",
    HighRiskNotAllowed => "high_risk_not_allowed",
    InsufficientCredits => "insufficient_credits",
    MultimodalCapExceeded => "multimodal_cap_exceeded",
    ProhibitedUse => "prohibited_use",
    PurposeRequired => "purpose_required",
    ConsentRequired => "consent_required",
    ConsentInvalid => "consent_invalid",
    ReviewRejected => "review_rejected",
    NotFound => "not_found",
    ModelNotFound => "model_not_found",
    MethodNotAllowed => "method_not_allowed",
    Conflict => "conflict",
    PayloadTooLarge => "payload_too_large",
    RequestTimeout => "request_timeout",
    UnsupportedMediaType => "unsupported_media_type",
    RateLimitExceeded => "rate_limit_exceeded",
    TooManySignInAttempts => "too_many_sign_in_attempts",
    TokenRateLimitExceeded => "token_rate_limit_exceeded",
    ModelRateLimitExceeded => "model_rate_limit_exceeded",
    PasswordSignInDisabled => "password_sign_in_disabled",
    InvalidSsoCode => "invalid_sso_code",
    UpstreamUnprocessable => "unprocessable_request",
    /// The upstream's content filter refused the prompt (Azure OpenAI).
    ContentFiltered => "content_filtered",
    CapabilityUnsupported => "capability_unsupported",
    WrongModelKind => "wrong_model_kind",
    AllProvidersFailed => "all_providers_failed",
    Internal => "internal_error",
    Unavailable => "service_unavailable",
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
    fn the_revoked_key_shares_the_unknown_keys_name() {
        assert_eq!(Code::RevokedApiKey.as_str(), "invalid_api_key");
        assert_eq!(Code::InvalidApiKey.as_str(), "invalid_api_key");
    }
}
