//! Framings that set aside every conversation match of a whole text: the
//! exceptions of issue 26 that are not about one sentence, uses of a
//! practice's words that decide nothing about a person. Fiction (a story
//! about a practice is not the practice) unless a working artefact is
//! asked for too, and, in the user's turns, a question about the AI Act
//! itself (whether a use falls under Annex III or Article 5, what to
//! document), research or teaching that names no concrete people, and
//! administration after a decision already taken (thirteenth round), and
//! the user's own work assessed at their request (fourteenth round). Also
//! what the learned layers leave unread, and a deployment's disclosure
//! that it is an AI, which meets Article 50(1).
//! Aggregate statistics are a sentence framing, beside `meta`
//! ([`framing`]); a framing word inside a longer anchor or act of the same
//! rule ("no criminal record" of Article 5(1)(d)) frames nothing.

use super::matching::Scanned;
use super::pack::Role;
use super::spans::{Found, spans};
use super::text::Normalised;
use super::{Level, Source};

/// Why the whole text is set aside for a rule of `level`, if it is: a use
/// that decides nothing about a person. Fiction without an artefact; and,
/// in the user's turns, a question about the regulation, research or
/// teaching that points at no concrete people ("what it actually covers"
/// is no artefact there), and (not for an Article 5 practice)
/// administration after a decision already taken. Used for
/// matches within the text and across texts alike, and by the lexical
/// layer, which does not read a text set aside for any rule.
///
/// `tool_frame`: the user's turn is framed by a tool's own prompt (a coding
/// agent's or an IDE assistant's), where one `building` term makes a
/// coding task (nineteenth round).
pub(super) fn whole_text(
    text: &Normalised,
    found: &[Found],
    source: Source,
    level: Level,
    tool_frame: bool,
) -> Option<String> {
    whole_text_with(text, found, source, level)
        .or_else(|| coding_task(found, level, tool_frame).map(|f| describe_coding(text, f)))
        .or_else(|| no_real_people(text, found, source, level))
}

/// Made-up people or no real data in the user's turns ("fictitious
/// applicants", "keine echten Kundendaten", "nessun cliente vero"): the
/// work decides nothing about a real person (twentieth round), unless
/// concrete people are pointed at. Not an Article 5 practice, whose system
/// is banned whatever data it is built or shown on; and, like a coding
/// task, the learned layers still read such a text.
fn no_real_people(
    text: &Normalised,
    found: &[Found],
    source: Source,
    level: Level,
) -> Option<String> {
    if source != Source::Content || level >= Level::Prohibited || concrete_people(found) {
        return None;
    }
    let f = found.iter().find(|f| f.role == Role::NoRealPeople)?;
    Some(format!(
        "the request names no real person (\"{}\")",
        text.words(f.token, f.last)
    ))
}

/// [`whole_text`] without the coding task: what the learned layers leave
/// unread. A coding task still feeds them, so a banned system asked of a
/// coding agent (TAXONOMY rule 4: prohibited) can still be raised.
fn whole_text_with(
    text: &Normalised,
    found: &[Found],
    source: Source,
    level: Level,
) -> Option<String> {
    let first = |role: Role| found.iter().find(|f| f.role == role);
    let quote = |f: &Found| text.words(f.token, f.last);
    // A result meant to pass as real (`passing`: "as if she had been
    // there", "so it looks like a phone photo") is no fiction, whatever
    // word of a story the text holds ("spin the narrative"; nineteenth
    // round).
    if let Some(f) = first(Role::Fiction)
        && first(Role::Artefact).is_none()
        && first(Role::Passing).is_none()
    {
        return Some(format!(
            "the request is fiction (\"{}\") without a working artefact",
            quote(f)
        ));
    }
    if let Some(why) = ordinary_task(text, found, level) {
        return Some(why);
    }
    // A deployer's instructions that cite the Act ("this system is
    // high-risk under Annex III") or a study still operate the use; only
    // the user's own framing is talk about it.
    if source != Source::Content {
        return None;
    }
    if let Some(f) = first(Role::Regulation) {
        return Some(format!(
            "the user asks about the AI Act itself (\"{}\")",
            quote(f)
        ));
    }
    if let Some(f) = first(Role::Research)
        && !concrete_people(found)
    {
        return Some(format!(
            "the user studies the practice (\"{}\") and names no concrete people",
            quote(f)
        ));
    }
    if level < Level::Prohibited
        && let Some(f) = first(Role::OwnWork)
        && !concrete_people(found)
    {
        return Some(format!(
            "the user asks about their own work (\"{}\"), not about other people",
            quote(f)
        ));
    }
    if level < Level::Prohibited
        && let Some(f) = first(Role::Decided)
    {
        return Some(format!(
            "the decision is already taken (\"{}\"): what follows decides nothing",
            quote(f)
        ));
    }
    None
}

