//! Whether a dotted quad is a version (or the number of a section of a
//! document) rather than an IPv4 address: the words before it, and the
//! other dotted numbers of its line. Release notes, changelogs and
//! manifests write several versions in a row, and only the first is near
//! the word that says so.

use super::context::{last_word, line_before, sentence_start, starts};

/// Words that make a dotted quad a version, or the number of a section
/// of a document (`section 4.2.1.3`, `OID 1.3.6.1`): word starts.
const VERSION_STEMS: &[&str] = &[
    "version",
    "versión",
    "versione",
    "versie",
    "versão",
    "versao",
    "wersj",
    "firmware",
    "software",
    "release",
    // a release in the other languages (`Wydanie 5.9.1.3`, `uitgave`)
    "wydani",
    "rilasc",
    "uitgave",
    "lançament",
    "lanzamient",
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
    // sections and numbered clauses of documents, and object identifiers
    "section",
    "chapter",
    "paragraph",
    "clause",
    "abschnitt",
    "kapitel",
    "absatz",
    "chapitre",
    "paragraphe",
    "apartado",
    "capítulo",
    "capitulo",
    "sección",
    "seccion",
    "capitolo",
    "paragrafo",
    "sezione",
    "hoofdstuk",
    "paragraaf",
    "rozdział",
    "rozdzial",
    "secção",
    "seção",
    "oid",
    "snmp",
    "§",
    // software that is named by its version, like firmware (not
    // "kernel": a firewall's log lines come from the kernel)
    "bootloader",
    // a requirement on a version: `at least 15.2.7.8`
    "minimum",
    "minimal",
    "mindestens",
    "at least",
    "au moins",
    "al menos",
    "almeno",
    "co najmniej",
    "pelo menos",
    // a numbered point of a text, in the Romance languages and German
    "au point",
    "du point",
    "al punto",
    "del punto",
    "ao ponto",
    "do ponto",
    "punkt",
];
/// Words that name a version as whole words: firmware and package
/// managers' names, short enough to start other words (`gem` starts
/// Dutch `gemeente`).
const VERSION_WORDS: &[&str] = &["bios", "uefi", "gem", "pip", "npm", "nuget"];
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
/// Machines, named before their address in a ticket (`Workstation LT-04
/// at 10.1.2.3`): address words before the quad only. Between two dotted
/// numbers a machine is what a version runs on (`BIOS 1.2.0.4: the
/// laptop ... since 1.1.9.2`).
const MACHINE_STEMS: &[&str] = &[
    "workstation",
    "laptop",
    "desktop",
    "rechner",
    "arbeitsplatz",
    "ordinateur",
    "poste de travail",
    "ordenador",
    "portátil",
    "computer",
    "computador",
    "komputer",
    "stacja robocza",
    "werkplek",
    "postazione",
];

/// Whether a dotted quad at `start` is a version: a version or update
/// word before it with no address word nearer, or another dotted number
/// of its line that is a version, with no address word between them
/// (`Firmware 10.2.0.1 fixes ... 10.1.4.7. Units on 9.8.3.12`).
pub(super) fn version_before(b: &[u8], start: usize) -> bool {
    object_identifier(&b[start..]) || named_version(b, start) || version_nearby(b, start)
}

/// The arcs of the object identifiers that certificates and directories
/// write (X.500 attribute types `2.5.4.n`, X.509 extensions `2.5.29.n`,
/// `1.3.6.1...` of the Internet, `1.2.840...` of RSA and ANSI): a quad
/// starting so is an identifier, not an address (`2.5.29.17`,
/// SubjectAltName).
fn object_identifier(quad: &[u8]) -> bool {
    const ARCS: &[&[u8]] = &[b"2.5.4.", b"2.5.29.", b"1.3.6.1", b"1.2.840."];
    ARCS.iter().any(|arc| quad.starts_with(arc))
}

/// German and Dutch compounds whose last part names software or its
/// version (`Kassensoftware`, `Druckerfirmware`, `Appversie`): the word
/// just before a quad, ending so, makes it a version.
const VERSION_ENDS: &[&[u8]] = &[b"software", b"firmware", b"version", b"versie", b"update"];

