//! Rule packs: the rule table (`rules.toml`: id, level, summary) and one
//! file of terms per language (`en.toml`, `de.toml`...), compiled into one
//! term scanner ([`Scanner`]) so a request is scanned once whatever the
//! number of rules and languages.
//!
//! Term syntax, after normalisation (lowercase, diacritics folded, every
//! non-alphanumeric run a single space): a term matches from the start of a
//! token and may end inside one, so `bewerb` finds "Bewerbungen" but `cv`
//! does not find "hacv". A leading `*` also lets it start inside a token
//! (German compounds: `*bewertung` in "Leistungsbewertung"); a trailing `$`
//! makes it end with a token (`ai$` is not "aid").

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

use serde::Deserialize;

use super::Level;
use super::scanner::Scanner;
use super::text::normalise;

/// The rule table.
pub(super) const RULES_FILE: &str = "rules.toml";
/// The built-in rule table and packs, by file name.
const BUILT_IN: &[(&str, &str)] = &[
    (RULES_FILE, include_str!("../../../assets/risk/rules.toml")),
    ("en.toml", include_str!("../../../assets/risk/en.toml")),
    ("de.toml", include_str!("../../../assets/risk/de.toml")),
    ("fr.toml", include_str!("../../../assets/risk/fr.toml")),
    ("es.toml", include_str!("../../../assets/risk/es.toml")),
    ("it.toml", include_str!("../../../assets/risk/it.toml")),
    ("nl.toml", include_str!("../../../assets/risk/nl.toml")),
    ("pl.toml", include_str!("../../../assets/risk/pl.toml")),
    ("pt.toml", include_str!("../../../assets/risk/pt.toml")),
];

/// A pack that cannot be used, named by its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackError {
    pub file: String,
    pub message: String,
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "risk rule pack {}: {}", self.file, self.message)
    }
}

impl std::error::Error for PackError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    rules: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: String,
    level: Level,
    summary: String,
    /// Content must also name a person (a `persons` or `objects` term).
    #[serde(default)]
    needs_person: bool,
    /// Met when the deployment tells people it is an AI (a `disclosed`
    /// term): Article 50(1), whose duty is that disclosure.
    #[serde(default)]
    met_by_disclosure: bool,
    /// Its anchors are the practice's own verbs ("invent", "mislead",
    /// "deceive"): negated in the deployer's instructions ("Never invent
    /// figures"), they forbid the practice (sixteenth round).
    #[serde(default)]
    forbidden_when_negated: bool,
    /// When an `exceptions` term is present, the hit counts as this rule
    /// instead (Article 5(1)(h) exceptions map to Annex III 1(a)).
    #[serde(default)]
    exception_to: Option<String>,
    /// In the user's turns the rule's object may be anywhere in the text,
    /// not only near the anchor and act: the context of the use (the
    /// police force, the public space of live matching) is often told in
    /// one turn and the act asked in another (nineteenth round).
    #[serde(default)]
    object_in_text: bool,
    /// News written for publication (Article 50(4)): a hit sets aside the
    /// Annex III matches of the text it is in, which the news reports on
    /// rather than decides (nineteenth round).
    #[serde(default)]
    reports_news: bool,
    /// Never set aside by the n-gram model's overruling (twenty-fifth
    /// round): its uses are on machines, not people, and read like the
    /// ordinary operation of the same machines.
    #[serde(default)]
    not_overruled: bool,
    /// Met when the deployer's instructions or declared use set the model
    /// before the public (`public_role`, `audience` and `channel` terms in
    /// one text): Article 50(1), whose duty is to tell those people that
    /// they talk to an AI (twentieth round).
    #[serde(default)]
    public_facing: bool,
    /// Met when a text asks for media (a photo, a video, a voice) that is
    /// to pass as real (`passing` and `media` terms in one sentence):
    /// Article 50(4), a deep fake whatever its subject (twenty-sixth
    /// round).
    #[serde(default)]
    lifelike_media: bool,
    /// Met when a text asks that what it writes be published with no one
    /// reading it first (`nobody` and `review` terms near each other, a
    /// `publish` term) on a topic of the rule (one of its acts): Article
    /// 50(4)'s text for the public without editorial review (twenty-sixth
    /// round).
    #[serde(default)]
    unreviewed_publication: bool,
    /// When the rule named here hits, this rule hits too if the request
    /// also holds the terms of this rule that `escalation_needs` names
    /// (`anchor`, `act`, `object`), anywhere in its texts: the Annex III
    /// use in the conditions of an Article 5 practice (twentieth round).
    #[serde(default)]
    escalates_from: Option<String>,
    #[serde(default)]
    escalation_needs: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPack {
    /// ISO 639-1 code, reported by language detection.
    language: String,
    /// Frequent function words: a text is in a known language when enough
    /// of its words are stop words of one pack.
    #[serde(default)]
    stopwords: Vec<String>,
    /// Synonym groups shared by the rules of the pack: a term `@name` in
    /// any list stands for every term of the group `name` (the words of a
    /// practice written once: vulnerable people, emotions, deception...).
    #[serde(default)]
    groups: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    framing: RawFraming,
    #[serde(default)]
    rules: BTreeMap<String, RawTerms>,
}

