//! The inference pipeline: a [`Gateway`] (its parts passed in once by the
//! composition root) and the stages every inference route goes through,
//! each in its own file (docs/architecture.md, "One request's walk"):
//!
//! - authenticate: the HTTP layer's extractor (`api::extract`), before
//!   anything here;
//! - admit (`admit`): the model named, the credits reserved, the tier caps;
//! - classify and gate (`gate`): the risk, the refusals, the hold rule;
//! - route (`route`, `walk`): the registry, the fallback over the chain and
//!   the walk over a model's deployments;
//! - call: the route's `walk::Call` (chat, embeddings, media, native);
//! - charge (`charge`): the durable charge and what follows it;
//! - respond (`respond`): the answer's extensions.
//!
//! `chat`, `embeddings`, `media`, `native`, `messages` and `responses` are
//! the adapters over these stages. For streams, an attempt counts as served
//! only once its first chunk arrived: until then nothing was written to the
//! caller, so falling back is safe.

mod admit;
mod charge;
pub mod charge_record;
mod chat;
pub mod embeddings;
pub mod gate;
pub mod judge;
pub mod media;
pub mod messages;
pub mod multimodal;
pub mod native;
mod output;
mod parts;
mod respond;
pub mod responses;
mod route;
mod single;
pub mod stream;
pub mod truncate;
mod walk;

// Moved below the gateway in the layer map; imported here so the
// pipeline's files name them as before.
use crate::providers::{audio, form, tokens};
use crate::routing::attempt;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::auth::keys::ApiKey;
use crate::billing::ledger::CreditHold;
use crate::catalogue::Endpoint;
use crate::catalogue::Model;
use crate::compliance::Classification;
use crate::providers::sse::SseBody;
use crate::routing;

pub(crate) use admit::{
    admit, catalogued, estimated_cost, expected_output, kind_fits, take_multimodal_cap,
    take_tier_caps,
};
pub use charge::{Extensions, Hold, cost, overflowed};
use chat::first_chunk;
pub use chat::{chat_completions, chat_on};
pub use gate::Compliance;
pub(crate) use gate::gate;
pub use parts::{Gateway, Settings};
use respond::billing_view_at;
pub(crate) use route::{registered_providers, relay_refusal};

/// One try of one deployment (or a model skipped), with its closed status:
/// defined with the routing it records (`src/routing/attempt_record.rs`).
pub use crate::routing::{Attempt, AttemptStatus};

/// What the caller gets.
pub enum ChatOutcome {
    Complete(Value),
    /// Held for human review: 202 with the review item (DESIGN 7.3).
    Held(Value),
    Stream {
        body: SseBody,
        /// The catalogue id that served.
        model: String,
    },
}

/// Everything known about the attempt that served.
pub struct Served {
    pub request_id: String,
    pub key_id: String,
    pub tenant_id: String,
    pub model: Arc<Model>,
    /// The name the caller used for it.
    pub requested: String,
    /// The chain as the caller sent it.
    pub chain: Vec<String>,
    pub attempts: Vec<Attempt>,
    pub started: Instant,
    pub risk: Classification,
    pub replaced_parts: usize,
    pub prompt_estimate: u64,
    pub truncation: Option<truncate::Receipt>,
    pub compliance: Arc<Compliance>,
    /// Retries of the deployment that served, before it did.
    pub retries: u32,
    /// Counts the serving deployment busy while the answer (a stream)
    /// lasts.
    pub in_flight: Option<Arc<routing::InFlight>>,
    /// The route it came in on, kept in its usage record.
    pub endpoint: Endpoint,
    /// What admission reserved; the charge settles it.
    pub admission: CreditHold,
}

impl Served {
    pub fn is_fallback(&self) -> bool {
        !self.attempts.is_empty()
    }
}

/// What a single-model route (embeddings, media, native) knows of its
/// request once past the gate: who asked, for which model, on which route,
/// and what admission and the gate produced.
pub(crate) struct Single<'a> {
    pub key: &'a ApiKey,
    pub request_id: &'a str,
    /// The name the caller used for its model.
    pub requested: &'a str,
    pub started: Instant,
    pub endpoint: Endpoint,
    pub risk: Classification,
    pub compliance: Arc<Compliance>,
    pub admission: CreditHold,
    pub prompt_estimate: u64,
}

impl Single<'_> {
    /// Its served attempt on `view` (the deployment that served, after
    /// `attempts` failed): its model is its whole chain; nothing was
    /// replaced or truncated.
    pub(crate) fn served(
        self,
        view: Arc<Model>,
        attempts: Vec<Attempt>,
        retries: u32,
        in_flight: routing::InFlight,
    ) -> Served {
        Served {
            request_id: self.request_id.to_owned(),
            key_id: self.key.id.clone(),
            tenant_id: self.key.tenant_id.clone(),
            model: view,
            requested: self.requested.to_owned(),
            chain: vec![self.requested.to_owned()],
            attempts,
            started: self.started,
            risk: self.risk,
            replaced_parts: 0,
            prompt_estimate: self.prompt_estimate,
            truncation: None,
            compliance: self.compliance,
            retries,
            in_flight: Some(Arc::new(in_flight)),
            endpoint: self.endpoint,
            admission: self.admission,
        }
    }
}
