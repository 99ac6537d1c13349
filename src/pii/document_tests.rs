//! Unit tests of the scan on the documents of the ninth independent set's
//! kinds (quotes with a price, club lists, parish registers, IT tickets,
//! payroll exports, travel bookings, certificates, archives), with values
//! and wording of our own: for each class, the harmless case and the real
//! one. Split from `detect_tests.rs`, whose helpers they use.

use super::Kind;
use super::tests::{found_alone, kinds, none_found};

#[test]
fn a_label_of_an_earlier_sentence_labels_no_number_here() {
    found_alone(&[
        (
            "Removal £2,300 incl. VAT. Client: 0161 496 0722 (evenings).",
            Kind::Phone,
            "0161 496 0722",
        ),
        (
            "Mudanza 640 € + IVA. Cliente: 963 41 22 80 (casa).",
            Kind::Phone,
            "963 41 22 80",
        ),
    ]);
    // In its own sentence a label still labels: a VAT number, an invoice's.
    none_found(&[
        "Total 300 €. VAT no. 0161 496 0722",
        "Rechnung offen. Rechnungsnummer 0301 4455 667",
    ]);
}

#[test]
fn a_label_with_a_number_after_it_is_spent() {
    assert_eq!(
        kinds("Staffel:\nNr. 4 – 0171 2233445\nNr. 9 – 0160 9988776"),
        [(Kind::Phone, "0171 2233445"), (Kind::Phone, "0160 9988776")]
    );
    none_found(&["Auftrag Nr. 0171 2233445", "Bestellung Nr.: 0160 9988776"]);
}

#[test]
fn a_trunk_set_apart_before_an_area_code_in_groups_is_read_whole() {
    found_alone(&[(
        "Rückruf bitte unter (0 61 51) 4 72 90, vormittags",
        Kind::Phone,
        "(0 61 51) 4 72 90",
    )]);
    // More than five digits after the trunk are no area code.
    none_found(&["Messwerte (0 12 34 56) in mm"]);
}

#[test]
fn a_long_field_after_a_numeric_field_of_a_csv_row_is_read() {
    found_alone(&[(
        "nr,ort,betrag,steuer-id\n7,Köln,1250,86095742719",
        Kind::DeTaxId,
        "86095742719",
    )]);
    // Decimals are short; a nine-digit tail is read and is none of ours.
    none_found(&["ratio 0,123456789 in the report", "Preis 12,50 €"]);
}

#[test]
fn a_date_or_a_scale_after_an_at_sign_makes_a_file_name() {
    none_found(&[
        "backup_db@2024-11-30.tar.gz liegt auf dem NAS",
        "zie grundriss@1-100.dwg",
        "export@2023-05-01.sql",
    ]);
    found_alone(&[(
        "Write to info@2024-events.org today",
        Kind::Email,
        "info@2024-events.org",
    )]);
}

#[test]
fn an_airline_ticket_number_is_no_phone() {
    none_found(&[
        "Flug LH 400, 220-4412873390, Sitz 12A",
        "Bilhete 047-2210938841 emitido",
        "billet 057-1183320945",
    ]);
    found_alone(&[("Praxis 030-44556677", Kind::Phone, "030-44556677")]);
}

#[test]
fn an_italian_mobile_in_dots_is_a_phone_and_an_amount_is_not() {
    found_alone(&[
        ("il mio numero 348.221.7765", Kind::Phone, "348.221.7765"),
        (
            "richiesta di portabilità per 3482217765",
            Kind::Phone,
            "3482217765",
        ),
    ]);
    none_found(&["importo 348.221.776 euro", "Kapitel 3.12.1"]);
}

#[test]
fn object_identifiers_and_releases_are_no_addresses() {
    none_found(&[
        "extension 2.5.29.37 (ExtendedKeyUsage)",
        "attribute 2.5.4.3 (commonName)",
        "arc 1.3.6.1 of the Internet",
        "Wydanie 4.2.0.7 poprawia raporty",
        "uitgave 3.1.4.2 van de kassa",
        "rilascio 2.0.11.5 del gestionale",
    ]);
    found_alone(&[
        ("login from 2.5.39.120", Kind::Ip, "2.5.39.120"),
        ("serwer 10.4.2.7 nie odpowiada", Kind::Ip, "10.4.2.7"),
    ]);
}

#[test]
fn a_version_word_of_an_earlier_sentence_or_before_a_machine_names_no_version() {
    found_alone(&[
        (
            "Users complain since the update. Workstation PC-77 at 10.44.2.19 reboots.",
            Kind::Ip,
            "10.44.2.19",
        ),
        ("update pushed to laptop 10.20.1.9", Kind::Ip, "10.20.1.9"),
    ]);
    none_found(&[
        "BIOS 1.22.0.4 on the laptop, fine since 1.19.2.1",
        "After the reboot, version 4.1.2.9 runs",
    ]);
}

#[test]
fn a_tax_added_to_a_price_labels_no_number() {
    found_alone(&[
        (
            "Preventivo 720 € + IVA, cliente 06 4455 7788",
            Kind::Phone,
            "06 4455 7788",
        ),
        (
            "£640 plus VAT, customer 0161 496 0722",
            Kind::Phone,
            "0161 496 0722",
        ),
    ]);
    none_found(&["Partita IVA 06 4455 7788", "our VAT 0161 496 0722"]);
}
