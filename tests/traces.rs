//! OpenTelemetry traces end to end: a test OTLP receiver decodes the
//! protobuf the server posts to `/v1/traces` (docs/observability.md).

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use common::scripted::{Scripted, Step};
use common::upstream::Upstream;
use common::{TestServer, client};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::{Span, span::SpanKind};
use prost::Message;
use serde_json::json;

const SECRET_PROMPT: &str = "PURPLE-ELEPHANT-7731 my private question";
const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

/// What the receiver got: each export's body, and its headers.
#[derive(Clone, Default)]
struct Received(Arc<Mutex<Vec<Bytes>>>, Arc<Mutex<Vec<HeaderMap>>>);

async fn receive(
    State(received): State<Received>,
    headers: HeaderMap,
    body: Bytes,
) -> &'static str {
    received.0.lock().unwrap().push(body);
    received.1.lock().unwrap().push(headers);
    ""
}

async fn receiver() -> (String, Received, tokio::task::JoinHandle<()>) {
    let received = Received::default();
    let app = Router::new()
        .route("/v1/traces", post(receive))
        .with_state(received.clone());
    let (addr, task) = common::serve(app).await;
    (format!("http://{addr}"), received, task)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}

fn string(span: &Span, key: &str) -> String {
    match attribute(&span.attributes, key) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        other => panic!(
            "{key} on {}: {other:?} in {:?}",
            span.name,
            span.attributes.iter().map(|a| &a.key).collect::<Vec<_>>()
        ),
    }
}

fn int(span: &Span, key: &str) -> i64 {
    match attribute(&span.attributes, key) {
        Some(any_value::Value::IntValue(n)) => *n,
        other => panic!(
            "{key} on {}: {other:?} in {:?}",
            span.name,
            span.attributes.iter().map(|a| &a.key).collect::<Vec<_>>()
        ),
    }
}

fn decode(bodies: &[Bytes]) -> (Vec<ExportTraceServiceRequest>, Vec<Span>) {
    let requests: Vec<ExportTraceServiceRequest> = bodies
        .iter()
        .map(|b| ExportTraceServiceRequest::decode(b.as_ref()).expect("OTLP protobuf"))
        .collect();
    let spans = requests
        .iter()
        .flat_map(|r| &r.resource_spans)
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| s.spans.clone())
        .collect();
    (requests, spans)
}