/// A version or update word in the 64 bytes of the line before `start`,
/// with no address word nearer.
fn named_version(b: &[u8], start: usize) -> bool {
    let mut window = line_before(b, start, 64);
    // A version word of an earlier sentence names nothing here (`since
    // the patch. Workstation at 10.1.2.3`).
    if let Some(sentence) = sentence_start(b, start) {
        let cut = window.len().saturating_sub(start - sentence);
        window.drain(..cut);
    }
    let word = window
        .iter()
        .rposition(u8::is_ascii_alphabetic)
        .filter(|&end| window[end + 1..].iter().all(|c| b" :=".contains(c)))
        .map(|end| {
            let from = window[..=end]
                .iter()
                .rposition(|c| !c.is_ascii_alphabetic())
                .map_or(0, |at| at + 1);
            &window[from..=end]
        });
    if word.is_some_and(|w| w.len() > 8 && VERSION_ENDS.iter().any(|e| w.ends_with(e))) {
        return true;
    }
    let last = |stems: &[&str]| starts(&window, stems);
    let version = last(VERSION_STEMS).max(last_word(&window, VERSION_WORDS, true));
    match (version, last(ADDRESS_STEMS).max(last(MACHINE_STEMS))) {
        (Some(version), Some(address)) => version > address,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// A dotted number of three or more groups: where it starts and ends,
/// and its groups' values and digit counts.
struct Dotted {
    start: usize,
    end: usize,
    groups: Vec<(u32, usize)>,
}

impl Dotted {
    /// Its shape alone says it is a version: four groups one of which is
    /// no octet (`4.12.3.1099`), or five or more. Three groups say nothing:
    /// `5.7.1` is an SMTP status next to the client's address.
    fn is_version_shaped(&self) -> bool {
        let octet = |&(v, len): &(u32, usize)| v <= 255 && len <= 3;
        let arc = |v: &[u32]| {
            self.groups
                .iter()
                .map(|g| g.0)
                .take(v.len())
                .eq(v.iter().copied())
        };
        if arc(&[2, 5, 4]) || arc(&[2, 5, 29]) || arc(&[1, 3, 6, 1]) || arc(&[1, 2, 840]) {
            return true;
        }
        match self.groups.len() {
            3 => false,
            4 => !self.groups.iter().all(octet),
            _ => true,
        }
    }
}

/// The dotted numbers of three or more groups in `b[from..to]`.
fn dotted_numbers(b: &[u8], from: usize, to: usize) -> Vec<Dotted> {
    let mut found = Vec::new();
    let mut p = from;
    while p < to {
        let starts_number = b[p].is_ascii_digit()
            && (p == from || !(super::chars::word_before(b, p) || b[p - 1] == b'.'));
        if !starts_number {
            p += 1;
            continue;
        }
        let start = p;
        let mut groups = Vec::new();
        loop {
            let group_start = p;
            let mut value = 0u32;
            while p < to && b[p].is_ascii_digit() {
                value = value
                    .saturating_mul(10)
                    .saturating_add(u32::from(b[p] - b'0'));
                p += 1;
            }
            groups.push((value, p - group_start));
            if p + 1 < to && b[p] == b'.' && b[p + 1].is_ascii_digit() {
                p += 1;
            } else {
                break;
            }
        }
        if groups.len() >= 3 {
            found.push(Dotted {
                start,
                end: p,
                groups,
            });
        }
    }
    found
}

/// Whether another dotted number of the line of `start` is a version (by
/// its words or its shape), walking from the quad outwards and stopping
/// at an address word between.
fn version_nearby(b: &[u8], start: usize) -> bool {
    let (line_start, line_end) = super::context::line_bounds(b, start);
    let numbers = dotted_numbers(b, line_start, line_end);
    let Some(here) = numbers.iter().position(|d| d.start == start) else {
        return false;
    };
    let address_between = |from: usize, to: usize| {
        let between: Vec<u8> = b[from..to].iter().map(u8::to_ascii_lowercase).collect();
        starts(&between, ADDRESS_STEMS).is_some()
    };
    let is_version = |d: &Dotted| d.is_version_shaped() || named_version(b, d.start);
    let mut edge = start;
    for d in numbers[..here].iter().rev() {
        if address_between(d.end, edge) {
            break;
        }
        if is_version(d) {
            return true;
        }
        edge = d.start;
    }
    // After the quad, only the words between count: `the DNS server
    // 10.0.0.53 runs firmware 2.1.0.4` keeps the server's address.
    // An address word before the quad leaves only the words before it to
    // decide.
    let window = line_before(b, start, 64);
    if starts(&window, ADDRESS_STEMS).is_some() || starts(&window, MACHINE_STEMS).is_some() {
        return false;
    }
    let mut edge = numbers[here].end;
    for d in &numbers[here + 1..] {
        let between: Vec<u8> = b[edge..d.start]
            .iter()
            .map(u8::to_ascii_lowercase)
            .collect();
        if starts(&between, ADDRESS_STEMS).is_some() {
            break;
        }
        let named = starts(&between, VERSION_STEMS).is_some()
            || last_word(&between, VERSION_WORDS, true).is_some();
        if named {
            return true;
        }
        edge = d.end;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pii::context::tests::answers;

    #[test]
    fn a_version_word_makes_a_dotted_quad_a_version_unless_an_address_word_is_nearer() {
        answers(
            version_before,
            true,
            &[
                "upgrade the agent to 10.4.2.1",
                "Firmware 4.10.2.8",
                "versión 3.12.0.4; la 3.11.8.2",
                "wersja 7.3.10.8",
            ],
        );
        answers(
            version_before,
            false,
            &[
                "from 192.168.1.20",
                "Update the DNS server to 10.0.0.53",
                "version 2 is installed\nlogin from 10.0.0.5",
                "Servidor 10.1.1.1",
            ],
        );
    }
}