/// An ordinary task on texts in any of the three texts, for an Annex III
/// or Article 50 rule (sixteenth round): moderating reviews or comments
/// (the text is judged, not its author), software text about a library
/// (release notes, a changelog: code, not a use), and writing an ordinary
/// text for people (a job advert, a notice to families, a meeting
/// summary, a reply to a customer), unless the text also targets people
/// ("show the advert only to under-30s"), points at concrete people
/// ("reply to these applicants") or names a person outside the writing
/// task's sentences (a later turn that scores the candidates). An Article 5 practice is never set
/// aside this way. In the declared use too: "Changelog of a face
/// recognition library" declares software text, not a use.
pub(super) fn ordinary_task(text: &Normalised, found: &[Found], level: Level) -> Option<String> {
    if level >= Level::Prohibited {
        return None;
    }
    let first = |role: Role| found.iter().find(|f| f.role == role);
    let quote = |f: &Found| text.words(f.token, f.last);
    if let Some(f) = first(Role::Moderation) {
        return Some(format!(
            "the texts are moderated (\"{}\"): the text is judged, not a person",
            quote(f)
        ));
    }
    if let Some(f) = first(Role::SoftwareText) {
        return Some(format!(
            "the text is about software (\"{}\"), not a use on people",
            quote(f)
        ));
    }
    // The text is the writing task only when no person is named outside
    // its sentences: "write a job ad... now score each candidate" asks
    // for more in the next turn.
    let sentence = |f: &Found| text.sentences[f.token as usize];
    let f = first(Role::Drafting)?;
    let drafted: Vec<_> = found
        .iter()
        .filter(|f| f.role == Role::Drafting)
        .map(sentence)
        .collect();
    if first(Role::Targeting).is_none()
        && !concrete_people(found)
        && !found
            .iter()
            .any(|p| p.role == Role::Person && !drafted.contains(&sentence(p)))
    {
        return Some(format!(
            "the user has an ordinary text written (\"{}\"), which decides nothing about a person",
            quote(f)
        ));
    }
    None
}

/// A coding task in one text, for an Annex III or Article 50 rule: two
/// `building` terms apart ("implement", "unit tests", "refactor"; not two
/// packs' stems of one word),
/// and no concrete people pointed at ("run it on these applicants"). It
/// builds the system, and TAXONOMY labelling rule 4 makes building an
/// Annex III or Article 50 system minimal, its runtime calls being
/// classified on their own (eighteenth round). Building a banned system
/// stays prohibited: an Article 5 rule is never set aside this way.
/// Framed by a coding agent's or an IDE assistant's own prompt
/// (`tool_frame`), the user's turn needs one `building` term: the frame
/// already says that the work is on code ("Build the component and its
/// story", "the upload handler fails on CI"; nineteenth round).
fn coding_task(found: &[Found], level: Level, tool_frame: bool) -> Option<&Found> {
    if level >= Level::Prohibited {
        return None;
    }
    let mut building = found.iter().filter(|f| f.role == Role::Building);
    let f = building.next()?;
    ((tool_frame || building.any(|g| g.token > f.last)) && !concrete_people(found)).then_some(f)
}

/// The end of the reason a match is set aside for building software:
/// the one framing the n-gram layer never reads past ([`super::ngram`]).
pub(super) const BUILDING: &str = "building a system is not using it on people";

fn describe_coding(text: &Normalised, f: &Found) -> String {
    format!(
        "the user has software built (\"{}\"): {BUILDING}",
        text.words(f.token, f.last)
    )
}

/// The texts the learned layers do not read: a tool's own prompt, and a
/// text framed as a use that decides nothing (fiction, research, the Act,
/// one's own work).
pub(super) fn unread(s: &Scanned) -> [bool; 3] {
    std::array::from_fn(|i| {
        let (source, text) = &s.texts[i];
        (s.tool_prompt && *source == Source::Instructions)
            || whole_text_with(text, &s.found[i], *source, Level::High).is_some()
    })
}

