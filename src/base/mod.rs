//! The bottom layer: what every other part uses and which uses nothing of
//! Tollgate's own. Ids, money, time, the network guard, the error-code
//! table, the closed set of event kinds, the checks on names and URLs
//! shown to people, the secret that never prints, the configuration's
//! refusal, the task set every background task is spawned through, and the
//! purge of start-up's freed memory.

pub mod config_error;
pub mod error;
pub mod event_kind;
pub mod ids;
pub mod json;
pub mod memory;
pub mod money;
pub mod names;
pub mod net_guard;
pub mod recent;
pub mod redact;
pub mod secret;
pub mod tasks;
pub mod time;
