//! The bottom layer: what every other part uses and which uses nothing of
//! Tollgate's own. Ids, money, time, the network guard, the error-code
//! table, the closed set of event kinds, and the checks on names and URLs
//! shown to people.

pub mod error;
pub mod event_kind;
pub mod ids;
pub mod money;
pub mod names;
pub mod net_guard;
pub mod redact;
pub mod time;
