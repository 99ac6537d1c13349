//! The conversation record's two bodies, stored compactly (schema 10).
//!
//! Logged bodies are JSON that repeats itself from one request to the
//! next: the same keys, roles and object names, in the same order. Each
//! body is compressed as one LZ4 block (`lz4_flex`, safe code, no frame)
//! against [`DICTIONARY`], a built-in text of what chat requests and
//! completions of the OpenAI, Anthropic and Gemini dialects repeat, and is
//! kept compressed only when that is smaller. A stored body is a tag byte,
//! then:
//!
//! - tag `0` ([`PLAIN`]): the text, length-prefixed;
//! - tag `1` ([`DICTIONARY_ID`]): the text's length in bytes, then the
//!   LZ4 block, length-prefixed.
//!
//! The tag is the dictionary's id: the dictionary is part of the stored
//! format and is never edited. A better one gets the next id, and the
//! build that writes it keeps this one to read the bodies written before.
//!
//! The stored bodies are the users' data: they read back byte for byte, and
//! a malformed body (unknown tag, a block that does not decode, a length
//! or text that does not match) is [`StoreError::Corrupt`], never a panic.
//! LZ4 blocks carry no checksum: like plain text, a damaged byte that still
//! decodes is not detected here.

use crate::store::StoreError;
use crate::store::compact::{In, Out};

/// A body stored as its text.
pub const PLAIN: u8 = 0;
/// A body compressed against [`DICTIONARY`].
pub const DICTIONARY_ID: u8 = 1;

/// What logged chat bodies repeat, as the gateway logs them: requests with
/// their members sorted (PII redaction rewrites them so) or in the
/// caller's order (redaction off), completions as the gateway answers
/// them. LZ4 finds matches anywhere in the last 64 KiB before the text;
/// the most frequent fragments come last. Part of the stored format:
/// never edit it (see the module's header).
pub const DICTIONARY: &str = concat!(
    // Gemini.
    r#"{"contents":[{"parts":[{"text":""#,
    r#""}],"role":"user"}],"generationConfig":{"maxOutputTokens":1024,"temperature":0.7},"systemInstruction":{"parts":[{"text":""#,
    r#"{"candidates":[{"content":{"parts":[{"text":""#,
    r#""}],"role":"model"},"finishReason":"STOP","index":0}],"modelVersion":"gemini-2.0-flash","usageMetadata":{"candidatesTokenCount":"#,
    r#","promptTokenCount":"#,
    r#","totalTokenCount":"#,
    // Anthropic.
    r#"{"model":"claude-sonnet-4-20250514","max_tokens":1024,"system":"You are a helpful assistant.","messages":[{"role":"user","content":[{"type":"text","text":""#,
    r#"{"id":"msg_"#,
    r#"","type":"message","role":"assistant","content":[{"type":"text","text":""#,
    r#""}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":"#,
    r#","output_tokens":"#,
    r#"{"max_tokens":1024,"messages":[{"content":[{"text":""#,
    r#"","type":"text"}],"role":"user"}],"model":"claude-3-5-haiku-latest","system":""#,
    r#"{"input_schema":{"properties":{"#,
    r#""tool_use","#,
    // OpenAI, in the caller's order.
    r#"{"model":"gpt-4o","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":""#,
    r#""},{"role":"assistant","content":""#,
    r#""},{"role":"user","content":""#,
    r#""}],"temperature":0.7,"top_p":1,"n":1,"max_tokens":"#,
    r#","max_completion_tokens":"#,
    r#","stream":true,"stream_options":{"include_usage":true}}"#,
    r#","tools":[{"type":"function","function":{"name":""#,
    r#"","description":""#,
    r#"","parameters":{"type":"object","properties":{"#,
    r#"":{"type":"string","description":""#,
    r#""}},"required":[""#,
    r#""]}}}],"tool_choice":"auto","#,
    r#""response_format":{"type":"json_object"},"#,
    r#""presence_penalty":0,"frequency_penalty":0,"seed":"#,
    r#","user":""#,
    // OpenAI completions as providers send them.
    r#"{"id":"chatcmpl-"#,
    r#"","object":"chat.completion","created":17"#,
    r#","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":""#,
    r#"","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":"#,
    r#","completion_tokens":"#,
    r#","total_tokens":"#,
    r#","prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_"#,
    // Sorted members: tool calls, finish reasons, models.
    r#"{"function":{"arguments":"{\""#,
    r#"\"}","name":""#,
    r#""},"id":"call_"#,
    r#"","type":"function"}]"#,
    r#","tool_calls":["#,
    r#""content_filter""length""tool_calls""#,
    r#""gpt-4o-mini""gpt-4.1-mini""gemini-2.5-flash""claude-3-7-sonnet-latest""mistral-large-latest""llama-3.3-70b-versatile""#,
    r#""max_tokens":"#,
    r#","temperature":"#,
    // Whole bodies as the gateway logs them (members sorted): LZ4 takes
    // the first match it finds, so the most common spellings come last.
    r#"{"max_tokens":1024,"messages":[{"content":"","role":"user"}],"model":"gpt-4o-mini"}"#,
    r#"{"messages":[{"content":"","role":"system"},{"content":"","role":"assistant"},{"content":"","role":"user"}],"model":"gpt-4o-mini","stream":true,"temperature":0.7}"#,
    r#"{"choices":[{"finish_reason":"stop","index":0,"message":{"content":"","role":"assistant"}}],"created":1795700000,"id":"chatcmpl-","model":"gpt-4o-mini","object":"chat.completion","usage":{"completion_tokens":10,"prompt_tokens":10,"total_tokens":20}}"#,
);

