//! The `application/vnd.amazon.eventstream` framing of Bedrock's streams,
//! decoded incrementally.
//!
//! A message is a 12-byte prelude (total length, headers length, both
//! big-endian u32, and the CRC32 of those 8 bytes), the headers, the
//! payload, and the CRC32 of everything before it. Bytes arrive in chunks
//! cut anywhere, so the decoder keeps what it has and yields a message
//! only once it is whole and both checksums hold. A bad checksum, a length
//! that cannot be, or a header that runs past its block ends the stream
//! with an error: after one lost byte no later boundary can be trusted.

use bytes::{Buf, Bytes, BytesMut};
use futures::{Stream, StreamExt};

/// Prelude (12) plus message CRC (4).
const OVERHEAD: usize = 16;
/// AWS caps an event-stream message at 16 MiB; more is not the protocol.
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// One decoded message: its string headers, and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The headers whose value is a string (`:message-type`,
    /// `:event-type`, `:exception-type`, `:content-type`...). Headers of
    /// other types are checked for length and skipped: Bedrock sends none
    /// the gateway reads.
    pub headers: Vec<(String, String)>,
    pub payload: Bytes,
}

impl Message {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why the framing cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError(pub String);

/// Bytes in, whole messages out.
#[derive(Default)]
pub struct Decoder {
    buffer: BytesMut,
}

impl Decoder {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// Whether bytes of an unfinished message are waiting.
    pub fn has_partial(&self) -> bool {
        !self.buffer.is_empty()
    }

    /// The next whole message, `None` until one is whole.
    pub fn next_message(&mut self) -> Result<Option<Message>, FrameError> {
        if self.buffer.len() < 12 {
            return Ok(None);
        }
        let be = |at: usize| {
            u32::from_be_bytes(self.buffer[at..at + 4].try_into().expect("4 bytes")) as usize
        };
        let (total, headers_len, prelude_crc) = (be(0), be(4), be(8) as u32);
        if crc32fast::hash(&self.buffer[..8]) != prelude_crc {
            return Err(FrameError("an event-stream prelude fails its CRC".into()));
        }
        if !(OVERHEAD..=MAX_MESSAGE).contains(&total) || headers_len > total - OVERHEAD {
            return Err(FrameError(format!(
                "an event-stream message claims {total} bytes with {headers_len} of headers"
            )));
        }
        if self.buffer.len() < total {
            return Ok(None);
        }
        let message = self.buffer.split_to(total).freeze();
        let message_crc = u32::from_be_bytes(message[total - 4..].try_into().expect("4 bytes"));
        if crc32fast::hash(&message[..total - 4]) != message_crc {
            return Err(FrameError("an event-stream message fails its CRC".into()));
        }
        let headers = parse_headers(&message[12..12 + headers_len])?;
        let payload = message.slice(12 + headers_len..total - 4);
        Ok(Some(Message { headers, payload }))
    }
}

fn parse_headers(mut block: &[u8]) -> Result<Vec<(String, String)>, FrameError> {
    let short = || FrameError("an event-stream header runs past its block".into());
    let mut headers = Vec::new();
    while block.has_remaining() {
        let name_len = usize::from(block.get_u8());
        if block.remaining() < name_len + 1 {
            return Err(short());
        }
        let name = String::from_utf8_lossy(&block[..name_len]).into_owned();
        block.advance(name_len);
        let value_type = block.get_u8();
        // Fixed sizes per type (the event-stream specification); 6 (bytes)
        // and 7 (string) carry a u16 length.
        let fixed = match value_type {
            0 | 1 => Some(0),
            2 => Some(1),
            3 => Some(2),
            4 => Some(4),
            5 | 8 => Some(8),
            9 => Some(16),
            6 | 7 => None,
            other => {
                return Err(FrameError(format!(
                    "an event-stream header has the unknown type {other}"
                )));
            }
        };
        let len = match fixed {
            Some(n) => n,
            None => {
                if block.remaining() < 2 {
                    return Err(short());
                }
                usize::from(block.get_u16())
            }
        };
        if block.remaining() < len {
            return Err(short());
        }
        if value_type == 7 {
            headers.push((name, String::from_utf8_lossy(&block[..len]).into_owned()));
        }
        block.advance(len);
    }
    Ok(headers)
}

/// The messages of a byte stream. A transport error or broken framing is
/// the last item; so is an end in the middle of a message.
pub fn messages<S, E>(bytes: S) -> impl Stream<Item = Result<Message, FrameError>> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    let state = (Box::pin(bytes), Decoder::default(), false);
    futures::stream::unfold(state, |(mut bytes, mut decoder, done)| async move {
        if done {
            return None;
        }
        loop {
            match decoder.next_message() {
                Ok(Some(message)) => return Some((Ok(message), (bytes, decoder, false))),
                Ok(None) => {}
                Err(e) => return Some((Err(e), (bytes, decoder, true))),
            }
            match bytes.next().await {
                Some(Ok(chunk)) => decoder.push(&chunk),
                Some(Err(e)) => {
                    let error = FrameError(format!("the stream broke: {e}"));
                    return Some((Err(error), (bytes, decoder, true)));
                }
                None if decoder.has_partial() => {
                    let error = FrameError("the stream ended inside a message".into());
                    return Some((Err(error), (bytes, decoder, true)));
                }
                None => return None,
            }
        }
    })
}

