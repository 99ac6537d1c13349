//! First start: the default tenant (the operator tenant), the owner
//! account and, with the embedded demo configuration only, a demo API key.
//!
//! All of it is written in one transaction together with the
//! `initialized` marker, so a crash can never leave half a setup, and a
//! restart never creates a second owner.

use redb::ReadableTable;

use crate::auth::accounts::{self, Account, Role};
use crate::auth::keys::{self, ApiKey, ResetInterval};
use crate::base::ids::new_id;
use crate::base::time::now_ms;
use crate::config::{Config, ConfigSource};
use crate::store::tables::{META, META_INITIALIZED};
use crate::store::{Store, StoreError};
use crate::tenants::{self, DEFAULT_TENANT, Tenant, Tier};

/// What the first start created; the secrets are shown once, here.
pub struct FirstStart {
    pub tenant: Tenant,
    pub owner_email: String,
    /// Set when the password was generated (not given in the environment).
    pub generated_password: Option<String>,
    pub demo_key: Option<String>,
}

/// Runs the first start if the store has never been initialized.
pub async fn first_start(
    store: &Store,
    config: &Config,
    owner_password: Option<String>,
) -> Result<Option<FirstStart>, StoreError> {
    let initialized = store.read(|tx| Ok(tx.open_table(META)?.get(META_INITIALIZED)?.is_some()))?;
    if initialized {
        return Ok(None);
    }
    let (password, generated) = match owner_password.filter(|p| !p.is_empty()) {
        Some(p) => (p, false),
        None => (accounts::generate_password(), true),
    };
    let hash_input = password.clone();
    let password_hash = tokio::task::spawn_blocking(move || accounts::hash_password(&hash_input))
        .await
        .map_err(|e| StoreError::Database(e.to_string()))??;
    let tenant = Tenant::new(DEFAULT_TENANT, Tier::Enterprise)?;
    let owner = Account {
        id: new_id("acc"),
        email: config.owner_email.clone(),
        tenant_id: tenant.id.clone(),
        role: Role::Owner,
        password_hash,
        disabled: false,
        created_at: now_ms(),
    };
    let demo = (config.source == ConfigSource::Embedded).then(|| demo_key(&tenant, &owner));
    let (stored_tenant, stored_owner, stored_key) = (
        tenant.clone(),
        owner.clone(),
        demo.as_ref().map(|(k, _)| k.clone()),
    );
    let created = store
        .write(move |txn| {
            if txn.open_table(META)?.get(META_INITIALIZED)?.is_some() {
                return Ok(false);
            }
            tenants::insert(txn, &stored_tenant)?;
            tenants::set_operator(txn, &stored_tenant.id)?;
            accounts::insert(txn, &stored_owner)?;
            if let Some(key) = &stored_key {
                keys::insert(txn, key)?;
            }
            txn.open_table(META)?
                .insert(META_INITIALIZED, now_ms().to_be_bytes().as_slice())?;
            Ok(true)
        })
        .await?;
    if !created {
        return Ok(None);
    }
    Ok(Some(FirstStart {
        tenant,
        owner_email: owner.email,
        generated_password: generated.then_some(password),
        demo_key: demo.map(|(_, value)| value),
    }))
}

/// The demo configuration's API key, of the owner, without limits: the
/// record and the value shown once.
fn demo_key(tenant: &Tenant, owner: &Account) -> (ApiKey, String) {
    let issued = keys::generate_value();
    let now = now_ms();
    let key = ApiKey {
        id: new_id("key"),
        tenant_id: tenant.id.clone(),
        owner_account_id: Some(owner.id.clone()),
        name: "demo".into(),
        digest: issued.digest,
        hint: issued.hint,
        credit_limit: None,
        credits_consumed: 0,
        reset_interval: ResetInterval::Never,
        cycle_start: 0,
        rate_limit: None,
        expires_at: None,
        allow_high_risk: false,
        notified_thresholds: Vec::new(),
        created_at: now,
        revoked_at: None,
        rotated_from: None,
        tpm_limit: None,
    };
    (key, issued.value)
}

impl FirstStart {
    /// The once-only announcement, printed on standard output (never logged).
    pub fn announce(&self, base_url: &str) -> String {
        let mut out = format!(
            "First start: created tenant `{}` and owner account {}.\n",
            self.tenant.name, self.owner_email
        );
        match &self.generated_password {
            Some(p) => out.push_str(&format!(
                "  Owner password (shown once, store it now): {p}\n"
            )),
            None => out.push_str("  Owner password: the one given in TOLLGATE_OWNER_PASSWORD.\n"),
        }
        if let Some(key) = &self.demo_key {
            out.push_str(&format!("  Demo API key (shown once): {key}\n"));
            out.push_str("  Try it:\n");
            out.push_str(&format!(
                "    curl -s {base_url}/v1/chat/completions -H \"Authorization: Bearer {key}\" \
                 -H \"Content-Type: application/json\" \
                 -d '{{\"model\":\"mock-chat\",\"messages\":[{{\"role\":\"user\",\"content\":\"hello\"}}]}}'\n"
            ));
        }
        out
    }
}
