//! The words around a candidate number that decide what it is, in the
//! eight languages of the labelled sets: the name of an identifier that
//! is a bare 9 or 11 digit number (BSN, NIF, Steuer-ID, PESEL), a phone
//! word, the label of a reference that is not personal data (an order,
//! invoice, tracking or part number, a VAT or company register number),
//! and the version or update words that make a dotted quad a version
//! rather than an IPv4 address.
//!
//! Words are matched at the start of a word, ignoring ASCII case: `tel`
//! names a phone, `Bestellnummer` does not contain `tel` as a word.

/// Keywords that name an identifier, looked for just before a bare number.
pub(super) const BSN_WORDS: &[&str] = &["bsn", "burgerservice", "sofi"];
pub(super) const NIF_WORDS: &[&str] = &["nif", "contribuinte", "fiscal"];
pub(super) const STEUER_WORDS: &[&str] =
    &["steuer", "idnr", "identifikationsnummer", "tax id", "tin"];
pub(super) const PESEL_WORDS: &[&str] = &["pesel"];
pub(super) const PHONE_WORDS: &[&str] = &[
    "tel", "phone", "fon", "mobil", "móvil", "movil", "cell", "handy", "llam", "chiam", "bel ",
    "bellen", "zadzwo", "komórk", "contact", "whatsapp", "sms", "call", "ring", "appel",
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
    "zaak",
    "policy",
    "police",
    "póliza",
    "poliza",
    "polizza",
    "polis",
    "apólice",
    "apolice",
    "claim",
    "schaden",
    "sinistr",
    "szkod",
    "schade",
    "referen",
    "riferiment",
    "aktenzeichen",
    "kundennummer",
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
    "sku",
    "ean",
    "isbn",
    // company and tax numbers of companies
    "vat",
    "ust",
    "partita",
    "siret",
    "siren",
    "regon",
    "krs",
    "kvk",
    "handelsregister",
    "registro",
];
/// Labels written as whole words (abbreviations and short words that
/// start other words).
const LABEL_WORDS: &[&str] = &[
    "n", "nr", "no", "nº", "n°", "num", "part", "typ", "type", "tipo", "iva", "nip", "cif", "ref",
    "rea", "lot",
];

/// Words that make a dotted quad a version: word starts.
const VERSION_STEMS: &[&str] = &[
    "version",
    "versión",
    "versione",
    "versie",
    "versão",
    "versao",
    "wersj",
    "firmware",
    "release",
    "build",
    "patch",
    "upgrade",
    "update",
    "aktualis",
    "actualiz",
    "aggiorn",
    "atualiz",
    "bijwerk",
    "aktualiz",
    "zaktualiz",
    "mise à jour",
    "mettez à jour",
];
/// Words that make a dotted quad an address, when nearer than a version
/// word: word starts.
const ADDRESS_STEMS: &[&str] = &[
    "ip",
    "addr",
    "adress",
    "direcci",
    "indirizz",
    "adres",
    "endereç",
    "endereco",
    "host",
    "server",
    "serveur",
    "servidor",
    "serwer",
    "router",
    "gateway",
    "dns",
    "subnet",
    "proxy",
    "client",
    "login",
    "sign-in",
    "anmeld",
    "connexion",
    "conexi",
    "conness",
    "logowan",
];

/// The lower-cased bytes of `b[from..to]`.
fn lower(b: &[u8], from: usize, to: usize) -> Vec<u8> {
    b[from..to].iter().map(u8::to_ascii_lowercase).collect()
}

/// Where `word` starts a word in `window` (not after a letter), last first.
fn starts(window: &[u8], word: &str) -> Option<usize> {
    memchr::memmem::rfind_iter(window, word.as_bytes())
        .find(|&at| at == 0 || !window[at - 1].is_ascii_alphabetic())
}

/// Whether one of `words` starts a word in the 48 bytes before `start`.
pub(super) fn named_before(b: &[u8], start: usize, words: &[&str]) -> bool {
    let window = lower(b, start.saturating_sub(48), start);
    words.iter().any(|w| starts(&window, w).is_some())
}

