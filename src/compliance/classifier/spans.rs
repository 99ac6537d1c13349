//! Token spans of the terms found in a text, and the tests on them that
//! matching uses: nearness, overlap, negation.

use super::WINDOW;
use super::pack::Role;
use super::text::Normalised;

/// A term found in a text: its role, its pattern (the term) and its first
/// and last token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Found {
    pub role: Role,
    pub pattern: u32,
    pub token: u32,
    pub last: u32,
}

/// An anchor span with an act span.
pub(super) type Pair = ((u32, u32), (u32, u32));

/// Whether two tokens are in one sentence or within [`WINDOW`] tokens.
pub(super) fn near(text: &Normalised, a: u32, b: u32) -> bool {
    text.sentences[a as usize] == text.sentences[b as usize] || (a.abs_diff(b) as usize) <= WINDOW
}

/// Whether two tokens are in neighbouring sentences.
pub(super) fn adjacent(text: &Normalised, a: u32, b: u32) -> bool {
    text.sentences[a as usize].abs_diff(text.sentences[b as usize]) == 1
}

/// A pair in words: one term, or an anchor with its act.
pub(super) fn describe(text: &Normalised, &(a, b): &Pair) -> String {
    if a == b {
        format!("term \"{}\"", text.words(a.0, a.1))
    } else {
        format!(
            "anchor \"{}\" with act \"{}\"",
            text.words(a.0, a.1),
            text.words(b.0, b.1)
        )
    }
}

/// Whether two token spans share a token.
pub(super) fn overlaps(a: (u32, u32), b: (u32, u32)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

/// Whether an act's span overlaps an anchor other than the same words: the
/// "score" of the anchor "credit score" is not an act, but a term listed as
/// both ("dismiss") is an act for the other anchors.
pub(super) fn inside_other_anchor(anchors: &[(u32, u32)], act: (u32, u32)) -> bool {
    !anchors.contains(&act) && anchors.iter().any(|&a| overlaps(a, act))
}

/// Whether an act is negated: "do not rank them", "ne les classe pas",
/// "bewerte sie nicht". A negation comes at most two words before the act,
/// or (German, Dutch and French word order) right after it. An act that
/// holds a negation itself ("never cancel", "pas renouvel", "not be
/// renewed") is not negated at all: it names a negative decision. A negation word counts
/// only in a text of its pack's language, or one whose language is unclear
/// (`text.language` is None): the Spanish "no" is the Portuguese "in the".
pub(super) fn is_negated(text: &Normalised, found: &[Found], act: (u32, u32)) -> bool {
    let same_sentence = |a: u32, b: u32| text.sentences[a as usize] == text.sentences[b as usize];
    let ours = |lang: u8| text.language.is_none_or(|l| l == lang);
    let negation =
        |role: Role| matches!(role, Role::Negation(l) | Role::NegationAfter(l) if ours(l));
    // An act written with its negation ("pas renouvel", "not be renewed",
    // "no renov") is a negative decision, itself the act: not negated.
    if found
        .iter()
        .any(|f| negation(f.role) && f.token >= act.0 && f.last <= act.1)
    {
        return false;
    }
    let before = |start: u32| {
        found.iter().any(|f| {
            matches!(f.role, Role::Negation(l) if ours(l))
                && f.last < start
                && start - f.last <= 2
                && same_sentence(f.last, start)
        })
    };
    let after = found.iter().any(|f| {
        matches!(f.role, Role::NegationAfter(l) if ours(l))
            && f.token == act.1 + 1
            && same_sentence(f.token, act.1)
    });
    if after || before(act.0) {
        return true;
    }
    // Acts joined by "or", "and", "ni" share a negation: "do not mark or
    // grade", "do not rank, score or reject". Only an act of the rule
    // right before the joining word passes it on, so "do not call him
    // and reject the file" still rejects.
    let mut start = act.0;
    for _ in 0..3 {
        let joined = found.iter().any(|f| {
            matches!(f.role, Role::Coordination(l) if ours(l))
                && f.last + 1 == start
                && same_sentence(f.token, start)
        });
        let Some(previous) = found
            .iter()
            .find(|f| matches!(f.role, Role::Act(_)) && joined && f.last + 2 == start)
        else {
            return false;
        };
        if before(previous.token) {
            return true;
        }
        start = previous.token;
    }
    false
}

/// The language of a text: the pack with strictly the most stop words in
/// it, or None (no stop word, or a tie such as a short Spanish or
/// Portuguese sentence).
pub(super) fn dominant_language(stopwords: &[usize]) -> Option<u8> {
    let best = stopwords.iter().copied().max().filter(|&n| n > 0)?;
    let mut at = stopwords.iter().enumerate().filter(|&(_, &n)| n == best);
    match (at.next(), at.next()) {
        (Some((lang, _)), None) => u8::try_from(lang).ok(),
        _ => None,
    }
}

/// The number of distinct tokens where a role was found.
pub(super) fn distinct_tokens(found: &[Found], want: impl Fn(Role) -> bool) -> usize {
    let mut t: Vec<u32> = tokens(found, want);
    t.sort_unstable();
    t.dedup();
    t.len()
}

pub(super) fn tokens(found: &[Found], want: impl Fn(Role) -> bool) -> Vec<u32> {
    found
        .iter()
        .filter(|f| want(f.role))
        .map(|f| f.token)
        .collect()
}

pub(super) fn spans(found: &[Found], want: impl Fn(Role) -> bool) -> Vec<(u32, u32)> {
    found
        .iter()
        .filter(|f| want(f.role))
        .map(|f| (f.token, f.last))
        .collect()
}

/// The terms each rule of `rules` reads, per text: its own and those of no
/// rule (persons, negations, framings), in the order found; in one pass
/// over the terms, however many rules.
pub(super) fn terms_of(
    rules: &[usize],
    found: &[Vec<Found>; 3],
    count: usize,
) -> Vec<[Vec<Found>; 3]> {
    let mut bucket = vec![usize::MAX; count];
    for (k, &rule) in rules.iter().enumerate() {
        bucket[rule] = k;
    }
    // Counted first, so each list is allocated once at its size.
    let mut sizes = vec![[0; 3]; rules.len()];
    for (i, found) in found.iter().enumerate() {
        for f in found {
            match f.role.rule() {
                None => sizes.iter_mut().for_each(|n| n[i] += 1),
                Some(r) => {
                    if let Some(n) = sizes.get_mut(bucket[r as usize]) {
                        n[i] += 1;
                    }
                }
            }
        }
    }
    let mut terms: Vec<[Vec<Found>; 3]> = sizes.iter().map(|n| n.map(Vec::with_capacity)).collect();
    for (i, found) in found.iter().enumerate() {
        for f in found {
            match f.role.rule() {
                None => terms.iter_mut().for_each(|t| t[i].push(*f)),
                Some(r) => {
                    if let Some(t) = terms.get_mut(bucket[r as usize]) {
                        t[i].push(*f);
                    }
                }
            }
        }
    }
    terms
}
