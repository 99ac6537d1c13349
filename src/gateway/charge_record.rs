//! A charge as the journal keeps it (see `store::journal`).
//!
//! The charge transaction of an answered request writes the ledger (key,
//! rotation partner, wallet, usage record, threshold events: `billing::apply`)
//! and, with it, the request's audit entry, conversation record and held
//! review. [`ChargeRecord`] holds every fact those writes need, so the very
//! same function, [`ChargeRecord::apply`], runs for the live charge and when
//! the journal is replayed after a crash: they cannot drift apart. It is
//! encoded with the store's codec (bincode), JSON kept as text because
//! bincode cannot carry `serde_json::Value`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::audit::{self, Draft};
use crate::billing::{self, UsageRecord};
use crate::compliance::conversations::{self, Conversation};
use crate::compliance::reviews::{self, Review};
use crate::store::tables::Writes;
use crate::store::{StoreError, codec};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChargeRecord {
    pub usage: UsageRecord,
    pub audit: AuditFacts,
    /// When the policy logs bodies.
    pub conversation: Option<Conversation>,
    /// When the answer is held for human review.
    pub review: Option<HeldFacts>,
    /// The per-day counter row the request holds a unit of (the free
    /// tier's multimodal day cap), counted in the charge's transaction.
    pub day: Option<String>,
}

/// The request's `inference` audit entry (tenant, actor and target come
/// from the usage record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditFacts {
    pub outcome: String,
    /// JSON text.
    pub details: String,
    /// Unix ms.
    pub at: i64,
}

/// A held answer: the review, and the completion to file with it, whose
/// `billing` member is filled from the charge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldFacts {
    pub review: Review,
    /// JSON text, without `billing`.
    pub completion: String,
    pub is_fallback: bool,
    pub latency_ms: u64,
}

impl ChargeRecord {
    pub fn encode(&self) -> Vec<u8> {
        codec::encode(self)
    }

    /// The whole charge transaction: the ledger, then what commits with it.
    /// Returns the outcome and the key records written (for the key cache).
    pub fn apply(&self, txn: &impl Writes) -> Result<billing::Applied, StoreError> {
        let (charged, written) = billing::apply(txn, &self.usage)?;
        let day = match &self.day {
            Some(row) => Some((row.clone(), crate::billing::limits::count_daily(txn, row)?)),
            None => None,
        };
        let usage = &self.usage;
        let draft = Draft::new(
            &usage.tenant_id,
            format!("key:{}", usage.key_id),
            "inference",
            &usage.request_id,
        )
        .outcome(&self.audit.outcome)
        .details_text(self.audit.details.clone())
        .at(self.audit.at);
        audit::append(txn, &draft)?;
        if let Some(conversation) = &self.conversation {
            conversations::insert(txn, conversation)?;
        }
        if let Some(held) = &self.review {
            let mut completion =
                serde_json::from_str::<Value>(&held.completion).unwrap_or(Value::Null);
            completion["billing"] =
                super::billing_view_at(&charged, held.is_fallback, held.latency_ms);
            let mut review = held.review.clone();
            review.completion = completion.to_string();
            reviews::insert(txn, &review)?;
        }
        Ok(billing::Applied {
            charged,
            written,
            tenant_id: usage.tenant_id.clone(),
            day,
        })
    }
}

/// Re-applies a journaled charge after a crash (the store's `Replay`).
pub fn replay(txn: &redb::WriteTransaction, bytes: &[u8]) -> Result<(), StoreError> {
    let record: ChargeRecord = codec::decode(bytes)?;
    record.apply(txn).map(|_| ())
}
