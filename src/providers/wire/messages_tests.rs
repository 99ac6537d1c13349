//! Golden translations of `messages.rs` and `messages_answer.rs`, both
//! ways.

use super::*;
use crate::providers::wire::messages_answer::{stop_reason, to_message};

fn chat_of(body: Value) -> Translated {
    to_chat(&body, None).unwrap()
}

#[test]
fn golden_request_system_images_tools_and_results() {
    let translated = chat_of(json!({
        "model": "gpt",
        "max_tokens": 100,
        "temperature": 0.5,
        "top_p": 0.9,
        "stop_sequences": ["END"],
        "system": [{ "type": "text", "text": "Be brief.", "cache_control": { "type": "ephemeral" } }],
        "messages": [
            { "role": "user", "content": [
                { "type": "text", "text": "What is this?" },
                { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo=" } },
                { "type": "image", "source": { "type": "url", "url": "https://img.example/cat.png" } }
            ]},
            { "role": "assistant", "content": [
                { "type": "thinking", "thinking": "hmm", "signature": "s" },
                { "type": "text", "text": "Let me look." },
                { "type": "tool_use", "id": "toolu_1", "name": "lookup", "input": { "q": "cat" } }
            ]},
            { "role": "user", "content": [
                { "type": "tool_result", "tool_use_id": "toolu_1", "content": [{ "type": "text", "text": "a cat" }] },
                { "type": "tool_result", "tool_use_id": "toolu_2", "content": "boom", "is_error": true },
                { "type": "text", "text": "Thanks" }
            ]}
        ],
        "tools": [
            { "name": "lookup", "description": "Looks up", "input_schema": { "type": "object", "properties": { "q": { "type": "string" } } }, "cache_control": { "type": "ephemeral" }, "defer_loading": true },
            { "type": "web_search_20250305", "name": "web_search" }
        ],
        "tool_choice": { "type": "any", "disable_parallel_tool_use": true },
    }));
    assert_eq!(
        Value::Object(translated.body),
        json!({
            "model": "gpt",
            "messages": [
                { "role": "system", "content": "Be brief." },
                { "role": "user", "content": [
                    { "type": "text", "text": "What is this?" },
                    { "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw0KGgo=" } },
                    { "type": "image_url", "image_url": { "url": "https://img.example/cat.png" } }
                ]},
                { "role": "assistant", "content": "Let me look.", "tool_calls": [
                    { "id": "toolu_1", "type": "function", "function": { "name": "lookup", "arguments": "{\"q\":\"cat\"}" } }
                ]},
                { "role": "tool", "tool_call_id": "toolu_1", "content": "a cat" },
                { "role": "tool", "tool_call_id": "toolu_2", "content": "[error] boom" },
                { "role": "user", "content": "Thanks" }
            ],
            "max_tokens": 100,
            "temperature": 0.5,
            "top_p": 0.9,
            "stop": ["END"],
            "tools": [{ "type": "function", "function": {
                "name": "lookup", "description": "Looks up",
                "parameters": { "type": "object", "properties": { "q": { "type": "string" } } } } }],
            "tool_choice": "required",
            "parallel_tool_calls": false,
        })
    );
    assert_eq!(
        translated.dropped,
        ["thinking blocks", "tools[1] (web_search_20250305)"]
    );
}

#[test]
fn claude_code_fields_are_accepted_and_dropped_by_rule() {
    let translated = to_chat(
        &json!({
            "model": "gpt", "max_tokens": 32000, "stream": true,
            "thinking": { "type": "adaptive" },
            "context_management": { "edits": [] },
            "output_config": { "effort": "high" },
            "metadata": { "user_id": "user_abc_session_1" },
            "system": [{ "type": "text", "text": "You are Claude Code." }],
            "messages": [
                { "role": "system", "content": "Extra rules." },
                { "role": "user", "content": "hi" }
            ],
        }),
        Some(16384),
    )
    .unwrap();
    assert!(translated.stream);
    assert_eq!(translated.body["max_tokens"], 16384, "clamped to the model");
    assert_eq!(
        translated.body["messages"][0],
        json!({ "role": "system", "content": "You are Claude Code.\n\nExtra rules." })
    );
    assert_eq!(
        translated.dropped,
        [
            "thinking",
            "context_management",
            "output_config",
            "metadata"
        ]
    );
}

#[test]
fn tool_choice_and_stop_reasons_map_both_ways() {
    let base = |choice: Value| {
        chat_of(json!({ "model": "m", "max_tokens": 5, "messages": [{ "role": "user", "content": "x" }],
            "tools": [{ "name": "f", "input_schema": { "type": "object" } }], "tool_choice": choice }))
        .body["tool_choice"]
            .clone()
    };
    assert_eq!(base(json!({ "type": "auto" })), "auto");
    assert_eq!(base(json!({ "type": "none" })), "none");
    assert_eq!(
        base(json!({ "type": "tool", "name": "f" })),
        json!({ "type": "function", "function": { "name": "f" } })
    );
    assert_eq!(stop_reason(&json!("stop")), "end_turn");
    assert_eq!(stop_reason(&json!("length")), "max_tokens");
    assert_eq!(stop_reason(&json!("tool_calls")), "tool_use");
    assert_eq!(stop_reason(&json!("content_filter")), "refusal");
}

