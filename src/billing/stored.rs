//! The usage record's stored layout (schema 9, see `store::compact`).
//!
//! Key: the time (big-endian Unix ms) and the request id (16 bytes when it
//! is a UUID or a ULID id). Value: the key and tenant ids (16 bytes each
//! when ULIDs), model and provider names, the counts as varints, the three
//! flags in one byte, the endpoint as one byte. Time and request id are
//! read from the key.

use super::UsageRecord;
use crate::catalogue::Endpoint;
use crate::store::compact::{self, Compact, In, Out};
use crate::store::{StoreError, codec};

const FALLBACK: u8 = 1;
const STREAMED: u8 = 2;
const ESTIMATED: u8 = 4;

impl UsageRecord {
    /// Usage rows sort by time: big-endian ms, then the request id.
    pub fn row_key(&self) -> Vec<u8> {
        compact::time_id_key(self.at, &self.request_id)
    }
}

impl Compact for UsageRecord {
    fn write(&self, out: &mut Out) {
        out.id(&self.key_id);
        out.id(&self.tenant_id);
        out.str(&self.model);
        out.str(&self.provider);
        out.u64(self.prompt_tokens);
        out.u64(self.completion_tokens);
        out.u64(self.cost);
        out.u64(self.latency_ms);
        let mut flags = 0;
        for (on, bit) in [
            (self.is_fallback, FALLBACK),
            (self.streamed, STREAMED),
            (self.estimated, ESTIMATED),
        ] {
            if on {
                flags |= bit;
            }
        }
        out.byte(flags);
        let endpoint = Endpoint::ALL
            .iter()
            .position(|e| *e == self.endpoint)
            .expect("every endpoint is in ALL");
        out.byte(endpoint as u8);
    }

    fn read(key: &[u8], input: &mut In<'_>) -> Result<Self, StoreError> {
        let (at, request_id) = compact::split_time_id_key(key)?;
        let key_id = input.id()?;
        let tenant_id = input.id()?;
        let model = input.str()?;
        let provider = input.str()?;
        let prompt_tokens = input.u64()?;
        let completion_tokens = input.u64()?;
        let cost = input.u64()?;
        let latency_ms = input.u64()?;
        let flags = input.byte()?;
        if flags & !(FALLBACK | STREAMED | ESTIMATED) != 0 {
            return Err(StoreError::Corrupt("unknown usage record flags".into()));
        }
        let endpoint = *Endpoint::ALL
            .get(usize::from(input.byte()?))
            .ok_or_else(|| StoreError::Corrupt("unknown endpoint in a usage record".into()))?;
        Ok(UsageRecord {
            request_id,
            key_id,
            tenant_id,
            model,
            provider,
            prompt_tokens,
            completion_tokens,
            cost,
            latency_ms,
            is_fallback: flags & FALLBACK != 0,
            streamed: flags & STREAMED != 0,
            estimated: flags & ESTIMATED != 0,
            at,
            endpoint,
        })
    }

    fn legacy(_key: &[u8], bytes: &[u8]) -> Result<Self, StoreError> {
        codec::decode(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(request_id: &str, key_id: &str) -> UsageRecord {
        UsageRecord {
            request_id: request_id.into(),
            key_id: key_id.into(),
            tenant_id: crate::base::ids::new_id("ten"),
            model: "mock-chat".into(),
            provider: "mock".into(),
            prompt_tokens: 18,
            completion_tokens: 300_000,
            cost: u64::MAX,
            latency_ms: 3,
            is_fallback: true,
            streamed: false,
            estimated: true,
            at: 1_764_000_000_123,
            endpoint: Endpoint::Completions,
        }
    }

    #[test]
    fn records_round_trip_through_key_and_value() {
        for r in [
            record(
                "3f2b8c1e-9a4d-4e2f-8b1c-0d9e8f7a6b5c",
                &crate::base::ids::new_id("key"),
            ),
            record("client-chosen id", "key_0000000000000000000000042"),
        ] {
            let (key, value) = (r.row_key(), compact::encode(&r));
            assert_eq!(compact::decode::<UsageRecord>(&key, &value).unwrap(), r);
            // The schema 8 value still reads.
            let old = codec::encode(&r);
            assert_eq!(compact::decode::<UsageRecord>(&key, &old).unwrap(), r);
        }
        let small = record(
            "3f2b8c1e-9a4d-4e2f-8b1c-0d9e8f7a6b5c",
            &crate::base::ids::new_id("key"),
        );
        assert!(compact::encode(&small).len() < 70);
    }

    #[test]
    fn damaged_values_are_corrupt() {
        let r = record("r1", "k1");
        let (key, value) = (r.row_key(), compact::encode(&r));
        let mut flags = value.clone();
        let n = flags.len();
        flags[n - 2] = 0x80;
        let mut endpoint = value.clone();
        endpoint[n - 1] = 99;
        let mut long = value.clone();
        long.push(0);
        for bad in [&value[..n - 1], &flags, &endpoint, &long, &[7][..]] {
            assert!(matches!(
                compact::decode::<UsageRecord>(&key, bad),
                Err(StoreError::Corrupt(_))
            ));
        }
        assert!(compact::decode::<UsageRecord>(&[1, 2], &value).is_err());
    }
}
