//! Admission's in-memory ledger: what a request may still spend, decided
//! without a store read or a write, exactly under any concurrency (issue 19,
//! items 1 and 2; DESIGN section 4).
//!
//! The state holds, per API key, the consumption of its current cycle and
//! the thresholds already notified; per tenant, the wallet balance; per
//! free-tier day counter, the units used today; and, for each of them, what
//! requests in flight have reserved. Admission reserves a request's
//! estimated cost atomically (one lock) against `consumed + reserved <
//! limit`, so concurrent requests cannot all pass on the same remaining
//! budget: a cap is overshot by at most one request, as serially (the
//! request admitted below the cap may end above it).
//!
//! Consumed amounts only ever come from committed writes: the charge's
//! writer job takes a sequence number (in the writer's order) and, once the
//! commit returned, [`apply_charge`] copies the values it wrote (absolute,
//! not deltas) into memory if they are newer than what memory holds. The
//! order in which committed charges reach memory therefore does not
//! matter, and memory never runs ahead of the store. Reserved amounts live
//! in memory only: a restart starts with none, and nothing in flight
//! survives a restart anyway.
//!
//! A [`CreditHold`] is the reservation of one request. The charge replaces it by
//! the real cost (the committed values first, then the release, so there
//! is no instant where neither counts); every other way a request can end
//! (an error, an upstream failure, a timeout, a refusal after admission, a
//! client gone mid-stream) drops it, and dropping releases it.

mod hold;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub use hold::CreditHold;

use crate::auth::keys::{ApiKey, KEY_TABLE};
use crate::store::tables::{DAY_COUNTS, KEY_ROTATIONS, Reader};
use crate::store::{Store, StoreError};
use crate::tenants::{TENANT_TABLE, Tenant, Tier};

/// Output tokens a request is expected to produce when it sets no
/// `max_tokens` (or the route's equivalent) and its model no
/// `max_output_tokens`: the reservation's completion part.
pub const DEFAULT_OUTPUT_TOKENS: u64 = 4096;

/// A key's spending as admission needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeySpend {
    /// The sequence number of the write these values come from (0: read at
    /// start or on first use).
    seq: u64,
    pub cycle_start: i64,
    /// Micro-credits consumed in the cycle starting at `cycle_start`.
    pub consumed: u64,
    pub notified: Vec<u8>,
    /// Micro-credits reserved by requests in flight on this key or on its
    /// rotation partners (one allowance).
    pub reserved: u64,
    /// The other live members of its rotation.
    partners: Vec<String>,
    /// The numbers above come from the store (at start, a charge, or the
    /// key record on first use), not from a default.
    known: bool,
}

/// A tenant's wallet as admission needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wallet {
    seq: u64,
    /// Micro-credits; negative only for tiers that may go negative, or by
    /// the one request the serial rule lets end below zero.
    pub balance: i64,
    pub reserved: u64,
}

/// A durable per-day counter (the free tier's multimodal cap).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DayCount {
    seq: u64,
    pub used: u32,
    pub reserved: u32,
}

/// The authoritative in-memory state.
#[derive(Debug, Default)]
pub struct LedgerState {
    keys: HashMap<String, KeySpend>,
    wallets: HashMap<String, Wallet>,
    /// By the counter's store row (`scope/YYYY-MM-DD/counter`).
    days: HashMap<String, DayCount>,
    /// Micro-credits reserved by all holds (each counted once).
    reserved_total: u64,
    holds_open: u64,
}

/// One key record as a committed charge wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyAfter {
    pub id: String,
    pub cycle_start: i64,
    pub consumed: u64,
    pub notified: Vec<u8>,
}

impl KeyAfter {
    pub fn of(key: &ApiKey) -> KeyAfter {
        KeyAfter {
            id: key.id.clone(),
            cycle_start: key.cycle_start,
            consumed: key.credits_consumed,
            notified: key.notified_thresholds.clone(),
        }
    }
}

/// What a committed charge wrote that admission reads: the key and its
/// rotation partners, the tenant's balance, a day counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    /// Taken in the writer job ([`Ledger::sequence`]): later writes of the
    /// same record carry higher numbers.
    pub seq: u64,
    pub keys: Vec<KeyAfter>,
    pub tenant_id: String,
    pub balance_after: i64,
    /// The day counter's row and its count after the charge.
    pub day: Option<(String, u32)>,
}

