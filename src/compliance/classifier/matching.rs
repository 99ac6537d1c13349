//! Matching: how the compiled packs decide one request. The three texts
//! (declared use, instructions, user turns) are scanned once; every rule
//! with a term found is then matched in each text ([`Classifier::matches`])
//! and across texts ([`Classifier::across`]); the hits, the matches set
//! aside and the grey zones make the [`Classification`].

use serde_json::Value;

use super::pack::Role;
use super::spans::{
    Found, Pair, adjacent, describe, distinct_tokens, inside_other_anchor, is_negated, near,
    overlaps, spans, terms_of,
};
use super::text::{self, Normalised};
use super::{Classification, Classifier, Grey, Hit, Level, SHORT_TEXT_WORDS, SetAside, Source};
use super::{article50, documents, exceptions};

/// What a match lacked when only the rule's object was missing near it (a
/// vocabulary gap the lexical layer may fill, unlike a missing person, a
/// negation or a framing).
pub(super) const NO_OBJECT: &str = "object of the rule";

/// How many distinct software-tool terms make system/developer
/// instructions a tool's own prompt.
const TOOL_PROMPT_MARKERS: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Match {
    Nothing,
    /// A domain term, but no act near it.
    AnchorOnly,
    /// Anchor and act, but a person was missing, the act was negated or the
    /// framing suppressed it: why.
    Suppressed(String),
    /// The words that made it match.
    Hit(String),
}

/// A request's three texts, lowest rank first (purpose, instructions, user
/// turns), with the terms found in each.
pub(super) struct Scanned {
    pub(super) texts: [(Source, Normalised); 3],
    pub(super) found: [Vec<Found>; 3],
    /// Distinct software-tool terms in the instructions.
    tool_markers: usize,
    /// The instructions are a software tool's own prompt.
    pub(super) tool_prompt: bool,
    /// Stop words found per language, over the three texts: counted, not
    /// kept as terms, because they are most of the matches in prose and
    /// only language detection reads them.
    stopwords: Vec<usize>,
    /// The documents pasted into each text ([`documents`]).
    pub(super) pasted: [documents::Pasted; 3],
}

impl Scanned {
    /// An exception marker of `rule` anywhere, with the words that claim it.
    pub(super) fn exception(&self, rule: usize) -> Option<&str> {
        exception(&self.texts, &self.found, rule)
    }
}

/// An exception marker of `rule` in `texts`, whose terms are `found`.
fn exception<'t>(
    texts: &'t [(Source, Normalised); 3],
    found: &[Vec<Found>; 3],
    rule: usize,
) -> Option<&'t str> {
    texts.iter().zip(found).find_map(|((_, text), found)| {
        found
            .iter()
            .find(|f| f.role == Role::Exception(rule as u16))
            .map(|f| text.words(f.token, f.last))
    })
}

/// What the rules collect over one request: (rule, source, evidence) hits,
/// the matches set aside, and the rules that had an anchor but no act.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) hits: Vec<(usize, Source, String)>,
    set_aside: Vec<SetAside>,
    anchored: Vec<usize>,
    /// Rules with terms in a software tool's own prompt, not evaluated.
    tool_prompt: Vec<usize>,
}

impl Classifier {
    /// Classifies a request from its service fields and its `messages`.
    pub fn classify(
        &self,
        purpose: Option<&str>,
        deployer_context: Option<&Value>,
        messages: &Value,
    ) -> Classification {
        self.run(purpose, deployer_context, messages, None).1
    }

    /// The terms (pattern numbers) that the rules which fired found in a
    /// request: their purpose terms, anchors, acts and objects. What
    /// cross-validation leaves out ([`super::eval::cross_validate`]).
    pub(super) fn terms_used(
        &self,
        purpose: Option<&str>,
        deployer_context: Option<&Value>,
        messages: &Value,
    ) -> Vec<u32> {
        let (scanned, c) = self.run(purpose, deployer_context, messages, None);
        let rules = &self.compiled.rules;
        let fired: Vec<u16> = (0..rules.len())
            .filter(|&r| {
                c.hits.iter().any(|h| {
                    h.rule == rules[r].id
                        || rules[r]
                            .exception_to
                            .is_some_and(|to| rules[to].id == h.rule)
                })
            })
            .map(|r| r as u16)
            .collect();
        let mut terms: Vec<u32> = scanned
            .found
            .iter()
            .flatten()
            .filter(|f| match f.role {
                Role::Purpose(r) | Role::Anchor(r) | Role::Act(r) | Role::Object(r) => {
                    fired.contains(&r)
                }
                _ => false,
            })
            .map(|f| f.pattern)
            .collect();
        terms.sort_unstable();
        terms.dedup();
        terms
    }

