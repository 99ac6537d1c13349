//! The Anthropic provider: requests and answers translated both ways,
//! checked against a scripted Messages API upstream that records what it
//! received.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::anthropic::Anthropic;
use common::upstream::Upstream;
use common::{
    TestServer, chat_events as stream, chat_json as complete, chat_post as post, error_code,
};
use serde_json::{Value, json};

const SECRET: &str = "sk-ant-test-secret";

fn config(anthropic: &str, openai: &str) -> String {
    let mut out = format!(
        "[[providers]]\nid = \"claude\"\nkind = \"anthropic\"\nbase_url = \"{anthropic}\"\napi_key_env = \"TEST_ANTHROPIC_KEY\"\n\
         [[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{openai}\"\n"
    );
    let model = |id: &str, provider: &str, up: &str, extra: &str| {
        format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{up}\"\ninput = [\"TEXT\", \"IMAGE\"]\noutput = [\"TEXT\"]\n\
             context_window = 200000\n{extra}pricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
        )
    };
    for name in [
        "claude-tool",
        "claude-len",
        "claude-stopseq",
        "claude-overloaded",
        "claude-bad",
        "claude-error-mid",
    ] {
        out.push_str(&model(name, "claude", name, ""));
    }
    out.push_str(&model(
        "claude-ok",
        "claude",
        "claude-ok",
        "max_output_tokens = 1024\n",
    ));
    out.push_str(&model("s503", "up", "status-503", ""));
    out
}

async fn setup() -> (Anthropic, TestServer, String) {
    let anthropic = Anthropic::start().await;
    let openai = Upstream::start().await;
    let server = TestServer::start_with(
        Some(&config(&anthropic.base_url, &openai.base_url)),
        &[("TEST_ANTHROPIC_KEY", SECRET)],
    );
    let (_, key) = server.create_key(&["--rate-limit", "1000"]);
    // Keep the OpenAI upstream alive for the server's lifetime.
    std::mem::forget(openai);
    (anthropic, server, key)
}

#[tokio::test]
async fn requests_are_translated_to_the_messages_api() {
    let (anthropic, server, key) = setup().await;
    let tools = json!([{ "type": "function", "function": {
        "name": "get_weather", "description": "Weather of a city",
        "parameters": { "type": "object", "properties": { "city": { "type": "string" } } } } }]);
    complete(&server, &key, json!({
        "model": "claude-ok",
        "messages": [
            { "role": "system", "content": "Be brief." },
            { "role": "system", "content": [{ "type": "text", "text": "Answer in French." }] },
            { "role": "user", "content": "Hi" },
            { "role": "assistant", "content": "Hello!" },
            { "role": "user", "content": [
                { "type": "text", "text": "What is this?" },
                { "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw0KGgo=" } },
                { "type": "image_url", "image_url": { "url": "https://images.example.invalid/cat.png" } }
            ] },
            { "role": "user", "content": "And quickly." }
        ],
        "tools": tools,
        "tool_choice": "required",
        "stop": ["END", "STOP"],
        "temperature": 0.2,
        "top_p": 0.9,
        "user": "end-user-7"
    })).await;
    let sent = &anthropic.recorded.bodies()[0];
    assert_eq!(
        sent,
        &json!({
            "model": "claude-ok",
            "system": "Be brief.\n\nAnswer in French.",
            "messages": [
                { "role": "user", "content": [{ "type": "text", "text": "Hi" }] },
                { "role": "assistant", "content": [{ "type": "text", "text": "Hello!" }] },
                { "role": "user", "content": [
                    { "type": "text", "text": "What is this?" },
                    { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo=" } },
                    { "type": "image", "source": { "type": "url", "url": "https://images.example.invalid/cat.png" } },
                    { "type": "text", "text": "And quickly." }
                ] }
            ],
            "max_tokens": 1024,
            "temperature": 0.2,
            "top_p": 0.9,
            "stop_sequences": ["END", "STOP"],
            "tools": [{ "name": "get_weather", "description": "Weather of a city",
                "input_schema": { "type": "object", "properties": { "city": { "type": "string" } } } }],
            "tool_choice": { "type": "any" },
            "metadata": { "user_id": "end-user-7" }
        })
    );
    let headers = &anthropic.recorded.headers()[0];
    assert_eq!(headers["x-api-key"], SECRET);
    assert_eq!(headers["anthropic-version"], "2023-06-01");
    assert!(
        headers.get("authorization").is_none(),
        "our key never goes upstream"
    );

    // tool_choice variants; the caller's max_tokens wins; a string stop.
    for (choice, expected) in [
        (json!("auto"), json!({ "type": "auto" })),
        (json!("none"), json!({ "type": "none" })),
        (
            json!({ "type": "function", "function": { "name": "get_weather" } }),
            json!({ "type": "tool", "name": "get_weather" }),
        ),
    ] {
        complete(
            &server,
            &key,
            json!({
                "model": "claude-tool", "max_tokens": 50, "stop": "END",
                "messages": [{ "role": "user", "content": "Weather?" }],
                "tools": tools, "tool_choice": choice
            }),
        )
        .await;
        let sent = anthropic.recorded.bodies().pop().unwrap();
        assert_eq!(sent["tool_choice"], expected);
        assert_eq!(sent["max_tokens"], 50);
        assert_eq!(sent["stop_sequences"], json!(["END"]));
    }
    // No max_tokens anywhere: the default.
    complete(
        &server,
        &key,
        json!({ "model": "claude-len", "messages": [{ "role": "user", "content": "x" }] }),
    )
    .await;
    assert_eq!(
        anthropic.recorded.bodies().pop().unwrap()["max_tokens"],
        4096
    );
}

