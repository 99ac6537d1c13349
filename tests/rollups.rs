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

const DAY_MS: i64 = 86_400_000;

/// Opens the stopped server's store through the library, as the server
/// would, runs `f` on it and closes it.
async fn with_store<T>(
    server: &TestServer,
    f: impl AsyncFnOnce(std::sync::Arc<tollgate::store::Store>) -> T,
) -> T {
    let store = std::sync::Arc::new(tollgate::store::Store::open(&server.data_dir()).unwrap());
    let out = f(store.clone()).await;
    store.close();
    drop(store);
    out
}

/// A usage record of `key` (of `tenant`) at `at`.
fn record(
    n: u64,
    key: &str,
    tenant: &str,
    model: &str,
    endpoint: &str,
    at: i64,
) -> tollgate::billing::UsageRecord {
    tollgate::billing::UsageRecord {
        request_id: format!("req_test_{n:06}"),
        key_id: key.to_owned(),
        tenant_id: tenant.to_owned(),
        model: model.to_owned(),
        provider: "mock".to_owned(),
        prompt_tokens: 10 + n % 7,
        completion_tokens: 3 + n % 5,
        cost: 1_000 + 37 * n,
        latency_ms: 5,
        is_fallback: false,
        streamed: false,
        estimated: false,
        at,
        endpoint: tollgate::catalogue::Endpoint::parse(endpoint).unwrap(),
    }
}

/// Charges records spread over `days` days before now (and today), over
/// the keys, two models and two endpoints, through the real charge path.
/// Returns their (requests, prompt, completion, cost micros) totals.
async fn charge_history(
    server: &TestServer,
    keys: &[(String, String)],
    days: i64,
    per_day: u64,
) -> (u64, u64, u64, u64) {
    let keys = keys.to_vec();
    with_store(server, async move |store| {
        let handle = tollgate::auth::keys::Keys::new(store.clone());
        let now = tollgate::base::time::now_ms();
        let mut totals = (0, 0, 0, 0);
        let mut n = 0;
        for day in (0..=days).rev() {
            for i in 0..per_day {
                n += 1;
                let (key, tenant) = &keys[(n as usize) % keys.len()];
                let model = if n % 3 == 0 {
                    "mock-vision"
                } else {
                    "mock-chat"
                };
                let endpoint = if n % 4 == 0 { "embeddings" } else { "chat" };
                // Spread over the day, never in the future.
                let at = now - day * DAY_MS - (i as i64) * 60_000;
                let r = record(n, key, tenant, model, endpoint, at);
                totals.0 += 1;
                totals.1 += r.prompt_tokens;
                totals.2 += r.completion_tokens;
                totals.3 += r.cost;
                tollgate::billing::charge(&store, &handle, r).await.unwrap();
            }
        }
        totals
    })
    .await
}

fn key_ids(server: &TestServer) -> Vec<(String, String)> {
    server
        .cli_json(&["keys", "list"])
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["id"].as_str().unwrap().to_owned(),
                k["tenantId"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn micros(credits: &Value) -> i64 {
    (credits.as_f64().unwrap() * 1e6).round() as i64
}

/// Sums raw records (`/api/v1/usage/records`) by (day, key, model,
/// endpoint): what the rollup-backed `/api/v1/usage` must answer.
fn sum_records(records: &Value) -> std::collections::BTreeMap<String, (u64, u64, u64, i64)> {
    let mut out = std::collections::BTreeMap::new();
    for r in records["data"].as_array().unwrap() {
        let group = format!(
            "{}|{}|{}|{}",
            &r["at"].as_str().unwrap()[..10],
            r["keyId"].as_str().unwrap(),
            r["model"].as_str().unwrap(),
            r["endpoint"].as_str().unwrap()
        );
        let slot = out.entry(group).or_insert((0, 0, 0, 0));
        slot.0 += 1;
        slot.1 += r["promptTokens"].as_u64().unwrap();
        slot.2 += r["completionTokens"].as_u64().unwrap();
        slot.3 += micros(&r["cost"]);
    }
    out
}

fn groups(report: &Value) -> std::collections::BTreeMap<String, (u64, u64, u64, i64)> {
    report["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                format!(
                    "{}|{}|{}|{}",
                    r["day"].as_str().unwrap(),
                    r["keyId"].as_str().unwrap(),
                    r["model"].as_str().unwrap(),
                    r["endpoint"].as_str().unwrap()
                ),
                (
                    r["requests"].as_u64().unwrap(),
                    r["promptTokens"].as_u64().unwrap(),
                    r["completionTokens"].as_u64().unwrap(),
                    micros(&r["cost"]),
                ),
            )
        })
        .collect()
}

fn rfc3339(ms: i64) -> String {
    tollgate::base::time::format_rfc3339(ms)
}

