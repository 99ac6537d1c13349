//! PII redaction end to end (`piiRedaction`, `piiPatterns`): the real
//! server in front of the scripted upstream, which records what it got and
//! echoes the last message back, so placeholders round-trip.

mod common;

use common::upstream::{Upstream, catalogue};
use common::{TestServer, chat_events, chat_post, client, get_json, login, scrape_metrics};
use reqwest::Method;
use serde_json::{Value, json};

const EMAIL: &str = "anna.schmidt@example.org";
const IBAN: &str = "DE89 3704 0044 0532 0130 00";
const PHONE: &str = "+49 30 12345678";
const CARD: &str = "4111 1111 1111 1111";

fn personal_text() -> String {
    format!(
        "Please update my account: mail {EMAIL}, IBAN {IBAN}, phone {PHONE}, card {CARD}. Again: {EMAIL}. Order 4711-2024."
    )
}

async fn setup() -> (Upstream, TestServer, String, String) {
    let upstream = Upstream::start().await;
    let models: Vec<(String, String)> = ["echo", "echo-1", "echo-2", "echo-3", "echo-5", "echo-7"]
        .iter()
        .map(|m| (m.to_string(), m.to_string()))
        .collect();
    let models: Vec<(&str, &str)> = models
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let server = TestServer::start_with(Some(&catalogue(&upstream.base_url, &models)), &[]);
    let (_, key) = server.create_key(&[]);
    let token = login(&server).await;
    (upstream, server, key, token)
}

