//! Article 50 without a word of its rules' anchors (twentieth and
//! twenty-sixth rounds): a deployment set before the public, a system the
//! user sets up to talk to the public, media asked to pass as real, and
//! text published unread on a topic of public interest. Each names the
//! rules it meets by a flag of the rule table (`public_facing`,
//! `lifelike_media`, `unreviewed_publication`). Split from `matching.rs`
//! and `exceptions.rs`, which call and serve it.

use super::Level;
use super::Source;
use super::exceptions::{deployer_texts, negated, ordinary_task, unread};
use super::matching::Scanned;
use super::pack::{Role, RuleMeta};
use super::spans::Found;
use super::text::Normalised;

/// Whether a suppressor of an Article 50 rule (a fiction, the user's own
/// voice or likeness, detecting or describing fakes, raising awareness)
/// stands in a text the learned layers read: the n-gram layer's `limited`
/// model, which reads the trade and not who it serves, then raises nothing
/// (`Ngram::disclose`; twenty-seventh round). The rules read such a request
/// as a near-miss by the same words.
pub(super) fn held_back(s: &Scanned, rules: &[RuleMeta], skip: [bool; 3]) -> bool {
    let article50 = |role: Role| matches!(role, Role::Suppressor(r) if rules[r as usize].level == Level::Limited);
    s.found
        .iter()
        .zip(skip)
        .any(|(found, skip)| !skip && found.iter().any(|f| article50(f.role)))
}

/// Adds the hits of the rules these mechanisms meet, each once, unless the
/// rule already hit. A deployment before the public meets no rule a
/// disclosure meets when the deployment discloses that it is an AI
/// (`disclosed`; such rules were set aside already).
pub(super) fn transparency_hits(
    s: &Scanned,
    rules: &[RuleMeta],
    disclosed: bool,
    hits: &mut Vec<(usize, Source, String)>,
) {
    let hit = |hits: &[(usize, Source, String)], rule: usize| hits.iter().any(|h| h.0 == rule);
    // A deployment set before the public (twentieth round): Article 50(1)
    // without one of its words.
    if let Some((source, evidence)) = public_facing(s) {
        let met = |rule: usize| disclosed && rules[rule].met_by_disclosure;
        for rule in (0..rules.len()).filter(|&r| rules[r].public_facing && !met(r)) {
            if !hit(hits, rule) {
                hits.push((rule, source, evidence.clone()));
            }
        }
    }
    // Media asked to pass as real: Article 50(4).
    let suppresses = |role| matches!(role, Role::Suppressor(r) if rules[r as usize].lifelike_media);
    if let Some((source, evidence)) = passing_as_real(s, suppresses) {
        for rule in (0..rules.len()).filter(|&r| rules[r].lifelike_media) {
            if !hit(hits, rule) {
                hits.push((rule, source, evidence.clone()));
            }
        }
    }
    // Text published unread on one of the rule's topics: Article 50(4).
    for rule in (0..rules.len()).filter(|&r| rules[r].unreviewed_publication) {
        let topic = |role| role == Role::Act(rule as u16);
        if !hit(hits, rule)
            && let Some((source, evidence)) = unreviewed_publication(s, topic)
        {
            hits.push((rule, source, evidence));
        }
    }
}

/// Whether the deployer sets the model before the public: in the declared
/// use or the deployer's instructions (not a tool's own prompt), the model
/// addressed as a deployment's assistant or told to answer people
/// (`public_role`), members of the public (`audience`: customers, callers,
/// citizens, anyone) and a public channel (`channel`: the website, the
/// app, the phone line) in the same text. Actor, target and context: a
/// deployment that talks to the public directly, which Article 50(1) asks
/// to say it is an AI (twentieth round). Not when the text is an ordinary
/// task on texts (tickets routed, reviews moderated, a reply drafted for a
/// person to send): there the model talks to no one.
fn public_facing(s: &Scanned) -> Option<(Source, String)> {
    deployer_texts(s)
        .find_map(|((source, text), found)| {
            let first = |role: Role| found.iter().find(|f| f.role == role);
            // An audience named to be excluded is none: "used only by
            // staff, not by customers", "je praat nooit rechtstreeks met
            // klanten" (an internal tool, which Article 50(1) does not
            // reach; twenty-fifth round).
            let audience = found
                .iter()
                .find(|f| f.role == Role::Audience && !negated(text, found, f, 4));
            // The deployment addressed ("you answer...") or named as a
            // conversational system ("l'assistente digitale di...").
            let role = first(Role::Addressed).or_else(|| first(Role::Bot));
            let (role, audience, channel) = (role?, audience?, first(Role::Channel)?);
            facing(text, found, *source, &[role, audience, channel])
        })
        .or_else(|| bot_for_the_public(s))
}

/// A conversational system for the public that the user's turns set up:
/// a `bot` term ("a voicebot", "un agent vocal", "einen Sprachbot") with
/// what it does with people (`talk`: answers, takes calls) and an
/// audience in its sentence ("that answers patients' calls"), not
/// negated: a system that talks to the public is what the Article names,
/// whatever its channel.
/// Article 50(1) binds the provider who designs such a system as much as
/// the deployer who runs it (twenty-sixth round). Not in talk about the
/// topic ("explain what a voicebot is"), a text framed as fiction,
/// research or the Act, an ordinary task on texts, nor under a coding
/// agent's prompt or with software built (building suppresses limited
/// rules, step 7).
fn bot_for_the_public(s: &Scanned) -> Option<(Source, String)> {
    let i = s
        .texts
        .iter()
        .position(|(source, _)| *source == Source::Content)?;
    let ((source, text), found) = (&s.texts[i], &s.found[i]);
    if s.tool_prompt || unread(s)[i] || found.iter().any(|f| f.role == Role::Building) {
        return None;
    }
    let sentence = |f: &Found| text.sentences[f.token as usize];
    let (bot, audience) = found
        .iter()
        .filter(|b| b.role == Role::Bot && !negated(text, found, b, 3))
        .find_map(|b| {
            let framed = found
                .iter()
                .any(|f| f.role == Role::Meta && sentence(f) == sentence(b));
            let talks = found
                .iter()
                .any(|f| f.role == Role::Talk && sentence(f) == sentence(b));
            let audience = found.iter().find(|a| {
                a.role == Role::Audience
                    && sentence(a) == sentence(b)
                    && !negated(text, found, a, 4)
            });
            (talks && !framed)
                .then_some(audience)
                .flatten()
                .map(|a| (b, a))
        })?;
    facing(text, found, *source, &[bot, audience])
}

