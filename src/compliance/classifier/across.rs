//! Matching across texts: a rule whose domain is named in one of a
//! request's texts and whose act is asked in another (the deployer's
//! instructions and the user's turn), or across the sentences of the
//! instructions, from their opening. Split from `matching.rs`, which
//! calls it.

use super::pack::Role;
use super::spans::{Found, inside_other_anchor, is_negated, overlaps, spans};
use super::text::Normalised;
use super::{Classifier, Source, exceptions};

/// A first line of at most this many words is a title ("# Role",
/// "SYSTEM PROMPT"): the role statement is the sentence after it.
const TITLE_WORDS: usize = 3;

/// The last sentence of a deployer's prompt's opening: its role statement
/// ("You are the assistant of the drinking water plant of Eastvale."),
/// after a title line if it has one. Within the instructions, a pair
/// needs its anchor or its act there.
fn opening_end(text: &Normalised) -> u32 {
    let Some(&first) = text.sentences.first() else {
        return 0;
    };
    let title = text.sentences.iter().take_while(|&&s| s == first).count();
    if title > TITLE_WORDS {
        return first;
    }
    text.sentences.get(title).copied().unwrap_or(first)
}

impl Classifier {
    /// A rule matched across the deployer's instructions and the user's
    /// turn (or across the sentences of the instructions, when `a` and `b`
    /// are the same text, with the anchor or the act in its opening
    /// sentence, [`opening_end`]): one names the domain, the other the act ("You operate the
    /// district heating network" + "close valve 4"; "You are the grading
    /// assistant of a school" + "here are the test answers of 9B"). Each
    /// text's own framing, negations and fiction still apply; a person or
    /// object may be in either.
    pub(super) fn across(
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
        // No anchor of the rule in one text with an act of it in the other:
        // nothing can pair, whatever the framings. Most candidate rules of a
        // long prompt stop here, before its framings are read for each.
        let holds = |found: &[Found], role: Role| found.iter().any(|f| f.role == role);
        let (anchor, act) = (Role::Anchor(r), Role::Act(r));
        if !(holds(a.1, anchor) && holds(b.1, act) || holds(b.1, anchor) && holds(a.1, act)) {
            return None;
        }
        // What each text offers: its unframed anchors and unnegated,
        // unframed acts; None when the text is fiction.
        let offer = |(text, found, source): (&Normalised, &[Found], Source)| {
            if exceptions::whole_text(text, found, source, meta.level, false).is_some() {
                return None;
            }
            let framed: Vec<u32> = exceptions::framing(text, found, r, meta.level)
                .into_iter()
                .map(|(t, _)| text.sentences[t as usize])
                .collect();
            let free = |s: &(u32, u32)| !framed.contains(&text.sentences[s.0 as usize]);
            let anchors: Vec<(u32, u32)> = spans(found, |role| role == Role::Anchor(r))
                .into_iter()
                .filter(free)
                .filter(|a| {
                    source != Source::Instructions
                        || !meta.forbidden_when_negated
                        || !is_negated(text, found, *a)
                })
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
        // Within one text an anchor is no act for itself ("credit score"),
        // and one of the two is in the text's opening: "the drinking water
        // plant" of the role statement and "open or shut the inlet valves
        // yourself" two sentences on are one deployment; "colleagues" in
        // its second sentence and "rate how confident you are" in its
        // answer rules are words of two paragraphs.
        let same = std::ptr::eq(a.0, b.0);
        let end = if same { opening_end(a.0) } else { 0 };
        let opening = |span: &(u32, u32)| a.0.sentences[span.0 as usize] <= end;
        let pair = |anchors: &[(u32, u32)],
                    at: (&Normalised, Source),
                    acts: &[(u32, u32)],
                    bt: (&Normalised, Source)| {
            let (x, y) = anchors
                .iter()
                .flat_map(|x| acts.iter().map(move |y| (x, y)))
                .find(|&(x, y)| !same || !overlaps(*x, *y) && (opening(x) || opening(y)))?;
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
}
