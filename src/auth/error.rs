//! Why authentication refused: an API key, a sign-in, or a session token.
//!
//! Each variant names its stable [`Code`]; its `Display` is the message the
//! caller reads. The HTTP layer turns it into the response
//! (`impl From<AuthError> for ApiError` in `src/api/error.rs`, the one place
//! codes meet statuses), so nothing here knows HTTP.

use std::fmt;

use crate::base::error::Code;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// No key has this value (or it is not shaped like one).
    UnknownKey,
    /// The key was revoked.
    RevokedKey,
    /// The key passed its expiry.
    ExpiredKey,
    /// The key spent its credit limit for this cycle.
    KeyOverBudget,
    /// A sign-in's email or password is wrong (the two are not told apart).
    InvalidCredentials,
    /// Too many failed sign-ins for the account or from the address.
    TooManySignInAttempts {
        /// Seconds until the next attempt is considered.
        retry_after: u64,
    },
    /// The account exists and is disabled.
    AccountDisabled,
    /// The session token is unknown, malformed or expired.
    InvalidToken,
    /// Storage or a worker failed: the detail goes to the log only.
    Internal {
        context: &'static str,
        detail: String,
    },
}

impl AuthError {
    /// A failure that is not the caller's: logged in full when answered.
    pub fn internal(context: &'static str, detail: impl fmt::Display) -> AuthError {
        AuthError::Internal {
            context,
            detail: detail.to_string(),
        }
    }

    /// The stable code this refusal is answered with.
    pub fn code(&self) -> Code {
        match self {
            AuthError::UnknownKey => Code::InvalidApiKey,
            AuthError::RevokedKey => Code::RevokedApiKey,
            AuthError::ExpiredKey => Code::KeyExpired,
            AuthError::KeyOverBudget => Code::BudgetExceeded,
            AuthError::InvalidCredentials => Code::InvalidCredentials,
            AuthError::TooManySignInAttempts { .. } => Code::TooManySignInAttempts,
            AuthError::AccountDisabled => Code::AccountDisabled,
            AuthError::InvalidToken => Code::InvalidToken,
            AuthError::Internal { .. } => Code::Internal,
        }
    }

    /// Seconds the caller should wait before trying again, when it should.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            AuthError::TooManySignInAttempts { retry_after } => Some(*retry_after),
            _ => None,
        }
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthError::UnknownKey => f.write_str("the API key is not valid"),
            AuthError::RevokedKey => f.write_str("the API key has been revoked; create a new key"),
            AuthError::ExpiredKey => {
                f.write_str("the API key has expired and cannot be re-enabled; create a new key")
            }
            AuthError::KeyOverBudget => {
                f.write_str("the API key has reached its credit limit for this cycle")
            }
            AuthError::InvalidCredentials => f.write_str("the email or the password is wrong"),
            AuthError::TooManySignInAttempts { retry_after } => write!(
                f,
                "too many failed sign-ins for this account or from this address; try again in {retry_after} s"
            ),
            AuthError::AccountDisabled => f.write_str("this account is disabled"),
            AuthError::InvalidToken => {
                f.write_str("the session token is not valid or has expired; sign in again")
            }
            // What the caller reads; the detail is logged by the HTTP layer.
            AuthError::Internal { context, .. } => write!(f, "internal error: {context}"),
        }
    }
}

impl std::error::Error for AuthError {}