#[tokio::test]
async fn a_tool_result_round_trip_becomes_tool_use_and_tool_result_blocks() {
    let (anthropic, server, key) = setup().await;
    complete(&server, &key, json!({
        "model": "claude-ok",
        "messages": [
            { "role": "user", "content": "Weather in Paris and Rome?" },
            { "role": "assistant", "content": null, "tool_calls": [
                { "id": "toolu_01", "type": "function", "function": { "name": "get_weather", "arguments": "{\"city\":\"Paris\"}" } },
                { "id": "toolu_02", "type": "function", "function": { "name": "get_weather", "arguments": "{\"city\":\"Rome\"}" } }
            ] },
            { "role": "tool", "tool_call_id": "toolu_01", "content": "18 C" },
            { "role": "tool", "tool_call_id": "toolu_02", "content": [{ "type": "text", "text": "24 C" }] },
            { "role": "user", "content": "Which is warmer?" }
        ]
    })).await;
    let sent = &anthropic.recorded.bodies()[0];
    assert_eq!(
        sent["messages"],
        json!([
            { "role": "user", "content": [{ "type": "text", "text": "Weather in Paris and Rome?" }] },
            { "role": "assistant", "content": [
                { "type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": { "city": "Paris" } },
                { "type": "tool_use", "id": "toolu_02", "name": "get_weather", "input": { "city": "Rome" } }
            ] },
            { "role": "user", "content": [
                { "type": "tool_result", "tool_use_id": "toolu_01", "content": "18 C" },
                { "type": "tool_result", "tool_use_id": "toolu_02", "content": "24 C" },
                { "type": "text", "text": "Which is warmer?" }
            ] }
        ])
    );
}

