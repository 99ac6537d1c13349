//! Tollgate: a single-binary AI inference gateway.
//!
//! The library holds every capability; `main.rs` only parses the command
//! line and dispatches here, so tests and benchmarks drive the same code the
//! binary runs.

pub mod admin;
pub mod api;
pub mod app;
pub mod audit;
pub mod auth;
pub mod base;
pub mod billing;
pub mod catalogue;
pub mod cli;
pub mod compliance;
pub mod config;
pub mod events;
pub mod gateway;
pub mod metrics;
pub mod migrations;
pub mod pii;
pub mod providers;
pub mod routing;
pub mod setup;
pub mod sso;
pub mod store;
pub mod tenants;
pub mod traces;
pub mod upstream;
