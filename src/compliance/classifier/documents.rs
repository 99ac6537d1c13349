//! Pasted documents (fifteenth round, issue 26): a block fenced or
//! labelled as reference material (`<context>...</context>`, triple
//! backticks or quotes, "Context:", "Auszüge aus dem Handbuch:",
//! "Extrait :", "Documento:") is what a retrieval-augmented answer reads,
//! an HR handbook, a bank's FAQ or a school timetable, not a use on
//! people. Its terms make no rule fire on their own, like a tool's own
//! prompt; the task outside the block is judged. A rule whose act is
//! asked for outside the block ("using this handbook, decide which of
//! these employees to dismiss") keeps the block's terms, so the block
//! still gives the domain of a risky instruction.

use super::pack::Role;
use super::pack::RuleMeta;
use super::spans::Found;
use super::text::{Normalised, normalise};
use super::{SetAside, Source};

/// Fewer words than this between the markers are a quoted phrase, not a
/// pasted document (a risky request that quotes "`rank applicants`").
const MIN_WORDS: usize = 12;

/// Fewer words than this outside the blocks of a text leave no task to
/// judge: the whole text is the request, labelled or not.
const MIN_OUTSIDE_WORDS: usize = 3;

/// The most words of a task after a labelled document with no task label.
const TASK_WORDS: usize = 40;

/// Tag names of a document block, in the eight languages:
/// `<context>`, `<documents>`, `<Auszug>`, `<extrait>`, `<documento>`.
const TAGS: &[&str] = &[
    "context",
    "contexts",
    "document",
    "documents",
    "doc",
    "docs",
    "excerpt",
    "excerpts",
    "passage",
    "passages",
    "source",
    "sources",
    "reference",
    "references",
    "text",
    "article",
    "retrieved",
    "search_results",
    "knowledge",
    "kontext",
    "dokument",
    "dokumente",
    "auszug",
    "auszuege",
    "quelle",
    "contexte",
    "extrait",
    "extraits",
    "texte",
    "contexto",
    "documento",
    "documentos",
    "fragmento",
    "texto",
    "fuente",
    "contesto",
    "documenti",
    "estratto",
    "testo",
    "fonte",
    "kontekst",
    "dokumenty",
    "fragment",
    "tekst",
    "bron",
    "excerto",
    "trecho",
];

/// First words of a label line ("Context:", "Auszüge aus dem
/// Mitarbeiterhandbuch:", "Extrait du règlement :", "Documento:"), in
/// the eight languages, lowercase. Since the seventeenth round also a
/// page, fact sheet or leaflet pasted from a website ("Ficha:", "Pagina:",
/// "Merkblatt:", "Fiche :"), which a citizen's or customer's question
/// quotes.
const LABELS: &[&str] = &[
    // English
    "context",
    "document",
    "documents",
    "excerpt",
    "excerpts",
    "extract",
    "extracts",
    "passage",
    "passages",
    "source",
    "sources",
    "reference",
    "retrieved",
    "article",
    "text",
    "page",
    "factsheet",
    "leaflet",
    // German
    "kontext",
    "dokument",
    "dokumente",
    "auszug",
    "auszüge",
    "textauszug",
    "quelle",
    "quellen",
    "artikel",
    "seite",
    "merkblatt",
    "infoblatt",
    // French
    "contexte",
    "extrait",
    "extraits",
    "texte",
    "sources",
    "fiche",
    // Spanish
    "contexto",
    "documento",
    "documentos",
    "extracto",
    "extractos",
    "fragmento",
    "fragmentos",
    "fuente",
    "texto",
    "artículo",
    "ficha",
    "página",
    // Italian
    "contesto",
    "documenti",
    "estratto",
    "estratti",
    "brano",
    "fonte",
    "testo",
    "articolo",
    "scheda",
    "pagina",
    // Dutch
    "documenten",
    "uittreksel",
    "fragment",
    "fragmenten",
    "bron",
    "tekst",
    "informatieblad",
    // Polish
    "kontekst",
    "dokumenty",
    "fragmenty",
    "wyciąg",
    "źródło",
    "artykuł",
    "strona",
    "karta",
    "ulotka",
    // Portuguese
    "excerto",
    "excertos",
    "trecho",
    "trechos",
    "artigo",
];

