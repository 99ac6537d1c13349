//! The layer map of src/, checked: every `crate::` path in the library
//! (outside `#[cfg(test)]` code and comments) must name a module the map
//! lets its own module import. The map below is the documentation too
//! (docs/architecture.md explains each layer).
//!
//! Reading the map: layers go from the bottom (first row) to the top (last
//! row). A module may import every module of the rows above it in this
//! table (lower layers), and, sideways, the modules listed BEFORE it in its
//! own row. Nothing may import a module listed after it. A module of
//! src/ missing from the map fails the test: a new part must be placed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// (layer, its modules in their allowed sideways order, what the layer is).
const LAYERS: &[(&str, &[&str], &str)] = &[
    (
        "base",
        &["base"],
        "ids, money, time, the network guard, the error-code table: uses nothing of ours",
    ),
    (
        "store",
        &["store"],
        "redb, the writer, the charge journal, the codec",
    ),
    (
        "upstream",
        &["upstream"],
        "who we call: provider kinds, their settings and credentials, as data",
    ),
    (
        "catalogue",
        &["catalogue"],
        "models, deployments, prices, endpoints: what may be named and what it costs",
    ),
    (
        "parts",
        &[
            "metrics",    // the registry of counters (exposition is in api)
            "traces",     // OpenTelemetry spans and their exporter
            "providers",  // wire formats, translations, upstream clients
            "routing",    // deployment health, cooldowns, attempts
            "pii",        // detection and redaction of personal data
            "audit",      // the hash-chained audit log and refusal counts
            "tenants",    // tenants, tiers, wallets, compliance policy
            "auth",       // keys, accounts, sessions, throttles
            "billing",    // usage, ledger, reservations, rollups, retention
            "events",     // events, outbox, signed webhooks
            "compliance", // classifier, registry, incidents, erasure, reviews
            "migrations", // older schemas to today's, above the parts they rewrite
            "sso",        // OpenID Connect sign-in
        ],
        "the domain's parts; each takes its own settings, none knows HTTP",
    ),
    (
        "config",
        &["config", "setup"],
        "assembles the parts' settings from the file and the environment",
    ),
    (
        "gateway",
        &["gateway"],
        "the pipeline: admit, classify and gate, route, call, charge, respond",
    ),
    (
        "http",
        &["api"],
        "state, router, middleware, extractors, error rendering, handlers, UI",
    ),
    ("operations", &["admin"], "the admin socket"),
    (
        "root",
        &["app"],
        "the composition root: builds every part, owns every task, runs shutdown",
    ),
    (
        "command line",
        &["cli"],
        "parses commands; `serve` runs the app",
    ),
];

/// Each module's position: (row, place in its row).
fn positions() -> BTreeMap<&'static str, (usize, usize)> {
    let mut out = BTreeMap::new();
    for (row, (_, modules, _)) in LAYERS.iter().enumerate() {
        for (place, module) in modules.iter().enumerate() {
            assert!(
                out.insert(*module, (row, place)).is_none(),
                "{module} is placed twice in the map"
            );
        }
    }
    out
}

fn may_import(from: (usize, usize), to: (usize, usize)) -> bool {
    to.0 < from.0 || (to.0 == from.0 && to.1 < from.1)
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level module a file of src/ belongs to (`None` for the crate
/// roots).
fn module_of(path: &Path) -> Option<String> {
    let relative = path.strip_prefix(src()).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then(|| name.to_owned())
}

/// The file's code without comments and without its `#[cfg(test)]` items
/// (unit tests may reach anything).
fn library_code(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut pending_test = false;
    // While skipping a test item: the depth it started at, and whether its
    // body has opened yet.
    let mut skipping: Option<(usize, bool)> = None;
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let trimmed = code.trim();
        if skipping.is_none() && trimmed.starts_with("#[cfg(test)]") {
            pending_test = true;
            continue;
        }
        let (opens, closes) = (code.matches('{').count(), code.matches('}').count());
        let before = depth;
        depth = (depth + opens).saturating_sub(closes);
        if std::mem::take(&mut pending_test) {
            if trimmed.ends_with(';') {
                continue; // `#[cfg(test)] mod tests;` or a `use`
            }
            skipping = Some((before, false));
        }
        if let Some((level, opened)) = skipping {
            let opened = opened || opens > 0;
            skipping = (!opened || depth > level).then_some((level, opened));
            continue;
        }
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// Every top-level module named by a `crate::` path, with its line.
fn imports(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                // `use crate::{a, b::c};`
                let inner = group.split('}').next().unwrap_or("");
                for item in inner.split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.push((name, n + 1));
                    }
                }
            } else {
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.push((name, n + 1));
                }
            }
            rest = after;
        }
    }
    out
}

