//! The Grafana dashboard and the Prometheus alert rules
//! (`packaging/grafana`, `packaging/prometheus`) name only metrics that
//! `/metrics` exposes: a renamed metric fails here, not on an operator's
//! empty panel or silent alert. The dashboard also imports as is (its
//! data source is its own selector variable).

mod common;

use std::collections::BTreeSet;

use common::TestServer;
use common::upstream::Upstream;
use serde_json::{Value, json};

/// Series Prometheus itself adds to every scrape.
const PROMETHEUS_OWN: &[&str] = &["up"];

/// The metric names in a PromQL expression: identifiers starting
/// `tollgate_`, plus Prometheus' own `up`.
fn metric_names(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = expr.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &expr[start..i];
            // A label value or a template is quoted; skip only bare words.
            let quoted = start > 0 && matches!(bytes[start - 1], b'"' | b'$');
            if !quoted && (word.starts_with("tollgate_") || PROMETHEUS_OWN.contains(&word)) {
                names.insert(word.to_owned());
            }
        } else {
            i += 1;
        }
    }
    names
}

/// Every sample name the exposition may hold: counters' `_total`, and a
/// histogram's `_bucket`, `_sum`, `_count`, from the `# TYPE` lines (a
/// family without samples yet still declares its type).
fn exposed(text: &str) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = PROMETHEUS_OWN.iter().map(|s| s.to_string()).collect();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let mut parts = rest.split(' ');
        let (Some(name), Some(kind)) = (parts.next(), parts.next()) else {
            continue;
        };
        names.insert(name.to_owned());
        if kind == "histogram" {
            for suffix in ["_bucket", "_sum", "_count"] {
                names.insert(format!("{name}{suffix}"));
            }
        }
    }
    names
}

fn dashboard_exprs() -> Vec<String> {
    let text = std::fs::read_to_string("packaging/grafana/tollgate.json").unwrap();
    let dashboard: Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let mut exprs = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().expect("targets") {
            exprs.push(target["expr"].as_str().expect("expr").to_owned());
        }
    }
    exprs
}

fn rule_exprs() -> Vec<String> {
    let text = std::fs::read_to_string("packaging/prometheus/tollgate-rules.yml").unwrap();
    // `expr:` is either inline or a `|` block of more-indented lines.
    let mut exprs = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some((indent, rest)) = line.split_once("expr:") else {
            continue;
        };
        let rest = rest.trim();
        if rest != "|" {
            exprs.push(rest.to_owned());
            continue;
        }
        let mut block = String::new();
        while let Some(next) = lines.peek() {
            if next.len() - next.trim_start().len() <= indent.len() {
                break;
            }
            block.push_str(next.trim());
            block.push('\n');
            lines.next();
        }
        exprs.push(block);
    }
    exprs
}

