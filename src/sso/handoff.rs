//! The one-time codes that hand a finished sign-in to the dashboard page
//! (docs/security.md): each names an account, is kept only as its digest,
//! is spent by its first redemption, and expires [`HANDOFF_TTL`] after it
//! was issued. The clock is a parameter, so the expiry is tested without
//! waiting and without a shorter lifetime in the binary.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::base::ids::{random_token, sha256};

/// How long the page has to redeem its one-time code.
pub const HANDOFF_TTL: Duration = Duration::from_secs(60);

struct Handoff {
    account_id: String,
    at: Instant,
}

/// The codes issued and not yet redeemed (bounded: see [`super::make_room`]).
#[derive(Default)]
pub(super) struct Handoffs(Mutex<HashMap<[u8; 32], Handoff>>);

impl Handoffs {
    /// A new code for `account_id`, issued at `now`.
    pub(super) fn issue(&self, account_id: &str, now: Instant) -> String {
        let code = random_token(32);
        let mut handoffs = self.0.lock().expect("handoffs lock");
        super::make_room(&mut handoffs, |h| h.at, HANDOFF_TTL, now);
        handoffs.insert(
            sha256(code.as_bytes()),
            Handoff {
                account_id: account_id.to_owned(),
                at: now,
            },
        );
        code
    }

    /// The account `code` was issued for, if it is still valid at `now`;
    /// the code is spent either way.
    pub(super) fn redeem(&self, code: &str, now: Instant) -> Option<String> {
        let handoff = self
            .0
            .lock()
            .expect("handoffs lock")
            .remove(&sha256(code.as_bytes()))?;
        (now.saturating_duration_since(handoff.at) < HANDOFF_TTL).then_some(handoff.account_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_redeems_once_within_60_seconds() {
        let handoffs = Handoffs::default();
        let issued = Instant::now();
        let code = handoffs.issue("acc-1", issued);
        let in_time = issued + HANDOFF_TTL - Duration::from_secs(1);
        assert_eq!(handoffs.redeem(&code, in_time).as_deref(), Some("acc-1"));
        assert_eq!(handoffs.redeem(&code, in_time), None, "single use");
        assert_eq!(handoffs.redeem("a-code-never-issued", in_time), None);
    }

    #[test]
    fn a_code_expires_60_seconds_after_it_was_issued_and_is_spent() {
        assert_eq!(HANDOFF_TTL, Duration::from_secs(60));
        let handoffs = Handoffs::default();
        let issued = Instant::now();
        let code = handoffs.issue("acc-1", issued);
        assert_eq!(handoffs.redeem(&code, issued + HANDOFF_TTL), None);
        // Spent by the late attempt: not valid again, whatever the clock.
        assert_eq!(handoffs.redeem(&code, issued), None);
    }

    #[test]
    fn issuing_drops_the_expired_codes() {
        let handoffs = Handoffs::default();
        let issued = Instant::now();
        let old = handoffs.issue("acc-old", issued);
        let later = issued + HANDOFF_TTL + Duration::from_secs(1);
        let new = handoffs.issue("acc-new", later);
        assert_eq!(handoffs.0.lock().unwrap().len(), 1);
        assert_eq!(handoffs.redeem(&old, issued), None);
        assert_eq!(handoffs.redeem(&new, later).as_deref(), Some("acc-new"));
    }
}
