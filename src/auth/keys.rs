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

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use time::{Date, Duration, OffsetDateTime, Time};

use super::error::AuthError;
use crate::base::ids::new_id;
use crate::base::ids::{random_token, sha256};
use crate::base::money::micros_to_credits;
use crate::base::time::{format_rfc3339, now_ms};
use crate::store::tables::{self, API_KEYS, KEY_DIGESTS, KEY_ROTATIONS};
use crate::store::{Reader, Store, StoreError, Table};
use crate::tenants;

pub const KEY_PREFIX: &str = "kp_live_";
/// Random bytes in a key (spec, "Limits").
pub const KEY_RANDOM_BYTES: usize = 24;
const KEY_LEN: usize = KEY_PREFIX.len() + 32;

pub const KEY_TABLE: Table<ApiKey> = Table::new(API_KEYS);

/// When `creditsConsumed` returns to zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResetInterval {
    Never,
    Daily,
    Weekly,
    Monthly,
}

impl ResetInterval {
    pub fn as_str(self) -> &'static str {
        match self {
            ResetInterval::Never => "never",
            ResetInterval::Daily => "daily",
            ResetInterval::Weekly => "weekly",
            ResetInterval::Monthly => "monthly",
        }
    }

    /// Start (Unix ms) of the cycle containing `now_ms`, on UTC boundaries:
    /// midnight, Monday midnight, the 1st at midnight. `never` has one
    /// cycle, starting at the epoch.
    pub fn cycle_start(self, now_ms: i64) -> i64 {
        let now = OffsetDateTime::from_unix_timestamp_nanos(i128::from(now_ms) * 1_000_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH);
        let day: Date = now.date();
        let start = match self {
            ResetInterval::Never => return 0,
            ResetInterval::Daily => day,
            ResetInterval::Weekly => {
                day - Duration::days(i64::from(day.weekday().number_days_from_monday()))
            }
            ResetInterval::Monthly => day.replace_day(1).expect("day 1 exists"),
        };
        start
            .with_time(Time::MIDNIGHT)
            .assume_utc()
            .unix_timestamp()
            * 1000
    }
}

impl std::str::FromStr for ResetInterval {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "never" => Ok(ResetInterval::Never),
            "daily" => Ok(ResetInterval::Daily),
            "weekly" => Ok(ResetInterval::Weekly),
            "monthly" => Ok(ResetInterval::Monthly),
            other => Err(format!(
                "`{other}` is not a reset interval; use never, daily, weekly or monthly"
            )),
        }
    }
}

/// The lifecycle state of a key (spec, "States and transitions").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyState {
    Active,
    Expired,
    Revoked,
    OverBudget,
}

impl KeyState {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyState::Active => "active",
            KeyState::Expired => "expired",
            KeyState::Revoked => "revoked",
            KeyState::OverBudget => "over_budget",
        }
    }
}

/// The stored key record. Money in micro-credits, times in Unix ms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKey {
    pub id: String,
    pub tenant_id: String,
    pub owner_account_id: Option<String>,
    pub name: String,
    pub digest: [u8; 32],
    pub hint: String,
    pub credit_limit: Option<u64>,
    /// Consumption of the cycle that started at `cycle_start`.
    pub credits_consumed: u64,
    pub reset_interval: ResetInterval,
    pub cycle_start: i64,
    pub rate_limit: Option<u32>,
    pub expires_at: Option<i64>,
    pub allow_high_risk: bool,
    /// Percentages (50, 80, 100) already notified in the current cycle.
    pub notified_thresholds: Vec<u8>,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    pub rotated_from: Option<String>,
    /// Tokens (prompt + completion) per minute; none without (schema 5).
    pub tpm_limit: Option<u64>,
}

impl ApiKey {
    /// Consumption and notified thresholds as of `now`: a cycle whose
    /// boundary has passed reads as zero, with no request needed to reset it
    /// (the next charge writes the reset).
    pub fn current_cycle(&self, now: i64) -> (u64, &[u8]) {
        if self.reset_interval.cycle_start(now) > self.cycle_start {
            (0, &[])
        } else {
            (self.credits_consumed, &self.notified_thresholds)
        }
    }

