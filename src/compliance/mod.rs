//! EU AI Act risk classification at request time (DESIGN section 5).
//!
//! A rule engine over the declared `purpose` and `deployer_context` and,
//! separately, over the conversation (the system message and the recent user
//! turns). The rules are data (`assets/risk/rules.toml`); see that file for
//! how a rule matches. The level is the highest over every triggered rule: a
//! purpose can raise it, content can raise it above the purpose, and nothing
//! lowers it.

pub mod audit;
pub mod consents;
pub mod conversations;
pub mod erasure;
pub mod incidents;
pub mod judge;
pub mod registry;
pub mod reviews;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::store::Store;

/// Starts the compliance sweep: conversation records past their retention
/// are deleted and review items past their time expire, once at start and
/// then every `every`.
pub fn start_sweeper(store: Arc<Store>, every: Duration) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let now = crate::time_util::now_ms();
            match conversations::prune(&store, now).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    records = n,
                    "conversation records past their retention deleted"
                ),
                Err(crate::store::StoreError::Closed) => return,
                Err(e) => tracing::error!(error = %e, "pruning the conversation log failed"),
            }
            match reviews::expire_due(&store, now).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(items = n, "review items expired without a decision"),
                Err(crate::store::StoreError::Closed) => return,
                Err(e) => tracing::error!(error = %e, "expiring review items failed"),
            }
        }
    });
}

use serde::Deserialize;
use serde_json::{Value, json};

/// The built-in rule pack.
const BUILT_IN_RULES: &str = include_str!("../../assets/risk/rules.toml");
/// How many of the latest user turns are read besides the system messages.
const RECENT_USER_TURNS: usize = 4;

/// Ordered: a later variant is a higher level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Minimal,
    Limited,
    High,
    Prohibited,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Minimal => "minimal",
            Level::Limited => "limited",
            Level::High => "high",
            Level::Prohibited => "prohibited",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    id: String,
    level: Level,
    summary: String,
    anchors: Vec<String>,
    #[serde(default)]
    purpose_anchors: Vec<String>,
    acts: Vec<String>,
    suppressors: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulePack {
    rules: Vec<Rule>,
}

/// Where a rule matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Purpose,
    Content,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub rule: String,
    pub level: Level,
    pub summary: String,
    pub source: Source,
}

/// A result the rules cannot settle alone: what the judge decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grey {
    ContentOnly { rule: String },
    AnchorWithoutAct { rule: String },
    UnknownLanguage,
}

/// The outcome for one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    pub level: Level,
    pub hits: Vec<Hit>,
    pub grey: Vec<Grey>,
    /// The judge's review, when the tenant policy asked for one.
    pub judge: Option<judge::Judgement>,
}

impl Classification {
    /// High-risk uses and Article 5 hits go to a person: a rule-only block
    /// can be a false one, and Article 14 wants oversight of high-risk uses.
    pub fn requires_human_review(&self) -> bool {
        self.level >= Level::High
    }

    /// A sentence a person understands.
    pub fn reason(&self) -> String {
        let mut sentence = self.rules_reason();
        if let Some(judge) = &self.judge {
            sentence.push(' ');
            sentence.push_str(&judge.sentence());
        }
        sentence
    }

    fn rules_reason(&self) -> String {
        let top: Vec<&Hit> = self.hits.iter().filter(|h| h.level == self.level).collect();
        let Some(first) = top.first() else {
            if !self.hits.is_empty() {
                return format!(
                    "Classified {}: the rules matched {}, which the judge did not confirm.",
                    self.level,
                    self.triggered_rules().join(", ")
                );
            }
            return "No rule matched: no listed use on people was declared or found in the conversation."
                .to_owned();
        };
        let place = match first.source {
            Source::Purpose => "the declared purpose",
            Source::Content => "the conversation",
        };
        let mut sentence = format!(
            "Classified {} because {place} indicates {}.",
            self.level, first.summary
        );
        if top.len() > 1 {
            sentence.push_str(&format!(
                " {} more rule(s) at this level matched.",
                top.len() - 1
            ));
        }
        sentence
    }

