//! Text preparation for the classifier: the parts of a request that are
//! read, and their normal form.
//!
//! The normal form is a string of lowercase tokens separated by one space,
//! so a rule term (normalised the same way) is found by a plain substring
//! search, and a match is checked against token starts and ends afterwards.
//! Each token also carries the number of its sentence, because an anchor
//! and an act count together only within one sentence or a few tokens.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

/// How many of the latest user turns are read besides the system messages.
pub(super) const RECENT_USER_TURNS: usize = 4;

/// What the learned layers derive from one text alone, computed once and
/// shared by the copies of a text kept for its next request
/// ([`recent`](super::recent)).
#[derive(Debug, Default)]
pub(super) struct Derived {
    /// What the n-gram models read in the text, with their sums.
    pub ngram: OnceLock<super::ngram::Reading>,
    /// The lexical model's features in the text, each once, sorted.
    pub lexical: OnceLock<Vec<u32>>,
}

/// Normalised text with its token and sentence boundaries.
#[derive(Debug, Default, Clone)]
pub(super) struct Normalised {
    /// Tokens joined by single spaces. Shared, like the token tables, by
    /// the copies of a text kept for its next request, so taking a long
    /// prompt's reading from [`recent`](super::recent) copies none of them.
    pub text: Arc<str>,
    /// Byte offset in `text` where each token starts.
    pub starts: Arc<[u32]>,
    /// Sentence number of each token.
    pub sentences: Arc<[u32]>,
    /// Tokens with a letter (numbers are no evidence of a language).
    pub words: usize,
    /// The pack language whose stop words the text has most of, set by the
    /// scan; None when unclear.
    pub language: Option<u8>,
    /// What the learned layers read in it.
    pub derived: Arc<Derived>,
}

impl Normalised {
    /// The token a byte offset of `text` falls in.
    pub fn token_at(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s as usize <= offset) - 1
    }

    /// The normalised words of tokens `first..=last`.
    pub fn words(&self, first: u32, last: u32) -> &str {
        let start = self.starts[first as usize] as usize;
        let end = self
            .starts
            .get(last as usize + 1)
            .map_or(self.text.len(), |&s| s as usize - 1);
        &self.text[start..end]
    }

    pub fn is_token_end(&self, offset: usize) -> bool {
        offset == self.text.len() || self.text.as_bytes()[offset] == b' '
    }
}

/// Normalises `text`: lowercase; compatibility forms (full-width letters,
/// ligatures) and the diacritics of German, French, Spanish, Italian,
/// Dutch, Polish and Portuguese folded;
/// zero-width characters dropped (they are a classic way to split a word);
/// leetspeak digits 0, 1, 3, 4 read as o, i, e, a inside words that also
/// have letters ("cr3d1t" but not "2026"); everything that is not a letter
/// or digit separates tokens.
pub(super) fn normalise(text: &str) -> Normalised {
    let mut out = Building {
        text: String::with_capacity(text.len()),
        starts: Vec::with_capacity(text.len() / 5),
        sentences: Vec::with_capacity(text.len() / 5),
        words: 0,
    };
    let mut sentence = 0u32;
    let mut in_token = false;
    let mut token_start = 0usize;
    let mut has_letter = false;
    let mut has_leet = false;
    let mut chars = text.chars().peekable();
    while let Some(raw) = chars.next() {
        if is_invisible(raw) {
            continue;
        }
        let c = compatibility(raw);
        if c.is_alphanumeric() {
            if !in_token {
                if !out.text.is_empty() {
                    out.text.push(' ');
                }
                token_start = out.text.len();
                out.starts.push(token_start as u32);
                out.sentences.push(sentence);
                in_token = true;
                has_letter = false;
                has_leet = false;
            }
            if c.is_ascii() {
                // Most text: no case mapping tables, nothing to fold.
                let lower = c.to_ascii_lowercase();
                has_letter |= lower.is_ascii_alphabetic();
                has_leet |= matches!(lower, '0' | '1' | '3' | '4');
                out.text.push(lower);
                continue;
            }
            for lower in c.to_lowercase() {
                match fold(lower) {
                    Folded::One(f) => {
                        has_letter |= f.is_alphabetic();
                        has_leet |= matches!(f, '0' | '1' | '3' | '4');
                        out.text.push(f);
                    }
                    Folded::Two(a, b) => {
                        has_letter = true;
                        out.text.push(a);
                        out.text.push(b);
                    }
                }
            }
            continue;
        }
        if in_token {
            if has_letter && has_leet {
                fold_leetspeak(&mut out.text, token_start);
            }
            out.words += usize::from(has_letter);
            in_token = false;
        }
        let ends_sentence = match c {
            '!' | '?' | ';' | '\n' | '\u{3002}' => true,
            // "0.09" and "v1.2" are not sentence ends.
            '.' => chars.peek().is_none_or(|n| n.is_whitespace()),
            _ => false,
        };
        if ends_sentence {
            sentence += 1;
        }
    }
    if in_token {
        if has_letter && has_leet {
            fold_leetspeak(&mut out.text, token_start);
        }
        out.words += usize::from(has_letter);
    }
    Normalised {
        text: out.text.into(),
        starts: out.starts.into(),
        sentences: out.sentences.into(),
        words: out.words,
        language: None,
        derived: Arc::default(),
    }
}

