//! The words around a candidate number that decide what it is, in the
//! eight languages of the labelled sets: the name of an identifier that
//! is a bare 9 or 11 digit number (BSN, NIF, Steuer-ID, PESEL), a phone
//! word, where a sentence starts. The labels of references that are not
//! personal data (an order, invoice, tracking or part number, a VAT or
//! company register number) are in `labels.rs`, the words that make a
//! dotted quad a version in `version.rs`.
//!
//! The national phone formats, which these words tell from references,
//! are in `phone.rs`. Words are matched at the start of a word, ignoring
//! ASCII case: `tel` names a phone, `Bestellnummer` does not contain
//! `tel` as a word.

use super::chars::letter_before;
use super::labels::labels_reference;

/// Keywords that name an identifier, looked for just before a bare number.
pub(super) const BSN_WORDS: &[&str] = &["bsn", "burgerservice", "sofi", "citizen service"];
/// A taxpayer is a "sujeito passivo" in Portuguese tax documents.
pub(super) const NIF_WORDS: &[&str] = &["nif", "contribuinte", "fiscal", "sujeito passivo"];
pub(super) const STEUER_WORDS: &[&str] =
    &["steuer", "idnr", "identifikationsnummer", "tax id", "tin"];
pub(super) const PESEL_WORDS: &[&str] = &["pesel"];
pub(super) const PHONE_WORDS: &[&str] = &[
    "tel",
    "phone",
    "fon",
    "mobil",
    "móvil",
    "movil",
    "cell",
    "handy",
    "llam",
    "chiam",
    "bel ",
    "bellen",
    "zadzwo",
    "komórk",
    "contact",
    "kontakt",
    "whatsapp",
    "sms",
    "call",
    "ring",
    "appel",
    // a message left on a number: `déjame un mensaje en el 648 ...`
    // (not English "message": "System message: taxpayer number ...")
    "mensaj",
    "mensag",
    // a text message sent to a number (not "text" alone: "the text 0612...")
    "text me",
    "text us",
    "txt",
    // a number carried to another operator (`portabilità`, `portability`,
    // `portabilidad`), and German's word for a phone's number
    "portabilit",
    "rufnummer",
];

/// The lower-cased bytes of `b[from..to]`.
fn lower(b: &[u8], from: usize, to: usize) -> Vec<u8> {
    b[from..to].iter().map(u8::to_ascii_lowercase).collect()
}

/// The last place in `window` where one of `words` starts a word (not
/// after a letter); with `whole`, also ends one. One backward pass over
/// the word starts: windows are short, and a searcher built per word
/// would cost more than the search.
pub(super) fn last_word(window: &[u8], words: &[&str], whole: bool) -> Option<usize> {
    // The bytes the words start with: most places start none of them, and
    // a compare per word and place is what the scan would pay for.
    let mut first = [false; 256];
    for w in words {
        first[usize::from(w.as_bytes()[0])] = true;
    }
    (0..window.len())
        .rev()
        .filter(|&at| {
            first[usize::from(window[at])] && (at == 0 || !window[at - 1].is_ascii_alphabetic())
        })
        .find(|&at| {
            words.iter().any(|w| {
                w.as_bytes()[0] == window[at]
                    && window[at..].starts_with(w.as_bytes())
                    && (!whole
                        || window
                            .get(at + w.len())
                            .is_none_or(|c| !c.is_ascii_alphabetic()))
            })
        })
}

/// Where one of `words` last starts a word in `window`.
pub(super) fn starts(window: &[u8], words: &[&str]) -> Option<usize> {
    last_word(window, words, false)
}

/// The line holding the byte at `at`: its first byte, and the byte after
/// its last (its newline, or the end of the text).
pub(super) fn line_bounds(b: &[u8], at: usize) -> (usize, usize) {
    let first = b[..at]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |nl| nl + 1);
    let end = b[at..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |nl| at + nl);
    (first, end)
}

/// The lower-cased text of the line up to `start`, at most `len` bytes.
pub(super) fn line_before(b: &[u8], start: usize, len: usize) -> Vec<u8> {
    let from = start.saturating_sub(len);
    let line = b[from..start]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(from, |at| from + at + 1);
    lower(b, line, start)
}

/// Whether one of `words` starts a word in the 48 bytes before `start`.
pub(super) fn named_before(b: &[u8], start: usize, words: &[&str]) -> bool {
    let window = lower(b, start.saturating_sub(48), start);
    starts(&window, words).is_some()
}

