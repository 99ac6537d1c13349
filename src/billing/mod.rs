//! The credit ledger (DESIGN sections 3 and 4).
//!
//! A charge is one job of the group-commit writer: in one write transaction
//! it applies a due cycle reset, adds the cost to the key (and to its live
//! rotation partner, so a rotated pair spends one allowance), debits the
//! tenant's wallet, writes the usage record, decides which spend thresholds
//! this charge crossed and records them in `notifiedThresholds`, and writes
//! those events to the outbox. The caller is answered only after that
//! commit is durable, so a threshold fires exactly once per cycle whatever
//! the concurrency, and a restart can neither repeat nor lose one. A served
//! request's charge is durable through the charge journal
//! ([`charge_journaled`], `store::journal`): its record is replayed through
//! [`apply`] after a crash.
//!
//! Once durable, the values the charge wrote reach the in-memory ledger
//! admission reads ([`ledger`]); the request's reservation is released
//! after that.

pub mod ledger;
pub mod limits;
pub mod migrate;
pub mod retention;
pub mod rollups;
mod stored;
pub mod usage;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::auth::keys::{ApiKey, KEY_TABLE, Keys};
use crate::base::event_kind::EventKind;
use crate::base::money::micros_to_credits;
use crate::base::time::format_rfc3339;
use crate::catalogue::Endpoint;
use crate::store::tables::{self, EVENTS, KEY_ROTATIONS, Table, USAGE, WALLET_ENTRIES};
use crate::store::{CompactTable, Store, StoreError};
use crate::tenants::{TENANT_TABLE, Tenant};

pub const USAGE_TABLE: CompactTable<UsageRecord> = CompactTable::new(USAGE);
pub const EVENT_TABLE: Table<StoredEvent> = Table::new(EVENTS);
pub const WALLET_TABLE: Table<WalletEntry> = Table::new(WALLET_ENTRIES);

/// What one served request costs, and everything its usage record keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageRecord {
    pub request_id: String,
    pub key_id: String,
    pub tenant_id: String,
    pub model: String,
    pub provider: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Micro-credits.
    pub cost: u64,
    pub latency_ms: u64,
    pub is_fallback: bool,
    pub streamed: bool,
    /// Completion tokens were estimated (no usage from the upstream).
    pub estimated: bool,
    /// Unix ms.
    pub at: i64,
    /// The route that served it (schema 7; older records were labelled by
    /// the migration, see [`migrate`]).
    pub endpoint: Endpoint,
}

impl UsageRecord {
    pub fn view(&self) -> Value {
        json!({
            "requestId": self.request_id,
            "keyId": self.key_id,
            "tenantId": self.tenant_id,
            "model": self.model,
            "provider": self.provider,
            "promptTokens": self.prompt_tokens,
            "completionTokens": self.completion_tokens,
            "cost": micros_to_credits(self.cost),
            "latencyMs": self.latency_ms,
            "isFallback": self.is_fallback,
            "streamed": self.streamed,
            "estimated": self.estimated,
            "at": format_rfc3339(self.at),
            "endpoint": self.endpoint.as_str(),
        })
    }
}

/// An event recorded in the outbox in the transaction that caused it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredEvent {
    /// Stored as its wire name, as when it was a `String`.
    pub event: EventKind,
    pub tenant_id: Option<String>,
    /// Unix ms.
    pub at: i64,
    /// The envelope's `data`, as JSON text.
    pub data: String,
}

impl StoredEvent {
    /// The webhook envelope: `{event, timestamp, data}`.
    pub fn envelope(&self) -> Value {
        json!({
            "event": self.event,
            "timestamp": format_rfc3339(self.at),
            "data": serde_json::from_str::<Value>(&self.data).unwrap_or(Value::Null),
        })
    }
}

/// A movement of a tenant's wallet other than a charge (charges are the
/// usage records).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WalletEntry {
    pub tenant_id: String,
    /// Micro-credits; positive for a top-up.
    pub amount: i64,
    pub balance_after: i64,
    /// Who did it: an account id, or `cli`.
    pub by: String,
    pub at: i64,
}

