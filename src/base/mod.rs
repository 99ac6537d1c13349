//! The bottom layer: what every other part uses and which uses nothing of
//! Tollgate's own. Ids, money, time, the network guard, the error-code
//! table, the checks on names and URLs shown to people, and the task set
//! every background task is spawned through.

pub mod error;
pub mod ids;
pub mod money;
pub mod names;
pub mod net_guard;
pub mod redact;
pub mod tasks;
pub mod time;
