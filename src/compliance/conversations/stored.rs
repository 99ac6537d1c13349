//! The conversation record's stored layout (see `store::compact`).
//!
//! Key: the time and the request id (as the usage record's). Value: the
//! tenant and key ids, the expiry as an offset from the time, the optional
//! texts, the risk level as one byte, the rules, model, cost, the two
//! bodies as they were logged, and the erasure flag. Format 3 (schema 10)
//! stores each body compressed when that is smaller (`bodies.rs`); format
//! 2 (schema 9) stored them as text, and such values still read: they are
//! not rewritten, and leave with their retention. The expiry index's rows
//! are the expiry followed by the record's key, with an empty value.

use super::Conversation;
use super::bodies;
use crate::store::compact::{self, Compact, FORMAT_COMPACT, In, Out};
use crate::store::{StoreError, codec};

/// The format of records whose bodies may be compressed (schema 10).
pub const FORMAT_BODIES: u8 = FORMAT_COMPACT + 1;

const LEVELS: [&str; 4] = ["minimal", "limited", "high", "prohibited"];

impl Conversation {
    pub fn key(&self) -> Vec<u8> {
        compact::time_id_key(self.at, &self.request_id)
    }

    pub(super) fn expiry_key(&self) -> Vec<u8> {
        let mut key = self.expires_at.to_be_bytes().to_vec();
        key.extend_from_slice(&self.key());
        key
    }
}

impl Compact for Conversation {
    const FORMAT: u8 = FORMAT_BODIES;

    fn write(&self, out: &mut Out) {
        self.write_fields(out, bodies::write);
    }

    /// Schema 9: the bodies as text.
    fn read(key: &[u8], input: &mut In<'_>) -> Result<Self, StoreError> {
        read_fields(key, input, |input| input.str())
    }

    fn read_later(format: u8, key: &[u8], input: &mut In<'_>) -> Result<Self, StoreError> {
        debug_assert_eq!(format, FORMAT_BODIES);
        read_fields(key, input, bodies::read)
    }

    fn legacy(_key: &[u8], bytes: &[u8]) -> Result<Self, StoreError> {
        codec::decode(bytes)
    }
}

impl Conversation {
    /// The fields of formats 2 and 3, which differ only in how a body is
    /// stored (`body`).
    fn write_fields(&self, out: &mut Out, body: fn(&mut Out, &str)) {
        out.id(&self.tenant_id);
        out.id(&self.key_id);
        out.i64(self.expires_at.wrapping_sub(self.at));
        out.opt_str(self.purpose.as_deref());
        out.opt_str(self.end_user_id.as_deref());
        out.opt_str(self.deployer_context.as_deref());
        match LEVELS.iter().position(|l| *l == self.level) {
            Some(i) => out.byte(i as u8 + 1),
            None => {
                out.byte(0);
                out.str(&self.level);
            }
        }
        out.strs(&self.rules);
        out.str(&self.model);
        out.u64(self.cost);
        body(out, &self.request);
        body(out, &self.response);
        out.byte(u8::from(self.erased));
    }
}

/// Reads what [`Conversation::write_fields`] wrote.
fn read_fields(
    key: &[u8],
    input: &mut In<'_>,
    body: fn(&mut In<'_>) -> Result<String, StoreError>,
) -> Result<Conversation, StoreError> {
    let (at, request_id) = compact::split_time_id_key(key)?;
    let tenant_id = input.id()?;
    let key_id = input.id()?;
    let expires_at = at.wrapping_add(input.i64()?);
    let purpose = input.opt_str()?;
    let end_user_id = input.opt_str()?;
    let deployer_context = input.opt_str()?;
    let level = match input.byte()? {
        0 => input.str()?,
        i => LEVELS
            .get(usize::from(i) - 1)
            .map(|l| (*l).to_owned())
            .ok_or_else(|| StoreError::Corrupt("unknown risk level".into()))?,
    };
    Ok(Conversation {
        request_id,
        tenant_id,
        key_id,
        at,
        expires_at,
        purpose,
        end_user_id,
        deployer_context,
        level,
        rules: input.strs()?,
        model: input.str()?,
        cost: input.u64()?,
        request: body(input)?,
        response: body(input)?,
        erased: input.bool()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(request_id: &str, level: &str) -> Conversation {
        Conversation {
            request_id: request_id.into(),
            tenant_id: crate::base::ids::new_id("ten"),
            key_id: crate::base::ids::new_id("key"),
            at: 1_764_000_000_000,
            expires_at: 1_764_000_000_000 + 183 * super::super::DAY_MS,
            purpose: Some("support".into()),
            end_user_id: None,
            deployer_context: Some("{\"a\":1}".into()),
            level: level.into(),
            rules: vec!["r1".into(), "r2".into()],
            model: "mock-chat".into(),
            cost: 123,
            request: "{\"messages\":[]}".into(),
            response: "Hello.".into(),
            erased: false,
        }
    }

    /// A value as schema 9 wrote it: format 2, the bodies as text.
    fn schema_9(c: &Conversation) -> Vec<u8> {
        let mut out = Out(vec![FORMAT_COMPACT]);
        c.write_fields(&mut out, |out, text| out.str(text));
        out.0
    }

    #[test]
    fn records_round_trip_and_old_values_still_read() {
        let mut long = sample("3f2b8c1e-9a4d-4e2f-8b1c-0d9e8f7a6b5c", "minimal");
        long.request =
            r#"{"messages":[{"content":"Grüße, 東京","role":"user"}],"model":"gpt-4o-mini"}"#
                .into();
        long.response = "x".repeat(5_000);
        for c in [
            sample("3f2b8c1e-9a4d-4e2f-8b1c-0d9e8f7a6b5c", "minimal"),
            sample("any id", "something new"),
            long,
        ] {
            let key = c.key();
            let value = compact::encode(&c);
            assert_eq!(value[0], FORMAT_BODIES);
            assert_eq!(compact::decode::<Conversation>(&key, &value).unwrap(), c);
            let old = schema_9(&c);
            assert_eq!(compact::decode::<Conversation>(&key, &old).unwrap(), c);
            assert!(value.len() <= old.len() + 2);
            assert_eq!(
                compact::decode::<Conversation>(&key, &codec::encode(&c)).unwrap(),
                c
            );
        }
    }

    #[test]
    fn damaged_values_are_corrupt() {
        let c = sample("r", "high");
        let (key, value) = (c.key(), compact::encode(&c));
        let mut erased = value.clone();
        *erased.last_mut().unwrap() = 2;
        let mut newer = value.clone();
        newer[0] = FORMAT_BODIES + 1;
        for bad in [
            &value[..value.len() - 1],
            &erased[..],
            &value[..3],
            &newer[..],
        ] {
            assert!(matches!(
                compact::decode::<Conversation>(&key, bad),
                Err(StoreError::Corrupt(_))
            ));
        }
    }
}
