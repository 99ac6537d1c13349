//! JSON objects of a known shape, stored as binary fields.
//!
//! A record that keeps a JSON object as text (an audit entry's `details`)
//! stores it here instead when the object has the [`Shape`] its writer
//! declares: a bitmap of the members present, then each member's value in
//! its binary form ([`Kind`]). [`encode`] gives up (`None`: the caller
//! keeps the text) unless [`decode`] would give the text back byte for
//! byte: the stored text, and so any digest computed over it, is exactly
//! what was written. It checks that without decoding: the text must be
//! its object's canonical spelling (compact, members in the map's order),
//! and every member must read back as the value it was written from (a
//! credit amount's micro-credits give back the same float; JSON kept as
//! text is written the same again once parsed).

use serde_json::{Map, Value};

use super::StoreError;
use super::compact::{In, Out};
use crate::base::money::micros_to_credits;

/// How one member is stored.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A string.
    Text,
    /// One of a few strings (one byte), or any other string.
    Word(&'static [&'static str]),
    /// A non-negative integer.
    Count,
    Flag,
    /// Credits, stored as integer micro-credits.
    Credits,
    /// A list of strings.
    Texts,
    /// Anything: null, a string, or other JSON as text.
    Any,
}

/// An object's members, in the order its writer builds them.
pub type Shape = &'static [(&'static str, Kind)];

fn write_value(out: &mut Out, kind: Kind, value: &Value) -> Option<()> {
    match (kind, value) {
        (Kind::Text, Value::String(s)) => out.str(s),
        (Kind::Word(words), Value::String(s)) => match words.iter().position(|w| w == s) {
            Some(i) => out.byte(i as u8 + 1),
            None => {
                out.byte(0);
                out.str(s);
            }
        },
        (Kind::Count, Value::Number(n)) => out.u64(n.as_u64()?),
        (Kind::Flag, Value::Bool(b)) => out.byte(u8::from(*b)),
        (Kind::Credits, Value::Number(n)) => {
            let credits = n.as_f64()?;
            if !(0.0..=1e12).contains(&credits) {
                return None;
            }
            let micros = (credits * 1_000_000.0).round() as u64;
            // Read back as the same float, bit for bit (not 2.0 for 2, nor
            // 0.0 for -0.0, nor a float that micro-credits cannot hold).
            if !n.is_f64() || micros_to_credits(micros).to_bits() != credits.to_bits() {
                return None;
            }
            out.u64(micros);
        }
        (Kind::Texts, Value::Array(items)) => {
            out.u64(items.len() as u64);
            for item in items {
                out.str(item.as_str()?);
            }
        }
        (Kind::Any, Value::Null) => out.byte(0),
        (Kind::Any, Value::String(s)) => {
            out.byte(1);
            out.str(s);
        }
        (Kind::Any, other) => {
            let text = crate::base::json::text(other);
            // Floats are parsed to the nearest value only almost always:
            // the text must come back from its own reading.
            let again = serde_json::from_str::<Value>(&text).ok()?;
            if crate::base::json::text(&again) != text {
                return None;
            }
            out.byte(2);
            out.str(&text);
        }
        _ => return None,
    }
    Some(())
}

fn read_value(input: &mut In<'_>, kind: Kind) -> Result<Value, StoreError> {
    let bad = || StoreError::Corrupt("a stored JSON member is malformed".into());
    Ok(match kind {
        Kind::Text => Value::String(input.str()?),
        Kind::Word(words) => match input.byte()? {
            0 => Value::String(input.str()?),
            i => Value::String((*words.get(usize::from(i) - 1).ok_or_else(bad)?).to_owned()),
        },
        Kind::Count => Value::from(input.u64()?),
        Kind::Flag => Value::Bool(input.bool()?),
        Kind::Credits => Value::from(micros_to_credits(input.u64()?)),
        Kind::Texts => Value::from(input.strs()?),
        Kind::Any => match input.byte()? {
            0 => Value::Null,
            1 => Value::String(input.str()?),
            2 => serde_json::from_str(&input.str()?).map_err(|_| bad())?,
            _ => return Err(bad()),
        },
    })
}

