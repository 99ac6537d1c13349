//! Sign-in throttling: growing delays after failed sign-ins, per account and
//! per source address, never a lock.
//!
//! Each failed sign-in counts against the email it named (known or not, so
//! the throttle says nothing about which accounts exist) and against the
//! address it came from. Past a number of free failures, every further
//! failure makes the next attempt wait twice as long as the last, up to a
//! ceiling: guessing slows to a few hundred attempts a day, while the owner
//! of the account waits at most the ceiling, and `tollgate users
//! clear-sign-in-throttle` (through the admin socket) lifts it at once.
//!
//! The state is in memory: a restart clears it. It is bounded: failures are
//! forgotten some time after the last one, and each table holds at most
//! [`MAX_TRACKED`] entries (the stalest go first).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How one kind of key (account, address) is throttled.
struct Rules {
    /// Failures allowed before any delay.
    free: u32,
    /// The first delay; each further failure doubles it.
    first_delay: Duration,
    /// The longest delay.
    ceiling: Duration,
}

/// One account: a handful of typos, then delays (a person rarely fails more).
const ACCOUNT: Rules = Rules {
    free: 5,
    first_delay: Duration::from_secs(1),
    ceiling: Duration::from_secs(300),
};

/// One address: more room, since many people may share it (a NAT, an
/// office); it catches one source trying many emails.
const ADDRESS: Rules = Rules {
    free: 20,
    first_delay: Duration::from_secs(1),
    ceiling: Duration::from_secs(300),
};

/// Failures are forgotten this long after the last one (and after its delay).
const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);

/// The most keys one table tracks.
pub const MAX_TRACKED: usize = 10_000;

/// A throttled refusal is written to the audit log at most this often per
/// key; the refusals in between are counted in the next entry, so a flood
/// of refused attempts (which cost the server nothing else) cannot flood
/// the log.
const AUDIT_EVERY: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
struct Record {
    failures: u32,
    last_failure: Instant,
    blocked_until: Instant,
    last_audited: Option<Instant>,
    unaudited: u64,
}

impl Record {
    fn stale(&self, now: Instant) -> bool {
        now >= self.blocked_until.max(self.last_failure + FORGET_AFTER)
    }
}

/// A refused attempt: how long to wait, and whether to audit it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Throttled {
    /// Seconds until the next attempt is considered (at least 1).
    pub retry_after: u64,
    /// `Some(n)` when this refusal is to be audited: `n` refusals were not
    /// audited since the last entry.
    pub audit: Option<u64>,
}

#[derive(Default)]
struct Tables {
    accounts: HashMap<String, Record>,
    addresses: HashMap<IpAddr, Record>,
}

#[derive(Default)]
pub struct SignInThrottle {
    tables: Mutex<Tables>,
}

/// The key of an email: as accounts store it, and bounded.
fn account_key(email: &str) -> String {
    email.trim().to_lowercase().chars().take(254).collect()
}

impl SignInThrottle {
    /// Refuses an attempt while the email or the address waits out a delay.
    pub fn check(
        &self,
        email: &str,
        address: Option<IpAddr>,
        now: Instant,
    ) -> Result<(), Throttled> {
        let mut tables = self.tables.lock().expect("throttle lock");
        let Tables {
            accounts,
            addresses,
        } = &mut *tables;
        let account = accounts
            .get_mut(&account_key(email))
            .filter(|r| r.blocked_until > now);
        let address = address
            .and_then(|a| addresses.get_mut(&a))
            .filter(|r| r.blocked_until > now);
        // The record that waits longest answers (and is audited).
        let record = match (account, address) {
            (Some(a), Some(b)) => Some(if a.blocked_until >= b.blocked_until {
                a
            } else {
                b
            }),
            (a, b) => a.or(b),
        };
        let Some(record) = record else {
            return Ok(());
        };
        let wait = record.blocked_until - now;
        let retry_after = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        let audit = if record
            .last_audited
            .is_none_or(|at| now.duration_since(at) >= AUDIT_EVERY)
        {
            record.last_audited = Some(now);
            Some(std::mem::take(&mut record.unaudited))
        } else {
            record.unaudited += 1;
            None
        };
        Err(Throttled {
            retry_after: retry_after.max(1),
            audit,
        })
    }

    /// Counts a failed attempt against the email and the address.
    pub fn failed(&self, email: &str, address: Option<IpAddr>, now: Instant) {
        let mut tables = self.tables.lock().expect("throttle lock");
        count(&mut tables.accounts, account_key(email), &ACCOUNT, now);
        if let Some(address) = address {
            count(&mut tables.addresses, address, &ADDRESS, now);
        }
    }

