//! Putting values back into a streamed answer. A placeholder may arrive
//! split across chunks (`[EMA` then `IL_1]`), so the text from an unclosed
//! `[` that could still become a placeholder is held back until the next
//! chunk decides it, and flushed when the choice finishes or the stream
//! ends.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::providers::ChunkStream;

/// One text stream's restorer.
#[derive(Debug, Clone)]
pub struct StreamRestorer {
    table: Arc<HashMap<String, String>>,
    held: String,
}

impl StreamRestorer {
    pub fn new(table: Arc<HashMap<String, String>>) -> StreamRestorer {
        StreamRestorer {
            table,
            held: String::new(),
        }
    }

    /// The text that can be released after `text` arrived.
    pub fn push(&mut self, text: &str) -> String {
        let mut combined = std::mem::take(&mut self.held);
        combined.push_str(text);
        let keep_from = combined
            .rfind('[')
            .filter(|&open| !combined[open..].contains(']'))
            .filter(|&open| {
                let tail = &combined[open..];
                self.table.keys().any(|p| p.starts_with(tail))
            });
        if let Some(open) = keep_from {
            self.held = combined[open..].to_owned();
            combined.truncate(open);
        }
        super::restore(&self.table, &combined).into_owned()
    }

    /// What is still held (an unfinished placeholder, as it came).
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }
}

/// `chunks` with the placeholders of `table` put back into each choice's
/// `delta.content`. The chunks keep their order and number, except one
/// added at the end when text is still held once the upstream is done.
pub fn restore_stream(chunks: ChunkStream, table: Arc<HashMap<String, String>>) -> ChunkStream {
    struct State {
        chunks: ChunkStream,
        table: Arc<HashMap<String, String>>,
        choices: BTreeMap<u64, StreamRestorer>,
        last: Value,
        done: bool,
    }
    let state = State {
        chunks,
        table,
        choices: BTreeMap::new(),
        last: Value::Null,
        done: false,
    };
    Box::pin(futures::stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        match s.chunks.next().await {
            Some(Ok(mut chunk)) => {
                for choice in chunk["choices"].as_array_mut().into_iter().flatten() {
                    let index = choice["index"].as_u64().unwrap_or(0);
                    let restorer = s
                        .choices
                        .entry(index)
                        .or_insert_with(|| StreamRestorer::new(s.table.clone()));
                    let mut text = match choice["delta"]["content"].as_str() {
                        Some(content) => restorer.push(content),
                        None => String::new(),
                    };
                    if !choice["finish_reason"].is_null() {
                        text.push_str(&restorer.finish());
                    }
                    if choice["delta"]["content"].is_string() || !text.is_empty() {
                        choice["delta"]["content"] = Value::String(text);
                    }
                }
                s.last = json!({ "id": chunk["id"], "created": chunk["created"], "model": chunk["model"] });
                Some((Ok(chunk), s))
            }
            Some(Err(error)) => {
                s.done = true;
                Some((Err(error), s))
            }
            None => {
                s.done = true;
                let held: Vec<Value> = s
                    .choices
                    .iter_mut()
                    .filter_map(|(index, r)| {
                        let text = r.finish();
                        (!text.is_empty()).then(|| {
                            json!({ "index": index, "delta": { "content": text }, "finish_reason": null })
                        })
                    })
                    .collect();
                if held.is_empty() {
                    return None;
                }
                let chunk = json!({
                    "id": s.last["id"],
                    "object": "chat.completion.chunk",
                    "created": s.last["created"],
                    "model": s.last["model"],
                    "choices": held,
                });
                Some((Ok(chunk), s))
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Arc<HashMap<String, String>> {
        let mut table = HashMap::new();
        table.insert("[EMAIL_1]".to_owned(), "anna@example.org".to_owned());
        table.insert("[IBAN_12]".to_owned(), "DE89370400440532013000".to_owned());
        Arc::new(table)
    }

    #[test]
    fn a_placeholder_split_at_every_position_is_restored() {
        let answer = "Write to [EMAIL_1] and pay [IBAN_12] [not] [EMAIL_9] done [";
        let expected =
            "Write to anna@example.org and pay DE89370400440532013000 [not] [EMAIL_9] done [";
        for cut in 0..=answer.len() {
            for second in cut..=answer.len() {
                let mut r = StreamRestorer::new(table());
                let mut out = r.push(&answer[..cut]);
                out.push_str(&r.push(&answer[cut..second]));
                out.push_str(&r.push(&answer[second..]));
                out.push_str(&r.finish());
                assert_eq!(out, expected, "cut at {cut} and {second}");
            }
        }
    }

    #[test]
    fn one_character_chunks_are_restored() {
        let mut r = StreamRestorer::new(table());
        let mut out = String::new();
        for c in "a [EMAIL_1]!".chars() {
            out.push_str(&r.push(&c.to_string()));
        }
        out.push_str(&r.finish());
        assert_eq!(out, "a anna@example.org!");
    }
}
