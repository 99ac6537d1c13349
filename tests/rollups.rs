//! Usage rollups, retention and bounded storage (issue 19, item 6): the
//! usage and stats APIs answer from per day/tenant/key/model/endpoint
//! rollups kept in the charge's own transaction; raw usage records and
//! audit entries expire after their retention while the totals stay and
//! the audit chain still verifies from the checkpoint of its pruned
//! prefix; a store written before rollups existed is migrated on open.

mod common;

use common::TestServer;
use serde_json::{Value, json};

/// The fixture store written by the code of schema 7 (before rollups).
const FIXTURE_V7: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v7");
/// The period the fixture's usage is read over (all of it).
const FIXTURE_FROM: &str = "2020-01-01T00:00:00Z";
const FIXTURE_TO: &str = "2040-01-01T00:00:00Z";

async fn chat(server: &TestServer, key: &str, model: &str, text: &str) -> reqwest::Response {
    common::chat_post(
        server,
        key,
        &json!({ "model": model, "messages": [{ "role": "user", "content": text }] }),
    )
    .await
}

/// Writes `tests/fixtures/store-v7` with the code of schema 7: two tenants,
/// three keys, chat and embedding requests on two models, refused requests,
/// and the `tollgate usage` and `keys list` answers of that code next to
/// the store. Run once, by hand, on the commit before rollups:
/// `cargo test --test rollups -- --ignored write_schema_7_fixture`.
#[tokio::test]
#[ignore = "writes the checked-in fixture; run by hand on schema 7"]
async fn write_schema_7_fixture() {
    let mut server = TestServer::start();
    server.cli_json(&["tenants", "create", "--name", "acme", "--tier", "paid"]);
    server.cli_json(&["tenants", "topup", "acme", "--credits", "50"]);
    let (_, demo) = (String::new(), server.demo_key());
    let (_, first) = server.create_key(&["--tenant", "acme"]);
    let (_, second) = server.create_key(&["--tenant", "acme", "--credit-limit", "1000"]);
    for i in 0..6 {
        for key in [&demo, &first, &second] {
            let answer = chat(&server, key, "mock-chat", &format!("hello number {i}")).await;
            assert_eq!(answer.status(), 200);
        }
    }
    for key in [&first, &demo] {
        let answer = common::client()
            .post(server.url("/v1/embeddings"))
            .bearer_auth(key)
            .json(&json!({ "model": "mock-embedding", "input": "some text to embed" }))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
    }
    // Refusals (an unknown model): `inference.refused` audit entries.
    for key in [&first, &demo] {
        assert_eq!(chat(&server, key, "no-such-model", "x").await.status(), 404);
    }
    server.terminate();
    let out = std::path::Path::new(FIXTURE_V7);
    std::fs::create_dir_all(out).unwrap();
    std::fs::copy(
        server.data_dir().join("tollgate.redb"),
        out.join("tollgate.redb"),
    )
    .unwrap();
    let expected = json!({
        "usage": server.cli_json(&["usage", "--from", FIXTURE_FROM, "--to", FIXTURE_TO]),
        "keys": server.cli_json(&["keys", "list"]),
        "audit": server.cli_json(&["audit", "verify"]),
    });
    std::fs::write(
        out.join("expected.json"),
        serde_json::to_string_pretty(&expected).unwrap(),
    )
    .unwrap();
}
