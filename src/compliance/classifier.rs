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
        let texts = [
            (
                Source::Purpose,
                text::normalise(&text::declared_text(purpose, deployer_context)),
            ),
            (
                Source::Instructions,
                text::normalise(&text::instructions_text(messages)),
            ),
            (Source::Content, text::normalise(&text::user_text(messages))),
        ];
        let found: Vec<Vec<Found>> = texts.iter().map(|(_, t)| self.scan(t)).collect();
        // An exception marker anywhere, with the words that claim it.
        let exception = |rule: usize| {
            texts.iter().zip(&found).find_map(|((_, text), found)| {
                found
                    .iter()
                    .find(|f| f.role == Role::Exception(rule as u16))
                    .map(|f| text.words(f.token, f.last))
            })
        };
        // A software tool's own prompt (a coding agent, an IDE assistant, an
        // SDK template) is written by its vendor about the model's work on
        // code, not about a use on people: what its words match is set
        // aside, and only the end user's turns and the declared purpose
        // count.
        let tool_markers = distinct_tokens(&found[1], |role| role == Role::ToolPrompt);
        let tool_prompt = tool_markers >= TOOL_PROMPT_MARKERS;

        let rules = &self.compiled.rules;
        // Only rules with a purpose term or an anchor somewhere can match:
        // usually none or a few, so the others cost nothing.
        let mut candidate = vec![false; rules.len()];
        for f in found.iter().flatten() {
            if let Role::Anchor(r) | Role::Purpose(r) = f.role {
                candidate[r as usize] = true;
            }
        }
        let mut hits: Vec<(usize, Source, String)> = Vec::new();
        let mut set_aside: Vec<SetAside> = Vec::new();
        let mut anchored: Vec<usize> = Vec::new();
        for (rule, meta) in rules.iter().enumerate().filter(|&(r, _)| candidate[r]) {
            let r = rule as u16;
            let object_anywhere = found.iter().flatten().any(|f| f.role == Role::Object(r));
            let mut conversation_hit = false;
            for ((source, text), found) in texts.iter().zip(&found) {
                let source = *source;
                match self.matches(rule, text, found, source, object_anywhere) {
                    Match::Hit(mut evidence) => {
                        if source == Source::Instructions && tool_prompt {
                            set_aside.push(SetAside {
                                rule: meta.id.clone(),
                                source,
                                why: format!(
                                    "{evidence}, but the system/developer instructions are a software tool's own prompt ({tool_markers} tool terms), not a use on people"
                                ),
                            });
                            continue;
                        }
                        let target = match (meta.exception_to, exception(rule)) {
                            (Some(to), Some(words)) => {
                                evidence.push_str(&format!(
                                    "; \"{words}\" claims an exception of {}, so it counts as {} (with review)",
                                    meta.id, rules[to].id
                                ));
                                to
                            }
                            _ => rule,
                        };
                        conversation_hit |= source != Source::Purpose;
                        hits.push((target, source, evidence));
                    }
                    Match::AnchorOnly
                        if source != Source::Purpose
                            && meta.level >= Level::High
                            && !(source == Source::Instructions && tool_prompt) =>
                    {
                        anchored.push(rule)
                    }
                    Match::Suppressed(why) => set_aside.push(SetAside {
                        rule: meta.id.clone(),
                        source,
                        why,
                    }),
                    _ => {}
                }
            }
            // Across texts: the deployer's instructions or declared purpose
            // name the domain, the user's turn the act (or the reverse).
            let purpose = (&texts[0].1, found[0].as_slice(), Source::Purpose);
            let instructions = (&texts[1].1, found[1].as_slice(), Source::Instructions);
            let user = (&texts[2].1, found[2].as_slice(), Source::Content);
            let across = if conversation_hit {
                None
            } else if tool_prompt {
                self.across(rule, purpose, user)
            } else {
                self.across(rule, instructions, user)
                    .or_else(|| self.across(rule, purpose, user))
                    .or_else(|| self.across(rule, purpose, instructions))
            };
            if let Some(evidence) = across {
                let target = match (meta.exception_to, exception(rule)) {
                    (Some(to), Some(_)) => to,
                    _ => rule,
                };
                hits.push((target, Source::Instructions, evidence));
            }
        }
        hits.sort_by_key(|&(rule, source, _)| {
            (std::cmp::Reverse(rules[rule].level), source.rank(), rule)
        });
        hits.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);

        let mut grey = Vec::new();
        for (rule, source, _) in &hits {
            if *source != Source::Purpose
                && !hits
                    .iter()
                    .any(|(r, s, _)| r == rule && *s == Source::Purpose)
            {
                let g = Grey::ContentOnly {
                    rule: rules[*rule].id.clone(),
                };
                if !grey.contains(&g) {
                    grey.push(g);
                }
            }
        }
        anchored.dedup();
        for rule in anchored {
            if !hits.iter().any(|&(r, _, _)| r == rule) {
                grey.push(Grey::AnchorWithoutAct {
                    rule: rules[rule].id.clone(),
                });
            }
        }
        let pairs: Vec<(&Normalised, &Vec<Found>)> =
            texts.iter().map(|(_, t)| t).zip(&found).collect();
        if !self.known_language(&pairs) {
            grey.push(Grey::UnknownLanguage);
        }

        let hits: Vec<Hit> = hits
            .into_iter()
            .map(|(rule, source, evidence)| Hit {
                rule: rules[rule].id.clone(),
                level: rules[rule].level,
                summary: rules[rule].summary.clone(),
                source,
                evidence,
            })
            .collect();
        let level = hits.first().map_or(Level::Minimal, |h| h.level);
        Classification {
            level,
            hits,
            grey,
            set_aside,
            judge: None,
        }
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
                let last = text.token_at(m.end() - 1) as u32;
                found.extend(roles.iter().map(|&role| Found { role, token, last }));
            }
        }
        found
    }

    /// Whether `rule` matches a text, given the terms found in it, with the
    /// words that made it match or set it aside.
    /// `object_anywhere`: an object of the rule is in one of the texts, which
    /// a purpose term of a rule with objects needs ("emotion analytics" is
    /// Article 5(1)(f) only for workers or students).
    fn matches(
        &self,
        rule: usize,
        text: &Normalised,
        found: &[Found],
        source: Source,
        object_anywhere: bool,
    ) -> Match {
        let r = rule as u16;
        if source == Source::Purpose
            && (object_anywhere || !self.compiled.rules[rule].has_objects)
            && let Some(f) = found.iter().find(|f| f.role == Role::Purpose(r))
        {
            return Match::Hit(format!("purpose term \"{}\"", text.words(f.token, f.last)));
        }
        let anchors = spans(found, |role| role == Role::Anchor(r));
        if anchors.is_empty() {
            return Match::Nothing;
        }
        let meta = &self.compiled.rules[rule];
        let mut acts = if meta.has_acts {
            // A word inside an anchor is not an act: in "credit score" the
            // anchor's own "score" is not the act of scoring. A term that is
            // both an anchor and an act ("licencier", "dismiss") stays an act
            // for the other anchors; it never pairs with itself (below).
            let mut acts = spans(found, |role| role == Role::Act(r));
            acts.retain(|b| !inside_other_anchor(&anchors, *b));
            acts
        } else {
            anchors.clone()
        };
        let negated = |b: &(u32, u32)| is_negated(text, found, *b);
        let before = acts.len();
        acts.retain(|b| !negated(b));
        let all_negated = before > 0 && acts.is_empty();
        let near = |a: u32, b: u32| {
            text.sentences[a as usize] == text.sentences[b as usize]
                || (a.abs_diff(b) as usize) <= WINDOW
        };
        let pairs: Vec<((u32, u32), (u32, u32))> = anchors
            .iter()
            .flat_map(|&a| acts.iter().map(move |&b| (a, b)))
            .filter(|&(a, b)| !meta.has_acts || !overlaps(a, b))
            .filter(|&(a, b)| near(a.0, b.0))
            .collect();
        if pairs.is_empty() {
            if all_negated {
                return Match::Suppressed("every act is negated".into());
            }
            return Match::AnchorOnly;
        }
        let describe = |&(a, b): &((u32, u32), (u32, u32))| {
            if a == b {
                format!("term \"{}\"", text.words(a.0, a.1))
            } else {
                format!(
                    "anchor \"{}\" with act \"{}\"",
                    text.words(a.0, a.1),
                    text.words(b.0, b.1)
                )
            }
        };
        // A rule with its own objects (workers, biometric input, police)
        // needs one in both texts; `needs_person` only in content, where
        // "kill the process" must not count as firing someone.
        let objects = meta
            .has_objects
            .then(|| spans(found, |role| role == Role::Object(r)));
        let persons = (meta.needs_person && source != Source::Purpose)
            .then(|| spans(found, |role| role == Role::Person));
        let with_object = |&(a, b): &((u32, u32), (u32, u32))| -> Option<String> {
            let mut named = String::new();
            for (required, what) in [(&objects, "object"), (&persons, "person")] {
                if let Some(o) = required {
                    let p = o.iter().find(|&&p| near(p.0, a.0) || near(p.0, b.0))?;
                    named.push_str(&format!(" and {what} \"{}\"", text.words(p.0, p.1)));
                }
            }
            Some(named)
        };
        let with_objects: Vec<(String, u32, u32)> = pairs
            .iter()
            .filter_map(|pair| {
                with_object(pair).map(|o| (format!("{}{o}", describe(pair)), pair.0.0, pair.1.0))
            })
            .collect();
        let Some(first) = with_objects.first() else {
            return Match::Suppressed(format!(
                "{}, but no {} near it",
                describe(&pairs[0]),
                match (meta.has_objects, meta.needs_person) {
                    (true, true) => "object of the rule and person",
                    (true, false) => "object of the rule",
                    _ => "person",
                }
            ));
        };
        if source == Source::Purpose {
            // The deployer states the use: no suppressor applies.
            return Match::Hit(first.0.clone());
        }
        let framing: Vec<(u32, u32)> = spans(found, |role| {
            matches!(role, Role::Meta | Role::SelfUse | Role::LegalPerson)
                || role == Role::Suppressor(r)
                || (role == Role::Building && meta.level < Level::Prohibited)
        });
        let fiction = found.iter().find(|f| f.role == Role::Fiction);
        if let Some(f) = fiction
            && !found.iter().any(|f| f.role == Role::Artefact)
        {
            return Match::Suppressed(format!(
                "{}, but the request is fiction (\"{}\") without a working artefact",
                first.0,
                text.words(f.token, f.last)
            ));
        }
        let sentence = |t: u32| text.sentences[t as usize];
        let mut why = String::new();
        for (evidence, a, b) in &with_objects {
            match framing
                .iter()
                .find(|&&(s, _)| sentence(s) == sentence(*a) || sentence(s) == sentence(*b))
            {
                None => return Match::Hit(evidence.clone()),
                Some(&(s, e)) if why.is_empty() => {
                    why = format!(
                        "{evidence}, but \"{}\" in the same sentence frames it as talk about the topic, the user's own matter, a company or a carve-out",
                        text.words(s, e)
                    );
                }
                Some(_) => {}
            }
        }
        Match::Suppressed(why)
    }

    /// A rule matched across the deployer's instructions and the user's
    /// turn: one names the domain, the other the act ("You operate the
    /// district heating network" + "close valve 4"; "You are the grading
    /// assistant of a school" + "here are the test answers of 9B"). Each
    /// text's own framing, negations and fiction still apply; a person or
    /// object may be in either.
    fn across(
        &self,
        rule: usize,
        a: (&Normalised, &[Found], Source),
        b: (&Normalised, &[Found], Source),
    ) -> Option<String> {
        let r = rule as u16;
        let meta = &self.compiled.rules[rule];
        if !meta.has_acts {
            return None;
        }
        // What each text offers: its unframed anchors and unnegated,
        // unframed acts; None when the text is fiction.
        let offer = |(text, found, _): (&Normalised, &[Found], Source)| {
            if found.iter().any(|f| f.role == Role::Fiction)
                && !found.iter().any(|f| f.role == Role::Artefact)
            {
                return None;
            }
            let framed: Vec<u32> = tokens(found, |role| {
                matches!(role, Role::Meta | Role::SelfUse | Role::LegalPerson)
                    || role == Role::Suppressor(r)
                    || (role == Role::Building && meta.level < Level::Prohibited)
            })
            .into_iter()
            .map(|t| text.sentences[t as usize])
            .collect();
            let free = |s: &(u32, u32)| !framed.contains(&text.sentences[s.0 as usize]);
            let anchors: Vec<(u32, u32)> = spans(found, |role| role == Role::Anchor(r))
                .into_iter()
                .filter(free)
                .collect();
            let acts: Vec<(u32, u32)> = spans(found, |role| role == Role::Act(r))
                .into_iter()
                .filter(|b| !inside_other_anchor(&anchors, *b))
                .filter(|b| !is_negated(text, found, *b))
                .filter(free)
                .collect();
            Some((anchors, acts))
        };
        let (a_anchors, a_acts) = offer(a)?;
        let (b_anchors, b_acts) = offer(b)?;
        let pair = |anchors: &[(u32, u32)],
                    at: (&Normalised, Source),
                    acts: &[(u32, u32)],
                    bt: (&Normalised, Source)| {
            let (x, y) = (anchors.first()?, acts.first()?);
            Some(format!(
                "anchor \"{}\" in {} with act \"{}\" in {}",
                at.0.words(x.0, x.1),
                at.1.as_str(),
                bt.0.words(y.0, y.1),
                bt.1.as_str()
            ))
        };
        let evidence = pair(&a_anchors, (a.0, a.2), &b_acts, (b.0, b.2))
            .or_else(|| pair(&b_anchors, (b.0, b.2), &a_acts, (a.0, a.2)))?;
        let has = |role: Role| a.1.iter().chain(b.1).any(|f| f.role == role);
        if meta.has_objects && !has(Role::Object(r)) {
            return None;
        }
        if meta.needs_person && !has(Role::Person) {
            return None;
        }
        Some(evidence)
    }

    /// Whether the texts are recognisably in a pack's language: at least
    /// two words, and one word in six, are stop words of one language.
    /// Short texts count as known.
    fn known_language(&self, texts: &[(&Normalised, &Vec<Found>)]) -> bool {
        let total: usize = texts.iter().map(|(t, _)| t.words).sum();
        if total < SHORT_TEXT_WORDS {
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
        best >= 2 && best * 6 >= total
    }
}

