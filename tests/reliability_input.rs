//! Hostile input (issue 9, reliability 3), against the real binary:
//!
//! - a property test: any body sent to `/v1/chat/completions` (generated
//!   from a seeded generator: mutated chat requests, random JSON, random
//!   bytes) gets a valid answer or a documented 4xx in the error shape,
//!   never a 5xx, never a hang;
//! - oversized heads (431) and bodies without a declared length (413);
//! - slow clients sending a byte at a time are cut off (the head after
//!   `header_read_timeout_seconds`, the body after
//!   `body_read_timeout_seconds` with 408 `request_timeout`) while others
//!   are served;
//! - invalid UTF-8 and deeply nested JSON get 400.
//!
//! The fuzz target on the parser and the translations is in `fuzz/`.

mod common;

use std::io::{Read, Write};
use std::time::Duration;

use common::rng::Rng;
use common::upstream::{Upstream, catalogue};
use common::{TestServer, client};
use serde_json::{Value, json};

const CASES: usize = 300;
/// Far above anything the server should take: reaching it is a hang.
const HANG: Duration = Duration::from_secs(30);
/// The statuses a bad request may get (docs/errors.md).
const DOCUMENTED_4XX: [u16; 9] = [400, 402, 403, 404, 408, 413, 415, 422, 429];

async fn setup() -> (Upstream, TestServer, String) {
    let upstream = Upstream::start().await;
    let config = format!(
        "header_read_timeout_seconds = 2\nbody_read_timeout_seconds = 2\n{}",
        catalogue(&upstream.base_url, &[("ok", "ok"), ("tool", "tool")])
    );
    let server = TestServer::start_with(Some(&config), &[]);
    let (_, key) = server.create_key(&["--rate-limit", "1000000"]);
    (upstream, server, key)
}

fn addr(server: &TestServer) -> String {
    server.base_url.trim_start_matches("http://").to_owned()
}

// ---- the generator ----

fn random_string(rng: &mut Rng) -> String {
    const PIECES: [&str; 12] = [
        "hi", "", " ", "ok", "tool", "\u{0}", "é", "🦀", "\"", "\\", "user", "<script>",
    ];
    (0..rng.range(0, 4)).map(|_| *rng.pick(&PIECES)).collect()
}

fn random_json(rng: &mut Rng, depth: u32) -> Value {
    match rng.range(0, if depth > 3 { 5 } else { 8 }) {
        0 => Value::Null,
        1 => json!(rng.chance(50)),
        2 => json!(rng.next_u64() as i64),
        3 => json!(f64::from(rng.range(0, 2000) as u32) / 7.0 - 100.0),
        4 => json!(random_string(rng)),
        5 | 6 => Value::Array(
            (0..rng.range(0, 4))
                .map(|_| random_json(rng, depth + 1))
                .collect(),
        ),
        _ => {
            let mut object = serde_json::Map::new();
            for _ in 0..rng.range(0, 4) {
                object.insert(random_key(rng), random_json(rng, depth + 1));
            }
            Value::Object(object)
        }
    }
}

fn random_key(rng: &mut Rng) -> String {
    const KEYS: [&str; 16] = [
        "model",
        "models",
        "messages",
        "role",
        "content",
        "stream",
        "max_tokens",
        "temperature",
        "tools",
        "tool_choice",
        "type",
        "text",
        "image_url",
        "url",
        "n",
        "stream_options",
    ];
    if rng.chance(80) {
        (*rng.pick(&KEYS)).to_owned()
    } else {
        random_string(rng)
    }
}

/// A valid chat request with one random change (or several).
fn mutated_request(rng: &mut Rng) -> Value {
    let mut body = json!({
        "model": "ok",
        "messages": [{ "role": "user", "content": "hello" }],
    });
    for _ in 0..rng.range(1, 4) {
        let value = random_json(rng, 1);
        match rng.range(0, 6) {
            0 => body[random_key(rng)] = value,
            1 => {
                if let Some(first) = body["messages"].get_mut(0).filter(|m| m.is_object()) {
                    first[random_key(rng)] = value;
                }
            }
            2 => body["messages"] = value,
            3 => {
                if let Some(messages) = body["messages"].as_array_mut() {
                    messages.push(json!({ "role": *rng.pick(&["user", "assistant", "system", "tool", "x"]), "content": value }));
                }
            }
            4 => body["stream"] = json!(rng.chance(50)),
            _ => body["model"] = json!(*rng.pick(&["ok", "tool", "nope", ""])),
        }
    }
    body
}