/// Applies a committed charge to the state: each value replaces the one
/// held when it is newer (by sequence). Idempotent and order-independent,
/// so the live path and a replay of journaled charges can both call it.
pub fn apply_charge(state: &mut LedgerState, charge: &Charge) {
    let ids: Vec<&str> = charge.keys.iter().map(|k| k.id.as_str()).collect();
    for after in &charge.keys {
        let spend = state.keys.entry(after.id.clone()).or_default();
        // Keys written by one charge are one allowance.
        for other in &ids {
            if *other != after.id && !spend.partners.iter().any(|p| p == other) {
                spend.partners.push((*other).to_owned());
            }
        }
        if charge.seq > spend.seq || !spend.known {
            spend.known = true;
            spend.seq = spend.seq.max(charge.seq);
            spend.cycle_start = after.cycle_start;
            spend.consumed = after.consumed;
            spend.notified = after.notified.clone();
        }
    }
    set_wallet(state, &charge.tenant_id, charge.seq, charge.balance_after);
    if let Some((row, used)) = &charge.day {
        let day = state.days.entry(row.clone()).or_default();
        if charge.seq > day.seq {
            day.seq = charge.seq;
            day.used = *used;
        }
    }
}

fn set_wallet(state: &mut LedgerState, tenant_id: &str, seq: u64, balance: i64) {
    let wallet = state.wallets.entry(tenant_id.to_owned()).or_default();
    if seq > wallet.seq {
        wallet.seq = seq;
        wallet.balance = balance;
    }
}

/// Why admission refused a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The key's `creditLimit` is taken by what it consumed and what its
    /// requests in flight reserved.
    KeyCap {
        limit: u64,
        consumed: u64,
        reserved: u64,
    },
    /// The wallet (of a tier that may not go negative) is taken likewise.
    Wallet { balance: i64, reserved: u64 },
    /// Every unit of today's counter is used or reserved.
    DayCap { cap: u32 },
}

/// What a request asks admission for.
pub struct Claim<'a> {
    pub key: &'a ApiKey,
    pub tenant: &'a Tenant,
    /// The estimated cost, micro-credits.
    pub cost: u64,
    pub now: i64,
}

#[derive(Debug, Default)]
pub struct Ledger {
    state: Mutex<LedgerState>,
    /// The last sequence number given out.
    seq: Arc<AtomicU64>,
}

impl Ledger {
    /// The state as the store holds it: every key's cycle, every tenant's
    /// wallet, the rotation pairs and today's day counters.
    pub fn load(store: &Store, now: i64) -> Result<Ledger, StoreError> {
        let mut state = LedgerState::default();
        store.read(|tx| {
            for key in KEY_TABLE.all(tx)? {
                let (consumed, notified) = key.current_cycle(now);
                state.keys.insert(
                    key.id.clone(),
                    KeySpend {
                        cycle_start: key.cycle_start,
                        consumed,
                        notified: notified.to_vec(),
                        known: true,
                        ..KeySpend::default()
                    },
                );
            }
            for (from, to) in tx.scan_raw(KEY_ROTATIONS)? {
                let (Ok(from), Ok(to)) = (String::from_utf8(from), String::from_utf8(to)) else {
                    continue;
                };
                link(&mut state, &from, &to);
            }
            for tenant in TENANT_TABLE.all(tx)? {
                state.wallets.insert(
                    tenant.id.clone(),
                    Wallet {
                        balance: tenant.wallet,
                        ..Wallet::default()
                    },
                );
            }
            let today = &crate::base::time::format_rfc3339(now)[..10];
            for (row, count) in tx.scan_raw(DAY_COUNTS)? {
                let Ok(row) = String::from_utf8(row) else {
                    continue;
                };
                if row.split('/').nth(1) == Some(today) {
                    let used = count
                        .as_slice()
                        .try_into()
                        .map_or(u32::MAX, u32::from_be_bytes);
                    state.days.insert(
                        row,
                        DayCount {
                            used,
                            ..DayCount::default()
                        },
                    );
                }
            }
            Ok(())
        })?;
        Ok(Ledger {
            state: Mutex::new(state),
            seq: Arc::default(),
        })
    }

