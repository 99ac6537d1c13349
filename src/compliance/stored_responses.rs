//! The conversations behind responses made by translation, kept for
//! `previous_response_id` (docs/responses.md).
//!
//! A stored response is keyed by its tenant and its id, so one tenant's
//! key can never read another's: the lookup is by `(tenant, id)`, and an
//! id of another tenant reads as unknown (404). It expires with the
//! tenant's conversation retention ([`prune`], run by the compliance
//! sweep) and is deleted by the erasure of its end user
//! ([`erase_subject`]). `store: false` stores nothing.

use redb::WriteTransaction;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::tables::{RESPONSE_EXPIRY, RESPONSES};
use crate::store::{Reader, Store, StoreError, Table};

const RESPONSE_TABLE: Table<StoredResponse> = Table::new(RESPONSES);

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StoredResponse {
    pub id: String,
    pub tenant_id: String,
    pub created_at: i64,
    pub expires_at: i64,
    /// The caller's end-user id, for erasure.
    pub end_user_id: Option<String>,
    /// The conversation up to and with this response, as chat messages
    /// (JSON text), without the request's system messages.
    pub messages: String,
}

fn key(tenant_id: &str, id: &str) -> Vec<u8> {
    let mut key = tenant_id.as_bytes().to_vec();
    key.push(0);
    key.extend_from_slice(id.as_bytes());
    key
}

fn expiry_key(expires_at: i64, key: &[u8]) -> Vec<u8> {
    let mut out = expires_at.to_be_bytes().to_vec();
    out.extend_from_slice(key);
    out
}

/// The conversation of the tenant's response `id`, unless it expired.
pub fn messages(
    tx: &impl Reader,
    tenant_id: &str,
    id: &str,
    now: i64,
) -> Result<Option<Vec<Value>>, StoreError> {
    let Some(stored) = RESPONSE_TABLE.get(tx, &key(tenant_id, id))? else {
        return Ok(None);
    };
    if stored.expires_at <= now {
        return Ok(None);
    }
    serde_json::from_str(&stored.messages)
        .map(Some)
        .map_err(|e| StoreError::Corrupt(format!("stored response `{id}`: {e}")))
}

pub async fn insert(store: &Store, response: StoredResponse) -> Result<(), StoreError> {
    store
        .write(move |txn| {
            let key = key(&response.tenant_id, &response.id);
            RESPONSE_TABLE.put(txn, &key, &response)?;
            txn.open_table(RESPONSE_EXPIRY)?.insert(
                expiry_key(response.expires_at, &key).as_slice(),
                key.as_slice(),
            )?;
            Ok(())
        })
        .await
}

/// Deletes every stored response whose expiry is at or before `now`;
/// returns how many.
pub async fn prune(store: &Store, now: i64) -> Result<usize, StoreError> {
    crate::store::expiry::prune(store, RESPONSE_EXPIRY, RESPONSES, now).await
}

/// Deletes the tenant's stored responses of the end user `subject`, in the
/// erasure's transaction; returns how many.
pub fn erase_subject(
    txn: &WriteTransaction,
    tenant_id: &str,
    subject: &str,
) -> Result<usize, StoreError> {
    let theirs: Vec<StoredResponse> = RESPONSE_TABLE
        .all(txn)?
        .into_iter()
        .filter(|r| r.tenant_id == tenant_id && r.end_user_id.as_deref() == Some(subject))
        .collect();
    let mut index = txn.open_table(RESPONSE_EXPIRY)?;
    let mut records = txn.open_table(RESPONSES)?;
    for response in &theirs {
        let key = key(&response.tenant_id, &response.id);
        records.remove(key.as_slice())?;
        index.remove(expiry_key(response.expires_at, &key).as_slice())?;
    }
    Ok(theirs.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(tenant: &str, id: &str, expires_at: i64, user: Option<&str>) -> StoredResponse {
        StoredResponse {
            id: id.into(),
            tenant_id: tenant.into(),
            created_at: 0,
            expires_at,
            end_user_id: user.map(str::to_owned),
            messages: r#"[{"role":"user","content":"hi"}]"#.into(),
        }
    }

    #[tokio::test]
    async fn a_stored_response_is_read_by_its_tenant_only_until_it_expires() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        insert(&store, response("t1", "resp_a", 100, None))
            .await
            .unwrap();
        insert(&store, response("t1", "resp_b", 300, Some("alice")))
            .await
            .unwrap();
        let read = |tenant: &str, id: &str, now: i64| {
            store
                .read(|tx| messages(tx, tenant, id, now))
                .unwrap()
                .is_some()
        };
        assert!(read("t1", "resp_a", 50));
        assert!(!read("t2", "resp_a", 50), "never across tenants");
        assert!(!read("t1", "resp_a", 100), "expired");
        assert_eq!(prune(&store, 200).await.unwrap(), 1);
        assert!(!read("t1", "resp_a", 0), "pruned");
        assert!(read("t1", "resp_b", 200));

        let erased = store
            .write(|txn| erase_subject(txn, "t1", "alice"))
            .await
            .unwrap();
        assert_eq!(erased, 1);
        assert!(!read("t1", "resp_b", 0));
        assert_eq!(prune(&store, 1000).await.unwrap(), 0, "its expiry went too");
    }
}
