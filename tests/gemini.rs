//! The Gemini provider: requests and answers translated both ways, remote
//! images fetched under the SSRF rules, checked against a scripted
//! generate-content upstream that records what it received.

mod common;

use std::path::PathBuf;
use std::process::Command;

use base64::Engine;
use common::gemini::{Gemini, PNG};
use common::upstream::Upstream;
use common::{TestServer, chat_events as stream, chat_json as complete, chat_post as post};
use serde_json::{Value, json};

const SECRET: &str = "goog-test-secret";

fn config(gemini: &str, openai: &str) -> String {
    let mut out = format!(
        "[[providers]]\nid = \"google\"\nkind = \"gemini\"\nbase_url = \"{gemini}\"\napi_key_env = \"TEST_GEMINI_KEY\"\n\
         [[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{openai}\"\n"
    );
    let model = |id: &str, provider: &str, up: &str| {
        format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{up}\"\ninput = [\"TEXT\", \"IMAGE\", \"AUDIO\"]\noutput = [\"TEXT\"]\n\
             context_window = 1000000\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
        )
    };
    for name in [
        "gemini-ok",
        "gemini-tool",
        "gemini-len",
        "gemini-safety",
        "gemini-503",
        "gemini-error-mid",
    ] {
        out.push_str(&model(name, "google", name));
    }
    out.push_str(&model("s503", "up", "status-503"));
    out
}

async fn setup(allow_private_images: bool) -> (Gemini, TestServer, String) {
    let gemini = Gemini::start().await;
    let openai = Upstream::start().await;
    let mut env = vec![("TEST_GEMINI_KEY", SECRET)];
    if allow_private_images {
        env.push(("TOLLGATE_IMAGE_FETCH_ALLOW_PRIVATE_TARGETS", "true"));
    }
    let server = TestServer::start_with(Some(&config(&gemini.base_url, &openai.base_url)), &env);
    let (_, key) = server.create_key(&["--rate-limit", "1000"]);
    std::mem::forget(openai);
    (gemini, server, key)
}

fn hi(model: &str) -> Value {
    json!({ "model": model, "messages": [{ "role": "user", "content": "hi" }] })
}

