//! Check-digit algorithms of the identifiers the detectors recognise. Each
//! takes the identifier's characters without separators and answers whether
//! the check digits hold; a wrong check digit means "not this identifier",
//! which is what keeps order numbers and typos out of the redaction.

/// Luhn (ISO/IEC 7812), for payment cards.
pub fn luhn(digits: &[u8]) -> bool {
    let mut sum = 0u32;
    for (i, d) in digits.iter().rev().enumerate() {
        let mut v = u32::from(d - b'0');
        if i % 2 == 1 {
            v *= 2;
            if v > 9 {
                v -= 9;
            }
        }
        sum += v;
    }
    sum.is_multiple_of(10)
}

/// IBAN length per country (ISO 13616 registry), for the countries whose
/// IBANs Tollgate's tenants meet most; others are accepted at 15 to 34
/// characters when mod-97 holds.
fn iban_length(country: &[u8]) -> Option<usize> {
    Some(match country {
        b"AT" => 20,
        b"BE" => 16,
        b"BG" => 22,
        b"CH" => 21,
        b"CY" => 28,
        b"CZ" => 24,
        b"DE" => 22,
        b"DK" => 18,
        b"EE" => 20,
        b"ES" => 24,
        b"FI" => 18,
        b"FR" => 27,
        b"GB" => 22,
        b"GR" => 27,
        b"HR" => 21,
        b"HU" => 28,
        b"IE" => 22,
        b"IS" => 26,
        b"IT" => 27,
        b"LI" => 21,
        b"LT" => 20,
        b"LU" => 20,
        b"LV" => 21,
        b"MC" => 27,
        b"MT" => 31,
        b"NL" => 18,
        b"NO" => 15,
        b"PL" => 28,
        b"PT" => 25,
        b"RO" => 24,
        b"SE" => 24,
        b"SI" => 19,
        b"SK" => 24,
        b"SM" => 27,
        _ => return None,
    })
}

/// The length an IBAN of this country has, when known.
pub fn iban_expected_length(country: &[u8]) -> Option<usize> {
    iban_length(country)
}

/// ISO 13616 mod-97 over an upper-case IBAN without spaces.
pub fn iban(chars: &[u8]) -> bool {
    if chars.len() < 15 || chars.len() > 34 {
        return false;
    }
    if let Some(expected) = iban_length(&chars[..2])
        && expected != chars.len()
    {
        return false;
    }
    let mut rem: u32 = 0;
    for &c in chars[4..].iter().chain(&chars[..4]) {
        match c {
            b'0'..=b'9' => rem = (rem * 10 + u32::from(c - b'0')) % 97,
            b'A'..=b'Z' => rem = (rem * 100 + u32::from(c - b'A' + 10)) % 97,
            _ => return false,
        }
    }
    rem == 1
}

/// German Steuer-ID (IdNr): 11 digits, no leading zero, in the first ten
/// exactly one digit repeated (twice or three times), and the ISO 7064
/// MOD 11,10 check digit.
pub fn steuer_id(d: &[u8]) -> bool {
    if d.len() != 11 || d[0] == b'0' {
        return false;
    }
    let mut counts = [0u8; 10];
    for &c in &d[..10] {
        counts[usize::from(c - b'0')] += 1;
    }
    let repeated = counts.iter().filter(|&&n| n > 1).count();
    if repeated != 1 || counts.iter().any(|&n| n > 3) {
        return false;
    }
    let mut product = 10u32;
    for &c in &d[..10] {
        let mut sum = (u32::from(c - b'0') + product) % 10;
        if sum == 0 {
            sum = 10;
        }
        product = (sum * 2) % 11;
    }
    let check = match 11 - product {
        10 => 0,
        c => c,
    };
    check == u32::from(d[10] - b'0')
}