    pub fn state(&self, now: i64) -> KeyState {
        if self.revoked_at.is_some() {
            return KeyState::Revoked;
        }
        if self.expires_at.is_some_and(|at| now >= at) {
            return KeyState::Expired;
        }
        let (consumed, _) = self.current_cycle(now);
        match self.credit_limit {
            Some(limit) if consumed >= limit => KeyState::OverBudget,
            _ => KeyState::Active,
        }
    }

    pub fn view(&self, now: i64) -> Value {
        let (consumed, thresholds) = self.current_cycle(now);
        json!({
            "id": self.id,
            "tenantId": self.tenant_id,
            "ownerAccountId": self.owner_account_id,
            "keyName": self.name,
            "hint": self.hint,
            "state": self.state(now).as_str(),
            "creditLimit": self.credit_limit.map(micros_to_credits),
            "creditsConsumed": micros_to_credits(consumed),
            "resetInterval": self.reset_interval.as_str(),
            "rateLimit": self.rate_limit,
            "tpmLimit": self.tpm_limit,
            "expiresAt": self.expires_at.map(format_rfc3339),
            "allowHighRisk": self.allow_high_risk,
            "notifiedThresholds": thresholds,
            "createdAt": format_rfc3339(self.created_at),
            "revokedAt": self.revoked_at.map(format_rfc3339),
            "rotatedFrom": self.rotated_from,
        })
    }
}

/// A new key value, and the digest and hint that are stored instead.
pub struct NewKeyValue {
    pub value: String,
    pub digest: [u8; 32],
    pub hint: String,
}

pub fn generate_value() -> NewKeyValue {
    let value = format!("{KEY_PREFIX}{}", random_token(KEY_RANDOM_BYTES));
    let random = &value[KEY_PREFIX.len()..];
    let hint = format!(
        "{KEY_PREFIX}{}…{}",
        &random[..4],
        &random[random.len() - 4..]
    );
    NewKeyValue {
        digest: sha256(value.as_bytes()),
        hint,
        value,
    }
}

/// The digest of a presented key, or `None` when it cannot be one of ours
/// (wrong prefix, length or alphabet): such a key is unknown without a
/// lookup.
pub fn digest_of(presented: &str) -> Option<[u8; 32]> {
    let random = presented.strip_prefix(KEY_PREFIX)?;
    if presented.len() != KEY_LEN {
        return None;
    }
    let mut decoded = [0u8; KEY_RANDOM_BYTES];
    match URL_SAFE_NO_PAD.decode_slice(random, &mut decoded) {
        Ok(KEY_RANDOM_BYTES) => Some(sha256(presented.as_bytes())),
        _ => None,
    }
}

/// Settings given when creating a key (and copied on rotation).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KeySettings {
    pub name: String,
    pub credit_limit: Option<u64>,
    pub reset_interval: Option<ResetInterval>,
    pub rate_limit: Option<u32>,
    pub expires_at: Option<i64>,
    pub allow_high_risk: bool,
    pub owner_account_id: Option<String>,
    #[serde(default)]
    pub tpm_limit: Option<u64>,
}

/// A change to one nullable field. Explicit, because `null` in JSON cannot
/// tell "leave it" from "clear it".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Patch<T> {
    #[default]
    Keep,
    Clear,
    Set(T),
}

impl<T> Patch<T> {
    fn apply(self, field: &mut Option<T>) {
        match self {
            Patch::Keep => {}
            Patch::Clear => *field = None,
            Patch::Set(v) => *field = Some(v),
        }
    }
}

/// A change to a key: `None` / `Keep` leaves a field as it is.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KeyUpdate {
    pub name: Option<String>,
    pub credit_limit: Patch<u64>,
    pub reset_interval: Option<ResetInterval>,
    pub rate_limit: Patch<u32>,
    pub expires_at: Patch<i64>,
    pub allow_high_risk: Option<bool>,
    #[serde(default)]
    pub tpm_limit: Patch<u64>,
}

/// How far a caller may move a key's controls.
///
/// Without `keys.manage_all` an account may only keep or tighten them: a
/// `user` must not lift the budget or the high-risk gate set on its own keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Latitude {
    /// Any change (`keys.manage_all`, and the CLI, which is the operator).
    Any,
    /// Only changes that keep or tighten every control. A key without its
    /// own rate limit is held to `default_rate_limit`, so that is what a
    /// new limit is compared with.
    TightenOnly { default_rate_limit: u32 },
}