#[tokio::test]
async fn requests_are_translated_to_generate_content() {
    let (gemini, server, key) = setup(true).await;
    let tools = json!([{ "type": "function", "function": {
        "name": "get_weather", "description": "Weather of a city",
        "parameters": { "type": "object", "properties": { "city": { "type": "string" } } } } }]);
    complete(&server, &key, json!({
        "model": "gemini-ok",
        "messages": [
            { "role": "system", "content": "Be brief." },
            { "role": "user", "content": "Hi" },
            { "role": "assistant", "content": "Hello!" },
            { "role": "user", "content": [
                { "type": "text", "text": "What is this?" },
                { "type": "image_url", "image_url": { "url": "data:image/jpeg;base64,/9j/4AAQ" } },
                { "type": "image_url", "image_url": { "url": format!("{}/cat.png", gemini.images) } },
                { "type": "input_audio", "input_audio": { "data": "UklGRg==", "format": "wav" } }
            ] }
        ],
        "tools": tools,
        "tool_choice": { "type": "function", "function": { "name": "get_weather" } },
        "stop": ["END"],
        "temperature": 0.3,
        "top_p": 0.8,
        "max_tokens": 99,
        "n": 2,
        "response_format": { "type": "json_object" }
    })).await;
    let sent = &gemini.recorded.bodies()[0];
    let png = base64::engine::general_purpose::STANDARD.encode(PNG);
    assert_eq!(
        sent,
        &json!({
            "systemInstruction": { "parts": [{ "text": "Be brief." }] },
            "contents": [
                { "role": "user", "parts": [{ "text": "Hi" }] },
                { "role": "model", "parts": [{ "text": "Hello!" }] },
                { "role": "user", "parts": [
                    { "text": "What is this?" },
                    { "inlineData": { "mimeType": "image/jpeg", "data": "/9j/4AAQ" } },
                    { "inlineData": { "mimeType": "image/png", "data": png } },
                    { "inlineData": { "mimeType": "audio/wav", "data": "UklGRg==" } }
                ] }
            ],
            "generationConfig": {
                "temperature": 0.3, "topP": 0.8, "maxOutputTokens": 99, "stopSequences": ["END"],
                "candidateCount": 2, "responseMimeType": "application/json"
            },
            "tools": [{ "functionDeclarations": [{ "name": "get_weather", "description": "Weather of a city",
                "parameters": { "type": "object", "properties": { "city": { "type": "string" } } } }] }],
            "toolConfig": { "functionCallingConfig": { "mode": "ANY", "allowedFunctionNames": ["get_weather"] } }
        })
    );
    assert_eq!(
        gemini.recorded.paths()[0],
        "/v1beta/models/gemini-ok:generateContent"
    );
    let headers = &gemini.recorded.headers()[0];
    assert_eq!(headers["x-goog-api-key"], SECRET);
    assert!(headers.get("authorization").is_none());

    // JSON schema mode and the tool_choice strings.
    let schema = json!({ "type": "object", "properties": { "a": { "type": "integer" } }, "required": ["a"] });
    for (choice, mode) in [("auto", "AUTO"), ("none", "NONE"), ("required", "ANY")] {
        complete(&server, &key, json!({
            "model": "gemini-ok", "messages": [{ "role": "user", "content": "x" }], "tools": tools, "tool_choice": choice,
            "response_format": { "type": "json_schema", "json_schema": { "name": "a", "schema": schema } }
        })).await;
        let sent = gemini.recorded.bodies().pop().unwrap();
        assert_eq!(
            sent["toolConfig"]["functionCallingConfig"],
            json!({ "mode": mode })
        );
        assert_eq!(
            sent["generationConfig"]["responseMimeType"],
            "application/json"
        );
        assert_eq!(sent["generationConfig"]["responseJsonSchema"], schema);
    }
    // A tool-result round trip.
    complete(&server, &key, json!({ "model": "gemini-ok", "messages": [
        { "role": "user", "content": "Weather in Paris?" },
        { "role": "assistant", "content": null, "tool_calls": [
            { "id": "call_0", "type": "function", "function": { "name": "get_weather", "arguments": "{\"city\":\"Paris\"}" } }] },
        { "role": "tool", "tool_call_id": "call_0", "content": "18 C" }
    ] })).await;
    let sent = gemini.recorded.bodies().pop().unwrap();
    assert_eq!(
        sent["contents"],
        json!([
            { "role": "user", "parts": [{ "text": "Weather in Paris?" }] },
            { "role": "model", "parts": [{ "functionCall": { "name": "get_weather", "args": { "city": "Paris" } } }] },
            { "role": "user", "parts": [{ "functionResponse": { "name": "get_weather", "response": { "content": "18 C" } } }] }
        ])
    );
}

