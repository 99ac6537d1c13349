//! Durability and the data file: kill -9, backup while writing, restore,
//! locks, and files that must be refused without being changed.
#![allow(clippy::disallowed_methods)] // Test and bench code spawns its own clients and servers.

mod common;

use std::collections::BTreeSet;

use common::{TestServer, client, stderr};
use tollgate::admin::Command as Admin;
use tollgate::admin::socket;
use tollgate::tenants::Tier;

fn tenant_names(value: &serde_json::Value) -> BTreeSet<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn answered_writes_survive_kill_9_and_a_restart() {
    let mut server = TestServer::start();
    let data_dir = server.data_dir();
    // Writers that keep creating tenants through the admin socket; each
    // name is recorded only once the server has answered.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..8 {
        let (dir, stop) = (data_dir.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut answered = Vec::new();
            for i in 0..10_000 {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                let name = format!("w{w}-{i:05}");
                let command = Admin::TenantsCreate {
                    name: name.clone(),
                    tier: Tier::Paid,
                };
                match socket::call(&dir, &command).await {
                    Ok(Some(reply)) if reply.ok => answered.push(name),
                    _ => break,
                }
            }
            answered
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    server.kill_9();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut answered = BTreeSet::new();
    for writer in writers {
        answered.extend(writer.await.unwrap());
    }
    assert!(
        answered.len() > 20,
        "the load ran ({} answered)",
        answered.len()
    );
    server.launch().expect("restart after kill -9");
    let stored = tenant_names(&server.cli_json(&["tenants", "list"]));
    let lost: Vec<_> = answered.difference(&stored).collect();
    assert!(lost.is_empty(), "answered but lost after kill -9: {lost:?}");
    // The restarted server works.
    let response = client().get(server.url("/readyz")).send().await.unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn a_backup_taken_while_writing_restores_exactly_its_snapshot() {
    let mut server = TestServer::start();
    let data_dir = server.data_dir();
    let writer = {
        let dir = data_dir.clone();
        tokio::spawn(async move {
            let mut answered = Vec::new();
            for i in 0..400 {
                let name = format!("t{i:05}");
                let reply = socket::call(
                    &dir,
                    &Admin::TenantsCreate {
                        name: name.clone(),
                        tier: Tier::Free,
                    },
                )
                .await;
                assert!(reply.unwrap().unwrap().ok);
                answered.push(name);
            }
            answered
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    let before_backup = tenant_names(&server.cli_json(&["tenants", "list"]));
    let backup = server.dir.path().join("snapshot.redb");
    let output = server.cli(&["backup", "--out", backup.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let all = writer.await.unwrap();
    server.terminate();

    let restored_dir = server.dir.path().join("restored");
    let output = std::process::Command::new(common::BIN)
        .args([
            "--data-dir",
            restored_dir.to_str().unwrap(),
            "restore",
            "--from",
            backup.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let listed = std::process::Command::new(common::BIN)
        .args([
            "--data-dir",
            restored_dir.to_str().unwrap(),
            "tenants",
            "list",
            "--json",
        ])
        .output()
        .unwrap();
    let restored = tenant_names(&serde_json::from_slice(&listed.stdout).unwrap());
    let written: Vec<String> = restored
        .iter()
        .filter(|n| n.starts_with('t'))
        .cloned()
        .collect();
    // Everything answered before the backup began is in it...
    assert!(
        before_backup.iter().all(|n| restored.contains(n)),
        "the snapshot misses committed rows"
    );
    // ...and the snapshot is one point in time: a prefix of the writes.
    assert_eq!(
        written,
        all[..written.len()].to_vec(),
        "the snapshot is not a consistent prefix"
    );
    assert!(
        written.len() < all.len(),
        "the backup ran after every write; the test proves nothing"
    );
    // The live store kept everything.
    let live = std::process::Command::new(common::BIN)
        .args([
            "--data-dir",
            data_dir.to_str().unwrap(),
            "tenants",
            "list",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(tenant_names(&serde_json::from_slice(&live.stdout).unwrap()).len() > restored.len());
}

#[test]
fn restore_refuses_a_live_server_a_non_empty_target_and_a_newer_schema() {
    let mut server = TestServer::start();
    let backup = server.dir.path().join("b.redb");
    assert!(
        server
            .cli(&["backup", "--out", backup.to_str().unwrap()])
            .status
            .success()
    );

    let refused = server.cli(&["restore", "--from", backup.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("running"), "{}", stderr(&refused));

    server.terminate();
    let data_file = server.data_dir().join("tollgate.redb");
    let before = digest(&data_file);
    let refused = server.cli(&["restore", "--from", backup.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("--force"), "{}", stderr(&refused));
    assert_eq!(
        digest(&data_file),
        before,
        "a refused restore changed the data"
    );
    let forced = server.cli(&["restore", "--from", backup.to_str().unwrap(), "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));

    // A backup from a newer schema.
    let newer = server.dir.path().join("newer.redb");
    std::fs::copy(&backup, &newer).unwrap();
    set_schema_version(&newer, 99);
    let refused = server.cli(&["restore", "--from", newer.to_str().unwrap(), "--force"]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("newer"), "{}", stderr(&refused));
    let missing = server.cli(&["restore", "--from", "/nonexistent/backup.redb"]);
    assert!(!missing.status.success());
}

fn digest(path: &std::path::Path) -> [u8; 32] {
    tollgate::base::ids::sha256(&std::fs::read(path).unwrap())
}

fn set_schema_version(path: &std::path::Path, version: u32) {
    let db = redb::Database::open(path).unwrap();
    let txn = db.begin_write().unwrap();
    txn.open_table(tollgate::store::tables::META)
        .unwrap()
        .insert(
            tollgate::store::tables::META_SCHEMA_VERSION,
            version.to_be_bytes().as_slice(),
        )
        .unwrap();
    txn.commit().unwrap();
}

#[test]
fn a_second_server_on_the_same_data_directory_is_refused() {
    let server = TestServer::start();
    let output = server.cli(&["serve", "--listen", "127.0.0.1:0"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("in use by another tollgate process"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_newer_or_foreign_data_file_is_refused_and_left_unchanged() {
    let mut server = TestServer::start();
    server.terminate();
    let data_file = server.data_dir().join("tollgate.redb");
    set_schema_version(&data_file, 99);
    let before = digest(&data_file);
    let error = server.launch().unwrap_err();
    assert!(error.contains("schema version 99"), "{error}");
    assert_eq!(digest(&data_file), before);

    std::fs::write(
        &data_file,
        b"this is not a database, just some bytes that are long enough to look like one",
    )
    .unwrap();
    let before = digest(&data_file);
    let error = server.launch().unwrap_err();
    assert!(
        error.contains("damaged or not a tollgate store") || error.contains("storage error"),
        "{error}"
    );
    assert_eq!(digest(&data_file), before);
}

#[test]
fn sigterm_stops_cleanly_and_removes_the_socket() {
    let mut server = TestServer::start();
    assert!(server.data_dir().join("tollgate.sock").exists());
    let status = server.terminate();
    assert!(status.success(), "{status}");
    assert!(!server.data_dir().join("tollgate.sock").exists());
    // With no server, the CLI opens the file itself.
    let listed = server.cli_json(&["keys", "list"]);
    assert_eq!(listed.as_array().unwrap().len(), 1, "the demo key");
}

/// A store written by schema 1 (tenants without `webhooks_updated_at`) is
/// migrated when opened: every tenant is kept, with its webhook settings
/// dated from its creation.
#[tokio::test]
async fn a_schema_1_store_is_migrated_on_open() {
    use tollgate::store::codec;
    use tollgate::tenants::Tenant;
    use tollgate::tenants::legacy::PolicyV1;

    #[derive(serde::Serialize)]
    struct TenantV1 {
        id: String,
        name: String,
        tier: Tier,
        wallet: i64,
        webhook_secret: String,
        webhook_urls: Vec<String>,
        policy: PolicyV1,
        created_at: i64,
    }

    let mut server = TestServer::start();
    server.cli_json(&["tenants", "create", "--name", "older", "--tier", "paid"]);
    server.cli_json(&["tenants", "topup", "older", "--credits", "7"]);
    server.terminate();
    let data_file = server.data_dir().join("tollgate.redb");
    let mut before: Vec<Tenant> = Vec::new();
    {
        let db = redb::Database::open(&data_file).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut table = txn.open_table(tollgate::store::tables::TENANTS).unwrap();
            let rows: Vec<(Vec<u8>, Tenant)> = redb::ReadableTable::iter(&table)
                .unwrap()
                .map(|row| {
                    let (k, v) = row.unwrap();
                    (k.value().to_vec(), codec::decode(v.value()).unwrap())
                })
                .collect();
            for (key, t) in rows {
                let old = TenantV1 {
                    id: t.id.clone(),
                    name: t.name.clone(),
                    tier: t.tier,
                    wallet: t.wallet,
                    webhook_secret: t.webhook_secret.clone(),
                    webhook_urls: vec!["https://hooks.example.invalid/x".into()],
                    policy: PolicyV1 {
                        retention_days: 400,
                        ..PolicyV1::default()
                    },
                    created_at: t.created_at,
                };
                table
                    .insert(key.as_slice(), codec::encode(&old).as_slice())
                    .unwrap();
                before.push(t);
            }
        }
        txn.commit().unwrap();
    }
    set_schema_version(&data_file, 1);

    server.launch().unwrap();
    for t in &before {
        let shown = server.cli_json(&["tenants", "show", &t.name]);
        assert_eq!(shown["id"], t.id.as_str());
        assert_eq!(shown["webhookUrls"][0], "https://hooks.example.invalid/x");
    }
    assert_eq!(
        server.cli_json(&["tenants", "show", "older"])["walletBalance"],
        7.0
    );
    let token = common::login(&server).await;
    let hooks: serde_json::Value = common::get_json(&server, &token, "/api/v1/webhooks").await;
    let default = server.cli_json(&["tenants", "show", "default"]);
    assert_eq!(hooks["updatedAt"], default["createdAt"]);
    // 2 -> 3: the policy keeps its values and gains the new ones, the
    // high-risk retention never below six months.
    let policy: serde_json::Value = common::get_json(&server, &token, "/api/v1/policies").await;
    assert_eq!(policy["retentionDays"], 400);
    assert_eq!(policy["highRiskRetentionDays"], 400);
    assert_eq!(policy["reviewMode"], "off");
    assert_eq!(policy["reviewTtlSeconds"], 72 * 3600);
    assert_eq!(policy["judgeEnabled"], false);
    server.terminate();
    let db = redb::Database::open(&data_file).unwrap();
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
}

#[tokio::test]
async fn a_registry_from_before_the_history_gets_one_found_revision_and_backups_carry_it() {
    use tollgate::store::tables::{META, SUB_PROCESSOR_HISTORY};

    let mut server = TestServer::start();
    let token = common::login(&server).await;
    let created = client()
        .post(server.url("/api/v1/sub-processors"))
        .bearer_auth(&token)
        .json(&serde_json::json!({ "name": "older-ai", "location": "DE" }))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let version = created.json::<serde_json::Value>().await.unwrap()["version"].clone();
    server.terminate();
    // The store as a build before the history table left it.
    let data_file = server.data_dir().join("tollgate.redb");
    {
        let db = redb::Database::open(&data_file).unwrap();
        let txn = db.begin_write().unwrap();
        assert!(txn.delete_table(SUB_PROCESSOR_HISTORY).unwrap());
        txn.open_table(META)
            .unwrap()
            .remove(b"registry_history_since".as_slice())
            .unwrap();
        txn.commit().unwrap();
    }

    server.launch().unwrap();
    let token = common::login(&server).await;
    let history =
        common::get_json(&server, &token, "/api/v1/sub-processors/older-ai/history").await;
    let revisions = history["data"].as_array().unwrap();
    assert_eq!(revisions.len(), 1, "{history}");
    assert_eq!(revisions[0]["change"], "found");
    assert_eq!(revisions[0]["version"], version);
    assert_eq!(revisions[0]["actor"], "system");
    assert_eq!(revisions[0]["entry"]["location"], "DE");
    // Every entry then listed (also the configured `mock`) is found once,
    // and a second start records nothing more.
    let all = common::get_json(&server, &token, "/api/v1/sub-processor-history").await;
    let found: BTreeSet<(String, String)> = all["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["change"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: BTreeSet<(String, String)> = [("mock", "found"), ("older-ai", "found")]
        .iter()
        .map(|(n, c)| (n.to_string(), c.to_string()))
        .collect();
    assert_eq!(found, expected, "{all}");
    server.terminate();
    server.launch().unwrap();
    let token = common::login(&server).await;
    let again = common::get_json(&server, &token, "/api/v1/sub-processor-history").await;
    assert_eq!(again["data"], all["data"]);
    assert_eq!(again["historySince"], history["historySince"]);

    let backup = server.dir.path().join("history.redb");
    let output = server.cli(&["backup", "--out", backup.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let db = redb::ReadOnlyDatabase::open(&backup).unwrap();
    let read = redb::ReadableDatabase::begin_read(&db).unwrap();
    let rows =
        redb::ReadableTableMetadata::len(&read.open_table(SUB_PROCESSOR_HISTORY).unwrap()).unwrap();
    assert_eq!(rows, 2, "the backup carries the registry history");
}