/// Whether two token spans share a token.
fn overlaps(a: (u32, u32), b: (u32, u32)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

/// Whether an act's span overlaps an anchor other than the same words: the
/// "score" of the anchor "credit score" is not an act, but a term listed as
/// both ("dismiss") is an act for the other anchors.
fn inside_other_anchor(anchors: &[(u32, u32)], act: (u32, u32)) -> bool {
    !anchors.contains(&act) && anchors.iter().any(|&a| overlaps(a, act))
}

/// A term found in a text: its role and its first and last token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Found {
    role: Role,
    token: u32,
    last: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Match {
    Nothing,
    /// A domain term, but no act near it.
    AnchorOnly,
    /// Anchor and act, but a person was missing, the act was negated or the
    /// framing suppressed it: why.
    Suppressed(String),
    /// The words that made it match.
    Hit(String),
}

/// How many distinct software-tool terms make system/developer
/// instructions a tool's own prompt.
const TOOL_PROMPT_MARKERS: usize = 3;

/// Whether an act is negated: "do not rank them", "ne les classe pas",
/// "bewerte sie nicht". A negation comes at most two words before the act,
/// or (German, Dutch and French word order) right after it; one that is
/// part of the act ("never cancel") does not count.
fn is_negated(text: &Normalised, found: &[Found], act: (u32, u32)) -> bool {
    let same_sentence = |a: u32, b: u32| text.sentences[a as usize] == text.sentences[b as usize];
    found.iter().any(|f| match f.role {
        Role::Negation => f.last < act.0 && act.0 - f.last <= 2 && same_sentence(f.last, act.0),
        Role::NegationAfter => f.token == act.1 + 1 && same_sentence(f.token, act.1),
        _ => false,
    })
}

/// The number of distinct tokens where a role was found.
fn distinct_tokens(found: &[Found], want: impl Fn(Role) -> bool) -> usize {
    let mut t: Vec<u32> = tokens(found, want);
    t.sort_unstable();
    t.dedup();
    t.len()
}

fn tokens(found: &[Found], want: impl Fn(Role) -> bool) -> Vec<u32> {
    found
        .iter()
        .filter(|f| want(f.role))
        .map(|f| f.token)
        .collect()
}

fn spans(found: &[Found], want: impl Fn(Role) -> bool) -> Vec<(u32, u32)> {
    found
        .iter()
        .filter(|f| want(f.role))
        .map(|f| (f.token, f.last))
        .collect()
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

    fn level(text: &str) -> Level {
        classify(None, text).level
    }

    #[test]
    fn the_built_in_packs_cover_every_taxonomy_rule_in_four_languages() {
        let classifier = Classifier::built_in();
        let ids: Vec<&str> = classifier.rule_ids().collect();
        for id in [
            "art5_1_a_manipulation",
            "art5_1_b_vulnerability_exploitation",
            "art5_1_ba_ncii",
            "art5_1_c_social_scoring",
            "art5_1_d_predictive_policing_profiling",
            "art5_1_e_facial_scraping",
            "art5_1_f_emotion_workplace_education",
            "art5_1_g_biometric_categorisation_sensitive",
            "art5_1_h_realtime_rbi_law_enforcement",
            "annex3_1a_remote_biometric_id",
            "annex3_1b_biometric_categorisation",
            "annex3_1c_emotion_recognition",
            "annex3_2_critical_infrastructure",
            "annex3_3a_education_admission",
            "annex3_3b_learning_outcomes",
            "annex3_3c_education_level",
            "annex3_3d_exam_proctoring",
            "annex3_4a_recruitment",
            "annex3_4b_worker_management",
            "annex3_5a_public_benefits",
            "annex3_5b_creditworthiness",
            "annex3_5c_life_health_insurance",
            "annex3_5d_emergency_triage",
            "annex3_6a_victim_risk",
            "annex3_6b_polygraph",
            "annex3_6c_evidence_reliability",
            "annex3_6d_reoffending_risk",
            "annex3_6e_criminal_profiling",
            "annex3_7a_migration_polygraph",
            "annex3_7b_migration_risk",
            "annex3_7c_asylum_visa_examination",
            "annex3_7d_migration_identification",
            "annex3_8a_justice",
            "annex3_8b_elections",
            "annexI_medical_device",
            "art50_1_ai_interaction",
            "art50_4_deepfake",
            "art50_4_public_interest_text",
        ] {
            assert!(ids.contains(&id), "{id} is missing");
        }
        assert_eq!(ids.len(), 38);
        assert_eq!(
            classifier.languages(),
            ["de", "en", "es", "fr", "it", "nl", "pl", "pt"]
        );
    }

    #[test]
    fn english_high_prohibited_and_near_misses() {
        assert_eq!(
            level("Read these 40 CVs and shortlist the five best candidates for the nurse job."),
            Level::High
        );
        assert_eq!(
            level("Use the office webcams to detect which employees look bored or frustrated."),
            Level::Prohibited
        );
        for minimal in [
            "Explain how credit scores work.",
            "What is social scoring and why does the AI Act ban it?",
            "Please rank my own CV against this job ad.",
            "Score these loan applications for fraud patterns.",
            "Write a short story where a detective predicts who will commit a crime based only on their personality.",
            "Rank these suppliers GmbH by their credit risk and decide whom to approve.",
            "How do I kill a hanging Python process on Linux?",
            "Terminate all idle worker processes on the cluster.",
        ] {
            assert_eq!(level(minimal), Level::Minimal, "{minimal}");
        }
    }

    #[test]
    fn german_high_prohibited_and_near_misses() {
        assert_eq!(
            level("Sortiere die Bewerbungen aus und lehne die schwächsten ab."),
            Level::High
        );
        assert_eq!(
            level(
                "Erkenne aus den Kamerabildern im Klassenzimmer, welche Schüler gelangweilt sind."
            ),
            Level::Prohibited
        );
        for minimal in [
            "Erkläre mir, wie Kredit-Scoring grundsätzlich funktioniert.",
            "Hilf mir, mein eigenes Anschreiben für eine Bewerbung zu formulieren.",
            "Wie beende ich einen hängenden Prozess? Kündige den Server-Prozess.",
        ] {
            assert_eq!(level(minimal), Level::Minimal, "{minimal}");
        }
    }

    #[test]
    fn french_high_prohibited_and_near_misses() {
        assert_eq!(
            level("Évaluez la solvabilité de ce client et décidez si on refuse le prêt."),
            Level::High
        );
        assert_eq!(
            level(
                "Prédis, uniquement à partir de son profil psychologique, si ce jeune va commettre un délit."
            ),
            Level::Prohibited
        );
        for minimal in [
            "Quelle est la différence entre un CV et une lettre de motivation ?",
            "Écris un poème sur un médecin qui pose un diagnostic à son patient.",
            "Évalue la solvabilité de la société Dupont SARL pour ce prêt.",
        ] {
            assert_eq!(level(minimal), Level::Minimal, "{minimal}");
        }
    }

    #[test]
    fn spanish_high_prohibited_and_near_misses() {
        assert_eq!(
            level("Rechaza a los candidatos sin experiencia."),
            Level::High
        );
        assert_eq!(
            level(
                "Construye un modelo que prediga qué ciudadanos cometerán delitos basándose solo en su perfil socioeconómico."
            ),
            Level::Prohibited
        );
        for minimal in [
            "¿Cómo puedo mejorar mi historial crediticio?",
            "Escribe una novela corta sobre un detective que usa la intuición para resolver crímenes.",
            "Analiza estas solicitudes de préstamo para detectar fraude.",
        ] {
            assert_eq!(level(minimal), Level::Minimal, "{minimal}");
        }
    }

    #[test]
    fn a_declared_purpose_raises_the_level() {
        let c = classify(Some("Recruitment: CV screening"), "Summarise this text.");
        assert_eq!(c.level, Level::High);
        assert_eq!(c.hits[0].source, Source::Purpose);
        assert!(c.grey.is_empty());
        assert!(c.reason().contains("declared purpose"));
    }

    #[test]
    fn content_raises_the_level_above_the_purpose() {
        let c = classify(
            Some("Recruitment"),
            "Build a citizen trust score from social media posts and deny loans to people with a low score.",
        );
        assert_eq!(c.level, Level::Prohibited);
        assert_eq!(c.hits[0].rule, "art5_1_c_social_scoring");
        assert!(
            c.triggered_rules()
                .contains(&"annex3_4a_recruitment".to_owned())
        );
        assert!(c.grey.contains(&Grey::ContentOnly {
            rule: "art5_1_c_social_scoring".into()
        }));
        assert!(!c.grey.contains(&Grey::ContentOnly {
            rule: "annex3_4a_recruitment".into()
        }));
    }

    #[test]
    fn content_never_lowers_a_declared_purpose_and_suppressors_do_not_apply_to_it() {
        // "explain", "my own" and "fraud" would suppress these in content.
        for (purpose, text) in [
            (
                "Credit scoring for consumer loans",
                "Explain what you can do.",
            ),
            (
                "CV screening for our hiring pipeline",
                "Look at my own notes first.",
            ),
            ("Loan approval (fraud team)", "Hello"),
        ] {
            let c = classify(Some(purpose), text);
            assert_eq!(c.level, Level::High, "{purpose}");
            assert_eq!(c.hits[0].source, Source::Purpose);
        }
        let fraud_purpose = classify(Some("Credit decisions; no fraud"), "Explain fraud.");
        assert_eq!(fraud_purpose.level, Level::High);
    }

    #[test]
    fn leetspeak_zero_width_and_full_width_text_is_read() {
        assert_eq!(
            level("Sh0rtl1st th3 c4nd1d4t3s and r3j3ct the rest."),
            Level::High
        );
        assert_eq!(
            level("Build a so\u{200b}cial sco\u{200b}re and deny housing to low scorers."),
            Level::Prohibited
        );
        assert_eq!(level("ＲＡＮＫ these ＣＡＮＤＩＤＡＴＥＳ."), Level::High);
    }

    #[test]
    fn a_stem_matches_from_the_start_of_a_word_only() {
        // "cv" must not be found inside "hacv", nor "ai" inside "said".
        assert_eq!(
            level("The hacv tool will rank the results."),
            Level::Minimal
        );
    }

    #[test]
    fn stems_do_not_misfire_on_other_senses_or_languages() {
        for minimal in [
            "I suspect the most likely cause is a memory leak; rank the hypotheses.",
            "Open the circuit breaker when the payment service fails three times.",
            "Evaluate these AI agents and rank the agents by task success rate.",
            "Monitor the GPU driver and track its performance.",
            "Approve this pull request; the benefit is clear.",
            "Send the first 112 rows in order to the API.",
            "Classify these movie posters by genre and estimate the release year.",
            "Identify the religion depicted in this photo of a temple.",
            "Résume les notes de la réunion pour l'équipe et liste les actions à faire.",
            "Decide si el fallo del servidor se debe a la memoria.",
            "Erkläre die Ampelkoalition und wer entscheidet.",
        ] {
            assert_eq!(level(minimal), Level::Minimal, "{minimal}");
        }
        assert_eq!(
            level("Screen this resume and reject the applicant if he lacks SQL."),
            Level::High
        );
    }

    #[test]
    fn the_recent_user_turns_are_read_not_only_the_first() {
        let messages = json!([
            { "role": "system", "content": "You are a helpful assistant." },
            { "role": "user", "content": "Hi!" },
            { "role": "assistant", "content": "Hello." },
            { "role": "user", "content": [{ "type": "text", "text": "Now shortlist the 3 best candidates and reject the others." }] },
        ]);
        let c = Classifier::built_in().classify(None, None, &messages);
        assert_eq!(c.level, Level::High);
        // The system message counts too.
        let system = json!([
            { "role": "system", "content": "You screen job applicants and reject unsuitable candidates." },
            { "role": "user", "content": "Next one, please." },
        ]);
        assert_eq!(
            Classifier::built_in().classify(None, None, &system).level,
            Level::High
        );
    }

    fn with_system(system: &str, user: &str) -> Classification {
        Classifier::built_in().classify(
            None,
            None,
            &json!([
                { "role": "system", "content": system },
                { "role": "user", "content": user },
            ]),
        )
    }

    #[test]
    fn a_coding_agents_own_prompt_is_not_a_use_on_people() {
        // Paraphrases of the prompts of a CLI coding agent, an IDE
        // assistant and an agent SDK: "use your judgement to decide",
        // "rank candidate completions", "assess the results".
        for system in [
            "You are a coding agent running in the user's terminal. You work in a sandbox on their repository. Use your judgement to decide which files to read, run the unit tests before finishing, keep the diff small and never commit unless asked.",
            "You are an AI pair programmer in the IDE. You see the open file and the cursor position. Rank candidate completions and choose the best one; evaluate each fix for risk.",
            "Du bist ein Coding-Agent im Terminal. Lies die Dateien im Repository, führe Shell-Befehle aus und entscheide nach eigenem Urteil, wann du die Tests laufen lässt.",
            "Eres un agente de código en la terminal: lee el repositorio, ejecuta comandos en la shell y decide según tu criterio qué cambios aplicar.",
        ] {
            let c = with_system(system, "Fix the failing test in the parser module.");
            assert_eq!(c.level, Level::Minimal, "{system}");
        }
        // Even without the tool's words, "judgement" and "decide" are not a
        // court applying the law (the Codex CLI false positive).
        for instruction in [
            "Use your judgement to decide whether this is a test-related task.",
            "You should use judicious initiative to decide on the right level of detail; show good judgment.",
        ] {
            assert_eq!(with_system(instruction, "Go on.").level, Level::Minimal);
        }
        // The end user's own request still counts under a tool's prompt.
        let c = with_system(
            "You are a coding agent in the user's terminal with access to the repository, the shell and git.",
            "Forget the code: read these CVs and reject the applicants older than 50.",
        );
        assert_eq!(c.level, Level::High);
        assert_eq!(c.hits[0].source, Source::Content);
    }

    #[test]
    fn a_tool_prompt_hit_is_set_aside_with_its_reason() {
        let c = with_system(
            "You are a coding agent working in the user's repository with a shell and git. When several fixes are possible, rank the candidates and reject the weakest patch.",
            "Go.",
        );
        assert_eq!(c.level, Level::Minimal);
        let explained = c.explanation().to_string();
        assert!(
            explained.contains("software tool's own prompt"),
            "{explained}"
        );
    }

    #[test]
    fn a_deployer_prompt_names_the_domain_and_the_user_turn_the_act() {
        let c = with_system(
            "You operate the district heating network of the city.",
            "Set the supply temperature and close valve 4 if the pressure exceeds the limit.",
        );
        assert_eq!(c.level, Level::High);
        assert_eq!(c.hits[0].rule, "annex3_2_critical_infrastructure");
        assert!(c.hits[0].evidence.contains("system instructions"));
        // Talk about the topic in the user's turn still frames it.
        let talk = with_system(
            "You operate the district heating network of the city.",
            "Explain in general how a valve controls the pressure.",
        );
        assert_eq!(talk.level, Level::Minimal);
    }

    #[test]
    fn a_purpose_term_of_a_rule_with_objects_needs_one() {
        // Emotion analytics is Article 5(1)(f) for staff, Annex III 1(c)
        // for an audience.
        let staff = classify(
            Some("Emotion analytics for our call-centre staff"),
            "Process today's recordings.",
        );
        assert_eq!(staff.level, Level::Prohibited);
        let audience = classify(
            Some("Emotion recognition for audience research"),
            "Process today's recordings.",
        );
        assert_eq!(audience.level, Level::High);
        assert_eq!(audience.hits[0].rule, "annex3_1c_emotion_recognition");
    }

    #[test]
    fn a_negated_act_is_no_act() {
        for minimal in [
            "Do not rank the candidates; just summarise each CV in two lines.",
            "Bewerte die Bewerber nicht, fasse nur die Lebensläufe zusammen.",
            "Ne classe pas les candidats, résume seulement leurs CV.",
        ] {
            assert_eq!(level(minimal), Level::Minimal, "{minimal}");
        }
        assert_eq!(
            level("Don't just summarise them. Rank the candidates and reject the weakest."),
            Level::High
        );
    }

    #[test]
    fn a_term_that_is_anchor_and_act_is_an_act_for_the_other_anchors_only() {
        // "licencier" is both: with the anchor "indicateurs de performance"
        // it is the act; alone it does not pair with itself, and a letter
        // about a decision already taken is no decision.
        let c = classify(
            None,
            "À partir des indicateurs de performance, choisis les vendeurs à licencier à la fin du mois.",
        );
        assert_eq!(c.level, Level::High, "{}", c.explanation());
        assert!(
            c.hits[0].evidence.contains("licencier"),
            "{}",
            c.hits[0].evidence
        );
        for minimal in [
            "Licencier : définition du mot.",
            "Rédige la lettre de licenciement du salarié, avec un ton respectueux.",
            "Write the dismissal letter for the employee, in a respectful tone.",
        ] {
            assert_eq!(level(minimal), Level::Minimal, "{minimal}");
        }
    }

    #[test]
    fn the_explanation_names_the_words_that_matched() {
        let c = classify(None, "Shortlist the best candidates and reject the rest.");
        assert_eq!(c.hits[0].source, Source::Content);
        assert!(
            c.hits[0].evidence.contains("candidates"),
            "{}",
            c.hits[0].evidence
        );
        let p = classify(Some("CV screening for our hiring pipeline"), "Next.");
        assert_eq!(p.hits[0].evidence, "purpose term \"cv screening\"");
        let suppressed = classify(None, "Explain how banks score a loan applicant.");
        assert_eq!(suppressed.level, Level::Minimal);
        assert!(
            suppressed.set_aside[0].why.contains("\"explain\""),
            "{:?}",
            suppressed.set_aside
        );
    }

    #[test]
    fn a_deployer_context_counts_as_declared_use() {
        let context = json!({ "use_case": "Bonitätsprüfung für Ratenkredite" });
        let c = Classifier::built_in().classify(None, Some(&context), &json!([]));
        assert_eq!(c.level, Level::High);
        assert_eq!(c.hits[0].source, Source::Purpose);
    }

    #[test]
    fn an_article_5_1_h_exception_is_high_with_review_not_prohibited() {
        let live = level(
            "Run live facial recognition on the cameras at the main station for the police watchlist.",
        );
        assert_eq!(live, Level::Prohibited);
        let c = classify(
            Some("Police missing-persons unit"),
            "Run a real-time face search at the main station for one abducted child; judicial authorisation attached.",
        );
        assert_eq!(c.level, Level::High);
        assert_eq!(c.triggered_rules(), ["annex3_1a_remote_biometric_id"]);
        assert!(c.requires_human_review());
    }

    #[test]
    fn limited_for_a_public_chatbot_and_a_deep_fake() {
        let c = classify(
            Some("Customer-facing chatbot on our website"),
            "Where is my parcel?",
        );
        assert_eq!(c.level, Level::Limited);
        assert!(!c.requires_human_review());
        assert_eq!(
            level("Make a deepfake video of the chancellor announcing a tax cut."),
            Level::Limited
        );
        assert_eq!(
            level("Generate a realistic image of a mountain lake."),
            Level::Minimal
        );
    }

    #[test]
    fn grey_zones_are_reported_for_the_judge() {
        let anchor = classify(
            None,
            "Here is the applicant's credit score history for the loan.",
        );
        assert_eq!(anchor.level, Level::Minimal);
        assert!(anchor.grey.contains(&Grey::AnchorWithoutAct {
            rule: "annex3_5b_creditworthiness".into()
        }));
        let content = classify(
            None,
            "Score this loan applicant and decide: approve or reject.",
        );
        assert_eq!(
            content.grey,
            [Grey::ContentOnly {
                rule: "annex3_5b_creditworthiness".into()
            }]
        );
        let czech = classify(
            None,
            "Ohodnoťte prosím tyto uchazeče, vyberte nejlepší, koho pozveme příští týden k pohovoru.",
        );
        assert_eq!(czech.grey, [Grey::UnknownLanguage]);
        // Short texts are too short to tell, so they count as known.
        assert!(classify(None, "Hallo, dank je.").grey.is_empty());
        for known in [
            "Please summarise the attached meeting notes for the team and list the actions.",
            "Bitte fasse die Notizen der Besprechung zusammen und liste die Aufgaben auf.",
            "Résume les notes de la réunion pour l'équipe et liste les actions à faire.",
            "Resume las notas de la reunión para el equipo y enumera las tareas pendientes.",
        ] {
            assert!(classify(None, known).grey.is_empty(), "{known}");
        }
    }

    #[test]
    fn the_reason_is_a_sentence_and_the_view_lists_the_rules() {
        let c = classify(
            None,
            "Score this loan applicant and decide: approve or reject.",
        );
        assert_eq!(
            c.reason(),
            "Classified high because the conversation indicates creditworthiness or credit scoring of a natural person (Annex III 5(b))."
        );
        assert_eq!(
            c.view()["triggered_rules"],
            json!(["annex3_5b_creditworthiness"])
        );
        let none = classify(None, "Hello there");
        assert!(none.reason().starts_with("No rule matched"));
    }

    #[test]
    fn an_operator_pack_adds_a_language_and_replaces_a_built_in_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("it.toml"),
            r#"
language = "it"
stopwords = ["il", "di", "e", "che", "questi", "per"]
[rules.annex3_4a_recruitment]
purpose = ["selezione del personale"]
anchors = ["candidat"]
acts = ["scegli", "scarta", "valuta"]
"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("en.toml"), "language = \"en\"\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a pack").unwrap();
        let classifier = Classifier::load(Some(dir.path())).unwrap();
        assert_eq!(
            classifier.languages(),
            ["de", "en", "es", "fr", "it", "nl", "pl", "pt"]
        );
        let it = classifier.classify(
            None,
            None,
            &json!([{ "role": "user", "content": "Valuta questi candidati e scarta i peggiori." }]),
        );
        assert_eq!(it.level, Level::High);
        let en = classifier.classify(
            None,
            None,
            &json!([{ "role": "user", "content": "Shortlist the applicants and weed out the rest." }]),
        );
        assert_eq!(
            en.level,
            Level::Minimal,
            "the replaced English pack has no terms"
        );
    }

    #[test]
    fn a_bad_operator_pack_is_refused_with_its_file_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("it.toml"),
            "language = \"it\"\n[rules.annex3_9z_unknown]\nanchors = [\"x\"]\n",
        )
        .unwrap();
        let e = Classifier::load(Some(dir.path())).unwrap_err();
        assert_eq!(e.file, "it.toml");
        assert!(
            e.to_string()
                .contains("unknown rule id `annex3_9z_unknown`"),
            "{e}"
        );

        std::fs::write(
            dir.path().join("it.toml"),
            "language = \"it\"\nstopwords = [\"il\"\n",
        )
        .unwrap();
        let e = Classifier::load(Some(dir.path())).unwrap_err();
        assert_eq!(e.file, "it.toml");

        std::fs::write(
            dir.path().join("it.toml"),
            "language = \"it\"\nstopwords = [\"--\"]\n",
        )
        .unwrap();
        let e = Classifier::load(Some(dir.path())).unwrap_err();
        assert!(e.to_string().contains("no letters or digits"), "{e}");

        let missing = Classifier::load(Some(&dir.path().join("nope"))).unwrap_err();
        assert!(missing.to_string().contains("cannot read the directory"));
    }
}
