//! The answer as the charge keeps it for the conversation log and the
//! incident sampler ([`Output`]).
//!
//! A whole completion is passed as its text together with the value it was
//! serialized from, so that the log's redacted copy is derived from the
//! value instead of parsing the text again (issue 19, item 8): one clone
//! and one serialization where there were a parse, a serialization and the
//! parse's allocations. The stored text is the same byte for byte: parsing
//! `value.to_string()` gives `value` back.

use serde_json::Value;

use super::gate::Compliance;

/// What an answer leaves for the logs: plain text (a stream's relayed
/// text, a media answer, or nothing when nothing keeps it), or a
/// completion, its text and the value it is the serialization of.
#[derive(Debug, Clone, Copy)]
pub enum Output<'a> {
    Text(&'a str),
    Completion { text: &'a str, value: &'a Value },
}

impl<'a> From<&'a str> for Output<'a> {
    fn from(text: &'a str) -> Output<'a> {
        Output::Text(text)
    }
}

impl<'a> From<&'a String> for Output<'a> {
    fn from(text: &'a String) -> Output<'a> {
        Output::Text(text)
    }
}

impl<'a> Output<'a> {
    /// A completion whose serialization is `text` (empty when nothing
    /// keeps the answer's text, then only the text is kept).
    pub fn completion(text: &'a str, value: &'a Value) -> Output<'a> {
        if text.is_empty() {
            Output::Text(text)
        } else {
            Output::Completion { text, value }
        }
    }

    /// The answer's text as the logs keep it: with the request's
    /// placeholders for personal data, as [`Compliance::logged`] makes
    /// them of the text.
    pub fn logged(self, compliance: &Compliance) -> String {
        match (self, &compliance.pii) {
            (Output::Completion { value, .. }, Some(session)) => {
                let mut value = value.clone();
                session.clone().redact_json(&mut value);
                crate::base::json::text(&value)
            }
            (Output::Completion { text, .. }, None) => text.to_owned(),
            (Output::Text(text), _) => compliance.logged(text).into_owned(),
        }
    }

    /// The text of the answer, for the sampler: a completion's message
    /// contents, or the text as it is.
    pub fn answer_text(self) -> String {
        let mut parsed = None;
        let completion = match self {
            Output::Completion { value, .. } => value,
            Output::Text(text) => match serde_json::from_str::<Value>(text) {
                Ok(value) => &*parsed.insert(value),
                Err(_) => return text.to_owned(),
            },
        };
        match completion["choices"].as_array() {
            Some(choices) => choices
                .iter()
                .map(|c| crate::providers::content_text(&c["message"]["content"]))
                .collect::<Vec<_>>()
                .join("\n"),
            None => self.text().to_owned(),
        }
    }

    fn text(self) -> &'a str {
        match self {
            Output::Text(text) | Output::Completion { text, .. } => text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pii;
    use crate::tenants::CompliancePolicy;

    fn compliance(mode: pii::Mode) -> Compliance {
        let policy = CompliancePolicy {
            pii_redaction: mode,
            ..CompliancePolicy::default()
        };
        let pii = (mode != pii::Mode::Off).then(|| {
            let mut session = pii::Session::new(mode, &[]);
            session.redact_document(r#"{"messages":[{"content":"mail ann@example.com"}]}"#);
            session
        });
        Compliance {
            policy,
            purpose: None,
            end_user_id: None,
            deployer_context: None,
            user_consent_id: None,
            request: None,
            hold: false,
            pii,
        }
    }

    #[test]
    fn a_completion_is_logged_as_its_text_would_be() {
        let value = serde_json::json!({
            "id": "chatcmpl-1", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant",
                "content": "write to ann@example.com or bob@example.org, \"quoted\"\n\u{e9}\u{1F600}"}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 16, "total_tokens": 19},
            "billing": {"cost": 0.000123, "latency": -1.5e-7, "big": 18446744073709551615u64}
        });
        let text = value.to_string();
        for mode in [pii::Mode::Logs, pii::Mode::Upstream, pii::Mode::Off] {
            let c = compliance(mode);
            let derived = Output::completion(&text, &value);
            assert_eq!(
                derived.logged(&c),
                Output::from(&text).logged(&c),
                "{mode:?}"
            );
            assert_eq!(derived.answer_text(), Output::from(&text).answer_text());
        }
        assert!(compliance(pii::Mode::Logs).pii.is_some());
        let logged = Output::completion(&text, &value).logged(&compliance(pii::Mode::Logs));
        assert!(!logged.contains("ann@example.com") && !logged.contains("bob@example.org"));
        assert_eq!(
            Output::completion(&text, &value).answer_text(),
            "write to ann@example.com or bob@example.org, \"quoted\"\n\u{e9}\u{1F600}"
        );
    }

    #[test]
    fn plain_text_is_logged_and_sampled_as_it_is() {
        let c = compliance(pii::Mode::Logs);
        assert_eq!(Output::from("hello").answer_text(), "hello");
        assert_eq!(Output::from("").logged(&c), "");
        assert_eq!(
            Output::completion("", &serde_json::json!({})).logged(&c),
            ""
        );
        assert!(
            !Output::from("mail ann@example.com")
                .logged(&c)
                .contains("ann@")
        );
    }
}