/// The object `text` in `shape`'s binary form, or `None` when it is not
/// an object of that shape (or would not read back as the same text).
pub fn encode(shape: Shape, text: &str) -> Option<Vec<u8>> {
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    if shape.len() > 63
        || object
            .keys()
            .any(|k| !shape.iter().any(|(name, _)| name == k))
    {
        return None;
    }
    let mut present = 0u64;
    let mut body = Out(Vec::new());
    for (i, (name, kind)) in shape.iter().enumerate() {
        if let Some(value) = object.get(*name) {
            present |= 1 << i;
            write_value(&mut body, *kind, value)?;
        }
    }
    // Every member reads back as its value, so the decoded object is this
    // one, and its text is this one's.
    if crate::base::json::text(&Value::Object(object)) != text {
        return None;
    }
    let mut out = Out(Vec::new());
    out.u64(present);
    out.raw(&body.0);
    Some(out.0)
}

/// The text of an object stored by [`encode`].
pub fn decode(shape: Shape, input: &mut In<'_>) -> Result<String, StoreError> {
    let present = input.u64()?;
    if present >> shape.len() != 0 {
        return Err(StoreError::Corrupt(
            "a stored JSON object names unknown members".into(),
        ));
    }
    let mut object = Map::new();
    for (i, (name, kind)) in shape.iter().enumerate() {
        if present & (1 << i) != 0 {
            object.insert((*name).to_owned(), read_value(input, *kind)?);
        }
    }
    Ok(crate::base::json::text(&Value::Object(object)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SHAPE: Shape = &[
        ("model", Kind::Text),
        ("level", Kind::Word(&["minimal", "high"])),
        ("cost", Kind::Credits),
        ("tokens", Kind::Count),
        ("ok", Kind::Flag),
        ("rules", Kind::Texts),
        ("purpose", Kind::Any),
        ("units", Kind::Any),
    ];

    #[test]
    fn objects_of_the_shape_are_smaller_and_read_back_to_the_same_text() {
        for value in [
            json!({ "model": "mock-chat", "level": "minimal", "cost": 0.000123, "tokens": 17,
                    "ok": true, "rules": [], "purpose": null }),
            json!({ "model": "m", "level": "other", "cost": 2.5, "tokens": 0, "ok": false,
                    "rules": ["a", "b"], "purpose": "x", "units": { "images": 2 } }),
            json!({}),
        ] {
            let text = value.to_string();
            let bytes = encode(SHAPE, &text).expect("encodable");
            assert!(bytes.len() < text.len(), "{text}");
            let mut input = In::new(&bytes);
            assert_eq!(decode(SHAPE, &mut input).unwrap(), text);
            input.end().unwrap();
        }
    }

    #[test]
    fn other_objects_are_left_as_text() {
        for text in [
            "",
            "[1]",
            "null",
            &json!({ "unknown": 1 }).to_string(),
            &json!({ "tokens": -1 }).to_string(),
            &json!({ "model": 5 }).to_string(),
            &json!({ "cost": 0.1234567 }).to_string(),
            // Not the canonical spelling of the object.
            "{\"model\": \"m\"}",
        ] {
            assert_eq!(encode(SHAPE, text), None, "{text}");
        }
    }

    #[test]
    fn a_member_is_kept_in_binary_only_when_it_reads_back_the_same() {
        let kept = ["2.5", "0.000123", "123456.789012", "1000000000000.0", "0.0"];
        let refused = [
            "2",
            "0",
            "0.1234567",
            "1e-7",
            "5e-324",
            "-0.0",
            "1000000000001.0",
        ];
        for (cost, expected) in kept
            .iter()
            .map(|c| (c, true))
            .chain(refused.iter().map(|c| (c, false)))
        {
            let text = format!("{{\"cost\":{cost}}}");
            let bytes = encode(SHAPE, &text);
            assert_eq!(bytes.is_some(), expected, "{text}");
            if let Some(bytes) = bytes {
                assert_eq!(decode(SHAPE, &mut In::new(&bytes)).unwrap(), text);
            }
        }
        for units in [
            r#"{"images":2,"seconds":1.5}"#,
            "[1,2.25]",
            "true",
            "7",
            "-0.0",
        ] {
            let text = format!("{{\"units\":{units}}}");
            let bytes = encode(SHAPE, &text).expect("JSON kept as text");
            assert_eq!(decode(SHAPE, &mut In::new(&bytes)).unwrap(), text);
        }
    }

    #[test]
    fn damaged_bytes_are_corrupt() {
        for bytes in [&[0xff, 0x01][..], &[0x02, 9], &[0x40, 3], &[0x02]] {
            assert!(
                matches!(
                    decode(SHAPE, &mut In::new(bytes)),
                    Err(StoreError::Corrupt(_))
                ),
                "{bytes:?}"
            );
        }
    }
}
