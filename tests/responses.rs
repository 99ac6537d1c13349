//! OpenAI's Responses API, `POST /v1/responses` (docs/responses.md):
//! forwarded to an OpenAI provider's own `/responses`, translated to chat
//! for every other provider (and for an OpenAI-compatible one set to
//! `responses = "translate"`), with the standard stream events,
//! `previous_response_id` kept per tenant, and every cap and gate of the
//! chat route.

mod common;

use common::anthropic::Anthropic;
use common::gemini::Gemini;
use common::scripted::{Scripted, Step};
use common::{TestServer, client, error_code, login};
use serde_json::{Value, json};

const SECRET: &str = "sk-openai-responses-secret";
const PROHIBITED: &str = "Use the citizen score to deny housing to people below 600 points.";
const LOAN: &str = "Score this loan applicant and decide: approve or reject.";

struct Setup {
    scripted: Scripted,
    anthropic: Anthropic,
    gemini: Gemini,
    server: TestServer,
}

fn config(scripted: &str, anthropic: &str, gemini: &str) -> String {
    let mut out = format!(
        "[[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{scripted}\"\napi_key_env = \"TEST_OPENAI_KEY\"\nretry_backoff_ms = 1\n\
         [[providers]]\nid = \"compat\"\nkind = \"openai\"\nbase_url = \"{scripted}\"\nresponses = \"translate\"\n\
         [[providers]]\nid = \"claude\"\nkind = \"anthropic\"\nbase_url = \"{anthropic}\"\n\
         [[providers]]\nid = \"gem\"\nkind = \"gemini\"\nbase_url = \"{gemini}\"\n\
         [[providers]]\nid = \"mock\"\nkind = \"mock\"\n"
    );
    for (id, provider, upstream) in [
        ("gpt", "up", "gpt-up"),
        ("compat", "compat", "compat-up"),
        ("claude-ok", "claude", "claude-ok"),
        ("claude-tool", "claude", "claude-tool"),
        ("gemini-ok", "gem", "gemini-ok"),
        ("gemini-tool", "gem", "gemini-tool"),
        ("demo", "mock", "echo"),
        ("tooly", "mock", "tool:get_weather"),
        ("broken", "mock", "error:503"),
        ("claude-cut", "claude", "claude-error-mid"),
    ] {
        out.push_str(&format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{upstream}\"\ninput = [\"TEXT\", \"IMAGE\"]\noutput = [\"TEXT\"]\n\
             context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
        ));
    }
    out
}

async fn setup() -> Setup {
    let scripted = Scripted::start().await;
    let anthropic = Anthropic::start().await;
    let gemini = Gemini::start().await;
    let server = TestServer::start_with(
        Some(&config(
            &scripted.base_url,
            &anthropic.base_url,
            &gemini.base_url,
        )),
        &[("TEST_OPENAI_KEY", SECRET)],
    );
    Setup {
        scripted,
        anthropic,
        gemini,
        server,
    }
}

async fn post_with(
    server: &TestServer,
    key: &str,
    body: &Value,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = client()
        .post(server.url("/v1/responses"))
        .bearer_auth(key)
        .json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

async fn post(server: &TestServer, key: &str, body: &Value) -> reqwest::Response {
    post_with(server, key, body, &[]).await
}

/// A response that must succeed; its JSON.
async fn respond(server: &TestServer, key: &str, body: Value) -> Value {
    let response = post(server, key, &body).await;
    assert_eq!(response.status(), 200, "{body}");
    response.json().await.unwrap()
}

/// The events of a stream that must start with 200: each `data:` payload,
/// checked against its `event:` line.
async fn stream_events(response: reqwest::Response) -> Vec<Value> {
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.unwrap();
    let mut events = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(event) = line.strip_prefix("event: ") {
            name = Some(event.to_owned());
        } else if let Some(data) = line.strip_prefix("data: ") {
            let event: Value = serde_json::from_str(data).unwrap();
            assert_eq!(name.take().as_deref(), event["type"].as_str(), "{text}");
            events.push(event);
        }
    }
    events
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().filter_map(|e| e["type"].as_str()).collect()
}

async fn usage_records(server: &TestServer, key_id: &str) -> Vec<Value> {
    let token = login(server).await;
    let records = common::get_json(
        server,
        &token,
        &format!("/api/v1/usage/records?keyId={key_id}"),
    )
    .await;
    records["data"].as_array().unwrap().clone()
}

