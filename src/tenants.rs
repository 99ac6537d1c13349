//! Tenants: the organisations that own keys, accounts, a credit wallet,
//! webhook settings and a compliance policy.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::base::ids::new_id;
use crate::base::ids::random_token;
use crate::base::money::micros_to_credits;
use crate::base::time::{format_rfc3339, now_ms};
use crate::pii;
use crate::store::tables::{self, TENANT_NAMES, TENANTS};
use crate::store::{Reader, Store, StoreError, Table};

pub const TENANT_TABLE: Table<Tenant> = Table::new(TENANTS);

/// The tenant created at first start.
pub const DEFAULT_TENANT: &str = "default";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Blocked by the daily multimodal cap instead of billed.
    Free,
    Paid,
    /// The wallet may go negative.
    Enterprise,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Free => "free",
            Tier::Paid => "paid",
            Tier::Enterprise => "enterprise",
        }
    }
}

impl std::str::FromStr for Tier {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "free" => Ok(Tier::Free),
            "paid" => Ok(Tier::Paid),
            "enterprise" => Ok(Tier::Enterprise),
            other => Err(format!(
                "`{other}` is not a tier; use free, paid or enterprise"
            )),
        }
    }
}

/// When the human-review queue holds a response (Article 14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewMode {
    Off,
    HighRisk,
    All,
}

/// A tenant's compliance policy (`GET`/`PUT /api/v1/policies`). The
/// defaults are the conservative ones (DESIGN section 5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompliancePolicy {
    /// A high-risk request must declare its `purpose`.
    pub require_purpose: bool,
    /// A high-risk request must name a valid `user_consent_id`.
    pub require_consent: bool,
    pub review_mode: ReviewMode,
    /// Seconds a held response waits for a reviewer before it expires.
    pub review_ttl_secs: u32,
    /// Grey zones go to the judge model.
    pub judge_enabled: bool,
    /// The catalogue model that judges; `None` disables the judge.
    pub judge_model: Option<String>,
    /// Keep request and response bodies in the conversation log.
    pub log_bodies: bool,
    /// Days the conversation log keeps a request.
    pub retention_days: u32,
    /// Days it keeps a high-risk request (Article 26(6): at least six
    /// months).
    pub high_risk_retention_days: u32,
    /// Route only to providers listed in the sub-processor registry.
    pub enforce_registry: bool,
    /// Where personal data is replaced by typed placeholders: nowhere, in
    /// what Tollgate stores (the default), or also in what the provider
    /// receives (schema 5).
    pub pii_redaction: pii::Mode,
    /// The tenant's own patterns, redacted like the built-in types.
    pub pii_patterns: Vec<pii::Pattern>,
}

/// Article 26(6): logs of high-risk use are kept at least six months.
pub const MIN_HIGH_RISK_RETENTION_DAYS: u32 = 183;

