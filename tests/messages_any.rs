//! Anthropic's Messages API on every model (docs/messages.md): a
//! non-Anthropic model is served by translation through the chat pipeline
//! (the scripted upstreams check the translated body, the path and the
//! provider's key), streams come as Messages events, tool use makes the
//! round trip, the caps and gates of the chat route apply, and
//! `count_tokens` is forwarded to Anthropic or counted locally.

mod common;

use common::anthropic::Anthropic;
use common::gemini::Gemini;
use common::upstream::Upstream;
use common::{TestServer, client, login};
use serde_json::{Value, json};

const OPENAI_SECRET: &str = "sk-openai-messages-secret";
const GEMINI_SECRET: &str = "gm-messages-secret";
const ANTHROPIC_SECRET: &str = "sk-ant-messages-secret";
const LOAN: &str = "Score this loan applicant and decide: approve or reject.";

struct Setup {
    openai: Upstream,
    gemini: Gemini,
    anthropic: Anthropic,
    server: TestServer,
}

async fn setup() -> Setup {
    let openai = Upstream::start().await;
    let gemini = Gemini::start().await;
    let anthropic = Anthropic::start().await;
    let mut config = format!(
        "[[providers]]\nid = \"oai\"\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"TEST_OPENAI_KEY\"\nmax_retries = 0\n\
         [[providers]]\nid = \"gem\"\nkind = \"gemini\"\nbase_url = \"{}\"\napi_key_env = \"TEST_GEMINI_KEY\"\n\
         [[providers]]\nid = \"claude\"\nkind = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"TEST_ANTHROPIC_KEY\"\n\
         [[providers]]\nid = \"mock\"\nkind = \"mock\"\n",
        openai.base_url, gemini.base_url, anthropic.base_url
    );
    for (id, provider, upstream, extra) in [
        ("gpt-ok", "oai", "ok", "max_output_tokens = 1000\n"),
        ("gpt-tool", "oai", "tool", ""),
        ("gemini-ok", "gem", "gemini-ok", ""),
        ("gemini-tool", "gem", "gemini-tool", ""),
        ("claude-ok", "claude", "claude-ok", ""),
        ("claude-alias", "claude", "claude-ok", ""),
        ("mock-chat", "mock", "echo", ""),
        ("mock-tool", "mock", "tool:lookup", ""),
    ] {
        config.push_str(&format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{upstream}\"\ninput = [\"TEXT\", \"IMAGE\"]\noutput = [\"TEXT\"]\n\
             context_window = 200000\n{extra}pricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
        ));
    }
    let server = TestServer::start_with(
        Some(&config),
        &[
            ("TEST_OPENAI_KEY", OPENAI_SECRET),
            ("TEST_GEMINI_KEY", GEMINI_SECRET),
            ("TEST_ANTHROPIC_KEY", ANTHROPIC_SECRET),
        ],
    );
    Setup {
        openai,
        gemini,
        anthropic,
        server,
    }
}

async fn post(server: &TestServer, path: &str, key: &str, body: &Value) -> reqwest::Response {
    client()
        .post(server.url(path))
        .header("x-api-key", key)
        .header("anthropic-version", "2023-06-01")
        .json(body)
        .send()
        .await
        .unwrap()
}

async fn message(server: &TestServer, key: &str, body: &Value) -> Value {
    let response = post(server, "/v1/messages", key, body).await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// The events of a Messages stream: (event name, data).
async fn events(response: reqwest::Response) -> Vec<(String, Value)> {
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.unwrap();
    text.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let mut name = String::new();
            let mut data = Value::Null;
            for line in e.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = n.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = serde_json::from_str(d).unwrap();
                }
            }
            assert_eq!(data["type"], name.as_str(), "each event names its type");
            (name, data)
        })
        .collect()
}

/// Asserts the Anthropic error shape and returns its type (our code).
async fn anthropic_error(response: reqwest::Response, status: u16) -> Value {
    assert_eq!(response.status().as_u16(), status);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["type"], "error", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    body["error"].clone()
}

