//! The writer's batches: each applied to the open write transaction,
//! charges answered at once, the transaction committed when a batch or its
//! deadline asks (see the writer's module doc for why that is safe).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use redb::{Database, Durability, WriteTransaction};

use super::super::StoreError;
use super::super::handover::Meeting;
use super::super::journal;
use super::super::opened::Tables;
use super::super::tables::META;
use super::{Again, COMMIT_DELAY, Job, Kind, MAX_OPEN, Sequencer, WriterStats};

/// A write transaction batches were applied to, not yet committed.
pub(super) struct Open {
    txn: WriteTransaction,
    /// The charges applied and answered in it, in order: applied again if
    /// it must be aborted.
    answered: Vec<Box<dyn Again>>,
    /// Its highest charge sequence, and how many charges it holds.
    watermark: u64,
    charges: u64,
    /// A write that is not a charge: commits `Immediate`, now.
    durable: bool,
    /// A reader waits for it: commits now.
    flush: bool,
    pub(super) since: Instant,
    /// Time spent applying and committing (the metrics' write latency).
    busy: Duration,
}

impl Open {
    fn begin(txn: WriteTransaction) -> Open {
        Open {
            txn,
            answered: Vec::new(),
            watermark: 0,
            charges: 0,
            durable: false,
            flush: false,
            since: Instant::now(),
            busy: Duration::ZERO,
        }
    }
}

/// One job of a batch; a charge has its sequence and its meeting with the
/// journal.
struct Entry {
    job: Box<dyn Job>,
    charge: Option<(u64, Arc<Meeting>)>,
}

/// Applies a batch to the open transaction and answers its charges; the
/// other jobs are answered after the commit they ask for. An empty batch
/// is a checkpoint.
pub(super) fn run_batch(
    db: &Database,
    batch: Vec<Box<dyn Job>>,
    stats: &WriterStats,
    seq: &mut Sequencer,
) {
    if let Some(error) = &seq.stopped {
        for job in batch {
            job.answer(Err(error.clone()));
        }
        return;
    }
    let mut entries = take_charges(batch, seq);
    let size = entries.len();
    match apply(db, &mut entries, seq) {
        Ok(()) => {
            stats.jobs.fetch_add(size as u64, Ordering::Relaxed);
            stats.largest_batch.fetch_max(size, Ordering::Relaxed);
            let others = release_charges(entries, seq);
            let due = seq.open.as_ref().is_some_and(|open| {
                open.durable
                    || open.flush
                    || open.answered.len() >= MAX_OPEN
                    || open.since.elapsed() >= COMMIT_DELAY
            });
            let committed = if due || seq.checkpoint_due() || seq.visibility.has_readers() {
                end_open(stats, seq)
            } else {
                Ok(())
            };
            for job in others {
                job.answer(committed.clone());
            }
        }
        Err(error) => {
            // The batch's partial writes go with the transaction; the
            // charges answered in it before are applied again.
            abort_open(db, stats, seq);
            if size <= 1 {
                if let Some(entry) = entries.pop() {
                    settle(entry, Err(error));
                }
            } else {
                // Isolate the failure: each job alone, in its own transaction.
                for mut entry in entries {
                    let outcome = apply(db, std::slice::from_mut(&mut entry), seq)
                        .and_then(|()| end_open(stats, seq));
                    if outcome.is_err() {
                        abort_open(db, stats, seq);
                    } else {
                        stats.jobs.fetch_add(1, Ordering::Relaxed);
                    }
                    settle(entry, outcome);
                }
            }
        }
    }
    seq.settled = seq.seen;
}

/// Takes each charge's sequence and meeting (its record is with the
/// journal already, which writes and syncs it while the batch is applied).
fn take_charges(batch: Vec<Box<dyn Job>>, seq: &mut Sequencer) -> Vec<Entry> {
    batch
        .into_iter()
        .map(|mut job| {
            let charge = job.take_charge();
            if let Some((sequence, _)) = &charge {
                seq.seen = *sequence;
            }
            Entry { job, charge }
        })
        .collect()
}

/// Applies entries to the open transaction (begun if there is none); on
/// an error the caller aborts it.
fn apply(db: &Database, entries: &mut [Entry], seq: &mut Sequencer) -> Result<(), StoreError> {
    let flush_only = entries.iter().all(|e| e.job.kind() == Kind::Flush);
    if seq.open.is_none() {
        if flush_only && !entries.is_empty() {
            return Ok(()); // nothing waits for a commit
        }
        seq.open = Some(Open::begin(db.begin_write()?));
    }
    let open = seq.open.as_mut().expect("opened above");
    let started = Instant::now();
    // An empty batch is the closing checkpoint.
    open.durable |= entries.is_empty();
    // Closed at the end of the batch, before any commit.
    let tables = Tables::new(&open.txn);
    for entry in entries.iter_mut() {
        entry.job.apply(&tables)?;
        match (entry.job.kind(), &entry.charge) {
            (Kind::Charge, Some((sequence, _))) => {
                open.watermark = open.watermark.max(*sequence);
                open.charges += 1;
            }
            (Kind::Flush, _) => open.flush = true,
            _ => open.durable = true,
        }
    }
    open.busy += started.elapsed();
    Ok(())
}

