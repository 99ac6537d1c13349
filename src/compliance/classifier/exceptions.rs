//! Framings that set aside every conversation match of a whole text: the
//! exceptions of issue 26 that are not about one sentence. Fiction (a
//! story about a practice is not the practice) unless a working artefact
//! is asked for too, and, in the user's turns, a question about the AI Act
//! itself (whether a use falls under Annex III or Article 5, what to
//! document). Aggregate statistics are a sentence framing, beside `meta`
//! ([`framing`]); a framing word inside a longer anchor or act of the same
//! rule ("no criminal record" of Article 5(1)(d)) frames nothing.

use super::pack::Role;
use super::spans::{Found, spans};
use super::text::Normalised;
use super::{Level, Source};

/// Why the whole text is set aside for every rule, if it is: fiction
/// without an artefact, or the user asking about the regulation. Used for
/// matches within the text and across texts alike.
pub(super) fn whole_text(text: &Normalised, found: &[Found], source: Source) -> Option<String> {
    let first = |role: Role| found.iter().find(|f| f.role == role);
    if let Some(f) = first(Role::Fiction)
        && first(Role::Artefact).is_none()
    {
        return Some(format!(
            "the request is fiction (\"{}\") without a working artefact",
            text.words(f.token, f.last)
        ));
    }
    // A deployer's instructions that cite the Act ("this system is
    // high-risk under Annex III") still operate the use; only the user's
    // own question about the Act is talk about it.
    if source == Source::Content
        && let Some(f) = first(Role::Regulation)
    {
        return Some(format!(
            "the user asks about the AI Act itself (\"{}\")",
            text.words(f.token, f.last)
        ));
    }
    None
}

/// The spans that frame their sentence for rule `r` of `level`: talk about
/// the topic, aggregate figures, the user's own matter, a company, building
/// software (not for an Article 5 rule) and the rule's carve-outs, except a
/// framing word inside a longer anchor or act of the same rule: "no
/// criminal record" is the absence that Article 5(1)(d) turns on, not the
/// record that excuses it (tenth round), and the Spanish meta "que es un"
/// ("what is a") inside the Article 50(1) anchor "sin decir que es un
/// asistente virtual" asks nothing (eleventh round).
pub(super) fn framing(found: &[Found], r: u16, level: Level) -> Vec<(u32, u32)> {
    let terms = spans(found, |role| {
        role == Role::Act(r) || role == Role::Anchor(r)
    });
    let inside_a_term = |span: (u32, u32)| terms.iter().any(|&t| t != span && holds(t, span));
    found
        .iter()
        .filter(|f| match f.role {
            Role::Meta | Role::Aggregate | Role::SelfUse | Role::LegalPerson => true,
            Role::Building => level < Level::Prohibited,
            Role::Suppressor(s) => s == r,
            _ => false,
        })
        .map(|f| (f.token, f.last))
        .filter(|&span| !inside_a_term(span))
        .collect()
}

/// Whether span `outer` holds all of span `inner`.
fn holds(outer: (u32, u32), inner: (u32, u32)) -> bool {
    outer.0 <= inner.0 && inner.1 <= outer.1
}