/// A letter of a word: ASCII letters, and any byte of a non-ASCII
/// character (accented letters).
fn is_letter(c: u8) -> bool {
    c.is_ascii_alphabetic() || c >= 0x80
}

/// The two words just before `start` (skipping digits and punctuation
/// between them, on the same line), lower-cased.
fn last_two_words(b: &[u8], start: usize) -> Vec<Vec<u8>> {
    let mut words = Vec::with_capacity(2);
    let mut p = start;
    while words.len() < 2 {
        while p > 0 && !is_letter(b[p - 1]) {
            if b[p - 1] == b'\n' {
                return words;
            }
            p -= 1;
        }
        if p == 0 {
            break;
        }
        let end = p;
        while p > 0 && is_letter(b[p - 1]) {
            p -= 1;
        }
        words.push(lower(b, p, end));
    }
    words
}

/// Whether the number at `start` is labelled as a reference (an order,
/// invoice, part, policy or company number...) by one of the two words
/// before it, and not as a phone by the other.
pub(super) fn labelled_reference(b: &[u8], start: usize) -> bool {
    let words = last_two_words(b, start);
    let is_phone = |w: &Vec<u8>| PHONE_WORDS.iter().any(|p| w.starts_with(p.as_bytes()));
    let is_label = |w: &Vec<u8>| {
        LABEL_WORDS.iter().any(|l| w.as_slice() == l.as_bytes())
            || LABEL_STEMS.iter().any(|l| w.starts_with(l.as_bytes()))
    };
    // `P.IVA`: the last word is `iva`, the one before it `p`.
    !words.iter().any(is_phone) && words.iter().any(is_label)
}

/// Whether a dotted quad at `start` is a version: a version or update
/// word in the 64 bytes before it, with no address word nearer.
pub(super) fn version_before(b: &[u8], start: usize) -> bool {
    let from = start.saturating_sub(64);
    let line = b[from..start]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(from, |at| from + at + 1);
    let window = lower(b, line, start);
    let last = |stems: &[&str]| stems.iter().filter_map(|s| starts(&window, s)).max();
    match (last(VERSION_STEMS), last(ADDRESS_STEMS)) {
        (Some(version), Some(address)) => version > address,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_label_is_one_of_the_two_words_before_and_a_phone_word_wins() {
        for text in [
            "Tracking BRT: 0847",
            "P.IVA 0123",
            "Polizza RCA n. 0123",
            "Ersatzteil Typ 0301",
            "Rechnungsnummer: 0301",
            "REGON 0123",
        ] {
            let at = text.rfind(' ').unwrap() + 1;
            assert!(labelled_reference(text.as_bytes(), at), "{text}");
        }
        for text in [
            "Tel. 0301",
            "Bestellung 4711, Tel. 0301",
            "Rechnung offen, bitte rufen Sie an: 0301",
            "ordine n. 1\nchiamami 0301",
            "Call 0301",
        ] {
            let at = text.rfind(' ').unwrap() + 1;
            assert!(!labelled_reference(text.as_bytes(), at), "{text}");
        }
    }

    #[test]
    fn a_version_word_makes_a_dotted_quad_a_version_unless_an_address_word_is_nearer() {
        for text in [
            "upgrade the agent to 10.4.2.1",
            "Firmware 4.10.2.8",
            "versión 3.12.0.4; la 3.11.8.2",
            "wersja 7.3.10.8",
        ] {
            let at = text.rfind(' ').unwrap() + 1;
            assert!(version_before(text.as_bytes(), at), "{text}");
        }
        for text in [
            "from 192.168.1.20",
            "Update the DNS server to 10.0.0.53",
            "version 2 is installed\nlogin from 10.0.0.5",
            "Servidor 10.1.1.1",
        ] {
            let at = text.rfind(' ').unwrap() + 1;
            assert!(!version_before(text.as_bytes(), at), "{text}");
        }
    }
}
