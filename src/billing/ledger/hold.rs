//! One request's reservation: what admission holds for it (credits on its
//! key, the key's rotation partner and its wallet; a unit of a day
//! counter) until the charge replaces it or the request ends otherwise.
//! Releasing is idempotent and happens at the latest when the last clone
//! is dropped.

use std::sync::{Arc, Mutex};

use super::{DayCount, Ledger, Refusal};
use crate::store::StoreError;

/// One request's reservation. Clones share it; it is released once, by
/// [`CreditHold::release`] after the charge, or when the last clone is dropped.
#[derive(Clone)]
pub struct CreditHold(Arc<HoldInner>);

struct HoldInner {
    ledger: Arc<Ledger>,
    parts: Mutex<Parts>,
}

struct Parts {
    /// The key and its rotation partners, each holding `credits`.
    keys: Vec<String>,
    tenant: String,
    credits: u64,
    /// The day counter row holding one unit.
    day: Option<String>,
    released: bool,
}

impl CreditHold {
    /// A hold of `credits` on each of `keys` and on the wallet of
    /// `tenant`, already counted in the ledger's state by the caller.
    pub(super) fn new(
        ledger: Arc<Ledger>,
        keys: Vec<String>,
        tenant: String,
        credits: u64,
    ) -> CreditHold {
        CreditHold(Arc::new(HoldInner {
            ledger,
            parts: Mutex::new(Parts {
                keys,
                tenant,
                credits,
                day: None,
                released: false,
            }),
        }))
    }

    pub fn ledger(&self) -> &Ledger {
        &self.0.ledger
    }

    fn parts(&self) -> std::sync::MutexGuard<'_, Parts> {
        self.0.parts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reserves one unit of the day counter `row` if fewer than `cap` are
    /// used or reserved. `stored` reads the durable count when the counter
    /// is not in memory yet (a new day). One unit per request.
    pub fn take_day(
        &self,
        row: String,
        cap: u32,
        stored: impl FnOnce() -> Result<u32, StoreError>,
    ) -> Result<Result<(), Refusal>, StoreError> {
        let ledger = &self.0.ledger;
        let known = ledger.lock().days.contains_key(&row);
        // Read outside the lock; a charge cannot have counted this row
        // without a reservation, which would have put it in memory.
        let stored = if known { None } else { Some(stored()?) };
        let mut parts = self.parts();
        if parts.released || parts.day.is_some() {
            return Ok(Ok(()));
        }
        let mut state = ledger.lock();
        if !state.days.contains_key(&row) {
            // A new day: earlier days' counters are not read again (a
            // request counts on the day it was admitted), except those a
            // request in flight still holds.
            let day_of = |r: &str| r.split('/').nth(1).map(str::to_owned);
            let today = day_of(&row);
            state
                .days
                .retain(|r, d| d.reserved > 0 || day_of(r) == today);
        }
        let day = state.days.entry(row.clone()).or_insert_with(|| DayCount {
            used: stored.unwrap_or(0),
            ..DayCount::default()
        });
        if u64::from(day.used) + u64::from(day.reserved) >= u64::from(cap) {
            return Ok(Err(Refusal::DayCap { cap }));
        }
        day.reserved += 1;
        parts.day = Some(row);
        Ok(Ok(()))
    }

    /// The day counter row this request holds a unit of; the charge counts
    /// it durably.
    pub fn day_row(&self) -> Option<String> {
        self.parts().day.clone()
    }

    /// Releases what is still reserved. Idempotent.
    pub fn release(&self) {
        CreditHold::release_inner(&self.0);
    }
}

impl Drop for HoldInner {
    fn drop(&mut self) {
        CreditHold::release_inner(self);
    }
}

impl CreditHold {
    fn release_inner(inner: &HoldInner) {
        let mut parts = inner.parts.lock().unwrap_or_else(|e| e.into_inner());
        if parts.released {
            return;
        }
        parts.released = true;
        let mut state = inner.ledger.lock();
        let credits = parts.credits;
        for id in &parts.keys {
            if let Some(spend) = state.keys.get_mut(id) {
                spend.reserved = spend.reserved.saturating_sub(credits);
            }
        }
        if let Some(wallet) = state.wallets.get_mut(&parts.tenant) {
            wallet.reserved = wallet.reserved.saturating_sub(credits);
        }
        if let Some(row) = &parts.day
            && let Some(day) = state.days.get_mut(row)
        {
            day.reserved = day.reserved.saturating_sub(1);
        }
        state.reserved_total = state.reserved_total.saturating_sub(credits);
        state.holds_open = state.holds_open.saturating_sub(1);
    }
}