#[tokio::test]
async fn answers_come_back_in_the_openai_shape_with_every_stop_reason() {
    let (_anthropic, server, key) = setup().await;
    let hi =
        |model: &str| json!({ "model": model, "messages": [{ "role": "user", "content": "hi" }] });
    let ok = complete(&server, &key, hi("claude-ok")).await;
    assert_eq!(ok["object"], "chat.completion");
    assert_eq!(ok["model"], "claude-ok");
    assert_eq!(
        ok["choices"][0]["message"],
        json!({ "role": "assistant", "content": "hello from claude" })
    );
    assert_eq!(ok["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        ok["usage"],
        json!({ "prompt_tokens": 15, "completion_tokens": 7, "total_tokens": 22 })
    );
    // 15 x 1 + 7 x 2 = 29 micro-credits.
    assert_eq!(ok["billing"]["cost"].as_f64(), Some(0.000029));
    assert_eq!(ok["billing"]["isFallback"], false);

    let tool = complete(&server, &key, hi("claude-tool")).await;
    let message = &tool["choices"][0]["message"];
    assert_eq!(message["content"], "Let me check.");
    assert_eq!(
        message["tool_calls"],
        json!([{ "id": "toolu_01", "type": "function",
        "function": { "name": "get_weather", "arguments": "{\"city\":\"Paris\"}" } }])
    );
    assert_eq!(tool["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        complete(&server, &key, hi("claude-len")).await["choices"][0]["finish_reason"],
        "length"
    );
    assert_eq!(
        complete(&server, &key, hi("claude-stopseq")).await["choices"][0]["finish_reason"],
        "stop"
    );
}

#[tokio::test]
async fn streams_are_translated_chunk_by_chunk_with_tool_arguments_and_usage() {
    let (_anthropic, server, key) = setup().await;
    let hi =
        |model: &str| json!({ "model": model, "messages": [{ "role": "user", "content": "hi" }] });
    let events = stream(&server, &key, hi("claude-ok")).await;
    assert_eq!(events.last().unwrap(), "[DONE]");
    let chunks = &events[..events.len() - 1];
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk" && c["model"] == "claude-ok")
    );
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "hello from claude");
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let finish: Vec<&Value> = chunks
        .iter()
        .map(|c| &c["choices"][0]["finish_reason"])
        .filter(|f| !f.is_null())
        .collect();
    assert_eq!(finish, [&json!("stop")]);
    let last = chunks.last().unwrap();
    assert_eq!(last["usage"]["prompt_tokens"], 15);
    assert_eq!(last["usage"]["completion_tokens"], 7);
    assert_eq!(last["billing"]["cost"].as_f64(), Some(0.000029));

    let events = stream(&server, &key, hi("claude-tool")).await;
    let calls: Vec<&Value> = events
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0))
        .collect();
    assert_eq!(calls[0]["id"], "toolu_01");
    assert_eq!(calls[0]["function"]["name"], "get_weather");
    let arguments: String = calls
        .iter()
        .filter_map(|c| c["function"]["arguments"].as_str())
        .collect();
    assert_eq!(arguments, "{\"city\": \"Paris\"}");
    assert!(
        calls.len() >= 3,
        "the arguments arrive in pieces as they come"
    );
    assert!(
        events
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls")
    );
    for (model, reason) in [("claude-len", "length"), ("claude-stopseq", "stop")] {
        let events = stream(&server, &key, hi(model)).await;
        assert!(
            events
                .iter()
                .any(|c| c["choices"][0]["finish_reason"] == reason),
            "{model}"
        );
    }
}

#[tokio::test]
async fn an_error_event_mid_stream_ends_our_stream_with_an_error_event() {
    let (_anthropic, server, key) = setup().await;
    let events = stream(
        &server,
        &key,
        json!({ "model": "claude-error-mid", "messages": [{ "role": "user", "content": "hi" }] }),
    )
    .await;
    let last = events.last().unwrap();
    assert_eq!(last["error"]["code"], "upstream_stream_error", "{events:?}");
    assert!(
        last["error"]["message"]
            .as_str()
            .unwrap()
            .contains("overloaded_error")
    );
    assert!(!events.contains(&json!("[DONE]")));
    assert!(
        events
            .iter()
            .any(|c| c["choices"][0]["delta"]["content"].is_string()),
        "text before the error was relayed"
    );
}

#[tokio::test]
async fn fallbacks_cross_provider_kinds_and_anthropic_errors_are_classified() {
    let (_anthropic, server, key) = setup().await;
    let chain = |models: &[&str]| json!({ "models": models, "messages": [{ "role": "user", "content": "hi" }] });
    let served = complete(&server, &key, chain(&["s503", "claude-ok"])).await;
    assert_eq!(served["model"], "claude-ok");
    assert_eq!(served["billing"]["isFallback"], true);
    assert_eq!(served["explainability"]["attempts"][0]["status"], "503");
    // 529 (overloaded) is worth a fallback.
    let served = complete(&server, &key, chain(&["claude-overloaded", "claude-ok"])).await;
    assert_eq!(served["billing"]["isFallback"], true);
    assert_eq!(served["explainability"]["attempts"][0]["status"], "529");
    // 400 is final, relayed in our shape with Anthropic's message.
    let response = post(&server, &key, &chain(&["claude-bad", "claude-ok"])).await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_request");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("messages: bad"),
        "{body}"
    );
    let exhausted = post(&server, &key, &chain(&["claude-overloaded"])).await;
    assert_eq!(error_code(exhausted, 502).await, "all_providers_failed");
}

#[tokio::test]
async fn the_openai_sdk_streams_a_tool_call_served_by_anthropic() {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        python.exists(),
        "run `bash .ci/test`, which installs the SDKs into .venv"
    );
    let (_anthropic, server, key) = setup().await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/openai_tool_stream.py");
    let base = server.base_url.clone();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .arg(base)
            .arg(key)
            .arg("claude-tool")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