// The terms that apply to every rule, in their own file for its length.
#[path = "pack_framing.rs"]
mod framing;
use framing::RawFraming;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTerms {
    /// In `purpose`/`deployer_context`, one of these suffices.
    #[serde(default)]
    purpose: Vec<String>,
    /// Domain terms.
    #[serde(default)]
    anchors: Vec<String>,
    /// Operative acts; a rule without any matches on an anchor alone.
    #[serde(default)]
    acts: Vec<String>,
    /// Rule-specific persons, beside the pack's `persons`.
    #[serde(default)]
    objects: Vec<String>,
    /// Carve-outs: suppress a content match in the same sentence.
    #[serde(default)]
    suppressors: Vec<String>,
    /// Markers that turn the rule into its `exception_to` rule.
    #[serde(default)]
    exceptions: Vec<String>,
}

/// What finding a term means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Purpose(u16),
    Anchor(u16),
    Act(u16),
    Object(u16),
    Suppressor(u16),
    Exception(u16),
    Person,
    ToolPrompt,
    /// A negation before an act, of the pack with this language number:
    /// it counts only in a text of that language (or of none clearly), so
    /// the Spanish "no" does not negate the Portuguese "no perfil" ("in
    /// the profile").
    Negation(u8),
    /// A negation right after an act, of the pack with this language.
    NegationAfter(u8),
    /// A word that joins two acts, of the pack with this language.
    Coordination(u8),
    Building,
    Meta,
    Aggregate,
    Regulation,
    Fiction,
    Artefact,
    Research,
    Decided,
    OwnWork,
    NoRealPeople,
    Moderation,
    Drafting,
    Targeting,
    SoftwareText,
    Disclosed,
    Machine,
    Clitic,
    Passing,
    Addressed,
    Audience,
    Channel,
    Bot,
    Talk,
    Media,
    Nobody,
    Review,
    Publish,
    Reference,
    TimeUnit,
    SelfUse,
    LegalPerson,
    Stopword(u8),
}

