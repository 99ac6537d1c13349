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
//! nothing lowers it.
//!
//! What rules cannot settle is reported as [`Grey`], for an LLM judge.

pub mod eval;
mod pack;
mod text;

use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

pub use pack::PackError;
use pack::{Compiled, Edge, Role};
use text::Normalised;

/// How far apart (in tokens) an anchor and its act may be when they are not
/// in the same sentence.
pub const WINDOW: usize = 12;
/// Below this many tokens a text counts as in a known language: too short
/// to tell.
const SHORT_TEXT_TOKENS: usize = 8;

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
    pub const ALL: [Level; 4] = [Level::Minimal, Level::Limited, Level::High, Level::Prohibited];
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
    /// The conversation.
    Content,
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
    /// The text is not recognisably English, German, French or Spanish, so
    /// the rules may have missed it.
    UnknownLanguage,
}

/// The outcome for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    /// The highest level over `hits` (minimal without hits).
    pub level: Level,
    /// Highest level first; within a level, purpose hits first.
    pub hits: Vec<Hit>,
    /// Questions for a judge; empty when the rules are sure.
    pub grey: Vec<Grey>,
}

impl Classification {
    /// High-risk uses and Article 5 hits go to a person: a rule-only block
    /// can be a false one, and Article 14 wants oversight of high-risk uses.
    pub fn requires_human_review(&self) -> bool {
        self.level >= Level::High
    }