/// The raw body of one case.
fn case(rng: &mut Rng) -> Vec<u8> {
    match rng.range(0, 10) {
        0..=5 => mutated_request(rng).to_string().into_bytes(),
        6 | 7 => random_json(rng, 0).to_string().into_bytes(),
        8 => {
            // A valid request cut or with a byte changed.
            let mut bytes = mutated_request(rng).to_string().into_bytes();
            let at = rng.range(0, bytes.len() as u64) as usize;
            if rng.chance(50) {
                bytes.truncate(at);
            } else {
                bytes[at] = rng.range(0, 256) as u8;
            }
            bytes
        }
        _ => (0..rng.range(0, 64))
            .map(|_| rng.range(0, 256) as u8)
            .collect(),
    }
}

/// What is wrong with an answer, if anything.
fn judge(status: u16, text: &str, stream: bool) -> Option<String> {
    if status == 200 {
        let ok = if stream {
            text.contains("data: [DONE]") || text.contains("\"error\"")
        } else {
            serde_json::from_str::<Value>(text).is_ok_and(|v| v["choices"].is_array())
        };
        return (!ok).then(|| format!("200 with an unexpected body: {text}"));
    }
    if !DOCUMENTED_4XX.contains(&status) {
        return Some(format!("status {status}: {text}"));
    }
    let body: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let error = &body["error"];
    let shaped = error["message"].as_str().is_some_and(|m| !m.is_empty())
        && error["type"].is_string()
        && error["code"].is_string()
        && error.get("param").is_some();
    (!shaped).then(|| format!("{status} not in the error shape: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_body_gets_an_answer_or_a_documented_4xx_never_a_5xx_or_a_hang() {
    let (_upstream, server, key) = setup().await;
    let mut rng = Rng::seeded("reliability_input");
    let http = client();
    let mut failures = Vec::new();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for n in 0..CASES {
        let body = case(&mut rng);
        let stream = serde_json::from_slice::<Value>(&body).is_ok_and(|v| v["stream"] == true);
        let request = http
            .post(server.url("/v1/chat/completions"))
            .bearer_auth(&key)
            .header("content-type", "application/json")
            .body(body.clone())
            .send();
        let exchange = async {
            let response = request.await.expect("an answer");
            let status = response.status().as_u16();
            (status, response.text().await.unwrap_or_default())
        };
        let Ok((status, text)) = tokio::time::timeout(HANG, exchange).await else {
            panic!("case {n} hung: {}", String::from_utf8_lossy(&body));
        };
        *statuses.entry(status).or_default() += 1;
        if let Some(problem) = judge(status, &text, stream) {
            failures.push(format!(
                "case {n} {}: {problem}",
                String::from_utf8_lossy(&body)
            ));
        }
    }
    println!("statuses over {CASES} cases: {statuses:?}");
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(
        statuses.contains_key(&200) && statuses.contains_key(&400),
        "{statuses:?}"
    );
    assert!(!server.log().contains("panicked"));
}

#[tokio::test]
async fn invalid_utf8_and_deep_nesting_get_400_and_the_server_lives_on() {
    let (_upstream, server, key) = setup().await;
    let post = |body: Vec<u8>| {
        client()
            .post(server.url("/v1/chat/completions"))
            .bearer_auth(&key)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let mut invalid = br#"{"model": "ok", "messages": [{"role": "user", "content": "caf"#.to_vec();
    invalid.extend_from_slice(&[0xC3, 0x28, 0xFF, 0xFE]);
    invalid.extend_from_slice(br#""}]}"#);
    let deep_array = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_content = format!(
        r#"{{"model": "ok", "messages": [{{"role": "user", "content": {}"x"{}}}]}}"#,
        "{\"a\":".repeat(50_000),
        "}".repeat(50_000)
    );
    for (name, body) in [
        ("invalid UTF-8", invalid),
        ("a deep array", deep_array.into_bytes()),
        ("deep content", deep_content.into_bytes()),
    ] {
        let response = post(body).await.expect("an answer");
        assert_eq!(
            common::error_code(response, 400).await,
            "invalid_request",
            "{name}"
        );
    }
    // An API key that is not UTF-8 in the header.
    let mut stream = std::net::TcpStream::connect(addr(&server)).unwrap();
    stream.set_read_timeout(Some(HANG)).unwrap();
    stream
        .write_all(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xff\xfe\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    assert!(
        answer.starts_with(b"HTTP/1.1 401"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    let response =
        post(br#"{"model": "ok", "messages": [{"role": "user", "content": "hi"}]}"#.to_vec())
            .await
            .unwrap();
    assert_eq!(response.status(), 200);
    assert!(!server.log().contains("panicked"));
}

#[tokio::test]
async fn oversized_heads_get_431_and_undeclared_oversized_bodies_413() {
    let (_upstream, server, key) = setup().await;
    let response = client()
        .get(server.url("/v1/models"))
        .bearer_auth(&key)
        .header("x-padding", "a".repeat(1024 * 1024))
        .send()
        .await;
    match response {
        Ok(response) => assert_eq!(response.status(), 431),
        // hyper may close before the client has finished writing.
        Err(e) => assert!(e.is_request() || e.is_body(), "{e}"),
    }
    let many: String = (0..200).map(|i| format!("x-h{i}: v\r\n")).collect();
    let mut stream = std::net::TcpStream::connect(addr(&server)).unwrap();
    stream.set_read_timeout(Some(HANG)).unwrap();
    write!(
        stream,
        "GET /v1/models HTTP/1.1\r\nHost: x\r\n{many}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    assert!(
        answer.starts_with(b"HTTP/1.1 431"),
        "{}",
        String::from_utf8_lossy(&answer)
    );

    // 51 MB without a Content-Length: cut at the 50 MB limit, 413.
    let chunks = (0..51).map(|_| Ok::<_, std::io::Error>(vec![b' '; 1024 * 1024]));
    let response = client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await;
    match response {
        Ok(response) => assert_eq!(common::error_code(response, 413).await, "payload_too_large"),
        Err(e) => assert!(e.is_request() || e.is_body(), "{e}"),
    }
}

/// Writes `bytes` one at a time, `gap` apart, until the server closes the
/// connection or answers; returns what the server sent.
fn trickle(addr: &str, head: &[u8], bytes: &[u8], gap: Duration) -> Vec<u8> {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(1)))
        .unwrap();
    stream.write_all(head).unwrap();
    let started = std::time::Instant::now();
    let mut answer = Vec::new();
    for byte in bytes.iter().cycle() {
        assert!(
            started.elapsed() < HANG,
            "the slow client was never cut off"
        );
        if stream.write_all(&[*byte]).is_err() {
            break;
        }
        std::thread::sleep(gap);
        let mut buf = [0u8; 4096];
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                answer.extend_from_slice(&buf[..n]);
                if answer.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => break,
        }
    }
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let _ = stream.read_to_end(&mut answer);
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_cut_off_and_others_are_served_meanwhile() {
    let (_upstream, server, key) = setup().await;
    let address = addr(&server);
    // A head sent a byte every 100 ms: closed after the 2 s head timeout.
    let head_task = {
        let address = address.clone();
        tokio::task::spawn_blocking(move || {
            trickle(&address, b"", b"GET /v1/models HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Duration::from_millis(100))
        })
    };
    // A body sent a byte every 100 ms: 408 after the 2 s body timeout.
    let body_task = {
        let address = address.clone();
        let head = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\
             Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
        );
        tokio::task::spawn_blocking(move || {
            trickle(
                &address,
                head.as_bytes(),
                b"{\"model\": \"ok\",      ",
                Duration::from_millis(100),
            )
        })
    };
    // Meanwhile, others are served.
    for _ in 0..5 {
        let response = client()
            .post(server.url("/v1/chat/completions"))
            .bearer_auth(&key)
            .json(&json!({ "model": "ok", "messages": [{ "role": "user", "content": "hi" }] }))
            .timeout(HANG)
            .send()
            .await
            .expect("served while slow clients trickle");
        assert_eq!(response.status(), 200);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let head_answer = head_task.await.unwrap();
    let text = String::from_utf8_lossy(&head_answer);
    assert!(
        head_answer.is_empty() || text.starts_with("HTTP/1.1 408"),
        "the slow head was closed: {text}"
    );
    let body_answer = body_task.await.unwrap();
    let text = String::from_utf8_lossy(&body_answer);
    assert!(
        text.starts_with("HTTP/1.1 408"),
        "the slow body got 408: {text}"
    );
    assert!(text.contains("request_timeout"), "{text}");
}
