//! The application state of the HTTP layer: built once by the composition
//! root (`crate::app`), handed to the router, shared by every handler.
//! Nothing below `api` names it: the domain gets its parts explicitly.

use std::sync::Arc;

use crate::auth::keys::Keys;
use crate::catalogue::overlay::LiveCatalogue;
use crate::config::Config;
use crate::store::Store;

/// What the HTTP layer's handlers and middleware are given. Axum clones
/// the state for every handler and every `from_fn_with_state` layer of
/// every request, so it is one `Arc`: a clone is one atomic increment, not
/// one per part (there are twenty). Fields are read through `Deref`.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    pub fn new(shared: Shared) -> AppState {
        AppState(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The parts a handler may reach, built once by the composition root
/// (`app`). The gateway's own parts are shared handles (`Arc`s) to the same
/// values the [`crate::gateway::Gateway`] holds.
pub struct Shared {
    /// The inference pipeline, with its parts: every `/v1` handler calls
    /// it.
    pub gateway: Arc<crate::gateway::Gateway>,
    pub config: Arc<Config>,
    pub store: Arc<Store>,
    /// The configuration's models with the dashboard's edits merged over
    /// them; swapped whole on each edit.
    pub catalogue: Arc<LiveCatalogue>,
    pub keys: Keys,
    pub providers: crate::providers::Providers,
    pub classifier: Arc<crate::compliance::Classifier>,
    pub limiter: Arc<crate::billing::limits::RateLimiter>,
    /// Failed sign-ins, per account and address (in memory).
    pub sign_in_throttle: Arc<crate::auth::throttle::SignInThrottle>,
    /// Keys' tokens per minute (`tpmLimit`), per allowance.
    pub key_tokens: Arc<crate::billing::limits::TokenLimiter>,
    /// What admission reads: keys' cycles, wallets, day counters and the
    /// credits requests in flight reserved (DESIGN section 4).
    pub ledger: Arc<crate::billing::ledger::Ledger>,
    /// Models' own request and token limits, across all keys.
    pub model_limits: Arc<crate::billing::limits::ModelLimits>,
    /// Deployment health and load, for choosing a model's deployment.
    pub router: Arc<crate::routing::Router>,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// OpenTelemetry spans and their exporter (off without `otlp_endpoint`).
    pub traces: crate::traces::Traces,
    pub events: crate::events::Events,
    pub sampler: crate::compliance::incidents::Sampler,
    /// Unauthenticated refusals, logged once per source and minute.
    pub refusals: Arc<crate::auth::refusals::RefusalLog>,
    /// Single sign-on, when `[sso]` is configured.
    pub sso: Option<Arc<crate::sso::Sso>>,
    /// Unix seconds at start, for `created` fields of catalogue views.
    pub started_at: i64,
}

#[cfg(test)]
mod tests {
    /// Axum clones the state for each handler and each state-taking
    /// middleware of every request: the clone stays one pointer.
    #[test]
    fn the_state_each_request_clones_is_one_pointer() {
        assert_eq!(
            std::mem::size_of::<super::AppState>(),
            std::mem::size_of::<usize>()
        );
    }
}
