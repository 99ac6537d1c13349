//! Why a Vertex service-account key file was refused, or its grant could
//! not be signed. A refusal names what is wrong and where, never the
//! file's content (one of its fields is the private key). Configuration
//! shows it on the `credentials_file` line; a failed signing is the token
//! exchange's upstream failure.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyFileError {
    /// The file could not be read.
    Unreadable { path: PathBuf, reason: String },
    /// The file was read and refused.
    InFile {
        path: PathBuf,
        error: Box<KeyFileError>,
    },
    /// Not JSON at all (only the position is kept).
    NotJson { line: usize, column: usize },
    /// `type` is not `service_account`.
    NotServiceAccount,
    /// A required field is absent or blank.
    Missing(&'static str),
    /// `token_uri` is not an http(s) URL with a host.
    BadTokenUri,
    /// `private_key` is not a PEM-encoded RSA private key.
    BadPrivateKey,
    /// The key could not be re-encoded for signing.
    Unencodable,
    /// Signing a grant failed.
    Signing(String),
}

impl fmt::Display for KeyFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyFileError::Unreadable { path, reason } => {
                write!(f, "cannot read `{}`: {reason}", path.display())
            }
            KeyFileError::InFile { path, error } => write!(f, "`{}`: {error}", path.display()),
            KeyFileError::NotJson { line, column } => {
                write!(f, "not JSON (line {line}, column {column})")
            }
            KeyFileError::NotServiceAccount => {
                f.write_str("not a service account key file: `type` must be `service_account`")
            }
            KeyFileError::Missing(field) => {
                write!(f, "not a service account key file: `{field}` is missing")
            }
            KeyFileError::BadTokenUri => f.write_str("`token_uri` is not an http(s) URL"),
            KeyFileError::BadPrivateKey => {
                f.write_str("`private_key` is not a PEM-encoded RSA private key")
            }
            KeyFileError::Unencodable => f.write_str("`private_key` cannot be encoded"),
            KeyFileError::Signing(reason) => {
                write!(f, "signing the token grant failed: {reason}")
            }
        }
    }
}

impl std::error::Error for KeyFileError {}
