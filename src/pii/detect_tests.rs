//! Unit tests of the detectors (`detect.rs`): each kind found with a
//! valid check digit and refused with a wrong one, and the shapes of
//! numbers that are none of ours.

use super::*;

pub(super) fn kinds(text: &str) -> Vec<(Kind, &str)> {
    scan(text)
        .into_iter()
        .map(|s| (s.kind, &text[s.start..s.end]))
        .collect()
}

/// Each text holds exactly the one value given, of its kind.
pub(super) fn found_alone(cases: &[(&str, Kind, &str)]) {
    for &(text, kind, value) in cases {
        assert_eq!(kinds(text), [(kind, value)], "{text}");
    }
}

/// No text holds anything the scan reports.
pub(super) fn none_found(texts: &[&str]) {
    for text in texts {
        assert!(kinds(text).is_empty(), "{text}: {:?}", kinds(text));
    }
}

#[test]
fn a_lone_digit_is_no_phone_and_no_panic() {
    for text in ["request 0", "0", "call 0 now", "7"] {
        assert!(kinds(text).is_empty(), "{text}");
    }
}

#[test]
fn emails_are_found_with_their_whole_address() {
    assert_eq!(
        kinds("Write to anna.schmidt+news@example.co.uk."),
        [(Kind::Email, "anna.schmidt+news@example.co.uk")]
    );
    assert!(kinds("user@localhost and @handle and a@b").is_empty());
}

#[test]
fn phones_of_each_country_are_found_and_order_numbers_are_not() {
    for (text, phone) in [
        ("Ruf an: +49 30 12345678", "+49 30 12345678"),
        ("Tel. 030 12345678", "030 12345678"),
        ("Handy 0171 1234567", "0171 1234567"),
        ("Appelez le 06 12 34 56 78", "06 12 34 56 78"),
        ("tél : 01.23.45.67.89", "01.23.45.67.89"),
        ("Llámame al 612 345 678", "612 345 678"),
        ("móvil 612345678", "612345678"),
        ("chiamami al 347 123 4567", "347 123 4567"),
        ("ufficio 06 6982 1234", "06 6982 1234"),
        ("bel me op 06-12345678", "06-12345678"),
        ("telefoon 020 123 4567", "020 123 4567"),
        ("zadzwoń 501 234 567", "501 234 567"),
        ("telemóvel 912 345 678", "912 345 678"),
        ("call +33 (0)6 12 34 56 78", "+33 (0)6 12 34 56 78"),
        ("dial 0049 30 1234567", "0049 30 1234567"),
    ] {
        assert_eq!(kinds(text), [(Kind::Phone, phone)], "{text}");
    }
    none_found(&[
        "Order 612345678 shipped",
        "Bestellnummer 792100479 vom 12.03.2024.",
        "Bestellnummer 4711 vom 12.03.2024",
        "Rechnung 2024-00017, Betrag 1.234,56 EUR",
        "pi is 3.14159265358979",
        "version 1.2.3",
        "at 10:30:45",
    ]);
}

#[test]
fn ibans_are_found_grouped_or_compact_and_a_wrong_check_is_not() {
    assert_eq!(
        kinds("IBAN DE89 3704 0044 0532 0130 00, danke"),
        [(Kind::Iban, "DE89 3704 0044 0532 0130 00")]
    );
    assert_eq!(
        kinds("NL91ABNA0417164300"),
        [(Kind::Iban, "NL91ABNA0417164300")]
    );
    assert!(kinds("IBAN DE89 3704 0044 0532 0130 01").is_empty());
}

#[test]
fn cards_need_luhn_and_an_issuer_shape() {
    assert_eq!(
        kinds("card 4111 1111 1111 1111 exp 12/27"),
        [(Kind::Card, "4111 1111 1111 1111")]
    );
    assert_eq!(
        kinds("amex 3782-822463-10005"),
        [(Kind::Card, "3782-822463-10005")]
    );
    assert!(kinds("card 4111 1111 1111 1112").is_empty());
    assert!(kinds("tracking 1234567812345670").is_empty());
}

