//! The built-in detectors: hand-written scanners over the text's bytes, one
//! pass for e-mail addresses (anchored on `@`) and one for everything that
//! starts at a token boundary (numbers, IBANs, identifiers, IP addresses).
//! A candidate is kept only when its check digits hold; identifiers that
//! are bare 9 or 11 digit numbers (BSN, NIF, Steuer-ID, PESEL) also need
//! their name nearby, because one random order number in ten passes any
//! single check digit.

use super::chars::{word_at, word_before};
use super::checks;
use super::context::{
    BSN_WORDS, NIF_WORDS, PESEL_WORDS, PHONE_WORDS, STEUER_WORDS, named, named_before, quoted_value,
};
use super::ids::{corsican_nirs, spaced_dni, split_nie};
use super::ip::{ipv4_octets_valid, ipv6, names_no_host};
use super::phone::national_phone;
use super::version::version_before;

/// What a span is. The label is the placeholder's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Email,
    Phone,
    Iban,
    Card,
    Ip,
    DeTaxId,
    FrNir,
    EsDni,
    ItCf,
    NlBsn,
    PlPesel,
    PtNif,
}

impl Kind {
    pub const ALL: [Kind; 12] = [
        Kind::Email,
        Kind::Phone,
        Kind::Iban,
        Kind::Card,
        Kind::Ip,
        Kind::DeTaxId,
        Kind::FrNir,
        Kind::EsDni,
        Kind::ItCf,
        Kind::NlBsn,
        Kind::PlPesel,
        Kind::PtNif,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Kind::Email => "EMAIL",
            Kind::Phone => "PHONE",
            Kind::Iban => "IBAN",
            Kind::Card => "CARD",
            Kind::Ip => "IP",
            Kind::DeTaxId => "DE_TAX_ID",
            Kind::FrNir => "FR_NIR",
            Kind::EsDni => "ES_DNI",
            Kind::ItCf => "IT_CF",
            Kind::NlBsn => "NL_BSN",
            Kind::PlPesel => "PL_PESEL",
            Kind::PtNif => "PT_NIF",
        }
    }
}

/// A detected span of the text, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

/// Every built-in span of `text`, in order of appearance, not overlapping.
pub fn scan(text: &str) -> Vec<Span> {
    let b = text.as_bytes();
    let mut found = Vec::new();
    super::email::emails(b, &mut found);
    corsican_nirs(b, &mut found);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let starts = c.is_ascii_alphanumeric() || c == b'+' || c == b'(' || c == b':';
        if !starts || (i > 0 && !boundary_before(b, i)) {
            i += 1;
            continue;
        }
        match at(b, i) {
            Ok(span) => {
                i = span.end;
                found.push(span);
            }
            // A number or IBAN that is none of ours is skipped whole: its
            // tail is not a phone (`2 55 08 14 168 025 39`, a NIR with a
            // wrong key, does not end in a phone number).
            Err(skip) => i = skip.max(i + 1),
        }
    }
    resolve(found)
}

/// Whether a token may start at `i` (`i > 0`): not inside a word, and not
/// the decimals of a number (`3.1415926535`).
fn boundary_before(b: &[u8], i: usize) -> bool {
    let prev = b[i - 1];
    if word_before(b, i) {
        return false;
    }
    if matches!(prev, b'.' | b',') && i >= 2 && b[i - 2].is_ascii_digit() && b[i].is_ascii_digit() {
        // A field of a comma-separated line may be an address
        // (`...,tcp,60,203.0.113.9,...`): no decimals are a dotted quad.
        let first = b[i..]
            .iter()
            .take(9)
            .take_while(|c| c.is_ascii_digit())
            .count();
        // So may an identifier (`...,+49 30 1234 56,30964598711`): no
        // decimals of prose run to nine digits.
        return prev == b','
            && ((first <= 3 && b.get(i + first) == Some(&b'.') && quad_at(b, i)) || first == 9);
    }
    true
}

/// Sorts and drops overlaps: the earlier span wins, then the longer.
fn resolve(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut kept: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        if kept.last().is_none_or(|last| span.start >= last.end) {
            kept.push(span);
        }
    }
    kept
}

