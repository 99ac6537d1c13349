//! Findings of the black-box security probe (issue 20) on operations:
//! backup destinations, money overflow, sign-in throttling and its audit,
//! and webhook URL redaction. Each test runs the real server.

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::upstream::Upstream;
use common::{BIN, TestServer, account, client, error_code, get_json, login, stderr};
use serde_json::{Value, json};

// ---- backup destinations (item 5) ----

fn backup(server: &TestServer, out: &Path, force: bool) -> std::process::Output {
    let mut args = vec!["backup", "--out", out.to_str().unwrap()];
    if force {
        args.push("--force");
    }
    server.cli(&args)
}

/// The server still writes to the store it opened, and the audit chain
/// still verifies, after a refused backup.
fn assert_store_still_live(server: &mut TestServer, marker: &str) {
    server.cli_json(&["tenants", "create", "--name", marker]);
    server.restart();
    let names: Vec<Value> = server
        .cli_json(&["tenants", "list"])
        .as_array()
        .unwrap()
        .clone();
    assert!(
        names.iter().any(|t| t["name"] == marker),
        "a tenant created after the refused backup was lost: {names:?}"
    );
    let verified = server.cli_json(&["audit", "verify"]);
    assert_eq!(verified["valid"], true, "{verified}");
}

#[test]
fn a_backup_onto_the_live_store_is_refused_and_later_writes_survive() {
    let mut server = TestServer::start();
    let live = server.data_dir().join("tollgate.redb");
    let out = backup(&server, &live, true);
    assert!(
        !out.status.success(),
        "backup onto the live store succeeded"
    );
    assert!(stderr(&out).contains("data directory"), "{}", stderr(&out));
    assert_store_still_live(&mut server, "after-live");
}

#[test]
fn a_backup_destination_resolving_into_the_data_directory_is_refused() {
    let mut server = TestServer::start();
    let dir = server.dir.path().to_owned();
    let data = server.data_dir();
    let live = data.join("tollgate.redb");
    symlink(&live, dir.join("link.redb")).unwrap();
    symlink(&data, dir.join("datalink")).unwrap();
    std::fs::hard_link(&live, dir.join("hard.redb")).unwrap();
    let cases = [
        dir.join("link.redb"),
        dir.join("datalink/tollgate.redb"),
        dir.join("datalink/other.redb"),
        dir.join("hard.redb"),
        data.join("other.redb"),
        dir.join("data/../data/tollgate.redb"),
    ];
    for case in &cases {
        let out = backup(&server, case, true);
        assert!(
            !out.status.success() && stderr(&out).contains("data directory"),
            "backup to {}: {}",
            case.display(),
            stderr(&out)
        );
    }
    // A relative path, resolved in the CLI's working directory.
    let relative = Command::new(BIN)
        .current_dir(&dir)
        .env_clear()
        .args([
            "--data-dir",
            "data",
            "backup",
            "--out",
            "data/tollgate.redb",
            "--force",
        ])
        .output()
        .unwrap();
    assert!(
        !relative.status.success() && stderr(&relative).contains("data directory"),
        "relative backup onto the store: {}",
        stderr(&relative)
    );
    assert!(!data.join("other.redb").exists());
    assert_store_still_live(&mut server, "after-links");
}

#[test]
fn a_backup_does_not_overwrite_a_file_without_force_and_leaves_no_partial_file() {
    let server = TestServer::start();
    let dest_dir = server.dir.path().join("backups");
    std::fs::create_dir(&dest_dir).unwrap();
    let out_path = dest_dir.join("b.redb");
    std::fs::write(&out_path, b"precious").unwrap();
    let refused = backup(&server, &out_path, false);
    assert!(
        !refused.status.success(),
        "an existing file was overwritten"
    );
    assert!(stderr(&refused).contains("--force"), "{}", stderr(&refused));
    assert_eq!(std::fs::read(&out_path).unwrap(), b"precious");

    let forced = backup(&server, &out_path, true);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert_ne!(std::fs::read(&out_path).unwrap(), b"precious");
    let names: Vec<String> = std::fs::read_dir(&dest_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["b.redb"], "files left beside the backup");

    // A directory is not a file to write.
    let dir_refused = backup(&server, &dest_dir, true);
    assert!(!dir_refused.status.success());
}

// ---- money overflow (item 9) ----

