//! HTTP handlers only: extract, call the domain, map to a view. Handlers
//! never open a transaction; the domain modules do.
//!
//! - `health`: `/healthz`, `/readyz` (public)
//! - `v1`: inference routes (`/v1`, API key)
//! - `inference`: the extractor and frame (rate limit, server span) every
//!   inference handler shares
//! - `media`: image and audio routes under `/v1` (API key)
//! - `embeddings`: `/v1/embeddings` (API key)
//! - `responses`: `/v1/responses`, OpenAI's Responses API (API key)
//! - `native`: the Gemini and legacy-completions passthroughs
//!   (`/v1beta/models/...`, `/v1/completions`, API key)
//! - `messages`: Anthropic's `/v1/messages` (passthrough or translation)
//!   and `/v1/messages/count_tokens` (API key)
//! - `dashboard`: `/api/v1` (session; permissions in each signature)
//! - `billing`: `/api/v1` usage, key consumption, top-ups, wallet history
//! - `webhooks`: `/api/v1/webhooks` settings, secret rotation, deliveries
//! - `keys`, `users`, `models`, `stats`, `playground`: the dashboard's
//!   key, account and catalogue management, overview and playground
//! - `tenants`: the operator's tenant list, each tenant's model allow-list
//! - `openapi`: the OpenAPI document of `/api/v1`
//! - `compliance`: policies, audit, conversations, reviews, incidents,
//!   sub-processors, consents, erasure
//! - `/metrics`: Prometheus exposition (public unless a token is set)

pub mod billing;
pub mod body;
pub mod compliance;
pub mod dashboard;
pub mod embeddings;
pub mod error;
pub mod extract;
pub mod health;
pub mod inference;
pub mod json;
pub mod keys;
pub mod media;
pub mod messages;
pub mod metrics;
pub mod models;
pub mod native;
pub mod openapi;
pub mod playground;
pub mod responses;
pub mod router;
pub mod serve;
pub mod sso;
pub mod state;
pub mod stats;
pub mod tenants;
pub mod ui;
pub mod users;
pub mod v1;
pub mod webhooks;

use axum::Router;

use crate::api::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .merge(health::routes())
        .merge(v1::routes())
        .merge(media::routes())
        .merge(embeddings::routes())
        .merge(native::routes())
        .merge(messages::routes())
        .merge(responses::routes())
        .merge(dashboard::routes())
        .merge(sso::routes())
        .merge(billing::routes())
        .merge(webhooks::routes())
        .merge(compliance::routes())
        .merge(keys::routes())
        .merge(tenants::routes())
        .merge(users::routes())
        .merge(models::routes())
        .merge(stats::routes())
        .merge(playground::routes())
        .merge(openapi::routes())
        .route("/metrics", axum::routing::get(crate::api::metrics::scrape))
}