/// A [`Normalised`] text being written.
struct Building {
    text: String,
    starts: Vec<u32>,
    sentences: Vec<u32>,
    words: usize,
}

/// Replaces leetspeak digits in the token at `start..` in place (ASCII for
/// ASCII, so byte offsets are unchanged and nothing is allocated).
fn fold_leetspeak(text: &mut String, start: usize) {
    let mut at = start;
    while let Some(offset) = text[at..].find(['0', '1', '3', '4']) {
        at += offset;
        let letter = match text.as_bytes()[at] {
            b'0' => "o",
            b'1' => "i",
            b'3' => "e",
            _ => "a",
        };
        text.replace_range(at..at + 1, letter);
        at += 1;
    }
}

fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}' | '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{0300}'..='\u{036f}'
    )
}

/// The compatibility forms that matter for matching: full-width ASCII.
fn compatibility(c: char) -> char {
    match c {
        '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0).unwrap_or(c),
        c => c,
    }
}

enum Folded {
    One(char),
    Two(char, char),
}

fn fold(c: char) -> Folded {
    Folded::One(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ą' => 'a',
        'ç' | 'ć' => 'c',
        'è' | 'é' | 'ê' | 'ë' | 'ę' => 'e',
        'ł' => 'l',
        'ń' => 'n',
        'ś' => 's',
        'ź' | 'ż' => 'z',
        'ì' | 'í' | 'î' | 'ï' => 'i',
        'ñ' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' => 'o',
        'ù' | 'ú' | 'û' | 'ü' => 'u',
        'ý' | 'ÿ' => 'y',
        'ß' => return Folded::Two('s', 's'),
        'æ' => return Folded::Two('a', 'e'),
        'œ' => return Folded::Two('o', 'e'),
        'ﬁ' => return Folded::Two('f', 'i'),
        'ﬂ' => return Folded::Two('f', 'l'),
        c => c,
    })
}

/// The declared use: `purpose` and `deployer_context` as one text.
pub(super) fn declared_text(purpose: Option<&str>, deployer_context: Option<&Value>) -> String {
    let mut text = purpose.unwrap_or_default().to_owned();
    if let Some(context) = deployer_context {
        text.push('\n');
        push_text(context, &mut text);
    }
    text
}

/// The system and developer messages: instructions written by the
/// deployer or by a tool's vendor, not by the end user.
pub(super) fn instructions_text(messages: &Value) -> String {
    let mut text = String::new();
    for m in messages
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| matches!(m["role"].as_str(), Some("system" | "developer")))
    {
        push_content(&m["content"], &mut text);
        text.push('\n');
    }
    text
}

/// The latest user turns: what the end user asks.
pub(super) fn user_text(messages: &Value) -> String {
    let mut text = String::new();
    let Some(messages) = messages.as_array() else {
        return text;
    };
    let users = messages.iter().filter(|m| m["role"] == "user").count();
    for m in messages
        .iter()
        .filter(|m| m["role"] == "user")
        .skip(users.saturating_sub(RECENT_USER_TURNS))
    {
        push_content(&m["content"], &mut text);
        text.push('\n');
    }
    text
}

/// Appends the text of a message's content: a string or its text parts
/// (image, audio and file parts carry no words, and their URLs and base64
/// data must not be read as words).
fn push_content(content: &Value, out: &mut String) {
    match content {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(parts) => {
            for part in parts {
                match part {
                    Value::String(s) => {
                        out.push_str(s);
                        out.push('\n');
                    }
                    _ => {
                        if let Some(s) = part["text"].as_str() {
                            out.push_str(s);
                            out.push('\n');
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// Appends every string in a JSON value (`deployer_context` has no fixed
/// shape); each piece ends a sentence.
fn push_text(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| push_text(v, out)),
        Value::Object(map) => match map.get("text") {
            Some(text) => push_text(text, out),
            None => map.values().for_each(|v| push_text(v, out)),
        },
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_case_diacritics_leetspeak_and_invisible_characters() {
        let n =
            normalise("Bonität der SCHUFA: cr3d1t sc0re, 2026! Straße\u{200b}n ＣＶ e\u{301}te");
        assert_eq!(
            &*n.text,
            "bonitat der schufa credit score 2026 strassen cv ete"
        );
        assert_eq!(*n.sentences, [0, 0, 0, 0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn only_the_text_parts_of_a_message_are_read() {
        let messages = serde_json::json!([
            { "role": "user", "content": [
                { "type": "text", "text": "Describe this picture." },
                { "type": "image_url", "image_url": { "url": "https://example.com/faces-of-candidates.png" } },
            ] },
            { "role": "assistant", "content": "An assistant turn is not read." },
        ]);
        assert_eq!(user_text(&messages), "Describe this picture.\n\n");
        assert_eq!(instructions_text(&messages), "");
    }

    #[test]
    fn a_decimal_point_does_not_end_a_sentence() {
        let n = normalise("troponin 0.09. Next");
        assert_eq!(&*n.text, "troponin 0 09 next");
        assert_eq!(*n.sentences, [0, 0, 0, 1]);
    }
}
