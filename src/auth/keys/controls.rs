//! What a caller asks of a key (settings at creation, a patch later) and
//! how far it may move the key's controls: without `keys.manage_all` an
//! account may only keep or tighten them.

use serde::{Deserialize, Serialize};

use super::{ApiKey, ResetInterval};
use crate::store::StoreError;

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
    pub(super) fn apply(self, field: &mut Option<T>) {
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
pub(super) struct Controls {
    pub(super) credit_limit: Option<u64>,
    pub(super) reset_interval: ResetInterval,
    pub(super) rate_limit: Option<u32>,
    pub(super) expires_at: Option<i64>,
    pub(super) allow_high_risk: bool,
    pub(super) tpm_limit: Option<u64>,
}

impl Controls {
    /// What a new key would have with nothing set: no cap, no own rate
    /// limit, no expiry, high-risk use refused. Creating a key is compared
    /// with this, so a `user` may create capped keys but not high-risk ones.
    pub(super) const NEW_KEY: Controls = Controls {
        credit_limit: None,
        reset_interval: ResetInterval::Never,
        rate_limit: None,
        expires_at: None,
        allow_high_risk: false,
        tpm_limit: None,
    };

    pub(super) fn of(key: &ApiKey) -> Controls {
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
    pub(super) fn check(
        self,
        before: Controls,
        after: Controls,
        existing: bool,
    ) -> Result<(), StoreError> {
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

pub(super) fn validate_tpm_limit(limit: Option<u64>) -> Result<(), StoreError> {
    if limit == Some(0) {
        return Err(StoreError::Invalid(
            "a token limit must be at least 1 token per minute".into(),
        ));
    }
    Ok(())
}

pub(super) fn validate_rate_limit(limit: Option<u32>) -> Result<(), StoreError> {
    if limit == Some(0) {
        return Err(StoreError::Invalid(
            "a rate limit must be at least 1 request per minute".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPPED: Controls = Controls {
        credit_limit: Some(10),
        reset_interval: ResetInterval::Daily,
        rate_limit: Some(30),
        expires_at: Some(1_000),
        allow_high_risk: false,
        tpm_limit: Some(1_000),
    };

    /// One change to a key's controls.
    type Change = fn(&mut Controls);

    /// `CAPPED` with one change applied.
    fn capped_with(change: impl FnOnce(&mut Controls)) -> Controls {
        let mut after = CAPPED;
        change(&mut after);
        after
    }

    #[test]
    fn a_user_may_tighten_a_key() {
        let loosened = |after: Controls| CAPPED.loosened_by(after, 60, true);
        assert_eq!(loosened(CAPPED), None);
        // Tighter: lower cap, lower rate, lower token limit, earlier expiry.
        let tighter = capped_with(|c| {
            c.credit_limit = Some(5);
            c.rate_limit = Some(10);
            c.tpm_limit = Some(10);
            c.expires_at = Some(500);
        });
        assert_eq!(loosened(tighter), None);
    }

    #[test]
    fn a_user_may_not_loosen_a_key() {
        let loosened = |after: Controls| CAPPED.loosened_by(after, 60, true);
        let cases: [(Change, &str); 11] = [
            (|c| c.allow_high_risk = true, "allowHighRisk"),
            (|c| c.credit_limit = None, "creditLimit"),
            (|c| c.credit_limit = Some(11), "creditLimit"),
            (
                |c| c.reset_interval = ResetInterval::Monthly,
                "resetInterval",
            ),
            (|c| c.rate_limit = Some(31), "rateLimit"),
            // Cleared, the key falls back to the default of 60: raised.
            (|c| c.rate_limit = None, "rateLimit"),
            (|c| c.tpm_limit = None, "tpmLimit"),
            (|c| c.tpm_limit = Some(1_001), "tpmLimit"),
            (|c| c.expires_at = None, "expiresAt"),
            (|c| c.expires_at = Some(2_000), "expiresAt"),
            (
                |c| {
                    c.rate_limit = Some(10);
                    c.credit_limit = None;
                },
                "creditLimit",
            ),
        ];
        for (change, field) in cases {
            let after = capped_with(change);
            assert_eq!(loosened(after), Some(field), "{after:?}");
        }
        let uncapped = capped_with(|c| c.credit_limit = None);
        let tight = Latitude::TightenOnly {
            default_rate_limit: 60,
        };
        assert!(tight.check(CAPPED, uncapped, true).is_err());
        assert!(Latitude::Any.check(CAPPED, uncapped, true).is_ok());
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