impl Role {
    /// The rule whose term this is; None for a term of no rule.
    pub(super) fn rule(self) -> Option<u16> {
        match self {
            Role::Purpose(r)
            | Role::Anchor(r)
            | Role::Act(r)
            | Role::Object(r)
            | Role::Suppressor(r)
            | Role::Exception(r) => Some(r),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Edge {
    /// Starts at a token start, may end inside a token.
    Prefix,
    /// Starts at a token start and ends at a token end.
    Word,
    /// Anywhere inside a token.
    Infix,
}

/// A kind of a rule's terms that an escalation needs in the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Need {
    Anchor,
    Act,
    Object,
}

impl Need {
    fn parse(s: &str) -> Option<Need> {
        match s {
            "anchor" => Some(Need::Anchor),
            "act" => Some(Need::Act),
            "object" => Some(Need::Object),
            _ => None,
        }
    }

    /// The role of rule `r`'s terms of this kind.
    pub(super) fn role(self, r: u16) -> Role {
        match self {
            Need::Anchor => Role::Anchor(r),
            Need::Act => Role::Act(r),
            Need::Object => Role::Object(r),
        }
    }
}

#[derive(Debug)]
pub(super) struct RuleMeta {
    pub id: String,
    pub level: Level,
    pub summary: String,
    pub needs_person: bool,
    pub met_by_disclosure: bool,
    pub forbidden_when_negated: bool,
    pub exception_to: Option<usize>,
    /// The object may be anywhere in the user's text (`object_in_text`).
    pub object_in_text: bool,
    /// A hit sets aside the Annex III matches of the text it is in
    /// (`reports_news`); a declared purpose's stay.
    pub reports_news: bool,
    /// The n-gram model never sets its hits aside (`not_overruled`).
    pub not_overruled: bool,
    /// Met by a deployment set before the public (`public_facing`).
    pub public_facing: bool,
    /// Met by media asked to pass as real (`lifelike_media`).
    pub lifelike_media: bool,
    /// Met by text published unread on one of its topics
    /// (`unreviewed_publication`).
    pub unreviewed_publication: bool,
    /// The rule whose hit this one escalates (`escalates_from`), with the
    /// kinds of this rule's terms the request must also hold.
    pub escalates_from: Option<(usize, Vec<Need>)>,
    /// Whether any pack gives it acts (without, an anchor alone matches).
    pub has_acts: bool,
    /// Whether any pack gives it objects (then one is always required).
    pub has_objects: bool,
}

/// The compiled rule set.
pub(super) struct Compiled {
    pub rules: Vec<RuleMeta>,
    pub languages: Vec<String>,
    pub scanner: Scanner,
    pub patterns: Vec<(Edge, Vec<Role>)>,
}

/// The built-in files, with those of `dir` replacing the ones of the same
/// name and adding new ones (`it.toml`).
pub(super) fn load(dir: Option<&Path>) -> Result<Compiled, PackError> {
    let mut files: BTreeMap<String, String> = BUILT_IN
        .iter()
        .map(|(name, text)| (name.to_string(), text.to_string()))
        .collect();
    for (_, text) in BUILT_IN {
        crate::base::memory::forget_embedded(text);
    }
    if let Some(dir) = dir {
        let shown = dir.display().to_string();
        let entries = std::fs::read_dir(dir).map_err(|e| PackError {
            file: shown.clone(),
            message: format!("cannot read the directory: {e}"),
        })?;
        for entry in entries {
            let path = entry
                .map_err(|e| PackError {
                    file: shown.clone(),
                    message: e.to_string(),
                })?
                .path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).map_err(|e| PackError {
                file: path.display().to_string(),
                message: e.to_string(),
            })?;
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            files.insert(name.into_owned(), text);
        }
    }
    let table = files.remove(RULES_FILE).unwrap_or_default();
    compile(&table, files.iter().map(|(n, t)| (n.as_str(), t.as_str())))
}

/// Compiles a rule table and language packs given as (file name, text).
pub(super) fn compile<'a>(
    table: &str,
    packs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Compiled, PackError> {
    let error = pack_error;
    let raw: RawTable = toml::from_str(table).map_err(|e| error(RULES_FILE, e.to_string()))?;
    let index: HashMap<&str, usize> = raw
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.as_str(), i))
        .collect();
    if index.len() != raw.rules.len() {
        return Err(error(RULES_FILE, "a rule id appears twice".into()));
    }
    let mut rules = rule_metas(&raw, &index)?;
    let mut builder = Builder::default();
    let mut languages = Vec::new();
    for (file, text) in packs {
        let pack: RawPack = toml::from_str(text).map_err(|e| error(file, e.to_string()))?;
        let lang = u8::try_from(languages.len())
            .map_err(|_| error(file, "too many language packs".into()))?;
        add_pack(&mut builder, &mut rules, &index, file, &pack, lang)?;
        languages.push(pack.language);
    }
    let scanner = Scanner::new(&builder.texts, |i| builder.patterns[i].0 == Edge::Infix)
        .map_err(|e| error("(all packs)", e))?;
    Ok(Compiled {
        rules,
        languages,
        scanner,
        patterns: builder.patterns,
    })
}