fn output_text(response: &Value) -> String {
    response["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "message")
        .flat_map(|i| i["content"].as_array().unwrap().iter())
        .filter_map(|p| p["text"].as_str())
        .collect()
}

#[tokio::test]
async fn a_plain_response_on_the_mock_is_a_response_object_billed_under_responses() {
    let Setup { server, .. } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let response = respond(
        &server,
        &key,
        json!({ "model": "demo", "input": "hello there", "instructions": "be brief",
                "metadata": { "ticket": "T-1" }, "max_output_tokens": 50 }),
    )
    .await;
    assert_eq!(response["object"], "response");
    assert!(response["id"].as_str().unwrap().starts_with("resp_"));
    assert_eq!(response["status"], "completed");
    assert_eq!(response["model"], "demo");
    assert_eq!(response["instructions"], "be brief");
    assert_eq!(response["metadata"], json!({ "ticket": "T-1" }));
    assert_eq!(response["max_output_tokens"], 50);
    assert_eq!(output_text(&response), "echo: hello there");
    assert_eq!(response["output"][0]["role"], "assistant");
    let usage = &response["usage"];
    assert_eq!(
        usage["total_tokens"].as_u64().unwrap(),
        usage["input_tokens"].as_u64().unwrap() + usage["output_tokens"].as_u64().unwrap()
    );
    assert!(response["billing"]["cost"].as_f64().unwrap() > 0.0);
    assert_eq!(response["risk_classification"]["level"], "minimal");

    let records = usage_records(&server, &key_id).await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["endpoint"], "responses");
    assert_eq!(records[0]["model"], "demo");
}

#[tokio::test]
async fn a_stream_carries_the_standard_events_in_sequence_and_is_billed() {
    let Setup { server, .. } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let events = stream_events(
        post(
            &server,
            &key,
            &json!({ "model": "demo", "input": "stream me", "stream": true }),
        )
        .await,
    )
    .await;
    let kinds = kinds(&events);
    assert_eq!(
        kinds[..4],
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added"
        ]
    );
    assert_eq!(
        kinds[kinds.len() - 4..],
        [
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    assert!(kinds.contains(&"response.output_text.delta"));
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event["sequence_number"], i as u64, "{event}");
    }
    let deltas: String = events
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(deltas, "echo: stream me");
    let done = &events.last().unwrap()["response"];
    assert_eq!(done["status"], "completed");
    assert_eq!(output_text(done), "echo: stream me");
    assert!(done["usage"]["output_tokens"].as_u64().unwrap() > 0);
    assert!(done["billing"]["cost"].as_f64().unwrap() > 0.0);
    assert_eq!(events[0]["response"]["id"], done["id"]);

    let records = usage_records(&server, &key_id).await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["endpoint"], "responses");
    assert_eq!(records[0]["streamed"], true);
}

#[tokio::test]
async fn a_tool_round_trip_sends_the_call_and_its_output_upstream_as_chat() {
    let Setup {
        scripted, server, ..
    } = setup().await;
    let (_, key) = server.create_key(&[]);
    let tools = json!([{ "type": "function", "name": "get_weather", "description": "Weather of a city",
        "parameters": { "type": "object", "properties": { "city": { "type": "string" } } }, "strict": true }]);
    let first = respond(
        &server,
        &key,
        json!({ "model": "tooly", "input": "Paris", "tools": tools }),
    )
    .await;
    let call = &first["output"][0];
    assert_eq!(call["type"], "function_call", "{first}");
    assert_eq!(call["name"], "get_weather");
    assert_eq!(call["call_id"], "call_mock_0");
    let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({ "input": "Paris" }));

    // The result goes back on a translating OpenAI-compatible server, as
    // the call and a tool message.
    let second = respond(
        &server,
        &key,
        json!({ "model": "compat", "previous_response_id": first["id"], "tools": tools,
                "tool_choice": { "type": "function", "name": "get_weather" },
                "input": [{ "type": "function_call_output", "call_id": "call_mock_0", "output": "18 C" }] }),
    )
    .await;
    assert_eq!(output_text(&second), "hello from compat-up");
    assert_eq!(second["previous_response_id"], first["id"]);
    let calls = scripted.script.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].path, "/v1/chat/completions");
    let sent = &calls[0].body;
    assert_eq!(
        sent["messages"],
        json!([
            { "role": "user", "content": "Paris" },
            { "role": "assistant", "content": null, "tool_calls": [{ "id": "call_mock_0", "type": "function",
                "function": { "name": "get_weather", "arguments": call["arguments"] } }] },
            { "role": "tool", "tool_call_id": "call_mock_0", "content": "18 C" },
        ])
    );
    assert_eq!(
        sent["tools"],
        json!([{ "type": "function", "function": { "name": "get_weather", "description": "Weather of a city",
            "parameters": { "type": "object", "properties": { "city": { "type": "string" } } }, "strict": true } }])
    );
    assert_eq!(
        sent["tool_choice"],
        json!({ "type": "function", "function": { "name": "get_weather" } })
    );
    assert_eq!(sent["model"], "compat-up");
}

