//! The words around a candidate number that decide what it is, in the
//! eight languages of the labelled sets: the name of an identifier that
//! is a bare 9 or 11 digit number (BSN, NIF, Steuer-ID, PESEL), a phone
//! word, the label of a reference that is not personal data (an order,
//! invoice, tracking or part number, a VAT or company register number).
//! The words that make a dotted quad a version are in `version.rs`.
//!
//! The national phone formats, which these words tell from references,
//! are in `phone.rs`. Words are matched at the start of a word, ignoring
//! ASCII case: `tel` names a phone, `Bestellnummer` does not contain
//! `tel` as a word.

use super::chars::letter_before;

/// Keywords that name an identifier, looked for just before a bare number.
pub(super) const BSN_WORDS: &[&str] = &["bsn", "burgerservice", "sofi", "citizen service"];
/// A taxpayer is a "sujeito passivo" in Portuguese tax documents.
pub(super) const NIF_WORDS: &[&str] = &["nif", "contribuinte", "fiscal", "sujeito passivo"];
pub(super) const STEUER_WORDS: &[&str] =
    &["steuer", "idnr", "identifikationsnummer", "tax id", "tin"];
pub(super) const PESEL_WORDS: &[&str] = &["pesel"];
pub(super) const PHONE_WORDS: &[&str] = &[
    "tel", "phone", "fon", "mobil", "móvil", "movil", "cell", "handy", "llam", "chiam", "bel ",
    "bellen", "zadzwo", "komórk", "contact", "kontakt", "whatsapp", "sms", "call", "ring", "appel",
    // a message left on a number: `déjame un mensaje en el 648 ...`
    // (not English "message": "System message: taxpayer number ...")
    "mensaj", "mensag",
    // a text message sent to a number (not "text" alone: "the text 0612...")
    "text me", "text us", "txt",
];

/// Labels of numbers that are references, not a person's phone: word
/// starts (`rechnung` finds `Rechnungsnummer`).
const LABEL_STEMS: &[&str] = &[
    // orders, invoices, shipments, tickets, claims, policies
    "order",
    "bestell",
    "auftrag",
    "commande",
    "pedido",
    "ordine",
    "zamówien",
    "zamowien",
    "bestelling",
    "encomenda",
    "invoice",
    "rechnung",
    "factur",
    "fattur",
    "faktur",
    "fatura",
    "track",
    "sendung",
    "colis",
    "envío",
    "envio",
    "spedizion",
    "przesył",
    "zending",
    "ticket",
    "vorgang",
    "dossier",
    "expedient",
    "pratica",
    "sprawa",
    "sprawy",
    "sygnatur",
    "zaak",
    "policy",
    "police",
    "póliza",
    "poliza",
    "polizza",
    "apólice",
    "apolice",
    "claim",
    "schaden",
    "sinistr",
    "szkod",
    "schade",
    "referen",
    "referênc",
    "référenc",
    "entidade",
    "kenmerk",
    "betalingskenmerk",
    "riferiment",
    "protocol",
    "protokol",
    "protokó",
    "aktenzeichen",
    "kundennummer",
    "kundennr",
    "klantnummer",
    "klantnr",
    // a contract's number written as one word (`Vertragsnummer`,
    // `contractnummer`); a contract word alone is prose ("il rinnovo del
    // contratto; fisso 011 ..."), see `customer_number`
    "vertragsn",
    "contractn",
    // products and parts
    "artikel",
    "article",
    "artícul",
    "articol",
    "artykuł",
    "ersatzteil",
    "pièce",
    "pieza",
    "ricambi",
    "onderdeel",
    "część",
    "czesc",
    "peça",
    "peca",
    "model",
    "serial",
    "serien",
    "série",
    "serie",
    "seryjn",
    "isbn",
    // company and tax numbers of companies
    "partita",
    "siret",
    "siren",
    "regon",
    "handelsregister",
    "registro",
];
/// Labels written as whole words (abbreviations and short words that
/// start other words).
const LABEL_WORDS: &[&str] = &[
    "n",
    "nr",
    "no",
    "nº",
    "n°",
    "num",
    "part",
    "typ",
    "type",
    "tipo",
    "iva",
    "nip",
    "cif",
    "ref",
    "rea",
    "lot",
    "lote",
    "lotto",
    "polis",
    "polisnummer",
    "sku",
    "ean",
    "vat",
    "ust",
    "krs",
    "kvk",
];

