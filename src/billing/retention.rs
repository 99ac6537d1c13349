//! Retention of raw records (issue 19, item 6): raw usage records older
//! than `usage_retention_days` and audit entries older than
//! `audit_retention_days` are deleted by the compliance sweep, in bounded
//! batches (one short write transaction each, so charges queued behind
//! the writer wait for one batch at most). Pruning starts at UTC day
//! boundaries: a day's raw records go all at once, and its rollup then
//! stands for it in every read. Rollups are never pruned.

use crate::audit;
use crate::billing::rollups::{self, DAY_MS};
use crate::store::{Store, StoreError};

/// Rows deleted per transaction.
pub const BATCH: usize = 2_000;

/// How long raw records are kept.
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    pub usage_days: u32,
    pub audit_days: u32,
}

/// What one pass deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    pub usage_records: usize,
    pub audit_entries: usize,
}

/// The start of the UTC day `days` days before `now`'s day.
fn cutoff(now: i64, days: u32) -> i64 {
    (now.div_euclid(DAY_MS) - i64::from(days)) * DAY_MS
}

/// Deletes every raw record past its retention as of `now`, batch by
/// batch.
pub async fn prune(store: &Store, retention: Retention, now: i64) -> Result<Pruned, StoreError> {
    let usage_before = cutoff(now, retention.usage_days);
    let usage_records =
        in_batches(move || rollups::prune_usage(store, usage_before, BATCH)).await?;
    let audit_before = cutoff(now, retention.audit_days);
    let audit_entries = in_batches(move || audit::prune(store, audit_before, BATCH)).await?;
    Ok(Pruned {
        usage_records,
        audit_entries,
    })
}

/// Runs `batch` (one transaction deleting at most [`BATCH`] rows) until a
/// batch comes back short; the rows deleted in all.
async fn in_batches<F: Future<Output = Result<usize, StoreError>>>(
    mut batch: impl FnMut() -> F,
) -> Result<usize, StoreError> {
    let mut total = 0;
    loop {
        let n = batch().await?;
        total += n;
        if n < BATCH {
            return Ok(total);
        }
    }
}