#[test]
fn ip_addresses_v4_and_v6_are_found() {
    assert_eq!(
        kinds("from 192.168.1.20 and 2001:db8::8a2e:370:7334."),
        [
            (Kind::Ip, "192.168.1.20"),
            (Kind::Ip, "2001:db8::8a2e:370:7334")
        ]
    );
    assert!(kinds("999.1.1.1 and 10:30:00").is_empty());
}

#[test]
fn national_ids_with_valid_check_digits_are_found_and_wrong_ones_are_not() {
    found_alone(&[
        ("Steuer-ID 86095742719", Kind::DeTaxId, "86095742719"),
        (
            "NIR 2 55 08 14 168 025 38",
            Kind::FrNir,
            "2 55 08 14 168 025 38",
        ),
        // Born in Corsica: 2A and 2B count as 19 and 18 in the key.
        (
            "NIR 1 85 03 2A 004 123 24.",
            Kind::FrNir,
            "1 85 03 2A 004 123 24",
        ),
        ("nir=292072B11704596", Kind::FrNir, "292072B11704596"),
        ("DNI 12345678Z", Kind::EsDni, "12345678Z"),
        ("DNI 12345678-Z", Kind::EsDni, "12345678-Z"),
        ("NIE X1234567L", Kind::EsDni, "X1234567L"),
        ("CF RSSMRA85T10A562S", Kind::ItCf, "RSSMRA85T10A562S"),
        ("BSN 123456782", Kind::NlBsn, "123456782"),
        ("PESEL 44051401359", Kind::PlPesel, "44051401359"),
        ("NIF 501964843", Kind::PtNif, "501964843"),
    ]);
    none_found(&[
        "Steuer-ID 86095742718",
        "NIR 2 55 08 14 168 025 39",
        "NIR 1 85 03 2A 004 123 25",
        "NIR 292072B11704500",
        "ref AB1850 32A00412324X",
        "DNI 12345678A",
        "CF RSSMRA85T10A562T",
        "BSN 123456789",
        "PESEL 44051401358",
        "NIF 123456780",
        "Bestellnummer 123456782",
    ]);
}

#[test]
fn an_address_is_found_when_a_bracket_follows_it_and_a_version_is_not() {
    assert_eq!(
        kinds("09:12:44 auth failed for admin from 203.0.113.77 (attempt 2/3)"),
        [(Kind::Ip, "203.0.113.77")]
    );
    assert!(kinds("upgraded to version 4.12.0.3 (beta 2)").is_empty());
}

#[test]
fn a_phone_with_a_spaced_hyphen_is_one_phone_and_a_range_is_none() {
    assert_eq!(
        kinds("Bel ons op 020 - 555 12 34 tijdens kantooruren."),
        [(Kind::Phone, "020 - 555 12 34")]
    );
    for text in [
        "Seizoen 2019 - 2021 was beter.",
        "Zaal 12 - 14 is gereserveerd.",
    ] {
        assert!(kinds(text).is_empty(), "{text}");
    }
}

#[test]
fn an_identifier_given_as_the_answer_to_a_quoted_question_is_named_by_it() {
    assert_eq!(
        kinds("> Wat is uw BSN voor het dossier?\n> natuurlijk: 725763863"),
        [(Kind::NlBsn, "725763863")]
    );
    assert_eq!(
        kinds("Qual é o teu número de contribuinte?\nsim, 204544696"),
        [(Kind::PtNif, "204544696")]
    );
    // A question about something else names nothing; a short line that
    // names its number itself keeps its name.
    assert!(kinds("> Hoeveel stuks wil je bestellen?\n> ja: 725763863").is_empty());
    assert_eq!(
        kinds("Personalnr. 00412\nSteuer-ID: 86095742719"),
        [(Kind::DeTaxId, "86095742719")]
    );
}