/// Whether the identifier at `start` is named: one of `words` in the 96
/// bytes of its line before it ("die Identifikationsnummer unseres Sohnes
/// lautet ..."), or in the header of its column when it is a cell of a
/// delimited table; and it is not labelled as a reference.
pub(super) fn named(b: &[u8], start: usize, words: &[&str]) -> bool {
    // `pers_nr=0412 idnr=19639850247`: the nearest word names it; so does
    // the word before a bare number sign (`contribuinte n.º 368 608 000`).
    let before = last_words(b, start, 4);
    let nearest = &before[..before.len().min(2)];
    let names = |w: &Vec<u8>| words.iter().any(|n| w.starts_with(n.as_bytes()));
    if nearest.first().is_some_and(names)
        || before
            .iter()
            .find(|w| !is_number_sign(w))
            .is_some_and(names)
    {
        return true;
    }
    if labels_reference(nearest) {
        return false;
    }
    let mut window = line_before(b, start, 96);
    if is_bare_answer(&window) {
        // `> ja: 283215367` under the quoted question that names it.
        let line_start = start - window.len();
        if line_start > 0 {
            let mut question = line_before(b, line_start - 1, 96);
            question.push(b'\n');
            question.append(&mut window);
            window = question;
        }
    }
    starts(&window, words).is_some()
        || column_header(b, start).is_some_and(|cell| starts(&cell, words).is_some())
}

/// `n`, `nr`, `no`, `num`, `nº`, `n°`, `º`: a number sign, which labels
/// the number with the word before it.
fn is_number_sign(word: &[u8]) -> bool {
    ["n", "nr", "no", "num", "nº", "n°", "º", "°"]
        .iter()
        .any(|sign| word == sign.as_bytes())
}

/// A line that holds nothing before the number but a quote mark and a
/// word or two of assent (`> ja: `, `claro: `, `- yes, `): an answer, whose
/// question is the line above.
fn is_bare_answer(line: &[u8]) -> bool {
    line.len() <= 16
        && !line.iter().any(u8::is_ascii_digit)
        && line
            .split(|c| !is_letter(*c))
            .filter(|w| !w.is_empty())
            .count()
            <= 2
}

/// When the number at `start` begins a cell of a delimited table (`;`,
/// tab, `|` or `,`, the most frequent of them in its line), the header of
/// its column: that cell of the first line above with as many delimiters
/// (the table's first row), lower-cased.
fn column_header(b: &[u8], start: usize) -> Option<Vec<u8>> {
    let (line_start, line_end) = line_bounds(b, start);
    let line = &b[line_start..line_end];
    let delimiter = *[b';', b'\t', b'|', b',']
        .iter()
        .max_by_key(|&&d| line.iter().filter(|&&c| c == d).count())?;
    let count = |l: &[u8]| l.iter().filter(|&&c| c == delimiter).count();
    let cells = count(line);
    // A cell may be padded with spaces (`| 123 |`, Markdown tables).
    let cell_start = b[line_start..start]
        .iter()
        .rposition(|&c| c != b' ')
        .map_or(line_start, |at| line_start + at + 1);
    if cells == 0 || (cell_start > line_start && b[cell_start - 1] != delimiter) {
        return None;
    }
    let column = count(&b[line_start..start]);
    // The rows above with the same shape; the first of them is the header.
    let mut header = None;
    let mut end = line_start;
    while end > 0 {
        let (above_start, _) = line_bounds(b, end - 1);
        let above = &b[above_start..end - 1];
        if count(above) != cells {
            break;
        }
        header = Some(above);
        end = above_start;
    }
    let cell = header?.split(|&c| c == delimiter).nth(column)?;
    Some(cell.iter().map(u8::to_ascii_lowercase).collect())
}

/// A letter of a word: ASCII letters, and any byte of a non-ASCII
/// character (accented letters).
pub(super) fn is_letter(c: u8) -> bool {
    c.is_ascii_alphabetic() || c >= 0x80
}

