//! Limits that refuse a request before it costs anything: requests per
//! minute per key, requests and tokens per minute per model (across all
//! keys), and durable per-day counters (the free tier's multimodal cap).
//!
//! Tokens are reserved at admission (the prompt as estimated, plus the
//! completion the request allows itself) and the reservation is replaced by
//! the upstream's usage when the request completes, so concurrent requests
//! cannot all pass on the same remaining budget.
//!
//! The per-minute limit is a sliding window over the last 60 seconds, kept
//! in memory by the one process that serves every request: exact on one node
//! (no per-worker drift, no fixed-window double burst at a minute boundary).
//! A restart forgets it, which can only let through what the limit allowed
//! anyway. Day counters are durable, because a restart must not reset them.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::store::tables::DAY_COUNTS;
use crate::store::{Store, StoreError};

const WINDOW_MS: i64 = 60_000;
const DAY_MS: i64 = 86_400_000;
const SHARDS: usize = 16;

/// The outcome of one rate-limit check: what the headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateDecision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Milliseconds until the oldest counted request leaves the window
    /// (a slot frees up); 0 when nothing is counted.
    pub reset_ms: i64,
}

impl RateDecision {
    /// `x-ratelimit-*` headers, as OpenAI sends them.
    pub fn headers(&self) -> [(&'static str, String); 3] {
        window_headers(
            [
                "x-ratelimit-limit-requests",
                "x-ratelimit-remaining-requests",
                "x-ratelimit-reset-requests",
            ],
            u64::from(self.limit),
            u64::from(self.remaining),
            self.reset_ms,
        )
    }

    /// Whole seconds to wait, for `Retry-After`.
    pub fn retry_after_seconds(&self) -> i64 {
        retry_after_seconds(self.reset_ms)
    }
}

/// A window's limit, what remains of it and when a slot frees up (whole
/// seconds, as OpenAI writes it), under the three header names given.
fn window_headers(
    names: [&'static str; 3],
    limit: u64,
    remaining: u64,
    reset_ms: i64,
) -> [(&'static str, String); 3] {
    let [limit_name, remaining_name, reset_name] = names;
    [
        (limit_name, limit.to_string()),
        (remaining_name, remaining.to_string()),
        (reset_name, format!("{}s", ceil_seconds(reset_ms))),
    ]
}

/// Whole seconds to wait, at least one, for `Retry-After`.
fn retry_after_seconds(reset_ms: i64) -> i64 {
    ceil_seconds(reset_ms).max(1)
}

fn ceil_seconds(ms: i64) -> i64 {
    (ms.max(0) + 999) / 1000
}

/// Requests per minute, per allowance (a key, or a rotated pair).
#[derive(Default)]
pub struct RateLimiter {
    shards: [Mutex<HashMap<String, VecDeque<i64>>>; SHARDS],
}

impl RateLimiter {
    /// Counts a request for `allowance` at `now` if the window has room.
    pub fn check(&self, allowance: &str, limit: u32, now: i64) -> RateDecision {
        self.check_and(allowance, limit, now, || true)
    }

    /// [`RateLimiter::check`], counting the request only if `also` (asked
    /// only when the window has room) admits it too. `also` runs under the
    /// window's lock, so no other request ever sees a slot taken by one
    /// that `also` then refuses.
    pub fn check_and(
        &self,
        allowance: &str,
        limit: u32,
        now: i64,
        also: impl FnOnce() -> bool,
    ) -> RateDecision {
        let shard = &self.shards[shard_of(allowance)];
        let mut map = shard.lock().expect("rate limiter lock");
        if map.len() > 4096 {
            // Forget allowances idle for a whole window.
            map.retain(|_, times| times.back().is_some_and(|t| now - t < WINDOW_MS));
        }
        let times = map.entry(allowance.to_owned()).or_default();
        while times.front().is_some_and(|t| now - t >= WINDOW_MS) {
            times.pop_front();
        }
        let limit_len = limit as usize;
        let allowed = times.len() < limit_len && also();
        if allowed {
            times.push_back(now);
        }
        let reset_ms = times.front().map_or(0, |oldest| oldest + WINDOW_MS - now);
        RateDecision {
            allowed,
            limit,
            remaining: limit.saturating_sub(times.len() as u32),
            reset_ms,
        }
    }
}

/// The outcome of one token-limit check: what the headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenDecision {
    pub allowed: bool,
    pub limit: u64,
    pub remaining: u64,
    /// Milliseconds until the oldest counted tokens leave the window.
    pub reset_ms: i64,
}

impl TokenDecision {
    /// `x-ratelimit-*-tokens` headers, as OpenAI sends them.
    pub fn headers(&self) -> [(&'static str, String); 3] {
        window_headers(
            [
                "x-ratelimit-limit-tokens",
                "x-ratelimit-remaining-tokens",
                "x-ratelimit-reset-tokens",
            ],
            self.limit,
            self.remaining,
            self.reset_ms,
        )
    }

    pub fn retry_after_seconds(&self) -> i64 {
        retry_after_seconds(self.reset_ms)
    }
}

#[derive(Default)]
struct TokenWindow {
    /// (counted at, reservation id, tokens), oldest first.
    entries: VecDeque<(i64, u64, u64)>,
    used: u64,
}

impl TokenWindow {
    fn slide(&mut self, now: i64) {
        while let Some(&(at, _, tokens)) = self.entries.front()
            && now - at >= WINDOW_MS
        {
            self.used -= tokens;
            self.entries.pop_front();
        }
    }

    fn decision(&self, allowed: bool, limit: u64, now: i64) -> TokenDecision {
        TokenDecision {
            allowed,
            limit,
            remaining: limit.saturating_sub(self.used),
            reset_ms: self
                .entries
                .front()
                .map_or(0, |(oldest, _, _)| oldest + WINDOW_MS - now),
        }
    }
}

/// Tokens per minute, per scope (a key, a model): a sliding window of
/// reservations, each settled to what the request really used.
#[derive(Default)]
pub struct TokenLimiter {
    shards: [Mutex<HashMap<String, TokenWindow>>; SHARDS],
    next_id: AtomicU64,
}

impl TokenLimiter {
    /// Reserves `tokens` for `scope` at `now` if the window has room for
    /// them. A request larger than the whole limit passes alone in an empty
    /// window (it could never pass otherwise), so the limit holds within
    /// one request.
    pub fn reserve(&self, scope: &str, limit: u64, tokens: u64, now: i64) -> (TokenDecision, u64) {
        let mut map = self.shards[shard_of(scope)]
            .lock()
            .expect("token limiter lock");
        if map.len() > 4096 {
            map.retain(|_, w| {
                w.entries
                    .back()
                    .is_some_and(|(t, _, _)| now - t < WINDOW_MS)
            });
        }
        let window = map.entry(scope.to_owned()).or_default();
        window.slide(now);
        let allowed = window.used == 0 || window.used + tokens <= limit;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if allowed {
            window.entries.push_back((now, id, tokens));
            window.used += tokens;
        }
        (window.decision(allowed, limit, now), id)
    }

    /// Replaces reservation `id` of `scope` by the tokens really used
    /// (0 for a request that failed before any upstream counted it).
    pub fn settle(&self, scope: &str, id: u64, tokens: u64) {
        let mut map = self.shards[shard_of(scope)]
            .lock()
            .expect("token limiter lock");
        if let Some(window) = map.get_mut(scope)
            && let Some(entry) = window.entries.iter_mut().find(|(_, i, _)| *i == id)
        {
            window.used = window.used - entry.2 + tokens;
            entry.2 = tokens;
        }
    }

    /// [`TokenLimiter::reserve`] as a [`Reservation`] that settles (or,
    /// dropped, releases) itself; the refusal's decision otherwise.
    pub fn hold(
        self: &Arc<Self>,
        scope: &str,
        limit: u64,
        tokens: u64,
        now: i64,
    ) -> Result<Reservation, TokenDecision> {
        let (decision, id) = self.reserve(scope, limit, tokens, now);
        if !decision.allowed {
            return Err(decision);
        }
        Ok(Reservation {
            tokens: self.clone(),
            scope: scope.to_owned(),
            id,
            settled: AtomicBool::new(false),
        })
    }

    /// What the headers say now, without counting anything.
    pub fn peek(&self, scope: &str, limit: u64, now: i64) -> TokenDecision {
        let mut map = self.shards[shard_of(scope)]
            .lock()
            .expect("token limiter lock");
        match map.get_mut(scope) {
            Some(window) => {
                window.slide(now);
                window.decision(true, limit, now)
            }
            None => TokenDecision {
                allowed: true,
                limit,
                remaining: limit,
                reset_ms: 0,
            },
        }
    }
}

/// A model's own limits (`rpm_limit`, `tpm_limit`), across every key: they
/// keep the gateway under the provider's quota.
#[derive(Default)]
pub struct ModelLimits {
    requests: RateLimiter,
    tokens: Arc<TokenLimiter>,
}

/// Tokens reserved for one request; settled with the upstream's usage, or
/// released when dropped unsettled (the request failed).
pub struct Reservation {
    tokens: Arc<TokenLimiter>,
    scope: String,
    id: u64,
    settled: AtomicBool,
}

impl Reservation {
    pub fn settle(&self, tokens: u64) {
        if !self.settled.swap(true, Ordering::SeqCst) {
            self.tokens.settle(&self.scope, self.id, tokens);
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.settle(0);
    }
}

/// Why a model refused a request: which limit, and when to come back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRefusal {
    pub message: String,
    pub retry_after_seconds: i64,
}

impl ModelLimits {
    /// Counts a request of `reserve` tokens against `model`'s limits; both
    /// must have room, and a refused request counts against neither.
    /// `Ok(None)` when the model has no token limit.
    pub fn admit(
        &self,
        model: &str,
        rpm_limit: Option<u32>,
        tpm_limit: Option<u64>,
        reserve: u64,
        now: i64,
    ) -> Result<Option<Reservation>, ModelRefusal> {
        let hold = || {
            tpm_limit
                .map(|limit| self.tokens.hold(model, limit, reserve, now))
                .transpose()
        };
        let held = match rpm_limit {
            None => hold(),
            Some(limit) => {
                // The tokens are reserved under the request window's lock,
                // and the request counted only when they were.
                let mut held = None;
                let decision = self.requests.check_and(model, limit, now, || {
                    let outcome = hold();
                    let admitted = outcome.is_ok();
                    held = Some(outcome);
                    admitted
                });
                match held {
                    Some(outcome) => outcome,
                    None => {
                        return Err(ModelRefusal {
                            message: format!(
                                "the model `{model}` is limited to {limit} requests per minute across all keys"
                            ),
                            retry_after_seconds: decision.retry_after_seconds(),
                        });
                    }
                }
            }
        };
        held.map_err(|decision| ModelRefusal {
            message: format!(
                "the model `{model}` is limited to {} tokens per minute across all keys; this request reserves {reserve}",
                decision.limit
            ),
            retry_after_seconds: decision.retry_after_seconds(),
        })
    }
}

impl RateLimiter {
    /// What the headers say for `allowance` now, without counting a
    /// request (for refusals that happen before the limit is checked).
    pub fn peek(&self, allowance: &str, limit: u32, now: i64) -> RateDecision {
        let map = self.shards[shard_of(allowance)]
            .lock()
            .expect("rate limiter lock");
        let live: Vec<i64> = map
            .get(allowance)
            .map(|times| {
                times
                    .iter()
                    .copied()
                    .filter(|t| now - t < WINDOW_MS)
                    .collect()
            })
            .unwrap_or_default();
        RateDecision {
            allowed: live.len() < limit as usize,
            limit,
            remaining: limit.saturating_sub(live.len() as u32),
            reset_ms: live.first().map_or(0, |oldest| oldest + WINDOW_MS - now),
        }
    }
}

fn shard_of(allowance: &str) -> usize {
    allowance
        .bytes()
        .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize))
        % SHARDS
}

/// Milliseconds from `now` to the next UTC midnight.
pub fn ms_to_midnight(now: i64) -> i64 {
    (now.div_euclid(DAY_MS) + 1) * DAY_MS - now
}

/// The store row of a per-day counter: `scope/YYYY-MM-DD/counter` (UTC).
pub fn day_row(scope: &str, counter: &str, now: i64) -> String {
    let day = crate::base::time::format_rfc3339(now);
    format!("{scope}/{}/{counter}", &day[..10])
}

/// Counts one unit of a durable per-day counter in a charge's transaction
/// (admission reserved it in memory, see `ledger::Hold::take_day`);
/// returns the count after.
pub fn count_daily(txn: &impl crate::store::tables::Writes, row: &str) -> Result<u32, StoreError> {
    let used = txn
        .get_raw(DAY_COUNTS, row.as_bytes())?
        .map(|v| decode_count(&v))
        .unwrap_or(0)
        .saturating_add(1);
    txn.insert_raw(DAY_COUNTS, row.as_bytes(), &used.to_be_bytes())?;
    Ok(used)
}

/// How many units of a per-day counter were taken today (UTC).
pub fn daily_used(store: &Store, scope: &str, counter: &str, now: i64) -> Result<u32, StoreError> {
    let row = day_row(scope, counter, now);
    daily_count(store, &row)
}

/// The durable count of a per-day counter row.
pub fn daily_count(store: &Store, row: &str) -> Result<u32, StoreError> {
    store.read(|tx| {
        Ok(
            crate::store::tables::Reader::get_raw(tx, DAY_COUNTS, row.as_bytes())?
                .map(|v| decode_count(&v))
                .unwrap_or(0),
        )
    })
}

fn decode_count(bytes: &[u8]) -> u32 {
    bytes.try_into().map(u32::from_be_bytes).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_slides_and_counts_exactly() {
        let limiter = RateLimiter::default();
        let t0 = 1_000_000;
        for i in 0..5 {
            let d = limiter.check("k", 5, t0 + i * 1000);
            assert!(d.allowed);
            assert_eq!(d.remaining, 4 - i as u32);
        }
        let refused = limiter.check("k", 5, t0 + 10_000);
        assert!(!refused.allowed);
        assert_eq!(refused.remaining, 0);
        // The first request leaves the window 60 s after it was counted.
        assert_eq!(refused.reset_ms, 50_000);
        assert_eq!(refused.retry_after_seconds(), 50);
        assert!(!limiter.check("k", 5, t0 + 59_999).allowed);
        assert!(limiter.check("k", 5, t0 + 60_000).allowed);
        // Another allowance is counted apart.
        assert!(limiter.check("other", 5, t0 + 10_000).allowed);
    }

    #[test]
    fn token_reservations_are_settled_to_the_usage() {
        let limiter = TokenLimiter::default();
        let t0 = 1_000_000;
        let (d, first) = limiter.reserve("m", 100, 60, t0);
        assert!(d.allowed);
        assert_eq!(d.remaining, 40);
        // 60 + 50 would pass 100: refused, nothing counted.
        let (d, _) = limiter.reserve("m", 100, 50, t0 + 1);
        assert!(!d.allowed);
        assert_eq!(d.remaining, 40);
        assert_eq!(d.reset_ms, 59_999);
        // The first used 20: 80 left.
        limiter.settle("m", first, 20);
        assert_eq!(limiter.peek("m", 100, t0 + 2).remaining, 80);
        assert!(limiter.reserve("m", 100, 50, t0 + 3).0.allowed);
        // A request larger than the limit passes alone in an empty window.
        assert!(limiter.reserve("big", 10, 500, t0).0.allowed);
        assert!(!limiter.reserve("big", 10, 1, t0).0.allowed);
        assert!(limiter.reserve("big", 10, 1, t0 + 60_000).0.allowed);
    }

    #[test]
    fn a_dropped_reservation_is_released() {
        let limits = ModelLimits::default();
        let held = limits.admit("m", Some(10), Some(100), 90, 0).unwrap();
        assert!(limits.admit("m", Some(10), Some(100), 20, 1).is_err());
        drop(held);
        assert!(limits.admit("m", Some(10), Some(100), 20, 2).is_ok());
        // Two requests were counted: the one refused for tokens was not.
        let Err(refused) = limits.admit("m", Some(2), None, 0, 3) else {
            panic!("over the request limit");
        };
        assert!(refused.message.contains("2 requests per minute"));
    }

    #[test]
    fn a_request_refused_for_tokens_takes_no_request_slot() {
        let limits = ModelLimits::default();
        let first = limits.admit("m", Some(2), Some(100), 90, 0).unwrap();
        // Room for a second request, not for its tokens: refused...
        let Err(refused) = limits.admit("m", Some(2), Some(100), 20, 1) else {
            panic!("over the token limit");
        };
        assert!(refused.message.contains("100 tokens per minute"));
        // ...and counted against neither limit: the second slot is free.
        let _second = limits.admit("m", Some(2), Some(100), 10, 2).unwrap();
        assert_eq!(limits.tokens.peek("m", 100, 2).remaining, 0);
        // The first used nothing after all: 90 tokens free, no slot.
        first.expect("a reservation").settle(0);
        let Err(refused) = limits.admit("m", Some(2), Some(100), 5, 3) else {
            panic!("over the request limit");
        };
        assert!(refused.message.contains("2 requests per minute"));
        // A request refused for its slot reserved no tokens.
        assert_eq!(limits.tokens.peek("m", 100, 4).remaining, 90);
    }

    #[test]
    fn midnight_is_utc() {
        // 2026-11-21T23:00:00Z
        let now = 1_795_302_000_000;
        assert_eq!(ms_to_midnight(now), 3_600_000);
    }
}
