//! The command line and the configuration it loads: exit codes, error
//! messages naming the line and the key, and bad input that changes nothing.

mod common;

use common::{BIN, TestServer, stderr};
use std::process::Command;

const GOOD: &str = r#"listen = "127.0.0.1:0"
[[providers]]
id = "local"
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
[[models]]
id = "llama"
provider = "local"
input = ["TEXT"]
output = ["TEXT"]
context_window = 8192
pricing = { unit = "per_token", input_per_million = 0.1, output_per_million = 0.2 }
"#;

fn write(dir: &std::path::Path, text: &str) -> std::path::PathBuf {
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn config_check_accepts_a_good_file_and_refuses_a_bad_one_with_line_key_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), GOOD);
    let ok = Command::new(BIN)
        .args(["config", "check"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(String::from_utf8_lossy(&ok.stdout).contains("valid (1 providers, 1 models)"));

    let bad = write(
        dir.path(),
        &GOOD.replace("provider = \"local\"", "provider = \"remote\""),
    );
    let refused = Command::new(BIN)
        .args(["config", "check"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let message = stderr(&refused);
    assert!(message.contains("config.toml:8"), "{message}");
    assert!(message.contains("models[0].provider"), "{message}");
    assert!(message.contains("unknown provider `remote`"), "{message}");
}

#[test]
fn serve_refuses_a_bad_config_at_start_with_exit_2_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        &GOOD.replace(
            "context_window = 8192",
            "context_window = 8192\ntemperature = 2",
        ),
    );
    let data = dir.path().join("data");
    let refused = Command::new(BIN)
        .args([
            "--config",
            path.to_str().unwrap(),
            "--data-dir",
            data.to_str().unwrap(),
            "serve",
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let message = stderr(&refused);
    assert!(message.contains("config.toml:12"), "{message}");
    assert!(message.contains("unknown field `temperature`"), "{message}");
    assert!(
        !data.exists(),
        "a refused start must not create the data directory"
    );

    let env = Command::new(BIN)
        .env("TOLLGATE_LISTEN", "not-an-address")
        .args([
            "--config",
            write(dir.path(), GOOD).to_str().unwrap(),
            "serve",
        ])
        .output()
        .unwrap();
    assert_eq!(env.status.code(), Some(2));
    assert!(
        stderr(&env).contains("environment TOLLGATE_LISTEN"),
        "{}",
        stderr(&env)
    );

    let missing = Command::new(BIN)
        .args(["--config", "/nonexistent/tollgate.toml", "serve"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("cannot read the file"));
}

#[test]
fn unknown_flags_and_bad_values_are_usage_errors() {
    for args in [
        vec!["serve", "--lisen", "127.0.0.1:0"],
        vec!["keys", "create", "--name", "x", "--reset", "hourly"],
        vec!["users", "create", "--email", "a@b.io", "--role", "root"],
        vec!["frobnicate"],
    ] {
        let output = Command::new(BIN).args(&args).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn keys_commands_cover_the_lifecycle_and_refuse_bad_values_without_changes() {
    let server = TestServer::start();
    let created = server.cli_json(&[
        "keys",
        "create",
        "--name",
        "batch",
        "--credit-limit",
        "12.5",
        "--reset",
        "weekly",
        "--rate-limit",
        "30",
        "--allow-high-risk",
    ]);
    let id = created["id"].as_str().unwrap();
    assert_eq!(created["creditLimit"], 12.5);
    assert_eq!(created["resetInterval"], "weekly");
    assert_eq!(created["allowHighRisk"], true);
    assert_eq!(created["state"], "active");
    assert_eq!(created["notifiedThresholds"], serde_json::json!([]));

    let updated = server.cli_json(&[
        "keys",
        "update",
        id,
        "--credit-limit",
        "none",
        "--rate-limit",
        "5",
        "--name",
        "renamed",
    ]);
    assert!(updated["creditLimit"].is_null());
    assert_eq!(updated["rateLimit"], 5);
    assert_eq!(updated["keyName"], "renamed");

    for bad in [
        vec!["keys", "update", id, "--rate-limit", "0"],
        vec!["keys", "update", id, "--credit-limit", "-3"],
        vec!["keys", "update", id, "--expires-at", "yesterday"],
        vec!["keys", "update", id, "--expires-at", "2001-01-01T00:00:00Z"],
        vec!["keys", "update", "key_nonexistent", "--name", "x"],
        vec![
            "keys",
            "create",
            "--name",
            "x",
            "--tenant",
            "no-such-tenant",
        ],
        vec!["keys", "create", "--name", ""],
    ] {
        let output = server.cli(&bad);
        assert!(!output.status.success(), "{bad:?} was accepted");
        assert!(!stderr(&output).is_empty());
    }
    let shown = server.cli_json(&["keys", "show", id]);
    assert_eq!(shown["rateLimit"], 5, "a refused update changed the key");
    assert_eq!(shown["keyName"], "renamed");

    let listed = server.cli_json(&["keys", "list"]);
    assert_eq!(listed.as_array().unwrap().len(), 2);
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .all(|k| k.get("key").is_none()),
        "values are never listed"
    );
    let human = server.cli(&["keys", "list"]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("renamed"));
}

#[test]
fn tenants_are_created_listed_shown_and_topped_up() {
    let server = TestServer::start();
    let created = server.cli_json(&["tenants", "create", "--name", "acme", "--tier", "free"]);
    assert_eq!(created["tier"], "free");
    assert_eq!(created["walletBalance"], 0.0);
    assert!(
        created["signingSecretHint"]
            .as_str()
            .unwrap()
            .starts_with("...")
    );
    let topped = server.cli_json(&["tenants", "topup", "acme", "--credits", "25.5"]);
    assert_eq!(topped["walletBalance"], 25.5);
    let shown = server.cli_json(&["tenants", "show", created["id"].as_str().unwrap()]);
    assert_eq!(shown["walletBalance"], 25.5);
    assert!(
        !server
            .cli(&["tenants", "create", "--name", "acme"])
            .status
            .success(),
        "duplicate name"
    );
    assert!(
        !server
            .cli(&["tenants", "topup", "acme", "--credits", "0"])
            .status
            .success()
    );
    assert!(
        !server
            .cli(&["tenants", "topup", "acme", "--credits", "-1"])
            .status
            .success()
    );
    let key = server.cli_json(&["keys", "create", "--tenant", "acme", "--name", "k"]);
    assert_eq!(key["tenantId"], created["id"]);
    assert_eq!(
        server
            .cli_json(&["keys", "list", "--tenant", "acme"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        server
            .cli_json(&["tenants", "list"])
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn models_list_shows_the_catalogue_and_init_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let models = Command::new(BIN)
        .args(["models", "list", "--json"])
        .output()
        .unwrap();
    let models: serde_json::Value = serde_json::from_slice(&models.stdout).unwrap();
    assert!(
        models
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == "mock-chat" && m["kind"] == "mock")
    );

    let data = dir.path().join("data");
    let first = Command::new(BIN)
        .env("TOLLGATE_OWNER_PASSWORD", "an owner password from env")
        .args(["--data-dir", data.to_str().unwrap(), "init"])
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let text = String::from_utf8_lossy(&first.stdout);
    assert!(text.contains("TOLLGATE_OWNER_PASSWORD"), "{text}");
    assert!(
        !text.contains("an owner password from env"),
        "a given password is not echoed"
    );
    let second = Command::new(BIN)
        .args(["--data-dir", data.to_str().unwrap(), "init"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&second.stdout).contains("already initialized"));
    let users = Command::new(BIN)
        .args([
            "--data-dir",
            data.to_str().unwrap(),
            "users",
            "list",
            "--json",
        ])
        .output()
        .unwrap();
    let users: serde_json::Value = serde_json::from_slice(&users.stdout).unwrap();
    assert_eq!(
        users.as_array().unwrap().len(),
        1,
        "one owner, however often init runs"
    );
}

#[test]
fn a_config_file_start_makes_no_demo_key() {
    let server = TestServer::start_with(Some(GOOD), &[]);
    assert!(server.banner_value("Demo API key").is_none());
    assert!(server.banner_value("Owner password").is_some());
    assert!(
        server
            .cli_json(&["keys", "list"])
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn help_lists_the_commands() {
    let help = Command::new(BIN).arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    for command in [
        "serve", "init", "tenants", "keys", "users", "models", "backup", "restore", "config",
        "risk",
    ] {
        assert!(text.contains(command), "{command} missing from --help");
    }
}

#[test]
fn the_last_owner_cannot_be_demoted_or_disabled_and_accounts_can_be_re_enabled() {
    let server = TestServer::start();
    let demote = server.cli(&["users", "set-role", "owner@localhost", "admin"]);
    assert!(!demote.status.success());
    assert!(
        stderr(&demote).contains("last enabled owner"),
        "{}",
        stderr(&demote)
    );
    assert!(
        !server
            .cli(&["users", "disable", "owner@localhost"])
            .status
            .success()
    );
    let second = server.cli_with_stdin(
        &[
            "users",
            "create",
            "--email",
            "second@example.com",
            "--role",
            "owner",
            "--password-stdin",
        ],
        "second owner password",
    );
    assert!(second.status.success());
    let disabled = server.cli_json(&["users", "disable", "owner@localhost"]);
    assert_eq!(disabled["disabled"], true);
    let enabled = server.cli_json(&["users", "enable", "owner@localhost"]);
    assert_eq!(enabled["disabled"], false);
}

#[test]
fn keys_take_their_owner_by_email_and_refuse_another_tenants_account() {
    let server = TestServer::start();
    let key = server.cli_json(&[
        "keys",
        "create",
        "--name",
        "owned",
        "--owner",
        "owner@localhost",
    ]);
    let owner = server.cli_json(&["users", "list"]);
    assert_eq!(key["ownerAccountId"], owner[0]["id"]);
    server.cli_json(&["tenants", "create", "--name", "other"]);
    let refused = server.cli(&[
        "keys",
        "create",
        "--name",
        "x",
        "--tenant",
        "other",
        "--owner",
        "owner@localhost",
    ]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("another tenant"));
}

#[test]
fn a_failed_account_creation_announces_no_password() {
    let server = TestServer::start();
    let failed = server.cli(&[
        "users",
        "create",
        "--email",
        "owner@localhost",
        "--role",
        "user",
    ]);
    assert!(!failed.status.success());
    assert!(
        !stderr(&failed).contains("Generated password"),
        "{}",
        stderr(&failed)
    );
}

#[test]
fn admin_commands_on_a_missing_data_directory_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo");
    let output = Command::new(BIN)
        .args(["--data-dir", missing.to_str().unwrap(), "keys", "list"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("no tollgate data"),
        "{}",
        stderr(&output)
    );
    assert!(!missing.exists());
}

#[cfg(unix)]
#[test]
fn backups_restores_and_data_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let mut server = TestServer::start();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&server.data_dir()), 0o700);
    assert_eq!(mode(&server.data_dir().join("tollgate.redb")), 0o600);
    assert_eq!(mode(&server.data_dir().join("tollgate.sock")), 0o600);
    let backup = server.dir.path().join("b.redb");
    assert!(
        server
            .cli(&["backup", "--out", backup.to_str().unwrap()])
            .status
            .success()
    );
    assert_eq!(mode(&backup), 0o600);
    server.terminate();
    let restored = server.dir.path().join("restored");
    let output = Command::new(BIN)
        .args([
            "--data-dir",
            restored.to_str().unwrap(),
            "restore",
            "--from",
            backup.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(mode(&restored), 0o700);
    assert_eq!(mode(&restored.join("tollgate.redb")), 0o600);
}

#[test]
fn prices_are_shown_in_credits() {
    let models = Command::new(BIN)
        .args(["models", "list", "--json"])
        .output()
        .unwrap();
    let models: serde_json::Value = serde_json::from_slice(&models.stdout).unwrap();
    let chat = models
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "mock-chat")
        .unwrap();
    assert_eq!(chat["pricing"]["unit"], "per_token");
    assert_eq!(chat["pricing"]["input_per_million"], 1.0);
    assert_eq!(chat["pricing"]["output_per_million"], 2.0);
}

#[test]
fn a_command_piped_into_a_reader_that_stops_early_ends_quietly() {
    // `tollgate risk eval FILE | head -1`: the reader closes the pipe before
    // the command is done; the command must end like any Unix tool
    // (SIGPIPE), not panic in its printing. The read end is closed before
    // the command's first write (it reads and classifies the whole file
    // first), so that write fails whatever the pipe's buffer holds: a
    // reader closing after one line would race a command that fits its
    // whole output in the buffer and ends normally.
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/euai-train.jsonl");
    let mut child = Command::new(BIN)
        .args(["risk", "eval"])
        .arg(file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "{:?} {err}",
        out.status
    );
}
