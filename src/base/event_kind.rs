//! The closed set of webhook event kinds (spec "Events", docs/webhooks.md).
//!
//! It lives in the bottom layer, not in `events`, because the ledger
//! (`billing`, below `events`) fires the spend kinds inside the charge's own
//! transaction and stores them in the outbox. One enum, one wire name per
//! kind: the webhook `event` field, the outbox rows, the dashboard's
//! delivery list and the `tollgate_events` metric label all read
//! [`EventKind::as_str`].
//!
//! Stored as its wire name (a serde string), so an outbox row written when
//! the kind was a plain `String` decodes unchanged (src/store/codec.rs).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Every event Tollgate publishes. Adding one makes the compiler list the
/// places that name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    RequestCompleted,
    Spend50Percent,
    Spend80Percent,
    BudgetExceeded,
    ProvidersExhausted,
    FallbackTriggered,
    IncidentCreated,
    SubProcessorChanged,
    /// Beyond the spec's eight: a deployment was taken out of rotation.
    DeploymentCooldown,
}

impl EventKind {
    /// Every kind, in the order docs/webhooks.md lists them.
    pub const ALL: [EventKind; 9] = [
        EventKind::RequestCompleted,
        EventKind::Spend50Percent,
        EventKind::Spend80Percent,
        EventKind::BudgetExceeded,
        EventKind::ProvidersExhausted,
        EventKind::FallbackTriggered,
        EventKind::IncidentCreated,
        EventKind::SubProcessorChanged,
        EventKind::DeploymentCooldown,
    ];

    /// The spend thresholds, in percent of a key's `creditLimit`, with the
    /// kind each fires (once per cycle).
    pub const SPEND_THRESHOLDS: [(u8, EventKind); 3] = [
        (50, EventKind::Spend50Percent),
        (80, EventKind::Spend80Percent),
        (100, EventKind::BudgetExceeded),
    ];

    /// The wire name: the webhook `event` field, the stored outbox row.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::RequestCompleted => "request.completed",
            EventKind::Spend50Percent => "spend.50_percent",
            EventKind::Spend80Percent => "spend.80_percent",
            EventKind::BudgetExceeded => "budget.exceeded",
            EventKind::ProvidersExhausted => "providers.exhausted",
            EventKind::FallbackTriggered => "fallback.triggered",
            EventKind::IncidentCreated => "incident.created",
            EventKind::SubProcessorChanged => "sub_processor.changed",
            EventKind::DeploymentCooldown => "deployment.cooldown",
        }
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name is not one of [`EventKind::ALL`]'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownEventKind(pub String);

impl fmt::Display for UnknownEventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not an event Tollgate publishes", self.0)
    }
}

impl std::error::Error for UnknownEventKind {}

impl FromStr for EventKind {
    type Err = UnknownEventKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EventKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == s)
            .ok_or_else(|| UnknownEventKind(s.to_owned()))
    }
}

impl Serialize for EventKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EventKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_wire_name() {
        for kind in EventKind::ALL {
            assert_eq!(kind.as_str().parse::<EventKind>(), Ok(kind));
        }
        assert!("spend.90_percent".parse::<EventKind>().is_err());
    }

    #[test]
    fn a_kind_is_stored_exactly_as_its_name_was() {
        // Outbox rows written before the enum held the name as a String.
        for kind in EventKind::ALL {
            let before = crate::store::codec::encode(&kind.as_str().to_owned());
            assert_eq!(crate::store::codec::encode(&kind), before);
            let back: EventKind = crate::store::codec::decode(&before).unwrap();
            assert_eq!(back, kind);
        }
    }
}
