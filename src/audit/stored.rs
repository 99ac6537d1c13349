//! The audit entry's stored layout (schema 9, see `store::compact`).

use super::{Entry, REFUSED};
use crate::store::compact::{Compact, In, Out};
use crate::store::shape::{self, Kind, Shape};
use crate::store::{StoreError, codec};

/// The members of an `inference` entry's details, in the order the
/// charge writes them: stored as binary fields ([`shape`]).
const INFERENCE: Shape = &[
    ("model", Kind::Text),
    ("provider", Kind::Text),
    (
        "riskLevel",
        Kind::Word(&["minimal", "limited", "high", "prohibited"]),
    ),
    ("triggeredRules", Kind::Texts),
    ("cost", Kind::Credits),
    ("promptTokens", Kind::Count),
    ("completionTokens", Kind::Count),
    ("isFallback", Kind::Flag),
    ("streamed", Kind::Flag),
    ("purpose", Kind::Any),
    ("subject", Kind::Any),
    ("consentId", Kind::Any),
    ("deployerContext", Kind::Any),
    ("review", Kind::Any),
    ("units", Kind::Any),
];
const ACTIONS: [&str; 2] = ["inference", REFUSED];
const OUTCOMES: [&str; 2] = ["ok", "incomplete"];
const DETAILS_NONE: u8 = 0;
const DETAILS_TEXT: u8 = 1;
const DETAILS_INFERENCE: u8 = 2;

/// One of `words` as one byte (its index + 1), else 0 and the text.
fn write_word(out: &mut Out, words: &[&str], s: &str) {
    match words.iter().position(|w| *w == s) {
        Some(i) => out.byte(i as u8 + 1),
        None => {
            out.byte(0);
            out.str(s);
        }
    }
}

fn read_word(input: &mut In<'_>, words: &[&str]) -> Result<String, StoreError> {
    match input.byte()? {
        0 => input.str(),
        i => words
            .get(usize::from(i) - 1)
            .map(|w| (*w).to_owned())
            .ok_or_else(|| StoreError::Corrupt("unknown word in an audit entry".into())),
    }
}

/// Stored layout (schema 9): key the sequence number; value the time,
/// tenant, actor (`key:`/`account:` ids as 16 bytes), action and outcome
/// (one byte when common), target, details (an `inference` entry's as
/// binary fields, else the JSON text) and the digest. The digest is
/// computed over the same fields as before (the JSON text of `details`,
/// which the binary fields read back byte for byte), so schema 8 entries
/// and their chain verify unchanged after the migration.
impl Compact for Entry {
    fn write(&self, out: &mut Out) {
        out.i64(self.at);
        out.id(&self.tenant_id);
        match (
            self.actor.strip_prefix("key:"),
            self.actor.strip_prefix("account:"),
        ) {
            (Some(id), _) => {
                out.byte(1);
                out.id(id);
            }
            (_, Some(id)) => {
                out.byte(2);
                out.id(id);
            }
            _ => {
                out.byte(0);
                out.str(&self.actor);
            }
        }
        write_word(out, &ACTIONS, &self.action);
        out.id(&self.target);
        write_word(out, &OUTCOMES, &self.outcome);
        let inference = (self.action == "inference")
            .then(|| shape::encode(INFERENCE, &self.details))
            .flatten();
        match inference {
            _ if self.details.is_empty() => out.byte(DETAILS_NONE),
            Some(fields) => {
                out.byte(DETAILS_INFERENCE);
                out.raw(&fields);
            }
            None => {
                out.byte(DETAILS_TEXT);
                out.str(&self.details);
            }
        }
        out.raw(&self.hash);
    }