    /// Gives the next write's sequence number (from 1). Called inside the
    /// writer job, so numbers follow the order in which writes are applied.
    pub fn sequence_source(&self) -> impl Fn() -> u64 + Send + 'static {
        let seq = self.seq.clone();
        move || seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LedgerState> {
        // A panic while holding the lock leaves consistent numbers (each
        // update is a few plain assignments): keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies a committed charge (see [`apply_charge`]).
    pub fn apply(&self, charge: &Charge) {
        apply_charge(&mut self.lock(), charge);
    }

    /// Records a committed wallet movement other than a charge (a top-up);
    /// `seq` was taken in its writer job.
    pub fn wallet_written(&self, tenant_id: &str, seq: u64, balance: i64) {
        set_wallet(&mut self.lock(), tenant_id, seq, balance);
    }

    /// Reserves `claim.cost` against the key's cap and the tenant's wallet,
    /// both or neither.
    pub fn reserve(self: &Arc<Self>, claim: Claim<'_>) -> Result<CreditHold, Refusal> {
        let Claim {
            key,
            tenant,
            cost,
            now,
        } = claim;
        let mut state = self.lock();
        let state = &mut *state;
        let spend = state.keys.entry(key.id.clone()).or_default();
        if !spend.known {
            // A key made since the start: its record is the truth (a
            // rotated key starts from its predecessor's consumption).
            let (consumed, notified) = key.current_cycle(now);
            spend.known = true;
            spend.cycle_start = key.cycle_start;
            spend.consumed = consumed;
            spend.notified = notified.to_vec();
            if let Some(from) = &key.rotated_from {
                link(state, from, &key.id);
            }
        }
        let spend = &state.keys[&key.id];
        if let Some(limit) = key.credit_limit {
            let consumed = current_consumed(spend, key, now);
            let reserved = allowance_reserved(state, &key.id);
            if u128::from(consumed) + u128::from(reserved) >= u128::from(limit) {
                return Err(Refusal::KeyCap {
                    limit,
                    consumed,
                    reserved,
                });
            }
        }
        let wallet = state
            .wallets
            .entry(tenant.id.clone())
            .or_insert_with(|| Wallet {
                balance: tenant.wallet,
                ..Wallet::default()
            });
        if tenant.tier != Tier::Enterprise
            && i128::from(wallet.balance) - i128::from(wallet.reserved) <= 0
        {
            return Err(Refusal::Wallet {
                balance: wallet.balance,
                reserved: wallet.reserved,
            });
        }
        wallet.reserved = wallet.reserved.saturating_add(cost);
        let mut keys = vec![key.id.clone()];
        keys.extend(spend.partners.iter().cloned());
        for id in &keys {
            if let Some(s) = state.keys.get_mut(id) {
                s.reserved = s.reserved.saturating_add(cost);
            }
        }
        state.reserved_total = state.reserved_total.saturating_add(cost);
        state.holds_open += 1;
        Ok(CreditHold::new(self.clone(), keys, tenant.id.clone(), cost))
    }

    /// A key's consumption in its current cycle and its reservations.
    pub fn key_spend(&self, key: &ApiKey, now: i64) -> (u64, u64) {
        let state = self.lock();
        let reserved = allowance_reserved(&state, &key.id);
        match state.keys.get(&key.id) {
            Some(spend) if spend.known => (current_consumed(spend, key, now), reserved),
            _ => (key.current_cycle(now).0, reserved),
        }
    }

    /// What requests in flight reserved from a tenant's wallet.
    pub fn wallet_reserved(&self, tenant_id: &str) -> u64 {
        self.lock().wallets.get(tenant_id).map_or(0, |w| w.reserved)
    }

    /// Micro-credits reserved by requests in flight, and how many holds.
    pub fn totals(&self) -> (u64, u64) {
        let state = self.lock();
        (state.reserved_total, state.holds_open)
    }

    /// A copy of one day counter (used, reserved).
    pub fn day(&self, row: &str) -> Option<DayCount> {
        self.lock().days.get(row).cloned()
    }
}

/// The key's consumption as of `now`: zero once its cycle boundary passed
/// (the next charge writes the reset). The key record's own `cycle_start`
/// counts too: changing the reset interval re-aligns it and carries the
/// consumption over.
fn current_consumed(spend: &KeySpend, key: &ApiKey, now: i64) -> u64 {
    let base = spend.cycle_start.max(key.cycle_start);
    if key.reset_interval.cycle_start(now) > base {
        0
    } else {
        spend.consumed
    }
}

/// What requests in flight reserved against a key's allowance: the most
/// any member of its rotation holds. A hold takes every member known when
/// it was made, so the member that was known first holds them all.
fn allowance_reserved(state: &LedgerState, id: &str) -> u64 {
    let Some(spend) = state.keys.get(id) else {
        return 0;
    };
    spend
        .partners
        .iter()
        .filter_map(|p| state.keys.get(p))
        .map(|p| p.reserved)
        .fold(spend.reserved, u64::max)
}

fn link(state: &mut LedgerState, a: &str, b: &str) {
    for (one, other) in [(a, b), (b, a)] {
        let spend = state.keys.entry(one.to_owned()).or_default();
        if !spend.partners.iter().any(|p| p == other) {
            spend.partners.push(other.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::keys::ResetInterval;

    const NOW: i64 = 1_795_302_000_000;

    fn key(id: &str, limit: Option<u64>) -> ApiKey {
        ApiKey {
            id: id.into(),
            tenant_id: "ten_1".into(),
            owner_account_id: None,
            name: "k".into(),
            digest: [0; 32],
            hint: String::new(),
            credit_limit: limit,
            credits_consumed: 0,
            reset_interval: ResetInterval::Monthly,
            cycle_start: ResetInterval::Monthly.cycle_start(NOW),
            rate_limit: None,
            expires_at: None,
            allow_high_risk: false,
            notified_thresholds: Vec::new(),
            created_at: NOW,
            revoked_at: None,
            rotated_from: None,
            tpm_limit: None,
        }
    }

    fn tenant(tier: Tier, wallet: i64) -> Tenant {
        Tenant {
            wallet,
            id: "ten_1".into(),
            ..Tenant::new("t", tier).unwrap()
        }
    }

    fn claim<'a>(key: &'a ApiKey, tenant: &'a Tenant, cost: u64) -> Claim<'a> {
        Claim {
            key,
            tenant,
            cost,
            now: NOW,
        }
    }

    fn charge(seq: u64, key: &ApiKey, consumed: u64, balance: i64) -> Charge {
        Charge {
            seq,
            keys: vec![KeyAfter {
                consumed,
                ..KeyAfter::of(key)
            }],
            tenant_id: "ten_1".into(),
            balance_after: balance,
            day: None,
        }
    }

    #[test]
    fn a_cap_admits_while_consumed_plus_reserved_is_below_it() {
        let ledger = Arc::new(Ledger::default());
        let (k, t) = (key("k", Some(7)), tenant(Tier::Enterprise, 0));
        // Serially 0, 2, 4, 6 pass; 8 does not.
        let holds: Vec<_> = (0..4)
            .map(|_| ledger.reserve(claim(&k, &t, 2)).unwrap())
            .collect();
        let Err(Refusal::KeyCap { reserved, .. }) = ledger.reserve(claim(&k, &t, 2)) else {
            panic!("over the cap");
        };
        assert_eq!(reserved, 8);
        assert_eq!(ledger.key_spend(&k, NOW), (0, 8));
        // One is charged: consumed 2, its reservation gone, still 8 held.
        ledger.apply(&charge(1, &k, 2, -2));
        holds[0].release();
        assert_eq!(ledger.key_spend(&k, NOW), (2, 6));
        assert!(ledger.reserve(claim(&k, &t, 2)).is_err());
        // The others fail: dropped, released; 2 < 7 admits again.
        drop(holds);
        assert_eq!(ledger.key_spend(&k, NOW), (2, 0));
        assert_eq!(ledger.totals(), (0, 0));
        assert!(ledger.reserve(claim(&k, &t, 2)).is_ok());
    }

    #[test]
    fn a_wallet_that_may_not_go_negative_admits_while_balance_minus_reserved_is_positive() {
        let ledger = Arc::new(Ledger::default());
        let k = key("k", None);
        let paid = tenant(Tier::Paid, 5);
        let first = ledger.reserve(claim(&k, &paid, 3)).unwrap();
        let _second = ledger.reserve(claim(&k, &paid, 3)).unwrap();
        assert!(matches!(
            ledger.reserve(claim(&k, &paid, 3)),
            Err(Refusal::Wallet {
                balance: 5,
                reserved: 6
            })
        ));
        assert_eq!(ledger.wallet_reserved("ten_1"), 6);
        drop(first);
        assert_eq!(ledger.wallet_reserved("ten_1"), 3);
        // Enterprise reserves too, and is never refused.
        let rich = Arc::new(Ledger::default());
        let enterprise = tenant(Tier::Enterprise, -100);
        assert!(rich.reserve(claim(&k, &enterprise, 3)).is_ok());
    }

    #[test]
    fn committed_values_apply_by_sequence_whatever_order_they_arrive_in() {
        let ledger = Arc::new(Ledger::default());
        let (k, t) = (key("k", Some(100)), tenant(Tier::Paid, 50));
        drop(ledger.reserve(claim(&k, &t, 1)).unwrap());
        ledger.apply(&charge(5, &k, 30, 20));
        // An older commit reaches memory late: ignored.
        ledger.apply(&charge(4, &k, 20, 30));
        assert_eq!(ledger.key_spend(&k, NOW).0, 30);
        ledger.wallet_written("ten_1", 3, 1_000);
        let Err(Refusal::KeyCap { consumed, .. }) =
            ledger.reserve(claim(&key("k", Some(30)), &t, 1))
        else {
            panic!("30 of 30 consumed");
        };
        assert_eq!(consumed, 30);
        // A newer top-up counts.
        ledger.wallet_written("ten_1", 6, 1_000);
        let mut state = ledger.lock();
        assert_eq!(state.wallets["ten_1"].balance, 1_000);
        // Replaying a charge twice is the same as once.
        apply_charge(&mut state, &charge(7, &k, 40, 990));
        apply_charge(&mut state, &charge(7, &k, 40, 990));
        assert_eq!(state.keys["k"].consumed, 40);
        assert_eq!(state.wallets["ten_1"].balance, 990);
    }

    #[test]
    fn a_new_cycle_reads_as_nothing_consumed() {
        let ledger = Arc::new(Ledger::default());
        let (k, t) = (key("k", Some(10)), tenant(Tier::Paid, 50));
        drop(ledger.reserve(claim(&k, &t, 1)).unwrap());
        ledger.apply(&charge(1, &k, 10, 40));
        assert_eq!(ledger.key_spend(&k, NOW).0, 10);
        let next_month = NOW + 40 * 86_400_000;
        assert_eq!(ledger.key_spend(&k, next_month).0, 0);
    }

    #[test]
    fn a_rotated_pair_reserves_one_allowance() {
        let ledger = Arc::new(Ledger::default());
        let t = tenant(Tier::Paid, 1_000);
        let old = key("old", Some(4));
        let new = ApiKey {
            rotated_from: Some("old".into()),
            ..key("new", Some(4))
        };
        let _a = ledger.reserve(claim(&old, &t, 2)).unwrap();
        let _b = ledger.reserve(claim(&new, &t, 2)).unwrap();
        // 4 reserved across the pair: neither key admits another.
        assert!(ledger.reserve(claim(&old, &t, 2)).is_err());
        assert!(ledger.reserve(claim(&new, &t, 2)).is_err());
    }

    #[test]
    fn a_day_counter_holds_its_cap_and_a_released_unit_is_free_again() {
        let ledger = Arc::new(Ledger::default());
        let (k, t) = (key("k", None), tenant(Tier::Free, 1_000));
        let row = "ten_1/2026-11-21/multimodal".to_owned();
        let first = ledger.reserve(claim(&k, &t, 1)).unwrap();
        assert_eq!(first.take_day(row.clone(), 2, || Ok(1)).unwrap(), Ok(()));
        let second = ledger.reserve(claim(&k, &t, 1)).unwrap();
        assert_eq!(
            second
                .take_day(row.clone(), 2, || unreachable!("in memory"))
                .unwrap(),
            Err(Refusal::DayCap { cap: 2 })
        );
        drop(first);
        assert_eq!(second.take_day(row.clone(), 2, || Ok(0)).unwrap(), Ok(()));
        assert_eq!(second.day_row(), Some(row.clone()));
        assert_eq!(ledger.day(&row).map(|d| (d.used, d.reserved)), Some((1, 1)));
        // The next day starts from its own count, and drops the days no
        // request holds any more.
        let other = "ten_2/2026-11-21/multimodal".to_owned();
        let third = ledger.reserve(claim(&k, &t, 1)).unwrap();
        assert_eq!(third.take_day(other.clone(), 2, || Ok(0)).unwrap(), Ok(()));
        drop(third);
        let next = "ten_1/2026-11-22/multimodal".to_owned();
        let fourth = ledger.reserve(claim(&k, &t, 1)).unwrap();
        assert_eq!(fourth.take_day(next.clone(), 2, || Ok(0)).unwrap(), Ok(()));
        assert!(ledger.day(&other).is_none(), "a past day no one holds");
        assert!(ledger.day(&row).is_some(), "held by the second request");
    }
}