#[tokio::test]
async fn every_panel_and_rule_names_a_metric_that_metrics_exposes() {
    // prometheus-client writes a labelled family only once it has a
    // sample: the traffic below gives every family the files name one.
    let upstream = Upstream::start().await;
    let (hook_addr, _hook) = common::serve(axum::Router::new().fallback(|| async { "" })).await;
    let hook = format!("http://{hook_addr}/hook");
    // Spans go to a port that refuses them: dropped spans are counted.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let otlp = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    // One quick retry, so the retry counter has a value.
    let config =
        common::upstream::catalogue(&upstream.base_url, &[("ok", "ok"), ("s503", "status-503")])
            .replace(
                "max_retries = 0\n",
                "max_retries = 1\nretry_backoff_ms = 1\n",
            );
    let server = TestServer::start_with(
        Some(&config),
        &[("WEBHOOK_URLS", &hook), ("TOLLGATE_OTLP_ENDPOINT", &otlp)],
    );
    let (_, key) = server.create_key(&[]);
    let hi = json!([{"role": "user", "content": "hi"}]);
    for body in [
        json!({"model": "ok", "messages": hi}),
        json!({"model": "s503", "messages": hi}),
        json!({"models": ["s503", "ok"], "messages": hi}),
        json!({"model": "ok", "messages": hi, "stream": true}),
    ] {
        let response = common::chat_post(&server, &key, &body).await;
        let _ = response.bytes().await;
    }
    let (_, limited) = server.create_key(&["--rate-limit", "1"]);
    for _ in 0..2 {
        let _ = common::chat_post(&server, &limited, &json!({"model": "ok", "messages": hi})).await;
    }
    // Deliveries and span exports happen in the background.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let text = common::scrape_metrics(&server).await;
        let ready = text.contains("tollgate_webhook_deliveries_total{")
            && text.contains("tollgate_otlp_spans_dropped_total{");
        if ready || std::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let exposed = exposed(&common::scrape_metrics(&server).await);

    let dashboard = dashboard_exprs();
    let rules = rule_exprs();
    assert!(dashboard.len() >= 14, "{dashboard:?}");
    assert!(rules.len() >= 10, "{rules:?}");
    let mut unknown = Vec::new();
    for (file, exprs) in [("dashboard", &dashboard), ("rules", &rules)] {
        for expr in exprs {
            let names = metric_names(expr);
            assert!(!names.is_empty(), "{file}: no metric in {expr}");
            for name in names {
                if !exposed.contains(&name) {
                    unknown.push(format!("{file}: {name} in {expr}"));
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "not in /metrics:\n{}",
        unknown.join("\n")
    );
}

#[test]
fn the_name_parser_skips_label_values_and_functions() {
    let names = metric_names(
        r#"sum by (le) (rate(tollgate_x_bucket{route="tollgate_not_a_metric"}[5m])) / up"#,
    );
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["tollgate_x_bucket", "up"]
    );
}

#[test]
fn the_alert_rules_pass_promtool() {
    let local =
        std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.tools/bin/promtool"));
    let promtool = if local.exists() {
        local
    } else {
        "promtool".into()
    };
    let out = std::process::Command::new(promtool)
        .args(["check", "rules", "packaging/prometheus/tollgate-rules.yml"])
        .output()
        .expect("promtool is installed by .ci/test");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The dashboard imports as is: every query's data source is the
/// dashboard's own `datasource` variable (a Prometheus selector), and an
/// `__inputs` entry, which Grafana's import asks the operator to fill,
/// exists only when something uses it.
#[test]
fn the_dashboards_data_sources_are_its_own_variable() {
    let text = std::fs::read_to_string("packaging/grafana/tollgate.json").unwrap();
    let dashboard: Value = serde_json::from_str(&text).unwrap();
    let variables = dashboard["templating"]["list"]
        .as_array()
        .expect("templating");
    let selector = variables
        .iter()
        .find(|v| v["type"] == "datasource")
        .expect("a data source variable");
    assert_eq!(selector["query"], "prometheus");
    let own = format!("${{{}}}", selector["name"].as_str().unwrap());

    fn references<'a>(value: &'a Value, out: &mut Vec<&'a Value>) {
        match value {
            Value::Object(map) => {
                if let Some(source) = map.get("datasource") {
                    out.push(source);
                }
                map.values().for_each(|v| references(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| references(v, out)),
            _ => {}
        }
    }
    let mut sources = Vec::new();
    references(&dashboard["panels"], &mut sources);
    references(&dashboard["templating"], &mut sources);
    assert!(sources.len() > 10, "{} references", sources.len());
    for source in sources {
        assert_eq!(source["uid"], own.as_str(), "{source}");
        assert_eq!(source["type"], "prometheus", "{source}");
    }
    for input in dashboard["__inputs"].as_array().into_iter().flatten() {
        let name = input["name"].as_str().unwrap();
        assert!(
            text.contains(&format!("${{{name}}}")),
            "the import input {name} is used nowhere"
        );
    }
}
