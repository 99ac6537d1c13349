//! PII redaction (GDPR data minimisation): finds personal data in request
//! and answer text and replaces each value with a typed placeholder such as
//! `[EMAIL_1]`, numbered per request, the same value always the same
//! placeholder. In the tenant policy's `logs` mode only what Tollgate keeps
//! (the conversation log, audit bodies) is redacted; in `upstream` mode the
//! request is redacted before it leaves for the provider and the
//! placeholders in the answer are put back ([`Session::restore`], and
//! [`StreamRestorer`] for streams, whose chunks may split a placeholder).
//!
//! The built-in detectors are hand-written scanners ([`detect`]) that check
//! the check digits of what they find; a tenant adds its own patterns
//! (`piiPatterns`, compiled once per pattern set and cached).

mod chars;
pub mod checks;
mod context;
pub mod detect;
mod email;
mod ids;
mod ip;
mod labels;
mod phone;
pub mod stream;
mod version;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

use regex_automata::meta::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::base::recent::{Recent, Weigh};

pub use detect::Kind;
pub use stream::{StreamRestorer, restore_stream};

/// Where a tenant's personal data is replaced by placeholders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Nothing is redacted.
    Off,
    /// What Tollgate stores is redacted; the provider gets the request as
    /// sent.
    #[default]
    Logs,
    /// The provider gets placeholders too; the caller gets the values back.
    Upstream,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Logs => "logs",
            Mode::Upstream => "upstream",
        }
    }

    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "off" => Some(Mode::Off),
            "logs" => Some(Mode::Logs),
            "upstream" => Some(Mode::Upstream),
            _ => None,
        }
    }
}

/// A tenant's own pattern: its matches become `[NAME_n]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Pattern {
    pub name: String,
    pub regex: String,
}

/// The most patterns a tenant may add, and their largest size.
pub const MAX_PATTERNS: usize = 20;
pub const MAX_PATTERN_LEN: usize = 500;
/// The compiled size a pattern may reach (a bound on memory and time).
const MAX_COMPILED_BYTES: usize = 1 << 20;

/// Why a tenant pattern is refused: which part, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    /// `name` or `regex`.
    pub part: &'static str,
    pub message: String,
}

impl Pattern {
    /// Checks the name (the placeholder's type: a letter, then letters,
    /// digits or `_`, at most 32) and compiles the regex.
    pub fn compile(&self) -> Result<Regex, PatternError> {
        let name_ok = (1..=32).contains(&self.name.len())
            && self.name.as_bytes()[0].is_ascii_alphabetic()
            && self
                .name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_');
        if !name_ok {
            return Err(PatternError {
                part: "name",
                message: "a name is 1 to 32 letters, digits or `_`, starting with a letter".into(),
            });
        }
        if self.regex.is_empty() || self.regex.len() > MAX_PATTERN_LEN {
            return Err(PatternError {
                part: "regex",
                message: format!("a regex is 1 to {MAX_PATTERN_LEN} characters"),
            });
        }
        let regex = Regex::builder()
            .configure(
                Regex::config()
                    .nfa_size_limit(Some(MAX_COMPILED_BYTES))
                    .hybrid_cache_capacity(2 * MAX_COMPILED_BYTES),
            )
            .build(&self.regex)
            .map_err(|e| PatternError {
                part: "regex",
                message: format!("not a valid regular expression: {e}"),
            })?;
        // A pattern that matches the empty string would redact nothing
        // but cost a match at every position.
        if regex.is_match("") {
            return Err(PatternError {
                part: "regex",
                message: "the regex matches the empty string".into(),
            });
        }
        Ok(regex)
    }

    fn label(&self) -> String {
        self.name.to_ascii_uppercase()
    }
}

/// The built-in spans of the long texts read lately: a system prompt sent
/// again with every turn of an agent's session is scanned once
/// ([`crate::base::recent`]). 64 texts, about 8 MiB.
static RECENT: LazyLock<Recent<Arc<Vec<detect::Span>>>> =
    LazyLock::new(|| Recent::new(64, 8 << 20));

impl Weigh for Arc<Vec<detect::Span>> {
    fn bytes(&self) -> usize {
        std::mem::size_of::<detect::Span>() * self.len()
    }
}

/// The built-in spans of a long `text` ([`detect::scan`]), read once when
/// it is sent again.
fn builtin_spans(text: &str) -> Arc<Vec<detect::Span>> {
    RECENT.get(text, |text| Arc::new(detect::scan(text)))
}

/// The detectors of one tenant: the built-in ones and its patterns.
#[derive(Debug, Default)]
pub struct Redactor {
    tenant: Vec<(String, Regex)>,
}

/// Compiled pattern sets, by their text, so a request never compiles.
static COMPILED: LazyLock<Mutex<HashMap<Vec<Pattern>, Arc<Redactor>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