#[tokio::test]
async fn previous_response_id_continues_a_stored_conversation_of_the_same_tenant_only() {
    let Setup {
        scripted, server, ..
    } = setup().await;
    let (_, key) = server.create_key(&[]);
    let first = respond(
        &server,
        &key,
        json!({ "model": "demo", "input": "My name is Ann.", "instructions": "first rules" }),
    )
    .await;
    // Streamed, the response is stored too (before `response.completed`).
    let events = stream_events(
        post(
            &server,
            &key,
            &json!({ "model": "demo", "input": "And I live in Oslo.", "stream": true,
                     "previous_response_id": first["id"] }),
        )
        .await,
    )
    .await;
    let second = &events.last().unwrap()["response"];
    let third = respond(
        &server,
        &key,
        json!({ "model": "compat", "input": "What is my name?", "instructions": "new rules",
                "previous_response_id": second["id"] }),
    )
    .await;
    assert_eq!(third["status"], "completed");
    let sent = &scripted.script.calls()[0].body;
    assert_eq!(
        sent["messages"],
        json!([
            { "role": "system", "content": "new rules" },
            { "role": "user", "content": "My name is Ann." },
            { "role": "assistant", "content": "echo: My name is Ann." },
            { "role": "user", "content": "And I live in Oslo." },
            { "role": "assistant", "content": "echo: And I live in Oslo." },
            { "role": "user", "content": "What is my name?" },
        ]),
        "the earlier instructions are not carried over"
    );

    // Unknown, and another tenant's: the same 404.
    let unknown = post(
        &server,
        &key,
        &json!({ "model": "demo", "input": "x", "previous_response_id": "resp_nope" }),
    )
    .await;
    assert_eq!(unknown.status(), 404);
    let body: Value = unknown.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_found");
    assert_eq!(body["error"]["param"], "previous_response_id");
    server.cli_json(&["tenants", "create", "--name", "other"]);
    server.cli_json(&["tenants", "topup", "other", "--credits", "10"]);
    let (_, other) = server.create_key(&["--tenant", "other"]);
    let theirs = post(
        &server,
        &other,
        &json!({ "model": "demo", "input": "x", "previous_response_id": first["id"] }),
    )
    .await;
    assert_eq!(error_code(theirs, 404).await, "not_found");

    // `store: false` keeps nothing.
    let unstored = respond(
        &server,
        &key,
        json!({ "model": "demo", "input": "secret", "store": false }),
    )
    .await;
    assert_eq!(unstored["store"], false);
    let gone = post(
        &server,
        &key,
        &json!({ "model": "demo", "input": "x", "previous_response_id": unstored["id"] }),
    )
    .await;
    assert_eq!(error_code(gone, 404).await, "not_found");
}

#[tokio::test]
async fn an_erased_end_user_loses_their_stored_responses() {
    let Setup { server, .. } = setup().await;
    let (_, key) = server.create_key(&[]);
    let kept = respond(
        &server,
        &key,
        json!({ "model": "demo", "input": "hi", "end_user_id": "alice" }),
    )
    .await;
    let other = respond(
        &server,
        &key,
        json!({ "model": "demo", "input": "hi", "end_user_id": "bob" }),
    )
    .await;
    let owner = login(&server).await;
    let erased = client()
        .post(server.url("/api/v1/erasure"))
        .bearer_auth(&owner)
        .json(&json!({ "endUserId": "alice" }))
        .send()
        .await
        .unwrap();
    assert_eq!(erased.status(), 200);
    let report: Value = erased.json().await.unwrap();
    assert_eq!(report["erased"]["responses"], 1, "{report}");
    let gone = post(
        &server,
        &key,
        &json!({ "model": "demo", "input": "x", "previous_response_id": kept["id"] }),
    )
    .await;
    assert_eq!(error_code(gone, 404).await, "not_found");
    let still = post(
        &server,
        &key,
        &json!({ "model": "demo", "input": "x", "previous_response_id": other["id"] }),
    )
    .await;
    assert_eq!(still.status(), 200);
}

