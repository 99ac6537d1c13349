//! The framing table of a rule pack: the terms that apply to every rule
//! (talk about the topic, fiction, negations, the public, a tool's own
//! prompt...). Split from `pack.rs`, which compiles them.

use serde::Deserialize;

/// Terms that apply to every rule.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFraming {
    /// Talk about a topic rather than a use: explain, what is, is it legal.
    #[serde(default)]
    pub(super) meta: Vec<String>,
    /// Aggregate, anonymised or published figures: no natural person is
    /// assessed ("anonymised", "national rates", "official statistics").
    /// Frames its sentence, like `meta`.
    #[serde(default)]
    pub(super) aggregate: Vec<String>,
    /// Questions about the AI Act itself ("falls under Annex III", "what
    /// should we document"): in the user's turns, the whole text is talk
    /// about the law, not a use.
    #[serde(default)]
    pub(super) regulation: Vec<String>,
    /// Fiction: story, novel, poem.
    #[serde(default)]
    pub(super) fiction: Vec<String>,
    /// A functional artefact that makes fiction count: code, real people.
    #[serde(default)]
    pub(super) artefact: Vec<String>,
    /// Research, a literature review or teaching ("literature review",
    /// "my thesis", "for a seminar"): in the user's turns, the whole text
    /// studies a practice rather than applies it, unless it also points at
    /// concrete people (`reference` before a person).
    #[serde(default)]
    pub(super) research: Vec<String>,
    /// Administration after a decision already taken ("already been
    /// selected", "the decision has been made"): in the user's turns, no
    /// Annex III or Article 50 rule applies (the act decides nothing);
    /// never for an Article 5 practice.
    #[serde(default)]
    pub(super) decided: Vec<String>,
    /// The user's own work assessed at their request ("my essay draft",
    /// "meinen Aufsatz"): in the user's turns, no Annex III or Article 50
    /// rule applies unless concrete people are pointed at.
    #[serde(default)]
    pub(super) own_work: Vec<String>,
    /// Made-up people or no real data ("fictitious applicants", "synthetic
    /// data only", "nessun cliente vero"): in the user's turns, no Annex
    /// III or Article 50 rule applies unless concrete people are pointed
    /// at (twentieth round).
    #[serde(default)]
    pub(super) no_real_people: Vec<String>,
    /// The deployment tells people it is an AI ("say that you are an
    /// AI", "stell dich als KI vor"): unless negated, what Article 50(1)
    /// asks is done, so rules `met_by_disclosure` do not apply.
    #[serde(default)]
    pub(super) disclosed: Vec<String>,
    /// Content moderation of texts ("check the reviews for spam",
    /// "SPAM|OK", "judge only the text"): the reviews or comments are
    /// judged, not their authors, so no Annex III or Article 50 rule
    /// applies to the text (sixteenth round).
    #[serde(default)]
    pub(super) moderation: Vec<String>,
    /// Writing an ordinary text for people (a job advert, a notice to
    /// families, a meeting summary, a reply to a customer): no Annex III
    /// or Article 50 rule applies to the text unless it also targets
    /// (`targeting`) or points at concrete people (sixteenth round).
    #[serde(default)]
    pub(super) drafting: Vec<String>,
    /// Targeting words that keep a drafted text a use ("show the advert
    /// only to", "target", "Zielgruppe"): a targeted job advert is Annex
    /// III 4(a).
    #[serde(default)]
    pub(super) targeting: Vec<String>,
    /// Software text about a library or product (release notes, a
    /// changelog, documentation): it describes code, not a use on people
    /// (sixteenth round).
    #[serde(default)]
    pub(super) software_text: Vec<String>,
    /// Machines, builds and services named with a person's word ("build
    /// agent", "worker node", "release candidate", "Worker-Knoten"): a
    /// person, anchor or object inside one is none.
    #[serde(default)]
    pub(super) machine: Vec<String>,
    /// A clitic that reads as a company's abbreviation once punctuation is
    /// gone: the English "there's a", "it's a" become "there s a", which
    /// holds the "s a" of a Spanish S.A.; a company's word inside one is
    /// none (seventeenth round).
    #[serde(default)]
    pub(super) clitic: Vec<String>,
    /// The result wanted is to pass as real ("so it looks like she
    /// recorded it", "damit es echt wirkt", "zo echt mogelijk"): a
    /// sentence that says so asks for a deception, so `meta` ("explain
    /// how...") in it is no talk about the topic (eighteenth round).
    #[serde(default)]
    pub(super) passing: Vec<String>,
    /// Words that point at concrete people when a person follows within
    /// four words ("these", "the attached", "our"): "for my research,
    /// score these 50 named applicants" applies the practice.
    #[serde(default)]
    pub(super) reference: Vec<String>,
    /// Words right after a number that make it a time, an age or a date
    /// ("years", "jours", "de mayo"), not a count of people: a counted
    /// batch ignores such a number (twenty-fourth round).
    #[serde(default)]
    pub(super) time_unit: Vec<String>,
    /// The user's own matter: my own CV, my score.
    #[serde(default)]
    pub(super) self_use: Vec<String>,
    /// Companies rather than natural persons: GmbH, Ltd, S.L.
    #[serde(default)]
    pub(super) legal_person: Vec<String>,
    /// Natural persons, for rules with `needs_person`.
    #[serde(default)]
    pub(super) persons: Vec<String>,
    /// Words of a software tool's own prompt (repository, shell, pull
    /// request): system instructions with several of them are a coding
    /// agent's or an IDE's, and what they match is set aside.
    #[serde(default)]
    pub(super) tool_prompt: Vec<String>,
    /// Building software (unit tests, a function that...): helping build an
    /// Annex III system is not using it (TAXONOMY labelling rule 4), so it
    /// suppresses high and limited rules, never an Article 5 one.
    #[serde(default)]
    pub(super) building: Vec<String>,
    /// The model addressed as a deployment's assistant or agent, or told
    /// to answer people ("you are the virtual assistant of", "du bist der
    /// Sprachassistent", "tu réponds aux"): with an `audience` and a
    /// `channel` in the same text, the deployment talks to the public
    /// (Article 50(1); twentieth round).
    #[serde(default)]
    pub(super) public_role: Vec<String>,
    /// Members of the public as the people the model talks to: customers,
    /// callers, citizens, patients, visitors, anyone.
    #[serde(default)]
    pub(super) audience: Vec<String>,
    /// A public channel: the website, the app, the phone line, WhatsApp,
    /// a chat window, text to speech.
    #[serde(default)]
    pub(super) channel: Vec<String>,
    /// A conversational system named as such: a chatbot, a voicebot, a
    /// voice agent, a virtual assistant. In the user's turns, with an
    /// audience in its sentence and a channel, a system set up to talk to
    /// the public (twenty-sixth round).
    #[serde(default)]
    pub(super) bot: Vec<String>,
    /// What such a system does with people: answers, talks, takes calls.
    /// Needed in the bot's sentence of the user's turns.
    #[serde(default)]
    pub(super) talk: Vec<String>,
    /// Media: a photo, an image, a video, a recording, a voice. With a
    /// `passing` term in its sentence, a deep fake (twenty-sixth round).
    #[serde(default)]
    pub(super) media: Vec<String>,
    /// No one: "nobody", "sin que nadie", "niemand". With a `review` term
    /// at most four words on, text that goes out unread.
    #[serde(default)]
    pub(super) nobody: Vec<String>,
    /// Reading it before it goes out: read, check, review, approve (whole
    /// words).
    #[serde(default)]
    pub(super) review: Vec<String>,
    /// Putting it before the public: publish, post, goes live, the
    /// website, a newsletter.
    #[serde(default)]
    pub(super) publish: Vec<String>,
    /// Negations before a verb: an act at most two words after one is not
    /// an act ("do not rank", "ne classe pas").
    #[serde(default)]
    pub(super) negation: Vec<String>,
    /// Negations after a verb, as in German, Dutch and French word order:
    /// an act right before one is not an act ("bewerte nicht").
    #[serde(default)]
    pub(super) negation_after: Vec<String>,
    /// Words that join two acts ("or", "und", "ni"): an act right after
    /// one shares the negation of the act right before it ("do not mark
    /// or grade", twenty-sixth round).
    #[serde(default)]
    pub(super) coordination: Vec<String>,
}