/// What a committed charge leaves behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charged {
    pub cost: u64,
    /// The tenant's wallet after the charge, micro-credits.
    pub balance_after: i64,
    /// `creditLimit - creditsConsumed` after the charge; `None` without a cap.
    pub key_remaining: Option<i64>,
    /// Events this charge fired, in order.
    pub fired: Vec<StoredEvent>,
    /// Their rows in the pending outbox (`EVENTS_PENDING`), in the same
    /// order: the dispatcher removes each when it takes the event.
    pub pending_rows: Vec<Vec<u8>>,
}

/// A charge through the journal: `charge` is the whole charge transaction
/// ([`apply`] and what commits with it: the audit entry, the conversation
/// record, a held review, the per-day counter row the request holds a unit
/// of), `journal` the record from which the same transaction is rebuilt
/// after a crash. Returns once the record is durable; the values written
/// then reach `ledger`, admission's in-memory state, by the writer's order.
pub async fn charge_journaled(
    store: &Store,
    keys: &Keys,
    ledger: &ledger::Ledger,
    journal: Vec<u8>,
    mut charge: impl FnMut(&crate::store::tables::Tables<'_>) -> Result<Applied, StoreError>
    + Send
    + 'static,
) -> Result<Charged, StoreError> {
    let cache = keys.clone();
    // The sequence is taken in the job: the writer's order.
    let next = ledger.sequence_source();
    let (charged, committed) = store
        .write_journaled(journal, move |txn| {
            let seq = next();
            let Applied {
                charged,
                written,
                tenant_id,
                day,
            } = charge(txn)?;
            // In the writer, in the order charges are applied (see
            // `Keys::refresh`): the cache never goes back to an older count.
            for key in &written {
                cache.refresh(key);
            }
            let committed = ledger::Charge {
                seq,
                keys: written.iter().map(ledger::KeyAfter::of).collect(),
                tenant_id,
                balance_after: charged.balance_after,
                day,
            };
            Ok((charged, committed))
        })
        .await?;
    ledger.apply(&committed);
    log_fired(&charged);
    Ok(charged)
}

/// What one charge transaction wrote, for the key cache and the ledger.
pub struct Applied {
    pub charged: Charged,
    /// The key records written (the caller's, and its rotation partner's).
    pub written: Vec<ApiKey>,
    pub tenant_id: String,
    /// The day counter's row and its count after the charge.
    pub day: Option<(String, u32)>,
}

/// Applies one charge with a durable commit of its own, without a journal
/// record (no audit entry, no conversation record) and without the
/// server's in-memory ledger: tools and tests.
pub async fn charge(
    store: &Store,
    keys: &Keys,
    record: UsageRecord,
) -> Result<Charged, StoreError> {
    let cache = keys.clone();
    let charged = store
        .write(move |txn| {
            let (charged, written) = apply(txn, &record)?;
            for key in &written {
                cache.refresh(key);
            }
            Ok(charged)
        })
        .await?;
    log_fired(&charged);
    Ok(charged)
}

fn log_fired(charged: &Charged) {
    for event in &charged.fired {
        tracing::info!(event = %event.event, tenant = event.tenant_id.as_deref().unwrap_or(""), "spend threshold crossed");
    }
}

/// The charge transaction. Returns the outcome and the key records written
/// (the key cache is refreshed from them in the same writer job, so the
/// next request of an over-budget key is refused).
pub fn apply(
    txn: &impl crate::store::tables::Writes,
    record: &UsageRecord,
) -> Result<(Charged, Vec<ApiKey>), StoreError> {
    let mut key = KEY_TABLE
        .get(txn, record.key_id.as_bytes())?
        .ok_or_else(|| StoreError::NotFound(format!("no API key `{}`", record.key_id)))?;
    let now = record.at;
    roll_cycle(&mut key, now);
    key.credits_consumed = consume(&key, record.cost)?;
    let fired = thresholds_crossed(&mut key, now);
    let written = charge_with_partners(txn, &key, record)?;
    for k in &written {
        KEY_TABLE.put(txn, k.id.as_bytes(), k)?;
    }
    let tenant = debit_tenant(txn, record)?;
    USAGE_TABLE.put(txn, &record.row_key(), record)?;
    rollups::add(txn, record)?;
    let mut pending_rows = Vec::with_capacity(fired.len());
    for event in &fired {
        pending_rows.push(record_event(txn, event)?);
    }
    // Both at most MAX_CHARGE (`consume`, `credits_to_micros`): the
    // difference fits.
    let key_remaining = key
        .credit_limit
        .map(|limit| (i128::from(limit) - i128::from(key.credits_consumed)) as i64);
    Ok((
        Charged {
            cost: record.cost,
            balance_after: tenant.wallet,
            key_remaining,
            fired,
            pending_rows,
        },
        written,
    ))
}

/// The spend thresholds the key's consumption reached for the first time
/// this cycle: marked on the key, returned as events.
fn thresholds_crossed(key: &mut ApiKey, now: i64) -> Vec<StoredEvent> {
    let mut fired = Vec::new();
    let Some(limit) = key.credit_limit else {
        return fired;
    };
    for (percent, event) in EventKind::SPEND_THRESHOLDS {
        let reached =
            u128::from(key.credits_consumed) * 100 >= u128::from(limit) * u128::from(percent);
        if reached && !key.notified_thresholds.contains(&percent) {
            key.notified_thresholds.push(percent);
            fired.push(StoredEvent {
                event,
                tenant_id: Some(key.tenant_id.clone()),
                at: now,
                data: json!({
                    "keyId": key.id,
                    "tenantId": key.tenant_id,
                    "percentage": percent,
                    "keyName": key.name,
                    "consumed": micros_to_credits(key.credits_consumed),
                    "limit": micros_to_credits(limit),
                })
                .to_string(),
            });
        }
    }
    fired
}

/// The charged key, then its live partners (the other keys of a rotation)
/// charged the same cost and sharing its notified thresholds: the records
/// to write.
fn charge_with_partners(
    txn: &impl crate::store::tables::Writes,
    key: &ApiKey,
    record: &UsageRecord,
) -> Result<Vec<ApiKey>, StoreError> {
    let mut written = vec![key.clone()];
    for partner_id in partners(txn, key)? {
        let Some(mut partner) = KEY_TABLE.get(txn, partner_id.as_bytes())? else {
            continue;
        };
        if partner.revoked_at.is_some() {
            continue;
        }
        roll_cycle(&mut partner, record.at);
        partner.credits_consumed = consume(&partner, record.cost)?;
        for percent in &key.notified_thresholds {
            if !partner.notified_thresholds.contains(percent) {
                partner.notified_thresholds.push(*percent);
            }
        }
        written.push(partner);
    }
    Ok(written)
}

/// Takes the cost from the tenant's wallet and writes the tenant.
fn debit_tenant(
    txn: &impl crate::store::tables::Writes,
    record: &UsageRecord,
) -> Result<Tenant, StoreError> {
    let mut tenant: Tenant = TENANT_TABLE
        .get(txn, record.tenant_id.as_bytes())?
        .ok_or_else(|| StoreError::NotFound(format!("no tenant `{}`", record.tenant_id)))?;
    tenant.wallet = i64::try_from(record.cost)
        .ok()
        .and_then(|cost| tenant.wallet.checked_sub(cost))
        .ok_or_else(|| {
            overflow(format!(
                "charging {} micro-credits to tenant `{}` (wallet {})",
                record.cost, tenant.id, tenant.wallet
            ))
        })?;
    TENANT_TABLE.put(txn, tenant.id.as_bytes(), &tenant)?;
    Ok(tenant)
}

/// A charge that cannot be recorded: refused (the whole transaction with
/// it), never wrapped nor cut to fit. The caller logs it.
fn overflow(what: String) -> StoreError {
    StoreError::Invalid(format!(
        "refused: {what} would overflow the ledger (at most {} micro-credits)",
        crate::base::money::MAX_CHARGE
    ))
}

/// The key's consumption once `cost` is added.
fn consume(key: &ApiKey, cost: u64) -> Result<u64, StoreError> {
    crate::base::money::add_charges(key.credits_consumed, cost).ok_or_else(|| {
        overflow(format!(
            "adding {cost} micro-credits to key `{}` (consumed {})",
            key.id, key.credits_consumed
        ))
    })
}

/// Starts a new cycle when the key's boundary has passed: consumption back
/// to zero, thresholds cleared.
fn roll_cycle(key: &mut ApiKey, now: i64) {
    let start = key.reset_interval.cycle_start(now);
    if start > key.cycle_start {
        key.cycle_start = start;
        key.credits_consumed = 0;
        key.notified_thresholds.clear();
    }
}

/// The other live member(s) of a rotation: the key it was rotated from,
/// and the key it was rotated to.
fn partners(
    txn: &impl crate::store::tables::Writes,
    key: &ApiKey,
) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    if let Some(from) = &key.rotated_from {
        out.push(from.clone());
    }
    if let Some(to) = tables::index_get(txn, KEY_ROTATIONS, key.id.as_bytes())? {
        out.push(to);
    }
    Ok(out)
}