impl Redactor {
    /// The redactor of a pattern set (already validated by the policy
    /// API); a pattern that no longer compiles is skipped.
    pub fn for_patterns(patterns: &[Pattern]) -> Arc<Redactor> {
        static BUILTIN: LazyLock<Arc<Redactor>> = LazyLock::new(Arc::default);
        if patterns.is_empty() {
            return BUILTIN.clone();
        }
        let mut cache = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = cache.get(patterns) {
            return found.clone();
        }
        if cache.len() >= 256 {
            cache.clear();
        }
        let tenant = patterns
            .iter()
            .filter_map(|p| p.compile().ok().map(|r| (p.label(), r)))
            .collect();
        let redactor = Arc::new(Redactor { tenant });
        cache.insert(patterns.to_vec(), redactor.clone());
        redactor
    }

    /// The spans to redact in `text`: (start, end, label), in order, not
    /// overlapping (a built-in span wins over a tenant's).
    pub fn find<'a>(&'a self, text: &str) -> Vec<(usize, usize, &'a str)> {
        // Only a long text is looked up among the kept ones: every other
        // string of a request is scanned with no lock and no copy.
        let (kept, scanned);
        let detected: &[detect::Span] = if Recent::<Arc<Vec<detect::Span>>>::keeps(text) {
            kept = builtin_spans(text);
            &kept
        } else {
            scanned = detect::scan(text);
            &scanned
        };
        let mut spans: Vec<(usize, usize, &str)> = detected
            .iter()
            .map(|s| (s.start, s.end, s.kind.label()))
            .collect();
        if self.tenant.is_empty() {
            return spans;
        }
        let builtin = spans.len();
        for (label, regex) in &self.tenant {
            for m in regex.find_iter(text) {
                if !m.is_empty() {
                    spans.push((m.start(), m.end(), label.as_str()));
                }
            }
        }
        let (first, _) = spans.split_at(builtin);
        let first = first.to_vec();
        let mut extra: Vec<_> = spans[builtin..]
            .iter()
            .filter(|(s, e, _)| !first.iter().any(|(fs, fe, _)| s < fe && fs < e))
            .copied()
            .collect();
        extra.sort_by_key(|&(s, e, _)| (s, std::cmp::Reverse(e)));
        let mut kept = first;
        let mut last_end = 0;
        for span in extra {
            if span.0 >= last_end {
                last_end = span.1;
                kept.push(span);
            }
        }
        kept.sort_by_key(|&(s, _, _)| s);
        kept
    }
}

/// Fields that identify a subject for erasure and export, never redacted.
const SUBJECT_IDS: &[&str] = &[
    "end_user_id",
    "endUserId",
    "user_consent_id",
    "userConsentId",
];

/// One request's redaction: which value became which placeholder, and how
/// many values of each type were replaced.
#[derive(Debug, Clone)]
pub struct Session {
    mode: Mode,
    redactor: Arc<Redactor>,
    by_value: HashMap<String, String>,
    by_placeholder: Arc<HashMap<String, String>>,
    next: HashMap<String, u32>,
    counts: BTreeMap<String, u64>,
}