    /// Classifies with the terms whose `disabled` entry is true left out
    /// (cross-validation); `None` for every term.
    pub(super) fn classify_without(
        &self,
        purpose: Option<&str>,
        deployer_context: Option<&Value>,
        messages: &Value,
        disabled: &[bool],
    ) -> Classification {
        self.run(purpose, deployer_context, messages, Some(disabled))
            .1
    }

    fn run(
        &self,
        purpose: Option<&str>,
        deployer_context: Option<&Value>,
        messages: &Value,
        disabled: Option<&[bool]>,
    ) -> (Scanned, Classification) {
        let scanned = self.scan_request(purpose, deployer_context, messages, disabled);
        let rules = &self.compiled.rules;
        // Only rules with a purpose term or an anchor somewhere can match:
        // usually none or a few, so the others cost nothing. The terms of a
        // software tool's own prompt are not evaluated at all, only listed:
        // a rule found only there is no candidate.
        let mut candidate = vec![false; rules.len()];
        let mut in_tool_prompt = vec![false; rules.len()];
        for (i, found) in scanned.found.iter().enumerate() {
            let listed_only = scanned.tool_prompt && scanned.texts[i].0 == Source::Instructions;
            for f in found {
                if let Role::Anchor(r) | Role::Purpose(r) = f.role {
                    match listed_only {
                        true => in_tool_prompt[r as usize] = true,
                        false => candidate[r as usize] = true,
                    }
                }
            }
        }
        let mut tally = Tally {
            tool_prompt: (0..rules.len()).filter(|&r| in_tool_prompt[r]).collect(),
            ..Tally::default()
        };
        let disclosed = exceptions::disclosure(&scanned);
        let candidates: Vec<usize> = (0..rules.len()).filter(|&r| candidate[r]).collect();
        // What follows reads only a rule's own terms and the terms of no
        // rule, passing over them many times (for each act, its negations;
        // for each framing, the persons near it); a long prompt holds
        // hundreds of other rules' terms, so they are left out first.
        let terms = terms_of(&candidates, &scanned.found, rules.len());
        for (&rule, terms) in candidates.iter().zip(&terms) {
            match &disclosed {
                Some((source, why)) if rules[rule].met_by_disclosure => {
                    tally.set_aside.push(SetAside {
                        rule: rules[rule].id.clone(),
                        source: *source,
                        why: why.clone(),
                    })
                }
                _ => self.match_rule(rule, &scanned, terms, &mut tally),
            }
        }
        // The disclosure meets its rules whether or not one of their terms
        // is in the request: the learned layers, which read no disclosure,
        // do not raise them either ("Du bist eine KI und sagst das zu
        // Beginn", with no customer-service word left to make the rule a
        // candidate; the purpose-term audit, 2026-11-28).
        if let Some((source, why)) = &disclosed {
            for rule in (0..rules.len()).filter(|&r| !candidate[r] && rules[r].met_by_disclosure) {
                tally.set_aside.push(SetAside {
                    rule: rules[rule].id.clone(),
                    source: *source,
                    why: why.clone(),
                });
            }
        }
        // Article 50 without a word of its rules' anchors.
        article50::transparency_hits(&scanned, rules, disclosed.is_some(), &mut tally.hits);
        self.escalate(&scanned, &mut tally);
        let mut c = self.conclude(&scanned, tally);
        if disabled.is_none() {
            // Cross-validation of the rules' terms measures the rules alone.
            // The layer reads neither a tool's own prompt nor a text framed
            // as a use that decides nothing (fiction, research, the Act).
            let skip = exceptions::unread(&scanned);
            self.lexical.raise(&mut c, &scanned.texts, skip);
            let held = || article50::held_back(&scanned, &self.compiled.rules, skip);
            self.ngram
                .raise(&mut c, &scanned.texts, &self.lexical, skip, held);
            let rules = &self.compiled.rules;
            self.ngram.overrule(&mut c, &scanned.texts, skip, |id| {
                rules.iter().any(|r| r.id == id && r.not_overruled)
            });
        }
        (scanned, c)
    }

