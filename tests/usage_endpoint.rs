//! The endpoint as a usage dimension: each route's usage record names its
//! endpoint; `/api/v1/usage`, `/api/v1/usage/records`, `/api/v1/stats`
//! and `tollgate usage` filter by it (an unknown name is a 400 naming
//! `endpoint`); and a store written by schema 6 (records without an
//! endpoint) is migrated with the endpoint inferred.

mod common;

use common::anthropic::Anthropic;
use common::gemini::Gemini;
use common::media::MediaUpstream;
use common::{TestServer, client, error_code, get_json, login};
use serde_json::{Value, json};

fn config(anthropic: &str, gemini: &str, media: &str) -> String {
    let mut out = format!(
        "[[providers]]\nid = \"claude\"\nkind = \"anthropic\"\nbase_url = \"{anthropic}\"\napi_key_env = \"TEST_ANTHROPIC_KEY\"\n\
         [[providers]]\nid = \"gem\"\nkind = \"gemini\"\nbase_url = \"{gemini}\"\napi_key_env = \"TEST_GEMINI_KEY\"\n\
         [[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{media}\"\n\
         [[providers]]\nid = \"mock\"\nkind = \"mock\"\n"
    );
    let tokens = "{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }";
    for (id, provider, upstream, output, pricing) in [
        ("claude-ok", "claude", "claude-ok", "TEXT", tokens),
        ("gemini-ok", "gem", "gemini-ok", "TEXT", tokens),
        ("mock-chat", "mock", "echo", "TEXT", tokens),
        (
            "img",
            "up",
            "img",
            "IMAGE",
            "{ unit = \"per_image\", per_image = 0.04 }",
        ),
        (
            "tts",
            "up",
            "tts",
            "AUDIO",
            "{ unit = \"per_character\", per_million_characters = 15.0 }",
        ),
    ] {
        out.push_str(&format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{upstream}\"\n\
             input = [\"TEXT\"]\noutput = [\"{output}\"]\ncontext_window = 8192\npricing = {pricing}\n"
        ));
    }
    out
}

struct Setup {
    _anthropic: Anthropic,
    _gemini: Gemini,
    _media: MediaUpstream,
    server: TestServer,
}

async fn setup() -> Setup {
    let anthropic = Anthropic::start().await;
    let gemini = Gemini::start().await;
    let media = MediaUpstream::start().await;
    let server = TestServer::start_with(
        Some(&config(
            &anthropic.base_url,
            &gemini.base_url,
            &media.base_url,
        )),
        &[
            ("TEST_ANTHROPIC_KEY", "sk-ant-test"),
            ("TEST_GEMINI_KEY", "gm-test"),
        ],
    );
    Setup {
        _anthropic: anthropic,
        _gemini: gemini,
        _media: media,
        server,
    }
}