impl Default for CompliancePolicy {
    fn default() -> Self {
        CompliancePolicy {
            require_purpose: false,
            require_consent: false,
            review_mode: ReviewMode::Off,
            review_ttl_secs: 72 * 3600,
            judge_enabled: false,
            judge_model: None,
            log_bodies: true,
            retention_days: MIN_HIGH_RISK_RETENTION_DAYS,
            high_risk_retention_days: MIN_HIGH_RISK_RETENTION_DAYS,
            enforce_registry: false,
            pii_redaction: pii::Mode::Logs,
            pii_patterns: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tenant {
    pub id: String,
    pub name: String,
    pub tier: Tier,
    /// Prepaid credits, in micro-credits.
    pub wallet: i64,
    /// Signs this tenant's webhook deliveries (HMAC-SHA256). It must be
    /// usable to sign, so unlike keys it cannot be stored as a digest.
    pub webhook_secret: String,
    pub webhook_urls: Vec<String>,
    pub policy: CompliancePolicy,
    pub created_at: i64,
    /// Last change of the URLs or the secret (schema 2).
    pub webhooks_updated_at: i64,
}

impl Tenant {
    pub fn new(name: &str, tier: Tier) -> Result<Tenant, StoreError> {
        let name = validate_name(name)?;
        Ok(Tenant {
            id: new_id("ten"),
            name,
            tier,
            wallet: 0,
            webhook_secret: new_webhook_secret(),
            webhook_urls: Vec::new(),
            policy: CompliancePolicy::default(),
            created_at: now_ms(),
            webhooks_updated_at: now_ms(),
        })
    }

    /// The last four characters of the signing secret, for recognising it.
    pub fn secret_hint(&self) -> String {
        let hint = &self.webhook_secret[self.webhook_secret.len().saturating_sub(4)..];
        format!("...{hint}")
    }

    /// The webhook settings view (DESIGN 7.4): never the secret itself.
    pub fn webhooks_view(&self) -> Value {
        json!({
            "urls": self.webhook_urls,
            "signingSecretHint": self.secret_hint(),
            "updatedAt": format_rfc3339(self.webhooks_updated_at),
        })
    }

    /// The JSON view: never the secret, only its last four characters, and
    /// the webhook URLs with their credentials hidden (whole only in
    /// [`Tenant::webhooks_view`], for `webhooks.manage`).
    pub fn view(&self) -> Value {
        let urls: Vec<String> = self
            .webhook_urls
            .iter()
            .map(|u| crate::base::redact::url(u))
            .collect();
        json!({
            "id": self.id,
            "name": self.name,
            "tier": self.tier.as_str(),
            "walletBalance": micros_to_credits(self.wallet),
            "webhookUrls": urls,
            "signingSecretHint": self.secret_hint(),
            "createdAt": format_rfc3339(self.created_at),
        })
    }
}

fn validate_name(name: &str) -> Result<String, StoreError> {
    let name = name.trim();
    if name.is_empty() || name.len() > 100 || crate::base::names::has_hidden(name) {
        return Err(StoreError::Invalid(
            "a tenant name must be 1 to 100 printable characters (no control, zero-width or bidirectional characters)".into(),
        ));
    }
    Ok(name.to_owned())
}

/// Inserts a tenant inside a write transaction, refusing a taken name.
/// Names are unique regardless of case (`TENA` and `tenA` would be told
/// apart by no one reading a list). Stores written before this rule may
/// hold such pairs: they keep loading, each name resolving exactly, and
/// only new names are checked.
pub fn insert(txn: &redb::WriteTransaction, tenant: &Tenant) -> Result<(), StoreError> {
    if let Some(taken) = name_taken(txn, &tenant.name)? {
        return Err(StoreError::Conflict(format!(
            "a tenant named `{taken}` already exists (names are compared regardless of case)"
        )));
    }
    TENANT_TABLE.put(txn, tenant.id.as_bytes(), tenant)?;
    tables::index_put(txn, TENANT_NAMES, tenant.name.as_bytes(), &tenant.id)
}

/// The stored name equal to `name` regardless of case, if any. Tenants
/// are few, so the name index is read whole.
fn name_taken(txn: &redb::WriteTransaction, name: &str) -> Result<Option<String>, StoreError> {
    if tables::index_get(txn, TENANT_NAMES, name.as_bytes())?.is_some() {
        return Ok(Some(name.to_owned()));
    }
    let folded = name.to_lowercase();
    let table = txn.open_table(TENANT_NAMES)?;
    for row in redb::ReadableTable::iter(&table)? {
        let (stored, _) = row?;
        let stored = String::from_utf8_lossy(stored.value());
        if stored.to_lowercase() == folded {
            return Ok(Some(stored.into_owned()));
        }
    }
    Ok(None)
}

pub async fn create(store: &Store, name: &str, tier: Tier) -> Result<Tenant, StoreError> {
    let tenant = Tenant::new(name, tier)?;
    let stored = tenant.clone();
    store.write(move |txn| insert(txn, &stored)).await?;
    Ok(tenant)
}

/// Finds a tenant by id or by name.
pub fn resolve(tx: &impl Reader, id_or_name: &str) -> Result<Tenant, StoreError> {
    if let Some(tenant) = TENANT_TABLE.get(tx, id_or_name.as_bytes())? {
        return Ok(tenant);
    }
    if let Some(id) = tables::index_get(tx, TENANT_NAMES, id_or_name.as_bytes())?
        && let Some(tenant) = TENANT_TABLE.get(tx, id.as_bytes())?
    {
        return Ok(tenant);
    }
    Err(StoreError::NotFound(format!("no tenant `{id_or_name}`")))
}

/// The rows of `table` that belong to the tenant `tenant` names (by id or
/// name), or every row without one; `owner` reads a row's tenant id.
pub fn rows_of<V: Serialize + serde::de::DeserializeOwned>(
    tx: &impl Reader,
    table: &Table<V>,
    tenant: Option<&str>,
    owner: impl Fn(&V) -> &str,
) -> Result<Vec<V>, StoreError> {
    let tenant_id = tenant.map(|t| resolve(tx, t)).transpose()?.map(|t| t.id);
    Ok(table
        .all(tx)?
        .into_iter()
        .filter(|row| tenant_id.as_deref().is_none_or(|t| owner(row) == t))
        .collect())
}

fn new_webhook_secret() -> String {
    format!("whsec_{}", random_token(32))
}

/// The most URLs one tenant may register.
pub const MAX_WEBHOOK_URLS: usize = 20;

/// Replaces a tenant's webhook URLs with `urls`, checked (http(s), no
/// credentials, no private target unless `allow_private`) and without
/// duplicates. Setting the same list again changes nothing, not even
/// `updatedAt`.
pub async fn set_webhook_urls(
    store: &Store,
    tenant_id: &str,
    urls: Vec<String>,
    allow_private: bool,
) -> Result<Tenant, StoreError> {
    if urls.len() > MAX_WEBHOOK_URLS {
        return Err(StoreError::Invalid(format!(
            "at most {MAX_WEBHOOK_URLS} webhook URLs per tenant"
        )));
    }
    let mut checked: Vec<String> = Vec::with_capacity(urls.len());
    for url in &urls {
        if url.len() > 2048 {
            return Err(StoreError::Invalid(
                "a webhook URL is at most 2048 characters".into(),
            ));
        }
        let url = crate::base::net_guard::check_url(url, allow_private)
            .map_err(StoreError::Invalid)?
            .to_string();
        if !checked.contains(&url) {
            checked.push(url);
        }
    }
    let tenant_id = tenant_id.to_owned();
    store
        .write(move |txn| {
            let mut tenant = resolve(txn, &tenant_id)?;
            if tenant.webhook_urls != checked {
                tenant.webhook_urls = checked.clone();
                tenant.webhooks_updated_at = now_ms();
                TENANT_TABLE.put(txn, tenant.id.as_bytes(), &tenant)?;
            }
            Ok(tenant)
        })
        .await
}

/// Replaces a tenant's compliance policy (validated by the caller).
pub async fn set_policy(
    store: &Store,
    tenant_id: &str,
    policy: CompliancePolicy,
) -> Result<Tenant, StoreError> {
    let tenant_id = tenant_id.to_owned();
    store
        .write(move |txn| {
            let mut tenant = resolve(txn, &tenant_id)?;
            tenant.policy = policy.clone();
            TENANT_TABLE.put(txn, tenant.id.as_bytes(), &tenant)?;
            Ok(tenant)
        })
        .await
}

/// Changes a tenant's tier; the next request is admitted and billed by it.
pub async fn set_tier(store: &Store, tenant_id: &str, tier: Tier) -> Result<Tenant, StoreError> {
    let tenant_id = tenant_id.to_owned();
    store
        .write(move |txn| {
            let mut tenant = resolve(txn, &tenant_id)?;
            tenant.tier = tier;
            TENANT_TABLE.put(txn, tenant.id.as_bytes(), &tenant)?;
            Ok(tenant)
        })
        .await
}

/// Gives a tenant a new signing secret; returns the tenant with it (the
/// only time the secret leaves the server).
pub async fn rotate_webhook_secret(store: &Store, tenant_id: &str) -> Result<Tenant, StoreError> {
    let tenant_id = tenant_id.to_owned();
    store
        .write(move |txn| {
            let mut tenant = resolve(txn, &tenant_id)?;
            tenant.webhook_secret = new_webhook_secret();
            tenant.webhooks_updated_at = now_ms();
            TENANT_TABLE.put(txn, tenant.id.as_bytes(), &tenant)?;
            Ok(tenant)
        })
        .await
}

/// The operator tenant's id: the tenant made at first start, whose owners
/// and admins run the gateway for every tenant (global catalogue,
/// sub-processor registry, tenants). `None` before the first start.
pub fn operator_id(tx: &impl Reader) -> Result<Option<String>, StoreError> {
    tx.get_raw(tables::META, tables::META_OPERATOR_TENANT)?
        .map(|raw| {
            String::from_utf8(raw)
                .map_err(|_| StoreError::Corrupt("the operator tenant id is not UTF-8".into()))
        })
        .transpose()
}

/// Records the operator tenant (first start, migration).
pub fn set_operator(txn: &redb::WriteTransaction, tenant_id: &str) -> Result<(), StoreError> {
    txn.open_table(tables::META)?
        .insert(tables::META_OPERATOR_TENANT, tenant_id.as_bytes())?;
    Ok(())
}

/// Schema 1 to 2: tenants gain `webhooks_updated_at` (set to their
/// creation time).
pub fn migrate_v1_to_v2(txn: &redb::WriteTransaction) -> Result<(), StoreError> {
    rewrite_tenants(txn, |t: legacy::TenantV1| legacy::TenantV2 {
        webhooks_updated_at: t.created_at,
        id: t.id,
        name: t.name,
        tier: t.tier,
        wallet: t.wallet,
        webhook_secret: t.webhook_secret,
        webhook_urls: t.webhook_urls,
        policy: t.policy,
        created_at: t.created_at,
    })
}

/// Schema 2 to 3: the compliance policy gains the review expiry, the judge
/// switch and the high-risk retention, at their defaults.
pub fn migrate_v2_to_v3(txn: &redb::WriteTransaction) -> Result<(), StoreError> {
    rewrite_tenants(txn, |t: legacy::TenantV2| legacy::TenantV3 {
        id: t.id,
        name: t.name,
        tier: t.tier,
        wallet: t.wallet,
        webhook_secret: t.webhook_secret,
        webhook_urls: t.webhook_urls,
        policy: legacy::PolicyV3 {
            require_purpose: t.policy.require_purpose,
            require_consent: t.policy.require_consent,
            review_mode: t.policy.review_mode,
            review_ttl_secs: CompliancePolicy::default().review_ttl_secs,
            judge_enabled: t.policy.judge_model.is_some(),
            judge_model: t.policy.judge_model,
            log_bodies: t.policy.log_bodies,
            retention_days: t.policy.retention_days,
            high_risk_retention_days: t.policy.retention_days.max(MIN_HIGH_RISK_RETENTION_DAYS),
            enforce_registry: t.policy.enforce_registry,
        },
        created_at: t.created_at,
        webhooks_updated_at: t.webhooks_updated_at,
    })
}

/// The PII step: the compliance policy gains `pii_redaction` (at its
/// default, `logs`: stored bodies keep placeholders from now on) and
/// `pii_patterns` (none). Records written before stay as they were. A
/// row already in the new layout (a store whose version was set back by
/// hand) is kept: the codec refuses either layout read as the other.
pub fn migrate_pii_policy(txn: &redb::WriteTransaction) -> Result<(), StoreError> {
    let old: Vec<(Vec<u8>, legacy::TenantV3)> = {
        let table = txn.open_table(TENANTS)?;
        let mut out = Vec::new();
        for row in redb::ReadableTable::iter(&table)? {
            let (k, v) = row?;
            if crate::store::codec::decode::<Tenant>(v.value()).is_ok() {
                continue;
            }
            out.push((
                k.value().to_vec(),
                crate::store::codec::decode::<legacy::TenantV3>(v.value())?,
            ));
        }
        out
    };
    for (key, t) in old {
        TENANT_TABLE.put(txn, &key, &pii_upgrade(t))?;
    }
    Ok(())
}

fn pii_upgrade(t: legacy::TenantV3) -> Tenant {
    Tenant {
        id: t.id,
        name: t.name,
        tier: t.tier,
        wallet: t.wallet,
        webhook_secret: t.webhook_secret,
        webhook_urls: t.webhook_urls,
        policy: CompliancePolicy {
            require_purpose: t.policy.require_purpose,
            require_consent: t.policy.require_consent,
            review_mode: t.policy.review_mode,
            review_ttl_secs: t.policy.review_ttl_secs,
            judge_enabled: t.policy.judge_enabled,
            judge_model: t.policy.judge_model,
            log_bodies: t.policy.log_bodies,
            retention_days: t.policy.retention_days,
            high_risk_retention_days: t.policy.high_risk_retention_days,
            enforce_registry: t.policy.enforce_registry,
            pii_redaction: pii::Mode::Logs,
            pii_patterns: Vec::new(),
        },
        created_at: t.created_at,
        webhooks_updated_at: t.webhooks_updated_at,
    }
}

/// Decodes every tenant row as `Old` and writes it back as `New`.
fn rewrite_tenants<Old, New>(
    txn: &redb::WriteTransaction,
    upgrade: impl Fn(Old) -> New,
) -> Result<(), StoreError>
where
    Old: serde::de::DeserializeOwned,
    New: Serialize + serde::de::DeserializeOwned,
{
    let old: Vec<(Vec<u8>, Old)> = {
        let table = txn.open_table(TENANTS)?;
        let mut out = Vec::new();
        for row in redb::ReadableTable::iter(&table)? {
            let (k, v) = row?;
            out.push((
                k.value().to_vec(),
                crate::store::codec::decode::<Old>(v.value())?,
            ));
        }
        out
    };
    let table: Table<New> = Table::new(TENANTS);
    for (key, t) in old {
        table.put(txn, &key, &upgrade(t))?;
    }
    Ok(())
}

/// The layouts of earlier schemas, for their migrations (and their tests).
pub mod legacy {
    use serde::{Deserialize, Serialize};

    use super::{ReviewMode, Tier};

    /// The policy of schemas 1 and 2.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct PolicyV1 {
        pub require_purpose: bool,
        pub require_consent: bool,
        pub review_mode: ReviewMode,
        pub judge_model: Option<String>,
        pub log_bodies: bool,
        pub retention_days: u32,
        pub enforce_registry: bool,
    }

    impl Default for PolicyV1 {
        fn default() -> Self {
            PolicyV1 {
                require_purpose: false,
                require_consent: false,
                review_mode: ReviewMode::Off,
                judge_model: None,
                log_bodies: true,
                retention_days: 183,
                enforce_registry: false,
            }
        }
    }

    #[derive(Debug, Clone, Serialize, Deserialize)]
    pub struct TenantV1 {
        pub id: String,
        pub name: String,
        pub tier: Tier,
        pub wallet: i64,
        pub webhook_secret: String,
        pub webhook_urls: Vec<String>,
        pub policy: PolicyV1,
        pub created_at: i64,
    }

    /// The policy of schemas 3 and 4 (before PII redaction).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct PolicyV3 {
        pub require_purpose: bool,
        pub require_consent: bool,
        pub review_mode: ReviewMode,
        pub review_ttl_secs: u32,
        pub judge_enabled: bool,
        pub judge_model: Option<String>,
        pub log_bodies: bool,
        pub retention_days: u32,
        pub high_risk_retention_days: u32,
        pub enforce_registry: bool,
    }

    /// The tenant of schemas 3 and 4.
    #[derive(Debug, Clone, Serialize, Deserialize)]
    pub struct TenantV3 {
        pub id: String,
        pub name: String,
        pub tier: Tier,
        pub wallet: i64,
        pub webhook_secret: String,
        pub webhook_urls: Vec<String>,
        pub policy: PolicyV3,
        pub created_at: i64,
        pub webhooks_updated_at: i64,
    }

    #[derive(Debug, Clone, Serialize, Deserialize)]
    pub struct TenantV2 {
        pub id: String,
        pub name: String,
        pub tier: Tier,
        pub wallet: i64,
        pub webhook_secret: String,
        pub webhook_urls: Vec<String>,
        pub policy: PolicyV1,
        pub created_at: i64,
        pub webhooks_updated_at: i64,
    }
}

pub fn list(store: &Store) -> Result<Vec<Tenant>, StoreError> {
    store.read(|tx| TENANT_TABLE.all(tx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn names_differing_only_in_case_are_refused_but_stored_pairs_still_load() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        create(&store, "TENA", Tier::Paid).await.unwrap();
        for name in ["tenA", "tena", " TENA "] {
            let refused = create(&store, name, Tier::Paid).await.unwrap_err();
            assert!(
                matches!(refused, StoreError::Conflict(_)),
                "{name}: {refused:?}"
            );
        }
        // A pair written before the rule, as an older version could.
        let legacy = Tenant::new("tenA", Tier::Free).unwrap();
        let stored = legacy.clone();
        store
            .write(move |txn| {
                TENANT_TABLE.put(txn, stored.id.as_bytes(), &stored)?;
                tables::index_put(txn, TENANT_NAMES, stored.name.as_bytes(), &stored.id)
            })
            .await
            .unwrap();
        drop(store);
        let store = Store::open(dir.path()).unwrap();
        let names: Vec<String> = list(&store).unwrap().into_iter().map(|t| t.name).collect();
        assert!(names.contains(&"TENA".to_owned()) && names.contains(&"tenA".to_owned()));
        let found = store.read(|tx| resolve(tx, "tenA")).unwrap();
        assert_eq!(found.id, legacy.id);
        assert_eq!(store.read(|tx| resolve(tx, "TENA")).unwrap().name, "TENA");
        assert!(create(&store, "TenA", Tier::Paid).await.is_err());
    }
}