    fn read(key: &[u8], input: &mut In<'_>) -> Result<Self, StoreError> {
        let seq = key
            .try_into()
            .map(u64::from_be_bytes)
            .map_err(|_| StoreError::Corrupt("an audit key is not 8 bytes".into()))?;
        let at = input.i64()?;
        let tenant_id = input.id()?;
        let actor = match input.byte()? {
            0 => input.str()?,
            1 => format!("key:{}", input.id()?),
            2 => format!("account:{}", input.id()?),
            _ => {
                return Err(StoreError::Corrupt(
                    "unknown actor in an audit entry".into(),
                ));
            }
        };
        let action = read_word(input, &ACTIONS)?;
        let target = input.id()?;
        let outcome = read_word(input, &OUTCOMES)?;
        let details = match input.byte()? {
            DETAILS_NONE => String::new(),
            DETAILS_TEXT => input.str()?,
            DETAILS_INFERENCE => shape::decode(INFERENCE, input)?,
            _ => return Err(StoreError::Corrupt("unknown audit details".into())),
        };
        let hash = input.array()?;
        Ok(Entry {
            seq,
            at,
            tenant_id,
            actor,
            action,
            target,
            outcome,
            details,
            prev: [0; 32],
            hash,
        })
    }

    fn legacy(_key: &[u8], bytes: &[u8]) -> Result<Self, StoreError> {
        codec::decode(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::compact;
    use serde_json::json;

    fn entry(action: &str, actor: &str, details: String) -> Entry {
        let mut e = Entry {
            seq: 42,
            at: 1_764_000_000_000,
            tenant_id: crate::base::ids::new_id("ten"),
            actor: actor.into(),
            action: action.into(),
            target: "3f2b8c1e-9a4d-4e2f-8b1c-0d9e8f7a6b5c".into(),
            outcome: "ok".into(),
            details,
            prev: [3; 32],
            hash: [0; 32],
        };
        e.hash = e.digest();
        e
    }

    fn inference_details() -> String {
        json!({
            "model": "mock-chat", "provider": "mock", "riskLevel": "minimal",
            "triggeredRules": [], "cost": 0.000108, "promptTokens": 12,
            "completionTokens": 9, "isFallback": false, "streamed": true,
            "purpose": null, "subject": null, "consentId": null,
            "deployerContext": null, "review": null,
        })
        .to_string()
    }

    #[test]
    fn entries_round_trip_without_their_link_and_keep_their_digest() {
        let key = 42u64.to_be_bytes();
        for e in [
            entry(
                "inference",
                &format!("key:{}", crate::base::ids::new_id("key")),
                inference_details(),
            ),
            entry(
                "key.create",
                "account:someone",
                json!({ "name": "k" }).to_string(),
            ),
            entry("inference", "cli", "{\"unexpected\":true}".into()),
            entry("x", "system", String::new()),
        ] {
            let bytes = compact::encode(&e);
            let mut back: Entry = compact::decode(&key, &bytes).unwrap();
            assert_eq!(back.prev, [0; 32]);
            back.prev = e.prev;
            assert_eq!(back, e);
            assert_eq!(back.digest(), e.hash);
            // A schema 8 value reads with its link.
            assert_eq!(
                compact::decode::<Entry>(&key, &codec::encode(&e)).unwrap(),
                e
            );
        }
        let small = entry(
            "inference",
            &format!("key:{}", crate::base::ids::new_id("key")),
            inference_details(),
        );
        let bytes = compact::encode(&small);
        assert!(bytes.len() < 130, "{} bytes", bytes.len());
        assert!(bytes.len() * 3 < codec::encode(&small).len());
    }

    #[test]
    fn damaged_entries_are_corrupt() {
        let e = entry("inference", "key:k", inference_details());
        let bytes = compact::encode(&e);
        let key = 42u64.to_be_bytes();
        let mut actor = bytes.clone();
        // Format byte, six bytes of time, the tenant's 17: the actor tag.
        actor[1 + 6 + 17] = 9;
        for bad in [&bytes[..bytes.len() - 1], &actor[..], &bytes[..5]] {
            assert!(matches!(
                compact::decode::<Entry>(&key, bad),
                Err(StoreError::Corrupt(_))
            ));
        }
        assert!(compact::decode::<Entry>(&[1, 2, 3], &bytes).is_err());
    }
}