/// Below this many bytes LZ4 finds nothing to match: kept as text.
const MIN_PACKED: usize = 13;
/// LZ4 turns one byte into at most 255: a larger stated length is damage,
/// refused before it is allocated.
const MAX_RATIO: usize = 255;

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("a conversation body is malformed: {what}"))
}

/// The bytes of `n` as a varint.
fn varint_len(n: usize) -> usize {
    (usize::BITS - (n | 1).leading_zeros()).div_ceil(7) as usize
}

/// Writes `text`, compressed when that is smaller.
pub fn write(out: &mut Out, text: &str) {
    let plain = text.as_bytes();
    if plain.len() >= MIN_PACKED {
        let packed = lz4_flex::block::compress_with_dict(plain, DICTIONARY.as_bytes());
        // Both forms start with the tag and a length; compare the rest.
        if varint_len(packed.len()) + packed.len() < plain.len() {
            out.byte(DICTIONARY_ID);
            out.u64(plain.len() as u64);
            out.bytes(&packed);
            return;
        }
    }
    out.byte(PLAIN);
    out.str(text);
}

/// Reads a body written by [`write`].
pub fn read(input: &mut In<'_>) -> Result<String, StoreError> {
    match input.byte()? {
        PLAIN => input.str(),
        DICTIONARY_ID => {
            let len = input.u64()?;
            unpack(len, input.bytes()?)
        }
        _ => Err(corrupt(
            "compressed with a dictionary this build does not know",
        )),
    }
}