    /// Normalises and scans the three texts of a request.
    pub(super) fn scan_request(
        &self,
        purpose: Option<&str>,
        deployer_context: Option<&Value>,
        messages: &Value,
        disabled: Option<&[bool]>,
    ) -> Scanned {
        let raw = [
            text::declared_text(purpose, deployer_context),
            text::instructions_text(messages),
            text::user_text(messages),
        ];
        let sources = [Source::Purpose, Source::Instructions, Source::Content];
        let read = |raw: &str| self.read_text(raw, disabled, true);
        let scans = std::array::from_fn::<_, 3, _>(|i| match sources[i] {
            // What a client sends again with every turn; cross-validation
            // (terms disabled) reads afresh.
            Source::Instructions if disabled.is_none() => self.recent.get(&raw[i], read),
            // The declared use is never read for pasted documents.
            Source::Purpose => self.read_text(&raw[i], disabled, false),
            _ => read(&raw[i]),
        });
        let mut stopwords = vec![0; self.compiled.languages.len()];
        for scan in &scans {
            stopwords
                .iter_mut()
                .zip(&scan.stopwords)
                .for_each(|(all, n)| *all += n);
        }
        let [a, b, c] = scans;
        let texts = [
            (sources[0], a.text),
            (sources[1], b.text),
            (sources[2], c.text),
        ];
        let mut found = [a.found, b.found, c.found];
        let normalised = texts.each_ref().map(|(_, t)| t);
        let pasted = documents::set_aside([a.blocks, b.blocks, c.blocks], normalised, &mut found);
        // A software tool's own prompt (a coding agent, an IDE assistant, an
        // SDK template) is written by its vendor about the model's work on
        // code, not about a use on people: what its words match is set
        // aside, and only the end user's turns and the declared purpose
        // count.
        let tool_markers = distinct_tokens(&found[1], |role| role == Role::ToolPrompt);
        Scanned {
            texts,
            found,
            tool_markers,
            tool_prompt: tool_markers >= TOOL_PROMPT_MARKERS,
            stopwords,
            pasted,
        }
    }

