//! [`Gateway`]: the parts the inference pipeline uses, passed in once by
//! the composition root (`crate::app`). Every stage takes `&Gateway` (or
//! the few parts it reads), never the application state: a reader sees in
//! one place what a request may touch, and the pipeline can be built
//! without the HTTP layer.

use std::sync::Arc;
use std::time::Duration;

use crate::auth::keys::Keys;
use crate::billing::ledger::Ledger;
use crate::billing::limits::{ModelLimits, TokenLimiter};
use crate::catalogue::overlay::LiveCatalogue;
use crate::compliance::Classifier;
use crate::compliance::incidents::Sampler;
use crate::events::Events;
use crate::metrics::Metrics;
use crate::providers::Providers;
use crate::store::Store;

/// The inference pipeline's parts. Built once and shared as
/// `Arc<Gateway>`; each field is itself a shared handle, so a stage that
/// outlives the request (a stream's charge) clones only what it keeps.
pub struct Gateway {
    /// Reads of tenants, consents, the sub-processor registry, stored
    /// responses and day counters; the charge's journal and writer.
    pub store: Arc<Store>,
    /// The configuration's models with the dashboard's edits merged over
    /// them; swapped whole on each edit.
    pub catalogue: Arc<LiveCatalogue>,
    /// Keys' consumption, applied by each charge.
    pub keys: Keys,
    /// What admission reads and reserves: keys' cycles, wallets, day
    /// counters and the credits requests in flight reserved.
    pub ledger: Arc<Ledger>,
    /// The upstream clients, one per wire format.
    pub providers: Providers,
    /// Deployment health and load, for choosing a model's deployment.
    pub router: Arc<crate::routing::Router>,
    /// Models' own request and token limits, across all keys.
    pub model_limits: Arc<ModelLimits>,
    /// Keys' tokens per minute (`tpmLimit`), per allowance.
    pub key_tokens: Arc<TokenLimiter>,
    /// The risk rules (the judge is asked through `providers`).
    pub classifier: Arc<Classifier>,
    /// Incident sampling of refusals and answers.
    pub sampler: Sampler,
    pub events: Events,
    pub metrics: Arc<Metrics>,
    /// The task set the charges of abandoned streams are detached on
    /// (shutdown waits for them).
    pub tasks: crate::base::tasks::Tasks,
    pub settings: Settings,
}

/// The few configuration values the pipeline reads itself.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The free tier's multimodal requests per UTC day.
    pub free_multimodal_per_day: u32,
    /// How long the risk judge may take before the rules' result stands.
    pub judge_timeout: Duration,
}

impl Gateway {
    /// What the risk judge uses of the gateway.
    pub(crate) fn judge(&self) -> crate::gateway::judge::JudgeParts<'_> {
        crate::gateway::judge::JudgeParts {
            catalogue: &self.catalogue,
            providers: &self.providers,
            metrics: &self.metrics,
            timeout: self.settings.judge_timeout,
        }
    }
}