#[test]
fn an_identifier_after_its_name_and_a_number_sign_is_named() {
    assert_eq!(
        kinds("Recibo para o contribuinte nº 238 569 489, obrigado."),
        [(Kind::PtNif, "238 569 489")]
    );
    // An order's number sign labels an order, whatever its check digit.
    assert!(kinds("Encomenda n.º 238 569 489 enviada hoje.").is_empty());
}

#[test]
fn the_international_prefix_is_a_phone_in_groups_or_named_and_no_is_a_word() {
    assert_eq!(
        kinds("Pode ligar-me no 0033 6 12 34 56 78 amanhã."),
        [(Kind::Phone, "0033 6 12 34 56 78")]
    );
    assert_eq!(
        kinds("Tel. 00491701234567"),
        [(Kind::Phone, "00491701234567")]
    );
    // A bare run after `00` is a code or a mistyped identifier.
    assert!(kinds("Im Formular steht 00491701234567 als Kennung.").is_empty());
    // `no.` is still a number sign.
    assert!(kinds("Invoice no. 0033 6123 4567 is paid.").is_empty());
}

/// The fifth independent set's classes (docs/compliance-operations.md):
/// asset file names are no addresses, numbered sections and object
/// identifiers are no IP addresses, register, lot, protocol and payment
/// references are no phones; a NIE with its parts set apart, a DNI in
/// brackets, Maestro cards and a number left for a message are found.
#[test]
fn file_names_sections_and_register_numbers_are_none_of_ours() {
    none_found(&[
        "Upload icon@2x.png and icon@3x.png to the CDN.",
        "Fehlende Datei: header@2x.webp",
        "build output: bundle@1.2.0.js and styles@main.css",
        "See section 3.2.1.4 of the contract.",
        "Siehe Abschnitt 2.1.4.3 der Spezifikation.",
        "Voir le paragraphe 5.1.2.1 du règlement.",
        "Consulte el capítulo 1.4.2.2 del manual.",
        "Zie paragraaf 6.2.1.1 van de handleiding.",
        "Patrz rozdział 3.3.1.2 umowy.",
        "trap OID 1.3.6.1 from the switch",
        "RCS Lyon B 413 217 855 - capital 50 000 EUR",
        "Partita IVA della ditta: 01234567890",
        "Lote 0034-5512-7781, caducidad 05/2027",
        "Numero di protocollo 0007781/2025",
        "Vermeld betalingskenmerk 0612 7788 99 bij uw overschrijving.",
        "entidade 11249, referência 961 224 508, valor 20,00 €",
    ]);
    // An address word nearer than the section word still makes an address.
    assert_eq!(
        kinds("section 4: the server at 10.2.3.4 refused"),
        [(Kind::Ip, "10.2.3.4")]
    );
    // Real addresses on a domain whose name looks like a file are kept.
    assert_eq!(
        kinds("mail ana@studio.design now"),
        [(Kind::Email, "ana@studio.design")]
    );
}

#[test]
fn split_nies_bracketed_dnis_maestro_cards_and_message_numbers_are_found() {
    found_alone(&[
        ("NIE X-2345671-Q, alta el lunes", Kind::EsDni, "X-2345671-Q"),
        ("su NIE es Z 7654320 V", Kind::EsDni, "Z 7654320 V"),
        (
            "copia del DNI (48291736Q) adjunta",
            Kind::EsDni,
            "48291736Q",
        ),
        (
            "Maestro 6761 1000 3344 5564 on file",
            Kind::Card,
            "6761 1000 3344 5564",
        ),
        ("card 6304900012345675", Kind::Card, "6304900012345675"),
        (
            "déjame un mensaje en el 612345678",
            Kind::Phone,
            "612345678",
        ),
        (
            "manda uma mensagem para o 912345678",
            Kind::Phone,
            "912345678",
        ),
    ]);
    // A wrong letter or check digit is still refused.
    none_found(&[
        "NIE X-2345671-R",
        "copia del DNI (48291736R)",
        "Maestro 6761 1000 3344 5565",
    ]);
}