    /// A successful sign-in clears the account's failures. The address's
    /// stay: one valid account must not reset the count of a source that
    /// tries others.
    pub fn succeeded(&self, email: &str) {
        let mut tables = self.tables.lock().expect("throttle lock");
        tables.accounts.remove(&account_key(email));
    }

    /// Lifts the delays of one email, or of every email and address.
    /// Returns how many were lifted.
    pub fn clear(&self, email: Option<&str>) -> usize {
        let mut tables = self.tables.lock().expect("throttle lock");
        match email {
            Some(email) => usize::from(tables.accounts.remove(&account_key(email)).is_some()),
            None => {
                let n = tables.accounts.len() + tables.addresses.len();
                *tables = Tables::default();
                n
            }
        }
    }
}

fn count<K: std::hash::Hash + Eq + Clone>(
    table: &mut HashMap<K, Record>,
    key: K,
    rules: &Rules,
    now: Instant,
) {
    if table.len() >= MAX_TRACKED && !table.contains_key(&key) {
        table.retain(|_, r| !r.stale(now));
        while table.len() >= MAX_TRACKED {
            let stalest = table
                .iter()
                .min_by_key(|(_, r)| r.last_failure)
                .map(|(k, _)| k.clone());
            match stalest {
                Some(k) => table.remove(&k),
                None => break,
            };
        }
    }
    let record = table
        .entry(key)
        .and_modify(|r| {
            if r.stale(now) {
                r.failures = 0;
            }
        })
        .or_insert(Record {
            failures: 0,
            last_failure: now,
            blocked_until: now,
            last_audited: None,
            unaudited: 0,
        });
    record.failures = record.failures.saturating_add(1);
    record.last_failure = now;
    if record.failures >= rules.free {
        let doublings = (record.failures - rules.free).min(20);
        let delay = rules
            .first_delay
            .saturating_mul(1 << doublings)
            .min(rules.ceiling);
        record.blocked_until = now + delay;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: Option<IpAddr> = Some(IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1)));

    #[test]
    fn delays_start_after_the_free_failures_grow_and_stop_at_the_ceiling() {
        let throttle = SignInThrottle::default();
        let mut now = Instant::now();
        for _ in 0..ACCOUNT.free - 1 {
            throttle.failed("A@x.org", None, now);
            assert_eq!(throttle.check("a@x.org", None, now), Ok(()));
        }
        let mut last = 0;
        for _ in 0..30 {
            throttle.failed("a@x.org", None, now);
            let refused = throttle.check(" a@X.org ", None, now).unwrap_err();
            assert!(refused.retry_after >= last, "{refused:?}");
            assert!(refused.retry_after <= ACCOUNT.ceiling.as_secs());
            last = refused.retry_after;
            now += Duration::from_secs(refused.retry_after);
            assert_eq!(throttle.check("a@x.org", None, now), Ok(()), "never a lock");
        }
        assert_eq!(last, ACCOUNT.ceiling.as_secs());
        throttle.succeeded("a@x.org");
        throttle.failed("a@x.org", None, now);
        assert_eq!(throttle.check("a@x.org", None, now), Ok(()));
    }

    #[test]
    fn an_address_is_throttled_whatever_the_email_and_cleared_by_the_operator() {
        let throttle = SignInThrottle::default();
        let now = Instant::now();
        for i in 0..ADDRESS.free {
            throttle.failed(&format!("u{i}@x.org"), HOME, now);
        }
        assert!(throttle.check("new@x.org", HOME, now).is_err());
        assert_eq!(throttle.check("new@x.org", None, now), Ok(()));
        assert!(throttle.clear(None) > 0);
        assert_eq!(throttle.check("new@x.org", HOME, now), Ok(()));
    }

    #[test]
    fn refusals_are_audited_at_most_once_a_minute_with_a_count() {
        let throttle = SignInThrottle::default();
        let now = Instant::now();
        for _ in 0..ACCOUNT.free + 10 {
            throttle.failed("a@x.org", None, now);
        }
        assert_eq!(
            throttle.check("a@x.org", None, now).unwrap_err().audit,
            Some(0)
        );
        for _ in 0..3 {
            assert_eq!(
                throttle.check("a@x.org", None, now).unwrap_err().audit,
                None
            );
        }
        let later = now + AUDIT_EVERY;
        assert_eq!(
            throttle.check("a@x.org", None, later).unwrap_err().audit,
            Some(3)
        );
    }

    #[test]
    fn the_tables_stay_bounded() {
        let throttle = SignInThrottle::default();
        let now = Instant::now();
        for i in 0..MAX_TRACKED + 50 {
            throttle.failed(&format!("u{i}@x.org"), None, now);
        }
        assert!(throttle.tables.lock().unwrap().accounts.len() <= MAX_TRACKED);
    }
}