#[test]
fn golden_answer_text_tool_use_and_usage() {
    let completion = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-upstream",
        "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Checking.",
            "tool_calls": [{ "id": "call_1", "type": "function", "function": { "name": "lookup", "arguments": "{\"q\":\"cat\"}" } }] } }],
        "usage": { "prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25, "prompt_tokens_details": { "cached_tokens": 8 } },
        "billing": { "cost": 0.1 },
    });
    assert_eq!(
        to_message(&completion, "gpt"),
        json!({
            "id": "msg_chatcmpl-1", "type": "message", "role": "assistant", "model": "gpt",
            "content": [
                { "type": "text", "text": "Checking." },
                { "type": "tool_use", "id": "call_1", "name": "lookup", "input": { "q": "cat" } }
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": { "input_tokens": 12, "output_tokens": 5, "cache_read_input_tokens": 8 },
            "billing": { "cost": 0.1 },
        })
    );
}

#[test]
fn malformed_requests_name_the_field() {
    let user = json!([{ "role": "user", "content": "x" }]);
    let cases = [
        (json!({ "messages": user }), "model"),
        (json!({ "model": 5, "messages": user }), "model"),
        (json!({ "model": "m" }), "messages"),
        (json!({ "model": "m", "messages": [] }), "messages"),
        (json!({ "model": "m", "messages": "hi" }), "messages"),
        (
            json!({ "model": "m", "messages": [{ "role": "robot", "content": "x" }] }),
            "messages[0].role",
        ),
        (
            json!({ "model": "m", "messages": [{ "role": "user", "content": 7 }] }),
            "messages[0].content",
        ),
        (
            json!({ "model": "m", "messages": [{ "role": "user", "content": [{ "type": "video" }] }] }),
            "messages[0].content[0].type",
        ),
        (
            json!({ "model": "m", "messages": [{ "role": "user", "content": [{ "type": "text" }] }] }),
            "messages[0].content[0].text",
        ),
        (
            json!({ "model": "m", "messages": [{ "role": "user", "content": [{ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "@@" } }] }] }),
            "messages[0].content[0].source",
        ),
        (
            json!({ "model": "m", "messages": [{ "role": "user", "content": [{ "type": "tool_result" }] }] }),
            "messages[0].content[0].tool_use_id",
        ),
        (
            json!({ "model": "m", "messages": user, "max_tokens": 0 }),
            "max_tokens",
        ),
        (
            json!({ "model": "m", "messages": user, "max_tokens": "many" }),
            "max_tokens",
        ),
        (
            json!({ "model": "m", "messages": user, "temperature": 1.5 }),
            "temperature",
        ),
        (
            json!({ "model": "m", "messages": user, "stop_sequences": "END" }),
            "stop_sequences",
        ),
        (
            json!({ "model": "m", "messages": user, "tools": {} }),
            "tools",
        ),
        (
            json!({ "model": "m", "messages": user, "tools": [{ "description": "x" }] }),
            "tools[0].name",
        ),
        (
            json!({ "model": "m", "messages": user, "tool_choice": { "type": "sometimes" } }),
            "tool_choice.type",
        ),
        (
            json!({ "model": "m", "messages": user, "stream": "yes" }),
            "stream",
        ),
        (
            json!({ "model": "m", "messages": user, "system": 3 }),
            "system",
        ),
        (
            json!({ "model": "m", "messages": [{ "role": "system", "content": "only" }] }),
            "messages",
        ),
    ];
    for (body, param) in cases {
        let error = to_chat(&body, None).unwrap_err();
        assert_eq!(error.param.as_deref(), Some(param), "{body}");
    }
}

#[test]
fn the_first_block_or_option_at_fault_is_named() {
    let user = json!([{ "role": "user", "content": "x" }]);
    let cases = [
        (
            json!({ "model": "m", "messages": [{ "role": "user", "content": [
                { "type": "image", "source": { "type": "url" } }, { "type": "text" }] }] }),
            "messages[0].content[0].source.url",
        ),
        (
            json!({ "model": "m", "messages": [{ "role": "assistant", "content": [
                "fine", { "type": "tool_use", "id": "t1" }] }] }),
            "messages[0].content[1]",
        ),
        (
            json!({ "model": "m", "messages": [{ "role": "assistant", "content": [{ "type": "image" }] }] }),
            "messages[0].content[0].type",
        ),
        (
            json!({ "model": "m", "messages": user, "tool_choice": { "type": "tool" } }),
            "tool_choice.name",
        ),
        (
            json!({ "model": "m", "messages": user, "top_p": "high" }),
            "top_p",
        ),
    ];
    for (body, param) in cases {
        let error = to_chat(&body, None).unwrap_err();
        assert_eq!(error.param.as_deref(), Some(param), "{body}");
    }
}