async fn usage_records(server: &TestServer, key_id: &str, count: usize) -> Vec<Value> {
    let token = login(server).await;
    for _ in 0..100 {
        let records = common::get_json(
            server,
            &token,
            &format!("/api/v1/usage/records?keyId={key_id}"),
        )
        .await["data"]
            .as_array()
            .unwrap()
            .clone();
        if records.len() >= count {
            return records;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the request was never billed");
}

#[tokio::test]
async fn messages_on_an_openai_model_are_translated_billed_and_answered_as_a_message() {
    let Setup { openai, server, .. } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let answer = message(
        &server,
        &key,
        &json!({
            "model": "gpt-ok", "max_tokens": 32000, "temperature": 0.3, "top_p": 0.8,
            "stop_sequences": ["END"],
            "system": [{ "type": "text", "text": "Be brief.", "cache_control": { "type": "ephemeral" } }],
            "messages": [{ "role": "user", "content": [
                { "type": "text", "text": "What is this?" },
                { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo=" } }
            ] }],
        }),
    )
    .await;
    assert_eq!(answer["type"], "message");
    assert_eq!(answer["role"], "assistant");
    assert_eq!(answer["model"], "gpt-ok");
    assert_eq!(
        answer["content"],
        json!([{ "type": "text", "text": "hello from upstream" }])
    );
    assert_eq!(answer["stop_reason"], "end_turn");
    assert_eq!(
        answer["usage"],
        json!({ "input_tokens": 10, "output_tokens": 5 })
    );
    assert_eq!(answer["billing"]["cost"], json!(0.00002));

    // The upstream got the chat translation, with the provider's key.
    let sent = &openai.recorded.bodies()[0];
    assert_eq!(
        sent["messages"],
        json!([
            { "role": "system", "content": "Be brief." },
            { "role": "user", "content": [
                { "type": "text", "text": "What is this?" },
                { "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw0KGgo=" } }
            ] }
        ])
    );
    assert_eq!(sent["model"], "ok");
    assert_eq!(sent["max_tokens"], 1000, "clamped to max_output_tokens");
    assert_eq!(sent["temperature"], 0.3);
    assert_eq!(sent["top_p"], 0.8);
    assert_eq!(sent["stop"], json!(["END"]));
    let headers = &openai.recorded.headers()[0];
    assert_eq!(
        headers["authorization"],
        format!("Bearer {OPENAI_SECRET}").as_str()
    );
    assert!(
        !format!("{headers:?}").contains(&key),
        "our key went upstream"
    );

    let records = usage_records(&server, &key_id, 1).await;
    assert_eq!(records[0]["endpoint"], "messages");
    assert_eq!(records[0]["model"], "gpt-ok");
    assert_eq!(records[0]["promptTokens"], 10);
}

#[tokio::test]
async fn messages_on_a_gemini_model_reach_generate_content_with_the_providers_key() {
    let Setup { gemini, server, .. } = setup().await;
    let (_, key) = server.create_key(&[]);
    let answer = message(
        &server,
        &key,
        &json!({ "model": "gemini-ok", "max_tokens": 64, "system": "Be brief.",
                 "messages": [{ "role": "user", "content": "hello" }] }),
    )
    .await;
    assert_eq!(
        answer["content"],
        json!([{ "type": "text", "text": "hello from gemini" }])
    );
    assert_eq!(answer["stop_reason"], "end_turn");
    assert_eq!(
        answer["usage"],
        json!({ "input_tokens": 11, "output_tokens": 8 })
    );
    assert_eq!(
        gemini.recorded.paths(),
        ["/v1beta/models/gemini-ok:generateContent"]
    );
    assert_eq!(
        gemini.recorded.headers()[0]["x-goog-api-key"],
        GEMINI_SECRET
    );
    let sent = &gemini.recorded.bodies()[0];
    assert_eq!(sent["systemInstruction"]["parts"][0]["text"], "Be brief.");
    assert_eq!(sent["contents"][0]["parts"][0]["text"], "hello");
    assert_eq!(sent["generationConfig"]["maxOutputTokens"], 64);

    // A tool call comes back as a tool_use block.
    let answer = message(
        &server,
        &key,
        &json!({ "model": "gemini-tool", "max_tokens": 64,
                 "tools": [{ "name": "get_weather", "input_schema": { "type": "object", "properties": { "city": { "type": "string" } } } }],
                 "messages": [{ "role": "user", "content": "weather?" }] }),
    )
    .await;
    assert_eq!(answer["stop_reason"], "tool_use");
    let call = &answer["content"][0];
    assert_eq!(call["type"], "tool_use");
    assert_eq!(call["name"], "get_weather");
    assert_eq!(call["input"], json!({ "city": "Paris" }));
    assert_eq!(
        gemini.recorded.bodies()[1]["tools"][0]["functionDeclarations"][0]["name"],
        "get_weather"
    );
}

#[tokio::test]
async fn a_streamed_message_on_an_openai_model_is_the_messages_event_sequence() {
    let Setup { openai, server, .. } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let response = post(
        &server,
        "/v1/messages",
        &key,
        &json!({ "model": "gpt-ok", "max_tokens": 64, "stream": true,
                 "messages": [{ "role": "user", "content": "hello" }] }),
    )
    .await;
    let events = events(response).await;
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[..3], ["message_start", "ping", "content_block_start"]);
    assert_eq!(
        names[names.len() - 3..],
        ["content_block_stop", "message_delta", "message_stop"]
    );
    assert_eq!(events[0].1["message"]["model"], "gpt-ok");
    let text: String = events
        .iter()
        .filter(|(n, _)| n == "content_block_delta")
        .map(|(_, d)| {
            assert_eq!(d["delta"]["type"], "text_delta");
            d["delta"]["text"].as_str().unwrap().to_owned()
        })
        .collect();
    assert!(!text.is_empty());
    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert_eq!(
        delta["usage"],
        json!({ "input_tokens": 10, "output_tokens": 5 })
    );
    assert!(
        delta["billing"]["cost"].is_number(),
        "charged before the end"
    );
    assert_eq!(openai.recorded.bodies()[0]["stream"], true);
    assert_eq!(
        openai.recorded.bodies()[0]["stream_options"]["include_usage"],
        true
    );
    let records = usage_records(&server, &key_id, 1).await;
    assert_eq!(records[0]["endpoint"], "messages");
    assert_eq!(records[0]["streamed"], true);
}

#[tokio::test]
async fn a_tool_use_round_trip_on_an_openai_model() {
    let Setup { openai, server, .. } = setup().await;
    let (_, key) = server.create_key(&[]);
    let tools = json!([{ "name": "get_weather", "description": "Weather of a city",
                         "input_schema": { "type": "object", "properties": { "city": { "type": "string" } } } }]);
    let ask = json!({ "role": "user", "content": "Weather in Paris?" });
    let first = message(
        &server,
        &key,
        &json!({ "model": "gpt-tool", "max_tokens": 64, "tools": tools,
                 "tool_choice": { "type": "tool", "name": "get_weather" }, "messages": [ask] }),
    )
    .await;
    assert_eq!(first["stop_reason"], "tool_use");
    let call = first["content"][0].clone();
    assert_eq!(
        call,
        json!({ "type": "tool_use", "id": "call_1", "name": "get_weather", "input": { "city": "Paris" } })
    );
    let sent = &openai.recorded.bodies()[0];
    assert_eq!(
        sent["tools"],
        json!([{ "type": "function", "function": { "name": "get_weather", "description": "Weather of a city",
                 "parameters": { "type": "object", "properties": { "city": { "type": "string" } } } } }])
    );
    assert_eq!(
        sent["tool_choice"],
        json!({ "type": "function", "function": { "name": "get_weather" } })
    );

    // The result goes back as a tool message answering the call.
    let second = message(
        &server,
        &key,
        &json!({ "model": "gpt-ok", "max_tokens": 64, "tools": tools, "messages": [
            ask,
            { "role": "assistant", "content": [call] },
            { "role": "user", "content": [
                { "type": "tool_result", "tool_use_id": "call_1", "content": [{ "type": "text", "text": "18 C, sunny" }] }
            ] }
        ] }),
    )
    .await;
    assert_eq!(second["stop_reason"], "end_turn");
    let sent = &openai.recorded.bodies()[1];
    assert_eq!(
        sent["messages"][1],
        json!({ "role": "assistant", "content": null, "tool_calls": [
            { "id": "call_1", "type": "function", "function": { "name": "get_weather", "arguments": "{\"city\":\"Paris\"}" } }
        ] })
    );
    assert_eq!(
        sent["messages"][2],
        json!({ "role": "tool", "tool_call_id": "call_1", "content": "18 C, sunny" })
    );
}

#[tokio::test]
async fn a_streamed_tool_call_on_the_mock_comes_as_input_json_deltas() {
    let Setup { server, .. } = setup().await;
    let (_, key) = server.create_key(&[]);
    let response = client()
        .post(server.url("/v1/messages"))
        .bearer_auth(&key)
        .json(
            &json!({ "model": "mock-tool", "max_tokens": 64, "stream": true,
                       "tools": [{ "name": "lookup", "input_schema": { "type": "object" } }],
                       "messages": [{ "role": "user", "content": "cats" }] }),
        )
        .send()
        .await
        .unwrap();
    let events = events(response).await;
    let start = events
        .iter()
        .find(|(n, _)| n == "content_block_start")
        .unwrap();
    assert_eq!(start.1["content_block"]["type"], "tool_use");
    assert_eq!(start.1["content_block"]["name"], "lookup");
    let json: String = events
        .iter()
        .filter(|(n, _)| n == "content_block_delta")
        .map(|(_, d)| {
            assert_eq!(d["delta"]["type"], "input_json_delta");
            d["delta"]["partial_json"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&json).unwrap(),
        json!({ "input": "cats" })
    );
    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
}

/// What Claude Code 2.x sends (issue 21): `?beta=true`, Bearer auth,
/// several betas, adaptive thinking, context management, effort, a user
/// id, cached system blocks, a system message inside `messages`, deferred
/// tools, a hosted tool, `max_tokens` 32000, streamed.
#[tokio::test]
async fn a_claude_code_shaped_request_is_accepted_on_a_translated_model() {
    let Setup { openai, server, .. } = setup().await;
    let (_, key) = server.create_key(&[]);
    let body = json!({
        "model": "gpt-ok", "max_tokens": 32000, "stream": true,
        "thinking": { "type": "adaptive" },
        "context_management": { "edits": [{ "type": "clear_thinking_20251015", "keep": "all" }] },
        "output_config": { "effort": "medium" },
        "metadata": { "user_id": "user_0123_account__session_abc" },
        "system": [
            { "type": "text", "text": "You are Claude Code." },
            { "type": "text", "text": "Follow the repo rules.", "cache_control": { "type": "ephemeral" } }
        ],
        "messages": [
            { "role": "system", "content": "Today is Thursday." },
            { "role": "user", "content": [{ "type": "text", "text": "list the files", "cache_control": { "type": "ephemeral" } }] }
        ],
        "tools": [
            { "name": "Bash", "description": "Run a command", "input_schema": { "type": "object", "properties": { "command": { "type": "string" } } } },
            { "name": "WebFetch", "description": "Fetch", "input_schema": { "type": "object" }, "defer_loading": true },
            { "type": "web_search_20250305", "name": "web_search", "max_uses": 5 }
        ],
    });
    let response = client()
        .post(server.url("/v1/messages?beta=true"))
        .bearer_auth(&key)
        .header("anthropic-version", "2023-06-01")
        .header(
            "anthropic-beta",
            "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,effort-2025-11-24",
        )
        .json(&body)
        .send()
        .await
        .unwrap();
    let dropped = response.headers()["x-tollgate-dropped"]
        .to_str()
        .unwrap()
        .to_owned();
    for field in [
        "thinking",
        "context_management",
        "output_config",
        "metadata",
        "tools[2] (web_search_20250305)",
    ] {
        assert!(dropped.contains(field), "{field} in {dropped}");
    }
    let events = events(response).await;
    assert_eq!(events.last().unwrap().0, "message_stop");
    let sent = &openai.recorded.bodies()[0];
    assert_eq!(
        sent["messages"][0],
        json!({ "role": "system", "content": "You are Claude Code.\n\nFollow the repo rules.\n\nToday is Thursday." })
    );
    assert_eq!(sent["max_tokens"], 1000);
    let names: Vec<&str> = sent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Bash", "WebFetch"]);
    for field in [
        "thinking",
        "context_management",
        "output_config",
        "metadata",
    ] {
        assert!(sent.get(field).is_none(), "{field} went upstream");
    }
}

#[tokio::test]
async fn caps_and_gates_apply_to_a_translated_model_with_no_upstream_call() {
    let Setup { openai, server, .. } = setup().await;
    // A high-risk use needs allowHighRisk, streamed or not.
    let (_, key) = server.create_key(&[]);
    for stream in [false, true] {
        let refused = post(
            &server,
            "/v1/messages",
            &key,
            &json!({ "model": "gpt-ok", "max_tokens": 64, "stream": stream,
                     "messages": [{ "role": "user", "content": LOAN }] }),
        )
        .await;
        assert_eq!(
            anthropic_error(refused, 403).await["type"],
            "high_risk_not_allowed"
        );
    }
    assert!(openai.recorded.bodies().is_empty());

    // One answer (20 micro-credits) takes the key over its cap of 10.
    let (_, capped) = server.create_key(&["--credit-limit", "0.00001"]);
    let ask = json!({ "model": "gpt-ok", "max_tokens": 64, "messages": [{ "role": "user", "content": "hi" }] });
    message(&server, &capped, &ask).await;
    let refused = post(&server, "/v1/messages", &capped, &ask).await;
    assert_eq!(
        anthropic_error(refused, 402).await["type"],
        "budget_exceeded"
    );
    assert_eq!(openai.recorded.bodies().len(), 1);
}

#[tokio::test]
async fn bad_messages_requests_get_400_in_the_anthropic_shape() {
    let Setup { openai, server, .. } = setup().await;
    let (_, key) = server.create_key(&[]);
    let user = json!([{ "role": "user", "content": "x" }]);
    let cases = [
        (json!({ "model": "gpt-ok", "max_tokens": 5 }), "`messages`"),
        (
            json!({ "model": "gpt-ok", "max_tokens": 5, "messages": [] }),
            "`messages`",
        ),
        (
            json!({ "model": "gpt-ok", "max_tokens": 5, "messages": "hi" }),
            "`messages`",
        ),
        (
            json!({ "model": "gpt-ok", "max_tokens": "lots", "messages": user }),
            "`max_tokens`",
        ),
        (
            json!({ "model": "gpt-ok", "max_tokens": 5, "temperature": 3, "messages": user }),
            "`temperature`",
        ),
        (
            json!({ "model": "gpt-ok", "max_tokens": 5, "messages": [{ "role": "robot", "content": "x" }] }),
            "`role`",
        ),
        (
            json!({ "model": "gpt-ok", "max_tokens": 5, "messages": [{ "role": "user", "content": [{ "type": "hologram" }] }] }),
            "`hologram`",
        ),
        (
            json!({ "model": "gpt-ok", "max_tokens": 5, "messages": [{ "role": "user", "content": [{ "type": "text", "text": 5 }] }] }),
            "`text`",
        ),
        (
            json!({ "model": "gpt-ok", "max_tokens": 5, "tools": [{ "description": "nameless" }], "messages": user }),
            "`name`",
        ),
        (
            json!({ "model": "gpt-ok", "max_tokens": 5, "stream": "yes", "messages": user }),
            "`stream`",
        ),
    ];
    for (body, names) in cases {
        let response = post(&server, "/v1/messages", &key, &body).await;
        let error = anthropic_error(response, 400).await;
        assert_eq!(error["type"], "invalid_request", "{body}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(names), "{body}: {message}");
    }
    let unknown = post(
        &server,
        "/v1/messages",
        &key,
        &json!({ "model": "gpt-nope", "max_tokens": 5, "messages": user }),
    )
    .await;
    assert_eq!(
        anthropic_error(unknown, 404).await["type"],
        "model_not_found"
    );
    assert!(openai.recorded.bodies().is_empty(), "nothing went upstream");
}

#[tokio::test]
async fn count_tokens_is_forwarded_to_anthropic_and_counted_locally_elsewhere_never_billed() {
    let Setup {
        anthropic, server, ..
    } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let ask = |model: &str| {
        json!({ "model": model, "system": "You are a helpful assistant that can answer to questions about the weather.",
                "messages": [{ "role": "user", "content": "What's the weather like in San Francisco?" }],
                "tools": [{ "name": "get_current_weather", "description": "Get the current weather in a given location",
                    "input_schema": { "type": "object", "properties": {
                        "location": { "type": "string", "description": "The city and state, e.g. San Francisco, CA" },
                        "unit": { "type": "string", "description": "The unit of temperature to return", "enum": ["celsius", "fahrenheit"] }
                    }, "required": ["location"] } }] })
    };
    // Anthropic: forwarded with the provider's key, renamed upstream.
    let response = client()
        .post(server.url("/v1/messages/count_tokens?beta=true"))
        .bearer_auth(&key)
        .header("anthropic-beta", "token-counting-2024-11-01")
        .json(&ask("claude-alias"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({ "input_tokens": 4242 })
    );
    let counted = anthropic.recorded.counted();
    assert_eq!(counted.len(), 1);
    assert_eq!(counted[0]["model"], "claude-ok");
    let headers = &anthropic.recorded.headers()[0];
    assert_eq!(headers["x-api-key"], ANTHROPIC_SECRET);
    assert_eq!(headers["anthropic-beta"], "token-counting-2024-11-01");

    // OpenAI: o200k_base by OpenAI's published rules (101 for this
    // request on gpt-4o, as the OpenAI API counts it).
    let response = post(&server, "/v1/messages/count_tokens", &key, &ask("gpt-ok")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({ "input_tokens": 101 })
    );
    // Other kinds: the gateway's estimate, a positive count.
    let response = post(
        &server,
        "/v1/messages/count_tokens",
        &key,
        &ask("gemini-ok"),
    )
    .await;
    let estimate = response.json::<Value>().await.unwrap()["input_tokens"]
        .as_u64()
        .unwrap();
    assert!(estimate > 20, "{estimate}");

    // Bad input and unknown models, in the Anthropic shape.
    let bad = post(
        &server,
        "/v1/messages/count_tokens",
        &key,
        &json!({ "model": "gpt-ok", "messages": [] }),
    )
    .await;
    assert_eq!(anthropic_error(bad, 400).await["type"], "invalid_request");
    let unknown = post(&server, "/v1/messages/count_tokens", &key, &ask("nope")).await;
    assert_eq!(
        anthropic_error(unknown, 404).await["type"],
        "model_not_found"
    );
    let no_key = client()
        .post(server.url("/v1/messages/count_tokens"))
        .json(&ask("gpt-ok"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        anthropic_error(no_key, 401).await["type"],
        "missing_api_key"
    );

    // Never billed: a message afterwards is the key's only record.
    message(
        &server,
        &key,
        &json!({ "model": "mock-chat", "max_tokens": 8, "messages": [{ "role": "user", "content": "hi" }] }),
    )
    .await;
    let records = usage_records(&server, &key_id, 1).await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["model"], "mock-chat");
}

#[tokio::test]
async fn a_held_translated_answer_is_released_as_a_message_once_approved() {
    let Setup { openai, server, .. } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let owner = login(&server).await;
    let policy = client()
        .put(server.url("/api/v1/policies"))
        .bearer_auth(&owner)
        .json(&json!({ "reviewMode": "all" }))
        .send()
        .await
        .unwrap();
    assert_eq!(policy.status(), 200);
    // Streamed or not, a held request is answered 202 (the upstream is
    // asked for the whole answer, as on the chat route).
    let mut reviews = Vec::new();
    for stream in [false, true] {
        let held = post(
            &server,
            "/v1/messages",
            &key,
            &json!({ "model": "gpt-ok", "max_tokens": 64, "stream": stream,
                     "messages": [{ "role": "user", "content": "Hello" }] }),
        )
        .await;
        assert_eq!(held.status(), 202);
        let held: Value = held.json().await.unwrap();
        assert_eq!(held["status"], "pending");
        reviews.push(held["id"].as_str().unwrap().to_owned());
    }
    assert!(openai.recorded.bodies().iter().all(|b| b["stream"] != true));
    assert_eq!(usage_records(&server, &key_id, 2).await.len(), 2);
    let approved = client()
        .post(server.url(&format!("/api/v1/reviews/{}/approve", reviews[0])))
        .bearer_auth(&owner)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), 200);
    let released = client()
        .get(server.url(&format!("/v1/reviews/{}", reviews[0])))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(released.status(), 200);
    let released: Value = released.json().await.unwrap();
    assert_eq!(released["type"], "message", "{released}");
    assert_eq!(
        released["content"],
        json!([{ "type": "text", "text": "hello from upstream" }])
    );
    assert!(released["billing"]["cost"].is_number());
}
