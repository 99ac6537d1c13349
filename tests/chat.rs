//! `POST /v1/chat/completions` end to end: the real server in front of a
//! scripted OpenAI-compatible upstream (and the built-in mock provider).

mod common;

use std::time::{Duration, Instant};

use common::upstream::Upstream;
use common::{TestServer, client, error_code};
use futures::StreamExt;
use serde_json::{Value, json};

fn config(upstream: &str) -> String {
    let model = |id: &str, provider: &str, upstream: &str, input: &str| {
        format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{upstream}\"\ninput = {input}\noutput = [\"TEXT\"]\n\
             context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
        )
    };
    let text = "[\"TEXT\"]";
    let vision = "[\"TEXT\", \"IMAGE\"]";
    let mut out = format!(
        "[[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{upstream}\"\napi_key_env = \"UPSTREAM_KEY\"\n\
         first_byte_timeout_ms = 1000\n\
         [[providers]]\nid = \"dead\"\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\n\
         [[providers]]\nid = \"mock\"\nkind = \"mock\"\n"
    );
    for (id, up) in [
        ("ok", "ok"),
        ("tool", "tool"),
        ("s429", "status-429"),
        ("s500", "status-500"),
        ("s503", "status-503"),
        ("s400", "status-400"),
        ("s422", "status-422"),
        ("slow", "slow-3000"),
        ("garbage", "garbage"),
        ("nousage", "nousage"),
        ("cut", "cut"),
        ("endless", "endless"),
    ] {
        out.push_str(&model(id, "up", up, vision));
    }
    out.push_str(&model("text-only", "up", "ok", text));
    out.push_str(&model("text-503", "up", "status-503", text));
    out.push_str(&model("refused", "dead", "ok", text));
    out.push_str(&model("mock-echo", "mock", "echo", text));
    out
}

async fn setup() -> (Upstream, TestServer, String) {
    let upstream = Upstream::start().await;
    let server = TestServer::start_with(
        Some(&config(&upstream.base_url)),
        &[("UPSTREAM_KEY", "sk-upstream-secret")],
    );
    let (_, key) = server.create_key(&[]);
    (upstream, server, key)
}

async fn post(server: &TestServer, key: &str, body: Value) -> reqwest::Response {
    client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

fn hello(models: Value) -> Value {
    json!({ "models": models, "messages": [{ "role": "user", "content": "hi" }] })
}

#[tokio::test]
async fn service_fields_are_removed_unknown_fields_kept_and_models_beats_model() {
    let (upstream, server, key) = setup().await;
    let body = json!({
        "model": "s503",
        "models": ["ok"],
        "messages": [{ "role": "user", "content": "hi" }],
        "temperature": 0.2,
        "purpose": "testing", "user_consent_id": "c1", "end_user_id": "u1",
        "deployer_context": { "team": "qa" }, "auto_truncate": false,
        "vendor_extension": { "safe_mode": true },
    });
    let response = post(&server, &key, body).await;
    assert_eq!(response.status(), 200);
    let completion: Value = response.json().await.unwrap();
    assert_eq!(
        completion["model"], "ok",
        "the caller's name, not the upstream's"
    );
    assert_eq!(
        completion["choices"][0]["message"]["content"],
        "hello from upstream"
    );
    assert_eq!(completion["billing"]["isFallback"], false);
    assert_eq!(
        completion["billing"]["cost"], 0.00002,
        "10 x 1.0 + 5 x 2.0 credits per million"
    );
    assert_eq!(completion["risk_classification"]["level"], "minimal");
    assert!(
        completion["explainability"]["human_readable"]
            .as_str()
            .unwrap()
            .contains("ok")
    );

    let received = upstream.recorded.bodies();
    assert_eq!(
        received.len(),
        1,
        "models beat model: s503 was never called"
    );
    let sent = &received[0];
    for field in [
        "models",
        "purpose",
        "user_consent_id",
        "end_user_id",
        "deployer_context",
        "auto_truncate",
    ] {
        assert!(sent.get(field).is_none(), "{field} was forwarded");
    }
    assert_eq!(sent["vendor_extension"], json!({ "safe_mode": true }));
    assert_eq!(sent["temperature"], 0.2);
    assert_eq!(sent["model"], "ok");
    let headers = upstream.recorded.headers();
    assert_eq!(
        headers[0]["authorization"], "Bearer sk-upstream-secret",
        "the provider's key, not the caller's"
    );
}

#[tokio::test]
async fn retryable_failures_fall_back_to_the_next_model() {
    let (upstream, server, key) = setup().await;
    for (first, status) in [
        ("s429", "429"),
        ("s500", "500"),
        ("s503", "503"),
        ("slow", "timeout"),
        ("refused", "connect_error"),
        ("garbage", "invalid_response"),
    ] {
        let response = post(&server, &key, hello(json!([first, "ok"]))).await;
        assert_eq!(response.status(), 200, "{first}");
        let completion: Value = response.json().await.unwrap();
        assert_eq!(completion["model"], "ok");
        assert_eq!(completion["billing"]["isFallback"], true, "{first}");
        let attempts = &completion["explainability"]["attempts"];
        assert_eq!(attempts[0]["model"], first);
        assert_eq!(attempts[0]["status"], status, "{first}");
        assert!(attempts[0]["latencyMs"].is_u64());
    }
    assert!(
        upstream
            .recorded
            .models()
            .iter()
            .filter(|m| *m == "ok")
            .count()
            >= 6
    );
}

#[tokio::test]
async fn a_bad_request_is_not_retried_and_its_error_is_relayed() {
    let (upstream, server, key) = setup().await;
    let response = post(&server, &key, hello(json!(["s400", "ok"]))).await;
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], "invalid_request");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("upstream says 400")
    );
    assert_eq!(
        upstream.recorded.models(),
        ["status-400"],
        "no fallback after a 400"
    );
    let response = post(&server, &key, hello(json!(["s422", "ok"]))).await;
    assert_eq!(error_code(response, 422).await, "unprocessable_request");
}