#[tokio::test]
async fn a_one_model_request_on_openai_is_forwarded_to_its_responses_and_billed_from_usage() {
    let Setup {
        scripted, server, ..
    } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let body = json!({
        "model": "gpt", "input": [{ "role": "user", "content": [{ "type": "input_text", "text": "hi" }] }],
        "tools": [{ "type": "web_search" }, { "type": "function", "name": "f", "parameters": {} }],
        "previous_response_id": "resp_upstream_1", "reasoning": { "summary": "auto" },
        "include": ["reasoning.encrypted_content"], "store": false, "purpose": "support",
    });
    let response = post(&server, &key, &body).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("x-tollgate-cost"));
    assert!(
        !response.headers().contains_key("x-tollgate-dropped-tools"),
        "nothing is dropped on the passthrough"
    );
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["id"], "resp_up_1", "the upstream's response as sent");
    assert_eq!(answer["previous_response_id"], "resp_upstream_1");
    assert_eq!(output_text(&answer), "hello from gpt-up");

    let calls = scripted.script.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].path, "/v1/responses");
    assert_eq!(
        calls[0].headers["authorization"],
        format!("Bearer {SECRET}").as_str()
    );
    let mut forwarded = body.clone();
    forwarded["model"] = json!("gpt-up");
    forwarded.as_object_mut().unwrap().remove("purpose");
    assert_eq!(
        calls[0].body, forwarded,
        "the caller's body, the model renamed and the service fields taken out"
    );

    let events = stream_events(
        post(
            &server,
            &key,
            &json!({ "model": "gpt", "input": "hi", "stream": true }),
        )
        .await,
    )
    .await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    let records = usage_records(&server, &key_id).await;
    assert_eq!(records.len(), 2);
    for record in &records {
        assert_eq!(record["endpoint"], "responses", "{record}");
        assert_eq!(record["promptTokens"], 10);
        assert_eq!(record["completionTokens"], 5);
        assert_eq!(record["estimated"], false);
    }

    // A `models` chain, even of one OpenAI model, is translated to chat.
    let chained = respond(&server, &key, json!({ "models": ["gpt"], "input": "hi" })).await;
    assert_eq!(output_text(&chained), "hello from gpt-up");
    assert_ne!(chained["id"], "resp_up_3");
    let last = scripted.script.calls().pop().unwrap();
    assert_eq!(last.path, "/v1/chat/completions");
}

#[tokio::test]
async fn translation_to_anthropic_is_golden_both_ways() {
    let Setup {
        anthropic, server, ..
    } = setup().await;
    let (_, key) = server.create_key(&[]);
    let response = post(
        &server,
        &key,
        &json!({
            "model": "claude-tool", "instructions": "You are terse.", "max_output_tokens": 300,
            "input": [
                { "role": "user", "content": [{ "type": "input_text", "text": "Weather in Paris?" }] },
            ],
            "tools": [
                { "type": "function", "name": "get_weather", "description": "Weather of a city",
                  "parameters": { "type": "object", "properties": { "city": { "type": "string" } } } },
                { "type": "web_search" },
            ],
        }),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-tollgate-dropped-tools"], "web_search");
    let answer: Value = response.json().await.unwrap();
    let sent = &anthropic.recorded.bodies()[0];
    assert_eq!(sent["model"], "claude-tool");
    assert_eq!(sent["max_tokens"], 300);
    assert!(
        sent["system"].to_string().contains("You are terse."),
        "{sent}"
    );
    assert_eq!(
        sent["messages"],
        json!([{ "role": "user", "content": [{ "type": "text", "text": "Weather in Paris?" }] }])
    );
    assert_eq!(
        sent["tools"],
        json!([{ "name": "get_weather", "description": "Weather of a city",
                 "input_schema": { "type": "object", "properties": { "city": { "type": "string" } } } }])
    );
    assert_eq!(answer["output"][0]["type"], "message");
    assert_eq!(output_text(&answer), "Let me check.");
    let call = &answer["output"][1];
    assert_eq!(call["type"], "function_call");
    assert_eq!(call["call_id"], "toolu_01");
    assert_eq!(call["name"], "get_weather");
    assert_eq!(
        serde_json::from_str::<Value>(call["arguments"].as_str().unwrap()).unwrap(),
        json!({ "city": "Paris" })
    );
    // Anthropic's input counts its cached tokens (12 + 3).
    assert_eq!(answer["usage"]["input_tokens"], 15);
    assert_eq!(answer["usage"]["output_tokens"], 7);

    // Streamed: the text, then the call with its arguments.
    let events = stream_events(
        post(
            &server,
            &key,
            &json!({ "model": "claude-tool", "input": "Weather in Paris?", "stream": true,
                     "tools": [{ "type": "function", "name": "get_weather", "parameters": { "type": "object" } }] }),
        )
        .await,
    )
    .await;
    let kinds = kinds(&events);
    assert!(
        kinds.contains(&"response.function_call_arguments.delta"),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&"response.function_call_arguments.done"),
        "{kinds:?}"
    );
    let done = &events.last().unwrap()["response"];
    assert_eq!(done["output"][1]["name"], "get_weather", "{done}");
    assert_eq!(done["output"][1]["call_id"], "toolu_01");
}