#[tokio::test]
async fn a_request_is_one_server_span_continuing_the_callers_trace_with_no_text_or_key() {
    let upstream = Upstream::start().await;
    let (endpoint, received, _task) = receiver().await;
    let server = TestServer::start_with(
        Some(&common::upstream::catalogue(
            &upstream.base_url,
            &[("ok", "ok")],
        )),
        &[("TOLLGATE_OTLP_ENDPOINT", &endpoint)],
    );
    let (key_id, key) = server.create_key(&[]);
    let response = client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .header("traceparent", format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01"))
        .json(&json!({"model": "ok", "messages": [{"role": "user", "content": SECRET_PROMPT}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let answer = response.text().await.unwrap();

    // Wait for the batch (flushed within half a second).
    let deadline = Instant::now() + Duration::from_secs(15);
    let (requests, spans) = loop {
        let bodies = received.0.lock().unwrap().clone();
        let (requests, spans) = decode(&bodies);
        if spans.iter().any(|s| s.kind == SpanKind::Server as i32) || Instant::now() > deadline {
            break (requests, spans);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    let server_span = spans
        .iter()
        .find(|s| s.kind == SpanKind::Server as i32)
        .unwrap_or_else(|| panic!("no server span in {names:?}"));
    assert_eq!(server_span.name, "chat ok");
    assert_eq!(hex(&server_span.trace_id), CALLER_TRACE);
    assert_eq!(hex(&server_span.parent_span_id), CALLER_SPAN);
    assert_eq!(string(server_span, "gen_ai.operation.name"), "chat");
    assert_eq!(string(server_span, "gen_ai.request.model"), "ok");
    assert_eq!(string(server_span, "gen_ai.response.model"), "ok");
    assert_eq!(string(server_span, "gen_ai.provider.name"), "openai");
    assert_eq!(int(server_span, "gen_ai.usage.input_tokens"), 10);
    assert_eq!(int(server_span, "gen_ai.usage.output_tokens"), 5);
    assert_eq!(int(server_span, "http.response.status_code"), 200);
    assert_eq!(string(server_span, "tollgate.key.id"), key_id);
    assert!(!string(server_span, "tollgate.tenant.id").is_empty());
    assert!(!string(server_span, "tollgate.risk.level").is_empty());
    assert!(matches!(
        attribute(&server_span.attributes, "tollgate.cost.credits"),
        Some(any_value::Value::DoubleValue(c)) if (*c - 0.00002).abs() < 1e-9
    ));

    let children: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id == server_span.span_id)
        .collect();
    let child_names: Vec<&str> = children.iter().map(|s| s.name.as_str()).collect();
    for expected in ["classify", "charge"] {
        assert!(
            child_names.contains(&expected),
            "{expected} in {child_names:?}"
        );
    }
    let attempt = children
        .iter()
        .find(|s| s.kind == SpanKind::Client as i32)
        .unwrap_or_else(|| panic!("no client span in {child_names:?}"));
    assert_eq!(hex(&attempt.trace_id), CALLER_TRACE);
    assert_eq!(string(attempt, "server.address"), "127.0.0.1");
    assert_eq!(string(attempt, "gen_ai.provider.name"), "openai");
    assert_eq!(int(attempt, "http.response.status_code"), 200);

    // The upstream saw the attempt's span as its parent.
    let sent = upstream.recorded.headers();
    let traceparent = sent[0]["traceparent"].to_str().unwrap().to_owned();
    assert_eq!(
        traceparent,
        format!("00-{CALLER_TRACE}-{}-01", hex(&attempt.span_id))
    );

    let resource = requests[0].resource_spans[0].resource.as_ref().unwrap();
    assert!(matches!(
        attribute(&resource.attributes, "service.name"),
        Some(any_value::Value::StringValue(s)) if s == "tollgate"
    ));
    assert!(attribute(&resource.attributes, "service.version").is_some());

    // Neither the prompt, the answer nor the key, anywhere in the bytes.
    let answer_text = serde_json::from_str::<serde_json::Value>(&answer).unwrap()["choices"][0]
        ["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    for body in received.0.lock().unwrap().iter() {
        let bytes = body.as_ref();
        for needle in ["PURPLE-ELEPHANT", key.as_str(), answer_text.as_str()] {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "{needle} in an export"
            );
        }
    }
}

#[tokio::test]
async fn a_collector_that_is_down_delays_nothing_and_the_dropped_spans_are_counted() {
    let upstream = Upstream::start().await;
    // A port that refuses connections.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let server = TestServer::start_with(
        Some(&common::upstream::catalogue(
            &upstream.base_url,
            &[("ok", "ok")],
        )),
        &[("TOLLGATE_OTLP_ENDPOINT", &endpoint)],
    );
    let (_, key) = server.create_key(&[]);
    let started = Instant::now();
    for _ in 0..5 {
        let response = common::chat_post(
            &server,
            &key,
            &json!({"model": "ok", "messages": [{"role": "user", "content": "hi"}]}),
        )
        .await;
        assert_eq!(response.status(), 200);
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = common::scrape_metrics(&server).await;
        let dropped: f64 = text
            .lines()
            .find(|l| l.starts_with("tollgate_otlp_spans_dropped_total{reason=\"export_failed\"}"))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        if dropped >= 5.0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no dropped spans counted:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn without_an_endpoint_nothing_is_sent_upstream_as_traceparent() {
    let upstream = Upstream::start().await;
    let server = TestServer::start_with(
        Some(&common::upstream::catalogue(
            &upstream.base_url,
            &[("ok", "ok")],
        )),
        &[],
    );
    let (_, key) = server.create_key(&[]);
    let response = client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .header("traceparent", format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01"))
        .json(&json!({"model": "ok", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(upstream.recorded.headers()[0].get("traceparent").is_none());
}

/// Every inference route has its server span, not only chat, and the same
/// children as chat's: the classification (with the risk level on the
/// server span too), a client span named for the route's operation per
/// upstream call, and the charge. Here the Anthropic passthrough (`chat
/// {model}`), the Gemini one (`generate_content {model}`) and image
/// generation (`image_generation {model}`).
#[tokio::test]
async fn the_passthroughs_and_media_routes_have_their_server_spans() {
    let anthropic = common::anthropic::Anthropic::start().await;
    let gemini = common::gemini::Gemini::start().await;
    let media = common::media::MediaUpstream::start().await;
    let (endpoint, received, _task) = receiver().await;
    let config = format!(
        "[[providers]]\nid = \"claude\"\nkind = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"TEST_ANTHROPIC_KEY\"\n\
         [[providers]]\nid = \"gem\"\nkind = \"gemini\"\nbase_url = \"{}\"\napi_key_env = \"TEST_GEMINI_KEY\"\n\
         [[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{}\"\n\
         [[models]]\nid = \"claude-ok\"\nprovider = \"claude\"\nupstream = \"claude-ok\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
         context_window = 200000\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n\
         [[models]]\nid = \"gemini-ok\"\nprovider = \"gem\"\nupstream = \"gemini-ok\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
         context_window = 200000\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n\
         [[models]]\nid = \"pictures\"\nprovider = \"up\"\nupstream = \"img\"\ninput = [\"TEXT\"]\noutput = [\"IMAGE\"]\n\
         context_window = 1000\npricing = {{ unit = \"per_image\", per_image = 0.04 }}\n",
        anthropic.base_url, gemini.base_url, media.base_url
    );
    let server = TestServer::start_with(
        Some(&config),
        &[
            ("TOLLGATE_OTLP_ENDPOINT", &endpoint),
            ("TEST_ANTHROPIC_KEY", "sk-ant-traces"),
            ("TEST_GEMINI_KEY", "gm-traces"),
        ],
    );
    let (_, key) = server.create_key(&[]);
    let message = client()
        .post(server.url("/v1/messages"))
        .header("x-api-key", &key)
        .json(&json!({ "model": "claude-ok", "max_tokens": 16,
                       "messages": [{ "role": "user", "content": SECRET_PROMPT }] }))
        .send()
        .await
        .unwrap();
    assert_eq!(message.status(), 200);
    let generated = client()
        .post(server.url("/v1beta/models/gemini-ok:generateContent"))
        .header("x-goog-api-key", &key)
        .json(&json!({ "contents": [{ "role": "user", "parts": [{ "text": SECRET_PROMPT }] }] }))
        .send()
        .await
        .unwrap();
    assert_eq!(generated.status(), 200);
    let image = client()
        .post(server.url("/v1/images/generations"))
        .bearer_auth(&key)
        .json(&json!({ "model": "pictures", "prompt": "a lighthouse" }))
        .send()
        .await
        .unwrap();
    assert_eq!(image.status(), 200, "{}", image.text().await.unwrap());

    let spans = spans_until(&received, |spans| {
        spans
            .iter()
            .filter(|s| s.kind == SpanKind::Server as i32)
            .count()
            >= 3
    })
    .await;
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    let server_span = |name: &str| {
        spans
            .iter()
            .find(|s| s.kind == SpanKind::Server as i32 && s.name == name)
            .unwrap_or_else(|| panic!("no server span {name} in {names:?}"))
    };
    // (server span, operation, client span, provider, upstream address)
    let routes = [
        (
            server_span("chat claude-ok"),
            "chat",
            "chat claude-ok",
            "anthropic",
        ),
        (
            server_span("generate_content gemini-ok"),
            "generate_content",
            "generate_content gemini-ok",
            "gcp.gemini",
        ),
        (
            server_span("image_generation pictures"),
            "image_generation",
            "image_generation img",
            "openai",
        ),
    ];
    for (route, operation, client_name, provider) in routes {
        assert_eq!(string(route, "gen_ai.operation.name"), operation);
        assert_eq!(string(route, "gen_ai.provider.name"), provider);
        assert_eq!(int(route, "http.response.status_code"), 200);
        assert_eq!(
            string(route, "tollgate.risk.level"),
            "minimal",
            "{}",
            route.name
        );
        let children: Vec<&Span> = spans
            .iter()
            .filter(|s| s.parent_span_id == route.span_id)
            .collect();
        let child_names: Vec<&str> = children.iter().map(|s| s.name.as_str()).collect();
        let classify = children
            .iter()
            .find(|s| s.name == "classify" && s.kind == SpanKind::Internal as i32)
            .unwrap_or_else(|| panic!("no classify span under {}: {child_names:?}", route.name));
        assert_eq!(string(classify, "tollgate.risk.level"), "minimal");
        assert!(
            children
                .iter()
                .any(|s| s.name == "charge" && s.kind == SpanKind::Internal as i32),
            "no charge span under {}: {child_names:?}",
            route.name
        );
        let clients: Vec<&&Span> = children
            .iter()
            .filter(|s| s.kind == SpanKind::Client as i32)
            .collect();
        assert_eq!(clients.len(), 1, "{}: {child_names:?}", route.name);
        let attempt = clients[0];
        assert_eq!(attempt.name, client_name);
        assert_eq!(string(attempt, "gen_ai.operation.name"), operation);
        assert_eq!(string(attempt, "gen_ai.provider.name"), provider);
        assert_eq!(string(attempt, "server.address"), "127.0.0.1");
        assert_eq!(int(attempt, "http.response.status_code"), 200);
    }
    // The passthroughs send the attempt's span upstream as the parent.
    let claude_attempt = spans
        .iter()
        .find(|s| s.kind == SpanKind::Client as i32 && s.name == "chat claude-ok")
        .unwrap();
    let sent = anthropic.recorded.headers()[0]["traceparent"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        sent,
        format!(
            "00-{}-{}-01",
            hex(&claude_attempt.trace_id),
            hex(&claude_attempt.span_id)
        )
    );
    assert!(gemini.recorded.headers()[0].get("traceparent").is_some());

    let bytes: Vec<u8> = received
        .0
        .lock()
        .unwrap()
        .iter()
        .flatten()
        .copied()
        .collect();
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains("PURPLE-ELEPHANT"), "prompt text in a span");
    assert!(!text.contains(&key), "key value in a span");
}

/// The spans received so far, once `enough` holds of them (or after 15 s,
/// for the assertions to say what is missing).
async fn spans_until(received: &Received, enough: impl Fn(&[Span]) -> bool) -> Vec<Span> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let bodies = received.0.lock().unwrap().clone();
        let (_, spans) = decode(&bodies);
        if enough(&spans) || Instant::now() > deadline {
            return spans;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `otlp_headers` go with every export (a vendor's API key), and their
/// values are never logged.
#[tokio::test]
async fn otlp_headers_are_sent_with_each_export_and_never_logged() {
    let upstream = Upstream::start().await;
    let (endpoint, received, _task) = receiver().await;
    let config = format!(
        "otlp_headers = {{ \"x-collector-key\" = \"collector-secret-4411\" }}\n{}",
        common::upstream::catalogue(&upstream.base_url, &[("ok", "ok")])
    );
    let server = TestServer::start_with(Some(&config), &[("TOLLGATE_OTLP_ENDPOINT", &endpoint)]);
    let (_, key) = server.create_key(&[]);
    let response = common::chat_post(
        &server,
        &key,
        &json!({"model": "ok", "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(response.status(), 200);
    let spans = spans_until(&received, |spans| {
        spans.iter().any(|s| s.kind == SpanKind::Server as i32)
    })
    .await;
    assert!(!spans.is_empty(), "nothing exported");
    let headers = received.1.lock().unwrap().clone();
    for sent in &headers {
        assert_eq!(sent["x-collector-key"], "collector-secret-4411");
        assert_eq!(sent["content-type"], "application/x-protobuf");
    }
    assert!(!server.log().contains("collector-secret-4411"));
}

/// `otlp_sample_ratio = 0` records no new trace, but sampling is parent
/// based: a caller's `traceparent` decides by its sampled flag. Every
/// request still sends a `traceparent` upstream, with the sampled flag of
/// its trace.
#[tokio::test]
async fn sample_ratio_zero_exports_nothing_but_a_sampled_callers_trace() {
    const UNSAMPLED_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
    let upstream = Upstream::start().await;
    let (endpoint, received, _task) = receiver().await;
    let config = format!(
        "otlp_sample_ratio = 0\n{}",
        common::upstream::catalogue(&upstream.base_url, &[("ok", "ok")])
    );
    let server = TestServer::start_with(Some(&config), &[("TOLLGATE_OTLP_ENDPOINT", &endpoint)]);
    let (_, key) = server.create_key(&[]);
    // In order: no traceparent, an unsampled caller, a sampled caller.
    for traceparent in [
        None,
        Some(format!("00-{UNSAMPLED_TRACE}-{CALLER_SPAN}-00")),
        Some(format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01")),
    ] {
        let mut request = client()
            .post(server.url("/v1/chat/completions"))
            .bearer_auth(&key)
            .json(&json!({"model": "ok", "messages": [{"role": "user", "content": "hi"}]}));
        if let Some(traceparent) = traceparent {
            request = request.header("traceparent", traceparent);
        }
        assert_eq!(request.send().await.unwrap().status(), 200);
    }
    // Spans leave in the order they ended: once the sampled request's
    // server span is here, the earlier requests' spans would be too.
    let spans = spans_until(&received, |spans| {
        spans.iter().any(|s| s.kind == SpanKind::Server as i32)
    })
    .await;
    let server_span = spans
        .iter()
        .find(|s| s.kind == SpanKind::Server as i32)
        .expect("the sampled caller's server span is exported");
    assert_eq!(hex(&server_span.parent_span_id), CALLER_SPAN);
    for span in &spans {
        assert_eq!(
            hex(&span.trace_id),
            CALLER_TRACE,
            "{} exported from an unsampled trace",
            span.name
        );
    }
    let sent: Vec<String> = upstream
        .recorded
        .headers()
        .iter()
        .map(|h| h["traceparent"].to_str().unwrap().to_owned())
        .collect();
    assert_eq!(sent.len(), 3);
    assert!(sent[0].ends_with("-00"), "{}", sent[0]);
    assert!(!sent[0].contains(CALLER_TRACE) && !sent[0].contains(UNSAMPLED_TRACE));
    assert!(
        sent[1].starts_with(&format!("00-{UNSAMPLED_TRACE}-")) && sent[1].ends_with("-00"),
        "{}",
        sent[1]
    );
    assert!(
        sent[2].starts_with(&format!("00-{CALLER_TRACE}-")) && sent[2].ends_with("-01"),
        "{}",
        sent[2]
    );
}

/// A retry on the same deployment is its own client span: the failed
/// attempt carries the upstream's status and `error.type`, the second the
/// 200 that served.
#[tokio::test]
async fn each_retry_is_a_client_span_and_the_failed_one_says_why() {
    let upstream = Scripted::start().await;
    let (endpoint, received, _task) = receiver().await;
    let config = common::upstream::catalogue(&upstream.base_url, &[("m", "flaky")])
        .replace("max_retries = 0", "max_retries = 1\nretry_backoff_ms = 1");
    let server = TestServer::start_with(Some(&config), &[("TOLLGATE_OTLP_ENDPOINT", &endpoint)]);
    upstream.script.push("flaky", &[Step::Status(500)]);
    let (_, key) = server.create_key(&[]);
    let response = common::chat_post(
        &server,
        &key,
        &json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(upstream.script.count("flaky"), 2);
    let spans = spans_until(&received, |spans| {
        spans.iter().any(|s| s.kind == SpanKind::Server as i32)
    })
    .await;
    let server_span = spans
        .iter()
        .find(|s| s.kind == SpanKind::Server as i32)
        .expect("a server span");
    assert_eq!(int(server_span, "http.response.status_code"), 200);
    let mut attempts: Vec<&Span> = spans
        .iter()
        .filter(|s| s.kind == SpanKind::Client as i32 && s.parent_span_id == server_span.span_id)
        .collect();
    attempts.sort_by_key(|s| s.start_time_unix_nano);
    let names: Vec<&str> = attempts.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["chat flaky", "chat flaky"]);
    assert_eq!(int(attempts[0], "http.response.status_code"), 500);
    assert_eq!(string(attempts[0], "error.type"), "500");
    assert_eq!(int(attempts[1], "http.response.status_code"), 200);
    assert!(attribute(&attempts[1].attributes, "error.type").is_none());
    // Each attempt sent its own span upstream as the parent.
    let sent: Vec<String> = upstream
        .script
        .calls()
        .iter()
        .map(|c| c.headers["traceparent"].to_str().unwrap().to_owned())
        .collect();
    for (attempt, traceparent) in attempts.iter().zip(&sent) {
        assert!(
            traceparent.contains(&hex(&attempt.span_id)),
            "{traceparent}"
        );
    }
}
