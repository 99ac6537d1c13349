//! Limits that refuse a request before it costs anything: requests per
//! minute per key, and durable per-day counters (the free tier's multimodal
//! cap).
//!
//! The per-minute limit is a sliding window over the last 60 seconds, kept
//! in memory by the one process that serves every request: exact on one node
//! (no per-worker drift, no fixed-window double burst at a minute boundary).
//! A restart forgets it, which can only let through what the limit allowed
//! anyway. Day counters are durable, because a restart must not reset them.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use redb::ReadableTable;

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
        [
            ("x-ratelimit-limit-requests", self.limit.to_string()),
            ("x-ratelimit-remaining-requests", self.remaining.to_string()),
            (
                "x-ratelimit-reset-requests",
                format!("{}s", ceil_seconds(self.reset_ms)),
            ),
        ]
    }

    /// Whole seconds to wait, for `Retry-After`.
    pub fn retry_after_seconds(&self) -> i64 {
        ceil_seconds(self.reset_ms).max(1)
    }
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
        let allowed = times.len() < limit_len;
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

fn day_row(scope: &str, counter: &str, now: i64) -> Vec<u8> {
    let day = crate::time_util::format_rfc3339(now);
    format!("{scope}/{}/{counter}", &day[..10]).into_bytes()
}

/// Takes one unit of a durable per-day counter if fewer than `cap` were
/// taken today (UTC). `Ok(used)` after taking; `Err(None)` when the day is
/// full. The check and the increment are one transaction of the writer,
/// so concurrent requests cannot overshoot.
pub async fn take_daily(
    store: &Store,
    scope: &str,
    counter: &str,
    cap: u32,
    now: i64,
) -> Result<Result<u32, ()>, StoreError> {
    let row = day_row(scope, counter, now);
    store
        .write(move |txn| {
            let mut table = txn.open_table(DAY_COUNTS)?;
            let used = table
                .get(row.as_slice())?
                .map(|v| decode_count(v.value()))
                .unwrap_or(0);
            if used >= cap {
                return Ok(Err(()));
            }
            table.insert(row.as_slice(), (used + 1).to_be_bytes().as_slice())?;
            Ok(Ok(used + 1))
        })
        .await
}

/// How many units of a per-day counter were taken today (UTC).
pub fn daily_used(store: &Store, scope: &str, counter: &str, now: i64) -> Result<u32, StoreError> {
    let row = day_row(scope, counter, now);
    store.read(|tx| {
        Ok(crate::store::tables::Reader::get_raw(tx, DAY_COUNTS, &row)?
            .map(|v| decode_count(&v))
            .unwrap_or(0))
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
    fn midnight_is_utc() {
        // 2026-11-21T23:00:00Z
        let now = 1_795_302_000_000;
        assert_eq!(ms_to_midnight(now), 3_600_000);
    }
}
