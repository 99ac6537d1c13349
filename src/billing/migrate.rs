//! Schema 6 -> 7: usage records gain their endpoint.
//!
//! A record of schema 6 does not say which route served it, so the
//! migration infers it as well as the stored data allows:
//! - the record's audit entry (action `inference`, target the request id,
//!   written in the charge's own transaction) names the units a media
//!   request was billed by (only media routes write `units`): `images` →
//!   `images`; any other units (a transcription's seconds or tokens,
//!   speech's characters) → `audio`;
//! - every other record → `chat`. Native `/v1/messages` and Gemini
//!   requests of schema 6 cannot be told from chat ones (same fields, and
//!   chat is translated to the same providers), so they are counted as
//!   chat too; this is documented in docs/storage.md.

use std::collections::HashMap;

use redb::ReadableTable;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::UsageRecord;
use crate::audit::AUDIT_TABLE;
use crate::catalogue::Endpoint;
use crate::store::tables::USAGE;
use crate::store::{StoreError, codec};

/// A usage record as schemas 1 to 6 stored it (no `endpoint`).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct UsageRecordV6 {
    request_id: String,
    key_id: String,
    tenant_id: String,
    model: String,
    provider: String,
    prompt_tokens: u64,
    completion_tokens: u64,
    cost: u64,
    latency_ms: u64,
    is_fallback: bool,
    streamed: bool,
    estimated: bool,
    at: i64,
}

/// Rewrites every usage record of schema 6 with its inferred endpoint.
/// Records that already decode as schema 7 are left alone, so a rerun
/// after an interrupted upgrade is harmless.
pub fn migrate_v6_to_v7(txn: &redb::WriteTransaction) -> Result<(), StoreError> {
    let old: Vec<(Vec<u8>, UsageRecordV6)> = {
        let table = txn.open_table(USAGE)?;
        let mut out = Vec::new();
        for row in table.iter()? {
            let (k, v) = row?;
            if codec::decode::<UsageRecord>(v.value()).is_ok() {
                continue;
            }
            out.push((k.value().to_vec(), codec::decode(v.value())?));
        }
        out
    };
    if old.is_empty() {
        return Ok(());
    }
    let media = media_units(txn)?;
    for (key, r) in old {
        let endpoint = media.get(&r.request_id).copied().unwrap_or(Endpoint::Chat);
        let record = UsageRecord {
            request_id: r.request_id,
            key_id: r.key_id,
            tenant_id: r.tenant_id,
            model: r.model,
            provider: r.provider,
            prompt_tokens: r.prompt_tokens,
            completion_tokens: r.completion_tokens,
            cost: r.cost,
            latency_ms: r.latency_ms,
            is_fallback: r.is_fallback,
            streamed: r.streamed,
            estimated: r.estimated,
            at: r.at,
            endpoint,
        };
        // In schema 7's layout (bincode under the old key): the step to
        // schema 9 reads it as such.
        txn.open_table(USAGE)?
            .insert(key.as_slice(), codec::encode(&record).as_slice())?;
    }
    Ok(())
}

/// The request ids whose audit entry shows media units, with their
/// endpoint.
fn media_units(txn: &redb::WriteTransaction) -> Result<HashMap<String, Endpoint>, StoreError> {
    let mut out = HashMap::new();
    for entry in AUDIT_TABLE.all(txn)? {
        if entry.action != "inference" {
            continue;
        }
        let Ok(details) = serde_json::from_str::<Value>(&entry.details) else {
            continue;
        };
        let Some(units) = details["units"].as_object() else {
            continue;
        };
        let endpoint = if units.contains_key("images") {
            Endpoint::Images
        } else {
            Endpoint::Audio
        };
        out.insert(entry.target, endpoint);
    }
    Ok(out)
}
