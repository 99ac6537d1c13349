//! The labels of numbers that are references, not personal data: an
//! order, invoice, ticket or part number, a customer's, case's or
//! contract's number, a company or tax register number. A phone-shaped
//! number a label names is no phone. A label names the number right after
//! it, in its own sentence. Split from `context.rs`, which reads the
//! words that name identifiers and phones.

use super::chars::letter_before;
use super::context::{PHONE_WORDS, is_letter, last_word, last_words, line_before, sentence_start};

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
    // travel tickets: `billet`, `billete`, `biglietto`, `bilhete`, `bilet`
    "billet",
    "bigliett",
    "bilhete",
    "bilet",
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
    // A label names the number right after it: with another number
    // between (`nr 7 – 0612...`, a list's position), it is spent.
    if number_between(b, start) {
        return false;
    }
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
    let labels = |words: &[Vec<u8>]| {
        // `no` is a word in Portuguese, Spanish and Italian (`disponível no
        // 00351 ...`): a number sign only as `no.`, `no:` or `nº`.
        let skip = usize::from(words.first().is_some_and(|w| w == b"no") && !signed_no(b, start));
        labels_reference(&words[skip..words.len().min(2)])
            || register_number(words)
            || customer_number(words)
    };
    // The rules below only take a label away: most numbers have none, and
    // do not pay for them.
    if !labels(&words) {
        return false;
    }
    // A label of an earlier sentence labels nothing here (`... + VAT.
    // Customer: 0113 ...`).
    let in_sentence = words_after(b, start, sentence_start(b, start), words.len() + joining);
    words.truncate(in_sentence.saturating_sub(joining));
    // A tax added to a price (`890 € + IVA, cliente ...`, `plus VAT`)
    // labels nothing, and the words before it are the price's.
    if let Some(tax) = words.iter().position(|w| {
        REGISTER_WORDS
            .iter()
            .find(|r| w.as_slice() == r.as_bytes())
            .is_some_and(|r| tax_of_price(b, start, r))
    }) {
        words.truncate(tax);
    }
    labels(&words)
}

/// Whether a number stands between the number at `start` and the word
/// before it (`nr 7 – 511 ...`): the word labelled that one.
fn number_between(b: &[u8], start: usize) -> bool {
    let mut p = start;
    while p > 0 {
        let (letter, len) = letter_before(b, p);
        if letter || b[p - 1] == b'\n' {
            break;
        }
        if b[p - 1].is_ascii_digit() {
            return true;
        }
        p -= len;
    }
    false
}

/// How many of the `count` words before `start` (nearest first) lie at or
/// after `floor` (all of them without one).
fn words_after(b: &[u8], start: usize, floor: Option<usize>, count: usize) -> usize {
    let Some(floor) = floor else {
        return count;
    };
    let mut words = 0;
    let mut in_word = false;
    let mut p = start;
    while p > floor {
        let (letter, len) = letter_before(b, p);
        words += usize::from(letter && !in_word);
        in_word = letter;
        p -= len;
    }
    words.min(count)
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

/// Words that add a tax to a price (`incl. VAT`, `zzgl. USt`, `più IVA`).
const TAX_ADDED: &[&str] = &[
    "incl",
    "including",
    "excl",
    "excluding",
    "plus",
    "inkl",
    "zzgl",
    "exkl",
    "hors",
    "più",
    "mais",
    "más",
    "bez",
    "exclusief",
    "inclusief",
];

/// Whether the last `word` before `start` in its line is a tax added to a
/// price: after a `+` or a word that adds it.
fn tax_of_price(b: &[u8], start: usize, word: &str) -> bool {
    let window = line_before(b, start, 96);
    let Some(at) = last_word(&window, &[word], true) else {
        return false;
    };
    let before = window[..at].trim_ascii_end();
    if before.ends_with(b"+") {
        return true;
    }
    let added = before.strip_suffix(b".").unwrap_or(before);
    TAX_ADDED.iter().any(|t| {
        added.ends_with(t.as_bytes())
            && added
                .len()
                .checked_sub(t.len() + 1)
                .is_none_or(|p| !is_letter(added[p]))
    })
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
pub(super) fn labels_reference(words: &[Vec<u8>]) -> bool {
    let is_phone = |w: &Vec<u8>| PHONE_WORDS.iter().any(|p| w.starts_with(p.as_bytes()));
    let is_label = |w: &Vec<u8>| {
        LABEL_WORDS.iter().any(|l| w.as_slice() == l.as_bytes())
            || LABEL_STEMS.iter().any(|l| w.starts_with(l.as_bytes()))
            || compound_label(w)
    };
    // `P.IVA`: the last word is `iva`, the one before it `p`.
    !words.iter().any(is_phone) && words.iter().any(is_label)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pii::context::tests::answers;

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
}
