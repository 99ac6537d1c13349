//! What held in the black-box probe (issue 20, "What held") and had no
//! test of its own until then: request smuggling and 2,000 idle
//! connections. (The route × role matrix is `tests/access.rs`, cross-tenant
//! isolation `tests/dashboard_api.rs` and `tests/security_access.rs`,
//! secrets at rest and in logs `tests/auth.rs`, request forgery
//! `tests/security_net.rs`, bad input `tests/reliability_input.rs` and
//! `tests/security_input.rs`, the dashboard's CSP and XSS `tests/browser.rs`,
//! SIGKILL `tests/reliability_crash.rs`, backup under load
//! `tests/storage.rs`, the free-tier cap `tests/billing.rs`.)

mod common;

use std::time::Duration;

use common::{TestServer, client};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Everything the server sends on one connection until it closes it or
/// goes quiet.
async fn exchange(server: &TestServer, raw: &str) -> String {
    let addr = server.base_url.trim_start_matches("http://").to_owned();
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    stream.write_all(raw.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(3), stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
            Ok(Ok(n)) => answer.extend_from_slice(&buffer[..n]),
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

fn statuses(answer: &str) -> Vec<&str> {
    answer
        .lines()
        .filter(|l| l.starts_with("HTTP/1.1 "))
        .map(|l| &l[9..12])
        .collect()
}

/// A request whose length is ambiguous is refused as a whole, and what
/// hides behind it is never served as a second request.
#[tokio::test]
async fn ambiguous_request_lengths_are_refused_and_nothing_is_smuggled() {
    let server = TestServer::start();
    let key = server.demo_key();
    let smuggled =
        format!("GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n");
    let cases = [
        // CL.TE: Content-Length covers the smuggled request, chunked ends
        // before it.
        format!(
            "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{smuggled}",
            5 + smuggled.len()
        ),
        // Two different Content-Length values.
        format!(
            "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: {}\r\n\r\n{smuggled}",
            smuggled.len()
        ),
        // An obfuscated Transfer-Encoding.
        format!(
            "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\nContent-Length: {}\r\n\r\n{smuggled}",
            smuggled.len()
        ),
    ];
    for raw in &cases {
        let answer = exchange(&server, raw).await;
        let seen = statuses(&answer);
        assert!(
            !seen.is_empty() && seen.iter().all(|s| *s != "200") || seen == ["200"],
            "{raw:?} -> {answer}"
        );
        assert!(
            !answer.contains("\"object\":\"list\""),
            "a smuggled request was served: {raw:?} -> {answer}"
        );
    }
    // The server still answers.
    let health = client().get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
}

/// 2,000 connections that send nothing do not stop the server from
/// answering everyone else.
#[tokio::test]
async fn two_thousand_idle_connections_do_not_starve_the_server() {
    const IDLE: usize = 2_000;
    let limit = common::raise_open_files();
    assert!(
        limit >= (IDLE as u64) * 2 + 200,
        "the open-file limit ({limit}) is too low for {IDLE} connections; raise `ulimit -Hn`"
    );
    let server = TestServer::start();
    let key = server.demo_key();
    let addr = server.base_url.trim_start_matches("http://").to_owned();
    let mut idle = Vec::with_capacity(IDLE);
    for _ in 0..IDLE {
        idle.push(TcpStream::connect(&addr).await.unwrap());
    }
    // Half of them start a request and stop in the middle of the headers.
    for stream in idle.iter_mut().step_by(2) {
        stream
            .write_all(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
    }
    let answered = client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&serde_json::json!({ "model": "mock-chat",
                                   "messages": [{ "role": "user", "content": "hello" }] }))
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 200);
    let health = client().get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    drop(idle);
}