/// The settings of a key that bound what it may spend or do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Controls {
    credit_limit: Option<u64>,
    reset_interval: ResetInterval,
    rate_limit: Option<u32>,
    expires_at: Option<i64>,
    allow_high_risk: bool,
    tpm_limit: Option<u64>,
}

impl Controls {
    /// What a new key would have with nothing set: no cap, no own rate
    /// limit, no expiry, high-risk use refused. Creating a key is compared
    /// with this, so a `user` may create capped keys but not high-risk ones.
    const NEW_KEY: Controls = Controls {
        credit_limit: None,
        reset_interval: ResetInterval::Never,
        rate_limit: None,
        expires_at: None,
        allow_high_risk: false,
        tpm_limit: None,
    };

    fn of(key: &ApiKey) -> Controls {
        Controls {
            credit_limit: key.credit_limit,
            reset_interval: key.reset_interval,
            rate_limit: key.rate_limit,
            expires_at: key.expires_at,
            allow_high_risk: key.allow_high_risk,
            tpm_limit: key.tpm_limit,
        }
    }

    /// The first field (by its API name) that `after` loosens, if any.
    /// The reset interval counts as loosened whenever it changes on an
    /// existing key: a shorter cycle refills the cap sooner, a longer one
    /// carries consumption differently, and neither is the `user`'s call.
    fn loosened_by(
        self,
        after: Controls,
        default_rate_limit: u32,
        existing: bool,
    ) -> Option<&'static str> {
        if after.allow_high_risk && !self.allow_high_risk {
            return Some("allowHighRisk");
        }
        match (self.credit_limit, after.credit_limit) {
            (Some(_), None) => return Some("creditLimit"),
            (Some(before), Some(now)) if now > before => return Some("creditLimit"),
            _ => {}
        }
        if existing && after.reset_interval != self.reset_interval {
            return Some("resetInterval");
        }
        let rate = |limit: Option<u32>| limit.unwrap_or(default_rate_limit);
        if rate(after.rate_limit) > rate(self.rate_limit) {
            return Some("rateLimit");
        }
        match (self.tpm_limit, after.tpm_limit) {
            (Some(_), None) => return Some("tpmLimit"),
            (Some(before), Some(now)) if now > before => return Some("tpmLimit"),
            _ => {}
        }
        match (self.expires_at, after.expires_at) {
            (Some(_), None) => Some("expiresAt"),
            (Some(before), Some(now)) if now > before => Some("expiresAt"),
            _ => None,
        }
    }
}

impl Latitude {
    /// Refuses a change that loosens a control the caller may only tighten,
    /// naming the field.
    fn check(self, before: Controls, after: Controls, existing: bool) -> Result<(), StoreError> {
        let Latitude::TightenOnly { default_rate_limit } = self else {
            return Ok(());
        };
        match before.loosened_by(after, default_rate_limit, existing) {
            None => Ok(()),
            Some(field) => Err(StoreError::Forbidden(format!(
                "`{field}`: this change loosens a control of the key (raises or removes a cap or a \
                 rate limit, changes the reset interval, extends the expiry or allows high-risk \
                 use), which needs the permission `keys.manage_all`"
            ))),
        }
    }
}

/// A key name, trimmed: 1 to 100 characters, none of them hidden
/// ([`crate::base::names::is_hidden`]).
pub fn validate_key_name(name: &str) -> Result<String, StoreError> {
    let name = name.trim();
    if name.is_empty() || name.len() > 100 || crate::base::names::has_hidden(name) {
        return Err(StoreError::Invalid(
            "a key name must be 1 to 100 printable characters (no control, zero-width or bidirectional characters)".into(),
        ));
    }
    Ok(name.to_owned())
}

fn validate_tpm_limit(limit: Option<u64>) -> Result<(), StoreError> {
    if limit == Some(0) {
        return Err(StoreError::Invalid(
            "a token limit must be at least 1 token per minute".into(),
        ));
    }
    Ok(())
}