fn pack_error(file: &str, message: String) -> PackError {
    PackError {
        file: file.to_owned(),
        message,
    }
}

/// The rules of the table, their `exception_to` resolved to an index.
fn rule_metas(raw: &RawTable, index: &HashMap<&str, usize>) -> Result<Vec<RuleMeta>, PackError> {
    let mut rules = Vec::with_capacity(raw.rules.len());
    for r in &raw.rules {
        let exception_to = match &r.exception_to {
            None => None,
            Some(id) => Some(*index.get(id.as_str()).ok_or_else(|| {
                pack_error(
                    RULES_FILE,
                    format!("rule {}: exception_to names an unknown rule `{id}`", r.id),
                )
            })?),
        };
        let escalates_from = match &r.escalates_from {
            None => None,
            Some(id) => {
                let from = *index.get(id.as_str()).ok_or_else(|| {
                    pack_error(
                        RULES_FILE,
                        format!("rule {}: escalates_from names an unknown rule `{id}`", r.id),
                    )
                })?;
                let needs = r
                    .escalation_needs
                    .iter()
                    .map(|n| {
                        Need::parse(n).ok_or_else(|| {
                            pack_error(
                                RULES_FILE,
                                format!(
                                    "rule {}: escalation_needs: `{n}` is not anchor, act or object",
                                    r.id
                                ),
                            )
                        })
                    })
                    .collect::<Result<Vec<Need>, PackError>>()?;
                Some((from, needs))
            }
        };
        rules.push(RuleMeta {
            id: r.id.clone(),
            level: r.level,
            summary: r.summary.clone(),
            needs_person: r.needs_person,
            met_by_disclosure: r.met_by_disclosure,
            forbidden_when_negated: r.forbidden_when_negated,
            exception_to,
            object_in_text: r.object_in_text,
            reports_news: r.reports_news,
            not_overruled: r.not_overruled,
            public_facing: r.public_facing,
            lifelike_media: r.lifelike_media,
            unreviewed_publication: r.unreviewed_publication,
            escalates_from,
            has_acts: false,
            has_objects: false,
        });
    }
    Ok(rules)
}