    /// A sentence a person understands.
    pub fn reason(&self) -> String {
        let top: Vec<&Hit> = self.hits.iter().filter(|h| h.level == self.level).collect();
        let Some(first) = top.first() else {
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

    /// `risk_classification` on the response.
    pub fn view(&self) -> Value {
        json!({
            "level": self.level.as_str(),
            "reason": self.reason(),
            "requires_human_review": self.requires_human_review(),
            "triggered_rules": self.triggered_rules(),
        })
    }
}

/// The compiled rule packs.
pub struct Classifier {
    compiled: Compiled,
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
        })
    }

    /// The languages of the loaded packs (ISO 639-1).
    pub fn languages(&self) -> &[String] {
        &self.compiled.languages
    }

    /// The rule ids, in the order of the rule table.
    pub fn rule_ids(&self) -> impl Iterator<Item = &str> {
        self.compiled.rules.iter().map(|r| r.id.as_str())
    }

    /// Classifies a request from its service fields and its `messages`.
    pub fn classify(
        &self,
        purpose: Option<&str>,
        deployer_context: Option<&Value>,
        messages: &Value,
    ) -> Classification {
        let declared = text::normalise(&text::declared_text(purpose, deployer_context));
        let conversation = text::normalise(&text::conversation_text(messages));
        let declared_found = self.scan(&declared);
        let conversation_found = self.scan(&conversation);
        let exception_claimed = |rule: usize| {
            declared_found
                .iter()
                .chain(&conversation_found)
                .any(|f| f.role == Role::Exception(rule as u16))
        };

        let rules = &self.compiled.rules;
        let mut hits: Vec<(usize, Source)> = Vec::new();
        let mut anchored: Vec<usize> = Vec::new();
        for (rule, meta) in rules.iter().enumerate() {
            let declared_match = self.matches(rule, &declared, &declared_found, Source::Purpose);
            let content_match = self.matches(rule, &conversation, &conversation_found, Source::Content);
            let target = match meta.exception_to {
                Some(to) if exception_claimed(rule) => to,
                _ => rule,
            };
            if declared_match == Match::Hit {
                hits.push((target, Source::Purpose));
            }
            if content_match == Match::Hit {
                hits.push((target, Source::Content));
            }
            if content_match == Match::AnchorOnly && meta.level >= Level::High {
                anchored.push(rule);
            }
        }
        hits.sort_by_key(|&(rule, source)| {
            (std::cmp::Reverse(rules[rule].level), source == Source::Content, rule)
        });
        hits.dedup();

        let mut grey = Vec::new();
        for &(rule, source) in &hits {
            if source == Source::Content && !hits.contains(&(rule, Source::Purpose)) {
                grey.push(Grey::ContentOnly {
                    rule: rules[rule].id.clone(),
                });
            }
        }
        for rule in anchored {
            if !hits.iter().any(|&(r, _)| r == rule) {
                grey.push(Grey::AnchorWithoutAct {
                    rule: rules[rule].id.clone(),
                });
            }
        }
        if !self.known_language(&[(&declared, &declared_found), (&conversation, &conversation_found)]) {
            grey.push(Grey::UnknownLanguage);
        }

        let hits: Vec<Hit> = hits
            .into_iter()
            .map(|(rule, source)| Hit {
                rule: rules[rule].id.clone(),
                level: rules[rule].level,
                summary: rules[rule].summary.clone(),
                source,
            })
            .collect();
        let level = hits.first().map_or(Level::Minimal, |h| h.level);
        Classification { level, hits, grey }
    }

    /// Every term found in `text`, with its token.
    fn scan(&self, text: &Normalised) -> Vec<Found> {
        let mut found = Vec::new();
        for m in self.compiled.automaton.find_overlapping_iter(&text.text) {
            let (edge, roles) = &self.compiled.patterns[m.pattern().as_usize()];
            let fits = match edge {
                Edge::Infix => true,
                Edge::Prefix => text.is_token_start(m.start()),
                Edge::Word => text.is_token_start(m.start()) && text.is_token_end(m.end()),
            };
            if fits {
                let token = text.token_at(m.start()) as u32;
                found.extend(roles.iter().map(|&role| Found { role, token }));
            }
        }
        found
    }

    /// Whether `rule` matches a text, given the terms found in it.
    fn matches(&self, rule: usize, text: &Normalised, found: &[Found], source: Source) -> Match {
        let r = rule as u16;
        if source == Source::Purpose && found.iter().any(|f| f.role == Role::Purpose(r)) {
            return Match::Hit;
        }
        let anchors = tokens(found, |role| role == Role::Anchor(r));
        if anchors.is_empty() {
            return Match::Nothing;
        }
        let meta = &self.compiled.rules[rule];
        let acts = if meta.has_acts {
            tokens(found, |role| role == Role::Act(r))
        } else {
            anchors.clone()
        };
        let near = |a: u32, b: u32| {
            text.sentences[a as usize] == text.sentences[b as usize]
                || (a.abs_diff(b) as usize) <= WINDOW
        };
        let pairs: Vec<(u32, u32)> = anchors
            .iter()
            .flat_map(|&a| acts.iter().map(move |&b| (a, b)))
            // An act is a second word: "hire" is not both anchor and act.
            .filter(|&(a, b)| (a != b || !meta.has_acts) && near(a, b))
            .collect();
        if pairs.is_empty() {
            return Match::AnchorOnly;
        }
        // A rule with its own objects (workers, biometric input, police)
        // needs one in both texts; `needs_person` alone only in content,
        // where "kill the process" must not count as firing someone.
        let objects = if meta.has_objects {
            Some(tokens(found, |role| role == Role::Object(r)))
        } else if meta.needs_person && source == Source::Content {
            Some(tokens(found, |role| role == Role::Person))
        } else {
            None
        };
        let with_object = |&(a, b): &(u32, u32)| {
            objects
                .as_ref()
                .is_none_or(|o| o.iter().any(|&p| near(p, a) || near(p, b)))
        };
        if source == Source::Purpose {
            // The deployer states the use: no suppressor applies.
            return if pairs.iter().any(with_object) { Match::Hit } else { Match::Suppressed };
        }
        let framing = tokens(found, |role| {
            matches!(role, Role::Meta | Role::SelfUse | Role::LegalPerson) || role == Role::Suppressor(r)
        });
        let fiction = found.iter().any(|f| f.role == Role::Fiction)
            && !found.iter().any(|f| f.role == Role::Artefact);
        let sentence = |t: u32| text.sentences[t as usize];
        let hit = !fiction
            && pairs.iter().any(|pair| {
                let &(a, b) = pair;
                with_object(pair)
                    && !framing
                        .iter()
                        .any(|&s| sentence(s) == sentence(a) || sentence(s) == sentence(b))
            });
        if hit { Match::Hit } else { Match::Suppressed }
    }

    /// Whether the texts are recognisably in a pack's language: enough of
    /// their words are stop words of one language. Short texts count as
    /// known.
    fn known_language(&self, texts: &[(&Normalised, &Vec<Found>)]) -> bool {
        let total: usize = texts.iter().map(|(t, _)| t.token_count()).sum();
        if total < SHORT_TEXT_TOKENS {
            return true;
        }
        let mut counts = vec![0usize; self.compiled.languages.len()];
        for (_, found) in texts {
            for f in found.iter() {
                if let Role::Stopword(lang) = f.role {
                    counts[lang as usize] += 1;
                }
            }
        }
        let best = counts.into_iter().max().unwrap_or(0);
        best >= 2 && best * 8 >= total
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Found {
    role: Role,
    token: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Match {
    Nothing,
    /// A domain term, but no act near it.
    AnchorOnly,
    /// Anchor and act, but a person was missing or the framing suppressed it.
    Suppressed,
    Hit,
}

fn tokens(found: &[Found], want: impl Fn(Role) -> bool) -> Vec<u32> {
    found.iter().filter(|f| want(f.role)).map(|f| f.token).collect()
}
