//! The request classifier: rules over the declared use and the conversation.
//!
//! A request is read as two texts: the declared use (`purpose` and
//! `deployer_context`) and the conversation (system and developer messages
//! and the latest user turns). Both are normalised ([`text`]) and scanned
//! once by the compiled rule packs ([`pack`]). In the declared use a purpose
//! term of a rule suffices, or an anchor with an act, because the deployer
//! states the intended use; no suppressor applies there. In the
//! conversation an anchor needs an operative act (and a person, where the
//! rule says so) in the same sentence or within [`WINDOW`] tokens, and
//! nothing in those sentences may frame it as talk about the topic, the
//! user's own matter, a company, or a carve-out. The level is the highest
//! over every hit: a purpose raises it, content raises it further, and
//! nothing lowers it. Then a small learned model ([`lexical`]) may raise a
//! minimal or limited result, as a second signal named `lexical:<area>`,
//! and two models over runs of characters ([`ngram`]) may raise a minimal or
//! limited result in which the rules found a domain to high or prohibited
//! (`ngram:<area>`), and set aside a high or prohibited match the rules
//! found in the conversation alone when they read the request as no
//! listed use (twenty-fifth round; [`Grey::Overruled`] for a judge).
//!
//! What rules cannot settle is reported as [`Grey`], for an LLM judge.

mod across;
mod article50;
mod documents;
mod escalation;
pub mod eval;
mod exceptions;
mod lexical;
mod matching;
mod ngram;
mod pack;
mod recent;
mod scanner;
mod spans;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_exceptions;
#[cfg(test)]
mod tests_round11;
#[cfg(test)]
mod tests_round12;
#[cfg(test)]
mod tests_round13;
#[cfg(test)]
mod tests_round14;
#[cfg(test)]
mod tests_round15;
#[cfg(test)]
mod tests_round16;
#[cfg(test)]
mod tests_round17;
#[cfg(test)]
mod tests_round17b;
#[cfg(test)]
mod tests_round17c;
#[cfg(test)]
mod tests_round18;
#[cfg(test)]
mod tests_round19;
#[cfg(test)]
mod tests_round19b;
#[cfg(test)]
mod tests_round20;
#[cfg(test)]
mod tests_round21;
#[cfg(test)]
mod tests_round22;
#[cfg(test)]
mod tests_round23;
#[cfg(test)]
mod tests_round24;
#[cfg(test)]
mod tests_round25;
#[cfg(test)]
mod tests_round26;
mod text;

use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

use pack::Compiled;
pub use pack::PackError;

/// How far apart (in tokens) an anchor and its act may be when they are not
/// in the same sentence.
pub const WINDOW: usize = 12;
/// Below this many words a text counts as in a known language: too short
/// to tell.
const SHORT_TEXT_WORDS: usize = 10;

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

    /// The four levels, lowest first.
    pub const ALL: [Level; 4] = [
        Level::Minimal,
        Level::Limited,
        Level::High,
        Level::Prohibited,
    ];
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Level {
    type Err = String;

    fn from_str(s: &str) -> Result<Level, String> {
        Level::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("`{s}` is not minimal, limited, high or prohibited"))
    }
}

/// Where a rule matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `purpose` or `deployer_context`.
    Purpose,
    /// The system and developer messages: the deployer's or a tool
    /// vendor's instructions.
    Instructions,
    /// The end user's turns.
    Content,
}

impl Source {
    /// Purpose first, then instructions, then the user's turns.
    fn rank(self) -> u8 {
        self as u8
    }

    /// Where, in words.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Purpose => "the declared purpose",
            Source::Instructions => "the system instructions",
            Source::Content => "the user's messages",
        }
    }
}

/// One rule that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The TAXONOMY id, such as `annex3_4a_recruitment`.
    pub rule: String,
    pub level: Level,
    /// What the rule is about, in words (ends with its legal reference).
    pub summary: String,
    pub source: Source,
    /// The words that made it match, for an auditor.
    pub evidence: String,
}

/// A rule whose terms were found but that did not count, and why: for an
/// auditor (`tollgate risk classify --explain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    pub rule: String,
    pub source: Source,
    pub why: String,
}

impl SetAside {
    /// The match lacked only the rule's object near it: a vocabulary gap
    /// the learned layers may fill, unlike a missing person, a negation
    /// or a framing, which stop them.
    pub(crate) fn lacked_only_object(&self) -> bool {
        self.why
            .strip_suffix(" near it")
            .and_then(|w| w.strip_suffix(matching::NO_OBJECT))
            .is_some_and(|w| w.ends_with("but no "))
    }

    /// The rule's terms stood only in a pasted document, which the rules
    /// did not read for it: no reading of the request, unlike a framing
    /// or a disclosure.
    pub(crate) fn in_pasted_document(&self) -> bool {
        self.why.ends_with(documents::NOT_EVALUATED)
    }
}