/// The sixth independent set's classes (docs/compliance-operations.md),
/// on values and wording of our own: the harmless case, then the real one.
#[test]
fn versions_chain_along_a_line_and_dated_references_are_no_phones() {
    none_found(&[
        // Only the first version is next to the word that says so.
        "Release 8.4.1.2 replaces 8.3.9.7; units on 7.1.0.4 keep it.",
        "probe 5.6.2.1044 accepts the range 2.0.0.0 to 2.7.255.255",
        "Nach dem Kernel-Update auf 6.1.0.12 lief 6.0.9.3 nicht mehr.",
        "le routeur tourne en 12.4.2.6 ; il faut au moins 12.4.2.9",
        "Voir au point 3.2.1.5 du contrat.",
        "gem 'nokogiri', '1.16.2.1'",
        "Reservierungscode 0231-2024-55817 gilt heute.",
        "Référence 05-2024-331-19 à rappeler.",
        "Uw dossiercode is 0900 2024 1188.",
        "CEF:0|Vendor|Box|1.0|0123456789|Event|5|src=x",
    ]);
    // An address word between keeps the address; a version after an
    // address does not make it one.
    assert_eq!(
        kinds("Firmware 3.2.0.1 installed, then the host 10.20.30.40 rebooted"),
        [(Kind::Ip, "10.20.30.40")]
    );
    assert_eq!(
        kinds("the DNS server 10.9.8.7 runs firmware 4.4.0.2"),
        [(Kind::Ip, "10.9.8.7")]
    );
    assert_eq!(
        kinds("from [198.51.100.7]: 550 5.1.1 unknown user"),
        [(Kind::Ip, "198.51.100.7")]
    );
}

#[test]
fn service_numbers_bracketed_mobiles_maestro_and_log_addresses_are_found() {
    found_alone(&[
        (
            "Karte verloren? Sperr-Notruf 116 116.",
            Kind::Phone,
            "116 116",
        ),
        ("Gratis bellen: 0800 12 12.", Kind::Phone, "0800 12 12"),
        (
            "Coach Bram (06-23456781), captain",
            Kind::Phone,
            "06-23456781",
        ),
        (
            "pls text me at 415-555-0142 later",
            Kind::Phone,
            "415-555-0142",
        ),
        (
            "Maestro 5020 3141 5926 5354",
            Kind::Card,
            "5020 3141 5926 5354",
        ),
        ("con DNI 31.415.926-L, vecino", Kind::EsDni, "31.415.926-L"),
        (
            "my citizen service number is 273645109",
            Kind::NlBsn,
            "273645109",
        ),
        (
            "devolvido ao sujeito passivo 246813571",
            Kind::PtNif,
            "246813571",
        ),
        (
            "VALUES (7, 'Ewa', '85071403219');",
            Kind::PlPesel,
            "85071403219",
        ),
        ("12:00:01 10 198.51.100.23 GET /", Kind::Ip, "198.51.100.23"),
        (
            "query @0x55aa 198.51.100.9#5353 (x)",
            Kind::Ip,
            "198.51.100.9",
        ),
        (
            "DHCPACK(eth0) 192.0.2.44 aa:bb:cc:dd:ee:ff pc",
            Kind::Ip,
            "192.0.2.44",
        ),
    ]);
    none_found(&[
        // A 116 number that is not assigned; unnamed North American shapes.
        "Sperr-Notruf 116 999.",
        "North American shape, unnamed: 415-555-0142",
        "Maestro 5020 3141 5926 5355",
        "con DNI 31.415.926-M",
        "service number 273645109",
        "VALUES (7, 'Ewa', '85071403218');",
    ]);
}