/// First words of a label line that ends a labelled document: the
/// question or task after it ("Question:", "Frage:", "Consigne :").
const TASK_LABELS: &[&str] = &[
    "question",
    "questions",
    "task",
    "instruction",
    "instructions",
    "query",
    "request",
    "frage",
    "fragen",
    "aufgabe",
    "anweisung",
    "anfrage",
    "tâche",
    "consigne",
    "demande",
    "pregunta",
    "tarea",
    "instrucción",
    "instrucciones",
    "consulta",
    "domanda",
    "compito",
    "istruzioni",
    "richiesta",
    "vraag",
    "taak",
    "opdracht",
    "instructie",
    "pytanie",
    "zadanie",
    "polecenie",
    "instrukcja",
    "pergunta",
    "tarefa",
    "instrução",
    "pedido",
];

/// The documents pasted into one text, and the rules whose terms there
/// were set aside.
#[derive(Debug, Default)]
pub(super) struct Pasted {
    /// Token ranges (first, last) of the blocks.
    pub blocks: Vec<(u32, u32)>,
    /// Rules with a domain term only in the blocks, not evaluated.
    pub rules: Vec<u16>,
}

/// How the note on a rule whose terms stood only in a pasted document
/// ends ([`SetAside::in_pasted_document`]).
pub(super) const NOT_EVALUATED: &str = "the terms of this rule there were not evaluated, and the task outside it asks its act of no one";

/// Byte ranges of `raw` that are pasted documents: fenced (tags, triple
/// backticks or quotes) or labelled, of at least [`MIN_WORDS`] words.
pub(super) fn blocks(raw: &str) -> Vec<(usize, usize)> {
    let mut out = fenced(raw);
    for label in labelled(raw) {
        if !out.iter().any(|&(s, e)| label.0 < e && s < label.1) {
            out.push(label);
        }
    }
    out.retain(|&(s, e)| raw[s..e].split_whitespace().count() >= MIN_WORDS);
    out.sort_unstable();
    out
}

/// Blocks between paired markers: a document tag and its closing tag,
/// triple backticks, triple quotes.
fn fenced(raw: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for fence in ["```", "\"\"\"", "'''"] {
        let mut at = 0;
        while let Some(open) = raw[at..].find(fence).map(|o| at + o + fence.len()) {
            let Some(close) = raw[open..].find(fence).map(|c| open + c) else {
                break;
            };
            out.push((open, close));
            at = close + fence.len();
        }
    }
    tags(raw, &mut out);
    out
}