async fn post(server: &TestServer, key: &str, path: &str, body: Value) -> reqwest::Response {
    client()
        .post(server.url(path))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn chat(server: &TestServer, key: &str) {
    let body =
        json!({ "model": "mock-chat", "messages": [{ "role": "user", "content": "hello" }] });
    let response = post(server, key, "/v1/chat/completions", body).await;
    assert_eq!(response.status(), 200);
}

async fn message(server: &TestServer, key: &str) {
    let body = json!({ "model": "claude-ok", "max_tokens": 64,
                       "messages": [{ "role": "user", "content": "hello" }] });
    let response = client()
        .post(server.url("/v1/messages"))
        .header("x-api-key", key)
        .header("anthropic-version", "2023-06-01")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

async fn generate(server: &TestServer, key: &str) {
    let body = json!({ "contents": [{ "role": "user", "parts": [{ "text": "hello" }] }] });
    let response = client()
        .post(server.url("/v1beta/models/gemini-ok:generateContent"))
        .header("x-goog-api-key", key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

async fn image(server: &TestServer, key: &str) {
    let body = json!({ "model": "img", "prompt": "a lighthouse", "n": 1 });
    let response = post(server, key, "/v1/images/generations", body).await;
    assert_eq!(response.status(), 200);
}

async fn speech(server: &TestServer, key: &str) {
    let body = json!({ "model": "tts", "input": "Hello world", "voice": "alloy" });
    let response = post(server, key, "/v1/audio/speech", body).await;
    assert_eq!(response.status(), 200);
    // The speech charge commits before the first byte; read it all anyway.
    response.bytes().await.unwrap();
}

/// (model, endpoint) of each record the query answers, sorted.
fn pairs(records: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = records["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["model"].as_str().unwrap().to_owned(),
                r["endpoint"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[tokio::test]
async fn each_route_records_its_endpoint_and_every_usage_view_filters_by_it() {
    let Setup { server, .. } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    chat(&server, &key).await;
    message(&server, &key).await;
    generate(&server, &key).await;
    image(&server, &key).await;
    speech(&server, &key).await;
    // A refused chat request: an error of the chat endpoint only.
    let refused = post(
        &server,
        &key,
        "/v1/chat/completions",
        json!({ "model": "no-such-model", "messages": [{ "role": "user", "content": "hi" }] }),
    )
    .await;
    assert!(refused.status().is_client_error());

    let token = login(&server).await;
    let records = get_json(
        &server,
        &token,
        &format!("/api/v1/usage/records?keyId={key_id}"),
    )
    .await;
    assert_eq!(
        pairs(&records),
        owned(&[
            ("claude-ok", "messages"),
            ("gemini-ok", "generate_content"),
            ("img", "images"),
            ("mock-chat", "chat"),
            ("tts", "audio"),
        ])
    );

    let messages = get_json(&server, &token, "/api/v1/usage/records?endpoint=messages").await;
    assert_eq!(pairs(&messages), owned(&[("claude-ok", "messages")]));

    let report = get_json(&server, &token, "/api/v1/usage?endpoint=images").await;
    assert_eq!(report["endpoint"], "images");
    assert_eq!(report["totals"]["requests"], 1);
    assert_eq!(pairs(&report), owned(&[("img", "images")]));
    let all = get_json(&server, &token, "/api/v1/usage").await;
    let by_endpoint: Vec<(&str, u64)> = all["byEndpoint"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["endpoint"].as_str().unwrap(),
                e["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        by_endpoint,
        [
            ("chat", 1),
            ("messages", 1),
            ("generate_content", 1),
            ("images", 1),
            ("audio", 1)
        ]
    );
    assert_eq!(all["totals"]["requests"], 5);

    let stats = get_json(&server, &token, "/api/v1/stats?endpoint=chat").await;
    assert_eq!(stats["endpoint"], "chat");
    assert_eq!(stats["totals"]["requests"], 1);
    assert_eq!(stats["totals"]["errors"], 1, "{stats}");
    assert_eq!(stats["topModels"][0]["model"], "mock-chat");
    let stats = get_json(&server, &token, "/api/v1/stats?endpoint=messages").await;
    assert_eq!(stats["totals"]["requests"], 1);
    assert_eq!(stats["totals"]["errors"], 0, "{stats}");
    let stats = get_json(&server, &token, "/api/v1/stats").await;
    assert_eq!(stats["totals"]["requests"], 5);
    assert_eq!(stats["byEndpoint"].as_array().unwrap().len(), 5);

    let cli = server.cli_json(&["usage", "--endpoint", "generate_content"]);
    assert_eq!(pairs(&cli), owned(&[("gemini-ok", "generate_content")]));
    let typo = server.cli(&["usage", "--endpoint", "chats"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(common::stderr(&typo).contains("generate_content"));
}

#[tokio::test]
async fn an_unknown_endpoint_is_refused_with_400_naming_endpoint() {
    let server = TestServer::start();
    let token = login(&server).await;
    for path in [
        "/api/v1/usage?endpoint=chats",
        "/api/v1/usage/records?endpoint=",
        "/api/v1/stats?endpoint=Chat",
    ] {
        let response = client()
            .get(server.url(path))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "invalid_request", "{path}: {body}");
        assert_eq!(body["error"]["param"], "endpoint", "{path}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("messages, generate_content"),
            "{body}"
        );
    }
    let response = client()
        .get(server.url("/api/v1/usage?endpoint=x"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(response, 400).await, "invalid_request");
}

/// A store as schema 6 wrote it (usage records without `endpoint`) is
/// migrated when opened: every record keeps its fields and gains the
/// endpoint its audit entry shows (`images` from billed image units),
/// else `chat`; native requests of schema 6 cannot be told from chat ones
/// and become `chat`, as docs/storage.md says.
#[tokio::test]
async fn a_schema_6_store_gains_the_endpoint_of_each_usage_record() {
    use tollgate::billing::UsageRecord;
    use tollgate::store::tables::{META, META_SCHEMA_VERSION, SCHEMA_VERSION, USAGE};
    use tollgate::store::{codec, compact};

    #[derive(serde::Serialize)]
    struct UsageRecordV6 {
        request_id: String,
        key_id: String,
        tenant_id: String,
        model: String,
        provider: String,
        prompt_tokens: u64,
        completion_tokens: u64,
        cost: u64,
        latency_ms: u64,
        is_fallback: bool,
        streamed: bool,
        estimated: bool,
        at: i64,
    }

    let Setup { mut server, .. } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    chat(&server, &key).await;
    message(&server, &key).await;
    image(&server, &key).await;
    speech(&server, &key).await;
    let token = login(&server).await;
    let path = format!("/api/v1/usage/records?keyId={key_id}");
    let before = get_json(&server, &token, &path).await;
    server.terminate();

    let data_file = server.data_dir().join("tollgate.redb");
    {
        let db = redb::Database::open(&data_file).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut table = txn.open_table(USAGE).unwrap();
            let rows: Vec<(Vec<u8>, UsageRecord)> = redb::ReadableTable::iter(&table)
                .unwrap()
                .map(|row| {
                    let (k, v) = row.unwrap();
                    let r = compact::decode(k.value(), v.value()).unwrap();
                    (k.value().to_vec(), r)
                })
                .collect();
            assert_eq!(rows.len(), 4);
            for (id, r) in rows {
                let old = UsageRecordV6 {
                    request_id: r.request_id,
                    key_id: r.key_id,
                    tenant_id: r.tenant_id,
                    model: r.model,
                    provider: r.provider,
                    prompt_tokens: r.prompt_tokens,
                    completion_tokens: r.completion_tokens,
                    cost: r.cost,
                    latency_ms: r.latency_ms,
                    is_fallback: r.is_fallback,
                    streamed: r.streamed,
                    estimated: r.estimated,
                    at: r.at,
                };
                table
                    .insert(id.as_slice(), codec::encode(&old).as_slice())
                    .unwrap();
            }
            txn.open_table(META)
                .unwrap()
                .insert(META_SCHEMA_VERSION, 6u32.to_be_bytes().as_slice())
                .unwrap();
        }
        txn.commit().unwrap();
    }
    server.launch().unwrap();

    let token = login(&server).await;
    let after = get_json(&server, &token, &path).await;
    assert_eq!(
        pairs(&after),
        owned(&[
            ("claude-ok", "chat"),
            ("img", "images"),
            ("mock-chat", "chat"),
            ("tts", "audio"),
        ])
    );
    // Every other field survives unchanged.
    let strip = |records: &Value| -> Vec<Value> {
        records["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r.as_object_mut().unwrap().remove("endpoint");
                r
            })
            .collect()
    };
    assert_eq!(strip(&after), strip(&before));
    // New charges after the upgrade carry their own endpoint.
    message(&server, &key).await;
    let messages = get_json(&server, &token, "/api/v1/usage/records?endpoint=messages").await;
    assert_eq!(pairs(&messages), owned(&[("claude-ok", "messages")]));

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
