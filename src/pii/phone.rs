//! National phone formats of DE, FR, ES, IT, NL, PL and PT written
//! without a `+`, and the shapes that tell a phone from a reference
//! written like one: service numbers, North American numbers, references
//! numbered by year or carrying a letter suffix, CEF headers, the tail of
//! a code. The words around the number are read in `context.rs`.

use super::chars::word_at;
use super::context::{PHONE_WORDS, id_named, line_bounds, named_before};
use super::labels::labelled_reference;

/// National phone formats of DE, FR, ES, IT, NL, PL and PT without a `+`:
/// a trunk `0` (or `00` international prefix) and 9 to 13 digits, or the
/// 9-digit plans of ES, PL and PT and Italian mobiles (`3xx`) when written
/// in groups or named.
pub(super) fn national_phone(
    b: &[u8],
    span: std::ops::Range<usize>,
    d: &[u8],
    groups: &[usize],
) -> bool {
    let (start, end) = (span.start, span.end);
    let n = d.len();
    // A lone `0` ("request 0") is no phone, and has no second digit.
    if n < 2 {
        return false;
    }
    if service_number(d, groups) || north_american(b, start, d, groups) {
        return !labelled_reference(b, start) && !reference_suffix(b, end);
    }
    let shaped = if d[0] == b'0' {
        if d[1] == b'0' {
            // The international prefix: written in groups (`00351 963 287
            // 115`) or named; a bare run of digits is a code or an id.
            (11..=17).contains(&n) && (groups.len() > 1 || named_before(b, start, PHONE_WORDS))
        } else {
            (9..=13).contains(&n)
        }
    } else {
        let plan = match n {
            9 => matches!(d[0], b'2' | b'4'..=b'9') || groups == [2, 3, 2, 2],
            10 => d[0] == b'3',
            _ => false,
        };
        // Grouped as phones are written (`612 345 678`, `22 123 45 67`,
        // `347 1234567`), not as references (`2024-00017`).
        let grouped = groups.len() > 1
            && (2..=3).contains(&groups[0])
            && groups[1..].iter().all(|g| (2..=7).contains(g));
        plan && (grouped || (groups.len() == 1 && named_before(b, start, PHONE_WORDS)))
    };
    // The context last, so only a phone-shaped number pays for reading
    // it: an order, part or company number is no phone, nor an
    // identifier named nearer than any phone word, nor the tail of a code.
    shaped
        && !labelled_reference(b, start)
        && !id_named(b, start)
        && !continues_code(b, start)
        && !dated_reference(b, start, groups)
        && !ticket_number(b, start, groups)
        && !cef_header(b, start)
        && !reference_suffix(b, end)
}

/// Whether the number ending at `end` carries the suffix of a file or
/// case reference: a code of capitals glued to it by `/` or `-`
/// (`...2291/B`, `...-KR`), or of two or three capitals after a spaced
/// slash (`... / KR`). A phone is not written so; a code that labels a
/// number after it (`/ FAX 030 ...`) is no suffix, nor a single capital
/// after a spaced slash (an initial: `... / M. Roux`).
fn reference_suffix(b: &[u8], end: usize) -> bool {
    let spaced = b.get(end) == Some(&b' ');
    let mut p = end + usize::from(spaced);
    if !matches!(b.get(p), Some(b'/' | b'-')) || (spaced && b[p] == b'-') {
        return false;
    }
    p += 1;
    if spaced {
        if b.get(p) != Some(&b' ') {
            return false;
        }
        p += 1;
    }
    let capitals = b[p.min(b.len())..]
        .iter()
        .take_while(|c| c.is_ascii_uppercase())
        .count();
    let min = if spaced { 2 } else { 1 };
    if !(min..=3).contains(&capitals) || word_at(b, p + capitals) {
        return false;
    }
    let next = b[p + capitals..]
        .iter()
        .find(|c| !matches!(c, b' ' | b':' | b'.'));
    !next.is_some_and(u8::is_ascii_digit)
}

