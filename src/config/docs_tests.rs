//! The declarations, the reader and docs/configuration.md agree: every
//! declared setting has its row in the docs with the same type, range,
//! default and environment variable, no documented key is undeclared, and
//! the keys the file may hold are exactly the declared ones.
//!
//! After changing a declaration, `BLESS_DOCS=1 cargo nextest run --lib
//! config::docs_tests` rewrites the tables in the doc.

use super::setting::{Default, Setting, Ty};
use super::*;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md");

fn table(settings: &[Setting], with_env: bool) -> String {
    let (head, rule) = if with_env {
        (
            "| Key | Type | Default | Environment variable | Notes |",
            "|---|---|---|---|---|",
        )
    } else {
        ("| Key | Type | Default | Notes |", "|---|---|---|---|")
    };
    let mut out = format!("{head}\n{rule}\n");
    for s in settings {
        out.push_str(&s.markdown_row(with_env));
        out.push('\n');
    }
    out
}

/// The table that follows `heading` in the doc, header to last row.
fn doc_table<'a>(doc: &'a str, heading: &str) -> (usize, &'a str) {
    let from = doc
        .find(heading)
        .unwrap_or_else(|| panic!("no `{heading}`"));
    let start = from + doc[from..].find("\n| Key |").expect("a table") + 1;
    let len: usize = doc[start..]
        .split_inclusive('\n')
        .take_while(|line| line.starts_with('|'))
        .map(str::len)
        .sum();
    (start, &doc[start..start + len])
}

/// The env-variable row listing the settings' overrides.
fn env_row() -> String {
    let names: Vec<String> = TOP_LEVEL
        .iter()
        .filter_map(|s| s.env)
        .filter(|n| n.starts_with("TOLLGATE_"))
        .map(|n| format!("`{n}`"))
        .collect();
    format!(
        "| {} | Override the setting of the same name (see the table above). |",
        names.join(", ")
    )
}

#[test]
fn docs_configuration_md_holds_the_declared_settings() {
    let mut doc = std::fs::read_to_string(DOC).unwrap();
    let sections = [
        ("## Top-level settings", table(TOP_LEVEL, true)),
        ("## Providers", table(PROVIDER_KEYS, false)),
        ("## Models", table(MODEL_KEYS, false)),
    ];
    let bless = std::env::var_os("BLESS_DOCS").is_some();
    let mut stale = Vec::new();
    for (heading, expected) in sections {
        let (start, found) = doc_table(&doc, heading);
        if found != expected {
            stale.push(format!("{heading}: expected\n{expected}"));
            let end = start + found.len();
            doc.replace_range(start..end, &expected);
        }
    }
    let from = doc.find("### Environment variables").unwrap();
    let line_start = from
        + doc[from..]
            .find("| `TOLLGATE_LISTEN`")
            .expect("the overrides row");
    let line_end = line_start + doc[line_start..].find('\n').unwrap();
    if doc[line_start..line_end] != env_row() {
        stale.push(format!("the overrides row: expected\n{}", env_row()));
        doc.replace_range(line_start..line_end, &env_row());
    }
    for other in top_level::ENV_OTHER {
        assert!(
            doc.contains(&format!("| `{other}` |")),
            "{other} is read but has no row in the environment table"
        );
    }
    if bless {
        std::fs::write(DOC, &doc).unwrap();
    }
    assert!(
        stale.is_empty() || bless,
        "docs/configuration.md disagrees with the declarations (BLESS_DOCS=1 rewrites it):\n{}",
        stale.join("\n\n")
    );
}

/// The fields serde accepts in one table, read from its refusal of an
/// unknown key.
fn accepted(text: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, text).unwrap();
    let err = load(Some(&path), &|_| None, &[], &Overrides::default()).unwrap_err();
    let list = err
        .message
        .split_once("expected one of ")
        .unwrap_or_else(|| panic!("{err}"))
        .1;
    let mut keys: Vec<String> = list
        .split(", ")
        .map(|k| k.trim_matches('`').to_owned())
        .collect();
    keys.sort();
    keys
}

fn declared(settings: &[Setting]) -> Vec<String> {
    let mut keys: Vec<String> = settings
        .iter()
        .map(|s| s.key.trim_matches(['[', ']']).to_owned())
        .collect();
    keys.sort();
    keys
}

#[test]
fn the_file_accepts_exactly_the_declared_keys() {
    assert_eq!(accepted("zz_unknown = 1\n"), declared(TOP_LEVEL));
    assert_eq!(
        accepted("[[providers]]\nid = \"p\"\nkind = \"mock\"\nzz_unknown = 1\n"),
        declared(PROVIDER_KEYS)
    );
    let model = "[[models]]\nid = \"m\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
                 context_window = 1\npricing = { unit = \"per_request\", per_request = 0.0 }\n\
                 zz_unknown = 1\n";
    assert_eq!(accepted(model), declared(MODEL_KEYS));
}

#[test]
fn every_declared_default_is_within_its_range_and_every_env_var_is_unique() {
    let all = TOP_LEVEL.iter().chain(PROVIDER_KEYS).chain(MODEL_KEYS);
    for s in all {
        match (s.ty, s.default) {
            (Ty::Whole { min, max, .. }, Default::Whole(n)) => {
                assert!((min..=max).contains(&n), "{}: {n} outside its range", s.key)
            }
            (Ty::Number { min, max }, Default::Number(n)) => {
                assert!((min..=max).contains(&n), "{}: {n} outside its range", s.key)
            }
            (Ty::Bool, d) => assert!(matches!(d, Default::Bool(_)), "{}", s.key),
            _ => {}
        }
        assert!(!s.help.is_empty(), "{} has no help text", s.key);
    }
    let env = top_level::known_env();
    let mut unique = env.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), env.len());
}

#[test]
fn the_unknown_variable_refusal_lists_every_declared_override() {
    let err = load(
        None,
        &|_| None,
        &["TOLLGATE_LISTN".to_owned()],
        &Overrides::default(),
    )
    .unwrap_err();
    for s in TOP_LEVEL {
        if let Some(name) = s.env.filter(|n| n.starts_with("TOLLGATE_")) {
            assert!(err.message.contains(name), "{name} missing from: {err}");
        }
    }
    assert!(err.message.contains("TOLLGATE_JOURNAL_CHECKPOINT_MS"));
}