/// French NIR (numéro de sécurité sociale): 13 digits and a key
/// 97 - (number mod 97); sex 1 or 2 (3, 4, 7, 8 for provisional numbers),
/// month 01 to 12 or 20 to 42 or 50 to 99 (unknown or provisional).
pub fn nir(d: &[u8]) -> bool {
    if d.len() != 15 || !matches!(d[0], b'1' | b'2' | b'3' | b'4' | b'7' | b'8') {
        return false;
    }
    let month = u32::from(d[3] - b'0') * 10 + u32::from(d[4] - b'0');
    if !(1..=12).contains(&month) && !(20..=42).contains(&month) && month < 50 {
        return false;
    }
    let number = d[..13]
        .iter()
        .fold(0u64, |n, &c| n * 10 + u64::from(c - b'0'));
    let key = u64::from(d[13] - b'0') * 10 + u64::from(d[14] - b'0');
    97 - number % 97 == key
}

const DNI_LETTERS: &[u8; 23] = b"TRWAGMYFPDXBNJZSQVHLCKE";

/// Spanish DNI (8 digits and a letter) or NIE (X, Y or Z, 7 digits and a
/// letter): the letter is the number mod 23 in a fixed table.
pub fn dni_nie(c: &[u8]) -> bool {
    if c.len() != 9 {
        return false;
    }
    let lead = match c[0] {
        b'X' => 0,
        b'Y' => 1,
        b'Z' => 2,
        b'0'..=b'9' => u32::from(c[0] - b'0'),
        _ => return false,
    };
    if !c[1..8].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let number = c[1..8]
        .iter()
        .fold(lead, |n, &d| n * 10 + u32::from(d - b'0'));
    DNI_LETTERS[(number % 23) as usize] == c[8]
}

/// The value of a codice fiscale character in an odd (1st, 3rd, ...)
/// position.
const CF_ODD: [u32; 26] = [
    1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23,
];

/// Letters that replace digits in a codice fiscale (omocodia).
fn cf_digitish(c: u8) -> bool {
    c.is_ascii_digit() || b"LMNPQRSTUV".contains(&c)
}

/// Italian codice fiscale: 16 characters LLLLLL DD L DD L DDD L (digits may
/// be replaced by the omocodia letters), the month letter from its table,
/// and the check letter.
pub fn codice_fiscale(c: &[u8]) -> bool {
    if c.len() != 16 {
        return false;
    }
    let shape = c[..6].iter().all(u8::is_ascii_uppercase)
        && cf_digitish(c[6])
        && cf_digitish(c[7])
        && b"ABCDEHLMPRST".contains(&c[8])
        && cf_digitish(c[9])
        && cf_digitish(c[10])
        && c[11].is_ascii_uppercase()
        && c[12..15].iter().all(|&x| cf_digitish(x))
        && c[15].is_ascii_uppercase();
    if !shape {
        return false;
    }
    let mut sum = 0u32;
    for (i, &x) in c[..15].iter().enumerate() {
        let index = if x.is_ascii_digit() {
            u32::from(x - b'0')
        } else {
            u32::from(x - b'A')
        };
        sum += if i % 2 == 0 {
            CF_ODD[index as usize]
        } else {
            index
        };
    }
    c[15] == b'A' + (sum % 26) as u8
}

/// Dutch BSN: 9 digits passing the "elfproef" (weights 9..2 and -1).
pub fn bsn(d: &[u8]) -> bool {
    if d.len() != 9 || d.iter().all(|&c| c == b'0') {
        return false;
    }
    let mut sum: i32 = 0;
    for (i, &c) in d[..8].iter().enumerate() {
        sum += i32::from(c - b'0') * (9 - i as i32);
    }
    sum -= i32::from(d[8] - b'0');
    sum % 11 == 0
}

/// Polish PESEL: 11 digits, a valid birth date (the month carries the
/// century) and the weighted check digit.
pub fn pesel(d: &[u8]) -> bool {
    if d.len() != 11 {
        return false;
    }
    let n = |i: usize| u32::from(d[i] - b'0');
    let month = n(2) * 10 + n(3);
    let day = n(4) * 10 + n(5);
    if !(1..=12).contains(&(month % 20)) || !(1..=31).contains(&day) {
        return false;
    }
    const WEIGHTS: [u32; 10] = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3];
    let sum: u32 = (0..10).map(|i| n(i) * WEIGHTS[i]).sum();
    (10 - sum % 10) % 10 == n(10)
}