async fn send(
    server: &TestServer,
    token: &str,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut request = client()
        .request(method, server.url(path))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn set_policy(server: &TestServer, token: &str, patch: Value) -> Value {
    let (status, body) = send(server, token, Method::PUT, "/api/v1/policies", Some(&patch)).await;
    assert_eq!(status, 200, "{body}");
    body
}

fn ask(model: &str, content: &str) -> Value {
    json!({ "model": model, "messages": [{ "role": "user", "content": content }] })
}

async fn complete(server: &TestServer, key: &str, body: &Value) -> (String, Value) {
    let response = chat_post(server, key, body).await;
    let id = response.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!(status, 200, "{text}");
    (id, serde_json::from_str(&text).unwrap())
}

async fn conversation(server: &TestServer, token: &str, id: &str) -> String {
    get_json(server, token, &format!("/api/v1/conversations/{id}"))
        .await
        .to_string()
}

fn assert_no_values(text: &str) {
    for value in [EMAIL, IBAN, PHONE, CARD, "DE89370400440532013000"] {
        assert!(!text.contains(value), "`{value}` in {text}");
    }
}

fn last_message(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    messages.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn logs_mode_is_the_default_stores_placeholders_and_forwards_the_values() {
    let (upstream, server, key, token) = setup().await;
    let policy = get_json(&server, &token, "/api/v1/policies").await;
    assert_eq!(policy["piiRedaction"], "logs");
    assert_eq!(policy["piiPatterns"], json!([]));
    let text = personal_text();
    let (id, answer) = complete(&server, &key, &ask("echo", &text)).await;
    // The provider got the request unchanged, and so did the caller's answer.
    assert_eq!(last_message(&upstream.recorded.bodies()[0]), text);
    assert_eq!(answer["choices"][0]["message"]["content"], text.as_str());
    assert_eq!(answer["pii_redaction"]["mode"], "logs");
    let counts = &answer["pii_redaction"]["counts"];
    assert_eq!(counts["EMAIL"], 2, "{counts}");
    assert_eq!(counts["IBAN"], 1);
    assert_eq!(counts["PHONE"], 1);
    assert_eq!(counts["CARD"], 1);
    // The conversation log keeps placeholders, in the request and the answer.
    let stored = conversation(&server, &token, &id).await;
    assert_no_values(&stored);
    for placeholder in ["[EMAIL_1]", "[IBAN_1]", "[PHONE_1]", "[CARD_1]"] {
        assert!(stored.contains(placeholder), "{placeholder} in {stored}");
    }
    assert!(
        !stored.contains("[EMAIL_2]"),
        "the same value, the same placeholder"
    );
    assert!(stored.contains("Order 4711-2024"), "{stored}");
    let metrics = scrape_metrics(&server).await;
    assert!(
        metrics.contains(r#"tollgate_pii_redactions_total{kind="EMAIL",mode="logs"} 2"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn upstream_mode_forwards_placeholders_and_the_caller_gets_the_values() {
    let (upstream, server, key, token) = setup().await;
    set_policy(&server, &token, json!({ "piiRedaction": "upstream" })).await;
    let text = personal_text();
    let (id, answer) = complete(&server, &key, &ask("echo", &text)).await;
    let forwarded = last_message(&upstream.recorded.bodies()[0]);
    assert_no_values(&forwarded);
    assert!(
        forwarded.contains("[EMAIL_1]") && forwarded.contains("[IBAN_1]"),
        "{forwarded}"
    );
    assert_eq!(answer["choices"][0]["message"]["content"], text.as_str());
    assert_eq!(answer["pii_redaction"]["mode"], "upstream");
    assert_no_values(&conversation(&server, &token, &id).await);
}

#[tokio::test]
async fn upstream_mode_restores_streams_whose_chunks_split_placeholders_anywhere() {
    let (upstream, server, key, token) = setup().await;
    set_policy(&server, &token, json!({ "piiRedaction": "upstream" })).await;
    let text = personal_text();
    // Chunks of 1 character split each placeholder at every position; the
    // other sizes shift where the cuts fall.
    for model in ["echo-1", "echo-2", "echo-3", "echo-5", "echo-7"] {
        let events = chat_events(&server, &key, ask(model, &text)).await;
        let content: String = events
            .iter()
            .filter_map(|e| e["choices"].as_array())
            .flatten()
            .filter_map(|c| c["delta"]["content"].as_str())
            .collect();
        assert_eq!(content, text, "{model}");
        assert_eq!(events.last().unwrap(), "[DONE]", "{model}");
        let with_usage = events.iter().find(|e| e["usage"].is_object()).unwrap();
        assert_eq!(with_usage["pii_redaction"]["counts"]["EMAIL"], 2, "{model}");
    }
    for body in upstream.recorded.bodies() {
        assert_no_values(&last_message(&body));
    }
    let listed = get_json(&server, &token, "/api/v1/conversations").await;
    assert_eq!(listed["data"].as_array().unwrap().len(), 5);
    assert_no_values(&listed.to_string());
}

#[tokio::test]
async fn off_mode_keeps_and_forwards_the_values() {
    let (upstream, server, key, token) = setup().await;
    set_policy(&server, &token, json!({ "piiRedaction": "off" })).await;
    let (id, answer) = complete(&server, &key, &ask("echo", &personal_text())).await;
    assert!(answer.get("pii_redaction").is_none(), "{answer}");
    assert_eq!(
        last_message(&upstream.recorded.bodies()[0]),
        personal_text()
    );
    assert!(conversation(&server, &token, &id).await.contains(EMAIL));
}

#[tokio::test]
async fn tenant_patterns_are_validated_and_redacted_under_their_name() {
    let (upstream, server, key, token) = setup().await;
    let bad = json!({ "piiPatterns": [
        { "name": "customer", "regex": "KD-\\d{6}" },
        { "name": "broken", "regex": "(unclosed" },
    ] });
    let (status, body) = send(&server, &token, Method::PUT, "/api/v1/policies", Some(&bad)).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "invalid_request");
    assert_eq!(body["error"]["param"], "piiPatterns[1]");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("piiPatterns[1].regex")
    );
    for (patch, param) in [
        (json!({ "piiRedaction": "everywhere" }), "piiRedaction"),
        (
            json!({ "piiPatterns": [{ "name": "9lives", "regex": "x" }] }),
            "piiPatterns[0]",
        ),
        (
            json!({ "piiPatterns": [{ "name": "empty", "regex": "a*" }] }),
            "piiPatterns[0]",
        ),
        (
            json!({ "piiPatterns": [{ "name": "a", "regex": "x" }, { "name": "A", "regex": "y" }] }),
            "piiPatterns[1]",
        ),
    ] {
        let (status, body) = send(
            &server,
            &token,
            Method::PUT,
            "/api/v1/policies",
            Some(&patch),
        )
        .await;
        assert_eq!(status, 400, "{patch}: {body}");
        assert_eq!(body["error"]["param"], param, "{patch}: {body}");
    }
    // Nothing of a refused patch was kept.
    let policy = get_json(&server, &token, "/api/v1/policies").await;
    assert_eq!(policy["piiPatterns"], json!([]));
    assert_eq!(policy["piiRedaction"], "logs");

    let good = json!({ "piiRedaction": "upstream", "piiPatterns": [{ "name": "customer", "regex": "KD-\\d{6}" }] });
    let policy = set_policy(&server, &token, good).await;
    assert_eq!(policy["piiPatterns"][0]["name"], "customer");
    let (_, answer) = complete(&server, &key, &ask("echo", "Kunde KD-123456 fragt")).await;
    assert_eq!(
        last_message(&upstream.recorded.bodies()[0]),
        "Kunde [CUSTOMER_1] fragt"
    );
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "Kunde KD-123456 fragt"
    );
    assert_eq!(answer["pii_redaction"]["counts"]["CUSTOMER"], 1);
}

#[tokio::test]
async fn audited_bodies_keep_placeholders() {
    let (_upstream, server, _key, token) = setup().await;
    let (status, body) = send(
        &server,
        &token,
        Method::POST,
        "/api/v1/incidents",
        Some(&json!({ "severity": "serious", "category": "privacy", "description": format!("Customer {EMAIL} called from {PHONE}") })),
    )
    .await;
    assert!(status < 300, "{body}");
    let entries = get_json(&server, &token, "/api/v1/audit").await;
    let entry = entries["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "POST /api/v1/incidents")
        .unwrap();
    let audit = entry.to_string();
    assert_no_values(&audit);
    assert!(
        audit.contains("[EMAIL_1]") && audit.contains("[PHONE_1]"),
        "{audit}"
    );
}

#[tokio::test]
async fn erasure_and_export_find_the_subject_whose_id_is_an_email() {
    let (_upstream, server, key, token) = setup().await;
    let mut body = ask("echo", &format!("I am {EMAIL}, IBAN {IBAN}"));
    body["end_user_id"] = json!(EMAIL);
    let (id, _) = complete(&server, &key, &body).await;
    let (status, report) = send(
        &server,
        &token,
        Method::POST,
        "/api/v1/erasure",
        Some(&json!({ "endUserId": EMAIL })),
    )
    .await;
    assert_eq!(status, 200, "{report}");
    let exported = report["export"]["conversations"].as_array().unwrap();
    assert_eq!(exported.len(), 1, "{report}");
    assert_eq!(exported[0]["requestId"], id.as_str());
    assert!(exported[0].to_string().contains("[IBAN_1]"), "{report}");
    let record = get_json(&server, &token, &format!("/api/v1/conversations/{id}")).await;
    assert_eq!(record["erased"], true);
}

/// Precision and recall of the detectors on a labelled set (one JSON
/// object a line: `lang`, `text`, `pii` = [{`type`, `value`}]), counted
/// over values: a detected span that is exactly a labelled value is a hit.
fn measure(file: &str) -> (usize, f64, f64, Vec<String>) {
    use std::collections::BTreeMap;
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/pii")
            .join(file),
    )
    .unwrap();
    let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
    let mut per_lang: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for line in text.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        let text = row["text"].as_str().unwrap();
        let lang = row["lang"].as_str().unwrap().to_owned();
        let mut labelled: Vec<&str> = row["pii"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["value"].as_str().unwrap())
            .collect();
        let entry = per_lang.entry(lang).or_default();
        for span in tollgate::pii::detect::scan(text) {
            let found = &text[span.start..span.end];
            match labelled.iter().position(|v| *v == found) {
                Some(i) => {
                    labelled.remove(i);
                    tp += 1;
                    entry.0 += 1;
                }
                None => {
                    fp += 1;
                    entry.1 += 1;
                    misses.push(format!(
                        "false positive {found:?} ({:?}) in {text:?}",
                        span.kind
                    ));
                }
            }
        }
        for missed in labelled {
            fn_ += 1;
            entry.2 += 1;
            misses.push(format!("missed {missed:?} in {text:?}"));
        }
    }
    let precision = tp as f64 / (tp + fp) as f64;
    let recall = tp as f64 / (tp + fn_) as f64;
    println!(
        "{file}: rows {}, tp {tp}, fp {fp}, fn {fn_}",
        text.lines().count()
    );
    println!("precision {precision:.4}, recall {recall:.4}");
    for (lang, (tp, fp, fn_)) in &per_lang {
        println!("{lang}: tp {tp}, fp {fp}, fn {fn_}");
    }
    for miss in &misses {
        println!("{miss}");
    }
    (text.lines().count(), precision, recall, misses)
}