fn huge_context_config(price: &str) -> String {
    format!(
        "[[providers]]\nid = \"mock\"\nkind = \"mock\"\n\
         [[models]]\nid = \"big\"\nprovider = \"mock\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
         context_window = 4000000000\n\
         pricing = {{ unit = \"per_token\", input_per_million = {price}, output_per_million = 1.0 }}\n"
    )
}

#[test]
fn config_check_refuses_a_price_whose_context_window_charge_cannot_fit() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.toml");
    std::fs::write(&file, huge_context_config("9000000000000.0")).unwrap();
    let out = Command::new(BIN)
        .env_clear()
        .args(["config", "check", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("models[0].pricing"),
        "{}",
        stderr(&out)
    );
    // A sane price on the same window is accepted.
    std::fs::write(&file, huge_context_config("3.0")).unwrap();
    let out = Command::new(BIN)
        .env_clear()
        .args(["config", "check", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[tokio::test]
async fn the_models_api_refuses_a_price_that_overflows_its_context_window() {
    let server = TestServer::start();
    let token = login(&server).await;
    let http = client();
    let model = json!({
        "id": "absurd",
        "provider": "mock",
        "inputCapabilities": ["TEXT"],
        "outputCapabilities": ["TEXT"],
        "contextWindow": 4_000_000_000u32,
        "pricing": { "unit": "per_token", "input_per_million": 9.0e12, "output_per_million": 1.0 },
    });
    let response = http
        .post(server.url("/api/v1/models"))
        .bearer_auth(&token)
        .json(&model)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_request");
    assert_eq!(body["error"]["param"], "pricing", "{body}");

    // Accepted with a small window, then refused when the window grows.
    let mut small = model.clone();
    small["contextWindow"] = json!(1000);
    let created = http
        .post(server.url("/api/v1/models"))
        .bearer_auth(&token)
        .json(&small)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let grown = http
        .patch(server.url("/api/v1/models/absurd"))
        .bearer_auth(&token)
        .json(&json!({ "contextWindow": 4_000_000_000u32 }))
        .send()
        .await
        .unwrap();
    assert_eq!(grown.status(), 400);
    let body: Value = grown.json().await.unwrap();
    assert_eq!(body["error"]["param"], "pricing", "{body}");
    let shown = get_json(&server, &token, "/api/v1/models/absurd").await;
    assert_eq!(shown["contextWindow"], 1000, "{shown}");
}

#[tokio::test]
async fn an_overflowing_charge_is_refused_and_nothing_wraps() {
    let upstream = Upstream::start().await;
    let config = format!(
        "[[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{}\"\n\
         [[models]]\nid = \"dear\"\nprovider = \"up\"\nupstream = \"ok\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
         context_window = 8192\npricing = {{ unit = \"per_request\", per_request = 9000000000000.0 }}\n",
        upstream.base_url
    );
    let server = TestServer::start_with(Some(&config), &[]);
    server.cli_json(&["tenants", "topup", "default", "--credits", "9000000000100"]);
    let (id, key) = server.create_key(&[]);
    let body = json!({ "model": "dear", "messages": [{ "role": "user", "content": "hi" }] });
    let first = common::chat_post(&server, &key, &body).await;
    assert_eq!(first.status(), 200);
    let second = common::chat_post(&server, &key, &body).await;
    assert_eq!(error_code(second, 500).await, "internal_error");
    assert!(
        server.log().contains("overflow"),
        "not logged: {}",
        server.log()
    );

    let shown = server.cli_json(&["keys", "show", &id]);
    assert_eq!(shown["creditsConsumed"], 9.0e12, "{shown}");
    let tenant = server.cli_json(&["tenants", "show", "default"]);
    let wallet = tenant["walletBalance"].as_f64().unwrap();
    assert!((wallet - 100.0).abs() < 1.0, "wallet {wallet}");
    let usage = server.cli_json(&["usage"]);
    assert!(
        !usage.to_string().contains("-9"),
        "a negative (wrapped) amount in {usage}"
    );
}

// ---- sign-in throttling and its audit (item 10) ----

async fn sign_in_from(
    server: &TestServer,
    from: &str,
    email: &str,
    password: &str,
) -> reqwest::Response {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .local_address(Some(from.parse().unwrap()))
        .build()
        .unwrap();
    http.post(server.url("/api/v1/auth/login"))
        .json(&json!({ "email": email, "password": password }))
        .send()
        .await
        .unwrap()
}

fn retry_after(response: &reqwest::Response) -> u64 {
    response
        .headers()
        .get("retry-after")
        .expect("a Retry-After header")
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn failed_sign_ins_to_one_account_are_slowed_down_from_any_address() {
    let server = TestServer::start();
    let password = server.owner_password();
    let owner = "owner@localhost";
    // Every failure from a different address: only the account counts.
    for i in 0..5 {
        let response = sign_in_from(
            &server,
            &format!("127.0.0.{}", 10 + i),
            owner,
            "wrong-password!",
        )
        .await;
        assert_eq!(error_code(response, 401).await, "invalid_credentials");
    }
    let throttled = sign_in_from(&server, "127.0.0.20", owner, "wrong-password!").await;
    let wait = retry_after(&throttled);
    assert!((1..=900).contains(&wait), "Retry-After {wait}");
    assert_eq!(
        error_code(throttled, 429).await,
        "too_many_sign_in_attempts"
    );
    // Even the right password waits: the throttle is not an oracle.
    let right = sign_in_from(&server, "127.0.0.21", owner, &password).await;
    assert_eq!(right.status(), 429);
    // The delay grows with each further failure, and ends.
    tokio::time::sleep(Duration::from_secs(wait)).await;
    let again = sign_in_from(&server, "127.0.0.22", owner, "wrong-password!").await;
    assert_eq!(again.status(), 401);
    let throttled = sign_in_from(&server, "127.0.0.23", owner, "wrong-password!").await;
    let longer = retry_after(&throttled);
    assert!(longer > wait, "{longer} is not longer than {wait}");

    // The owner keeps a way in: the CLI clears the throttle.
    let cleared = server.cli(&["users", "clear-sign-in-throttle", owner]);
    assert!(cleared.status.success(), "{}", stderr(&cleared));
    let ok = sign_in_from(&server, "127.0.0.24", owner, &password).await;
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn many_failed_sign_ins_from_one_address_are_slowed_down_whatever_the_email() {
    let server = TestServer::start();
    let mut refused = None;
    for i in 0..40 {
        let response = sign_in_from(
            &server,
            "127.0.0.30",
            &format!("nobody{i}@example.com"),
            "not-it-at-all",
        )
        .await;
        if response.status() == 429 {
            refused = Some(i);
            assert!(retry_after(&response) >= 1);
            assert_eq!(error_code(response, 429).await, "too_many_sign_in_attempts");
            break;
        }
        assert_eq!(error_code(response, 401).await, "invalid_credentials");
    }
    let at = refused.expect("one address was never throttled");
    assert!(at >= 10, "throttled after only {at} failures");
    // Another address is not affected.
    let other = sign_in_from(
        &server,
        "127.0.0.31",
        "owner@localhost",
        &server.owner_password(),
    )
    .await;
    assert_eq!(other.status(), 200);
}

#[tokio::test]
async fn failed_and_throttled_sign_ins_are_audited_without_the_password() {
    let server = TestServer::start();
    // Signed in first: the owner's sign-in is throttled below.
    let token = login(&server).await;
    let secret = "S3cret-Guess-Password";
    for _ in 0..6 {
        sign_in_from(&server, "127.0.0.40", "owner@localhost", secret).await;
    }
    sign_in_from(&server, "127.0.0.40", "nobody@example.com", secret).await;
    let long_email = format!("{}@example.com", "x".repeat(5000));
    sign_in_from(&server, "127.0.0.41", &long_email, secret).await;

    let audit = get_json(&server, &token, "/api/v1/audit?action=auth.&limit=100").await;
    let entries = audit["data"].as_array().unwrap();
    let failed = entries
        .iter()
        .filter(|e| e["action"] == "auth.sign_in_failed")
        .count();
    let throttled = entries
        .iter()
        .filter(|e| e["action"] == "auth.sign_in_throttled")
        .count();
    assert!(failed >= 6, "{failed} failed sign-ins audited: {audit}");
    assert!(throttled >= 1, "no throttled sign-in audited: {audit}");
    let text = audit.to_string();
    assert!(!text.contains(secret), "the password is in the audit log");
    assert!(text.contains("127.0.0.40"), "no source address: {text}");
    assert!(
        !text.contains(&"x".repeat(300)),
        "an unbounded email was kept"
    );
}

// ---- webhook URLs with credentials (item 11) ----

#[tokio::test]
async fn webhook_url_credentials_are_redacted_for_those_who_do_not_manage_webhooks() {
    let server = TestServer::start();
    let token = login(&server).await;
    let auditor = account(&server, "default", "auditor@example.com", "auditor").await;
    let billing = account(&server, "default", "billing@example.com", "billing").await;
    let http = client();
    let url = "https://hooks.example.com/in?token=tok-SECRET-1&team=TEAMVALUE9";
    let saved = http
        .put(server.url("/api/v1/webhooks"))
        .bearer_auth(&token)
        .json(&json!({ "urls": [url] }))
        .send()
        .await
        .unwrap();
    assert_eq!(saved.status(), 200);
    let refused = http
        .put(server.url("/api/v1/webhooks"))
        .bearer_auth(&token)
        .json(&json!({ "urls": ["https://alice:pw-SECRET-2@hooks.example.com/in"] }))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);

    // The owner, who manages webhooks, sees the whole URL where it is set.
    let settings = get_json(&server, &token, "/api/v1/webhooks").await;
    assert_eq!(settings["urls"][0], url);

    // The auditor reads the audit log: no credential in it.
    let audit = get_json(&server, &auditor, "/api/v1/audit?limit=100").await;
    let text = audit.to_string();
    assert!(text.contains("hooks.example.com"), "{text}");
    assert!(
        !text.contains("tok-SECRET-1"),
        "a query token in the audit log"
    );
    assert!(
        !text.contains("TEAMVALUE9"),
        "a query value in the audit log"
    );
    assert!(!text.contains("pw-SECRET-2"), "a password in the audit log");
    assert!(!text.contains("alice"), "a user name in the audit log");

    // A billing account tops up and gets the tenant back: redacted.
    let topped = http
        .post(server.url("/api/v1/tenants/default/credits"))
        .bearer_auth(&billing)
        .json(&json!({ "amount": 1.0 }))
        .send()
        .await
        .unwrap();
    assert_eq!(topped.status(), 200);
    let tenant: Value = topped.json().await.unwrap();
    let shown = tenant["webhookUrls"][0].as_str().unwrap();
    assert!(
        shown.starts_with("https://hooks.example.com/in?"),
        "{shown}"
    );
    assert!(!shown.contains("tok-SECRET-1"), "{shown}");
}