async fn get(server: &TestServer, token: &str, path: &str) -> Value {
    common::get_json(server, token, path).await
}

#[tokio::test]
async fn rollup_totals_equal_the_sum_of_raw_records_across_keys_models_endpoints_and_days() {
    let mut server = TestServer::start();
    server.cli_json(&["tenants", "create", "--name", "acme", "--tier", "paid"]);
    server.create_key(&["--tenant", "acme"]);
    server.create_key(&[]);
    // Requests through the gateway (today), refusals among them.
    let demo = server.demo_key();
    for i in 0..3 {
        assert_eq!(
            chat(&server, &demo, "mock-chat", &format!("hi {i}"))
                .await
                .status(),
            200
        );
    }
    assert_eq!(
        chat(&server, &demo, "no-such-model", "x").await.status(),
        404
    );
    server.terminate();
    let keys = key_ids(&server);
    charge_history(&server, &keys, 20, 6).await;
    server.launch().unwrap();
    let token = common::login(&server).await;
    let now = tollgate::base::time::now_ms();

    // Whole days, and periods that start or end inside a day.
    for (from, to) in [
        (now - 40 * DAY_MS, now + 1),
        (now - 7 * DAY_MS - 3_600_000, now - 2 * DAY_MS + 60_000),
        (now - 5 * DAY_MS - 90_000, now - 5 * DAY_MS + 1_000),
    ] {
        let range = format!("from={}&to={}", rfc3339(from), rfc3339(to));
        let report = get(&server, &token, &format!("/api/v1/usage?{range}")).await;
        let raw = get(&server, &token, &format!("/api/v1/usage/records?{range}")).await;
        let expected = sum_records(&raw);
        assert_eq!(groups(&report), expected, "{range}");
        let total: (u64, i64) = expected
            .values()
            .fold((0, 0), |(n, c), v| (n + v.0, c + v.3));
        assert_eq!(report["totals"]["requests"], total.0);
        assert_eq!(micros(&report["totals"]["cost"]), total.1);
        for key in &keys {
            let one = get(
                &server,
                &token,
                &format!("/api/v1/usage?{range}&keyId={}", key.0),
            )
            .await;
            let mine: u64 = expected
                .iter()
                .filter(|(g, _)| g.contains(&key.0))
                .map(|(_, v)| v.0)
                .sum();
            assert_eq!(one["totals"]["requests"], mine);
        }
        let chat_only = get(
            &server,
            &token,
            &format!("/api/v1/usage?{range}&endpoint=embeddings"),
        )
        .await;
        let embeddings: u64 = expected
            .iter()
            .filter(|(g, _)| g.ends_with("|embeddings"))
            .map(|(_, v)| v.0)
            .sum();
        assert_eq!(chat_only["totals"]["requests"], embeddings);
    }

    // The Overview: 14 whole days, the same as the records of those days.
    let stats = get(&server, &token, "/api/v1/stats?days=14").await;
    let range = format!(
        "from={}&to={}",
        stats["from"].as_str().unwrap(),
        stats["to"].as_str().unwrap()
    );
    let raw = sum_records(&get(&server, &token, &format!("/api/v1/usage/records?{range}")).await);
    let requests: u64 = raw.values().map(|v| v.0).sum();
    let cost: i64 = raw.values().map(|v| v.3).sum();
    assert_eq!(stats["totals"]["requests"], requests);
    assert_eq!(micros(&stats["totals"]["credits"]), cost);
    assert_eq!(stats["totals"]["errors"], 1, "the refused request");
    let series: u64 = stats["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(series, requests);
    // `tollgate usage` answers as the API does.
    let cli = server.cli_json(&[
        "usage",
        "--from",
        &rfc3339(now - 40 * DAY_MS),
        "--to",
        &rfc3339(now + 1),
    ]);
    let api = get(
        &server,
        &token,
        &format!(
            "/api/v1/usage?from={}&to={}",
            rfc3339(now - 40 * DAY_MS),
            rfc3339(now + 1)
        ),
    )
    .await;
    assert_eq!(cli["totals"], api["totals"]);
    assert_eq!(cli["data"], api["data"]);
}

#[tokio::test]
async fn after_retention_pruned_raw_records_the_usage_apis_answer_the_same_totals() {
    let mut server = TestServer::start_with(Some("usage_retention_days = 30\n"), &[]);
    server.cli_json(&["tenants", "create", "--name", "acme", "--tier", "paid"]);
    server.create_key(&["--tenant", "acme"]);
    server.terminate();
    let keys = key_ids(&server);
    let charged = charge_history(&server, &keys, 60, 4).await;
    let now = tollgate::base::time::now_ms();
    let (from, to) = (rfc3339(now - 90 * DAY_MS), rfc3339(now + DAY_MS));
    // Read by the CLI on the stopped server (no sweep has run).
    let before = server.cli_json(&["usage", "--from", &from, "--to", &to]);
    assert_eq!(before["totals"]["requests"], charged.0);
    assert_eq!(micros(&before["totals"]["cost"]), charged.3 as i64);

    server.launch().unwrap();
    let token = common::login(&server).await;
    let range = format!("from={from}&to={to}");
    // The sweep runs at start: wait until the old records are gone.
    let mut raw = Value::Null;
    for _ in 0..100 {
        raw = get(&server, &token, &format!("/api/v1/usage/records?{range}")).await;
        let oldest = raw["data"][0]["at"].as_str().unwrap_or("").to_owned();
        if oldest >= rfc3339(now - 31 * DAY_MS) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let kept = raw["data"].as_array().unwrap().len() as u64;
    assert!(kept > 0 && kept < charged.0, "{kept} of {} kept", charged.0);
    assert!(raw["data"][0]["at"].as_str().unwrap() >= rfc3339(now - 31 * DAY_MS).as_str());

    let after = get(&server, &token, &format!("/api/v1/usage?{range}")).await;
    assert_eq!(after["totals"], before["totals"]);
    assert_eq!(after["data"], before["data"]);
    assert_eq!(
        server.cli_json(&["usage", "--from", &from, "--to", &to])["totals"],
        before["totals"]
    );
    // A period starting inside a pruned day counts that day whole.
    let inside = rfc3339(now - 50 * DAY_MS + 1);
    let partial = get(
        &server,
        &token,
        &format!("/api/v1/usage?from={inside}&to={to}"),
    )
    .await;
    let whole_day = rfc3339((now - 50 * DAY_MS).div_euclid(DAY_MS) * DAY_MS);
    let from_day = get(
        &server,
        &token,
        &format!("/api/v1/usage?from={whole_day}&to={to}"),
    )
    .await;
    assert_eq!(partial["totals"], from_day["totals"]);
    // The Overview of 90 days still counts every charge.
    let stats = get(&server, &token, "/api/v1/stats?days=90").await;
    assert_eq!(stats["totals"]["requests"], charged.0);
    assert_eq!(micros(&stats["totals"]["credits"]), charged.3 as i64);
    // The wallet history keeps each day's charges.
    let history = get(&server, &token, &format!("/api/v1/billing/history?{range}")).await;
    let charges: u64 = history["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "charges")
        .map(|e| e["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(charges, charged.0);
}

/// Writes `n` audit entries dated `days` days ago into a new store (before
/// the server's first start), through the library's chain.
async fn old_audit_entries(data_dir: &std::path::Path, n: usize, days: i64) {
    let store = tollgate::store::Store::open(data_dir).unwrap();
    let at = tollgate::base::time::now_ms() - days * DAY_MS;
    store
        .write(move |txn| {
            for i in 0..n {
                let draft = tollgate::audit::Draft::new(
                    "",
                    "system".into(),
                    "registry.update",
                    &format!("old-{i}"),
                );
                tollgate::audit::append_at(txn, &draft, at + i as i64)?;
            }
            Ok(())
        })
        .await
        .unwrap();
    store.close();
}

/// Flips a bit of the audit checkpoint's digest in the stopped server's
/// file.
fn forge_checkpoint(data_dir: &std::path::Path) {
    let db = redb::Database::open(data_dir.join("tollgate.redb")).unwrap();
    let txn = db.begin_write().unwrap();
    {
        let mut meta = txn.open_table(tollgate::store::tables::META).unwrap();
        let mut mark = redb::ReadableTable::get(&meta, b"audit_checkpoint".as_slice())
            .unwrap()
            .expect("a checkpoint")
            .value()
            .to_vec();
        mark[8] ^= 1;
        meta.insert(b"audit_checkpoint".as_slice(), mark.as_slice())
            .unwrap();
    }
    txn.commit().unwrap();
}

/// Rewrites the stored audit entry `seq` with `f` (a tampering).
fn tamper(data_dir: &std::path::Path, seq: u64, f: impl FnOnce(&mut tollgate::audit::Entry)) {
    use tollgate::store::compact;
    let db = redb::Database::open(data_dir.join("tollgate.redb")).unwrap();
    let txn = db.begin_write().unwrap();
    {
        let mut table = txn.open_table(tollgate::store::tables::AUDIT).unwrap();
        let key = seq.to_be_bytes();
        let mut entry: tollgate::audit::Entry = compact::decode(
            &key,
            redb::ReadableTable::get(&table, key.as_slice())
                .unwrap()
                .unwrap()
                .value(),
        )
        .unwrap();
        f(&mut entry);
        table
            .insert(key.as_slice(), compact::encode(&entry).as_slice())
            .unwrap();
    }
    txn.commit().unwrap();
}

#[tokio::test]
async fn audit_verify_passes_after_pruning_and_detects_tampering_of_a_kept_entry() {
    let mut server = TestServer::unstarted();
    // Past the default retention (400 days).
    old_audit_entries(&server.data_dir(), 5, 500).await;
    server.launch().unwrap();
    for name in ["one", "two", "three"] {
        server.cli_json(&["tenants", "create", "--name", name, "--tier", "paid"]);
    }
    let token = common::login(&server).await;
    let mut verified = Value::Null;
    for _ in 0..100 {
        verified = get(&server, &token, "/api/v1/audit/verify").await;
        if !verified["checkpoint"].is_null() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(verified["valid"], true, "{verified}");
    assert_eq!(verified["checkpoint"]["seq"], 5, "{verified}");
    // The log answers from the first kept entry on.
    let log = get(&server, &token, "/api/v1/audit?limit=500").await;
    let seqs: Vec<u64> = log["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert!(seqs.iter().all(|s| *s > 5), "{seqs:?}");
    assert_eq!(seqs.iter().min(), Some(&6));
    let cli = server.cli_json(&["audit", "verify"]);
    assert_eq!(cli["valid"], true);
    assert_eq!(cli["checkpoint"]["seq"], 5);
    server.terminate();

    // A kept entry changed: the chain breaks at it.
    let data = server.data_dir();
    tamper(&data, 7, |e| e.outcome = "denied".into());
    let output = server.cli(&["audit", "verify", "--json"]);
    assert!(!output.status.success());
    let found: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(found["valid"], false);
    assert_eq!(found["firstBroken"]["seq"], 7, "{found}");
    tamper(&data, 7, |e| e.outcome = "ok".into());
    assert_eq!(server.cli_json(&["audit", "verify"])["valid"], true);
    // The checkpoint forged (entries are stored without their link, which
    // is the digest of the entry before or the checkpoint's): the first
    // kept entry no longer verifies, broken at it.
    forge_checkpoint(&data);
    let output = server.cli(&["audit", "verify", "--json"]);
    let found: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(found["valid"], false);
    assert_eq!(found["firstBroken"]["seq"], 6, "{found}");
}

#[test]
fn retention_settings_out_of_range_are_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    for (text, needles) in [
        (
            "audit_retention_days = 90\n",
            &["audit_retention_days", "183", "Articles 19 and 26(6)"][..],
        ),
        (
            "usage_retention_days = 0\n",
            &["usage_retention_days", "must be 1 to 36500"][..],
        ),
        (
            "audit_retention_days = 40000\n",
            &["audit_retention_days", "36500"][..],
        ),
        ("usage_retention_days = -3\n", &["usage_retention_days"][..]),
    ] {
        let file = dir.path().join("tollgate.toml");
        std::fs::write(&file, text).unwrap();
        let output = std::process::Command::new(common::BIN)
            .args(["config", "check"])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{text}");
        let stderr = common::stderr(&output);
        for needle in needles {
            assert!(stderr.contains(needle), "{text}: {stderr}");
        }
    }
    let file = dir.path().join("tollgate.toml");
    std::fs::write(
        &file,
        "usage_retention_days = 1\naudit_retention_days = 183\n",
    )
    .unwrap();
    let output = std::process::Command::new(common::BIN)
        .args(["config", "check"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::stderr(&output));
}

#[tokio::test]
async fn a_schema_7_store_is_migrated_with_rollups_and_answers_as_before() {
    let mut server = TestServer::unstarted_on_fixture(FIXTURE_V7);
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{FIXTURE_V7}/expected.json")).unwrap(),
    )
    .unwrap();
    // Opened by the CLI: migrated, then read from the rollups.
    let usage = server.cli_json(&["usage", "--from", FIXTURE_FROM, "--to", FIXTURE_TO]);
    assert_eq!(usage, expected["usage"]);
    assert_eq!(server.cli_json(&["keys", "list"]), expected["keys"]);
    let audit = server.cli_json(&["audit", "verify"]);
    assert_eq!(audit["valid"], true);
    assert_eq!(audit["entries"], expected["audit"]["entries"]);
    {
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
        assert_eq!(
            version,
            tollgate::store::tables::SCHEMA_VERSION.to_be_bytes()
        );
        let rollups = read
            .open_table(tollgate::store::tables::USAGE_ROLLUPS)
            .unwrap();
        assert!(redb::ReadableTableMetadata::len(&rollups).unwrap() > 0);
    }
    // The server starts on it and its requests add to the same rollups.
    server.launch().unwrap();
    let keys = server.cli_json(&["keys", "list"]);
    let demo = keys
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["keyName"] == "demo")
        .unwrap()["id"]
        .clone();
    assert!(demo.is_string());
    let after = server.cli_json(&["usage", "--from", FIXTURE_FROM, "--to", FIXTURE_TO]);
    assert_eq!(after["totals"], expected["usage"]["totals"]);
}
