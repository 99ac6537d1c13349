//! API keys: format, digest, lifecycle states, spend cycles, and the
//! authentication of an inference request.
//!
//! A key value is `kp_live_` followed by 24 random bytes in URL-safe base64
//! without padding (32 characters). Only its SHA-256 digest is stored, with a
//! short hint for display; the value is shown once, at creation. Expired and
//! revoked keys can never be re-enabled: rotation creates a new key.
//!
//! Authentication is on the hot path of every request, so records found by
//! digest are cached in memory. Every change to a key goes through the
//! functions of this module, which refresh the cache after the change is
//! durable; the cache can therefore never serve a state older than what a
//! caller was told was written.
//!
//! The module is split by concern: [`value`] (format and digest),
//! [`record`] (the stored record, its state and cycle), [`controls`] (what a
//! caller may change), [`migrate`] (older layouts); this file is the service
//! that reads and writes keys and keeps the cache.

mod controls;
mod migrate;
mod record;
mod value;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use controls::{Controls, validate_rate_limit, validate_tpm_limit};
pub use controls::{KeySettings, KeyUpdate, Latitude, Patch, validate_key_name};
pub use migrate::{legacy, migrate_v4_to_v5};
pub use record::{ApiKey, KeyState, ResetInterval};
pub use value::{KEY_PREFIX, KEY_RANDOM_BYTES, NewKeyValue, digest_of, generate_value};

use super::error::AuthError;
use crate::base::ids::new_id;
use crate::base::time::now_ms;
use crate::store::tables::{self, API_KEYS, KEY_DIGESTS, KEY_ROTATIONS};
use crate::store::{Reader, Store, StoreError, Table};
use crate::tenants;

pub const KEY_TABLE: Table<ApiKey> = Table::new(API_KEYS);

/// The key service: stored records plus the authentication cache.
#[derive(Clone)]
pub struct Keys {
    store: Arc<Store>,
    cache: Arc<RwLock<HashMap<[u8; 32], Arc<ApiKey>>>>,
}

/// A key created or rotated: the record and, once only, its value.
pub struct IssuedKey {
    pub key: ApiKey,
    pub value: String,
}

impl Keys {
    pub fn new(store: Arc<Store>) -> Keys {
        Keys {
            store,
            cache: Arc::default(),
        }
    }

    /// Authenticates a presented key value as of `now`.
    pub fn authenticate(&self, presented: &str, now: i64) -> Result<Arc<ApiKey>, AuthError> {
        self.identify(presented, now).map_err(|(_, error)| error)
    }

    /// Authenticates like [`Keys::authenticate`]; a refusal names the key
    /// when it is a known one (revoked, expired, over budget), so the
    /// refusal can be audited for its tenant. An unknown value names none.
    pub fn identify(
        &self,
        presented: &str,
        now: i64,
    ) -> Result<Arc<ApiKey>, (Option<Arc<ApiKey>>, AuthError)> {
        let unknown = || AuthError::UnknownKey;
        let digest = digest_of(presented).ok_or_else(|| (None, unknown()))?;
        let cached = self
            .cache
            .read()
            .expect("key cache lock")
            .get(&digest)
            .cloned();
        let key = match cached {
            Some(key) => key,
            None => {
                let found = self
                    .store
                    .read(|tx| match tables::index_get(tx, KEY_DIGESTS, &digest)? {
                        Some(id) => KEY_TABLE.get(tx, id.as_bytes()),
                        None => Ok(None),
                    })
                    .map_err(|e| (None, AuthError::internal("reading an API key", e)))?;
                // Unknown digests are not cached: a flood of random keys must
                // not grow memory.
                let key = Arc::new(found.ok_or_else(|| (None, unknown()))?);
                self.cache
                    .write()
                    .expect("key cache lock")
                    .insert(digest, key.clone());
                key
            }
        };
        let refusal = match key.state(now) {
            KeyState::Active => return Ok(key),
            KeyState::Revoked => AuthError::RevokedKey,
            KeyState::Expired => AuthError::ExpiredKey,
            KeyState::OverBudget => AuthError::KeyOverBudget,
        };
        Err((Some(key), refusal))
    }

    /// Replaces the cached record. Writers that change an existing key (the
    /// ledger, updates, revocation) call it inside their write job: jobs run
    /// one after another on the writer thread, so the cache sees the records
    /// in the order they are applied. A refresh after `.await` could land
    /// out of order and put an older record (a lower consumption, a key not
    /// yet revoked) back in the cache. If a commit then fails, the cache can
    /// hold a record that was never written, and the next write of that key
    /// corrects it.
    pub fn refresh(&self, key: &ApiKey) {
        self.cache
            .write()
            .expect("key cache lock")
            .insert(key.digest, Arc::new(key.clone()));
    }

