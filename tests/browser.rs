//! The dashboard in headless Chromium: starts the real server (temporary
//! data directory, embedded demo configuration with the mock provider),
//! seeds an owner, a `user`, a `billing` and a `tester` account, then runs
//! `tests/browser/dashboard.test.mjs` with Node's test runner and fails
//! with its output. Screenshots land in `target/browser-artifacts/`.
//!
//! Needs Debian's `chromium` and `npm ci` in `tests/browser`; `.ci/test`
//! installs both. `BROWSER_TEST_PATTERN` runs only the tests whose name
//! matches (Node's `--test-name-pattern`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{TestServer, stderr};

const OWNER_PASSWORD: &str = "owner-password-for-browser-tests";
const ACCOUNT_PASSWORD: &str = "a-long-test-password";

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn chromium() -> PathBuf {
    std::env::var_os("CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from)
}

/// Fails early, saying what to install, when the browser or the driver is
/// missing.
fn check_prerequisites(suite: &Path) {
    let browser = chromium();
    assert!(
        browser.exists(),
        "{} is missing: install Debian's `chromium` (bash .ci/test does)",
        browser.display()
    );
    assert!(
        suite
            .join("node_modules/playwright-core/package.json")
            .exists(),
        "playwright-core is not installed: run `npm ci` in tests/browser (bash .ci/test does)"
    );
}

fn create_account(server: &TestServer, email: &str, role: &str) {
    let out = server.cli_with_stdin(
        &[
            "users",
            "create",
            "--email",
            email,
            "--role",
            role,
            "--tenant",
            "default",
            "--password-stdin",
        ],
        ACCOUNT_PASSWORD,
    );
    assert!(out.status.success(), "creating {email}: {}", stderr(&out));
}

#[test]
fn the_dashboard_passes_its_browser_tests_in_chromium() {
    let suite = crate_root().join("tests/browser");
    check_prerequisites(&suite);
    let server = TestServer::start_with(None, &[("TOLLGATE_OWNER_PASSWORD", OWNER_PASSWORD)]);
    create_account(&server, "user@example.com", "user");
    create_account(&server, "billing@example.com", "billing");
    create_account(&server, "tester@example.com", "tester");
    let artifacts = crate_root().join("target/browser-artifacts");

    let mut node = Command::new("node");
    node.current_dir(&suite)
        .arg("--test")
        .arg("--test-reporter=spec")
        .env("TOLLGATE_URL", &server.base_url)
        .env("OWNER_EMAIL", "owner@localhost")
        .env("OWNER_PASSWORD", OWNER_PASSWORD)
        .env("USER_EMAIL", "user@example.com")
        .env("BILLING_EMAIL", "billing@example.com")
        .env("TESTER_EMAIL", "tester@example.com")
        .env("ACCOUNT_PASSWORD", ACCOUNT_PASSWORD)
        .env("ARTIFACTS_DIR", &artifacts)
        .env("CHROMIUM", chromium());
    if let Ok(pattern) = std::env::var("BROWSER_TEST_PATTERN") {
        node.arg(format!("--test-name-pattern={pattern}"));
    }
    let output = node
        .arg("dashboard.test.mjs")
        .output()
        .expect("running node (is Node.js installed?)");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "the browser tests failed:\n{report}\nserver log:\n{}",
        server.log()
    );
    // The screenshots are the test's artefacts: one per page and width.
    for page in [
        "overview",
        "keys",
        "usage",
        "models",
        "webhooks",
        "users",
        "playground",
    ] {
        for width in [1280, 390] {
            let shot = artifacts.join(format!("{page}-{width}.png"));
            assert!(
                shot.exists() || std::env::var("BROWSER_TEST_PATTERN").is_ok(),
                "no screenshot {}",
                shot.display()
            );
        }
    }
    println!("{report}");
}
