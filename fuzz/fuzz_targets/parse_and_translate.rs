//! Any bytes as a chat request body: parsing must answer `Ok` or an
//! `ApiError`, never panic; a parsed request goes through what the gateway
//! does next (token estimate, context truncation) and through the
//! Anthropic and Gemini request translations. The same bytes, as JSON, are
//! also fed to the answer translations (an upstream's answer is input too).
#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tollgate::gateway::truncate;
use tollgate::providers::tokens;
use tollgate::providers::wire::chat;
use tollgate::providers::{anthropic, gemini};

fuzz_target!(|data: &[u8]| {
    if let Ok(parsed) = chat::parse(data) {
        let body = Value::Object(parsed.body);
        let _ = tokens::estimate_messages(&body["messages"]);
        let mut messages = body["messages"].clone();
        let _ = truncate::fit(&mut messages, 64, 16);
        let _ = anthropic::to_messages(&body, Some(1024), parsed.stream);
        let _ = gemini::to_generate_content(&body, &HashMap::new());
    }
    if let Ok(answer) = serde_json::from_slice::<Value>(data) {
        let _ = anthropic::from_message(&answer, "fuzz");
        let _ = gemini::from_response(&answer, "fuzz");
    }
});
