//! `auto_truncate`: when the prompt exceeds the routed model's context
//! window, drop the oldest non-system messages until it fits, and say so in
//! a receipt on the response.
//!
//! Messages are dropped in groups: an assistant message that made tool
//! calls goes together with the tool results that answer it, since an
//! upstream refuses a tool result whose call is missing. System (and
//! developer) messages and the newest message always stay. Sizes use the
//! same estimate as everywhere else (about 4 characters per token), and the
//! room kept for the answer is the request's `max_tokens`, if any.

use serde_json::{Value, json};

use super::tokens;

/// What was dropped, for the `truncation` field of the response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub messages_dropped: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub context_window: u32,
}

impl Receipt {
    pub fn view(&self) -> Value {
        json!({
            "messages_dropped": self.messages_dropped,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "context_window": self.context_window,
        })
    }
}

fn is_pinned(message: &Value) -> bool {
    matches!(message["role"].as_str(), Some("system" | "developer"))
}

/// Truncates `messages` in place to fit `context_window` less `reserve`.
/// Returns a receipt when anything was dropped.
pub fn fit(messages: &mut Value, context_window: u32, reserve: u64) -> Option<Receipt> {
    let list = messages.as_array_mut()?;
    let budget = u64::from(context_window).saturating_sub(reserve);
    let before: u64 = list.iter().map(tokens::estimate_message).sum();
    if before <= budget {
        return None;
    }
    let mut total = before;
    let mut dropped = 0;
    loop {
        if total <= budget {
            break;
        }
        // The oldest droppable group: a non-pinned message that is not the
        // newest, with the tool results that follow an assistant's calls.
        let last = list.len() - 1;
        let Some(start) = (0..last).find(|&i| !is_pinned(&list[i])) else {
            break;
        };
        // A tool result whose call is already gone is dropped on its own.
        let mut end = start + 1;
        if list[start]["tool_calls"].is_array() {
            while end < last && list[end]["role"] == "tool" {
                end += 1;
            }
        }
        let group: u64 = list[start..end].iter().map(tokens::estimate_message).sum();
        list.drain(start..end);
        total -= group;
        dropped += end - start;
    }
    (dropped > 0).then_some(Receipt {
        messages_dropped: dropped,
        tokens_before: before,
        tokens_after: total,
        context_window,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(role: &str, chars: usize) -> Value {
        json!({ "role": role, "content": "x".repeat(chars) })
    }

    #[test]
    fn keeps_system_messages_and_the_newest_turns() {
        // Each 400-character message is 104 tokens with its overhead.
        let mut messages = json!([
            text("system", 400),
            text("user", 400),
            text("assistant", 400),
            text("user", 400),
            text("user", 400)
        ]);
        let receipt = fit(&mut messages, 320, 0).unwrap();
        let roles: Vec<&str> = messages
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["system", "user", "user"]);
        assert_eq!(
            receipt,
            Receipt {
                messages_dropped: 2,
                tokens_before: 520,
                tokens_after: 312,
                context_window: 320
            }
        );
    }

    #[test]
    fn a_tool_call_and_its_results_are_dropped_together() {
        let call = json!({ "role": "assistant", "content": null,
            "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "f", "arguments": "{}" } }] });
        let result = json!({ "role": "tool", "tool_call_id": "c1", "content": "x".repeat(400) });
        let mut messages = json!([text("user", 40), call, result, text("user", 40)]);
        fit(&mut messages, 30, 0).unwrap();
        let list = messages.as_array().unwrap();
        assert!(
            list.iter().all(|m| m["role"] != "tool"),
            "no orphaned tool result"
        );
        assert_eq!(list.last().unwrap()["content"], "x".repeat(40));
    }

    #[test]
    fn a_prompt_that_fits_is_untouched() {
        let mut messages = json!([text("user", 40)]);
        assert!(fit(&mut messages, 1000, 100).is_none());
        assert_eq!(messages.as_array().unwrap().len(), 1);
    }
}