/// Portuguese NIF: 9 digits, a first digit of a person or company (1, 2,
/// 3, 5, 6, 8, 9) and the mod-11 check digit.
pub fn nif(d: &[u8]) -> bool {
    if d.len() != 9 || !matches!(d[0], b'1' | b'2' | b'3' | b'5' | b'6' | b'8' | b'9') {
        return false;
    }
    let sum: u32 = d[..8]
        .iter()
        .enumerate()
        .map(|(i, &c)| u32::from(c - b'0') * (9 - i as u32))
        .sum();
    let check = match sum % 11 {
        0 | 1 => 0,
        r => 11 - r,
    };
    check == u32::from(d[8] - b'0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_pass_luhn_and_a_changed_digit_fails() {
        for card in [
            "4111111111111111",
            "5555555555554444",
            "378282246310005",
            "6011111111111117",
            "4012888888881881",
        ] {
            assert!(luhn(card.as_bytes()), "{card}");
        }
        assert!(!luhn(b"4111111111111112"));
        assert!(!luhn(b"5555555555554445"));
    }

    #[test]
    fn ibans_of_each_country_pass_mod_97_and_a_changed_digit_fails() {
        for iban_text in [
            "DE89370400440532013000",
            "FR1420041010050500013M02606",
            "ES9121000418450200051332",
            "IT60X0542811101000000123456",
            "NL91ABNA0417164300",
            "PL61109010140000071219812874",
            "PT50000201231234567890154",
            "GB82WEST12345698765432",
        ] {
            assert!(iban(iban_text.as_bytes()), "{iban_text}");
        }
        assert!(!iban(b"DE89370400440532013001"));
        assert!(!iban(b"NL91ABNA0417164301"));
        // Right check digits, wrong length for the country.
        assert!(!iban(b"DE8937040044053201300"));
    }

    #[test]
    fn german_steuer_ids_pass_and_wrong_ones_fail() {
        for id in ["86095742719", "47036892816", "65929970489", "57549285017"] {
            assert!(steuer_id(id.as_bytes()), "{id}");
        }
        assert!(!steuer_id(b"86095742718"));
        assert!(!steuer_id(b"12345678901"));
        assert!(!steuer_id(b"06095742719"));
    }

    #[test]
    fn french_nirs_pass_and_a_wrong_key_fails() {
        assert!(nir(b"255081416802538"));
        assert!(nir(b"184127645108946"));
        assert!(!nir(b"255081416802539"));
        assert!(!nir(b"555081416802538"));
    }

    #[test]
    fn spanish_dni_and_nie_letters_hold() {
        assert!(dni_nie(b"12345678Z"));
        assert!(dni_nie(b"X1234567L"));
        assert!(!dni_nie(b"12345678A"));
        assert!(!dni_nie(b"X1234567A"));
    }

    #[test]
    fn italian_codice_fiscale_check_letter_holds() {
        assert!(codice_fiscale(b"RSSMRA85T10A562S"));
        assert!(codice_fiscale(b"BNCGNN80A01F205W"));
        assert!(!codice_fiscale(b"RSSMRA85T10A562T"));
        assert!(!codice_fiscale(b"RSSMRA85Z10A562S"));
    }

    #[test]
    fn dutch_bsn_elfproef_holds() {
        assert!(bsn(b"111222333"));
        assert!(bsn(b"123456782"));
        assert!(!bsn(b"123456789"));
    }

    #[test]
    fn polish_pesel_check_digit_and_date_hold() {
        assert!(pesel(b"44051401359"));
        assert!(pesel(b"02070803628"));
        assert!(!pesel(b"44051401358"));
        assert!(!pesel(b"44135401350"));
    }

    #[test]
    fn portuguese_nif_check_digit_holds() {
        assert!(nif(b"123456789"));
        assert!(nif(b"501964843"));
        assert!(!nif(b"123456780"));
        assert!(!nif(b"423456789"));
    }
}