/// The texts a deployer wrote, with their terms: the declared use and the
/// instructions, unless these are a software tool's own prompt.
pub(super) fn deployer_texts(
    s: &Scanned,
) -> impl Iterator<Item = (&(Source, Normalised), &Vec<Found>)> {
    s.texts
        .iter()
        .zip(&s.found)
        .filter(|((source, _), _)| match source {
            Source::Purpose => true,
            Source::Instructions => !s.tool_prompt,
            Source::Content => false,
        })
}

/// Whether the deployment tells people they talk to an AI: a `disclosed`
/// term, not negated ("never say that you are an AI" hides it), in the
/// declared use or the deployer's instructions (not a tool's own prompt,
/// not the user's turns). Article 50(1) asks for that disclosure, so an
/// assistant that makes it is not what the rule flags (fourteenth round).
pub(super) fn disclosure(s: &Scanned) -> Option<(Source, String)> {
    deployer_texts(s).find_map(|((source, text), found)| {
        let f = found
            .iter()
            .find(|f| f.role == Role::Disclosed && !hidden(text, found, f))?;
        Some((
            *source,
            format!(
                "the deployment says it is an AI (\"{}\"): the disclosure Article 50(1) asks for",
                text.words(f.token, f.last)
            ),
        ))
    })
}

/// Whether a disclosure is negated: a negation word of any pack at most
/// three words before it, in its sentence ("never say that you are an
/// AI", "sag niemals, dass du eine KI bist", "nunca digas que eres una
/// IA"). Any language's, unlike an act's negation: a hidden AI read as a
/// disclosed one would lower a result.
fn hidden(text: &Normalised, found: &[Found], d: &Found) -> bool {
    negated(text, found, d, 3)
}

/// Whether a negation word of any pack stands at most `within` words
/// before `d`, in its sentence.
pub(super) fn negated(text: &Normalised, found: &[Found], d: &Found, within: u32) -> bool {
    found.iter().any(|f| {
        matches!(f.role, Role::Negation(_) | Role::NegationAfter(_))
            && f.last < d.token
            && d.token - f.last <= within
            && text.sentences[f.last as usize] == text.sentences[d.token as usize]
    })
}

/// The terms found, without the persons, anchors, acts and objects inside
/// a machine's name: the "agent" of "build agent", the "worker" of
/// "worker node", the "candidate" of "release candidate" name no one, and
/// the "monitor" of "a laptop and one monitor" watches no one, so they are
/// no worker management (fourteenth round). The same
/// term elsewhere in the text is the same machine ("our Celery workers...
/// restart any worker that hangs").
pub(super) fn without_machines(mut found: Vec<Found>) -> Vec<Found> {
    // The English "there's a" normalised is "there s a": its "s a" is no
    // S.A. (seventeenth round), and "I'm" is "i m", whose "m" is no
    // Monsieur (twentieth round).
    let clitics = spans(&found, |role| role == Role::Clitic);
    if !clitics.is_empty() {
        found.retain(|f| {
            !matches!(f.role, Role::LegalPerson | Role::Person)
                || !clitics.iter().any(|&c| holds(c, (f.token, f.last)))
        });
    }
    let machines = spans(&found, |role| role == Role::Machine);
    if machines.is_empty() {
        return found;
    }
    let named = |f: &Found| {
        matches!(
            f.role,
            Role::Person | Role::Anchor(_) | Role::Act(_) | Role::Object(_)
        )
    };
    let inside: Vec<u32> = found
        .iter()
        .filter(|f| named(f) && machines.iter().any(|&m| holds(m, (f.token, f.last))))
        .map(|f| f.pattern)
        .collect();
    found.retain(|f| !named(f) || !inside.contains(&f.pattern));
    found
}

/// Whether the text points at concrete people: a `reference` word
/// ("these", "the attached", "our") with a person at most four words on
/// ("these 50 named applicants", "estos 50 currículums de candidatos").
fn concrete_people(found: &[Found]) -> bool {
    found.iter().filter(|f| f.role == Role::Reference).any(|r| {
        found
            .iter()
            .any(|p| p.role == Role::Person && p.token > r.last && p.token <= r.last + 4)
    })
}