/// The labelled set (`tests/data/pii/labelled.jsonl`, 8 languages, with
/// near-misses, written with the detectors): precision at least 99 % and
/// recall at least 97 %.
#[test]
fn the_labelled_set_meets_precision_and_recall() {
    let (rows, precision, recall, misses) = measure("labelled.jsonl");
    assert!(rows >= 500);
    assert!(precision >= 0.99, "precision {precision:.4}: {misses:#?}");
    assert!(recall >= 0.97, "recall {recall:.4}: {misses:#?}");
}

/// The independent sets (`tests/data/pii/independent-{1,...,9}.jsonl`,
/// about 530 snippets each in 8 languages, 46 to 48 % near-misses, each by
/// an author who never read the detectors or the other sets): the same
/// goals. Each was measured before the changes it led to
/// (docs/compliance-operations.md): set 1 at precision 94.4 % and recall
/// 98.7 %, set 2 at 96.2 % and 95.4 % (after set 1's changes), set 3 at
/// 100 % and 98.0 % (after sets 1 and 2), set 4 at 99.8 % and 97.4 %
/// (after sets 1 to 3; its Corsican NIRs led to `2A`/`2B` being read, its
/// other misses to five context rules, after which it is found whole), set 5
/// at 93.6 % and 97.9 % (after sets 1 to 4: asset names like `logo@2x.png`
/// read as addresses, numbered sections as IP addresses, register, lot
/// and payment references as phones; NIEs written `Y-1234567-L`, a DNI in
/// brackets and Maestro cards missed), found whole after its classes were
/// added. Set 6 at 96.85 % and 97.26 % (after sets 1 to 5: versions
/// with only the first of several near a version word, dated, compound
/// and CEF references and a bracket read as phones; Maestro 50xx, 116 and
/// 0800 service numbers, a dotted DNI, a quoted PESEL, addresses after a
/// skipped log token and English and Portuguese names of a BSN and a NIF
/// missed), at 100 % and 99.8 % after its classes (an ORM-bound NIF left).
/// Set 7 at 97.88 % and 97.88 % (after sets 1 to 6: 415 found, 9 false,
/// 9 missed; numbers ended by an ellipsis, guillemets or curly quotes and
/// identifiers in padded table cells missed, a date and its time,
/// references with a letter suffix, customer numbers and a fingerprint's
/// colon run read as phones and an address; `1-800-...` missed), found
/// whole after its classes. Set 8 at 97.69 % and 98.96 % (after sets 1 to
/// 7: 381 found, 9 false, 4 missed; networks with a prefix and a netmask,
/// a software compound's version, a git login, a login on a private
/// domain, a lottery draw and contract and joined references read as
/// addresses, e-mails and phones; addresses in comma-separated fields,
/// an IPv6 address before its port and a trunk set apart in brackets
/// missed), found whole after its classes. Set 9 at 98.31 % and 97.36 %
/// (after sets 1 to 8: 406 found, 7 false, 11 missed; phones after a
/// price with its VAT in an earlier sentence, mobiles after a numbered
/// list's `nr 7 –`, a trunk set apart before an area code in groups, an
/// address after a machine's name, a Steuer-ID in a CSV row's last field
/// and an Italian mobile in dots missed; file names with a date or a
/// scale after `@`, X.509 object identifiers, a Polish release number
/// and an airline ticket number read as addresses, e-mails and a
/// phone), found whole after its classes. Set 10 at 99.48 % and 98.97 %
/// on its first measure, after set 9's classes (384 found, 2 false, 4
/// missed), so at the goals as it came: held here with no class of its
/// own (it measured 98.97 % and 98.97 % before set 9's classes).
/// Set 2's author left private and documentation addresses (10.x,
/// 192.168.x, 2001:db8::) unlabelled where set 1's labelled them: its
/// nine such addresses count as false positives here, so its precision
/// floor is 97 %; every other value is held to the goals.
#[test]
fn the_independent_sets_meet_precision_and_recall() {
    for (file, precision_floor) in [
        ("independent-1.jsonl", 0.99),
        ("independent-2.jsonl", 0.97),
        ("independent-3.jsonl", 0.99),
        ("independent-4.jsonl", 0.99),
        ("independent-5.jsonl", 0.99),
        ("independent-6.jsonl", 0.99),
        ("independent-7.jsonl", 0.99),
        ("independent-8.jsonl", 0.99),
        ("independent-9.jsonl", 0.99),
        ("independent-10.jsonl", 0.99),
    ] {
        let (rows, precision, recall, misses) = measure(file);
        assert!(rows >= 500, "{file}");
        assert!(
            precision >= precision_floor,
            "{file}: precision {precision:.4}: {misses:#?}"
        );
        assert!(recall >= 0.97, "{file}: recall {recall:.4}: {misses:#?}");
    }
}