#[tokio::test]
async fn translation_to_gemini_is_golden_both_ways() {
    let Setup { gemini, server, .. } = setup().await;
    let (_, key) = server.create_key(&[]);
    let answer = respond(
        &server,
        &key,
        json!({
            "model": "gemini-tool", "instructions": "You are terse.",
            "input": [
                { "role": "user", "content": "Weather in Paris?" },
                { "type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\":\"Rome\"}" },
                { "type": "function_call_output", "call_id": "c1", "output": "20 C" },
            ],
            "tools": [{ "type": "function", "name": "get_weather",
                        "parameters": { "type": "object", "properties": { "city": { "type": "string" } } } }],
        }),
    )
    .await;
    let sent = &gemini.recorded.bodies()[0];
    assert_eq!(
        sent["systemInstruction"]["parts"][0]["text"], "You are terse.",
        "{sent}"
    );
    let contents = sent["contents"].as_array().unwrap();
    assert_eq!(contents[0]["role"], "user");
    assert_eq!(contents[0]["parts"][0]["text"], "Weather in Paris?");
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(
        contents[1]["parts"][0]["functionCall"],
        json!({ "name": "get_weather", "args": { "city": "Rome" } })
    );
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["name"], "get_weather",
        "{sent}"
    );
    assert_eq!(
        sent["tools"][0]["functionDeclarations"][0]["name"],
        "get_weather"
    );
    let call = &answer["output"][0];
    assert_eq!(call["type"], "function_call", "{answer}");
    assert_eq!(call["name"], "get_weather");
    assert_eq!(
        serde_json::from_str::<Value>(call["arguments"].as_str().unwrap()).unwrap(),
        json!({ "city": "Paris" })
    );
    // Gemini's thoughts count as output (6 + 2).
    assert_eq!(answer["usage"]["input_tokens"], 11);
    assert_eq!(answer["usage"]["output_tokens"], 8);

    let text = respond(
        &server,
        &key,
        json!({ "model": "gemini-ok", "input": "hi" }),
    )
    .await;
    assert_eq!(output_text(&text), "hello from gemini");
}

