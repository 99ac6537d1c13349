//! Export and erasure of one end user's data (GDPR Articles 15, 17 and 20).
//!
//! `POST /api/v1/erasure/export` answers that export alone, erasing
//! nothing. `POST /api/v1/erasure` first gathers everything held about the subject
//! (conversation records with their bodies, consent records, held reviews
//! and the usage records of their requests) into one JSON export, then, in
//! the same transaction, erases the bodies and consents (and deletes the
//! conversations kept for the Responses API's `previous_response_id`). What must stay for
//! billing and accountability stays, pseudonymised: usage records never
//! name the end user, conversation records keep their metadata under the
//! subject's pseudonym, and audit entries only ever held the pseudonym, so
//! the audit chain still verifies.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::consents::CONSENT_TABLE;
use super::conversations;
use super::reviews::REVIEW_TABLE;
use crate::audit::{self, Draft, pseudonym};
use crate::base::time::{format_rfc3339, now_ms};
use crate::billing::{USAGE_TABLE, UsageRecord};
use crate::store::{Reader, Store, StoreError};

/// Everything held about one subject of one tenant.
struct Gathered {
    alias: String,
    records: Vec<conversations::Conversation>,
    consents: Vec<super::consents::Consent>,
    reviews: Vec<super::reviews::Review>,
    export: Value,
}

fn subject_id(end_user_id: &str) -> Result<String, StoreError> {
    let subject = end_user_id.trim().to_owned();
    if subject.is_empty() || subject.len() > 256 {
        return Err(StoreError::Invalid(
            "`endUserId` must be 1 to 256 characters".into(),
        ));
    }
    Ok(subject)
}

/// Gathers the subject's records and the export built from them.
fn gather(tx: &impl Reader, tenant_id: &str, subject: &str) -> Result<Gathered, StoreError> {
    let alias = pseudonym(tenant_id, subject);
    let records = conversations::of_subject(tx, tenant_id, subject)?;
    let consents: Vec<_> = CONSENT_TABLE
        .all(tx)?
        .into_iter()
        .filter(|c| c.tenant_id == tenant_id && c.end_user_id == subject)
        .collect();
    let reviews: Vec<_> = REVIEW_TABLE
        .all(tx)?
        .into_iter()
        .filter(|r| {
            r.tenant_id == tenant_id
                && serde_json::from_str::<Value>(&r.request)
                    .is_ok_and(|v| v["end_user_id"].as_str() == Some(subject))
        })
        .collect();
    let request_ids: HashSet<&str> = records
        .iter()
        .map(|c| c.request_id.as_str())
        .chain(reviews.iter().map(|r| r.request_id.as_str()))
        .collect();
    let usage: Vec<Value> = USAGE_TABLE
        .all(tx)?
        .iter()
        .filter(|u| u.tenant_id == tenant_id && request_ids.contains(u.request_id.as_str()))
        .map(UsageRecord::view)
        .collect();
    let export = json!({
        "endUserId": subject,
        "tenantId": tenant_id,
        "pseudonym": alias,
        "exportedAt": format_rfc3339(now_ms()),
        "conversations": records.iter().map(|c| c.view(true)).collect::<Vec<_>>(),
        "consents": consents.iter().map(|c| c.view()).collect::<Vec<_>>(),
        "reviews": reviews.iter().map(|r| r.view(now_ms())).collect::<Vec<_>>(),
        "usage": usage,
    });
    Ok(Gathered {
        alias,
        records,
        consents,
        reviews,
        export,
    })
}

/// Exports without erasing (GDPR Articles 15 and 20): the `export` part
/// of [`erase`]'s answer, from one read transaction.
pub fn export(store: &Store, tenant_id: &str, end_user_id: &str) -> Result<Value, StoreError> {
    let subject = subject_id(end_user_id)?;
    store.read(|tx| Ok(gather(tx, tenant_id, &subject)?.export))
}

/// Exports then erases; returns `{export, erased}`.
pub async fn erase(
    store: &Store,
    tenant_id: &str,
    end_user_id: &str,
    actor: String,
) -> Result<Value, StoreError> {
    let subject = subject_id(end_user_id)?;
    let tenant_id = tenant_id.to_owned();
    store
        .write(move |txn| {
            let Gathered {
                alias,
                records,
                consents,
                reviews,
                export,
            } = gather(txn, &tenant_id, &subject)?;

            for record in &records {
                let mut erased = record.clone();
                erased.request.clear();
                erased.response.clear();
                erased.deployer_context = None;
                erased.end_user_id = Some(alias.clone());
                erased.erased = true;
                conversations::replace(txn, &erased)?;
            }
            for consent in &consents {
                CONSENT_TABLE.remove(txn, consent.id.as_bytes())?;
            }
            // The conversations kept for `previous_response_id`.
            let responses =
                crate::compliance::stored_responses::erase_subject(txn, &tenant_id, &subject)?;
            for review in &reviews {
                let mut erased = review.clone();
                erased.request = "{}".into();
                REVIEW_TABLE.put(txn, erased.id.as_bytes(), &erased)?;
            }
            let erased = json!({
                "conversations": records.len(),
                "consents": consents.len(),
                "reviews": reviews.len(),
                "responses": responses,
            });
            audit::append(
                txn,
                &Draft::new(&tenant_id, actor.clone(), "subject.erase", &alias)
                    .details(erased.clone()),
            )?;
            Ok(json!({ "export": export, "erased": erased }))
        })
        .await
}