/// The short numbers phones reach that are no subscriber's: the EU's
/// harmonised `116` services (`116 000`, `116 111`, `116 116`, `116 117`,
/// `116 123`, `116 006`), and freephone and premium numbers of 8 to 10
/// digits (`0800 12 12`, `0900 1234`) written in groups.
fn service_number(d: &[u8], groups: &[usize]) -> bool {
    let harmonised = d.len() == 6
        && d.starts_with(b"116")
        && matches!(&d[3..], b"000" | b"006" | b"111" | b"116" | b"117" | b"123")
        && (groups == [6] || groups == [3, 3]);
    let free_or_premium = (8..=10).contains(&d.len())
        && (d.starts_with(b"0800") || d.starts_with(b"090"))
        && groups.len() > 1
        && groups[0] == 4;
    harmonised || free_or_premium
}

/// A North American number `212-555-0198` or `212.555.0198` (area code
/// and exchange 2 to 9) named by a phone word: unnamed, it is as often a
/// reference. Dialled with its trunk `1` (`1-888-555-0143`, one
/// separator throughout), it is a phone unnamed.
fn north_american(b: &[u8], start: usize, d: &[u8], groups: &[usize]) -> bool {
    if groups == [1, 3, 3, 4] {
        let sep = b[start + 1];
        return d[0] == b'1'
            && d[1] >= b'2'
            && d[4] >= b'2'
            && matches!(sep, b'-' | b'.' | b' ')
            && b[start + 5] == sep
            && b[start + 9] == sep;
    }
    groups == [3, 3, 4]
        && d[0] >= b'2'
        && d[3] >= b'2'
        && matches!(b.get(start + 3), Some(b'-' | b'.'))
        && named_before(b, start, PHONE_WORDS)
}

/// A reference numbered by year: hyphenated groups one of which, not the
/// first, is a year (`0221-2025-77813`, `04-2025-118-77`). A phone is not
/// written so.
fn dated_reference(b: &[u8], start: usize, groups: &[usize]) -> bool {
    if groups.len() < 3 {
        return false;
    }
    let mut p = start;
    let mut hyphens_only = true;
    let mut year_inside = false;
    for (k, &g) in groups.iter().enumerate() {
        let group = &b[p..p + g];
        if k > 0
            && k + 1 < groups.len()
            && g == 4
            && (group.starts_with(b"19") || group.starts_with(b"20"))
        {
            year_inside = true;
        }
        p += g;
        if k + 1 < groups.len() {
            hyphens_only &= b.get(p) == Some(&b'-');
            p += 1;
        }
    }
    hyphens_only && year_inside
}

/// An airline ticket's number: the carrier's three-digit code, a hyphen
/// and a ten-digit serial (`220-1234567890`). No phone plan has a
/// three-digit area code and ten digits after it.
fn ticket_number(b: &[u8], start: usize, groups: &[usize]) -> bool {
    groups == [3, 10] && b[start + 3] == b'-'
}

/// Whether the number at `start` is a field of the header of a CEF event
/// (`CEF:0|vendor|product|version|signature id|name|severity|`): a
/// signature or an event class, never a phone.
fn cef_header(b: &[u8], start: usize) -> bool {
    let (line_start, _) = line_bounds(b, start);
    let line = &b[line_start..start];
    let Some(at) = line.windows(4).position(|w| w == b"CEF:") else {
        return false;
    };
    line[at..].iter().filter(|&&c| c == b'|').count() < 7 && b[start - 1] == b'|'
}

/// Whether the number at `start` continues a code: glued to a letter by a
/// hyphen (`M-000173992-01`), or after a token of letters and digits
/// (`1Z 999 AA1 01 2345 6784`).
fn continues_code(b: &[u8], start: usize) -> bool {
    if start >= 2 && b[start - 1] == b'-' && b[start - 2].is_ascii_alphabetic() {
        return true;
    }
    let mut end = start;
    while end > 0 && b[end - 1] == b' ' {
        end -= 1;
    }
    let mut from = end;
    while from > 0 && b[from - 1].is_ascii_alphanumeric() {
        from -= 1;
    }
    let token = &b[from..end];
    end < start && token.iter().any(u8::is_ascii_alphabetic) && token.iter().any(u8::is_ascii_digit)
}