/// The words around a number decide what it is: a version is no IP
/// address unless an address word is nearer, a labelled reference is no
/// phone unless a phone word names it, a number in brackets is read from
/// after the bracket, and the North American and Polish landline formats
/// are phones.
#[test]
fn the_words_around_a_number_decide_what_it_is() {
    use tollgate::pii::Kind;
    let kinds = |text: &str| -> Vec<(Kind, String)> {
        tollgate::pii::detect::scan(text)
            .into_iter()
            .map(|s| (s.kind, text[s.start..s.end].to_owned()))
            .collect()
    };
    for text in [
        "Installed build 12.0.3.4 on all kiosks last night.",
        "Der Patch hebt die Software auf 2.3.0.11 an, danach 2.3.0.12.",
        "Il rilascio della versione 8.1.0.2 è previsto per lunedì.",
        "Artikelnummer 0471 2239 118 ist nicht mehr lieferbar.",
        "Numéro de commande 0612345678, livré mardi.",
        "Nº de pedido 0912 445 871, enviado ayer.",
        "Zamówienie nr 0221 334 556 zostało wysłane.",
        "KvK 012345678 en btw-nummer NL001234567B01.",
        // A phone-shaped number named as an identifier (a wrong check
        // digit), glued to a code's letters, or continuing a code.
        "Numer PESEL z formularza: 02270803628 jest błędny.",
        "Mandat M-004711223-07 vom 3. Mai.",
        "Sendung JJD 00 1234 5678 9012 unterwegs.",
        "Betrag 1.234.567 laut Version 2.4.1.",
    ] {
        assert!(kinds(text).is_empty(), "{text}: {:?}", kinds(text));
    }
    for (text, kind, value) in [
        (
            "Update the proxy address to 10.20.30.40 tonight.",
            Kind::Ip,
            "10.20.30.40",
        ),
        (
            "Order 55 delivered; questions? Tel. 030 2345678",
            Kind::Phone,
            "030 2345678",
        ),
        (
            "Customer service: 0800 123 4567",
            Kind::Phone,
            "0800 123 4567",
        ),
        (
            "Reach the front desk at (415) 555-0132.",
            Kind::Phone,
            "(415) 555-0132",
        ),
        ("Biuro w Gdańsku: 58 341 22 10", Kind::Phone, "58 341 22 10"),
        (
            "Sekretariat, Katowice: 32 255 18 40",
            Kind::Phone,
            "32 255 18 40",
        ),
        (
            "Karte (4111 1111 1111 1111) abgelehnt",
            Kind::Card,
            "4111 1111 1111 1111",
        ),
        (
            "(Steuer-ID 86095742719) liegt vor",
            Kind::DeTaxId,
            "86095742719",
        ),
        // A name further back in the line, and a word that starts like a
        // label ("Vater" is no VAT number).
        (
            "Die Identifikationsnummer der neuen Kollegin aus dem Vertrieb ist 86095742719.",
            Kind::DeTaxId,
            "86095742719",
        ),
        ("Steuer-ID Vater: 86095742719", Kind::DeTaxId, "86095742719"),
        // A column of a table whose header names it.
        (
            "naam;bsn;plaats\nJ. de Vries;123456782;Delft",
            Kind::NlBsn,
            "123456782",
        ),
        (
            "Name\tPESEL\tMiasto\nJan Nowak\t44051401359\tGdynia",
            Kind::PlPesel,
            "44051401359",
        ),
        // Separators and brackets people write.
        (
            "Rückruf bitte unter 0911 / 4477 23 10",
            Kind::Phone,
            "0911 / 4477 23 10",
        ),
        (
            "Oficina: (+34) 915 22 43 18",
            Kind::Phone,
            "(+34) 915 22 43 18",
        ),
        // A name that starts a word of another language is no name:
        // Dutch "nieuw" is no NIE.
        (
            "Nieuw mobiel: 06 48 21 77 30",
            Kind::Phone,
            "06 48 21 77 30",
        ),
        // Dotted mobiles that a phone word names; a NIE with its letter set
        // apart; an identifier named by the word just before it, whatever
        // labels come earlier.
        ("móvil 611.20.48.37", Kind::Phone, "611.20.48.37"),
        (
            "Tarjeta de residencia, NIE X1234567-L.",
            Kind::EsDni,
            "X1234567-L",
        ),
        (
            "kunde_nr=77 idnr=86095742719 ok",
            Kind::DeTaxId,
            "86095742719",
        ),
    ] {
        assert_eq!(kinds(text), [(kind, value.to_owned())], "{text}");
    }
}