impl Session {
    pub fn new(mode: Mode, patterns: &[Pattern]) -> Session {
        Session {
            mode,
            redactor: Redactor::for_patterns(patterns),
            by_value: HashMap::new(),
            by_placeholder: Arc::default(),
            next: HashMap::new(),
            counts: BTreeMap::new(),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Values replaced so far, per type (`EMAIL`, `IBAN`, ...).
    pub fn counts(&self) -> &BTreeMap<String, u64> {
        &self.counts
    }

    /// Forgets the counts (the placeholders stay): for redacting a second
    /// copy of text already counted.
    pub fn uncounted(mut self) -> Session {
        self.counts.clear();
        self
    }

    /// `text` with every detected value replaced by its placeholder.
    pub fn redact<'t>(&mut self, text: &'t str) -> Cow<'t, str> {
        let spans = self.redactor.clone();
        let spans = spans.find(text);
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end, label) in spans {
            out.push_str(&text[at..start]);
            out.push_str(&self.placeholder(label, &text[start..end]));
            at = end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    fn placeholder(&mut self, label: &str, value: &str) -> String {
        *self.counts.entry(label.to_owned()).or_default() += 1;
        if let Some(known) = self.by_value.get(value) {
            return known.clone();
        }
        let n = self.next.entry(label.to_owned()).or_default();
        *n += 1;
        let placeholder = format!("[{label}_{n}]");
        self.by_value.insert(value.to_owned(), placeholder.clone());
        Arc::make_mut(&mut self.by_placeholder).insert(placeholder.clone(), value.to_owned());
        placeholder
    }

    /// Redacts every string inside a JSON value. Object keys stay, and so
    /// do the end-user and consent ids Tollgate finds a subject's records
    /// by (erasure and export); they are pseudonymous ids the caller chose.
    pub fn redact_json(&mut self, value: &mut Value) {
        match value {
            Value::String(text) => {
                if let Cow::Owned(redacted) = self.redact(text) {
                    *text = redacted;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            Value::Object(map) => map
                .iter_mut()
                .filter(|(k, _)| !SUBJECT_IDS.contains(&k.as_str()))
                .for_each(|(_, v)| self.redact_json(v)),
            _ => {}
        }
    }

    /// Redacts a JSON text's strings (or, when it is not JSON, the text).
    pub fn redact_document(&mut self, text: &str) -> String {
        match serde_json::from_str::<Value>(text) {
            Ok(mut value) if !text.trim().is_empty() => {
                self.redact_json(&mut value);
                crate::base::json::text(&value)
            }
            _ => self.redact(text).into_owned(),
        }
    }

    /// `text` with every placeholder this session issued put back.
    pub fn restore<'t>(&self, text: &'t str) -> Cow<'t, str> {
        restore(&self.by_placeholder, text)
    }

    /// Puts the values back in every string inside a JSON value.
    pub fn restore_json(&self, value: &mut Value) {
        if self.by_placeholder.is_empty() {
            return;
        }
        match value {
            Value::String(text) => {
                if let Cow::Owned(restored) = self.restore(text) {
                    *text = restored;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.restore_json(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.restore_json(v)),
            _ => {}
        }
    }

    /// Whether any placeholder was issued (so an answer may hold some).
    pub fn issued(&self) -> bool {
        !self.by_placeholder.is_empty()
    }

    /// The placeholder table, for restoring a stream.
    pub fn table(&self) -> Arc<HashMap<String, String>> {
        self.by_placeholder.clone()
    }
}

/// Replaces each `[LABEL_n]` of `table` in `text` with its value; anything
/// else in brackets is left as it is.
pub fn restore<'t>(table: &HashMap<String, String>, text: &'t str) -> Cow<'t, str> {
    if table.is_empty() || !text.contains('[') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let tail = &rest[open..];
        let close = tail.find(']').filter(|&c| c <= 48);
        match close.and_then(|c| table.get(&tail[..=c]).map(|v| (c, v))) {
            Some((c, value)) => {
                out.push_str(value);
                rest = &tail[c + 1..];
                changed = true;
            }
            None => {
                out.push('[');
                rest = &tail[1..];
            }
        }
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_sent_again_is_scanned_once_and_redacted_in_each_session() {
        let policy =
            "Answer politely and pass refunds above fifty euros to a colleague. ".repeat(40);
        let text = format!("{policy} Escalations go to desk.lead@example.org or +49 30 901820.");
        assert!(Recent::<Arc<Vec<detect::Span>>>::keeps(&text));
        let first = Session::new(Mode::Logs, &[]).redact(&text).into_owned();
        // Kept: the second session's scan is the first one's.
        let kept = RECENT.get(&text, |_| panic!("scanned again"));
        assert_eq!(kept.len(), 2);
        let mut second = Session::new(Mode::Logs, &[]);
        second.redact("first: other@example.org");
        let again = second.redact(&text).into_owned();
        assert!(first.ends_with("go to [EMAIL_1] or [PHONE_1]."), "{first}");
        // Numbered in the session that redacts, not the one that scanned.
        assert!(again.ends_with("go to [EMAIL_2] or [PHONE_1]."), "{again}");
        assert_eq!(second.counts()["EMAIL"], 2);
    }

    #[test]
    fn the_same_value_gets_the_same_placeholder_and_types_count_separately() {
        let mut session = Session::new(Mode::Logs, &[]);
        let text = "Mail anna@example.org, IBAN DE89370400440532013000, again anna@example.org, or bob@example.org";
        let redacted = session.redact(text);
        assert_eq!(
            redacted,
            "Mail [EMAIL_1], IBAN [IBAN_1], again [EMAIL_1], or [EMAIL_2]"
        );
        assert_eq!(session.counts()["EMAIL"], 3);
        assert_eq!(session.counts()["IBAN"], 1);
        assert_eq!(session.restore(&redacted), text);
    }

    #[test]
    fn tenant_patterns_redact_with_their_name_and_bad_ones_are_refused() {
        let patterns = [Pattern {
            name: "customer_no".into(),
            regex: r"KD-\d{6}".into(),
        }];
        let mut session = Session::new(Mode::Upstream, &patterns);
        assert_eq!(
            session.redact("Kunde KD-123456 schreibt"),
            "Kunde [CUSTOMER_NO_1] schreibt"
        );
        let bad = Pattern {
            name: "x".into(),
            regex: "(".into(),
        };
        assert_eq!(bad.compile().unwrap_err().part, "regex");
        let empty = Pattern {
            name: "x".into(),
            regex: "a*".into(),
        };
        assert_eq!(empty.compile().unwrap_err().part, "regex");
        let named = Pattern {
            name: "1x".into(),
            regex: "a".into(),
        };
        assert_eq!(named.compile().unwrap_err().part, "name");
    }

    #[test]
    fn unknown_brackets_are_left_alone_when_restoring() {
        let mut session = Session::new(Mode::Upstream, &[]);
        session.redact("anna@example.org");
        assert_eq!(
            session.restore("[EMAIL_1] [EMAIL_2] [x] [EMAIL_1"),
            "anna@example.org [EMAIL_2] [x] [EMAIL_1"
        );
    }
}
