//! The human-review queue (Article 14, DESIGN 7.3).
//!
//! When the tenant policy holds a response, the upstream is called and the
//! request billed as usual, but the completion is stored here instead of
//! being answered: the caller gets 202 and polls `GET /v1/reviews/{id}` with
//! the same key. A reviewer approves it (optionally editing the answer) or
//! rejects it; an item nobody decided expires after the policy's time and
//! then reads as rejected. Only a pending item can be decided.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::base::time::{format_rfc3339, now_ms};
use crate::compliance::scoped;
use crate::store::tables::REVIEWS;
use crate::store::{Reader, Store, StoreError, Table};

pub const REVIEW_TABLE: Table<Review> = Table::new(REVIEWS);
/// The longest note a reviewer may leave.
pub const MAX_NOTE: usize = 4000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Approved,
    Rejected,
    Expired,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Rejected => "rejected",
            Status::Expired => "expired",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        match text {
            "pending" => Some(Status::Pending),
            "approved" => Some(Status::Approved),
            "rejected" => Some(Status::Rejected),
            "expired" => Some(Status::Expired),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    pub id: String,
    pub tenant_id: String,
    pub key_id: String,
    pub request_id: String,
    pub status: Status,
    pub created_at: i64,
    pub expires_at: i64,
    /// The model name the caller asked for.
    pub model: String,
    pub level: String,
    pub rules: Vec<String>,
    pub reason: String,
    /// The caller's request (JSON text), for the reviewer.
    pub request: String,
    /// The held completion with its extensions (JSON text).
    pub completion: String,
    pub decided_by: Option<String>,
    pub decided_at: Option<i64>,
    pub note: Option<String>,
    pub edited: bool,
}

impl Review {
    /// The status as of `now`: a pending item past its time is expired.
    pub fn status_at(&self, now: i64) -> Status {
        if self.status == Status::Pending && now >= self.expires_at {
            Status::Expired
        } else {
            self.status
        }
    }

    /// The reviewer's view: the request, the held answer and the decision.
    pub fn view(&self, now: i64) -> Value {
        json!({
            "id": self.id,
            "object": "review",
            "status": self.status_at(now).as_str(),
            "tenantId": self.tenant_id,
            "keyId": self.key_id,
            "requestId": self.request_id,
            "model": self.model,
            "riskLevel": self.level,
            "triggeredRules": self.rules,
            "reason": self.reason,
            "createdAt": format_rfc3339(self.created_at),
            "expiresAt": format_rfc3339(self.expires_at),
            "request": serde_json::from_str::<Value>(&self.request).unwrap_or(Value::Null),
            "completion": serde_json::from_str::<Value>(&self.completion).unwrap_or(Value::Null),
            "decidedBy": self.decided_by,
            "decidedAt": self.decided_at.map(format_rfc3339),
            "note": self.note,
            "edited": self.edited,
        })
    }

    /// What the caller's poll answers while pending (DESIGN 7.3).
    pub fn pending_view(&self) -> Value {
        json!({ "id": self.id, "object": "review", "status": "pending" })
    }

    /// The approved completion, with a `review` extension saying so.
    pub fn approved_completion(&self) -> Value {
        let mut completion: Value = serde_json::from_str(&self.completion).unwrap_or(Value::Null);
        completion["review"] = json!({
            "id": self.id,
            "status": "approved",
            "edited": self.edited,
            "decidedAt": self.decided_at.map(format_rfc3339),
        });
        completion
    }
}

pub fn insert(txn: &impl crate::store::tables::Writes, review: &Review) -> Result<(), StoreError> {
    REVIEW_TABLE.put(txn, review.id.as_bytes(), review)
}

/// A reviewer's decision.
#[derive(Debug, Clone)]
pub enum Decision {
    /// Approve, optionally replacing the answer's text.
    Approve {
        edit: Option<String>,
    },
    Reject,
}

/// Decides a pending item of `tenant_id` (any tenant for `None`).
pub async fn decide(
    store: &Store,
    tenant_id: Option<String>,
    id: &str,
    decision: Decision,
    reviewer: String,
    note: Option<String>,
) -> Result<Review, StoreError> {
    if note.as_ref().is_some_and(|n| n.len() > MAX_NOTE) {
        return Err(StoreError::Invalid(format!(
            "a note is at most {MAX_NOTE} bytes"
        )));
    }
    let id = id.to_owned();
    store
        .write(move |txn| {
            let mut review = get(txn, tenant_id.as_deref(), &id)?;
            let now = now_ms();
            let status = review.status_at(now);
            if status != Status::Pending {
                return Err(StoreError::Conflict(format!(
                    "the review `{id}` is {} and can no longer be decided",
                    status.as_str()
                )));
            }
            match &decision {
                Decision::Approve { edit } => {
                    review.status = Status::Approved;
                    if let Some(text) = edit {
                        let mut completion: Value = serde_json::from_str(&review.completion)
                            .map_err(|e| StoreError::Corrupt(format!("held completion: {e}")))?;
                        let Some(message) = completion
                            .pointer_mut("/choices/0/message")
                            .filter(|m| m.is_object())
                        else {
                            return Err(StoreError::Invalid(
                                "the held answer has no message text to edit".into(),
                            ));
                        };
                        message["content"] = Value::String(text.clone());
                        review.completion = completion.to_string();
                        review.edited = true;
                    }
                }
                Decision::Reject => review.status = Status::Rejected,
            }
            review.decided_by = Some(reviewer.clone());
            review.decided_at = Some(now);
            review.note = note.clone();
            REVIEW_TABLE.put(txn, review.id.as_bytes(), &review)?;
            Ok(review)
        })
        .await
}

/// Marks every pending item past its time as expired; returns how many.
pub async fn expire_due(store: &Store, now: i64) -> Result<usize, StoreError> {
    let due: Vec<String> = store.read(|tx| {
        Ok(REVIEW_TABLE
            .all(tx)?
            .into_iter()
            .filter(|r| r.status == Status::Pending && now >= r.expires_at)
            .map(|r| r.id)
            .collect())
    })?;
    if due.is_empty() {
        return Ok(0);
    }
    store
        .write(move |txn| {
            let mut expired = 0;
            for id in &due {
                if let Some(mut review) = REVIEW_TABLE.get(txn, id.as_bytes())?
                    && review.status == Status::Pending
                {
                    review.status = Status::Expired;
                    REVIEW_TABLE.put(txn, id.as_bytes(), &review)?;
                    expired += 1;
                }
            }
            Ok(expired)
        })
        .await
}

pub fn get(tx: &impl Reader, tenant_id: Option<&str>, id: &str) -> Result<Review, StoreError> {
    scoped::get(&REVIEW_TABLE, tx, tenant_id, id, "review")
}

/// Newest first.
pub fn list(
    tx: &impl Reader,
    tenant_id: Option<&str>,
    status: Option<Status>,
    now: i64,
) -> Result<Vec<Review>, StoreError> {
    scoped::list(
        &REVIEW_TABLE,
        tx,
        tenant_id,
        |r| status.is_none_or(|s| r.status_at(now) == s),
        |r| r.created_at,
    )
}

impl scoped::Owned for Review {
    fn tenant_id(&self) -> &str {
        &self.tenant_id
    }
}
