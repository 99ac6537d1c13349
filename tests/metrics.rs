//! `/metrics` end to end: promtool accepts the exposition, and the counters
//! move by exactly what a scripted sequence of requests implies.
//!
//! One request served by the upstream's `ok` answer reports 10 prompt and
//! 5 completion tokens and costs 20 micro-credits.

mod common;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::upstream::Upstream;
use common::{TestServer, client, error_code};
use futures::StreamExt;
use serde_json::{Value, json};

fn config(upstream: &str) -> String {
    common::upstream::catalogue(upstream, &[("ok", "ok"), ("s503", "status-503")])
}

async fn scrape(server: &TestServer) -> String {
    let response = client().get(server.url("/metrics")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    response.text().await.unwrap()
}

/// Sample name with labels, to value.
fn samples(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (name, value) = l.rsplit_once(' ').unwrap();
            (name.to_owned(), value.parse().unwrap())
        })
        .collect()
}

fn delta(before: &HashMap<String, f64>, after: &HashMap<String, f64>, sample: &str) -> f64 {
    after.get(sample).copied().unwrap_or(0.0) - before.get(sample).copied().unwrap_or(0.0)
}

/// promtool from the test setup (`.ci/test` puts it in `.tools/bin` when
/// the system has none), else from `PATH`.
fn promtool() -> PathBuf {
    let local = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.tools/bin/promtool"));
    if local.exists() {
        local
    } else {
        PathBuf::from("promtool")
    }
}

fn promtool_check(text: &str) {
    let mut child = Command::new(promtool())
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool is installed by .ci/test");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.trim().is_empty(),
        "promtool check metrics: {said}\n{text}"
    );
}

async fn chat(server: &TestServer, key: &str, body: Value) -> reqwest::Response {
    client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

fn hello() -> Value {
    json!({ "model": "ok", "messages": [{ "role": "user", "content": "hi" }] })
}

#[tokio::test]
async fn counters_move_by_exactly_what_the_requests_imply_and_promtool_accepts_them() {
    let upstream = Upstream::start().await;
    let server = TestServer::start_with(Some(&config(&upstream.base_url)), &[]);
    let (_, key) = server.create_key(&[]);
    let (_, limited) = server.create_key(&["--rate-limit", "1"]);
    let (_, capped) = server.create_key(&["--credit-limit", "0.00002"]);
    let before = samples(&scrape(&server).await);

    // Five served (one by a fallback), one 429, one 402.
    assert_eq!(chat(&server, &key, hello()).await.status(), 200);
    assert_eq!(chat(&server, &key, hello()).await.status(), 200);
    let chain =
        json!({ "models": ["s503", "ok"], "messages": [{ "role": "user", "content": "hi" }] });
    assert_eq!(chat(&server, &key, chain).await.status(), 200);
    assert_eq!(chat(&server, &limited, hello()).await.status(), 200);
    let limited_again = chat(&server, &limited, hello()).await;
    assert_eq!(error_code(limited_again, 429).await, "rate_limit_exceeded");
    assert_eq!(chat(&server, &capped, hello()).await.status(), 200);
    let over = chat(&server, &capped, hello()).await;
    assert_eq!(error_code(over, 402).await, "budget_exceeded");

    let text = scrape(&server).await;
    promtool_check(&text);
    let after = samples(&text);
    let route = "route=\"/v1/chat/completions\"";
    let expected: &[(&str, f64)] = &[
        (
            &format!("tollgate_http_requests_total{{{route},model=\"ok\",status_class=\"2xx\"}}"),
            5.0,
        ),
        // Refused before the body was read: no model.
        (
            &format!("tollgate_http_requests_total{{{route},model=\"\",status_class=\"4xx\"}}"),
            2.0,
        ),
        (
            &format!("tollgate_http_request_duration_seconds_count{{{route}}}"),
            7.0,
        ),
        ("tollgate_errors_total{code=\"rate_limit_exceeded\"}", 1.0),
        ("tollgate_errors_total{code=\"budget_exceeded\"}", 1.0),
        ("tollgate_refusals_total{reason=\"rate_limit\"}", 1.0),
        ("tollgate_refusals_total{reason=\"budget\"}", 1.0),
        ("tollgate_fallbacks_total{model=\"ok\"}", 1.0),
        ("tollgate_providers_exhausted_total", 0.0),
        (
            "tollgate_upstream_duration_seconds_count{provider=\"up\",outcome=\"ok\"}",
            5.0,
        ),
        (
            "tollgate_upstream_duration_seconds_count{provider=\"up\",outcome=\"503\"}",
            1.0,
        ),
        ("tollgate_tokens_total{model=\"ok\",kind=\"prompt\"}", 50.0),
        (
            "tollgate_tokens_total{model=\"ok\",kind=\"completion\"}",
            25.0,
        ),
        ("tollgate_events_total{event=\"request.completed\"}", 5.0),
        ("tollgate_events_total{event=\"fallback.triggered\"}", 1.0),
        ("tollgate_events_total{event=\"spend.50_percent\"}", 1.0),
        ("tollgate_events_total{event=\"spend.80_percent\"}", 1.0),
        ("tollgate_events_total{event=\"budget.exceeded\"}", 1.0),
        ("tollgate_streams_in_flight", 0.0),
    ];
    for (sample, want) in expected {
        assert_eq!(delta(&before, &after, sample), *want, "{sample}\n{text}");
    }
    let credits = delta(
        &before,
        &after,
        "tollgate_credits_charged_total{model=\"ok\"}",
    );
    assert!(
        (credits - 0.0001).abs() < 1e-12,
        "5 x 20 micro-credits, got {credits}"
    );

    // A stream: time to first token observed, and no stream left open.
    let stream =
        json!({ "model": "ok", "stream": true, "messages": [{ "role": "user", "content": "hi" }] });
    let response = chat(&server, &key, stream).await;
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    while body.next().await.is_some() {}
    let streamed = samples(&scrape(&server).await);
    assert_eq!(
        delta(
            &after,
            &streamed,
            "tollgate_stream_time_to_first_token_seconds_count{model=\"ok\"}"
        ),
        1.0
    );
    assert_eq!(streamed["tollgate_streams_in_flight"], 0.0);
    assert!(streamed["tollgate_writer_queue_depth"] >= 0.0);
}

#[tokio::test]
async fn a_metrics_token_guards_the_endpoint_when_set() {
    let token = "metrics-token-0123456789";
    let server = TestServer::start_with(None, &[("TOLLGATE_METRICS_TOKEN", token)]);
    let none = client().get(server.url("/metrics")).send().await.unwrap();
    assert_eq!(error_code(none, 401).await, "missing_token");
    let wrong = client()
        .get(server.url("/metrics"))
        .bearer_auth("metrics-token-0123456780")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let right = client()
        .get(server.url("/metrics"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(right.status(), 200);
    let text = right.text().await.unwrap();
    assert!(text.contains("# TYPE tollgate_http_requests_total counter"));

    // Too short a token is refused, naming the variable.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tollgate.toml");
    std::fs::write(&file, config("http://127.0.0.1:9/v1")).unwrap();
    let out = Command::new(common::BIN)
        .args(["config", "check"])
        .arg(&file)
        .env("TOLLGATE_METRICS_TOKEN", "short")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(common::stderr(&out).contains("TOLLGATE_METRICS_TOKEN"));
}