/// Appends an event to the outbox: rows sort by time, then by a sequence
/// number kept in the same table. The same row goes to the pending outbox
/// until the dispatcher takes it (so a stop before delivery does not lose
/// it); returns its key.
pub fn record_event(
    txn: &impl crate::store::tables::Writes,
    event: &StoredEvent,
) -> Result<Vec<u8>, StoreError> {
    let seq = txn
        .last_raw(EVENTS)?
        .map(|(k, _)| {
            let mut tail = [0u8; 8];
            tail.copy_from_slice(&k[8..16]);
            u64::from_be_bytes(tail) + 1
        })
        .unwrap_or(0);
    let mut key = event.at.max(0).to_be_bytes().to_vec();
    key.extend_from_slice(&seq.to_be_bytes());
    let value = crate::store::codec::encode(event);
    txn.insert_raw(EVENTS, &key, &value)?;
    txn.insert_raw(tables::EVENTS_PENDING, &key, &value)?;
    Ok(key)
}

/// Adds credits to a tenant's wallet and records the movement.
pub async fn top_up(
    store: &Store,
    ledger: &ledger::Ledger,
    tenant: &str,
    micros: u64,
    by: &str,
) -> Result<Tenant, StoreError> {
    let (tenant, by) = (tenant.to_owned(), by.to_owned());
    let amount =
        i64::try_from(micros).map_err(|_| StoreError::Invalid("amount too large".into()))?;
    if amount == 0 {
        return Err(StoreError::Invalid("the amount must be positive".into()));
    }
    let next = ledger.sequence_source();
    let (tenant, seq) = store
        .write(move |txn| {
            let seq = next();
            let mut tenant = crate::tenants::resolve(txn, &tenant)?;
            tenant.wallet = tenant
                .wallet
                .checked_add(amount)
                .ok_or_else(|| StoreError::Invalid("the wallet would overflow".into()))?;
            TENANT_TABLE.put(txn, tenant.id.as_bytes(), &tenant)?;
            let at = crate::base::time::now_ms();
            let entry = WalletEntry {
                tenant_id: tenant.id.clone(),
                amount,
                balance_after: tenant.wallet,
                by: by.clone(),
                at,
            };
            let mut row = at.to_be_bytes().to_vec();
            row.extend_from_slice(crate::base::ids::new_id("top").as_bytes());
            WALLET_TABLE.put(txn, &row, &entry)?;
            Ok((tenant, seq))
        })
        .await?;
    ledger.wallet_written(&tenant.id, seq, tenant.wallet);
    Ok(tenant)
}
