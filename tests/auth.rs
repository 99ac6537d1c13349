//! API-key authentication against the real server, with keys made through
//! the CLI while the server runs (so over the admin socket).

mod common;

use common::{TestServer, client, error_code, file_contains};

#[tokio::test]
async fn a_key_made_while_serving_authenticates_with_each_of_the_three_headers() {
    let server = TestServer::start();
    let (_, key) = server.create_key(&[]);
    assert!(key.starts_with("kp_live_") && key.len() == 40, "{key}");
    let http = client();
    for (header, value) in [
        ("authorization", format!("Bearer {key}")),
        ("x-api-key", key.clone()),
        ("x-goog-api-key", key.clone()),
    ] {
        let response = http
            .get(server.url("/v1/models"))
            .header(header, value)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{header}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["object"], "list");
        assert!(body["data"].as_array().is_some_and(|d| !d.is_empty()));
    }
}

#[tokio::test]
async fn unknown_and_missing_keys_get_401() {
    let server = TestServer::start();
    let http = client();
    let missing = http.get(server.url("/v1/models")).send().await.unwrap();
    assert_eq!(error_code(missing, 401).await, "missing_api_key");
    let real = server.demo_key();
    // Well-formed but unknown, and malformed: both 401 invalid_api_key.
    let unknown = format!("kp_live_{}", "A".repeat(32));
    for presented in [
        unknown.as_str(),
        "kp_live_short",
        "sk-something",
        &real[..real.len() - 1],
    ] {
        let response = http
            .get(server.url("/v1/models"))
            .bearer_auth(presented)
            .send()
            .await
            .unwrap();
        assert_eq!(
            error_code(response, 401).await,
            "invalid_api_key",
            "{presented}"
        );
    }
}