/// One message in the framing (the scripted upstream of the tests and the
/// unit tests below write with it).
pub fn encode(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut block = Vec::new();
    for (name, value) in headers {
        block.push(name.len() as u8);
        block.extend_from_slice(name.as_bytes());
        block.push(7);
        block.extend_from_slice(&(value.len() as u16).to_be_bytes());
        block.extend_from_slice(value.as_bytes());
    }
    let total = (OVERHEAD + block.len() + payload.len()) as u32;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&(block.len() as u32).to_be_bytes());
    out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
    out.extend_from_slice(&block);
    out.extend_from_slice(payload);
    out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_messages() -> Vec<u8> {
        let mut bytes = encode(
            &[
                (":message-type", "event"),
                (":event-type", "contentBlockDelta"),
                (":content-type", "application/json"),
            ],
            br#"{"contentBlockIndex":0,"delta":{"text":"Hel"}}"#,
        );
        bytes.extend(encode(
            &[(":message-type", "event"), (":event-type", "messageStop")],
            br#"{"stopReason":"end_turn"}"#,
        ));
        bytes
    }

    fn decode_all(parts: &[&[u8]]) -> Result<Vec<Message>, FrameError> {
        let mut decoder = Decoder::default();
        let mut out = Vec::new();
        for part in parts {
            decoder.push(part);
            while let Some(message) = decoder.next_message()? {
                out.push(message);
            }
        }
        assert!(!decoder.has_partial());
        Ok(out)
    }

    #[test]
    fn messages_split_at_every_byte_boundary_decode_the_same() {
        let bytes = two_messages();
        let whole = decode_all(&[&bytes]).unwrap();
        assert_eq!(whole.len(), 2);
        assert_eq!(whole[0].header(":event-type"), Some("contentBlockDelta"));
        assert_eq!(
            &whole[0].payload[..],
            br#"{"contentBlockIndex":0,"delta":{"text":"Hel"}}"#
        );
        assert_eq!(whole[1].header(":event-type"), Some("messageStop"));
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(decode_all(&[a, b]).unwrap(), whole, "cut at {cut}");
        }
        for second in 1..bytes.len() {
            let (a, rest) = bytes.split_at(second / 2);
            let (b, c) = rest.split_at(rest.len().min(second - second / 2));
            assert_eq!(decode_all(&[a, b, c]).unwrap(), whole);
        }
        let one_by_one: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode_all(&one_by_one).unwrap(), whole);
    }

    #[test]
    fn a_bad_prelude_crc_is_refused() {
        let mut bytes = two_messages();
        bytes[8] ^= 1;
        let error = decode_all(&[&bytes]).unwrap_err();
        assert!(error.0.contains("prelude"), "{error:?}");
        // A wrong length fails the prelude's CRC too, before any huge
        // buffer is waited for.
        let mut bytes = two_messages();
        bytes[0] = 0x7f;
        assert!(decode_all(&[&bytes[..12]]).is_err());
    }

    #[test]
    fn a_bad_message_crc_is_refused() {
        let mut bytes = two_messages();
        bytes[20] ^= 0x20;
        let error = decode_all(&[&bytes]).unwrap_err();
        assert!(error.0.contains("message fails"), "{error:?}");
        let mut bytes = two_messages();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let error = decode_all(&[&bytes]).unwrap_err();
        assert!(error.0.contains("message fails"), "{error:?}");
    }

    #[test]
    fn impossible_lengths_and_headers_are_refused() {
        // Headers longer than the message, with a valid prelude CRC.
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&16u32.to_be_bytes());
        bytes.extend_from_slice(&8u32.to_be_bytes());
        let crc = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&crc.to_be_bytes());
        bytes.extend_from_slice(&[0, 0, 0, 0]);
        assert!(decode_all(&[&bytes]).is_err());
        // A header whose string runs past its block.
        let mut message = encode(&[(":event-type", "x")], b"{}");
        // The string's length field, after the 12-byte prelude, the name
        // length, the name and the type byte.
        message[12 + 1 + 11 + 1 + 1] = 0x40;
        let n = message.len();
        let crc = crc32fast::hash(&message[..n - 4]);
        message[n - 4..].copy_from_slice(&crc.to_be_bytes());
        assert!(decode_all(&[&message]).is_err());
    }

    #[test]
    fn a_stream_ending_inside_a_message_is_an_error() {
        let bytes = two_messages();
        let cut = bytes[..bytes.len() - 3].to_vec();
        let parts: Vec<Result<Bytes, String>> = vec![Ok(Bytes::from(cut))];
        let out: Vec<_> =
            futures::executor::block_on(messages(futures::stream::iter(parts)).collect());
        assert_eq!(out.len(), 2);
        assert!(out[0].is_ok());
        assert!(out[1].as_ref().unwrap_err().0.contains("inside a message"));
    }
}
