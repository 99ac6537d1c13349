//! EU AI Act and GDPR compliance (DESIGN section 5).
//!
//! Every chat request is classified before it goes upstream: prohibited
//! (Article 5), high (Annex III, or Annex I medical devices), limited
//! (Article 50 transparency) or minimal. The classifier is a rule engine
//! whose rules are data (`assets/risk/`, one file per language, replaceable
//! by the operator through `risk_rules_dir`); see [`classifier`] for how a
//! request is read and `docs/compliance.md` for the rule pack format. The
//! optional [`judge`] decides the grey zones.
//!
//! Around it: the [`audit`] log (hash-chained), the [`conversations`] log
//! with its retention, the human-review queue ([`reviews`]), [`incidents`]
//! and the monitoring sampler, the sub-processor [`registry`], [`consents`]
//! and [`erasure`]. Their routes are in `api/compliance.rs`.

pub mod classifier;
pub mod consents;
pub mod conversations;
pub mod erasure;
pub mod incidents;
pub mod judgement;
pub mod registry;
pub mod reviews;
mod scoped;
pub mod stored_responses;

use std::sync::Arc;
use std::time::Duration;

pub use classifier::{Classification, Classifier, Grey, Hit, Level, Source};

use crate::store::{Store, StoreError};

/// Starts the compliance sweep: conversation records (and the responses
/// kept for `previous_response_id`) past their retention are deleted,
/// review items past their time expire, and raw usage records and audit
/// entries past theirs are pruned, once at start and then every `every`,
/// until the task set stops.
pub fn start_sweeper(
    store: Arc<Store>,
    every: Duration,
    retention: crate::billing::retention::Retention,
    tasks: &crate::base::tasks::Tasks,
) {
    let stop = tasks.stop_token();
    tasks.spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            let now = crate::base::time::now_ms();
            match conversations::prune(&store, now).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    records = n,
                    "conversation records past their retention deleted"
                ),
                Err(StoreError::Closed) => return,
                Err(e) => tracing::error!(error = %e, "pruning the conversation log failed"),
            }
            match crate::compliance::stored_responses::prune(&store, now).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    responses = n,
                    "stored responses past their retention deleted"
                ),
                Err(StoreError::Closed) => return,
                Err(e) => tracing::error!(error = %e, "pruning the stored responses failed"),
            }
            match reviews::expire_due(&store, now).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(items = n, "review items expired without a decision"),
                Err(StoreError::Closed) => return,
                Err(e) => tracing::error!(error = %e, "expiring review items failed"),
            }
            match crate::billing::retention::prune(&store, retention, now).await {
                Ok(p) if p == crate::billing::retention::Pruned::default() => {}
                Ok(p) => tracing::info!(
                    usage_records = p.usage_records,
                    audit_entries = p.audit_entries,
                    "raw usage records and audit entries past their retention deleted"
                ),
                Err(StoreError::Closed) => return,
                Err(e) => {
                    tracing::error!(error = %e, "pruning usage records and audit entries failed")
                }
            }
        }
    });
}