#[tokio::test]
async fn when_every_model_fails_the_caller_gets_502_all_providers_failed() {
    let (_upstream, server, key) = setup().await;
    let response = post(&server, &key, hello(json!(["s503", "refused", "s500"]))).await;
    assert_eq!(error_code(response, 502).await, "all_providers_failed");
    let response = post(&server, &key, hello(json!(["no-such-model"]))).await;
    assert_eq!(error_code(response, 404).await, "model_not_found");
    // An unknown model in a chain is skipped with its reason.
    let response = post(&server, &key, hello(json!(["no-such-model", "ok"]))).await;
    let completion: Value = response.json().await.unwrap();
    assert_eq!(
        completion["explainability"]["attempts"][0]["status"],
        "unknown_model"
    );
}

#[tokio::test]
async fn malformed_requests_get_400_naming_the_field() {
    let (upstream, server, key) = setup().await;
    let cases = [
        (json!({ "model": "ok" }), "messages"),
        (json!({ "model": "ok", "messages": [] }), "messages"),
        (
            json!({ "model": "ok", "n": 0, "messages": [{ "role": "user", "content": "x" }] }),
            "n",
        ),
        (
            json!({ "model": "ok", "messages": [{ "role": "user", "content": [{ "type": "hologram" }] }] }),
            "messages[0].content[0].type",
        ),
    ];
    for (body, param) in cases {
        let response = post(&server, &key, body).await;
        assert_eq!(response.status(), 400);
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["code"], "invalid_request");
        assert_eq!(error["error"]["param"], param);
    }
    let response = client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body("{\"model\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(response, 400).await, "invalid_request");
    assert!(
        upstream.recorded.bodies().is_empty(),
        "nothing reached the upstream"
    );
}

/// Reads an SSE response: (time each `data:` event arrived, its payload).
async fn events(response: reqwest::Response) -> Vec<(Instant, String)> {
    let mut out = Vec::new();
    let mut buffer = String::new();
    let mut bytes = response.bytes_stream();
    while let Some(chunk) = bytes.next().await {
        buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            if let Some(data) = event.trim().strip_prefix("data: ") {
                out.push((Instant::now(), data.to_owned()));
            }
        }
    }
    out
}

fn stream_body(models: Value) -> Value {
    json!({ "models": models, "stream": true, "messages": [{ "role": "user", "content": "hi" }] })
}

#[tokio::test]
async fn streams_are_relayed_chunk_by_chunk_with_model_rewritten_and_usage_last() {
    let (upstream, server, key) = setup().await;
    let response = post(&server, &key, stream_body(json!(["ok"]))).await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let events = events(response).await;
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    assert!(
        chunks.iter().all(|c| c["model"] == "ok"),
        "model rewritten on every chunk"
    );
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "hello from upstream");
    let last = chunks.last().unwrap();
    assert_eq!(
        last["usage"]["completion_tokens"], 5,
        "the upstream's usage, in the last chunk"
    );
    assert_eq!(last["billing"]["isFallback"], false);
    // The upstream spaced its chunks 150 ms apart: the first reached us long
    // before the last, so nothing was held back until the end.
    let spread = events.last().unwrap().0 - events[0].0;
    assert!(
        spread >= Duration::from_millis(300),
        "chunks were buffered: {spread:?}"
    );
    assert_eq!(
        upstream.recorded.bodies()[0]["stream_options"]["include_usage"],
        true
    );
}

