//! The conversation log: per tenant policy, each inference request's bodies
//! with its service fields, classification, model and cost (DESIGN
//! section 5). Records are written in the charge's transaction and expire
//! after the tenant's retention (at least six months for high-risk traffic,
//! Article 26(6)); [`prune`] deletes what is due, through an expiry index,
//! so it reads only what it deletes.

use redb::{ReadTransaction, WriteTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::base::money::micros_to_credits;
use crate::base::time::format_rfc3339;
use crate::store::tables::{CONVERSATION_EXPIRY, CONVERSATIONS};
use crate::store::{CompactTable, Store, StoreError, compact};

mod bodies;
mod stored;

pub const CONVERSATION_TABLE: CompactTable<Conversation> = CompactTable::new(CONVERSATIONS);
pub const DAY_MS: i64 = 86_400_000;
pub const MAX_PAGE: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    pub request_id: String,
    pub tenant_id: String,
    pub key_id: String,
    pub at: i64,
    pub expires_at: i64,
    pub purpose: Option<String>,
    /// The caller's pseudonymous end-user id; after an erasure, the
    /// subject's pseudonym.
    pub end_user_id: Option<String>,
    /// JSON text.
    pub deployer_context: Option<String>,
    pub level: String,
    pub rules: Vec<String>,
    pub model: String,
    pub cost: u64,
    /// The request as the caller sent it (JSON text); empty once erased.
    pub request: String,
    /// The answer: the completion (JSON text) or a stream's text.
    pub response: String,
    pub erased: bool,
}

impl Conversation {
    pub fn view(&self, with_bodies: bool) -> Value {
        let mut view = json!({
            "requestId": self.request_id,
            "tenantId": self.tenant_id,
            "keyId": self.key_id,
            "at": format_rfc3339(self.at),
            "expiresAt": format_rfc3339(self.expires_at),
            "purpose": self.purpose,
            "endUserId": self.end_user_id,
            "deployerContext": self.deployer_context.as_deref().and_then(|c| serde_json::from_str::<Value>(c).ok()),
            "riskLevel": self.level,
            "triggeredRules": self.rules,
            "model": self.model,
            "cost": micros_to_credits(self.cost),
            "erased": self.erased,
        });
        if with_bodies {
            let parse = |text: &str| {
                if text.is_empty() {
                    Value::Null
                } else {
                    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
                }
            };
            view["request"] = parse(&self.request);
            view["response"] = parse(&self.response);
        }
        view
    }
}

pub fn insert(
    txn: &impl crate::store::tables::Writes,
    conversation: &Conversation,
) -> Result<(), StoreError> {
    let key = conversation.key();
    CONVERSATION_TABLE.put(txn, &key, conversation)?;
    txn.insert_raw(CONVERSATION_EXPIRY, &conversation.expiry_key(), &[])
}

/// Rewrites a record in place (same time and expiry).
pub fn replace(txn: &WriteTransaction, conversation: &Conversation) -> Result<(), StoreError> {
    CONVERSATION_TABLE.put(txn, &conversation.key(), conversation)
}

/// Deletes every record whose expiry is at or before `now`; returns how
/// many. Works in batches so one pass never holds a huge transaction.
pub async fn prune(store: &Store, now: i64) -> Result<usize, StoreError> {
    crate::store::expiry::prune(store, CONVERSATION_EXPIRY, CONVERSATIONS, now).await
}

/// Filters of `GET /api/v1/conversations`.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub tenant_id: Option<String>,
    pub key_id: Option<String>,
    pub end_user_id: Option<String>,
    pub level: Option<String>,
    pub from: i64,
    pub to: i64,
    /// Records strictly older than this cursor (the `at` and request id of
    /// the last record of the previous page).
    pub before: Option<Vec<u8>>,
    pub limit: usize,
}