#[tokio::test]
async fn answers_and_streams_come_back_in_the_openai_shape() {
    let (gemini, server, key) = setup(false).await;
    let ok = complete(&server, &key, hi("gemini-ok")).await;
    assert_eq!(
        ok["choices"][0]["message"],
        json!({ "role": "assistant", "content": "hello from gemini" }),
        "thoughts are left out"
    );
    assert_eq!(ok["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        ok["usage"],
        json!({ "prompt_tokens": 11, "completion_tokens": 8, "total_tokens": 19 })
    );
    assert_eq!(ok["billing"]["cost"].as_f64(), Some(0.000027));
    let tool = complete(&server, &key, hi("gemini-tool")).await;
    assert_eq!(tool["choices"][0]["message"]["content"], Value::Null);
    assert_eq!(
        tool["choices"][0]["message"]["tool_calls"],
        json!([{ "id": "call_0", "type": "function",
        "function": { "name": "get_weather", "arguments": "{\"city\":\"Paris\"}" } }])
    );
    assert_eq!(tool["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        complete(&server, &key, hi("gemini-len")).await["choices"][0]["finish_reason"],
        "length"
    );
    assert_eq!(
        complete(&server, &key, hi("gemini-safety")).await["choices"][0]["finish_reason"],
        "content_filter"
    );

    let events = stream(&server, &key, hi("gemini-ok")).await;
    assert_eq!(
        gemini.recorded.paths().last().unwrap(),
        "/v1beta/models/gemini-ok:streamGenerateContent"
    );
    assert_eq!(events.last().unwrap(), "[DONE]");
    let text: String = events
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "hello from gemini");
    assert!(
        events
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "stop")
    );
    let usage = events.iter().find(|c| c["usage"].is_object()).unwrap();
    assert_eq!(usage["usage"]["completion_tokens"], 8);
    assert_eq!(usage["billing"]["cost"].as_f64(), Some(0.000027));

    let events = stream(&server, &key, hi("gemini-tool")).await;
    let call = events
        .iter()
        .find_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0))
        .unwrap();
    assert_eq!(call["index"], 0);
    assert_eq!(call["function"]["name"], "get_weather");
    assert_eq!(call["function"]["arguments"], "{\"city\":\"Paris\"}");
    assert!(
        events
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls")
    );

    let events = stream(&server, &key, hi("gemini-error-mid")).await;
    assert_eq!(
        events.last().unwrap()["error"]["code"],
        "upstream_stream_error"
    );
    assert!(!events.contains(&json!("[DONE]")));
}

#[tokio::test]
async fn fallback_crosses_kinds_and_remote_images_are_guarded() {
    let (gemini, server, key) = setup(false).await;
    let chain = |models: &[&str]| json!({ "models": models, "messages": [{ "role": "user", "content": "hi" }] });
    let served = complete(&server, &key, chain(&["s503", "gemini-503", "gemini-ok"])).await;
    assert_eq!(served["model"], "gemini-ok");
    assert_eq!(served["billing"]["isFallback"], true);
    let attempts = &served["explainability"]["attempts"];
    assert_eq!(attempts[0]["status"], "503");
    assert_eq!(attempts[1]["status"], "503");

    // By default a loopback image URL is refused, before any upstream call.
    let before = gemini.recorded.bodies().len();
    let image = |url: String| {
        json!({ "model": "gemini-ok", "messages": [{ "role": "user", "content": [
        { "type": "text", "text": "What is this?" }, { "type": "image_url", "image_url": { "url": url } }] }] })
    };
    let refused = post(&server, &key, &image(format!("{}/cat.png", gemini.images))).await;
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_request", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("private"),
        "{body}"
    );
    assert_eq!(
        gemini.recorded.bodies().len(),
        before,
        "nothing was sent upstream"
    );

    // Allowed, an oversized image and a page that is not an image are refused.
    let (gemini, server, key) = setup(true).await;
    for (path, why) in [("big.png", "exceeds"), ("page.html", "not an image")] {
        let response = post(&server, &key, &image(format!("{}/{path}", gemini.images))).await;
        assert_eq!(response.status(), 400, "{path}");
        let body: Value = response.json().await.unwrap();
        assert!(
            body["error"]["message"].as_str().unwrap().contains(why),
            "{body}"
        );
    }
    assert!(gemini.recorded.bodies().is_empty());
    let ok = post(&server, &key, &image(format!("{}/cat.png", gemini.images))).await;
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn the_openai_sdk_streams_a_tool_call_served_by_gemini() {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        python.exists(),
        "run `bash .ci/test`, which installs the SDKs into .venv"
    );
    let (_gemini, server, key) = setup(false).await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/openai_tool_stream.py");
    let base = server.base_url.clone();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .arg(base)
            .arg(key)
            .arg("gemini-tool")
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
