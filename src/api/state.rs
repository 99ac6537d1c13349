//! The application state of the HTTP layer: built once by the composition
//! root (`crate::app`), handed to the router, shared by every handler.
//! Nothing below `api` names it: the domain gets its parts explicitly.

use std::sync::Arc;

use crate::config::Config;
use crate::gateway::Gateway;

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

/// What a handler may reach, built once by the composition root (`app`):
/// the gateway, and what handlers alone need. The gateway's parts (store,
/// catalogue, keys, ledger, providers, router, limits, classifier, sampler,
/// events, metrics) are read through it: `Shared` derefs to the
/// [`Gateway`], so a handler writes `state.store` for `state.gateway.store`
/// and each part exists once.
pub struct Shared {
    /// The inference pipeline, with its parts: every `/v1` handler calls
    /// it.
    pub gateway: Arc<Gateway>,
    pub config: Arc<Config>,
    /// Keys' requests per minute (the `/v1` handlers' rate headers).
    pub limiter: Arc<crate::billing::limits::RateLimiter>,
    /// Failed sign-ins, per account and address (in memory).
    pub sign_in_throttle: Arc<crate::auth::throttle::SignInThrottle>,
    /// OpenTelemetry spans and their exporter (off without `otlp_endpoint`).
    pub traces: crate::traces::Traces,
    /// Unauthenticated refusals, logged once per source and minute.
    pub refusals: Arc<crate::auth::refusals::RefusalLog>,
    /// Single sign-on, when `[sso]` is configured.
    pub sso: Option<Arc<crate::sso::Sso>>,
    /// Unix seconds at start, for `created` fields of catalogue views.
    pub started_at: i64,
}

impl std::ops::Deref for Shared {
    type Target = Gateway;

    fn deref(&self) -> &Gateway {
        &self.gateway
    }
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
