//! Upstream faults (issue 9, reliability 2): each fault of the scripted
//! upstream (`tests/common/upstream.rs`, [`common::upstream::fault`]), plain
//! and streamed, ends in its documented outcome (docs/reliability.md):
//!
//! - before the first byte of an answer: the next model of the chain
//!   (`isFallback`, the attempt's status in `explainability.attempts`);
//!   with no next model, 502 `all_providers_failed` and a
//!   `providers.exhausted` event;
//! - after the first chunk of a stream: an error event, no `[DONE]`.
//!
//! Never a panic (the log is checked), never a hung request (every request
//! has a client timeout well above the gateway's own: a timeout is a hang).

mod common;

use std::time::Duration;

use common::receiver::Receiver;
use common::upstream::Upstream;
use common::{TestServer, client, login};
use serde_json::{Value, json};

/// Far above the gateway's own timeouts (1 s first byte here): reaching
/// it means a hung request, not a slow one.
const HANG: Duration = Duration::from_secs(45);

/// A port nothing listens on: bound, then released.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn config(upstream: &str) -> String {
    let mut out = format!(
        "[[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{upstream}\"\nfirst_byte_timeout_ms = 1000\n\
         [[providers]]\nid = \"dead\"\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{}/v1\"\n",
        closed_port()
    );
    for (id, provider, up) in [
        ("ok", "up", "ok"),
        ("refused", "dead", "ok"),
        ("reset", "up", "reset"),
        ("slow", "up", "slow-3000"),
        ("truncated", "up", "truncated"),
        ("wrongtype", "up", "wrongtype"),
        ("huge", "up", "huge"),
        ("cut", "up", "cut"),
        ("stall", "up", "stall"),
        ("redirect", "up", "redirect"),
    ] {
        out.push_str(&format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{up}\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
             context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
        ));
    }
    out
}

async fn setup() -> (Upstream, Receiver, TestServer, String) {
    let upstream = Upstream::start().await;
    let receiver = Receiver::start().await;
    let server = TestServer::start_with(
        Some(&config(&upstream.base_url)),
        &[("TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")],
    );
    let owner = login(&server).await;
    let put = client()
        .put(server.url("/api/v1/webhooks"))
        .bearer_auth(&owner)
        .json(&json!({ "urls": [receiver.url("/events")] }))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    let (_, key) = server.create_key(&["--rate-limit", "100000"]);
    (upstream, receiver, server, key)
}

/// What a caller got: the status and the whole body, or a panic naming
/// the request when it hung.
async fn send(server: &TestServer, key: &str, models: &[&str], stream: bool) -> (u16, String) {
    let body = json!({ "models": models, "stream": stream,
        "messages": [{ "role": "user", "content": "hi" }] });
    let request = async {
        let response = client()
            .post(server.url("/v1/chat/completions"))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .expect("an answer");
        let status = response.status().as_u16();
        (status, response.text().await.unwrap_or_default())
    };
    tokio::time::timeout(HANG, request)
        .await
        .unwrap_or_else(|_| panic!("{models:?} stream={stream} hung"))
}

/// The `data:` payloads of a stream.
fn data(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect()
}

/// The completion (plain) or the last JSON chunk before `[DONE]` (stream).
fn final_object(text: &str, stream: bool) -> Value {
    if !stream {
        return serde_json::from_str(text).expect("a JSON completion");
    }
    let events = data(text);
    assert_eq!(events.last(), Some(&"[DONE]"), "a clean end: {text}");
    serde_json::from_str(events[events.len() - 2]).expect("a JSON chunk")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_before_the_first_byte_falls_back_then_exhausts_with_502_and_an_event() {
    let (_upstream, receiver, server, key) = setup().await;
    // (fault, stream, attempt status recorded)
    let table = [
        ("refused", false, "connect_error"),
        ("refused", true, "connect_error"),
        ("reset", false, "invalid_response"),
        ("slow", false, "timeout"),
        ("slow", true, "timeout"),
        ("truncated", false, "invalid_response"),
        ("truncated", true, "stream_cut"),
        ("wrongtype", false, "invalid_response"),
        ("wrongtype", true, "stream_cut"),
        ("huge", false, "invalid_response"),
        ("huge", true, "invalid_response"),
        ("redirect", false, "307"),
        ("redirect", true, "307"),
    ];
    let mut failures = Vec::new();
    for (fault, stream, expected) in table {
        let (status, text) = send(&server, &key, &[fault, "ok"], stream).await;
        if status != 200 {
            failures.push(format!("{fault} stream={stream}: {status} {text}"));
            continue;
        }
        let last = final_object(&text, stream);
        let attempt = &last["explainability"]["attempts"][0];
        if last["billing"]["isFallback"] != true || attempt["status"] != expected {
            failures.push(format!(
                "{fault} stream={stream}: fallback {} attempt {attempt}",
                last["billing"]["isFallback"]
            ));
        }
        // Alone in its chain: 502 and a providers.exhausted event.
        let (status, text) = send(&server, &key, &[fault], stream).await;
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if status != 502 || body["error"]["code"] != "all_providers_failed" {
            failures.push(format!("{fault} alone stream={stream}: {status} {text}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    let mut exhausted = Vec::new();
    for _ in 0..100 {
        exhausted = receiver
            .at("/events")
            .into_iter()
            .filter(|r| r.event() == "providers.exhausted")
            .collect();
        if exhausted.len() >= table.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        exhausted.len(),
        table.len(),
        "one providers.exhausted event per 502"
    );
    assert_no_panic(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_redirect_is_an_error_never_followed() {
    let (upstream, _receiver, server, key) = setup().await;
    let (status, text) = send(&server, &key, &["redirect"], false).await;
    assert_eq!(status, 502, "{text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("redirect (HTTP 307)") && message.contains("base_url"),
        "{message}"
    );
    // The target stays out of the message (it is a URL).
    assert!(!message.contains("followed=1"), "{message}");
    // One POST: the client did not post again where the 307 pointed.
    let posts = upstream.recorded.models();
    assert_eq!(posts, vec!["redirect".to_owned()], "{posts:?}");
    assert_no_panic(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_broken_after_its_first_chunk_ends_with_an_error_event_not_a_hang() {
    let (_upstream, _receiver, server, key) = setup().await;
    for fault in ["reset", "cut", "stall"] {
        let (status, text) = send(&server, &key, &[fault, "ok"], true).await;
        assert_eq!(status, 200, "{fault}: the stream had started");
        let events = data(&text);
        assert!(
            !events.contains(&"[DONE]"),
            "{fault}: a broken stream must not end cleanly: {text}"
        );
        let error: Value = serde_json::from_str(events.last().expect("events")).unwrap();
        assert_eq!(
            error["error"]["code"], "upstream_stream_error",
            "{fault}: {text}"
        );
    }
    // The server keeps serving.
    let (status, _) = send(&server, &key, &["ok"], false).await;
    assert_eq!(status, 200);
    assert_no_panic(&server);
}

fn assert_no_panic(server: &TestServer) {
    let log = server.log();
    assert!(!log.contains("panicked"), "the server panicked: {log}");
}