fn validate_rate_limit(limit: Option<u32>) -> Result<(), StoreError> {
    if limit == Some(0) {
        return Err(StoreError::Invalid(
            "a rate limit must be at least 1 request per minute".into(),
        ));
    }
    Ok(())
}

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
        self.store
            .read(|tx| KEY_TABLE.get(tx, id.as_bytes()))?
            .ok_or_else(|| StoreError::NotFound(format!("no API key `{id}`")))
    }

    /// Keys of one tenant (by id or name), or of every tenant.
    pub fn list(&self, tenant: Option<&str>) -> Result<Vec<ApiKey>, StoreError> {
        self.store.read(|tx| {
            let tenant_id = tenant
                .map(|t| tenants::resolve(tx, t))
                .transpose()?
                .map(|t| t.id);
            let mut keys: Vec<ApiKey> = KEY_TABLE
                .all(tx)?
                .into_iter()
                .filter(|k| tenant_id.as_ref().is_none_or(|t| &k.tenant_id == t))
                .collect();
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
        let id = id.to_owned();
        let cache = self.clone();
        let key = self
            .store
            .write(move |txn| {
                let mut key = KEY_TABLE
                    .get(txn, id.as_bytes())?
                    .ok_or_else(|| StoreError::NotFound(format!("no API key `{id}`")))?;
                let now = now_ms();
                match key.state(now) {
                    KeyState::Revoked => {
                        return Err(StoreError::Conflict(
                            "the key is revoked and cannot be changed; create a new key".into(),
                        ));
                    }
                    KeyState::Expired => {
                        return Err(StoreError::Conflict(
                            "the key has expired and cannot be re-enabled; create a new key".into(),
                        ));
                    }
                    KeyState::Active | KeyState::OverBudget => {}
                }
                let before = Controls::of(&key);
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
                latitude.check(before, Controls::of(&key), true)?;
                KEY_TABLE.put(txn, key.id.as_bytes(), &key)?;
                // In the writer, in commit order (see `refresh`).
                cache.refresh(&key);
                Ok(key)
            })
            .await?;
        Ok(key)
    }

    /// Revokes a key; it answers 403 `invalid_api_key` from now on. Its
    /// record stays, so historical usage remains attributable.
    pub async fn revoke(&self, id: &str) -> Result<ApiKey, StoreError> {
        let id = id.to_owned();
        let cache = self.clone();
        let key = self
            .store
            .write(move |txn| {
                let mut key = KEY_TABLE
                    .get(txn, id.as_bytes())?
                    .ok_or_else(|| StoreError::NotFound(format!("no API key `{id}`")))?;
                if key.revoked_at.is_none() {
                    key.revoked_at = Some(now_ms());
                    KEY_TABLE.put(txn, key.id.as_bytes(), &key)?;
                }
                cache.refresh(&key);
                Ok(key)
            })
            .await?;
        Ok(key)
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
                let old = KEY_TABLE
                    .get(txn, id.as_bytes())?
                    .ok_or_else(|| StoreError::NotFound(format!("no API key `{id}`")))?;
                let now = now_ms();
                match old.state(now) {
                    KeyState::Revoked => {
                        return Err(StoreError::Conflict(
                            "a revoked key cannot be rotated".into(),
                        ));
                    }
                    KeyState::Expired => {
                        return Err(StoreError::Conflict(
                            "an expired key cannot be rotated".into(),
                        ));
                    }
                    KeyState::Active | KeyState::OverBudget => {}
                }
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

/// Schema 4 to 5: keys gain `tpm_limit` (none: no token limit). A record
/// already in the new layout (a store whose version was set back) is kept
/// as it is: the older layout is a strict prefix, so a record of it cannot
/// be read as the new one.
pub fn migrate_v4_to_v5(txn: &redb::WriteTransaction) -> Result<(), StoreError> {
    use crate::store::codec;
    let old: Vec<(Vec<u8>, legacy::ApiKeyV4)> = {
        let table = txn.open_table(API_KEYS)?;
        let mut out = Vec::new();
        for row in redb::ReadableTable::iter(&table)? {
            let (k, v) = row?;
            if codec::decode::<ApiKey>(v.value()).is_ok() {
                continue;
            }
            out.push((k.value().to_vec(), codec::decode(v.value())?));
        }
        out
    };
    for (id, k) in old {
        let key = ApiKey {
            id: k.id,
            tenant_id: k.tenant_id,
            owner_account_id: k.owner_account_id,
            name: k.name,
            digest: k.digest,
            hint: k.hint,
            credit_limit: k.credit_limit,
            credits_consumed: k.credits_consumed,
            reset_interval: k.reset_interval,
            cycle_start: k.cycle_start,
            rate_limit: k.rate_limit,
            expires_at: k.expires_at,
            allow_high_risk: k.allow_high_risk,
            notified_thresholds: k.notified_thresholds,
            created_at: k.created_at,
            revoked_at: k.revoked_at,
            rotated_from: k.rotated_from,
            tpm_limit: None,
        };
        KEY_TABLE.put(txn, &id, &key)?;
    }
    Ok(())
}

/// Key records as older schemas stored them.
pub mod legacy {
    use serde::{Deserialize, Serialize};

    use super::ResetInterval;

    /// An API key of schemas 1 to 4 (no `tpm_limit`).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct ApiKeyV4 {
        pub id: String,
        pub tenant_id: String,
        pub owner_account_id: Option<String>,
        pub name: String,
        pub digest: [u8; 32],
        pub hint: String,
        pub credit_limit: Option<u64>,
        pub credits_consumed: u64,
        pub reset_interval: ResetInterval,
        pub cycle_start: i64,
        pub rate_limit: Option<u32>,
        pub expires_at: Option<i64>,
        pub allow_high_risk: bool,
        pub notified_thresholds: Vec<u8>,
        pub created_at: i64,
        pub revoked_at: Option<i64>,
        pub rotated_from: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::parse_rfc3339;

    #[test]
    fn key_values_have_the_spec_format() {
        let issued = generate_value();
        assert!(issued.value.starts_with("kp_live_"));
        assert_eq!(issued.value.len(), 8 + 32);
        let random = &issued.value[8..];
        assert_eq!(URL_SAFE_NO_PAD.decode(random).unwrap().len(), 24);
        assert!(
            random
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        assert_eq!(digest_of(&issued.value), Some(issued.digest));
        assert_eq!(issued.digest, sha256(issued.value.as_bytes()));
        assert!(!issued.hint.contains(random));
        assert_ne!(generate_value().value, issued.value);
    }

    #[test]
    fn malformed_keys_have_no_digest() {
        let good = generate_value().value;
        assert!(digest_of(&good.replace("kp_live_", "kp_test_")).is_none());
        assert!(digest_of(&good[..good.len() - 1]).is_none());
        assert!(digest_of(&format!("{good}A")).is_none());
        assert!(digest_of(&good.replacen(&good[8..9], "+", 1)).is_none());
        assert!(digest_of("").is_none());
        assert!(digest_of("kp_live_").is_none());
    }

    #[test]
    fn cycles_start_on_utc_boundaries() {
        // Wednesday 2026-11-18 15:30 UTC.
        let now = parse_rfc3339("2026-11-18T15:30:00Z").unwrap();
        assert_eq!(ResetInterval::Never.cycle_start(now), 0);
        assert_eq!(
            ResetInterval::Daily.cycle_start(now),
            parse_rfc3339("2026-11-18T00:00:00Z").unwrap()
        );
        assert_eq!(
            ResetInterval::Weekly.cycle_start(now),
            parse_rfc3339("2026-11-16T00:00:00Z").unwrap()
        );
        assert_eq!(
            ResetInterval::Monthly.cycle_start(now),
            parse_rfc3339("2026-11-01T00:00:00Z").unwrap()
        );
        let monday = parse_rfc3339("2026-11-16T00:00:00Z").unwrap();
        assert_eq!(ResetInterval::Weekly.cycle_start(monday), monday);
    }

    fn sample(now: i64) -> ApiKey {
        ApiKey {
            id: "key_1".into(),
            tenant_id: "ten_1".into(),
            owner_account_id: None,
            name: "k".into(),
            digest: [0; 32],
            hint: String::new(),
            credit_limit: Some(10),
            credits_consumed: 10,
            reset_interval: ResetInterval::Daily,
            cycle_start: ResetInterval::Daily.cycle_start(now),
            rate_limit: None,
            expires_at: None,
            allow_high_risk: false,
            notified_thresholds: vec![50, 80, 100],
            created_at: now,
            revoked_at: None,
            rotated_from: None,
            tpm_limit: None,
        }
    }

    #[test]
    fn states_follow_the_spec_table() {
        let now = parse_rfc3339("2026-11-18T15:30:00Z").unwrap();
        let mut key = sample(now);
        assert_eq!(key.state(now), KeyState::OverBudget);
        // The boundary passes: active again, with nothing written.
        let tomorrow = now + 24 * 3600 * 1000;
        assert_eq!(key.state(tomorrow), KeyState::Active);
        assert_eq!(key.current_cycle(tomorrow), (0, &[][..]));
        key.expires_at = Some(now + 1000);
        assert_eq!(key.state(now + 1000), KeyState::Expired);
        key.revoked_at = Some(now);
        assert_eq!(key.state(now), KeyState::Revoked);
    }

    #[test]
    fn a_user_may_tighten_but_not_loosen_a_key() {
        let capped = Controls {
            credit_limit: Some(10),
            reset_interval: ResetInterval::Daily,
            rate_limit: Some(30),
            expires_at: Some(1_000),
            allow_high_risk: false,
            tpm_limit: Some(1_000),
        };
        let loosened = |after: Controls| capped.loosened_by(after, 60, true);
        assert_eq!(loosened(capped), None);
        for tpm_limit in [None, Some(1_001)] {
            let after = Controls {
                tpm_limit,
                ..capped
            };
            assert_eq!(loosened(after), Some("tpmLimit"));
        }
        let lower = Controls {
            tpm_limit: Some(10),
            ..capped
        };
        assert_eq!(loosened(lower), None);
        // Tighter: lower cap, lower rate, earlier expiry.
        let tighter = Controls {
            credit_limit: Some(5),
            rate_limit: Some(10),
            expires_at: Some(500),
            ..capped
        };
        assert_eq!(loosened(tighter), None);
        for (after, field) in [
            (
                Controls {
                    allow_high_risk: true,
                    ..capped
                },
                "allowHighRisk",
            ),
            (
                Controls {
                    credit_limit: None,
                    ..capped
                },
                "creditLimit",
            ),
            (
                Controls {
                    credit_limit: Some(11),
                    ..capped
                },
                "creditLimit",
            ),
            (
                Controls {
                    reset_interval: ResetInterval::Monthly,
                    ..capped
                },
                "resetInterval",
            ),
            (
                Controls {
                    rate_limit: Some(31),
                    ..capped
                },
                "rateLimit",
            ),
            // Cleared, the key falls back to the default of 60: raised.
            (
                Controls {
                    rate_limit: None,
                    ..capped
                },
                "rateLimit",
            ),
            (
                Controls {
                    expires_at: None,
                    ..capped
                },
                "expiresAt",
            ),
            (
                Controls {
                    expires_at: Some(2_000),
                    ..capped
                },
                "expiresAt",
            ),
        ] {
            assert_eq!(loosened(after), Some(field), "{after:?}");
        }
        let tight = Latitude::TightenOnly {
            default_rate_limit: 60,
        };
        assert!(
            tight
                .check(
                    capped,
                    Controls {
                        credit_limit: None,
                        ..capped
                    },
                    true
                )
                .is_err()
        );
        assert!(
            Latitude::Any
                .check(
                    capped,
                    Controls {
                        credit_limit: None,
                        ..capped
                    },
                    true
                )
                .is_ok()
        );
    }

    #[test]
    fn a_new_key_is_compared_with_one_that_has_nothing_set() {
        let new = |after: Controls| Controls::NEW_KEY.loosened_by(after, 60, false);
        let capped = Controls {
            credit_limit: Some(10),
            reset_interval: ResetInterval::Daily,
            rate_limit: Some(60),
            expires_at: Some(1_000),
            ..Controls::NEW_KEY
        };
        assert_eq!(new(capped), None);
        assert_eq!(
            new(Controls {
                rate_limit: Some(61),
                ..capped
            }),
            Some("rateLimit")
        );
        assert_eq!(
            new(Controls {
                allow_high_risk: true,
                ..capped
            }),
            Some("allowHighRisk")
        );
    }
}
