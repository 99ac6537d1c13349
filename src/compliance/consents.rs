//! GDPR consent records, per tenant and end user. A high-risk request under
//! a policy that requires consent names one in `user_consent_id`; it must
//! exist, belong to the caller's tenant (and end user, when the request
//! names one) and not be withdrawn. Withdrawal keeps the record with its
//! time: that a consent existed, and when it ended, is itself evidence.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::base::ids::new_id;
use crate::base::time::{format_rfc3339, now_ms};
use crate::compliance::scoped;
use crate::store::tables::CONSENTS;
use crate::store::{Reader, Store, StoreError, Table};

pub const CONSENT_TABLE: Table<Consent> = Table::new(CONSENTS);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Consent {
    pub id: String,
    pub tenant_id: String,
    pub end_user_id: String,
    /// What the end user consented to, in the deployer's words.
    pub purpose: String,
    pub granted_at: i64,
    pub withdrawn_at: Option<i64>,
}

impl Consent {
    pub fn view(&self) -> Value {
        json!({
            "id": self.id,
            "tenantId": self.tenant_id,
            "endUserId": self.end_user_id,
            "purpose": self.purpose,
            "grantedAt": format_rfc3339(self.granted_at),
            "withdrawnAt": self.withdrawn_at.map(format_rfc3339),
            "status": if self.withdrawn_at.is_some() { "withdrawn" } else { "active" },
        })
    }
}

/// Why a consent reference does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    Unknown,
    Withdrawn(i64),
    OtherSubject,
}

impl Invalid {
    pub fn message(&self, id: &str) -> String {
        match self {
            Invalid::Unknown => {
                format!("`user_consent_id` `{id}` is not a consent record of this tenant")
            }
            Invalid::Withdrawn(at) => format!(
                "the consent `{id}` was withdrawn at {}",
                format_rfc3339(*at)
            ),
            Invalid::OtherSubject => {
                format!("the consent `{id}` was given by another end user than `end_user_id`")
            }
        }
    }
}

/// Checks a consent reference of a request. Another tenant's record reads
/// as unknown: its existence is not revealed.
pub fn check(
    tx: &impl Reader,
    tenant_id: &str,
    id: &str,
    end_user_id: Option<&str>,
) -> Result<Result<Consent, Invalid>, StoreError> {
    let Some(consent) = CONSENT_TABLE.get(tx, id.as_bytes())? else {
        return Ok(Err(Invalid::Unknown));
    };
    if consent.tenant_id != tenant_id {
        return Ok(Err(Invalid::Unknown));
    }
    if let Some(at) = consent.withdrawn_at {
        return Ok(Err(Invalid::Withdrawn(at)));
    }
    if end_user_id.is_some_and(|u| u != consent.end_user_id) {
        return Ok(Err(Invalid::OtherSubject));
    }
    Ok(Ok(consent))
}

fn validate(field: &str, value: &str, max: usize) -> Result<String, StoreError> {
    let value = value.trim();
    if value.is_empty() || value.len() > max || value.chars().any(char::is_control) {
        return Err(StoreError::Invalid(format!(
            "`{field}` must be 1 to {max} printable characters"
        )));
    }
    Ok(value.to_owned())
}

pub async fn grant(
    store: &Store,
    tenant_id: &str,
    end_user_id: &str,
    purpose: &str,
) -> Result<Consent, StoreError> {
    let consent = Consent {
        id: new_id("cns"),
        tenant_id: tenant_id.to_owned(),
        end_user_id: validate("endUserId", end_user_id, 256)?,
        purpose: validate("purpose", purpose, 1000)?,
        granted_at: now_ms(),
        withdrawn_at: None,
    };
    let stored = consent.clone();
    store
        .write(move |txn| CONSENT_TABLE.put(txn, stored.id.as_bytes(), &stored))
        .await?;
    Ok(consent)
}

/// Withdraws a consent (idempotent: a second withdrawal keeps the first
/// time).
pub async fn withdraw(store: &Store, tenant_id: &str, id: &str) -> Result<Consent, StoreError> {
    let (tenant_id, id) = (tenant_id.to_owned(), id.to_owned());
    store
        .write(move |txn| {
            let mut consent = CONSENT_TABLE
                .get(txn, id.as_bytes())?
                .filter(|c| c.tenant_id == tenant_id)
                .ok_or_else(|| StoreError::NotFound(format!("no consent `{id}`")))?;
            if consent.withdrawn_at.is_none() {
                consent.withdrawn_at = Some(now_ms());
                CONSENT_TABLE.put(txn, consent.id.as_bytes(), &consent)?;
            }
            Ok(consent)
        })
        .await
}

pub fn list(
    tx: &impl Reader,
    tenant_id: Option<&str>,
    end_user_id: Option<&str>,
) -> Result<Vec<Consent>, StoreError> {
    scoped::list(
        &CONSENT_TABLE,
        tx,
        tenant_id,
        |c| end_user_id.is_none_or(|u| c.end_user_id == u),
        |c| c.granted_at,
    )
}

pub fn get(tx: &impl Reader, tenant_id: Option<&str>, id: &str) -> Result<Consent, StoreError> {
    scoped::get(&CONSENT_TABLE, tx, tenant_id, id, "consent")
}

impl scoped::Owned for Consent {
    fn tenant_id(&self) -> &str {
        &self.tenant_id
    }
}
