//! The compact layout of the records written per request (issue 19,
//! items 6 and 9): a store written by the schema 8 code (checked in under
//! `tests/fixtures/store-v8`) is migrated on first open and answers every
//! read as before: usage totals and raw records, keys, the audit log and
//! its chain, the conversation log; every rewritten value is compact. A
//! store written by the schema 9 code (`tests/fixtures/store-v9`: bodies as
//! text) opens at schema 10 and answers the same, its records untouched,
//! while new conversation records store their bodies compressed.
//!
//! This file speaks only HTTP, the CLI and redb, so the fixture writers
//! below build on older code too.

mod common;

use common::TestServer;
use serde_json::{Value, json};

const FIXTURE_V8: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v8");
const FIXTURE_V9: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v9");
const FROM: &str = "2020-01-01T00:00:00Z";
const TO: &str = "2040-01-01T00:00:00Z";
/// The tables whose rows the migration rewrites.
const TABLES: [&str; 4] = ["usage", "audit", "conversations", "conversation_expiry"];

async fn chat(server: &TestServer, key: &str, body: Value, id: Option<&str>) -> u16 {
    let mut request = common::client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(&body);
    if let Some(id) = id {
        request = request.header("x-request-id", id);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    response.bytes().await.unwrap();
    status
}

async fn get(server: &TestServer, token: &str, path: &str) -> Value {
    common::get_json(server, token, path).await
}

/// Rows per table of a stopped server's file, and the format byte of
/// every value.
fn rows(data_dir: &std::path::Path) -> (Value, Vec<u8>) {
    let db = redb::Database::open(data_dir.join("tollgate.redb")).unwrap();
    let read = redb::ReadableDatabase::begin_read(&db).unwrap();
    let mut counts = serde_json::Map::new();
    let mut formats = Vec::new();
    for name in TABLES {
        let def: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new(name);
        let table = read.open_table(def).unwrap();
        let mut n = 0;
        for row in redb::ReadableTable::iter(&table).unwrap() {
            let (_, value) = row.unwrap();
            if name != "conversation_expiry" {
                formats.push(value.value()[0]);
            }
            n += 1;
        }
        counts.insert(name.to_owned(), json!(n));
    }
    (Value::Object(counts), formats)
}

/// Every read the migration must keep, as the owner sees it: each
/// conversation in full (bodies included) under `each`.
async fn reads(server: &TestServer, token: &str) -> Value {
    let conversations = get(server, token, "/api/v1/conversations?limit=200").await;
    let first = conversations["data"][0]["requestId"].as_str().unwrap();
    let mut each = Vec::new();
    for c in conversations["data"].as_array().unwrap() {
        let id = c["requestId"].as_str().unwrap();
        each.push(get(server, token, &format!("/api/v1/conversations/{id}")).await);
    }
    json!({
        "records": get(server, token, &format!("/api/v1/usage/records?from={FROM}&to={TO}")).await,
        "audit": get(server, token, "/api/v1/audit?limit=500").await,
        "conversation": get(server, token, &format!("/api/v1/conversations/{first}")).await,
        "conversations": conversations,
        "each": each,
    })
}

/// Writes `tests/fixtures/store-v8` with the code of schema 8: two
/// tenants, three keys, chat (plain, streamed, with a client's request
/// id), embedding and refused requests, bodies logged, and that code's
/// answers next to the store. Run once, by hand, on the commit before
/// the compact layout:
/// `cargo test --test compact -- --ignored write_schema_8_fixture`.
#[tokio::test]
#[ignore = "writes the checked-in fixture; run by hand on schema 8"]
async fn write_schema_8_fixture() {
    write_fixture(FIXTURE_V8, false).await;
}

/// Writes `tests/fixtures/store-v9` with the schema 9 binary (bodies
/// stored as text): the schema 8 fixture's traffic, plus requests with
/// non-ASCII text, a native Messages request and a long conversation.
/// Run once, by hand, with that binary:
/// `TOLLGATE_TEST_BIN=path/to/schema-9/tollgate cargo nextest run --test
/// compact --run-ignored only write_schema_9_fixture`.
#[tokio::test]
#[ignore = "writes the checked-in fixture; run by hand with the schema 9 binary"]
async fn write_schema_9_fixture() {
    write_fixture(FIXTURE_V9, true).await;
}

/// Requests whose bodies test the compression: non-ASCII text, a native
/// Messages request, a long conversation.
async fn varied_requests(server: &TestServer, key: &str) {
    let text = json!({ "model": "mock-chat",
        "messages": [{ "role": "user", "content": "Grüße aus Köln, 東京 и Москва 👋" }] });
    assert_eq!(chat(server, key, text, None).await, 200);
    let long: Vec<Value> = (0..40)
        .map(|i| {
            json!({ "role": if i % 2 == 0 { "user" } else { "assistant" },
            "content": format!("turn {i}: tell me more about item {}", i * 7) })
        })
        .collect();
    let long = json!({ "model": "mock-chat", "messages": long, "temperature": 0.2 });
    assert_eq!(chat(server, key, long, None).await, 200);
    let native = common::client()
        .post(server.url("/v1/messages"))
        .header("x-api-key", key)
        .header("anthropic-version", "2023-06-01")
        .json(&json!({ "model": "mock-chat", "max_tokens": 100,
            "messages": [{ "role": "user", "content": "Say hello in five words." }] }))
        .send()
        .await
        .unwrap();
    assert_eq!(native.status(), 200);
}

/// Runs the fixtures' traffic on the binary under test (or
/// `TOLLGATE_TEST_BIN`) and checks the store and its answers in at `out`.
async fn write_fixture(out: &str, varied: bool) {
    let mut server = TestServer::start();
    let password = server.owner_password();
    server.cli_json(&["tenants", "create", "--name", "acme", "--tier", "paid"]);
    server.cli_json(&["tenants", "topup", "acme", "--credits", "50"]);
    let demo = server.demo_key();
    let (_, first) = server.create_key(&["--tenant", "acme"]);
    let (_, second) = server.create_key(&["--tenant", "acme", "--credit-limit", "1000"]);
    for i in 0..5 {
        for key in [&demo, &first, &second] {
            let body = json!({ "model": "mock-chat",
                "messages": [{ "role": "user", "content": format!("hello number {i}") }] });
            assert_eq!(chat(&server, key, body, None).await, 200);
        }
    }
    let streamed = json!({ "model": "mock-chat", "stream": true,
        "messages": [{ "role": "user", "content": "stream it" }] });
    assert_eq!(chat(&server, &first, streamed, None).await, 200);
    let named = json!({ "model": "mock-chat",
        "messages": [{ "role": "user", "content": "my own id" }] });
    assert_eq!(chat(&server, &demo, named, Some("client-id-42")).await, 200);
    for key in [&first, &demo] {
        let answer = common::client()
            .post(server.url("/v1/embeddings"))
            .bearer_auth(key)
            .json(&json!({ "model": "mock-embedding", "input": "some text to embed" }))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        let refused = json!({ "model": "no-such-model",
            "messages": [{ "role": "user", "content": "x" }] });
        assert_eq!(chat(&server, key, refused, None).await, 404);
    }
    if varied {
        varied_requests(&server, &first).await;
    }
    let token = common::login_as(&server, "owner@localhost", &password).await;
    let reads = reads(&server, &token).await;
    server.terminate();
    let out = std::path::Path::new(out);
    std::fs::create_dir_all(out).unwrap();
    std::fs::copy(
        server.data_dir().join("tollgate.redb"),
        out.join("tollgate.redb"),
    )
    .unwrap();
    let expected = json!({
        "ownerPassword": password,
        "demoKey": demo,
        "usage": server.cli_json(&["usage", "--from", FROM, "--to", TO]),
        "keys": server.cli_json(&["keys", "list"]),
        "audit": server.cli_json(&["audit", "verify"]),
        "rows": rows(&server.data_dir()).0,
        "reads": reads,
    });
    std::fs::write(
        out.join("expected.json"),
        serde_json::to_string_pretty(&expected).unwrap(),
    )
    .unwrap();
}

/// A server not yet started on a copy of a fixture.
fn fixture(from: &str) -> (TestServer, Value) {
    let server = TestServer::unstarted_on_fixture(from);
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{from}/expected.json")).unwrap())
            .unwrap();
    (server, expected)
}

/// The CLI's first open of a fixture store: the usage totals, the keys and
/// the audit chain answer what the previous code wrote down.
fn first_open_answers_as_expected(server: &TestServer, expected: &Value) {
    let usage = server.cli_json(&["usage", "--from", FROM, "--to", TO]);
    assert_eq!(usage, expected["usage"]);
    assert_eq!(server.cli_json(&["keys", "list"]), expected["keys"]);
    let audit = server.cli_json(&["audit", "verify"]);
    assert_eq!(audit["valid"], true, "{audit}");
    assert_eq!(audit["entries"], expected["audit"]["entries"]);
}

#[tokio::test]
async fn a_schema_8_store_is_migrated_and_answers_every_read_the_same() {
    let (mut server, expected) = fixture(FIXTURE_V8);
    let (before, formats) = rows(&server.data_dir());
    assert_eq!(before, expected["rows"]);
    assert!(formats.iter().all(|f| *f == 1), "schema 8 values: bincode");

    // The CLI's first open migrates; totals, keys and the chain hold.
    first_open_answers_as_expected(&server, &expected);

    // Every row rewritten, none lost, each value compact (conversation
    // records in their schema 10 format).
    let (after, formats) = rows(&server.data_dir());
    assert_eq!(after, expected["rows"]);
    assert!(!formats.is_empty());
    assert!(formats.iter().all(|f| *f == 2 || *f == 3), "{formats:?}");
    assert_eq!(schema_version(&server), tollgate::store::SCHEMA_VERSION);

    // The server reads the same records, entries (links and digests
    // included) and conversations.
    server.launch().unwrap();
    let (token, now) = same_reads(&server, &expected).await;
    // A client's own request id survived as text, a UUID as bytes.
    let ids: Vec<&str> = now["records"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requestId"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"client-id-42"), "{ids:?}");

    // The chain, with the server's own entries appended, still verifies.
    let answer = get(&server, &token, "/api/v1/audit/verify").await;
    assert_eq!(answer["valid"], true, "{answer}");
}

/// Signs in as the fixture's owner, checks that the running server
/// answers the fixture's reads, and returns the token and the reads.
async fn same_reads(server: &TestServer, expected: &Value) -> (String, Value) {
    let password = expected["ownerPassword"].as_str().unwrap();
    let token = common::login_as(server, "owner@localhost", password).await;
    let mut now = reads(server, &token).await;
    let was = &expected["reads"];
    // Signing in again appended entries: compare the fixture's.
    let last = was["audit"]["data"][0]["seq"].as_u64().unwrap();
    now["audit"]["data"]
        .as_array_mut()
        .unwrap()
        .retain(|e| e["seq"].as_u64().unwrap() <= last);
    for part in ["records", "audit", "conversations", "conversation"] {
        assert_eq!(now[part], was[part], "{part}");
    }
    (token, now)
}

fn schema_version(server: &TestServer) -> u32 {
    let db = redb::Database::open(server.data_dir().join("tollgate.redb")).unwrap();
    let read = redb::ReadableDatabase::begin_read(&db).unwrap();
    let version = read
        .open_table(tollgate::store::tables::META)
        .unwrap()
        .get(tollgate::store::tables::META_SCHEMA_VERSION)
        .unwrap()
        .unwrap()
        .value()
        .to_vec();
    u32::from_be_bytes(version.try_into().unwrap())
}

/// The raw value of every conversation record.
fn conversation_values(data_dir: &std::path::Path) -> Vec<Vec<u8>> {
    let db = redb::Database::open(data_dir.join("tollgate.redb")).unwrap();
    let read = redb::ReadableDatabase::begin_read(&db).unwrap();
    let table = read
        .open_table(tollgate::store::tables::CONVERSATIONS)
        .unwrap();
    redb::ReadableTable::iter(&table)
        .unwrap()
        .map(|row| row.unwrap().1.value().to_vec())
        .collect()
}

#[tokio::test]
async fn a_schema_9_store_opens_at_schema_10_and_reads_its_bodies_the_same() {
    let (mut server, expected) = fixture(FIXTURE_V9);
    let (before, formats) = rows(&server.data_dir());
    assert_eq!(before, expected["rows"]);
    assert!(
        formats.iter().all(|f| *f == 2),
        "schema 9 values: {formats:?}"
    );
    let old_values = conversation_values(&server.data_dir());

    // The CLI's first open: totals, keys and the chain hold.
    first_open_answers_as_expected(&server, &expected);
    assert_eq!(schema_version(&server), 10);
    // Nothing rewritten: the schema 9 records stay as they were.
    assert_eq!(rows(&server.data_dir()), (before, formats));
    assert_eq!(conversation_values(&server.data_dir()), old_values);

    // Every conversation (bodies included), usage record and audit entry
    // reads the same.
    server.launch().unwrap();
    let (token, now) = same_reads(&server, &expected).await;
    let was = &expected["reads"];
    let each = now["each"].as_array().unwrap();
    assert_eq!(now["each"], was["each"]);
    assert!(
        each.iter()
            .any(|c| c["request"].to_string().contains("東京"))
    );
    assert!(each.iter().all(|c| !c["response"].is_null()));

    // New records are written in format 3, compressed, next to the old
    // ones, and both kinds read.
    let key = expected["demoKey"].as_str().unwrap();
    let body = json!({ "model": "mock-chat",
        "messages": [{ "role": "user", "content": "Say hello in five words." }] });
    assert_eq!(chat(&server, key, body, Some("after-upgrade")).await, 200);
    let fresh = get(&server, &token, "/api/v1/conversations/after-upgrade").await;
    assert_eq!(
        fresh["request"]["messages"][0]["content"],
        "Say hello in five words."
    );
    assert_eq!(fresh["response"]["object"], "chat.completion");
    let listed = get(&server, &token, "/api/v1/conversations?limit=200").await;
    assert_eq!(listed["data"].as_array().unwrap().len(), each.len() + 1);
    server.terminate();
    let values = conversation_values(&server.data_dir());
    assert_eq!(values.iter().filter(|v| v[0] == 3).count(), 1);
    assert_eq!(
        values.iter().filter(|v| v[0] == 2).count(),
        old_values.len()
    );
    let answer = server.cli_json(&["audit", "verify"]);
    assert_eq!(answer["valid"], true, "{answer}");
}