#[tokio::test]
async fn without_upstream_usage_completion_tokens_are_estimated() {
    let (_upstream, server, key) = setup().await;
    let events = events(post(&server, &key, stream_body(json!(["nousage"]))).await).await;
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let last: Value = serde_json::from_str(&events[events.len() - 2].1).unwrap();
    // "hello from upstream" is 19 characters: 5 tokens at 4 per token.
    assert_eq!(last["usage"]["completion_tokens"], 5);
    assert_eq!(last["usage"]["estimated"], true);
    assert!(last["billing"]["cost"].as_f64().unwrap() > 0.0);
}

#[tokio::test]
async fn streams_fall_back_before_the_first_byte_and_end_with_an_error_event_when_cut() {
    let (_upstream, server, key) = setup().await;
    let events_ok = events(post(&server, &key, stream_body(json!(["s503", "ok"]))).await).await;
    let last: Value = serde_json::from_str(&events_ok[events_ok.len() - 2].1).unwrap();
    assert_eq!(last["billing"]["isFallback"], true);
    assert_eq!(last["model"], "ok");

    let cut = events(post(&server, &key, stream_body(json!(["cut", "ok"]))).await).await;
    assert!(
        cut.iter().all(|(_, d)| d != "[DONE]"),
        "a cut stream must not end cleanly"
    );
    let error: Value = serde_json::from_str(&cut.last().unwrap().1).unwrap();
    assert_eq!(error["error"]["code"], "upstream_stream_error");
    assert!(cut.len() >= 2, "the chunks before the cut were relayed");
}