    /// Matches one rule in each text and across texts.
    /// `terms`: the rule's terms in each text ([`terms_of`]).
    fn match_rule(&self, rule: usize, s: &Scanned, terms: &[Vec<Found>; 3], tally: &mut Tally) {
        let rules = &self.compiled.rules;
        let meta = &rules[rule];
        let r = rule as u16;
        let object_anywhere = terms.iter().flatten().any(|f| f.role == Role::Object(r));
        let mut conversation_hit = false;
        for ((source, text), found) in s.texts.iter().zip(terms) {
            let source = *source;
            if source == Source::Instructions && s.tool_prompt {
                // A tool's own prompt is no use on people: its terms are
                // not evaluated (the longest text of a coding agent's
                // request, so this is most of its cost), only listed
                // (`run`).
                continue;
            }
            // The user's turn under a coding agent's own prompt.
            let tool_frame = s.tool_prompt && source == Source::Content;
            match self.matches(rule, text, found, source, object_anywhere, tool_frame) {
                Match::Hit(mut evidence) => {
                    let target = match (meta.exception_to, exception(&s.texts, terms, rule)) {
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
                    tally.hits.push((target, source, evidence));
                }
                Match::AnchorOnly if source != Source::Purpose && meta.level >= Level::High => {
                    tally.anchored.push(rule)
                }
                Match::Suppressed(why) => tally.set_aside.push(SetAside {
                    rule: meta.id.clone(),
                    source,
                    why,
                }),
                _ => {}
            }
        }
        if conversation_hit {
            return;
        }
        // Across texts: the deployer's instructions or declared purpose
        // name the domain, the user's turn the act (or the reverse).
        let part = |i: usize| (&s.texts[i].1, terms[i].as_slice(), s.texts[i].0);
        let (purpose, instructions, user) = (part(0), part(1), part(2));
        // Within the instructions too (eleventh round): a deployer's prompt
        // describes one deployment, so the domain named in its opening
        // ("You assist the admissions committee") and the act three
        // sentences on ("give each file a mark and a rank") are one use.
        // One of the two must be in the opening (`across`): two words of
        // unrelated paragraphs of a long prompt are not (twenty-sixth
        // round). Not for an Article 5 practice, which turns on conditions
        // the rules spell out together (a rating *and* its detrimental use).
        let within_instructions = meta.level < Level::Prohibited;
        let across = if s.tool_prompt {
            self.across(rule, purpose, user)
        } else {
            self.across(rule, instructions, user)
                .or_else(|| self.across(rule, purpose, user))
                .or_else(|| self.across(rule, purpose, instructions))
                .or_else(|| {
                    within_instructions
                        .then(|| self.across(rule, instructions, instructions))
                        .flatten()
                })
        };
        if let Some(evidence) = across {
            let target = match (meta.exception_to, exception(&s.texts, terms, rule)) {
                (Some(to), Some(_)) => to,
                _ => rule,
            };
            tally.hits.push((target, Source::Instructions, evidence));
        }
    }

    /// Orders the hits, finds the grey zones and makes the outcome.
    fn conclude(&self, s: &Scanned, tally: Tally) -> Classification {
        let rules = &self.compiled.rules;
        let Tally {
            mut hits,
            mut set_aside,
            mut anchored,
            tool_prompt,
        } = tally;
        let sources = s.texts.each_ref().map(|(source, _)| *source);
        let notes = documents::notes(rules, &tool_prompt, s.tool_markers, &s.pasted, sources);
        set_aside.extend(notes);
        hits.sort_by_key(|&(rule, source, _)| {
            (std::cmp::Reverse(rules[rule].level), source.rank(), rule)
        });
        hits.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        // News written for publication reports on elections, benefits or
        // a hospital's emergency room; it decides nothing about a person
        // there (nineteenth round). Only in the text that asks for the
        // news: a deployer's instructions that run the use stay, as do a
        // declared Annex III purpose and an Article 5 practice.
        if let Some(&(news, in_text, _)) = hits
            .iter()
            .find(|&&(r, source, _)| rules[r].reports_news && source != Source::Purpose)
        {
            hits.retain(|(rule, source, _)| {
                let reported = rules[*rule].level == Level::High && *source == in_text;
                if reported {
                    set_aside.push(SetAside {
                        rule: rules[*rule].id.clone(),
                        source: *source,
                        why: format!(
                            "the request writes news for publication ({}): it reports on the domain, it decides nothing about a person",
                            rules[news].id
                        ),
                    });
                }
                !reported
            });
        }

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
        if !self.known_language(s) {
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
        tool_frame: bool,
    ) -> Match {
        let r = rule as u16;
        if source == Source::Purpose
            && let Some(why) =
                exceptions::ordinary_task(text, found, self.compiled.rules[rule].level)
        {
            return match found
                .iter()
                .any(|f| f.role == Role::Purpose(r) || f.role == Role::Anchor(r))
            {
                true => Match::Suppressed(format!("the declared use: {why}")),
                false => Match::Nothing,
            };
        }
        if source == Source::Purpose
            && (object_anywhere || !self.compiled.rules[rule].has_objects)
            && let Some(f) = found.iter().find(|f| f.role == Role::Purpose(r))
        {
            return Match::Hit(format!("purpose term \"{}\"", text.words(f.token, f.last)));
        }
        let mut anchors = spans(found, |role| role == Role::Anchor(r));
        if anchors.is_empty() {
            return Match::Nothing;
        }
        // The deployer forbids the practice ("Never invent figures", "do
        // not mislead customers"): a negated domain term of the
        // instructions is no domain, for a rule whose domain terms are
        // the practice's own verbs (sixteenth round).
        if source == Source::Instructions && self.compiled.rules[rule].forbidden_when_negated {
            anchors.retain(|a| !is_negated(text, found, *a));
            if anchors.is_empty() {
                return Match::Suppressed(
                    "every domain term is negated in the instructions".into(),
                );
            }
        }
        let (pairs, all_negated) = self.pairs(rule, text, found, &anchors, source);
        if pairs.is_empty() {
            if all_negated {
                return Match::Suppressed("every act is negated".into());
            }
            return Match::AnchorOnly;
        }
        let with_objects = match self.with_objects(rule, text, found, source, &pairs) {
            Ok(with_objects) => with_objects,
            Err(suppressed) => return suppressed,
        };
        if source == Source::Purpose {
            // The deployer states the use: no suppressor applies.
            return Match::Hit(with_objects[0].0.clone());
        }
        let level = self.compiled.rules[rule].level;
        if let Some(why) = exceptions::whole_text(text, found, source, level, tool_frame) {
            return Match::Suppressed(format!("{}, but {why}", with_objects[0].0));
        }
        self.unframed(rule, text, found, &with_objects)
    }

    /// The anchor-act pairs of `rule` near each other, and whether every
    /// act was negated.
    fn pairs(
        &self,
        rule: usize,
        text: &Normalised,
        found: &[Found],
        anchors: &[(u32, u32)],
        source: Source,
    ) -> (Vec<Pair>, bool) {
        let r = rule as u16;
        let meta = &self.compiled.rules[rule];
        let mut acts = if meta.has_acts {
            // A word inside an anchor is not an act: in "credit score" the
            // anchor's own "score" is not the act of scoring. A term that is
            // both an anchor and an act ("licencier", "dismiss") stays an act
            // for the other anchors; it never pairs with itself (below).
            let mut acts = spans(found, |role| role == Role::Act(r));
            acts.retain(|b| !inside_other_anchor(anchors, *b));
            acts
        } else {
            anchors.to_vec()
        };
        // In the user's turn an Annex III or Article 50 domain also pairs
        // with an act of the next sentence ("At the prefecture we have 400
        // overdue residence files. For each, say whether it meets the
        // conditions"); an Article 5 practice stays sentence-local.
        let next_sentence = source == Source::Content && meta.level < Level::Prohibited;
        let before = acts.len();
        acts.retain(|b| !is_negated(text, found, *b));
        let all_negated = before > 0 && acts.is_empty();
        let pairs = anchors
            .iter()
            .flat_map(|&a| acts.iter().map(move |&b| (a, b)))
            .filter(|&(a, b)| !meta.has_acts || !overlaps(a, b))
            .filter(|&(a, b)| near(text, a.0, b.0) || (next_sentence && adjacent(text, a.0, b.0)))
            .collect();
        (pairs, all_negated)
    }

    /// The pairs that have the rule's object and the person it needs near
    /// them, described with their words and anchor and act tokens; or why
    /// none has.
    ///
    /// A rule with its own objects (workers, biometric input, police) needs
    /// one in both texts; `needs_person` only in content, where "kill the
    /// process" must not count as firing someone.
    fn with_objects(
        &self,
        rule: usize,
        text: &Normalised,
        found: &[Found],
        source: Source,
        pairs: &[Pair],
    ) -> Result<Vec<(String, u32, u32)>, Match> {
        let r = rule as u16;
        let meta = &self.compiled.rules[rule];
        let objects = meta
            .has_objects
            .then(|| spans(found, |role| role == Role::Object(r)));
        let persons = (meta.needs_person && source != Source::Purpose)
            .then(|| spans(found, |role| role == Role::Person));
        let with_object = |&(a, b): &Pair| -> Option<String> {
            let mut named = String::new();
            for (required, what) in [(&objects, "object"), (&persons, "person")] {
                if let Some(o) = required {
                    // The context of a use may be told in another turn
                    // (`object_in_text`, in the user's turns only).
                    let anywhere =
                        what == "object" && meta.object_in_text && source == Source::Content;
                    let p = o
                        .iter()
                        .find(|&&p| anywhere || near(text, p.0, a.0) || near(text, p.0, b.0))?;
                    named.push_str(&format!(" and {what} \"{}\"", text.words(p.0, p.1)));
                }
            }
            Some(named)
        };
        let with_objects: Vec<(String, u32, u32)> = pairs
            .iter()
            .filter_map(|pair| {
                with_object(pair)
                    .map(|o| (format!("{}{o}", describe(text, pair)), pair.0.0, pair.1.0))
            })
            .collect();
        if with_objects.is_empty() {
            return Err(Match::Suppressed(format!(
                "{}, but no {} near it",
                describe(text, &pairs[0]),
                match (meta.has_objects, meta.needs_person) {
                    (true, true) => "object of the rule and person",
                    (true, false) => NO_OBJECT,
                    _ => "person",
                }
            )));
        }
        Ok(with_objects)
    }

    /// In the conversation: the first pair that nothing frames as talk
    /// about the topic or aggregate figures, the user's own matter, a company
    /// or a carve-out is a hit; otherwise the match is set aside, with why.
    fn unframed(
        &self,
        rule: usize,
        text: &Normalised,
        found: &[Found],
        with_objects: &[(String, u32, u32)],
    ) -> Match {
        let r = rule as u16;
        let meta = &self.compiled.rules[rule];
        let framing = exceptions::framing(text, found, r, meta.level);
        let sentence = |t: u32| text.sentences[t as usize];
        let mut why = String::new();
        for (evidence, a, b) in with_objects {
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

    /// Whether the texts are recognisably in a pack's language: at least
    /// two words, and one word in six, are stop words of one language.
    /// Short texts count as known.
    fn known_language(&self, s: &Scanned) -> bool {
        let total: usize = s.texts.iter().map(|(_, t)| t.words).sum();
        if total < SHORT_TEXT_WORDS {
            return true;
        }
        let best = s.stopwords.iter().copied().max().unwrap_or(0);
        best >= 2 && best * 6 >= total
    }
}