fn unpack(len: u64, packed: &[u8]) -> Result<String, StoreError> {
    let len = usize::try_from(len)
        .ok()
        .filter(|&n| n <= packed.len().saturating_mul(MAX_RATIO))
        .ok_or_else(|| corrupt("longer than its block can hold"))?;
    let text = lz4_flex::block::decompress_with_dict(packed, len, DICTIONARY.as_bytes())
        .map_err(|e| corrupt(&format!("the LZ4 block does not decode ({e})")))?;
    if text.len() != len {
        return Err(corrupt("the LZ4 block decodes to another length"));
    }
    String::from_utf8(text).map_err(|_| corrupt("text is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(text: &str) -> Vec<u8> {
        let mut out = Out(Vec::new());
        write(&mut out, text);
        out.0
    }

    fn read_all(bytes: &[u8]) -> Result<String, StoreError> {
        let mut input = In::new(bytes);
        let text = read(&mut input)?;
        input.end()?;
        Ok(text)
    }

    const REQUEST: &str = r#"{"messages":[{"content":"Say hello in five words.","role":"user"}],"model":"mock-chat"}"#;
    const COMPLETION: &str = r#"{"choices":[{"finish_reason":"stop","index":0,"message":{"content":"Hello there, how are you?","role":"assistant"}}],"created":1795722925,"id":"chatcmpl-01M8CPTN2VBFK9EWRFB190ADXC","model":"gpt-4o-mini","object":"chat.completion","usage":{"completion_tokens":8,"prompt_tokens":10,"total_tokens":18}}"#;

    #[test]
    fn bodies_read_back_byte_for_byte() {
        let large = format!(
            "[{}]",
            (0..2_000)
                .map(|i| format!(r#"{{"role":"user","content":"message {i}"}}"#))
                .collect::<Vec<_>>()
                .join(",")
        );
        let random: String = (0..3_000u32)
            .map(|i| char::from_u32(0x20 + (i.wrapping_mul(2_654_435_761) >> 7) % 0x5e).unwrap())
            .collect();
        for text in [
            "",
            "x",
            "{}",
            REQUEST,
            COMPLETION,
            &large,
            &random,
            // Non-ASCII, inside JSON and as a stream's text.
            r#"{"messages":[{"content":"Grüße aus Köln, 東京 и Москва 👋","role":"user"}],"model":"m"}"#,
            "Das Wetter in Köln: sonnig, 22 °C. 天気は晴れ。 🌞",
            // A stream's text, not JSON.
            "echo: Say hello in five words.\n\necho: Say hello in five words.",
        ] {
            let bytes = stored(text);
            assert_eq!(read_all(&bytes).unwrap(), text);
            // Never larger than the text with its tag and length.
            assert!(bytes.len() <= 1 + varint_len(text.len()) + text.len());
        }
    }

    #[test]
    fn chat_bodies_are_stored_compressed_and_smaller() {
        for text in [REQUEST, COMPLETION] {
            let bytes = stored(text);
            assert_eq!(bytes[0], DICTIONARY_ID, "{text}");
            // At most 60 % of the text.
            assert!(
                bytes.len() * 5 < text.len() * 3,
                "{} of {text}",
                bytes.len()
            );
        }
        // Text that LZ4 cannot shorten stays as it is.
        assert_eq!(stored("a short one")[0], PLAIN);
        assert_eq!(stored("")[0], PLAIN);
    }

    #[test]
    fn a_damaged_body_is_corrupt_never_a_panic() {
        let good = stored(COMPLETION);
        let block_at = 1 + varint_len(COMPLETION.len()) + 1;
        let mut cases: Vec<Vec<u8>> = vec![
            vec![],
            vec![DICTIONARY_ID],
            vec![7, 1, b'x'],
            vec![DICTIONARY_ID, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 0],
            good[..good.len() - 1].to_vec(),
        ];
        // A stated length one off either way.
        for delta in [1u8, 0xff] {
            let mut bad = good.clone();
            bad[1] = bad[1].wrapping_add(delta);
            cases.push(bad);
        }
        // A block of bytes that are not LZ4.
        let mut garbage = good.clone();
        for b in &mut garbage[block_at..] {
            *b = 0xff;
        }
        cases.push(garbage);
        // Bytes that decode but are not UTF-8.
        let mut out = Out(vec![DICTIONARY_ID]);
        out.u64(2);
        out.bytes(&[0x20, 0xc3, 0x28]);
        cases.push(out.0);
        for bad in &cases {
            assert!(
                matches!(read_all(bad), Err(StoreError::Corrupt(_))),
                "{bad:?}"
            );
        }
        // Any single damaged byte or cut: an answer or Corrupt, no panic.
        for at in 0..good.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[at] ^= flip;
                let _ = read_all(&bad);
            }
            let _ = read_all(&good[..at]);
        }
    }

    #[test]
    fn the_dictionary_is_what_the_stored_bodies_were_written_with() {
        // Editing the dictionary would misread every stored body: a new
        // one takes a new id. This pins the bytes of dictionary 1.
        assert_eq!(DICTIONARY.len(), DICTIONARY_LEN);
        assert_eq!(
            crate::store::journal::crc32c(&[DICTIONARY.as_bytes()]),
            DICTIONARY_CRC
        );
    }

    const DICTIONARY_LEN: usize = 2769;
    const DICTIONARY_CRC: u32 = 0x5d02_d97a;
}