#[tokio::test]
async fn caps_gates_and_the_fallback_chain_apply_as_on_chat() {
    let Setup {
        scripted,
        anthropic,
        server,
        ..
    } = setup().await;
    let ask = json!({ "model": "claude-ok", "input": "hi" });

    let (_, capped) = server.create_key(&["--credit-limit", "0.00001"]);
    assert_eq!(post(&server, &capped, &ask).await.status(), 200);
    let refused = post(&server, &capped, &ask).await;
    assert_eq!(error_code(refused, 402).await, "budget_exceeded");

    let (_, limited) = server.create_key(&["--rate-limit", "1"]);
    assert_eq!(post(&server, &limited, &ask).await.status(), 200);
    let refused = post(&server, &limited, &ask).await;
    assert!(refused.headers().contains_key("x-ratelimit-limit-requests"));
    assert_eq!(error_code(refused, 429).await, "rate_limit_exceeded");
    let reached = anthropic.recorded.count();
    assert_eq!(reached, 2);

    let (_, key) = server.create_key(&[]);
    for model in ["claude-ok", "gpt"] {
        for input in [
            json!(PROHIBITED),
            json!([{ "role": "user", "content": PROHIBITED }]),
        ] {
            let refused = post(&server, &key, &json!({ "model": model, "input": input })).await;
            assert_eq!(error_code(refused, 403).await, "prohibited_use");
        }
        let refused = post(&server, &key, &json!({ "model": model, "input": LOAN })).await;
        assert_eq!(error_code(refused, 403).await, "high_risk_not_allowed");
    }
    assert_eq!(anthropic.recorded.count(), reached);
    assert!(scripted.script.calls().is_empty());

    // The chain through `models`: the first fails, the second serves.
    let served = respond(
        &server,
        &key,
        json!({ "models": ["broken", "demo"], "input": "hi" }),
    )
    .await;
    assert_eq!(served["model"], "demo");
    assert_eq!(output_text(&served), "echo: hi");
    assert!(
        served["explainability"]["model_selection_reason"]
            .as_str()
            .unwrap()
            .starts_with("fallback"),
        "{served}"
    );

    // Held for review: 202 with the review.
    let owner = login(&server).await;
    let put = client()
        .put(server.url("/api/v1/policies"))
        .bearer_auth(&owner)
        .json(&json!({ "reviewMode": "all" }))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    for stream in [false, true] {
        let held = post(
            &server,
            &key,
            &json!({ "model": "demo", "input": "hi", "stream": stream }),
        )
        .await;
        assert_eq!(held.status(), 202);
        let review: Value = held.json().await.unwrap();
        assert_eq!(review["status"], "pending");
    }
}

#[tokio::test]
async fn bad_inputs_are_400_in_the_openai_shape_naming_the_field() {
    let Setup {
        scripted, server, ..
    } = setup().await;
    let (_, key) = server.create_key(&[]);
    let many: Vec<Value> = (0..2049)
        .map(|_| json!({ "role": "user", "content": "x" }))
        .collect();
    for model in ["demo", "gpt"] {
        for (body, param) in [
            (json!({ "model": model }), "input"),
            (json!({ "model": model, "input": "" }), "input"),
            (json!({ "model": model, "input": [] }), "input"),
            (json!({ "model": model, "input": 7 }), "input"),
            (json!({ "model": model, "input": many }), "input"),
            (
                json!({ "model": model, "input": [{ "type": "telepathy" }] }),
                "input[0].type",
            ),
            (
                json!({ "model": model, "input": [{ "role": "user", "content": [{ "type": "input_audio" }] }] }),
                "input[0].content[0].type",
            ),
            (
                json!({ "model": model, "input": [{ "role": "user", "content": 5 }] }),
                "input[0].content",
            ),
            (
                json!({ "model": model, "input": [{ "type": "function_call_output", "output": "x" }] }),
                "input[0].call_id",
            ),
            (
                json!({ "model": model, "input": "x", "instructions": 1 }),
                "instructions",
            ),
            (
                json!({ "model": model, "input": "x", "temperature": "hot" }),
                "temperature",
            ),
            (
                json!({ "model": model, "input": "x", "tools": [{ "name": "f" }] }),
                "tools[0].type",
            ),
            (
                json!({ "model": model, "input": "x", "previous_response_id": 3 }),
                "previous_response_id",
            ),
            (
                json!({ "model": model, "input": "x", "store": "no" }),
                "store",
            ),
            (
                json!({ "model": model, "input": "x", "purpose": 7 }),
                "purpose",
            ),
        ] {
            let refused = post(&server, &key, &body).await;
            assert_eq!(refused.status(), 400, "{body}");
            let error: Value = refused.json().await.unwrap();
            assert_eq!(error["error"]["code"], "invalid_request", "{error}");
            assert_eq!(error["error"]["param"], param, "{error}");
            assert!(error["error"]["type"].is_string(), "{error}");
        }
    }
    let refused = post(&server, &key, &json!({ "input": "x" })).await;
    assert_eq!(error_code(refused, 400).await, "invalid_request");
    let unknown = post(&server, &key, &json!({ "model": "nope", "input": "x" })).await;
    assert_eq!(error_code(unknown, 404).await, "model_not_found");
    assert!(scripted.script.calls().is_empty());
}

