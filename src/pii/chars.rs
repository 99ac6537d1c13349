//! What counts as a word character at a byte position of the scanned
//! text. The scanners walk bytes; a value ends where a word does not go
//! on. Letters and digits of any script go on a word; punctuation written
//! outside ASCII does not: an ellipsis, guillemets, curly quotes, dashes
//! and a no-break space end a number (`4111 ...…`, `«06 ...»`) as a
//! full stop or a space does.

/// Whether the character that starts at byte `p` of `b` is a letter, a
/// digit or `_` (false past the end). `b` is the text of a `&str`; a byte
/// that starts no character (the middle of one) counts as a word.
#[inline(always)]
pub(super) fn word_at(b: &[u8], p: usize) -> bool {
    match b.get(p) {
        None => false,
        Some(&c) if c < 0x80 => is_ascii_word(c),
        Some(_) => word_at_outside_ascii(b, p),
    }
}

#[inline(never)]
fn word_at_outside_ascii(b: &[u8], p: usize) -> bool {
    let c = b[p];
    if let Some(letter) = b.get(p + 1).and_then(|&next| latin_letter(c, next)) {
        return letter;
    }
    let len = utf8_len(c);
    match b.get(p..p + len).and_then(|s| std::str::from_utf8(s).ok()) {
        Some(s) => s.chars().next().is_some_and(char::is_alphanumeric),
        None => true,
    }
}

/// Whether the character that ends just before byte `p` (`p > 0`) is a
/// letter, a digit or `_`.
#[inline(always)]
pub(super) fn word_before(b: &[u8], p: usize) -> bool {
    let c = b[p - 1];
    if c < 0x80 {
        is_ascii_word(c)
    } else {
        word_before_outside_ascii(b, p)
    }
}

#[inline(never)]
fn word_before_outside_ascii(b: &[u8], p: usize) -> bool {
    if p >= 2
        && let Some(letter) = latin_letter(b[p - 2], b[p - 1])
    {
        return letter;
    }
    char_before(b, p).is_none_or(|(ch, _)| ch.is_alphanumeric())
}

/// The character that ends just before byte `p` (`p > 0`): whether it is
/// a letter (not a digit, not punctuation), and its length in bytes.
#[inline]
pub(super) fn letter_before(b: &[u8], p: usize) -> (bool, usize) {
    let c = b[p - 1];
    if c < 0x80 {
        return (c.is_ascii_alphabetic(), 1);
    }
    if p >= 2
        && let Some(letter) = latin_letter(b[p - 2], c)
    {
        return (letter, 2);
    }
    match char_before(b, p) {
        Some((ch, len)) => (ch.is_alphabetic(), len),
        // Not a character: a letter, as the scan always read such bytes.
        None => (true, 1),
    }
}

/// Whether the two bytes `lead`, `next` are a letter of Latin-1 or Latin
/// Extended-A (U+00C0 to U+017F: the accented letters of the eight
/// languages), when they are one of those characters; `None` for any other
/// character, which is decoded.
#[inline]
fn latin_letter(lead: u8, next: u8) -> Option<bool> {
    match (lead, next) {
        // `×` and `÷` are the only signs among them.
        (0xC3, 0x97 | 0xB7) => Some(false),
        (0xC3..=0xC5, 0x80..=0xBF) => Some(true),
        _ => None,
    }
}

#[inline]
fn is_ascii_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The character ending just before `p` and its length, when the bytes
/// there are one.
fn char_before(b: &[u8], p: usize) -> Option<(char, usize)> {
    let mut start = p - 1;
    while start > 0 && p - start < 4 && b[start] & 0xC0 == 0x80 {
        start -= 1;
    }
    let s = std::str::from_utf8(&b[start..p]).ok()?;
    let ch = s.chars().next()?;
    Some((ch, p - start))
}

/// The length of a UTF-8 character from its first byte.
fn utf8_len(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_of_any_script_go_on_a_word_and_punctuation_does_not() {
        for (text, word) in [
            ("é", true),
            ("ł", true),
            ("ß", true),
            ("²", true),
            ("x", true),
            ("…", false),
            ("»", false),
            ("«", false),
            ("\u{201d}", false),
            ("\u{a0}", false),
            ("–", false),
            (".", false),
        ] {
            let b = text.as_bytes();
            assert_eq!(word_at(b, 0), word, "{text} at");
            assert_eq!(word_before(b, b.len()), word, "{text} before");
        }
    }

    #[test]
    fn a_letter_before_is_a_letter_and_its_length() {
        assert_eq!(letter_before("aé".as_bytes(), 3), (true, 2));
        assert_eq!(letter_before(b"a1", 2), (false, 1));
        assert_eq!(letter_before("a»".as_bytes(), 3), (false, 2));
        assert_eq!(letter_before(b"ab", 2), (true, 1));
    }
}