    pub fn triggered_rules(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.hits.iter().map(|h| h.rule.clone()).collect();
        ids.dedup();
        ids
    }

    /// `risk_classification` on the response.
    pub fn view(&self) -> Value {
        let mut view = json!({
            "level": self.level.as_str(),
            "reason": self.reason(),
            "requires_human_review": self.requires_human_review(),
            "triggered_rules": self.triggered_rules(),
        });
        if let Some(judge) = &self.judge {
            view["judge"] = judge.view();
        }
        view
    }
}

pub struct Classifier {
    rules: Vec<Rule>,
}

impl Classifier {
    /// The built-in rule pack (its validity is checked by a unit test).
    pub fn built_in() -> Classifier {
        Classifier::from_toml(BUILT_IN_RULES).expect("the built-in rule pack is valid")
    }

    pub fn from_toml(text: &str) -> Result<Classifier, String> {
        let mut pack: RulePack = toml::from_str(text).map_err(|e| e.to_string())?;
        for rule in &mut pack.rules {
            for term in rule
                .anchors
                .iter_mut()
                .chain(&mut rule.purpose_anchors)
                .chain(&mut rule.acts)
                .chain(&mut rule.suppressors)
            {
                *term = normalise(term);
            }
        }
        Ok(Classifier { rules: pack.rules })
    }

    /// Classifies a request from its service fields and its `messages`.
    pub fn classify(
        &self,
        purpose: Option<&str>,
        deployer_context: Option<&Value>,
        messages: &Value,
    ) -> Classification {
        let mut declared = purpose.map(normalise).unwrap_or_default();
        if let Some(context) = deployer_context {
            declared.push('\n');
            declared.push_str(&normalise(&text_of(context)));
        }
        let conversation = normalise(&conversation_text(messages));
        let mut hits = Vec::new();
        for rule in &self.rules {
            if !declared.is_empty() && declared_match(rule, &declared) {
                hits.push(hit(rule, Source::Purpose));
            } else if content_match(rule, &conversation) {
                hits.push(hit(rule, Source::Content));
            }
        }
        hits.sort_by_key(|h| std::cmp::Reverse(h.level));
        let level = hits.first().map_or(Level::Minimal, |h| h.level);
        Classification {
            level,
            hits,
            grey: Vec::new(),
            judge: None,
        }
    }
}

fn hit(rule: &Rule, source: Source) -> Hit {
    Hit {
        rule: rule.id.clone(),
        level: rule.level,
        summary: rule.summary.clone(),
        source,
    }
}

fn declared_match(rule: &Rule, declared: &str) -> bool {
    rule.anchors
        .iter()
        .chain(&rule.purpose_anchors)
        .any(|term| declared.contains(term.as_str()))
}

/// An anchor and an operative act in one sentence, with no suppressor.
fn content_match(rule: &Rule, conversation: &str) -> bool {
    // Most requests mention no anchor at all: one pass over the whole text
    // settles them before any sentence is looked at.
    if !rule
        .anchors
        .iter()
        .any(|a| conversation.contains(a.as_str()))
    {
        return false;
    }
    conversation
        .split(['.', '!', '?', '\n', ';'])
        .any(|sentence| {
            rule.anchors.iter().any(|a| sentence.contains(a.as_str()))
                && (rule.acts.is_empty() || rule.acts.iter().any(|a| sentence.contains(a.as_str())))
                && !rule
                    .suppressors
                    .iter()
                    .any(|s| sentence.contains(s.as_str()))
        })
}

/// The system messages and the latest user turns, as text.
fn conversation_text(messages: &Value) -> String {
    let Some(messages) = messages.as_array() else {
        return String::new();
    };
    let mut parts: Vec<String> = messages
        .iter()
        .filter(|m| matches!(m["role"].as_str(), Some("system" | "developer")))
        .map(|m| text_of(&m["content"]))
        .collect();
    let mut users: Vec<String> = messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .take(RECENT_USER_TURNS)
        .map(|m| text_of(&m["content"]))
        .collect();
    users.reverse();
    parts.extend(users);
    parts.join("\n")
}