/// The spans that frame their sentence for rule `r` of `level`: talk about
/// the topic, aggregate figures, the user's own matter, a company (unless
/// people were named just before it), building software (not for an
/// Article 5 rule) and the rule's carve-outs, except a
/// framing word inside a longer anchor or act of the same rule: "no
/// criminal record" is the absence that Article 5(1)(d) turns on, not the
/// record that excuses it (tenth round), and the Spanish meta "que es un"
/// ("what is a") inside the Article 50(1) anchor "sin decir que es un
/// asistente virtual" asks nothing (eleventh round). Nor is `meta` talk
/// about the topic in a sentence that wants the result to pass as real
/// (`passing`: "explain how we get his face and voice so it looks
/// real" asks for a deep fake; eighteenth round), nor, below Article 5,
/// in a request that counts the people or files it works on ("summarise
/// the 40 applications and say whom we reject": [`counted_batch`];
/// twenty-fourth round).
pub(super) fn framing(text: &Normalised, found: &[Found], r: u16, level: Level) -> Vec<(u32, u32)> {
    let terms = spans(found, |role| {
        role == Role::Act(r) || role == Role::Anchor(r)
    });
    let inside_a_term = |span: (u32, u32)| terms.iter().any(|&t| t != span && holds(t, span));
    // A company named right after people says where the people are ("the
    // 12 suspects behind these companies", "the staff of these SMEs"): the
    // natural persons are still the target (thirteenth round).
    let people_of = |f: &Found| {
        found
            .iter()
            .any(|p| p.role == Role::Person && p.last < f.token && p.last + 4 >= f.token)
    };
    // Only where the wanted outcome is an act of this rule (the deep
    // fake's): elsewhere "a credible CV" leaves "explain" its framing.
    let passing: Vec<u32> = found
        .iter()
        .filter(|f| {
            f.role == Role::Passing
                && found
                    .iter()
                    .any(|a| a.role == Role::Act(r) && (a.token, a.last) == (f.token, f.last))
        })
        .map(|f| text.sentences[f.token as usize])
        .collect();
    // Talk about the topic is no framing of a request that works on a
    // counted batch of the rule's people or files ("die 143 Bewerbungen",
    // "all 640 CVs", "the 412 debtors"): "explain", "summarise" or "with
    // template B" there are steps of the work (twenty-fourth round).
    let counted = level < Level::Prohibited && counted_batch(text, found, r);
    found
        .iter()
        .filter(|f| match f.role {
            Role::Meta => !counted && !passing.contains(&text.sentences[f.token as usize]),
            Role::Aggregate | Role::SelfUse => true,
            Role::LegalPerson => !people_of(f),
            Role::Building => level < Level::Prohibited,
            Role::Suppressor(s) => s == r,
            _ => false,
        })
        .map(|f| (f.token, f.last))
        .filter(|&span| !inside_a_term(span))
        .collect()
}

/// Whether the text counts the people or files a rule works on: a number
/// of at least two right before a person or the rule's anchor or object,
/// or one word before it ("143 Bewerbungen", "640 cv s", "the 412 overdue
/// debtors"). Not a year, nor a time, an age or a date (a pack's
/// `time_unit` right after it: "19 year old", "30 jours", "15 de mayo"),
/// nor a number inside talk about the Act ("article 5 on facial
/// recognition"). A request about the topic seldom counts the people it
/// is about; one that works on them does.
fn counted_batch(text: &Normalised, found: &[Found], r: u16) -> bool {
    let cited = spans(found, |role| matches!(role, Role::Meta | Role::Regulation));
    let counted = |token: u32| {
        let word = text.words(token, token);
        word.len() <= 6
            && word.bytes().all(|b| b.is_ascii_digit())
            && word
                .parse::<u32>()
                .is_ok_and(|n| n >= 2 && !(1900..=2100).contains(&n))
            && !found
                .iter()
                .any(|u| u.role == Role::TimeUnit && u.token == token + 1)
            && !cited.iter().any(|&c| holds(c, (token, token)))
    };
    found.iter().any(|f| {
        let ours = match f.role {
            Role::Person => true,
            Role::Anchor(a) | Role::Object(a) => a == r,
            _ => false,
        };
        ours && (1..=2).any(|back| f.token >= back && counted(f.token - back))
    })
}

/// Whether span `outer` holds all of span `inner`.
fn holds(outer: (u32, u32), inner: (u32, u32)) -> bool {
    outer.0 <= inner.0 && inner.1 <= outer.1
}