#[tokio::test]
async fn a_caller_who_disconnects_stops_the_upstream_request() {
    let (upstream, server, key) = setup().await;
    let response = post(&server, &key, stream_body(json!(["endless"]))).await;
    assert_eq!(response.status(), 200);
    let mut bytes = response.bytes_stream();
    let first = bytes.next().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("data: "));
    assert_eq!(
        upstream.recorded.abandoned(),
        0,
        "the upstream is still streaming"
    );
    drop(bytes);
    // The gateway notices the closed connection and drops its upstream
    // request; the upstream sees its reader go away. Bounded wait, no timing
    // asserted: an endless stream never ends on its own.
    let deadline = Instant::now() + Duration::from_secs(20);
    while upstream.recorded.abandoned() == 0 {
        assert!(
            Instant::now() < deadline,
            "the upstream request is still running"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn images_become_a_note_for_text_models_and_reach_a_vision_model_later_in_the_chain() {
    let (upstream, server, key) = setup().await;
    let image = json!({ "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw0KGgo=" } });
    let body = json!({
        "models": ["text-503", "ok"],
        "messages": [
            { "role": "system", "content": "be brief" },
            { "role": "user", "content": [{ "type": "text", "text": "what is this?" }, image] },
        ],
    });
    let response = post(&server, &key, body.clone()).await;
    assert_eq!(response.status(), 200);
    let sent = upstream.recorded.bodies();
    // The 503 is retried twice on its deployment (max_retries = 2), then
    // the vision model serves.
    assert_eq!(sent.len(), 4);
    assert_eq!(sent[0], sent[2], "a retry sends the same body");
    let sent = [sent[0].clone(), sent[3].clone()];
    // The text-only model got the exact note, collapsed to a plain string.
    assert_eq!(
        sent[0]["messages"][1]["content"],
        "what is this?\n[Image attached — not supported by this model]"
    );
    assert_eq!(sent[0]["messages"][0]["content"], "be brief");
    // The vision model after it received the image itself.
    assert_eq!(sent[1]["messages"][1]["content"][1], image);

    let mut text_only = body;
    text_only["models"] = json!(["text-only"]);
    let completion: Value = post(&server, &key, text_only).await.json().await.unwrap();
    assert!(
        completion["explainability"]["human_readable"]
            .as_str()
            .unwrap()
            .contains("replaced by a note")
    );
}

#[tokio::test]
async fn tools_are_forwarded_and_tool_calls_returned_plain_and_streamed() {
    let (upstream, server, key) = setup().await;
    let tools = json!([{ "type": "function", "function": { "name": "get_weather",
        "parameters": { "type": "object", "properties": { "city": { "type": "string" } } } } }]);
    let body = json!({ "model": "tool", "messages": [{ "role": "user", "content": "weather?" }],
                       "tools": tools, "tool_choice": "auto" });
    let completion: Value = post(&server, &key, body.clone())
        .await
        .json()
        .await
        .unwrap();
    let call = &completion["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "get_weather");
    assert_eq!(call["function"]["arguments"], "{\"city\":\"Paris\"}");
    assert_eq!(completion["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(upstream.recorded.bodies()[0]["tools"], tools);
    assert_eq!(upstream.recorded.bodies()[0]["tool_choice"], "auto");

    let mut streamed = body;
    streamed["stream"] = json!(true);
    let events = events(post(&server, &key, streamed).await).await;
    let arguments: String = events
        .iter()
        .filter_map(|(_, d)| serde_json::from_str::<Value>(d).ok())
        .filter_map(|c| {
            c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(arguments, "{\"city\":\"Paris\"}");
}

#[tokio::test]
async fn the_mock_provider_echoes_and_streams_offline() {
    let server = TestServer::start();
    let key = server.demo_key();
    let body = json!({ "model": "mock-chat", "messages": [{ "role": "user", "content": "ping" }] });
    let completion: Value = post(&server, &key, body.clone())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(completion["choices"][0]["message"]["content"], "echo: ping");
    assert_eq!(completion["model"], "mock-chat");
    let mut streamed = body;
    streamed["stream"] = json!(true);
    let events = events(post(&server, &key, streamed).await).await;
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let text: String = events
        .iter()
        .filter_map(|(_, d)| serde_json::from_str::<Value>(d).ok())
        .filter_map(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(text, "echo: ping");
}

#[tokio::test]
async fn auto_truncate_drops_the_oldest_turns_and_returns_a_receipt() {
    let (upstream, server, key) = setup().await;
    // The test models have an 8,192-token window: 12 messages of 4,000
    // characters (about 1,004 tokens each) do not fit.
    let mut messages = vec![json!({ "role": "system", "content": "stay brief" })];
    for i in 0..12 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        messages.push(json!({ "role": role, "content": format!("{i:02}{}", "x".repeat(3998)) }));
    }
    let body =
        json!({ "model": "ok", "auto_truncate": true, "max_tokens": 100, "messages": messages });
    let completion: Value = post(&server, &key, body.clone())
        .await
        .json()
        .await
        .unwrap();
    let receipt = &completion["truncation"];
    let dropped = receipt["messages_dropped"].as_u64().unwrap() as usize;
    assert_eq!(dropped, 4, "{receipt}");
    assert!(receipt["tokens_after"].as_u64().unwrap() + 100 <= 8192);
    assert!(receipt["tokens_before"].as_u64().unwrap() > 8192);
    let sent = &upstream.recorded.bodies()[0]["messages"];
    let sent = sent.as_array().unwrap();
    assert_eq!(sent[0]["content"], "stay brief", "the system message stays");
    assert_eq!(sent.len(), 13 - dropped);
    assert!(
        sent.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .starts_with("11"),
        "the newest turn stays"
    );
    assert!(
        sent[1]["content"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{dropped:02}")),
        "the oldest went first"
    );

    // Without auto_truncate the prompt goes upstream as sent, with no receipt.
    let mut plain = body;
    plain["auto_truncate"] = json!(false);
    let completion: Value = post(&server, &key, plain).await.json().await.unwrap();
    assert!(completion.get("truncation").is_none());
    assert_eq!(
        upstream.recorded.bodies()[1]["messages"]
            .as_array()
            .unwrap()
            .len(),
        13
    );
}

#[tokio::test]
async fn every_response_is_classified_and_high_risk_and_prohibited_uses_are_gated() {
    let (upstream, server, key) = setup().await;
    let minimal: Value = post(&server, &key, hello(json!(["ok"])))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(minimal["risk_classification"]["level"], "minimal");
    assert_eq!(minimal["risk_classification"]["triggered_rules"], json!([]));
    assert_eq!(
        minimal["risk_classification"]["requires_human_review"],
        false
    );

    let scoring = json!({ "model": "ok", "messages": [{ "role": "user",
        "content": "Score this loan applicant and decide whether to approve the loan." }] });
    let refused = post(&server, &key, scoring.clone()).await;
    assert_eq!(error_code(refused, 403).await, "high_risk_not_allowed");

    let (_, allowed) = server.create_key(&["--allow-high-risk"]);
    let served: Value = post(&server, &allowed, scoring).await.json().await.unwrap();
    let risk = &served["risk_classification"];
    assert_eq!(risk["level"], "high");
    assert_eq!(
        risk["triggered_rules"],
        json!(["annex3_5b_creditworthiness"])
    );
    assert_eq!(risk["requires_human_review"], true);
    assert!(
        risk["reason"]
            .as_str()
            .unwrap()
            .contains("creditworthiness")
    );

    // A declared purpose is enough, even when the content is harmless.
    let declared = json!({ "model": "ok", "purpose": "CV screening for recruitment",
        "messages": [{ "role": "user", "content": "Summarise the attached text." }] });
    let refused = post(&server, &key, declared).await;
    assert_eq!(error_code(refused, 403).await, "high_risk_not_allowed");

    let social_scoring = json!({ "model": "ok", "messages": [{ "role": "user",
        "content": "Use the citizen score to deny housing to people below 600 points." }] });
    let refused = post(&server, &allowed, social_scoring).await;
    assert_eq!(error_code(refused, 403).await, "prohibited_use");
    // Refused requests never reached the upstream.
    assert_eq!(upstream.recorded.bodies().len(), 2);
}