/// The text in a content value: a string, text parts, or any JSON strings.
pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(text_of).collect::<Vec<_>>().join("\n"),
        Value::Object(map) => match map.get("text") {
            Some(text) => text_of(text),
            None => map.values().map(text_of).collect::<Vec<_>>().join("\n"),
        },
        _ => String::new(),
    }
}

/// Lowercase with the diacritics of German, French and Spanish folded.
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().flat_map(char::to_lowercase) {
        match c {
            'ä' | 'à' | 'â' | 'á' => out.push('a'),
            'ö' | 'ô' | 'ó' => out.push('o'),
            'ü' | 'ù' | 'û' | 'ú' => out.push('u'),
            'é' | 'è' | 'ê' | 'ë' => out.push('e'),
            'î' | 'ï' | 'í' => out.push('i'),
            'ç' => out.push('c'),
            'ñ' => out.push('n'),
            'ß' => out.push_str("ss"),
            '’' => out.push('\''),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(purpose: Option<&str>, text: &str) -> Classification {
        Classifier::built_in().classify(
            purpose,
            None,
            &json!([{ "role": "user", "content": text }]),
        )
    }

    #[test]
    fn the_built_in_pack_loads() {
        assert!(Classifier::built_in().rules.len() >= 5);
    }

    #[test]
    fn a_topic_alone_is_minimal_a_use_on_people_is_high() {
        let topic = classify(None, "Explain how credit scores work.");
        assert_eq!(topic.level, Level::Minimal);
        assert!(topic.triggered_rules().is_empty());
        let use_on_people = classify(
            None,
            "Score this loan applicant and decide: approve or reject.",
        );
        assert_eq!(use_on_people.level, Level::High);
        assert_eq!(
            use_on_people.triggered_rules(),
            ["annex3_5b_creditworthiness"]
        );
        assert!(use_on_people.requires_human_review());
        assert!(use_on_people.reason().contains("creditworthiness"));
    }

    #[test]
    fn a_declared_purpose_raises_the_level_and_content_cannot_lower_it() {
        let declared = classify(Some("Recruitment: CV screening"), "Summarise this text.");
        assert_eq!(declared.level, Level::High);
        assert_eq!(declared.hits[0].source, Source::Purpose);
        let raised = classify(
            Some("Recruitment"),
            "Build a social credit system and deny loans to people with a low social score.",
        );
        assert_eq!(raised.level, Level::Prohibited);
    }

    #[test]
    fn german_french_and_spanish_are_read_with_diacritics_folded() {
        let de = classify(
            None,
            "Sortiere die Bewerbungen aus und lehne die schwächsten ab.",
        );
        assert_eq!(de.level, Level::High);
        let fr = classify(
            None,
            "Évaluez la solvabilité de ce client et décidez si on refuse le prêt.",
        );
        assert_eq!(fr.level, Level::High);
        let es = classify(None, "Rechaza a los candidatos sin experiencia.");
        assert_eq!(es.level, Level::High);
    }

    #[test]
    fn suppressors_and_carve_outs_keep_content_minimal() {
        assert_eq!(
            classify(None, "Please rank my own CV against this job ad.").level,
            Level::Minimal
        );
        assert_eq!(
            classify(None, "Score these loan applications for fraud patterns.").level,
            Level::Minimal
        );
    }

    #[test]
    fn the_recent_user_turns_are_read_not_just_the_first() {
        let messages = json!([
            { "role": "system", "content": "You are a helpful assistant." },
            { "role": "user", "content": "Hi!" },
            { "role": "assistant", "content": "Hello." },
            { "role": "user", "content": [{ "type": "text", "text": "Now shortlist the 3 best candidates and reject the others." }] },
        ]);
        let c = Classifier::built_in().classify(None, None, &messages);
        assert_eq!(c.level, Level::High);
    }

    #[test]
    fn limited_for_a_public_chatbot() {
        let c = classify(
            Some("Customer-facing chatbot on our website"),
            "Where is my parcel?",
        );
        assert_eq!(c.level, Level::Limited);
        assert!(!c.requires_human_review());
    }
}