/// The span starting at the token boundary `i`, or where to look next.
fn at(b: &[u8], i: usize) -> Result<Span, usize> {
    let span = |end, kind| {
        Ok(Span {
            start: i,
            end,
            kind,
        })
    };
    if let Some(end) = ipv6(b, i) {
        return span(end, Kind::Ip);
    }
    let token_end = i + b[i..]
        .iter()
        .position(|&c| !c.is_ascii_alphanumeric())
        .unwrap_or(b.len() - i);
    let token = &b[i..token_end];
    let bounded = !word_at(b, token_end);
    if b[i].is_ascii_alphabetic() {
        match iban(b, i) {
            Ok(end) => return span(end, Kind::Iban),
            Err(Some(skip)) => return Err(skip),
            Err(None) => {}
        }
        if bounded && token.len() == 16 && checks::codice_fiscale(&upper(token)) {
            return span(token_end, Kind::ItCf);
        }
        if bounded && token.len() == 9 && checks::dni_nie(&upper(token)) {
            return span(token_end, Kind::EsDni);
        }
        // A NIE written `Y-8990221-H` (or with spaces): letter, seven
        // digits, letter.
        if token.len() == 1
            && matches!(b[i].to_ascii_uppercase(), b'X' | b'Y' | b'Z')
            && let Some(end) = split_nie(b, i)
        {
            return span(end, Kind::EsDni);
        }
        // A NIE with its letter set apart: `Z0164875-Q`.
        if token.len() == 8
            && b.get(token_end) == Some(&b'-')
            && let Some(&letter) = b.get(token_end + 1)
            && letter.is_ascii_alphabetic()
            && !word_at(b, token_end + 2)
        {
            let mut compact = upper(token);
            compact.push(letter.to_ascii_uppercase());
            if matches!(compact[0], b'X' | b'Y' | b'Z') && checks::dni_nie(&compact) {
                return span(token_end + 2, Kind::EsDni);
            }
        }
        return Err(token_end);
    }
    if bounded && token.len() == 9 && checks::dni_nie(&upper(token)) {
        return span(token_end, Kind::EsDni);
    }
    if b[i] == b':' || (b[i] != b'+' && b[i] != b'(' && !b[i].is_ascii_digit()) {
        return Err(i + 1);
    }
    // A date is none of ours, and it ends the number: the time or the
    // number after it is read on its own (`02/03/2025 09:15` is no phone).
    if let Some(end) = date_end(b, i) {
        return Err(end);
    }
    // A bracket or plus before a word starts no number: skipping the
    // number's run from there would skip the word and a number after it.
    let next = |k: usize| b.get(i + k).copied().unwrap_or(0);
    let bracketed_plus = b[i] == b'(' && next(1) == b'+' && next(2).is_ascii_digit();
    if !b[i].is_ascii_digit() && !next(1).is_ascii_digit() && !bracketed_plus {
        return Err(i + 1);
    }
    // `(030) 123 456` is a phone with its area code in brackets; any other
    // number in brackets (or a DNI) is read from after the bracket, as a
    // token of its own.
    let digit_after_bracket = b[i] == b'(' && b.get(i + 1).is_some_and(u8::is_ascii_digit);
    match number(b, i) {
        Err(_) if digit_after_bracket => Err(i + 1),
        // `(06-12345678)`: a bracket that no `)` closes after the first
        // group is no area code; the number starts after it.
        Ok(_) if digit_after_bracket && !area_code_in_brackets(b, i) => Err(i + 1),
        found => found,
    }
}

/// The end of a date with a four-digit year starting at `i`: day, month
/// and year (`24/12/2025`, `1.4.2025`, `09-03-2025`, the day and month in
/// either order) or the year first (`2025-12-24`), one separator
/// throughout.
fn date_end(b: &[u8], i: usize) -> Option<usize> {
    // The digits of a group of `min..=max` digits at `p`: (value, end).
    let group = |p: usize, min: usize, max: usize| -> Option<(u32, usize)> {
        let len = b[p.min(b.len())..]
            .iter()
            .take(max + 1)
            .take_while(|c| c.is_ascii_digit())
            .count();
        (min..=max).contains(&len).then(|| {
            let value = b[p..p + len]
                .iter()
                .fold(0, |v, &d| v * 10 + u32::from(d - b'0'));
            (value, p + len)
        })
    };
    let year = |v: u32| (1900..2100).contains(&v);
    let day_month =
        |x: u32, y: u32| (1..=31).contains(&x) && (1..=31).contains(&y) && (x <= 12 || y <= 12);
    let (first, p) = group(i, 1, 4)?;
    let sep = *b.get(p)?;
    if !matches!(sep, b'/' | b'.' | b'-') {
        return None;
    }
    let (second, q) = group(p + 1, 1, 2)?;
    if b.get(q) != Some(&sep) {
        return None;
    }
    let (third, end) = if p - i == 4 {
        group(q + 1, 1, 2)?
    } else {
        group(q + 1, 4, 4)?
    };
    let is_date = if p - i == 4 {
        year(first) && (1..=12).contains(&second) && (1..=31).contains(&third)
    } else {
        p - i <= 2 && day_month(first, second) && year(third)
    };
    is_date.then_some(end)
}