#[tokio::test]
async fn a_codex_cli_request_is_accepted_and_dropped_tools_are_named() {
    let Setup {
        anthropic, server, ..
    } = setup().await;
    let (_, key) = server.create_key(&[]);
    // As Codex CLI sends it: developer and user items with input_text, no
    // instructions, reasoning, encrypted reasoning asked back, no storage,
    // a prompt cache key, function tools with `strict`, a namespace tool
    // and a hosted web search, and the x-codex-* headers.
    let body = json!({
        "model": "claude-ok",
        "input": [
            { "type": "message", "role": "developer", "content": [{ "type": "input_text", "text": "<permissions instructions>sandboxed</permissions instructions>" }] },
            { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "<environment_context><cwd>/tmp</cwd></environment_context>" }] },
            { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "list the files" }] },
        ],
        "tools": [
            { "type": "function", "name": "shell", "description": "Runs a shell command", "strict": false,
              "parameters": { "type": "object", "properties": { "command": { "type": "array", "items": { "type": "string" } } },
                              "required": ["command"], "additionalProperties": false } },
            { "type": "namespace", "name": "mcp__docs", "description": "Docs tools", "tools": [] },
            { "type": "web_search" },
        ],
        "tool_choice": "auto", "parallel_tool_calls": false,
        "reasoning": { "effort": "medium", "summary": "auto" },
        "store": false, "stream": true, "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0199a1b2-c3d4", "client_metadata": { "originator": "codex_cli_rs" },
        "text": { "verbosity": "medium" },
    });
    let response = post_with(
        &server,
        &key,
        &body,
        &[
            ("x-codex-turn-metadata", "{\"turn\":1}"),
            ("x-codex-beta-features", "unified_exec"),
            ("session-id", "0199a1b2-c3d4"),
            ("thread-id", "0199a1b2-c3d4"),
            ("originator", "codex_cli_rs"),
        ],
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["x-tollgate-dropped-tools"],
        "namespace, web_search"
    );
    let events = stream_events(response).await;
    let done = events.last().unwrap();
    assert_eq!(done["type"], "response.completed", "{done}");
    assert_eq!(output_text(&done["response"]), "hello from claude");
    let sent = &anthropic.recorded.bodies()[0];
    assert_eq!(sent["tools"].as_array().unwrap().len(), 1, "{sent}");
    assert_eq!(sent["tools"][0]["name"], "shell");
    assert!(sent["system"].to_string().contains("sandboxed"), "{sent}");
    // Anthropic takes consecutive user turns as one message.
    assert_eq!(
        sent["messages"],
        json!([{ "role": "user", "content": [
            { "type": "text", "text": "<environment_context><cwd>/tmp</cwd></environment_context>" },
            { "type": "text", "text": "list the files" },
        ] }])
    );
    assert!(
        anthropic.recorded.headers()[0].get("session-id").is_none(),
        "client headers are not forwarded"
    );

    // Reasoning items Codex sends back are dropped, not refused.
    let mut again = body.clone();
    again["stream"] = json!(false);
    again["input"].as_array_mut().unwrap().push(
        json!({ "type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA" }),
    );
    let served = post(&server, &key, &again).await;
    assert_eq!(served.status(), 200);
}

#[tokio::test]
async fn a_translated_stream_of_a_failing_chain_is_an_openai_error() {
    let Setup {
        scripted, server, ..
    } = setup().await;
    let (_, key) = server.create_key(&[]);
    scripted.script.always("compat-up", Step::Status(503));
    let refused = post(
        &server,
        &key,
        &json!({ "model": "compat", "input": "hi", "stream": true }),
    )
    .await;
    assert_eq!(error_code(refused, 502).await, "all_providers_failed");
}

#[tokio::test]
async fn a_translated_stream_cut_mid_way_ends_with_an_error_event_and_is_billed() {
    let Setup {
        anthropic, server, ..
    } = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let events = stream_events(
        post(
            &server,
            &key,
            &json!({ "model": "claude-cut", "input": "hi", "stream": true }),
        )
        .await,
    )
    .await;
    let kinds = kinds(&events);
    assert_eq!(kinds[0], "response.created");
    assert!(kinds.contains(&"response.output_text.delta"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"error"), "{kinds:?}");
    assert!(!kinds.contains(&"response.completed"), "{kinds:?}");
    let error = events.last().unwrap();
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{error}"
    );
    let records = usage_records(&server, &key_id).await;
    assert_eq!(records.len(), 1, "what was relayed is billed");
    assert_eq!(records[0]["endpoint"], "responses");
    assert_eq!(anthropic.recorded.count(), 1);
}
