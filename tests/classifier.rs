//! The risk rules on the labelled development set (`tests/data/euai-dev.jsonl`,
//! a copy of the EU AI Act taxonomy's dev set), through the built binary's
//! `tollgate risk eval --json`: the rules alone must catch at least 90 % of
//! the prohibited and high cases and raise at most 5 % of the minimal ones.
//! `tests/data/risk-regression.jsonl` holds further one-message cases in the
//! four languages (near-misses with other senses of a stem, rules the dev set
//! has no case for), written while the packs were made, held to the same bar.

use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_tollgate");

fn eval(file: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let mut command = Command::new(BIN);
    command
        .current_dir(dir.path())
        .args(["risk", "eval", "--json"])
        .arg(path);
    for (name, _) in std::env::vars().filter(|(k, _)| k.starts_with("TOLLGATE_")) {
        command.env_remove(name);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_rules_catch_90_percent_of_risky_cases_and_raise_at_most_5_percent_of_minimal_ones() {
    let report = eval("tests/data/euai-dev.jsonl");
    assert_eq!(report["cases"], 97);
    let catch = report["catch_rate"].as_f64().unwrap();
    let raise = report["false_raise_rate"].as_f64().unwrap();
    assert!(catch >= 0.90, "catch rate {catch}: {:#}", report["misses"]);
    assert!(
        raise <= 0.05,
        "false-raise rate {raise}: {:#}",
        report["misses"]
    );
    assert_eq!(report["prohibited_and_high"], 55);
    assert_eq!(report["minimal"], 35);
}

#[test]
fn the_regression_cases_meet_the_same_targets() {
    let report = eval("tests/data/risk-regression.jsonl");
    let catch = report["catch_rate"].as_f64().unwrap();
    let raise = report["false_raise_rate"].as_f64().unwrap();
    assert!(catch >= 0.90, "catch rate {catch}: {:#}", report["misses"]);
    assert!(
        raise <= 0.05,
        "false-raise rate {raise}: {:#}",
        report["misses"]
    );
}

#[test]
fn the_report_has_a_confusion_matrix_accuracy_per_level_and_the_misses() {
    let report = eval("tests/data/euai-dev.jsonl");
    let rows = report["confusion"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let total: u64 = rows
        .iter()
        .flat_map(|r| r.as_array().unwrap())
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(total, 97);
    for level in ["prohibited", "high", "limited", "minimal"] {
        assert!(report["accuracy"][level]["rate"].is_f64(), "{level}");
    }
    for miss in report["misses"].as_array().unwrap() {
        assert!(miss["id"].is_string() && miss["expected"] != miss["got"]);
    }
}

#[test]
fn a_bad_eval_file_is_a_usage_error_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    std::fs::write(&path, "{\"id\": \"x\"}\n").unwrap();
    let out = Command::new(BIN)
        .current_dir(dir.path())
        .args(["risk", "eval"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"));
}