/// Newest first; returns the page and the cursor of the next one.
pub fn list(
    tx: &ReadTransaction,
    filter: &Filter,
) -> Result<(Vec<Conversation>, Option<Vec<u8>>), StoreError> {
    let table = match tx.open_table(CONVERSATIONS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok((Vec::new(), None)),
        Err(e) => return Err(e.into()),
    };
    let lower = filter.from.to_be_bytes().to_vec();
    let upper = match &filter.before {
        Some(cursor) => cursor.clone(),
        None => filter.to.to_be_bytes().to_vec(),
    };
    let mut page = Vec::new();
    let mut next = None;
    for row in table
        .range::<&[u8]>(lower.as_slice()..upper.as_slice())?
        .rev()
    {
        let (key, value) = row?;
        let record: Conversation = compact::decode(key.value(), value.value())?;
        if record.at >= filter.to
            || filter
                .tenant_id
                .as_ref()
                .is_some_and(|t| &record.tenant_id != t)
            || filter.key_id.as_ref().is_some_and(|k| &record.key_id != k)
            || filter
                .end_user_id
                .as_ref()
                .is_some_and(|u| record.end_user_id.as_ref() != Some(u))
            || filter.level.as_ref().is_some_and(|l| &record.level != l)
        {
            continue;
        }
        if page.len() == filter.limit {
            next = Some(key.value().to_vec());
            break;
        }
        page.push(record);
    }
    // The cursor is exclusive: the next page starts below the last record
    // shown, not below the first one left out.
    if next.is_some() {
        next = page.last().map(Conversation::key);
    }
    Ok((page, next))
}

/// Every record of one tenant's end user (for export and erasure).
pub fn of_subject(
    tx: &impl crate::store::Reader,
    tenant_id: &str,
    end_user_id: &str,
) -> Result<Vec<Conversation>, StoreError> {
    Ok(CONVERSATION_TABLE
        .all(tx)?
        .into_iter()
        .filter(|c| c.tenant_id == tenant_id && c.end_user_id.as_deref() == Some(end_user_id))
        .collect())
}

pub fn get(
    tx: &ReadTransaction,
    tenant_id: Option<&str>,
    request_id: &str,
) -> Result<Option<Conversation>, StoreError> {
    // Request ids are not the key; a scan is fine for one record read by
    // a person.
    Ok(CONVERSATION_TABLE
        .all(tx)?
        .into_iter()
        .find(|c| c.request_id == request_id && tenant_id.is_none_or(|t| c.tenant_id == t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, at: i64, expires_at: i64) -> Conversation {
        Conversation {
            request_id: id.into(),
            tenant_id: "ten_a".into(),
            key_id: "key_a".into(),
            at,
            expires_at,
            purpose: None,
            end_user_id: Some("u1".into()),
            deployer_context: None,
            level: "minimal".into(),
            rules: vec![],
            model: "m".into(),
            cost: 1,
            request: "{}".into(),
            response: "{}".into(),
            erased: false,
        }
    }

    #[tokio::test]
    async fn pruning_deletes_what_is_due_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .write(|txn| {
                insert(txn, &record("r1", 10, 100))?;
                insert(txn, &record("r2", 20, 200))?;
                insert(txn, &record("r3", 30, 201))?;
                Ok(())
            })
            .await
            .unwrap();
        assert_eq!(prune(&store, 200).await.unwrap(), 2);
        let left = store.read(|tx| CONVERSATION_TABLE.all(tx)).unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].request_id, "r3");
        assert_eq!(prune(&store, 200).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn pages_are_newest_first_and_continue_from_the_cursor() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .write(|txn| {
                for i in 0..5 {
                    insert(txn, &record(&format!("r{i}"), 10 + i, 1000))?;
                }
                Ok(())
            })
            .await
            .unwrap();
        let mut filter = Filter {
            from: 0,
            to: 1000,
            limit: 2,
            ..Filter::default()
        };
        let mut seen = Vec::new();
        loop {
            let (page, next) = store.read(|tx| list(tx, &filter)).unwrap();
            seen.extend(page.into_iter().map(|c| c.request_id));
            match next {
                Some(cursor) => filter.before = Some(cursor),
                None => break,
            }
        }
        assert_eq!(seen, ["r4", "r3", "r2", "r1", "r0"]);
    }
}
