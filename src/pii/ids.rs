//! National identifiers whose shape the number scan does not read on its
//! own: NIRs of people born in Corsica (a letter in the department breaks
//! the number), and Spanish NIEs and DNIs whose letter, digits and letter
//! are set apart by hyphens, spaces or thousands' dots. Split from
//! `detect.rs`, whose scan calls them.

use super::chars::{word_at, word_before};
use super::checks;
use super::detect::{Kind, Run, Span};

/// NIRs of people born in Corsica: the department is `2A` or `2B`, which
/// the key counts as 19 and 18 (`1 53 07 2B 154 129 87`); spaces between
/// groups as in any NIR. The digit scan cannot read them (a letter breaks
/// the number).
pub(super) fn corsican_nirs(b: &[u8], out: &mut Vec<Span>) {
    for k in memchr::memchr_iter(b'2', b) {
        let department: &[u8] = match b.get(k + 1) {
            Some(b'A' | b'a') => b"19",
            Some(b'B' | b'b') => b"18",
            _ => continue,
        };
        // Five digits before (single spaces between groups allowed).
        let mut before = Vec::with_capacity(5);
        let mut start = k;
        while before.len() < 5 && start > 0 {
            match b[start - 1] {
                d @ b'0'..=b'9' => before.push(d),
                b' ' if start >= 2 && b[start - 2].is_ascii_digit() => {}
                _ => break,
            }
            start -= 1;
        }
        if before.len() < 5 || b[start] == b' ' || (start > 0 && word_before(b, start)) {
            continue;
        }
        before.reverse();
        // Eight digits after: six of the number, two of the key.
        let mut after = Vec::with_capacity(8);
        let mut end = k + 2;
        while after.len() < 8 && end < b.len() {
            match b[end] {
                d @ b'0'..=b'9' => after.push(d),
                b' ' if b.get(end + 1).is_some_and(u8::is_ascii_digit) => {}
                _ => break,
            }
            end += 1;
        }
        if after.len() < 8 || word_at(b, end) {
            continue;
        }
        let digits = [&before[..], department, &after[..]].concat();
        if checks::nir(&digits) {
            out.push(Span {
                start,
                end,
                kind: Kind::FrNir,
            });
        }
    }
}

/// The end of a NIE whose parts are set apart by hyphens or spaces
/// (`Y-8990221-H`, `X 5632061 M`) starting at `i`, when its letter checks.
pub(super) fn split_nie(b: &[u8], i: usize) -> Option<usize> {
    let sep = *b.get(i + 1)?;
    if !matches!(sep, b'-' | b' ') {
        return None;
    }
    let digits = b.get(i + 2..i + 9)?;
    if !digits.iter().all(u8::is_ascii_digit) || b.get(i + 9) != Some(&sep) {
        return None;
    }
    let letter = *b.get(i + 10)?;
    if !letter.is_ascii_alphabetic() || word_at(b, i + 11) {
        return None;
    }
    let mut compact = vec![b[i].to_ascii_uppercase()];
    compact.extend_from_slice(digits);
    compact.push(letter.to_ascii_uppercase());
    checks::dni_nie(&compact).then_some(i + 11)
}

/// A DNI written `12345678-Z`, `12345678 Z` or `12.345.678-Z`: the span
/// takes the letter.
pub(super) fn spaced_dni(b: &[u8], i: usize, run: &Run) -> Option<Span> {
    let end = run.end;
    // Compact, or in the thousands' groups of a Spanish number
    // (`12.345.678-Z`).
    let grouped = run.seps.is_empty() || (run.groups == [2, 3, 3] && run.seps == b"..");
    if run.digits.len() == 8
        && grouped
        && matches!(b.get(end), Some(b'-' | b' '))
        && let Some(&letter) = b.get(end + 1)
        && letter.is_ascii_uppercase()
        && !word_at(b, end + 2)
    {
        let mut compact = run.digits.clone();
        compact.push(letter);
        if checks::dni_nie(&compact) {
            return Some(Span {
                start: i,
                end: end + 2,
                kind: Kind::EsDni,
            });
        }
    }
    None
}
