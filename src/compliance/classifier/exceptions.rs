//! Framings that set aside every conversation match of a whole text: the
//! exceptions of issue 26 that are not about one sentence. Fiction (a
//! story about a practice is not the practice) unless a working artefact
//! is asked for too, and, in the user's turns, a question about the AI Act
//! itself (whether a use falls under Annex III or Article 5, what to
//! document). Aggregate statistics are a sentence framing, beside `meta`
//! ([`super::matching`]).

use super::Source;
use super::pack::Role;
use super::spans::Found;
use super::text::Normalised;

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