/// Adds the blocks between a document tag of [`TAGS`] and its closing
/// tag, in any case (`<Documents id="1">...</documents>`).
fn tags(raw: &str, out: &mut Vec<(usize, usize)>) {
    let named = |at: usize, name: &str| {
        raw.get(at..at + name.len())
            .is_some_and(|n| n.eq_ignore_ascii_case(name))
    };
    let mut at = 0;
    while let Some(lt) = raw[at..].find('<').map(|o| at + o) {
        at = lt + 1;
        let name_end = raw[at..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(raw.len(), |e| at + e);
        let Some(name) = TAGS
            .iter()
            .find(|t| t.eq_ignore_ascii_case(&raw[at..name_end]))
        else {
            continue;
        };
        let Some(open) = raw[name_end..].find('>').map(|o| name_end + o + 1) else {
            return;
        };
        let close = raw[open..]
            .match_indices("</")
            .map(|(c, _)| open + c)
            .find(|&c| named(c + 2, name));
        if let Some(close) = close {
            out.push((open, close));
            at = close + 2 + name.len();
        }
    }
}

/// Blocks after a label line ("Context:", "Auszüge aus ...:"): up to the
/// next task label ("Question:"), else up to the last blank line after
/// it, else up to the last line break, else to the end of the text.
fn labelled(raw: &str) -> Vec<(usize, usize)> {
    if !raw.contains(':') {
        return Vec::new();
    }
    let mut lines = Vec::new();
    let mut start = 0;
    for line in raw.split_inclusive('\n') {
        lines.push((start, line));
        start += line.len();
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (line_start, line) = lines[i];
        let Some(colon) = label(line, LABELS) else {
            i += 1;
            continue;
        };
        // The label names the document ("Auszüge aus dem Mitarbeiterhandbuch"):
        // it is part of it.
        let open = line_start;
        let body_start = line_start + colon + 1;
        let rest = &lines[i + 1..];
        let end = rest
            .iter()
            .position(|(_, l)| label(l, TASK_LABELS).is_some() || label(l, LABELS).is_some())
            .map(|n| n + i + 1);
        let close = match end {
            Some(n) => lines[n].0,
            None => body_start + body(&raw[body_start..]),
        };
        out.push((open, close));
        i = end.unwrap_or(lines.len());
    }
    out
}

/// The length of a labelled document running to the end of its text: up
/// to the last blank line, else the last line break, when what follows
/// is a short task (at most [`TASK_WORDS`] words); else all of it.
fn body(after: &str) -> usize {
    let lead = after.len() - after.trim_start().len();
    let text = after.trim_end();
    let short = |b: usize| text[b..].split_whitespace().count() <= TASK_WORDS;
    text[lead..]
        .rfind("\n\n")
        .or_else(|| text[lead..].rfind('\n'))
        .map(|b| lead + b)
        .filter(|&b| short(b))
        .unwrap_or(after.len())
}

/// The offset of the colon of a label line: a first word of `words`, at
/// most six words before the colon, no sentence end before it.
fn label(line: &str, words: &[&str]) -> Option<usize> {
    let trimmed = line.trim_start_matches(|c: char| c.is_whitespace() || "#*->_[".contains(c));
    let skipped = line.len() - trimmed.len();
    let colon = trimmed.find(':')?;
    let head = &trimmed[..colon];
    if head.contains(['.', '?', '!']) || head.split_whitespace().count() > 6 {
        return None;
    }
    let first = head
        .split(|c: char| !c.is_alphanumeric())
        .next()?
        .to_lowercase();
    words.contains(&first.as_str()).then_some(skipped + colon)
}

/// The token ranges (first, last) of the documents pasted into `raw`
/// (normalised as `text`), none when fewer than [`MIN_OUTSIDE_WORDS`]
/// tokens are outside them. Read with the text's terms
/// ([`Classifier::read_text`](super::Classifier::read_text)), so a long
/// prompt sent again is not searched again.
pub(super) fn locate(raw: &str, text: &Normalised) -> Vec<(u32, u32)> {
    let ranges = blocks(raw);
    if ranges.is_empty() {
        return Vec::new();
    }
    let token = |offset: usize| normalise(&raw[..offset]).starts.len() as u32;
    let found: Vec<(u32, u32)> = ranges
        .iter()
        .map(|&(s, e)| (token(s), token(e)))
        .filter(|&(first, end)| end > first)
        .map(|(first, end)| (first, end - 1))
        .collect();
    let in_blocks: usize = found.iter().map(|&(a, b)| (b - a + 1) as usize).sum();
    match text.starts.len().saturating_sub(in_blocks) < MIN_OUTSIDE_WORDS {
        true => Vec::new(),
        false => found,
    }
}

/// Sets aside the terms found inside the documents pasted into the
/// instructions and the user's turns (`blocks`, as [`locate`] found them
/// in `texts`; the declared use first, never read for blocks, so with
/// none): the terms of a rule
/// whose act or purpose term is found outside every block, in any text,
/// stay; the others go, with the whole-text framings of the blocks
/// (fiction, research, the Act, a decision taken, one's own work), which
/// judge the request, not the document.
pub(super) fn set_aside(
    blocks: [Vec<(u32, u32)>; 3],
    texts: [&Normalised; 3],
    found: &mut [Vec<Found>; 3],
) -> [Pasted; 3] {
    if blocks.iter().all(Vec::is_empty) {
        return Default::default();
    }
    let inside = |i: usize, f: &Found| blocks[i].iter().any(|&(a, b)| a <= f.token && f.last <= b);
    let kept: Vec<u16> = (0..3)
        .flat_map(|i| {
            let outside: Vec<&Found> = found[i].iter().filter(|f| !inside(i, f)).collect();
            let rules: Vec<u16> = outside
                .iter()
                .filter_map(|f| match f.role {
                    Role::Purpose(r) => Some(r),
                    Role::Act(r) if on_people(texts[i], &outside, f, r) => Some(r),
                    _ => None,
                })
                .collect();
            rules
        })
        .collect();
    let mut i = 0;
    blocks.map(|blocks| {
        let pasted = Pasted {
            blocks,
            rules: Vec::new(),
        }
        .with(&mut found[i], &kept);
        i += 1;
        pasted
    })
}

/// Whether an act outside the blocks is asked of people: a person or an
/// object of rule `r` in its sentence, or concrete people pointed at
/// outside the blocks ("these applicants", "unsere Mitarbeiter"). A
/// question about the document ("how often are reviews held?", "at what
/// score is a loan declined?") names an act but nobody it is done to.
fn on_people(text: &Normalised, outside: &[&Found], act: &Found, r: u16) -> bool {
    let sentence = text.sentences[act.token as usize];
    outside.iter().any(|f| match f.role {
        Role::Person => text.sentences[f.token as usize] == sentence,
        Role::Object(o) => o == r && text.sentences[f.token as usize] == sentence,
        Role::Reference => outside
            .iter()
            .any(|p| p.role == Role::Person && p.token > f.last && p.token <= f.last + 4),
        _ => false,
    })
}

impl Pasted {
    /// Drops the block's terms of the rules not in `kept`, listing the
    /// rules whose domain terms went.
    fn with(mut self, found: &mut Vec<Found>, kept: &[u16]) -> Pasted {
        if self.blocks.is_empty() {
            return self;
        }
        let blocks = std::mem::take(&mut self.blocks);
        found.retain(|f| {
            if !blocks.iter().any(|&(a, b)| a <= f.token && f.last <= b) {
                return true;
            }
            match f.role {
                Role::Purpose(r) | Role::Anchor(r) if !kept.contains(&r) => {
                    if !self.rules.contains(&r) {
                        self.rules.push(r);
                    }
                    false
                }
                Role::Act(r) | Role::Object(r) | Role::Suppressor(r) | Role::Exception(r) => {
                    kept.contains(&r)
                }
                Role::Fiction
                | Role::Regulation
                | Role::Research
                | Role::Decided
                | Role::OwnWork
                | Role::Moderation
                | Role::Drafting
                | Role::SoftwareText
                | Role::Artefact => false,
                _ => true,
            }
        });
        self.blocks = blocks;
        self
    }
}

/// The notes of the texts not evaluated: a software tool's own prompt
/// (`tool_markers` tool terms, the rules with terms there) and the pasted
/// documents, for `--explain`.
pub(super) fn notes(
    rules: &[RuleMeta],
    tool_prompt: &[usize],
    tool_markers: usize,
    pasted: &[Pasted; 3],
    sources: [Source; 3],
) -> Vec<SetAside> {
    let ids = |rs: &mut dyn Iterator<Item = usize>| {
        rs.map(|r| rules[r].id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut notes = Vec::new();
    if !tool_prompt.is_empty() {
        notes.push(SetAside {
            rule: ids(&mut tool_prompt.iter().copied()),
            source: Source::Instructions,
            why: format!(
                "a software tool's own prompt ({tool_markers} tool terms), not a use on people: the terms of these rules there were not evaluated"
            ),
        });
    }
    // One note per rule: the lexical layer does not raise to a rule set
    // aside (`Lexical::raise`), and it compares one rule's id.
    for (p, source) in pasted.iter().zip(sources) {
        for &r in &p.rules {
            notes.push(SetAside {
                rule: rules[r as usize].id.clone(),
                source,
                why: format!(
                    "a pasted document ({} block(s) fenced or labelled as reference material), not a use on people: {NOT_EVALUATED}",
                    p.blocks.len()
                ),
            });
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::blocks;

    #[test]
    fn fences_tags_and_labels_make_blocks_and_short_quotes_do_not() {
        let doc = "Employees must record their working hours daily and managers review the timesheets every week.";
        for raw in [
            format!("<context>{doc}</context>\nHow often are timesheets reviewed?"),
            format!("<Documents id=\"1\">{doc}</Documents> Answer from the documents."),
            format!("```\n{doc}\n```\nSummarise this."),
            format!("Context:\n{doc}\n\nQuestion: how often?"),
            format!("Auszüge aus dem Handbuch:\n{doc}\nWie oft?"),
        ] {
            let b = blocks(&raw);
            assert_eq!(b.len(), 1, "{raw}");
            assert!(raw[b[0].0..b[0].1].contains("timesheets"), "{raw}");
            assert!(!raw[b[0].0..b[0].1].contains('?'), "{raw}");
        }
        assert!(blocks("Please ```rank the applicants``` by score.").is_empty());
        assert!(blocks("Context: we rank applicants.").is_empty());
    }
}