#[test]
fn punctuation_outside_ascii_ends_a_number_and_a_letter_does_not() {
    found_alone(&[
        (
            "Zahle mit 4453 3314 7893 2885\u{2026} danke",
            Kind::Card,
            "4453 3314 7893 2885",
        ),
        (
            "Amex 3704 072386 25510\u{2026}",
            Kind::Card,
            "3704 072386 25510",
        ),
        (
            "r\u{e9}ponse : \u{ab}06 71 23 45 89\u{bb}",
            Kind::Phone,
            "06 71 23 45 89",
        ),
        (
            "he wrote \u{201c}0171 2345678\u{201d} on the form",
            Kind::Phone,
            "0171 2345678",
        ),
        ("Tel.\u{a0}030 2345678", Kind::Phone, "030 2345678"),
        (
            "adres \u{ab}lena.berg@example.net\u{bb}",
            Kind::Email,
            "lena.berg@example.net",
        ),
    ]);
    // A letter outside ASCII still goes on a word.
    for text in ["kod 0171234567\u{17c}", "4453331478932885\u{e9}"] {
        assert!(kinds(text).is_empty(), "{text}: {:?}", kinds(text));
    }
}

#[test]
fn a_date_ends_a_number_and_its_time_is_no_phone() {
    none_found(&[
        "Zahlung erfasst 04/02/2025 09:45, Beleg 77",
        "paid 2025-02-14 10:05 at the desk",
        "ritiro 03.11.2025 18:20",
    ]);
    // The number after a date is read on its own.
    assert_eq!(
        kinds("Anruf 14.02.2025 0171 2345678"),
        [(Kind::Phone, "0171 2345678")]
    );
}

#[test]
fn a_letter_suffix_makes_a_reference_and_a_named_initial_does_not() {
    none_found(&[
        "erfasst unter 0221 4471 9023/B",
        "filed as 0221-4471-9023-C, thanks",
        "unser Zeichen 0221 4471 9023 / KR",
    ]);
    assert_eq!(
        kinds("Tel 0221 4471 9023 / M. Roux"),
        [(Kind::Phone, "0221 4471 9023")]
    );
    assert_eq!(
        kinds("Tel. 0221 4471 9023 / FAX 0221 4471 9024"),
        [
            (Kind::Phone, "0221 4471 9023"),
            (Kind::Phone, "0221 4471 9024")
        ]
    );
}

#[test]
fn a_customer_number_is_no_phone_and_the_customers_phone_is() {
    none_found(&[
        "Kunden-Nr. 0612 345 678",
        "customer no. 612 345 678",
        "c\u{f3}digo de cliente 612 345 678",
        "num\u{e9}ro de client 06 12 34 56 78",
        "n.\u{ba} de cliente 912 345 678",
        "Klantnummer: 06 1234 5678",
        "case no. 0612 345 678",
    ]);
    for (text, value) in [
        ("Bitte den Kunden anrufen: 0171 2345678", "0171 2345678"),
        ("client's mobile 06 12 34 56 78", "06 12 34 56 78"),
    ] {
        assert_eq!(kinds(text), [(Kind::Phone, value)], "{text}");
    }
}

#[test]
fn a_padded_table_cell_is_named_by_its_column() {
    assert_eq!(
        kinds("| naam | bsn |\n|---|---|\n| A. de Wit | 781580699 |"),
        [(Kind::NlBsn, "781580699")]
    );
    assert!(kinds("| order | total |\n| 781580699 | 5 |").is_empty());
}

#[test]
fn a_colon_run_is_no_ipv6_address_and_a_labelled_literal_is() {
    let fingerprint = "SHA1 7E:70:F1:CE:46:C4:06:11:1A:FD:14:B7:DD:3C:83:FA:1C:F1:30:4B ok";
    assert!(kinds(fingerprint).is_empty(), "{:?}", kinds(fingerprint));
    assert_eq!(
        kinds("Received: from [IPv6:2001:db8::7]"),
        [(Kind::Ip, "2001:db8::7")]
    );
}