/// What the rules cannot decide and an LLM judge should: TAXONOMY 3.1
/// step 4.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grey {
    /// The rule matched the conversation but not the declared purpose: a
    /// judge may confirm it or, with a reason from the closed list, lower it.
    ContentOnly { rule: String },
    /// A domain term of a high or prohibited rule appeared without an
    /// operative act, and the rule did not match otherwise.
    AnchorWithoutAct { rule: String },
    /// A high or prohibited rule matched the conversation alone, but the
    /// `risky` n-gram model read the request as no listed use, so the match
    /// was set aside ([`ngram::Ngram::overrule`]): a judge may raise it back.
    Overruled { rule: String },
    /// The text is not recognisably in a pack's language (English, German,
    /// French, Spanish, Italian, Dutch, Polish, Portuguese built in), so the
    /// rules may have missed it.
    UnknownLanguage,
}

/// The outcome for one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// The highest level over `hits` (minimal without hits), or what the
    /// judge made of it.
    pub level: Level,
    /// Highest level first; within a level, purpose hits first.
    pub hits: Vec<Hit>,
    /// Questions for a judge; empty when the rules are sure.
    pub grey: Vec<Grey>,
    /// Matches that were found and set aside (suppressed, negated, a
    /// tool's own prompt), for an auditor.
    pub set_aside: Vec<SetAside>,
    /// The judge's review, when the tenant policy asked for one.
    pub judge: Option<super::judgement::Judgement>,
}

impl Classification {
    /// High-risk uses and Article 5 hits go to a person: a rule-only block
    /// can be a false one, and Article 14 wants oversight of high-risk uses.
    pub fn requires_human_review(&self) -> bool {
        self.level >= Level::High
    }

    /// A sentence a person understands (two when a judge was asked).
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
            Source::Instructions | Source::Content => "the conversation",
        };
        let mut sentence = format!(
            "Classified {} because {place} indicates {}.",
            self.level, first.summary
        );
        let more = self.triggered_rules().len() - 1;
        if more > 0 {
            sentence.push_str(&format!(" {more} more rule(s) matched."));
        }
        sentence
    }

    /// The ids of the rules that matched, highest level first, each once.
    pub fn triggered_rules(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::with_capacity(self.hits.len());
        for hit in &self.hits {
            if !ids.contains(&hit.rule) {
                ids.push(hit.rule.clone());
            }
        }
        ids
    }

    /// Which rules fired and why, and which matches were set aside and
    /// why: for an auditor (`tollgate risk classify --explain`, the
    /// playground).
    pub fn explanation(&self) -> Value {
        json!({
            "hits": self.hits.iter().map(|h| json!({
                "rule": h.rule,
                "level": h.level.as_str(),
                "source": h.source.as_str(),
                "matched": h.evidence,
                "means": h.summary,
            })).collect::<Vec<_>>(),
            "set_aside": self.set_aside.iter().map(|s| json!({
                "rule": s.rule,
                "source": s.source.as_str(),
                "why": s.why,
            })).collect::<Vec<_>>(),
        })
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

/// The compiled rule packs.
pub struct Classifier {
    compiled: Compiled,
    /// The learned second signal ([`lexical`]): built in, not overridable.
    lexical: lexical::Lexical,
    /// The character n-gram models ([`ngram`]): built in, not overridable.
    ngram: ngram::Ngram,
    /// Long instructions scanned lately ([`recent`]).
    recent: recent::Recent,
}

impl fmt::Debug for Classifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Classifier")
            .field("rules", &self.compiled.rules.len())
            .field("languages", &self.compiled.languages)
            .field("terms", &self.compiled.patterns.len())
            .finish()
    }
}

impl Classifier {
    /// The built-in rule packs (their validity is checked by a unit test).
    pub fn built_in() -> Classifier {
        Classifier::load(None).expect("the built-in rule packs are valid")
    }

    /// The built-in packs, with the `*.toml` files of `dir` replacing those
    /// of the same name (`rules.toml`, `en.toml`...) and adding new
    /// languages (`it.toml`).
    pub fn load(dir: Option<&Path>) -> Result<Classifier, PackError> {
        Ok(Classifier {
            compiled: pack::load(dir)?,
            lexical: lexical::Lexical::built_in(),
            ngram: ngram::Ngram::built_in(),
            recent: recent::kept(),
        })
    }

    /// The languages of the loaded packs (ISO 639-1).
    pub fn languages(&self) -> &[String] {
        &self.compiled.languages
    }

    /// The number of distinct terms over every pack.
    pub(crate) fn term_count(&self) -> usize {
        self.compiled.patterns.len()
    }

    /// The rule ids, in the order of the rule table.
    pub fn rule_ids(&self) -> impl Iterator<Item = &str> {
        self.compiled.rules.iter().map(|r| r.id.as_str())
    }
}