/// An IBAN in a CSV row, after a comma that follows a digit, is found
/// (a comma after a digit starts decimals only for digits).
#[test]
fn an_iban_after_a_number_and_a_comma_is_found() {
    use tollgate::pii::Kind;
    let text = "Ana,+351 912 345 678,PT50000201231234567890154";
    let found: Vec<(Kind, &str)> = tollgate::pii::detect::scan(text)
        .into_iter()
        .map(|s| (s.kind, &text[s.start..s.end]))
        .collect();
    assert_eq!(
        found,
        [
            (Kind::Phone, "+351 912 345 678"),
            (Kind::Iban, "PT50000201231234567890154")
        ]
    );
}

/// A store written by schema 5 (policies without PII fields) is migrated on
/// open: each policy keeps its values and gains `piiRedaction: logs` and no
/// patterns.
#[tokio::test]
async fn a_schema_4_store_gains_the_pii_policy_on_open() {
    use tollgate::store::codec;
    use tollgate::store::tables::{META, META_SCHEMA_VERSION, SCHEMA_VERSION, TENANTS};
    use tollgate::tenants::Tenant;
    use tollgate::tenants::legacy::{PolicyV3, TenantV3};

    let mut server = TestServer::start();
    server.terminate();
    let data_file = server.data_dir().join("tollgate.redb");
    {
        let db = redb::Database::open(&data_file).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut table = txn.open_table(TENANTS).unwrap();
            let rows: Vec<(Vec<u8>, Tenant)> = redb::ReadableTable::iter(&table)
                .unwrap()
                .map(|row| {
                    let (k, v) = row.unwrap();
                    (k.value().to_vec(), codec::decode(v.value()).unwrap())
                })
                .collect();
            for (key, t) in rows {
                let p = t.policy;
                let old = TenantV3 {
                    id: t.id,
                    name: t.name,
                    tier: t.tier,
                    wallet: t.wallet,
                    webhook_secret: t.webhook_secret,
                    webhook_urls: t.webhook_urls,
                    policy: PolicyV3 {
                        require_purpose: true,
                        require_consent: p.require_consent,
                        review_mode: p.review_mode,
                        review_ttl_secs: p.review_ttl_secs,
                        judge_enabled: p.judge_enabled,
                        judge_model: p.judge_model,
                        log_bodies: p.log_bodies,
                        retention_days: 400,
                        high_risk_retention_days: p.high_risk_retention_days,
                        enforce_registry: p.enforce_registry,
                    },
                    created_at: t.created_at,
                    webhooks_updated_at: t.webhooks_updated_at,
                };
                table
                    .insert(key.as_slice(), codec::encode(&old).as_slice())
                    .unwrap();
            }
            txn.open_table(META)
                .unwrap()
                .insert(META_SCHEMA_VERSION, 5u32.to_be_bytes().as_slice())
                .unwrap();
        }
        txn.commit().unwrap();
    }
    server.launch().unwrap();
    let token = login(&server).await;
    let policy = get_json(&server, &token, "/api/v1/policies").await;
    assert_eq!(policy["piiRedaction"], "logs", "{policy}");
    assert_eq!(policy["piiPatterns"], json!([]));
    assert_eq!(policy["retentionDays"], 400);
    assert_eq!(policy["requirePurpose"], true);
    server.terminate();
    let db = redb::Database::open(&data_file).unwrap();
    let read = redb::ReadableDatabase::begin_read(&db).unwrap();
    let version = read
        .open_table(META)
        .unwrap()
        .get(META_SCHEMA_VERSION)
        .unwrap()
        .unwrap()
        .value()
        .to_vec();
    assert_eq!(version, SCHEMA_VERSION.to_be_bytes());
}