/// Answers an applied batch's charges (each once its record is durable),
/// keeping their work in the open transaction; returns the other jobs,
/// answered after the commit.
fn release_charges(entries: Vec<Entry>, seq: &mut Sequencer) -> Vec<Box<dyn Job>> {
    let mut others = Vec::new();
    let Some(open) = seq.open.as_mut() else {
        // Flushes with nothing to commit.
        return entries.into_iter().map(|e| e.job).collect();
    };
    if entries.iter().any(|e| e.charge.is_some()) {
        // Charges are durable by their record: answered now, readers held
        // until the commit.
        seq.visibility.stage();
    }
    for entry in entries {
        match entry.charge {
            Some((_, meeting)) => {
                let (again, answer) = entry.job.split();
                open.answered.push(again);
                meeting.applied(answer, Ok(()));
            }
            None => others.push(entry.job),
        }
    }
    others
}

/// Answers one job of an isolated batch, after its own commit.
fn settle(entry: Entry, outcome: Result<(), StoreError>) {
    match entry.charge {
        Some((_, meeting)) => meeting.applied(entry.job, outcome),
        None => entry.job.answer(outcome),
    }
}

/// Commits the open transaction, if any: `Immediate` when it holds a write
/// that is not a charge, or a checkpoint is due (see the module's argument),
/// else `None`. A failure after charges were answered stops the writer.
pub(super) fn end_open(stats: &WriterStats, seq: &mut Sequencer) -> Result<(), StoreError> {
    let Some(open) = seq.open.take() else {
        return Ok(());
    };
    let answered = !open.answered.is_empty();
    let outcome = commit(open, stats, seq);
    if answered {
        seq.visibility.settle();
        if let Err(error) = &outcome {
            tracing::error!(%error, "committing answered charges failed; the store stops writing until a restart replays the journal");
            seq.stopped = Some(error.clone());
        }
    }
    outcome
}

fn commit(mut open: Open, stats: &WriterStats, seq: &mut Sequencer) -> Result<(), StoreError> {
    let started = Instant::now();
    let durable = open.durable || seq.checkpoint_due();
    if !durable {
        open.txn
            .set_durability(Durability::None)
            .map_err(|e| StoreError::Database(e.to_string()))?;
    }
    let watermark = open.watermark.max(seq.settled);
    if watermark > seq.applied {
        open.txn.open_table(META)?.insert(
            journal::META_APPLIED_SEQ,
            watermark.to_be_bytes().as_slice(),
        )?;
    }
    let charges = open.charges;
    open.txn.commit()?;
    stats.commits.fetch_add(1, Ordering::Relaxed);
    seq.applied = seq.applied.max(watermark);
    if durable {
        stats.durable_commits.fetch_add(1, Ordering::Relaxed);
        seq.pending = 0;
        seq.since = Instant::now();
        // After the records of every batch so far: the journal is past them.
        seq.journal.checkpoint(seq.applied);
    } else {
        seq.pending += charges;
    }
    stats.unflushed.store(seq.pending, Ordering::Relaxed);
    if let Some(observe) = stats.commit_observer.get() {
        observe(open.busy + started.elapsed());
    }
    Ok(())
}

/// Aborts the open transaction (a job of the batch applied to it failed)
/// and applies the charges answered in it again, in a transaction of
/// their own: the state they were applied to is the same, so they write
/// the same. If that fails, the writer stops; the journal has them.
fn abort_open(db: &Database, stats: &WriterStats, seq: &mut Sequencer) {
    let Some(open) = seq.open.take() else { return };
    let Open {
        txn,
        mut answered,
        watermark,
        ..
    } = open;
    let charges = answered.len() as u64;
    stats.reapplied.fetch_add(charges, Ordering::Relaxed);
    drop(txn);
    if answered.is_empty() {
        return;
    }
    let again = db.begin_write().map_err(StoreError::from).and_then(|txn| {
        let tables = Tables::new(&txn);
        for work in answered.iter_mut() {
            work.again(&tables)?;
        }
        drop(tables);
        Ok(txn)
    });
    let outcome = again.and_then(|txn| {
        let open = Open {
            answered,
            watermark,
            charges,
            ..Open::begin(txn)
        };
        seq.open = Some(open);
        end_open(stats, seq)
    });
    if let Err(error) = outcome
        && seq.stopped.is_none()
    {
        tracing::error!(%error, "applying answered charges again failed; the store stops writing until a restart replays the journal");
        seq.visibility.settle();
        seq.stopped = Some(error);
    }
}