/// Adds one language pack's terms, each with its role, and marks the
/// rules that have acts or objects.
fn add_pack(
    builder: &mut Builder,
    rules: &mut [RuleMeta],
    index: &HashMap<&str, usize>,
    file: &str,
    pack: &RawPack,
    lang: u8,
) -> Result<(), PackError> {
    let add = |b: &mut Builder, terms: &[String], role: Role, edge: Option<Edge>| {
        terms.iter().try_for_each(|t| match t.strip_prefix('@') {
            Some(name) => pack
                .groups
                .get(name)
                .ok_or_else(|| pack_error(file, format!("unknown group `@{name}`")))?
                .iter()
                .try_for_each(|t| b.add(t, role, edge).map_err(|m| pack_error(file, m))),
            None => b.add(t, role, edge).map_err(|m| pack_error(file, m)),
        })
    };
    add(
        builder,
        &pack.stopwords,
        Role::Stopword(lang),
        Some(Edge::Word),
    )?;
    let f = &pack.framing;
    add(builder, &f.meta, Role::Meta, None)?;
    add(builder, &f.aggregate, Role::Aggregate, None)?;
    add(builder, &f.regulation, Role::Regulation, None)?;
    add(builder, &f.fiction, Role::Fiction, None)?;
    add(builder, &f.artefact, Role::Artefact, None)?;
    add(builder, &f.research, Role::Research, None)?;
    add(builder, &f.decided, Role::Decided, None)?;
    add(builder, &f.own_work, Role::OwnWork, None)?;
    add(builder, &f.no_real_people, Role::NoRealPeople, None)?;
    add(builder, &f.moderation, Role::Moderation, None)?;
    add(builder, &f.drafting, Role::Drafting, None)?;
    add(builder, &f.targeting, Role::Targeting, None)?;
    add(builder, &f.software_text, Role::SoftwareText, None)?;
    add(builder, &f.disclosed, Role::Disclosed, None)?;
    add(builder, &f.machine, Role::Machine, None)?;
    add(builder, &f.clitic, Role::Clitic, None)?;
    add(builder, &f.passing, Role::Passing, None)?;
    add(builder, &f.public_role, Role::Addressed, None)?;
    add(builder, &f.audience, Role::Audience, None)?;
    add(builder, &f.channel, Role::Channel, None)?;
    add(builder, &f.bot, Role::Bot, None)?;
    add(builder, &f.talk, Role::Talk, None)?;
    add(builder, &f.media, Role::Media, None)?;
    add(builder, &f.nobody, Role::Nobody, None)?;
    add(builder, &f.review, Role::Review, Some(Edge::Word))?;
    add(builder, &f.publish, Role::Publish, None)?;
    add(builder, &f.reference, Role::Reference, Some(Edge::Word))?;
    add(builder, &f.time_unit, Role::TimeUnit, Some(Edge::Word))?;
    add(builder, &f.self_use, Role::SelfUse, None)?;
    add(builder, &f.legal_person, Role::LegalPerson, None)?;
    add(builder, &f.persons, Role::Person, None)?;
    add(builder, &f.tool_prompt, Role::ToolPrompt, None)?;
    add(builder, &f.building, Role::Building, None)?;
    // Whole words that count only in a text of the pack's language.
    for (terms, role) in [
        (&f.negation, Role::Negation(lang)),
        (&f.negation_after, Role::NegationAfter(lang)),
        (&f.coordination, Role::Coordination(lang)),
    ] {
        add(builder, terms, role, Some(Edge::Word))?;
    }
    for (id, terms) in &pack.rules {
        let &i = index
            .get(id.as_str())
            .ok_or_else(|| pack_error(file, format!("unknown rule id `{id}` (see rules.toml)")))?;
        let r = i as u16;
        add(builder, &terms.purpose, Role::Purpose(r), None)?;
        add(builder, &terms.anchors, Role::Anchor(r), None)?;
        add(builder, &terms.acts, Role::Act(r), None)?;
        add(builder, &terms.objects, Role::Object(r), None)?;
        add(builder, &terms.suppressors, Role::Suppressor(r), None)?;
        add(builder, &terms.exceptions, Role::Exception(r), None)?;
        rules[i].has_acts |= !terms.acts.is_empty();
        rules[i].has_objects |= !terms.objects.is_empty();
    }
    Ok(())
}

#[derive(Default)]
struct Builder {
    ids: HashMap<(String, Edge), usize>,
    texts: Vec<String>,
    patterns: Vec<(Edge, Vec<Role>)>,
}

impl Builder {
    fn add(&mut self, term: &str, role: Role, edge: Option<Edge>) -> Result<(), String> {
        let (infix, rest) = match term.strip_prefix('*') {
            Some(rest) => (true, rest),
            None => (false, term),
        };
        let (word, rest) = match rest.strip_suffix('$') {
            Some(rest) => (true, rest),
            None => (false, rest),
        };
        let text = normalise(rest).text.to_string();
        if text.is_empty() {
            return Err(format!("the term `{term}` has no letters or digits"));
        }
        let edge = edge.unwrap_or(match (infix, word) {
            (true, _) => Edge::Infix,
            (false, true) => Edge::Word,
            (false, false) => Edge::Prefix,
        });
        let next = self.texts.len();
        let id = *self.ids.entry((text.clone(), edge)).or_insert(next);
        if id == next {
            self.texts.push(text);
            self.patterns.push((edge, Vec::new()));
        }
        let roles = &mut self.patterns[id].1;
        if !roles.contains(&role) {
            roles.push(role);
        }
        Ok(())
    }
}