#[test]
fn a_north_american_number_with_its_trunk_is_a_phone() {
    assert_eq!(
        kinds("Hotline 1-877-555-0163"),
        [(Kind::Phone, "1-877-555-0163")]
    );
    for text in ["1-077-555-0163", "1-877-555-016", "1-877.555-0163"] {
        assert!(kinds(text).is_empty(), "{text}: {:?}", kinds(text));
    }
}

#[test]
fn a_network_with_its_prefix_and_a_netmask_name_no_host() {
    none_found(&[
        "route 172.20.0.0/16 over the tunnel",
        "netmask 255.255.252.0 on the branch LAN",
        "Subnetz 10.64.0.0/10, Maske 255.192.0.0",
    ]);
    found_alone(&[
        ("inet 172.20.3.41/16 on eth1", Kind::Ip, "172.20.3.41"),
        ("allow 198.51.100.7/32 only", Kind::Ip, "198.51.100.7"),
    ]);
}

#[test]
fn an_ipv6_address_before_a_port_and_a_csv_address_are_found() {
    found_alone(&[
        (
            "accepted 2001:db8:4:1:9:8:7:6:8443 ->",
            Kind::Ip,
            "2001:db8:4:1:9:8:7:6",
        ),
        ("deny,udp,53,198.51.100.23,eth0", Kind::Ip, "198.51.100.23"),
    ]);
    none_found(&["at 10:15:30 the job ran", "sizes 4,1.2.3.4.5 in mm"]);
}

#[test]
fn a_trunk_set_apart_in_brackets_is_an_area_code() {
    found_alone(&[(
        "Büro (0 40) 41 23 56 78, ab neun",
        Kind::Phone,
        "(0 40) 41 23 56 78",
    )]);
    none_found(&["Spielstand (0 2) nach der Pause"]);
}

#[test]
fn a_list_with_spaced_separators_is_no_phone_and_one_gap_is() {
    none_found(&[
        "Zahlen der Woche: 03 - 11 - 19 - 26 - 34 - 48",
        "Ziehung 05 / 12 / 28 / 33 / 40 / 47",
    ]);
    found_alone(&[("Praxis 0621 - 388 41 20", Kind::Phone, "0621 - 388 41 20")]);
}

#[test]
fn contract_numbers_and_labels_joined_by_a_verb_are_no_phones() {
    none_found(&[
        "Vertragsnummer 0171 2233445 bitte angeben",
        "numer umowy: 601 234 567",
        "Ihre Referenz lautet 0211 5567 889",
        "Our reference is 06 4455 7788",
        "la référence est le 02 98 76 54 32",
    ]);
    found_alone(&[
        (
            "Vertrag gekündigt, Handy 0171 2233445",
            Kind::Phone,
            "0171 2233445",
        ),
        ("my number is 06 4455 7788", Kind::Phone, "06 4455 7788"),
        (
            "Kündigung des Vertrags; Festnetz 030 4455 6677",
            Kind::Phone,
            "030 4455 6677",
        ),
    ]);
}

#[test]
fn a_software_compound_makes_a_version_and_a_server_keeps_its_address() {
    none_found(&[
        "Lagersoftware 5.11.2.3 läuft",
        "Druckerfirmware 2.14.0.7 installiert",
    ]);
    found_alone(&[("Druckerserver 10.20.30.40", Kind::Ip, "10.20.30.40")]);
}

#[test]
fn a_login_on_a_machine_is_no_email_address() {
    none_found(&[
        "git clone git@code.example.org:team/app.git",
        "ssh -p 2222 ops@db-3.example.org",
        "log in as deploy@ci-1.office.lan",
    ]);
    found_alone(&[
        (
            "schreib an ops@example.org: danke",
            Kind::Email,
            "ops@example.org",
        ),
        (
            "Your SSH key goes to admin@example.org",
            Kind::Email,
            "admin@example.org",
        ),
        (
            "send it by ssh to ops@example.org",
            Kind::Email,
            "ops@example.org",
        ),
    ]);
}