    pub async fn create(
        &self,
        tenant: &str,
        settings: KeySettings,
        latitude: Latitude,
    ) -> Result<IssuedKey, StoreError> {
        let name = validate_key_name(&settings.name)?;
        validate_rate_limit(settings.rate_limit)?;
        validate_tpm_limit(settings.tpm_limit)?;
        let reset_interval = settings.reset_interval.unwrap_or(ResetInterval::Never);
        let asked = Controls {
            credit_limit: settings.credit_limit,
            reset_interval,
            rate_limit: settings.rate_limit,
            expires_at: settings.expires_at,
            allow_high_risk: settings.allow_high_risk,
            tpm_limit: settings.tpm_limit,
        };
        latitude.check(Controls::NEW_KEY, asked, false)?;
        let now = now_ms();
        if settings.expires_at.is_some_and(|at| at <= now) {
            return Err(StoreError::Invalid(
                "expiresAt must be in the future".into(),
            ));
        }
        let issued = generate_value();
        let tenant = tenant.to_owned();
        let value = issued.value;
        let key = self
            .store
            .write(move |txn| {
                let tenant = tenants::resolve(txn, &tenant)?;
                let owner = match &settings.owner_account_id {
                    Some(who) => {
                        let account = super::accounts::find(txn, who)?;
                        if account.tenant_id != tenant.id {
                            return Err(StoreError::Invalid(
                                "the owner account belongs to another tenant".into(),
                            ));
                        }
                        Some(account.id)
                    }
                    None => None,
                };
                let key = ApiKey {
                    id: new_id("key"),
                    tenant_id: tenant.id,
                    owner_account_id: owner,
                    name: name.clone(),
                    digest: issued.digest,
                    hint: issued.hint.clone(),
                    credit_limit: settings.credit_limit,
                    credits_consumed: 0,
                    reset_interval,
                    cycle_start: reset_interval.cycle_start(now),
                    rate_limit: settings.rate_limit,
                    expires_at: settings.expires_at,
                    allow_high_risk: settings.allow_high_risk,
                    notified_thresholds: Vec::new(),
                    created_at: now,
                    revoked_at: None,
                    rotated_from: None,
                    tpm_limit: settings.tpm_limit,
                };
                insert(txn, &key)?;
                Ok(key)
            })
            .await?;
        self.refresh(&key);
        Ok(IssuedKey { key, value })
    }

    pub fn get(&self, id: &str) -> Result<ApiKey, StoreError> {
        self.store.read(|tx| stored(tx, id))
    }

    /// Keys of one tenant (by id or name), or of every tenant.
    pub fn list(&self, tenant: Option<&str>) -> Result<Vec<ApiKey>, StoreError> {
        self.store.read(|tx| {
            let mut keys = tenants::rows_of(tx, &KEY_TABLE, tenant, |k| &k.tenant_id)?;
            keys.sort_by(|a, b| a.id.cmp(&b.id));
            Ok(keys)
        })
    }

    /// Changes a key. The latitude is checked against the stored record in
    /// the write transaction, so a concurrent change cannot slip a loosening
    /// past it.
    pub async fn update(
        &self,
        id: &str,
        update: KeyUpdate,
        latitude: Latitude,
    ) -> Result<ApiKey, StoreError> {
        if let Some(name) = &update.name {
            validate_key_name(name)?;
        }
        if let Patch::Set(limit) = update.rate_limit {
            validate_rate_limit(Some(limit))?;
        }
        if let Patch::Set(limit) = update.tpm_limit {
            validate_tpm_limit(Some(limit))?;
        }
        self.change(id, move |txn, key| {
            let now = now_ms();
            refuse_ended(
                key,
                now,
                "the key is revoked and cannot be changed; create a new key",
                "the key has expired and cannot be re-enabled; create a new key",
            )?;
            let before = Controls::of(key);
            if let Some(name) = &update.name {
                key.name = validate_key_name(name)?;
            }
            update.credit_limit.apply(&mut key.credit_limit);
            if let Some(interval) = update.reset_interval
                && interval != key.reset_interval
            {
                // Consumption of the cycle in progress carries over; the
                // cycle is re-aligned to the new interval's boundary.
                let (consumed, thresholds) = key.current_cycle(now);
                let thresholds = thresholds.to_vec();
                key.credits_consumed = consumed;
                key.notified_thresholds = thresholds;
                key.reset_interval = interval;
                key.cycle_start = interval.cycle_start(now);
            }
            update.rate_limit.apply(&mut key.rate_limit);
            update.tpm_limit.apply(&mut key.tpm_limit);
            if let Patch::Set(at) = update.expires_at
                && at <= now
            {
                return Err(StoreError::Invalid(
                    "expiresAt must be in the future".into(),
                ));
            }
            update.expires_at.apply(&mut key.expires_at);
            if let Some(allow) = update.allow_high_risk {
                key.allow_high_risk = allow;
            }
            latitude.check(before, Controls::of(key), true)?;
            KEY_TABLE.put(txn, key.id.as_bytes(), key)
        })
        .await
    }