/// Whether the bracket at `i` closes right after the first group of
/// digits: `(030) 123 456`, or with the trunk set apart and the area code
/// in groups, `(0 40) 123 456`, `(0 52 41) 7 38 19` (at most five digits
/// after the trunk, as German area codes have).
fn area_code_in_brackets(b: &[u8], i: usize) -> bool {
    let digits = |p: usize| b[p..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut end = i + 1 + digits(i + 1);
    if end == i + 2 && b[i + 1] == b'0' {
        let mut area = 0;
        while b.get(end) == Some(&b' ') && area < 5 {
            let group = digits(end + 1);
            if group == 0 {
                break;
            }
            area += group;
            end += 1 + group;
        }
        if area > 5 {
            return false;
        }
    }
    end > i + 1 && b.get(end) == Some(&b')') && b[end - 1].is_ascii_digit()
}

fn upper(token: &[u8]) -> Vec<u8> {
    token.iter().map(u8::to_ascii_uppercase).collect()
}

/// An IBAN, compact or in groups of four separated by single spaces, at
/// the exact length of its country (only compact for unknown countries).
/// `Err(Some(end))` is an IBAN-shaped run whose check failed.
fn iban(b: &[u8], i: usize) -> Result<usize, Option<usize>> {
    if b.len() < i + 15
        || !b[i].is_ascii_uppercase()
        || !b[i + 1].is_ascii_uppercase()
        || !b[i + 2].is_ascii_digit()
        || !b[i + 3].is_ascii_digit()
    {
        return Err(None);
    }
    let expected = checks::iban_expected_length(&b[i..i + 2]);
    let mut chars: Vec<u8> = Vec::with_capacity(34);
    let mut end = i;
    while end < b.len() && chars.len() < expected.unwrap_or(34) {
        let c = b[end];
        if c.is_ascii_alphanumeric() {
            chars.push(c.to_ascii_uppercase());
            end += 1;
        } else if c == b' '
            && expected.is_some()
            && chars.len().is_multiple_of(4)
            && b.get(end + 1).is_some_and(u8::is_ascii_alphanumeric)
        {
            end += 1;
        } else {
            break;
        }
    }
    if word_at(b, end) {
        return Err(None);
    }
    if checks::iban(&chars) {
        Ok(end)
    } else {
        Err(Some(end))
    }
}

/// A number of digits and separators: phones, cards, numeric identifiers,
/// IPv4 addresses and a DNI whose letter is set apart. `Err` holds the
/// end of the run that is none of these.
fn number(b: &[u8], i: usize) -> Result<Span, usize> {
    number_span(b, i).map_err(|()| {
        let mut end = i + 1;
        while end < b.len() && (b[end].is_ascii_alphanumeric() || b" -./()".contains(&b[end])) {
            // `04 - 17 - 23`: a list is skipped whole, as the run read it.
            if spaced_separator(b, end) {
                end += 3;
                continue;
            }
            if !b[end].is_ascii_alphanumeric() && !b.get(end + 1).is_some_and(u8::is_ascii_digit) {
                break;
            }
            // A log line's address after a time or a code (`16:22:10
            // 2.80.131.44`, `@0x7f3a 192.168.1.9#53`) is not skipped with it.
            if b[end] == b' ' && quad_at(b, end + 1) {
                break;
            }
            end += 1;
        }
        end
    })
}

/// Whether `p` starts ` - ` or ` / ` before a digit.
fn spaced_separator(b: &[u8], p: usize) -> bool {
    b.get(p) == Some(&b' ')
        && matches!(b.get(p + 1), Some(b'-' | b'/'))
        && b.get(p + 2) == Some(&b' ')
        && b.get(p + 3).is_some_and(u8::is_ascii_digit)
}

/// Whether a dotted quad of valid octets starts at `p`, followed by no
/// fifth dotted group.
fn quad_at(b: &[u8], p: usize) -> bool {
    scan_number(b, p).is_ok_and(|run| {
        run.groups.len() >= 4
            && run.seps.starts_with(b"...")
            && run.seps.get(3) != Some(&b'.')
            && run.groups[..4].iter().all(|&g| g <= 3)
            && ipv4_octets_valid(
                &run.digits[..run.groups[..4].iter().sum::<usize>()],
                &run.groups[..4],
            )
    })
}

fn number_span(b: &[u8], i: usize) -> Result<Span, ()> {
    // `+34 ...`, or `(+34) ...` with the country code in brackets.
    let lead = match (b[i], b.get(i + 1)) {
        (b'+', _) => 1,
        (b'(', Some(b'+')) => 2,
        _ => 0,
    };
    let plus = lead > 0;
    let run = scan_number(b, i + lead)?;
    let Run {
        digits,
        groups,
        seps,
        end,
    } = &run;
    let end = *end;
    // An address the run read on past (`91.64.12.207 (3/5)`, or into a
    // MAC address `192.168.2.31 9c:b6:...`): its four dotted groups, then
    // a separator that is not a dot.
    if !plus && groups.len() > 4 && quad_at(b, i) && !version_before(b, i) {
        if names_no_host(b, i) {
            return Err(());
        }
        return Ok(Span {
            start: i,
            end: i + groups[..4].iter().sum::<usize>() + 3,
            kind: Kind::Ip,
        });
    }
    if digits.is_empty() || word_at(b, end) {
        // A DNI whose letter follows a space or hyphen.
        return Err(());
    }
    let span = |kind| {
        Ok(Span {
            start: i,
            end,
            kind,
        })
    };
    let n = digits.len();
    let only = |allowed: &[u8]| seps.iter().all(|c| allowed.contains(c));

    // IPv4: four dotted groups of at most three digits, each up to 255
    // (a version, or `611.20.48.37`, is read on as a number).
    if !plus
        && groups.len() == 4
        && only(b".")
        && groups.iter().all(|&g| g <= 3)
        && ipv4_octets_valid(digits, groups)
        && !version_before(b, i)
    {
        return if names_no_host(b, i) {
            Err(())
        } else {
            span(Kind::Ip)
        };
    }
    if plus {
        return if (8..=15).contains(&n) {
            span(Kind::Phone)
        } else {
            Err(())
        };
    }
    if let Some(dni) = spaced_dni(b, i, &run) {
        return Ok(dni);
    }
    // North American `(212) 555-0198`: area code and exchange 2 to 9.
    if b[i] == b'('
        && groups == &[3, 3, 4]
        && seps.as_slice() == b"() -"
        && digits[0] >= b'2'
        && digits[3] >= b'2'
    {
        return span(Kind::Phone);
    }
    match national_number(b, i, &run) {
        Some(kind) => span(kind),
        None => Err(()),
    }
}

/// A run of digits with the separators between its groups.
pub(super) struct Run {
    pub(super) digits: Vec<u8>,
    /// The digit count of each group, in order.
    pub(super) groups: Vec<usize>,
    pub(super) seps: Vec<u8>,
    /// Just past the last digit.
    pub(super) end: usize,
}

/// Reads digits from `p`, crossing up to two separators when a digit
/// follows. `Err` when the run is longer than any number we detect.
fn scan_number(b: &[u8], mut p: usize) -> Result<Run, ()> {
    let mut digits: Vec<u8> = Vec::with_capacity(20);
    let mut groups: Vec<usize> = Vec::new();
    let mut seps: Vec<u8> = Vec::new();
    let mut end = p;
    let mut group = 0;
    while p < b.len() {
        let c = b[p];
        if c.is_ascii_digit() {
            digits.push(c);
            group += 1;
            p += 1;
            end = p;
            if digits.len() > 24 {
                return Err(());
            }
        } else if matches!(c, b' ' | b'-' | b'.' | b'/' | b'(' | b')') {
            // Up to two separators in a row (`) ` in `(030) 123`), then a
            // digit, or the number ended.
            let mut q = p + 1;
            if q < b.len() && matches!(b[q], b' ' | b'(' | b')') && b[q] != c {
                q += 1;
            } else if c == b' '
                && matches!(b.get(q), Some(b'/' | b'-'))
                && b.get(q + 1) == Some(&b' ')
            {
                // `040 / 3861 2297`, `010 - 412 66 38`
                q += 2;
            }
            if q < b.len() && b[q].is_ascii_digit() {
                if group > 0 {
                    groups.push(group);
                }
                group = 0;
                seps.extend_from_slice(&b[p..q]);
                p = q;
            } else {
                break;
            }
        } else {
            break;
        }
    }
    if group > 0 {
        groups.push(group);
    }
    Ok(Run {
        digits,
        groups,
        seps,
        end,
    })
}

/// The kind of a number without a `+`: national identifiers (checksum,
/// and for the ambiguous lengths a naming word before), cards, phones.
fn national_number(b: &[u8], i: usize, run: &Run) -> Option<Kind> {
    let Run {
        digits,
        groups,
        seps,
        end,
    } = run;
    let n = digits.len();
    let separated = !seps.is_empty();
    let only = |allowed: &[u8]| seps.iter().all(|c| allowed.contains(c));
    if n == 15 && only(b" ") && checks::nir(digits) {
        return Some(Kind::FrNir);
    }
    if card_shape(digits, groups, only(b" -")) && checks::luhn(digits) {
        return Some(Kind::Card);
    }
    if n == 11 && only(b" ") {
        let quoted = seps.is_empty() && quoted_value(b, i, run.end);
        if checks::pesel(digits) && (named(b, i, PESEL_WORDS) || quoted) {
            return Some(Kind::PlPesel);
        }
        if checks::steuer_id(digits) && named(b, i, STEUER_WORDS) {
            return Some(Kind::DeTaxId);
        }
    }
    if n == 9 && only(b" .") {
        if checks::bsn(digits) && named(b, i, BSN_WORDS) {
            return Some(Kind::NlBsn);
        }
        if checks::nif(digits) && named(b, i, NIF_WORDS) {
            return Some(Kind::PtNif);
        }
    }
    // An Italian mobile in dots (`3xx.xxx.xxxx`): no amount ends in four
    // digits, and a version's groups are shorter.
    let dotted_mobile = groups == &[3, 3, 4] && digits[0] == b'3';
    if only(b".")
        && separated
        && !dotted_mobile
        && !(digits[0] == b'0' && groups.len() > 2 && n >= 9)
        && !((9..=13).contains(&n) && named_before(b, i, PHONE_WORDS))
    {
        // Dotted numbers are amounts, versions and dates, except the
        // `06.12.34.56.78` style of French and Dutch phones and a number
        // a phone word names (`cell. 348.112.6630`).
        return None;
    }
    // Groups set apart by more than one ` - ` or ` / ` are a list of
    // numbers (drawn numbers, scores), not one phone: a phone is written
    // with one such gap at most (`010 - 412 66 38`).
    let gaps = seps
        .windows(3)
        .filter(|w| *w == b" - " || *w == b" / ")
        .count();
    if gaps > 1 {
        return None;
    }
    if national_phone(b, i..*end, digits, groups) {
        return Some(Kind::Phone);
    }
    None
}

/// Card numbers: known issuer prefixes and lengths, compact or in the
/// groups cards are printed in (4-4-4-4(-3), Amex 4-6-5, Diners 4-6-4).
fn card_shape(d: &[u8], groups: &[usize], seps_ok: bool) -> bool {
    let n = d.len();
    if !(13..=19).contains(&n) || !seps_ok {
        return false;
    }
    let two = u32::from(d[0] - b'0') * 10 + u32::from(d[1] - b'0');
    let four = two * 100 + u32::from(d[2] - b'0') * 10 + u32::from(d[3] - b'0');
    let issuer = match d[0] {
        b'4' => matches!(n, 13 | 16 | 19),
        b'5' => ((51..=55).contains(&two) && n == 16) || (is_maestro(four) && n >= 16),
        b'2' => (2221..=2720).contains(&four) && n == 16,
        b'3' => {
            (matches!(two, 34 | 37) && n == 15)
                || (two == 35 && n >= 16)
                || (matches!(two, 30 | 36 | 38) && n == 14)
        }
        b'6' => {
            (four == 6011 || two == 65 || (644..=649).contains(&(four / 10)) || is_maestro(four))
                && n >= 16
        }
        _ => false,
    };
    let grouped = groups.len() == 1
        || groups.iter().all(|&g| g == 4)
        || (groups.len() == 5 && groups[..4].iter().all(|&g| g == 4))
        || groups == [4, 6, 5]
        || groups == [4, 6, 4];
    issuer && grouped
}

/// Maestro's issuer numbers (UK and international; those starting with 5
/// are outside Mastercard's 51 to 55).
fn is_maestro(four: u32) -> bool {
    matches!(
        four,
        5018 | 5020 | 5038 | 5893 | 6304 | 6759 | 6761 | 6762 | 6763
    )
}

#[cfg(test)]
#[path = "detect_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "document_tests.rs"]
mod document_tests;