/// The `count` words just before `start`, nearest first (skipping digits
/// and punctuation between them, on the same line), lower-cased.
pub(super) fn last_words(b: &[u8], start: usize, count: usize) -> Vec<Vec<u8>> {
    let mut words = Vec::with_capacity(count);
    let mut p = start;
    while words.len() < count {
        // Punctuation outside ASCII (`«`, `…`) is no word.
        while p > 0 {
            let (letter, len) = letter_before(b, p);
            if letter {
                break;
            }
            if b[p - 1] == b'\n' {
                return words;
            }
            p -= len;
        }
        if p == 0 {
            break;
        }
        let end = p;
        while p > 0 {
            let (letter, len) = letter_before(b, p);
            if !letter {
                break;
            }
            p -= len;
        }
        words.push(lower(b, p, end));
    }
    words
}

/// Where the sentence holding `start` starts, in its line and the 96
/// bytes before it: after a `.`, `!` or `?` followed by a space and a
/// capital (`VAT. Customer`); not after an abbreviation before a digit
/// (`Nr. 48`) or a lower-case word (`incl. VAT`).
pub(super) fn sentence_start(b: &[u8], start: usize) -> Option<usize> {
    let from = start.saturating_sub(96);
    let mut p = start;
    while p > from + 1 {
        p -= 1;
        match b[p] {
            b'\n' => return None,
            b' ' if matches!(b[p - 1], b'.' | b'!' | b'?')
                && b.get(p + 1)
                    .is_some_and(|c| c.is_ascii_uppercase() || *c >= 0xC3) =>
            {
                return Some(p + 1);
            }
            _ => {}
        }
    }
    None
}

/// Whether the number `b[start..end]` is a quoted value of a record (SQL
/// `VALUES (..., '...')`, a JSON array or object): typed as text, it is
/// an identifier, not an amount or a count.
pub(super) fn quoted_value(b: &[u8], start: usize, end: usize) -> bool {
    if start < 2 {
        return false;
    }
    let quote = b[start - 1];
    if !matches!(quote, b'\'' | b'"') || b.get(end) != Some(&quote) {
        return false;
    }
    let before = b[..start - 1].iter().rev().find(|&&c| c != b' ');
    matches!(before, Some(b',' | b'(' | b'[' | b':'))
}

/// Names of the national identifiers: a number they name is no phone,
/// even with a wrong check digit (`the PESEL typed, 04250904675, ...`).
const ID_NAMES: &[&str] = &[
    "pesel",
    "burgerservice",
    "contribuinte",
    "steuer",
    "identifikationsnummer",
    "sécurité sociale",
    "securite sociale",
    "codice fiscale",
    "social security",
    "citizen service",
    "sujeito passivo",
];

/// Short names of the identifiers a phone-shaped number can be, as whole
/// words ("bsn", not a word that starts with it). Not "nie", "dni" or
/// "nir": a NIE starts with a letter, a DNI has one, a NIR has 15 digits,
/// and "nie" (Polish: not) and "dni" (Polish: days) are common words.
const ID_WORDS: &[&str] = &["bsn", "nif", "idnr"];

/// Whether an identifier's name is nearer before `start`, in its line,
/// than any phone word.
pub(super) fn id_named(b: &[u8], start: usize) -> bool {
    let window = line_before(b, start, 96);
    let last = |words: &[&str]| starts(&window, words);
    let whole = last_word(&window, ID_WORDS, true);
    // The name names the first number after it: `Steuer-ID 29 803 587
    // 418, Rückfragen unter 0157 ...` leaves the phone a phone.
    let named_here = |id: usize| !window[id..].iter().any(u8::is_ascii_digit);
    match (last(ID_NAMES).max(whole), last(PHONE_WORDS)) {
        (Some(id), Some(phone)) => id > phone && named_here(id),
        (Some(id), None) => named_here(id),
        (None, _) => false,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Asserts `test` answers `expected` for the number that ends each
    /// text (it starts after the last space). Shared with `version`'s tests.
    pub(in crate::pii) fn answers(test: fn(&[u8], usize) -> bool, expected: bool, texts: &[&str]) {
        for text in texts {
            let at = text.rfind(' ').unwrap() + 1;
            assert_eq!(test(text.as_bytes(), at), expected, "{text}");
        }
    }

    #[test]
    fn short_identifier_names_are_whole_words() {
        // "bsnr" is no BSN; Polish "nie" (not) names nothing; a name names
        // the first number after it only.
        answers(
            id_named,
            true,
            &["BSN: 0612", "The PESEL typed in the form, 0425"],
        );
        answers(
            id_named,
            false,
            &[
                "bsnr 0612",
                "nie mog\u{119}, kontakt 0612",
                "NIF 123, tel. 0612",
                "PESEL 6710, kontakt 0612",
            ],
        );
    }
}
