//! The stored key record: its lifecycle state, its spend cycle and the
//! JSON view the dashboard and the CLI show.
//!
//! A cycle boundary is read, not written: a key whose cycle has passed reads
//! as having consumed nothing, and the next charge writes the reset.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use time::{Date, Duration, OffsetDateTime, Time};

use crate::base::money::micros_to_credits;
use crate::base::time::format_rfc3339;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::parse_rfc3339;

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
}
