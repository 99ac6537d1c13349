//! The endpoint a usage record was served on: a closed set, so usage,
//! stats and the dashboard can group and filter by it without an
//! unbounded dimension.
//!
//! The stored form is the variant's position (one byte in bincode), so
//! variants are only ever appended: reordering them would relabel every
//! stored record. The values were all defined before their routes were
//! served, so that adding those routes needed no schema migration.

use serde::{Deserialize, Serialize};

/// One inference endpoint, as a usage dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Endpoint {
    /// `POST /v1/chat/completions` and the dashboard's playground.
    Chat,
    /// `POST /v1/messages` (Anthropic's wire).
    Messages,
    /// `POST /v1beta/models/{model}:generateContent` and the rest of
    /// Gemini's wire.
    GenerateContent,
    /// `POST /v1/images/generations` and `/v1/images/edits`.
    Images,
    /// `POST /v1/audio/transcriptions` and `/v1/audio/speech`.
    Audio,
    /// `POST /v1/embeddings`.
    Embeddings,
    /// `POST /v1/responses`.
    Responses,
    /// `POST /v1/completions` (legacy).
    Completions,
}

impl Endpoint {
    /// Every endpoint, in the stored order.
    pub const ALL: [Endpoint; 8] = [
        Endpoint::Chat,
        Endpoint::Messages,
        Endpoint::GenerateContent,
        Endpoint::Images,
        Endpoint::Audio,
        Endpoint::Embeddings,
        Endpoint::Responses,
        Endpoint::Completions,
    ];

    /// The name in the API, the CLI and the documentation.
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Chat => "chat",
            Endpoint::Messages => "messages",
            Endpoint::GenerateContent => "generate_content",
            Endpoint::Images => "images",
            Endpoint::Audio => "audio",
            Endpoint::Embeddings => "embeddings",
            Endpoint::Responses => "responses",
            Endpoint::Completions => "completions",
        }
    }

    /// The endpoint named `name`; the refusal lists the names.
    pub fn parse(name: &str) -> Result<Endpoint, UnknownEndpoint> {
        Endpoint::ALL
            .into_iter()
            .find(|e| e.as_str() == name)
            .ok_or_else(|| UnknownEndpoint(name.to_owned()))
    }

    /// The endpoint a request path belongs to (for refusals, which have a
    /// path but no usage record); `None` for paths that are no inference
    /// endpoint.
    pub fn of_path(path: &str) -> Option<Endpoint> {
        let path = path.split('?').next().unwrap_or_default();
        let under = |prefix: &str| {
            path == prefix
                || path
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        if under("/v1/chat/completions") || path == "/api/v1/playground/chat" {
            Some(Endpoint::Chat)
        } else if under("/v1/messages") {
            Some(Endpoint::Messages)
        } else if (path.starts_with("/v1beta/models/") || path.starts_with("/v1/models/"))
            && path.contains(':')
        {
            Some(Endpoint::GenerateContent)
        } else if under("/v1/images") {
            Some(Endpoint::Images)
        } else if under("/v1/audio") {
            Some(Endpoint::Audio)
        } else if under("/v1/embeddings") {
            Some(Endpoint::Embeddings)
        } else if under("/v1/responses") {
            Some(Endpoint::Responses)
        } else if under("/v1/completions") {
            Some(Endpoint::Completions)
        } else {
            None
        }
    }
}

/// A name that is none of [`Endpoint::ALL`]'s (a filter's typo, or a
/// damaged rollup key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownEndpoint(pub String);

impl std::fmt::Display for UnknownEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = Endpoint::ALL.iter().map(|e| e.as_str()).collect();
        write!(
            f,
            "unknown endpoint `{}`; one of: {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownEndpoint {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::codec;

    #[test]
    fn names_round_trip_and_unknown_names_are_listed() {
        for e in Endpoint::ALL {
            assert_eq!(Endpoint::parse(e.as_str()), Ok(e));
        }
        let error = Endpoint::parse("chats").unwrap_err().to_string();
        assert!(error.starts_with("unknown endpoint `chats`"), "{error}");
        assert!(error.contains("generate_content"), "{error}");
    }

    #[test]
    fn the_stored_form_is_the_position_in_one_byte() {
        for (i, e) in Endpoint::ALL.into_iter().enumerate() {
            assert_eq!(codec::encode(&e), vec![codec::FORMAT_V1, i as u8]);
        }
    }

    #[test]
    fn paths_map_to_their_endpoint() {
        let cases = [
            ("/v1/chat/completions", Some(Endpoint::Chat)),
            ("/api/v1/playground/chat", Some(Endpoint::Chat)),
            ("/v1/messages?beta=true", Some(Endpoint::Messages)),
            (
                "/v1beta/models/g:streamGenerateContent",
                Some(Endpoint::GenerateContent),
            ),
            ("/v1/images/edits", Some(Endpoint::Images)),
            ("/v1/audio/speech", Some(Endpoint::Audio)),
            ("/v1/embeddings", Some(Endpoint::Embeddings)),
            ("/v1/responses/resp_1", Some(Endpoint::Responses)),
            ("/v1/completions", Some(Endpoint::Completions)),
            ("/v1/models", None),
            ("/v1/chat/completionsx", None),
        ];
        for (path, want) in cases {
            assert_eq!(Endpoint::of_path(path), want, "{path}");
        }
    }
}