#[test]
fn every_import_goes_down_the_map() {
    let positions = positions();
    let mut files = Vec::new();
    sources(&src(), &mut files);
    let mut violations = Vec::new();
    for file in &files {
        let Some(module) = module_of(file) else {
            continue;
        };
        let name = file.file_name().unwrap().to_str().unwrap();
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let Some(&from) = positions.get(module.as_str()) else {
            violations.push(format!("src/{module} is not in the layer map"));
            continue;
        };
        let code = library_code(&std::fs::read_to_string(file).unwrap());
        for (target, line) in imports(&code) {
            if target == module {
                continue;
            }
            match positions.get(target.as_str()) {
                Some(&to) if may_import(from, to) => {}
                Some(_) => violations.push(format!(
                    "{}:{line}: {module} imports {target}, which the map puts above or after it",
                    file.strip_prefix(src()).unwrap().display()
                )),
                None => violations.push(format!(
                    "{}:{line}: crate::{target} is not a module of the map",
                    file.strip_prefix(src()).unwrap().display()
                )),
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports against the layer map:\n{}",
        violations.join("\n")
    );
}

#[test]
fn every_module_of_the_crate_root_is_in_the_map() {
    let positions = positions();
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';'))
        .collect();
    for module in &declared {
        assert!(
            positions.contains_key(module),
            "{module} is declared in lib.rs but not placed in the layer map"
        );
    }
    for module in positions.keys() {
        assert!(
            declared.contains(module),
            "the map places {module}, which lib.rs does not declare"
        );
    }
}

#[test]
fn the_checker_sees_imports_and_skips_tests_and_comments() {
    let code = library_code(
        "use crate::store::Store;\n\
         // crate::gateway in a comment\n\
         fn f() { crate::billing::charge(); }\n\
         use crate::{audit, tenants::Tenant};\n\
         #[cfg(test)]\n\
         mod tests {\n    use crate::api::x;\n    fn g() { if true { } }\n}\n\
         fn h() { crate::events::emit(); }\n",
    );
    let found: Vec<String> = imports(&code).into_iter().map(|(m, _)| m).collect();
    assert_eq!(
        found,
        ["store", "billing", "audit", "tenants", "events"],
        "{code}"
    );
    let p = positions();
    assert!(may_import(p["gateway"], p["store"]));
    assert!(!may_import(p["store"], p["gateway"]));
    assert!(may_import(p["compliance"], p["audit"]));
    assert!(!may_import(p["audit"], p["compliance"]));
}

/// No file of src/ over 700 lines (issue 18): a longer file mixes
/// concerns; split it by concern.
#[test]
fn no_source_file_over_700_lines() {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            (lines > 700).then(|| format!("{} ({lines})", f.strip_prefix(src()).unwrap().display()))
        })
        .collect();
    long.sort();
    assert!(long.is_empty(), "files over 700 lines: {}", long.join(", "));
}

/// The application state belongs to the HTTP layer and the composition
/// root; every other part takes the parts it needs.
#[test]
fn the_application_state_stays_in_http_and_the_root() {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    let mut outside = Vec::new();
    for file in &files {
        let module = module_of(file);
        if matches!(module.as_deref(), Some("api" | "app")) {
            continue;
        }
        let code = library_code(&std::fs::read_to_string(file).unwrap());
        if code.contains("AppState") {
            outside.push(file.strip_prefix(src()).unwrap().display().to_string());
        }
    }
    assert!(
        outside.is_empty(),
        "AppState named in: {}",
        outside.join(", ")
    );
}