/// Media asked to pass as real: a `passing` term ("so it looks totally
/// real", "so als hätte es ein Passant geschossen", "jakby z telefonu
/// świadka") and a `media` term (a photo, a video, a voice) in one
/// sentence, neither negated, the sentence not framed as talk about the
/// topic nor holding a suppressor of the rule (`suppresses`: "detect",
/// "how to spot", "cartoon"), in any text but a tool's own prompt or a
/// text framed as fiction, research or the Act. Content that would falsely appear authentic is
/// what Article 50(4) names a deep fake, whoever or whatever it shows
/// (twenty-sixth round).
fn passing_as_real(s: &Scanned, suppresses: impl Fn(Role) -> bool) -> Option<(Source, String)> {
    read_texts(s).find_map(|(source, text, found)| {
        let sentence = |f: &Found| text.sentences[f.token as usize];
        let free = |f: &&Found| !negated(text, found, f, 3);
        let passing = found
            .iter()
            .filter(|f| f.role == Role::Passing)
            .filter(free)
            .find(|p| {
                !found.iter().any(|f| {
                    (f.role == Role::Meta || suppresses(f.role)) && sentence(f) == sentence(p)
                })
            })?;
        let media = found
            .iter()
            .filter(|f| f.role == Role::Media && sentence(f) == sentence(passing))
            .find(free)?;
        Some((
            source,
            format!(
                "media asked to pass as real: \"{}\", \"{}\"",
                text.words(media.token, media.last),
                text.words(passing.token, passing.last)
            ),
        ))
    })
}

/// The texts the rules read as a use: all but a tool's own prompt and a
/// text framed as fiction, research or the Act.
fn read_texts(s: &Scanned) -> impl Iterator<Item = (Source, &Normalised, &[Found])> {
    let skip = unread(s);
    s.texts
        .iter()
        .zip(&s.found)
        .zip(skip)
        .filter(|(_, skip)| !skip)
        .map(|(((source, text), found), _)| (*source, text, found.as_slice()))
}

/// Text to be published with no one reading it first: a `nobody` term
/// and a `review` term at most four words after it ("nobody on our side
/// reads it", "sin que nadie lo revise", "bez tego, że ktoś z urzędu to
/// czyta"), a `publish` term (the website, a newsletter, "goes live") and
/// a topic of the rule (`topic`: one of its acts, an election, a strike, a
/// water outage) in the same text, not framed as talk about the topic
/// nor fiction, research or the Act. Article 50(4)'s text published to
/// inform the public, whose duty falls away only under human review or
/// editorial responsibility (twenty-sixth round).
fn unreviewed_publication(s: &Scanned, topic: impl Fn(Role) -> bool) -> Option<(Source, String)> {
    read_texts(s).find_map(|(source, text, found)| {
        let sentence = |f: &Found| text.sentences[f.token as usize];
        let (nobody, review) = found
            .iter()
            .filter(|n| n.role == Role::Nobody)
            .find_map(|n| {
                let framed = found
                    .iter()
                    .any(|f| f.role == Role::Meta && sentence(f) == sentence(n));
                let review = found.iter().find(|r| {
                    r.role == Role::Review
                        && r.token > n.last
                        && r.token - n.last <= 4
                        && sentence(r) == sentence(n)
                });
                (!framed).then_some(review).flatten().map(|r| (n, r))
            })?;
        let publish = found.iter().find(|f| f.role == Role::Publish)?;
        // The topic is a word of its own, not the publishing or the
        // no-review words (the rule's acts hold "goes live without").
        let apart = |f: &Found, g: &Found| f.last < g.token || g.last < f.token;
        let topic = found.iter().find(|f| {
            topic(f.role)
                && [nobody, review, publish].iter().all(|g| apart(f, g))
                && !found
                    .iter()
                    .any(|g| g.role == Role::Publish && !apart(f, g))
        })?;
        let quote = |f: &Found| text.words(f.token, f.last);
        Some((
            source,
            format!(
                "text published unread: \"{} ... {}\", \"{}\", on \"{}\"",
                quote(nobody),
                quote(review),
                quote(publish),
                quote(topic)
            ),
        ))
    })
}

/// The evidence of a deployment before the public (its role or system,
/// its audience, its channel when one is needed), unless the text is an
/// ordinary task on texts.
fn facing(
    text: &Normalised,
    found: &[Found],
    source: Source,
    terms: &[&Found],
) -> Option<(Source, String)> {
    if ordinary_task(text, found, Level::Limited).is_some() {
        return None;
    }
    let quoted: Vec<String> = terms
        .iter()
        .map(|f| format!("\"{}\"", text.words(f.token, f.last)))
        .collect();
    Some((
        source,
        format!("the deployment talks to the public: {}", quoted.join(", ")),
    ))
}