    /// Revokes a key; it answers 403 `invalid_api_key` from now on. Its
    /// record stays, so historical usage remains attributable.
    pub async fn revoke(&self, id: &str) -> Result<ApiKey, StoreError> {
        self.change(id, |txn, key| {
            if key.revoked_at.is_some() {
                return Ok(());
            }
            key.revoked_at = Some(now_ms());
            KEY_TABLE.put(txn, key.id.as_bytes(), key)
        })
        .await
    }

    /// Changes the stored key `id` in one write transaction: `change`
    /// edits the record and writes it when it changes it. The cache is
    /// refreshed in the writer, in commit order (see `refresh`).
    async fn change(
        &self,
        id: &str,
        mut change: impl FnMut(&redb::WriteTransaction, &mut ApiKey) -> Result<(), StoreError>
        + Send
        + 'static,
    ) -> Result<ApiKey, StoreError> {
        let id = id.to_owned();
        let cache = self.clone();
        self.store
            .write(move |txn| {
                let mut key = stored(txn, &id)?;
                change(txn, &mut key)?;
                cache.refresh(&key);
                Ok(key)
            })
            .await
    }

    /// Creates a new key with the settings of `id`; the old key stays valid
    /// until revoked (rotation without downtime). The new key starts from
    /// the old one's consumption and notified thresholds for the current
    /// cycle, so rotating does not reset a cap. While both keys live, the
    /// ledger charges every request of either to both counters (one
    /// allowance); `KEY_ROTATIONS` links the old key to the new one.
    pub async fn rotate(&self, id: &str) -> Result<IssuedKey, StoreError> {
        let issued = generate_value();
        let value = issued.value;
        let id = id.to_owned();
        let key = self
            .store
            .write(move |txn| {
                let old = stored(txn, &id)?;
                let now = now_ms();
                refuse_ended(
                    &old,
                    now,
                    "a revoked key cannot be rotated",
                    "an expired key cannot be rotated",
                )?;
                let (consumed, thresholds) = old.current_cycle(now);
                let key = ApiKey {
                    id: new_id("key"),
                    digest: issued.digest,
                    hint: issued.hint.clone(),
                    credits_consumed: consumed,
                    notified_thresholds: thresholds.to_vec(),
                    cycle_start: old.reset_interval.cycle_start(now),
                    created_at: now,
                    revoked_at: None,
                    rotated_from: Some(old.id.clone()),
                    ..old.clone()
                };
                insert(txn, &key)?;
                tables::index_put(txn, KEY_ROTATIONS, old.id.as_bytes(), &key.id)?;
                Ok(key)
            })
            .await?;
        self.refresh(&key);
        Ok(IssuedKey { key, value })
    }
}

/// Stores a new key and its digest index inside a write transaction.
pub fn insert(txn: &redb::WriteTransaction, key: &ApiKey) -> Result<(), StoreError> {
    if tables::index_get(txn, KEY_DIGESTS, &key.digest)?.is_some() {
        // 192 random bits make this unreachable short of a broken RNG.
        return Err(StoreError::Conflict("key digest collision".into()));
    }
    KEY_TABLE.put(txn, key.id.as_bytes(), key)?;
    tables::index_put(txn, KEY_DIGESTS, &key.digest, &key.id)
}

/// Reads a key by id inside any transaction.
pub fn get_in(tx: &impl Reader, id: &str) -> Result<Option<ApiKey>, StoreError> {
    KEY_TABLE.get(tx, id.as_bytes())
}

/// The stored key `id`, or `NotFound`.
fn stored(tx: &impl Reader, id: &str) -> Result<ApiKey, StoreError> {
    KEY_TABLE
        .get(tx, id.as_bytes())?
        .ok_or_else(|| StoreError::NotFound(format!("no API key `{id}`")))
}

/// Refuses to change a key that has ended (revoked or expired: neither can
/// be re-enabled), with the refusal's text for each.
fn refuse_ended(key: &ApiKey, now: i64, revoked: &str, expired: &str) -> Result<(), StoreError> {
    match key.state(now) {
        KeyState::Revoked => Err(StoreError::Conflict(revoked.into())),
        KeyState::Expired => Err(StoreError::Conflict(expired.into())),
        KeyState::Active | KeyState::OverBudget => Ok(()),
    }
}
