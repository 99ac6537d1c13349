//! Local token counts for `POST /v1/messages/count_tokens` on models no
//! Anthropic provider serves (docs/messages.md, "Counting tokens").
//!
//! OpenAI-kind models are counted with the o200k_base encoding (GPT-4o,
//! GPT-4.1, GPT-5, the o-series) by the rules OpenAI publishes in its
//! cookbook ("How to count tokens with tiktoken"): 3 tokens per message
//! plus its role, content and name (1 more for a name), 3 for the reply's
//! priming, and the function definitions by the cookbook's GPT-4o
//! constants. Tool calls and results count their text; an image counts 85
//! tokens (a low-detail image; a larger one costs more upstream). Other
//! models get the gateway's estimate (about 4 characters a token, 4 per
//! message), the one the token limits reserve with.

use serde_json::Value;

use crate::providers::tokens;

fn o200k(text: &str) -> u64 {
    tiktoken_rs::o200k_base_singleton().count_ordinary(text) as u64
}

/// Tokens of a low-detail image on GPT-4o.
const IMAGE_TOKENS: u64 = 85;

/// The prompt tokens of a chat request (`messages`, `tools`) on an
/// OpenAI model, by the o200k_base encoding.
pub fn openai_tokens(messages: &Value, tools: &Value) -> u64 {
    let mut total = 0;
    for message in messages.as_array().into_iter().flatten() {
        total += 3;
        total += o200k(message["role"].as_str().unwrap_or_default());
        total += match &message["content"] {
            Value::String(text) => o200k(text),
            Value::Array(parts) => parts
                .iter()
                .map(|part| match part["text"].as_str() {
                    Some(text) => o200k(text),
                    None => IMAGE_TOKENS,
                })
                .sum(),
            _ => 0,
        };
        if let Some(name) = message["name"].as_str() {
            total += o200k(name) + 1;
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            total += o200k(call["function"]["name"].as_str().unwrap_or_default());
            total += o200k(call["function"]["arguments"].as_str().unwrap_or_default());
        }
    }
    total += 3;
    total + function_tokens(tools)
}

/// The cookbook's count of function definitions on GPT-4o.
fn function_tokens(tools: &Value) -> u64 {
    const FUNC_INIT: i64 = 7;
    const PROP_INIT: i64 = 3;
    const PROP_KEY: i64 = 3;
    const ENUM_INIT: i64 = -3;
    const ENUM_ITEM: i64 = 3;
    const FUNC_END: i64 = 12;
    let Some(tools) = tools.as_array().filter(|t| !t.is_empty()) else {
        return 0;
    };
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let mut total: i64 = 0;
    for tool in tools {
        let function = &tool["function"];
        total += FUNC_INIT;
        let description = text(&function["description"]);
        let line = format!(
            "{}:{}",
            text(&function["name"]),
            description.strip_suffix('.').unwrap_or(&description)
        );
        total += o200k(&line) as i64;
        let Some(properties) = function["parameters"]["properties"]
            .as_object()
            .filter(|p| !p.is_empty())
        else {
            continue;
        };
        total += PROP_INIT;
        for (name, property) in properties {
            total += PROP_KEY;
            if let Some(items) = property["enum"].as_array() {
                total += ENUM_INIT;
                for item in items {
                    total += ENUM_ITEM + o200k(&text(item)) as i64;
                }
            }
            let description = text(&property["description"]);
            let line = format!(
                "{name}:{}:{}",
                text(&property["type"]),
                description.strip_suffix('.').unwrap_or(&description)
            );
            total += o200k(&line) as i64;
        }
    }
    total += FUNC_END;
    total.max(0) as u64
}

/// The gateway's estimate of a chat request's prompt: its messages and
/// its tool definitions' JSON, about 4 characters a token.
pub fn estimated_tokens(messages: &Value, tools: &Value) -> u64 {
    let tools = match tools {
        Value::Array(list) if !list.is_empty() => tokens::estimate_text(&tools.to_string()),
        _ => 0,
    };
    tokens::estimate_messages(messages) + tools
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Counts published in OpenAI's cookbook ("How to count tokens with
    /// tiktoken"), section 5, for o200k_base.
    #[test]
    fn o200k_matches_the_published_counts() {
        assert_eq!(o200k("tiktoken is great!"), 6);
        assert_eq!(o200k("antidisestablishmentarianism"), 6);
        assert_eq!(o200k("2 + 2 = 4"), 7);
        assert_eq!(o200k("お誕生日おめでとう"), 8);
    }

    /// The cookbook's example conversation: 124 prompt tokens on gpt-4o,
    /// as counted by the OpenAI API.
    #[test]
    fn messages_match_the_published_gpt_4o_count() {
        let messages = json!([
            { "role": "system", "content": "You are a helpful, pattern-following assistant that translates corporate jargon into plain English." },
            { "role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth." },
            { "role": "system", "name": "example_assistant", "content": "Things working well together will increase revenue." },
            { "role": "system", "name": "example_user", "content": "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage." },
            { "role": "system", "name": "example_assistant", "content": "Let's talk later when we're less busy about how to do better." },
            { "role": "user", "content": "This late pivot means we don't have time to boil the ocean for the client deliverable." }
        ]);
        assert_eq!(openai_tokens(&messages, &Value::Null), 124);
    }

    /// The cookbook's tools example: 101 prompt tokens on gpt-4o.
    #[test]
    fn tools_match_the_published_gpt_4o_count() {
        let tools = json!([{ "type": "function", "function": {
            "name": "get_current_weather",
            "description": "Get the current weather in a given location",
            "parameters": { "type": "object", "properties": {
                "location": { "type": "string", "description": "The city and state, e.g. San Francisco, CA" },
                "unit": { "type": "string", "description": "The unit of temperature to return", "enum": ["celsius", "fahrenheit"] }
            }, "required": ["location"] } } }]);
        let messages = json!([
            { "role": "system", "content": "You are a helpful assistant that can answer to questions about the weather." },
            { "role": "user", "content": "What's the weather like in San Francisco?" }
        ]);
        assert_eq!(openai_tokens(&messages, &tools), 101);
    }
}
