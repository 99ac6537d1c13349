//! The dashboard in headless Chromium: starts the real server (temporary
//! data directory, embedded demo configuration with the mock provider),
//! seeds an owner and one account of every other role, then runs every
//! `tests/browser/*.test.mjs` suite with Node's test runner and fails with
//! its output. Screenshots land in `target/browser-artifacts/`.
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

/// The seeded accounts: role, and the environment variable that names it.
const ACCOUNTS: [(&str, &str); 6] = [
    ("user", "USER_EMAIL"),
    ("billing", "BILLING_EMAIL"),
    ("tester", "TESTER_EMAIL"),
    ("admin", "ADMIN_EMAIL"),
    ("auditor", "AUDITOR_EMAIL"),
    ("reviewer", "REVIEWER_EMAIL"),
];

/// Every page of the menu: each suite leaves a screenshot of it at both widths.
const PAGES: [&str; 16] = [
    "overview",
    "keys",
    "usage",
    "models",
    "webhooks",
    "users",
    "playground",
    "reviews",
    "incidents",
    "audit",
    "conversations",
    "subprocessors",
    "consents",
    "subjects",
    "policies",
    "tenants",
];

/// The suites: every `*.test.mjs` in tests/browser, in name order.
fn suites(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("reading tests/browser")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".test.mjs"))
        .collect();
    names.sort();
    names
}

#[test]
fn the_dashboard_passes_its_browser_tests_in_chromium() {
    let suite = crate_root().join("tests/browser");
    check_prerequisites(&suite);
    let server = TestServer::start_with(None, &[("TOLLGATE_OWNER_PASSWORD", OWNER_PASSWORD)]);
    for (role, _) in ACCOUNTS {
        create_account(&server, &format!("{role}@example.com"), role);
    }
    let artifacts = crate_root().join("target/browser-artifacts");
    let filtered = std::env::var("BROWSER_TEST_PATTERN").ok();
    if filtered.is_none() {
        // A whole run must leave every screenshot itself.
        let _ = std::fs::remove_dir_all(&artifacts);
    }

    let mut node = Command::new("node");
    node.current_dir(&suite)
        .arg("--test")
        .arg("--test-reporter=spec")
        // One suite at a time: they share the server and its accounts.
        .arg("--test-concurrency=1")
        .env("TOLLGATE_URL", &server.base_url)
        .env("OWNER_EMAIL", "owner@localhost")
        .env("OWNER_PASSWORD", OWNER_PASSWORD)
        .env("ACCOUNT_PASSWORD", ACCOUNT_PASSWORD)
        .env("ARTIFACTS_DIR", &artifacts)
        .env("CHROMIUM", chromium());
    for (role, variable) in ACCOUNTS {
        node.env(variable, format!("{role}@example.com"));
    }
    if let Some(pattern) = &filtered {
        node.arg(format!("--test-name-pattern={pattern}"));
    }
    let output = node
        .args(suites(&suite))
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
    // The screenshots are the tests' artefacts: one per page and width.
    for page in PAGES {
        for width in [1280, 390] {
            let shot = artifacts.join(format!("{page}-{width}.png"));
            assert!(
                shot.exists() || filtered.is_some(),
                "no screenshot {}",
                shot.display()
            );
        }
    }
    println!("{report}");
}
