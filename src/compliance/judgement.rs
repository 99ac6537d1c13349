//! What the optional LLM judge said (TAXONOMY 3.1, step 4), and which
//! rule results are grey zones it may review. The call itself is the
//! gateway's (`src/gateway/judge.rs`): it goes through the provider layer
//! like any request.

use serde_json::{Value, json};

use super::{Classification, Level, Source};

/// The least confidence at which the judge may lower a content-only hit.
pub const LOWER_CONFIDENCE: f64 = 0.8;
/// Reasons that may lower a content-only hit (TAXONOMY 3.1).
pub const LOWERING_REASONS: [&str; 5] = [
    "meta",
    "fiction",
    "self_use",
    "legal_person",
    "exception_clause",
];

/// What the judge said, for `risk_classification.judge`.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub used: bool,
    pub model: String,
    pub level: Option<Level>,
    pub area: Option<String>,
    pub confidence: Option<f64>,
    pub reason: Option<String>,
    /// Why the judge gave no usable answer; the rule result stands.
    pub error: Option<String>,
    /// What the judge changed: `raised`, `lowered`, `kept`.
    pub effect: &'static str,
}

impl Judgement {
    pub fn view(&self) -> Value {
        let mut view = json!({
            "used": self.used,
            "model": self.model,
            "effect": self.effect,
        });
        if let Some(c) = self.confidence {
            view["confidence"] = json!(c);
        }
        if let Some(level) = self.level {
            view["level"] = json!(level.as_str());
        }
        if let Some(area) = &self.area {
            view["area"] = json!(area);
        }
        if let Some(reason) = &self.reason {
            view["reason"] = json!(reason);
        }
        if let Some(error) = &self.error {
            view["error"] = json!(error);
        }
        view
    }

    /// A sentence for `reason`.
    pub fn sentence(&self) -> String {
        match (&self.error, self.effect) {
            (Some(error), _) => format!(
                "The judge model `{}` gave no usable answer ({error}); the rule result stands.",
                self.model
            ),
            (None, "raised") => format!(
                "The judge model `{}` raised it (confidence {:.2}): {}",
                self.model,
                self.confidence.unwrap_or(0.0),
                self.reason.as_deref().unwrap_or("")
            ),
            (None, "lowered") => format!(
                "The judge model `{}` lowered it (confidence {:.2}): {}",
                self.model,
                self.confidence.unwrap_or(0.0),
                self.reason.as_deref().unwrap_or("")
            ),
            _ => format!("The judge model `{}` confirmed it.", self.model),
        }
    }
}

/// Why the rules' result is a grey zone, if it is: a hit from the
/// conversation alone, an anchor without an operative act, or a language
/// the rule packs do not cover.
pub fn grey_zone(risk: &Classification) -> bool {
    !risk.grey.is_empty()
        || risk
            .hits
            .iter()
            .any(|h| h.source == Source::Content && h.level >= Level::High)
}