/// Company and tax register labels, which label a number from up to
/// four words before it (`RCS Paris B 552 120 226`, `Partita IVA della
/// società: 0574...`): whole words.
const REGISTER_WORDS: &[&str] = &[
    "rcs",
    "siren",
    "siret",
    "partita",
    "iva",
    "handelsregister",
    "hrb",
    "hra",
    "kvk",
    "krs",
    "regon",
    "nip",
    "cif",
    "vat",
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
fn is_letter(c: u8) -> bool {
    c.is_ascii_alphabetic() || c >= 0x80
}

/// The `count` words just before `start`, nearest first (skipping digits
/// and punctuation between them, on the same line), lower-cased.
fn last_words(b: &[u8], start: usize, count: usize) -> Vec<Vec<u8>> {
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

/// German and Dutch compounds whose last part is a reference's label
/// (`Buchungscode`, `klantreferentie`, `Kundenreferenz`): the label starts
/// inside the word.
fn compound_label(word: &[u8]) -> bool {
    const PARTS: &[&[u8]] = &[b"referen", b"code", b"kenmerk"];
    word.len() > 6
        && PARTS
            .iter()
            .any(|part| word[1..].windows(part.len()).any(|w| w == *part))
}

/// Whether the number at `start` is labelled as a reference (an order,
/// invoice, part, policy or company number...) by one of the two words
/// before it, and not as a phone by the other.
pub(super) fn labelled_reference(b: &[u8], start: usize) -> bool {
    let mut words = last_words(b, start, 4);
    // `your reference is 0 800 ...`: the label is read past a verb that
    // joins it to the number, and an article (words read again only then).
    let joining = match (words.first(), words.get(1)) {
        (Some(verb), _) if joins(verb) => 1,
        (Some(article), Some(verb)) if is_article(article) && joins(verb) => 2,
        _ => 0,
    };
    if joining > 0 {
        words = last_words(b, start, 4 + joining).split_off(joining);
    }
    // `no` is a word in Portuguese, Spanish and Italian (`disponível no
    // 00351 ...`): a number sign only as `no.`, `no:` or `nº`.
    let skip = usize::from(words.first().is_some_and(|w| w == b"no") && !signed_no(b, start));
    labels_reference(&words[skip..words.len().min(2)])
        || register_number(&words)
        || customer_number(&words)
}

/// Verbs that join a label to its number (`is`, `est`, `lautet`, `è`,
/// `jest`).
fn joins(word: &[u8]) -> bool {
    const JOINING: &[&str] = &[
        "is", "est", "ist", "lautet", "es", "è", "é", "jest", "wynosi",
    ];
    JOINING.iter().any(|j| word == j.as_bytes())
}

/// Articles after a joining verb (`est le`, `es el`, `é o`). An article
/// alone joins nothing (`ligue para o 912 ...`).
fn is_article(word: &[u8]) -> bool {
    const ARTICLES: &[&str] = &["le", "la", "el", "il", "the", "o", "a", "het"];
    ARTICLES.iter().any(|a| word == a.as_bytes())
}

/// Words that say "customer" or "client" (`klienta`, `cliente`, `Kunden`),
/// "case" (`case no.`) or "contract" (`numer umowy`, `contrat n°`): what
/// a number of a record is kept for.
const CUSTOMER_STEMS: &[&str] = &[
    "customer", "client", "klient", "klant", "kunde", "case", "contract", "vertrag", "contrat",
    "kontrakt", "umow",
];
/// Words that say "number" or "code" of something.
const NUMBER_WORDS: &[&str] = &[
    "number", "numer", "número", "numero", "numéro", "nummer", "nr", "no", "n", "nº", "n°", "º",
    "°", "num", "code", "codice", "código", "codigo", "kod",
];

/// Whether the number is labelled as a customer (case, contract) number by the
/// words before it (nearest first): the number word and the customer word
/// side by side in either order (`nr klienta`, `customer no.`,
/// `Kunden-Nr.`, `codice cliente`), or joined by `de` (`código de
/// cliente`); no phone word nearer. "The customer's number" (`número do cliente`) is not
/// joined so and may be their phone.
fn customer_number(words: &[Vec<u8>]) -> bool {
    let customer = |w: &Vec<u8>| CUSTOMER_STEMS.iter().any(|c| w.starts_with(c.as_bytes()));
    let number = |w: &Vec<u8>| NUMBER_WORDS.iter().any(|n| w.as_slice() == n.as_bytes());
    let phone = |w: &Vec<u8>| PHONE_WORDS.iter().any(|p| w.starts_with(p.as_bytes()));
    for k in 0..words.len().min(3) {
        if phone(&words[k]) {
            return false;
        }
        let Some(next) = words.get(k + 1) else {
            return false;
        };
        let joined_by_de = next == b"de" && words.get(k + 2).is_some_and(number);
        if (customer(&words[k]) && (number(next) || joined_by_de))
            || (number(&words[k]) && customer(next))
        {
            return true;
        }
    }
    false
}

/// Whether a company or tax register label is among `words` (the four
/// before a number, nearest first), with no phone word between it and the
/// number (`RCS Paris B 552 120 226`, `Partita IVA della società: 0574...`).
fn register_number(words: &[Vec<u8>]) -> bool {
    for word in words {
        if PHONE_WORDS.iter().any(|p| word.starts_with(p.as_bytes())) {
            return false;
        }
        if REGISTER_WORDS
            .iter()
            .any(|r| word.as_slice() == r.as_bytes())
        {
            return true;
        }
    }
    false
}

/// Whether the `no` just before `start` is followed by `.`, `:` or `#`.
fn signed_no(b: &[u8], start: usize) -> bool {
    let gap_start = b[..start]
        .iter()
        .rposition(|&c| is_letter(c))
        .map_or(0, |at| at + 1);
    b[gap_start..start]
        .iter()
        .any(|c| matches!(c, b'.' | b':' | b'#'))
}

/// [`labelled_reference`] on the two words before the number.
fn labels_reference(words: &[Vec<u8>]) -> bool {
    let is_phone = |w: &Vec<u8>| PHONE_WORDS.iter().any(|p| w.starts_with(p.as_bytes()));
    let is_label = |w: &Vec<u8>| {
        LABEL_WORDS.iter().any(|l| w.as_slice() == l.as_bytes())
            || LABEL_STEMS.iter().any(|l| w.starts_with(l.as_bytes()))
            || compound_label(w)
    };
    // `P.IVA`: the last word is `iva`, the one before it `p`.
    !words.iter().any(is_phone) && words.iter().any(is_label)
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
    fn a_reference_label_is_one_of_the_two_words_before_and_a_phone_word_wins() {
        answers(
            labelled_reference,
            true,
            &[
                "Tracking BRT: 0847",
                "P.IVA 0123",
                "Polizza RCA n. 0123",
                "Ersatzteil Typ 0301",
                "Rechnungsnummer: 0301",
                "REGON 0123",
            ],
        );
        answers(
            labelled_reference,
            false,
            &[
                "Tel. 0301",
                "Bestellung 4711, Tel. 0301",
                "Rechnung offen, bitte rufen Sie an: 0301",
                "ordine n. 1\nchiamami 0301",
                "Call 0301",
            ],
        );
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
