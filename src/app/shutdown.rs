//! The order of a clean stop (SIGTERM or Ctrl-C), all within the
//! configured `shutdown_grace_seconds`:
//!
//! 1. stop accepting (the listener closes as the server's token is
//!    cancelled, before this runs);
//! 2. drain: requests in flight get the grace period less a reserve
//!    ([`reserve`]); connections still open then are cut, and a stream cut
//!    that way is charged for what it relayed, as one its caller dropped;
//! 3. wait for the request work left detached (the charges of dropped
//!    streams): every answered request's charge is durable after this;
//! 4. checkpoint the store: the charge journal is applied to redb, durably;
//! 5. stop the loops through the task set's token: the webhook dispatcher
//!    saves the events still queued to the pending outbox (delivered after
//!    the next start), deliveries in flight finish (bounded by their own
//!    timeout), the sweep, the sampler, the admin socket and the trace
//!    exporter end; the task set is waited for;
//! 6. close the store (flushes the writer and empties the journal).

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::AppState;

/// The least time the charges of cut and dropped streams get (step 3),
/// even past the grace period.
const CHARGE_FLOOR: Duration = Duration::from_secs(1);

/// The part of the grace period kept for steps 3 to 6 when requests use
/// the rest: a quarter of it, at most 3 seconds.
pub fn reserve(grace: Duration) -> Duration {
    (grace / 4).min(Duration::from_secs(3))
}

/// Runs steps 2 to 6. `serving` is the accept loop's future (draining
/// once the token is cancelled), `None` when it already ended.
pub async fn run<F>(
    state: &AppState,
    serving: Option<Pin<&mut F>>,
    cut: CancellationToken,
    socket: JoinHandle<()>,
) where
    F: Future<Output = std::io::Result<()>>,
{
    let grace = state.config.shutdown_grace;
    let deadline = Instant::now() + grace;
    let left = || deadline.saturating_duration_since(Instant::now());
    if let Some(mut serving) = serving {
        let drain_until = deadline.checked_sub(reserve(grace)).unwrap_or(deadline);
        let drain = drain_until.saturating_duration_since(Instant::now());
        if tokio::time::timeout(drain, &mut serving).await.is_err() {
            tracing::warn!(
                ?grace,
                "requests still running near the end of the shutdown grace period; cutting them"
            );
            cut.cancel();
            let _ = tokio::time::timeout(left(), &mut serving).await;
        }
    }
    // Charges are owed whatever the grace: at least a moment for them
    // (a grace of 0 cuts every request at once).
    if !state.tasks.drain_detached(left().max(CHARGE_FLOOR)).await {
        tracing::warn!(
            running = state.tasks.detached_running(),
            "detached request work still running at the end of the grace period"
        );
    }
    // An `Immediate` commit: every journaled charge is durable in redb.
    if let Err(e) = state.store.checkpoint().await {
        tracing::error!(error = %e, "the shutdown checkpoint failed; the journal keeps the charges");
    }
    // The exporter stops on its own token after a last flush (bounded).
    let _ = tokio::time::timeout(left(), state.traces.shutdown()).await;
    if !state.tasks.stop_loops(left()).await {
        tracing::warn!("background work still running at the end of the grace period; stopping");
    }
    let _ = tokio::time::timeout(left(), socket).await;
    state.store.close();
    tracing::info!("stopped; every answered write is durable");
}
