//! Names people choose (tenants, keys, account emails) are shown to other
//! people: in the dashboard, the CLI, the audit log. A name with a
//! zero-width or bidirectional control character can look like another
//! name (`acme` and `ac\u{200B}me`) or display reversed (U+202E), so such
//! characters are refused wherever a name is taken in.

/// Whether `c` is a control (Unicode Cc) or format (Cf) character, or a
/// line or paragraph separator: invisible, or changing how the text
/// around it is shown.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{0600}'..='\u{0605}'
                | '\u{061C}'
                | '\u{06DD}'
                | '\u{070F}'
                | '\u{0890}'..='\u{0891}'
                | '\u{08E2}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{110BD}'
                | '\u{110CD}'
                | '\u{13430}'..='\u{1343F}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0001}'
                | '\u{E0020}'..='\u{E007F}'
        )
}

/// Whether `name` holds a character of [`is_hidden`].
pub fn has_hidden(name: &str) -> bool {
    name.chars().any(is_hidden)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_width_and_bidirectional_controls_are_hidden() {
        for c in [
            '\u{0}',
            '\n',
            '\u{7F}',
            '\u{200B}',
            '\u{200C}',
            '\u{200D}',
            '\u{200E}',
            '\u{200F}',
            '\u{202A}',
            '\u{202E}',
            '\u{2066}',
            '\u{2069}',
            '\u{FEFF}',
            '\u{E0041}',
        ] {
            assert!(is_hidden(c), "U+{:04X}", c as u32);
        }
        for name in ["acme", "Zürich GmbH", "東京", "a-b_c.d", "ünïcödé 🙂"] {
            assert!(!has_hidden(name), "{name}");
        }
    }
}