#[tokio::test]
async fn a_revoked_key_gets_403_invalid_api_key_at_once() {
    let server = TestServer::start();
    let (id, key) = server.create_key(&[]);
    let http = client();
    let ok = http
        .get(server.url("/v1/models"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    let revoked = server.cli_json(&["keys", "revoke", &id]);
    assert_eq!(revoked["state"], "revoked");
    let response = http
        .get(server.url("/v1/models"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(response, 403).await, "invalid_api_key");
    // A revoked key cannot be changed back.
    let update = server.cli(&["keys", "update", &id, "--name", "again"]);
    assert!(!update.status.success());
    assert!(
        common::stderr(&update).contains("revoked"),
        "{}",
        common::stderr(&update)
    );
}

#[tokio::test]
async fn an_expired_key_gets_403_key_expired_and_cannot_be_re_enabled() {
    let server = TestServer::start();
    let soon = time::OffsetDateTime::now_utc() + time::Duration::seconds(2);
    let soon = soon
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let (id, key) = server.create_key(&["--expires-at", &soon]);
    let http = client();
    let ok = http
        .get(server.url("/v1/models"))
        .header("x-api-key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let response = http
        .get(server.url("/v1/models"))
        .header("x-api-key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(response, 403).await, "key_expired");
    let later = (time::OffsetDateTime::now_utc() + time::Duration::days(1))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let update = server.cli(&["keys", "update", &id, "--expires-at", &later]);
    assert!(!update.status.success(), "an expired key was re-enabled");
    let shown = server.cli_json(&["keys", "show", &id]);
    assert_eq!(shown["state"], "expired");
}

#[tokio::test]
async fn rotation_makes_a_new_key_and_keeps_the_old_one_until_revoked() {
    let server = TestServer::start();
    let (id, old) = server.create_key(&[
        "--credit-limit",
        "5",
        "--reset",
        "monthly",
        "--rate-limit",
        "7",
    ]);
    let rotated = server.cli_json(&["keys", "rotate", &id]);
    let new = rotated["key"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    assert_eq!(rotated["creditLimit"], 5.0);
    assert_eq!(rotated["resetInterval"], "monthly");
    assert_eq!(rotated["rateLimit"], 7);
    assert_eq!(rotated["rotatedFrom"], id.as_str());
    let http = client();
    for key in [&old, &new] {
        let response = http
            .get(server.url("/v1/models"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }
    server.cli_json(&["keys", "revoke", &id]);
    let response = http
        .get(server.url("/v1/models"))
        .bearer_auth(&old)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let response = http
        .get(server.url("/v1/models"))
        .bearer_auth(&new)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

/// Sends a raw HTTP/1.1 request head (and `body`), then reads the whole
/// answer. Raw, because the server answers 413 without reading the body,
/// which an HTTP client library reports as a failed write.
fn raw_exchange(addr: &str, head: &str, body: &[u8]) -> (u16, serde_json::Value) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let text = String::from_utf8_lossy(&answer);
    let status: u16 = text[9..12].parse().unwrap();
    let (_, json) = text.split_once("\r\n\r\n").unwrap();
    (
        status,
        serde_json::from_str(json.trim()).unwrap_or(serde_json::Value::Null),
    )
}

#[tokio::test]
async fn a_body_of_50_mb_and_one_byte_gets_413_in_the_error_shape() {
    let server = TestServer::start();
    let addr = server.base_url.trim_start_matches("http://").to_owned();
    let limit = 50 * 1024 * 1024;
    // A declared length over the limit: refused before authentication and
    // before a byte of the body is read.
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        server.demo_key(),
        limit + 1
    );
    let (status, body) = tokio::task::spawn_blocking(move || raw_exchange(&addr, &head, b""))
        .await
        .unwrap();
    assert_eq!(status, 413);
    assert_eq!(body["error"]["code"], "payload_too_large");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert!(body["error"]["message"].as_str().unwrap().contains("50 MB"));

    // No declared length (chunked): cut at the limit while reading. The
    // final chunk is held back so the server has nothing left unread.
    let addr = server.base_url.trim_start_matches("http://").to_owned();
    let head = "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
                Transfer-Encoding: chunked\r\n\r\n"
        .to_owned();
    let mut chunked = Vec::new();
    let piece = vec![b' '; 1024 * 1024];
    for _ in 0..50 {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(&piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"1\r\n \r\n");
    let (status, body) = tokio::task::spawn_blocking(move || raw_exchange(&addr, &head, &chunked))
        .await
        .unwrap();
    assert_eq!(status, 413);
    assert_eq!(body["error"]["code"], "payload_too_large");

    // Exactly 50 MB is not refused for its size (here: not JSON, so 400).
    let response = client()
        .post(server.url("/api/v1/auth/login"))
        .header("content-type", "application/json")
        .body(vec![b' '; limit])
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(response, 400).await, "invalid_request");
}

#[tokio::test]
async fn anthropic_and_google_routes_answer_auth_errors_in_their_dialects() {
    let server = TestServer::start();
    let http = client();
    let response = http.post(server.url("/v1/messages")).send().await.unwrap();
    assert_eq!(response.status(), 401);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "missing_api_key");
    let response = http
        .post(server.url("/v1beta/models/gemini-2.0-flash:generateContent"))
        .header("x-goog-api-key", "kp_live_bad")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], 401);
    assert_eq!(body["error"]["status"], "UNAUTHENTICATED");
}

#[tokio::test]
async fn plain_key_values_and_passwords_never_reach_the_data_file_or_the_log() {
    let mut server = TestServer::start_with(None, &[("TOLLGATE_LOG_LEVEL", "debug")]);
    let demo = server.demo_key();
    let owner_password = server.owner_password();
    let (id, key) = server.create_key(&[]);
    let rotated = server.cli_json(&["keys", "rotate", &id]);
    let rotated = rotated["key"].as_str().unwrap().to_owned();
    let http = client();
    for k in [&demo, &key, &rotated] {
        http.get(server.url("/v1/models"))
            .bearer_auth(k)
            .send()
            .await
            .unwrap();
        http.get(server.url("/v1/models"))
            .header("x-goog-api-key", k.as_str())
            .send()
            .await
            .unwrap();
    }
    server.cli_json(&["keys", "revoke", &id]);
    http.get(server.url("/v1/models"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    http.post(server.url("/api/v1/auth/login"))
        .json(&serde_json::json!({"email": "owner@localhost", "password": owner_password}))
        .send()
        .await
        .unwrap();
    server.terminate();
    let data_file = server.data_dir().join("tollgate.redb");
    let log = server.log();
    assert!(log.contains("request"), "the log was written");
    assert!(
        !log.contains('\u{1b}'),
        "a log written to a file has no terminal colour codes"
    );
    for secret in [&demo, &key, &rotated, &owner_password] {
        assert!(
            !file_contains(&data_file, secret.as_bytes()),
            "a secret is in the data file"
        );
        assert!(!log.contains(secret.as_str()), "a secret is in the log");
        // The random part alone must not be there either.
        let tail = &secret[secret.len() - 20..];
        assert!(!file_contains(&data_file, tail.as_bytes()));
        assert!(!log.contains(tail));
    }
}
