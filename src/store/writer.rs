//! The writer: one thread that owns every write transaction.
//!
//! Callers queue a job and wait; the thread drains the queue, applies a whole
//! batch in one write transaction, commits, and only then answers each
//! caller (group commit).
//!
//! Charges are journaled jobs ([`Writer::write_journaled`]). When their
//! batch is taken, each gets its journal sequence and its record goes to the
//! [`journal`](super::journal) at once; the batch is applied to redb while
//! the journal writes and syncs, and committed with `Durability::None`
//! (visible to every reader, no fsync) together with the highest sequence it
//! settles (the watermark, `META_APPLIED_SEQ`). A charge's caller is
//! answered when both its record is durable and its batch is applied
//! ([`handover::Meeting`](super::handover)), before the commit: readers
//! wait for that commit ([`handover::Visibility`](super::handover)). Every
//! other job, and a periodic checkpoint (every [`CHECKPOINT_EVERY`] or
//! [`CHECKPOINT_RECORDS`] charges), commits with `Durability::Immediate`,
//! which makes every earlier commit durable too, and is answered after it.
//!
//! Why this is as safe as an fsync per charge: redb guarantees that after a
//! crash the file holds exactly the last `Immediate` commit, and with it
//! the watermark W of the charges it includes. Every charge after W was
//! applied by a `None` commit after that point, in sequence order, and no
//! non-journaled write happened between them (that write would have been
//! `Immediate` and moved W). So replaying the journal's records above W in
//! order, through the same function, on the state at W, repeats exactly the
//! writes that were lost; the replay commits the watermark with them, so a
//! second replay finds nothing to do. No charge is answered before its
//! record is durable, so losing a record loses no answered charge. A record
//! durable in the journal whose caller never got its answer (a crash
//! between the two) is charged by the replay: a request may be charged
//! that its client did not see answered, never the reverse. A charge made
//! durable by redb before its record (an `Immediate` commit of a mixed
//! batch) is simply below W and is never replayed.
//!
//! A job may fail (a name already taken, a record gone). Its partial writes
//! must not reach the others, so a failed batch is aborted and its jobs are
//! re-run one transaction each: the failing job gets its error, the others
//! commit, each answered after its commit. A charge that failed keeps its
//! sequence (its record is in the journal); the watermark passes it, so it
//! is not replayed. Jobs are `FnMut` for that reason.
//!
//! A commit that fails after its charges were answered leaves them durable
//! in the journal only: the writer then stops (every later job gets the
//! error, no checkpoint moves the watermark past them), and the next start
//! replays them.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use std::time::{Duration, Instant};

use redb::{Database, Durability, WriteTransaction};
use tokio::sync::{mpsc, oneshot};

use super::StoreError;
use super::handover::{Answer, Meeting, Visibility};
use super::journal::{self, Append, Journal, JournalStats};
use super::tables::META;

/// Upper bound of jobs in one transaction, so a burst cannot make one
/// caller's answer wait behind an unbounded batch.
const MAX_BATCH: usize = 1024;
/// Bound of the queue: beyond it, callers wait (back-pressure).
const QUEUE_CAPACITY: usize = 16_384;
/// How long charges may stay applied to redb without `Immediate`
/// durability (they are durable in the journal meanwhile). Bounds the
/// journal replayed after a crash and the pages redb cannot reuse yet.
/// `TOLLGATE_JOURNAL_CHECKPOINT_MS` overrides it (docs/storage.md).
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// [`CHECKPOINT_EVERY`], or the operator's override (at least 10 ms).
fn checkpoint_every() -> Duration {
    std::env::var("TOLLGATE_JOURNAL_CHECKPOINT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(CHECKPOINT_EVERY, |ms| Duration::from_millis(ms.max(10)))
}
/// The same bound, in charges.
pub const CHECKPOINT_RECORDS: u64 = 8_192;

trait Job: Answer {
    fn apply(&mut self, txn: &WriteTransaction) -> Result<(), StoreError>;
    /// A charge: its journal record, until handed to the journal.
    fn journaled(&self) -> bool;
    fn take_record(&mut self) -> Vec<u8>;
}

struct TypedJob<T, F> {
    work: F,
    output: Option<T>,
    reply: oneshot::Sender<Result<T, StoreError>>,
    record: Option<Vec<u8>>,
}

impl<T: Send, F: Send> Answer for TypedJob<T, F> {
    fn answer(self: Box<Self>, outcome: Result<(), StoreError>) {
        let this = *self;
        let result = match (outcome, this.output) {
            (Ok(()), Some(output)) => Ok(output),
            (Ok(()), None) => Err(StoreError::Database("job committed without output".into())),
            (Err(e), _) => Err(e),
        };
        // The caller may have gone away; its write is durable regardless.
        let _ = this.reply.send(result);
    }
}

impl<T, F> Job for TypedJob<T, F>
where
    T: Send,
    F: FnMut(&WriteTransaction) -> Result<T, StoreError> + Send,
{
    fn apply(&mut self, txn: &WriteTransaction) -> Result<(), StoreError> {
        self.output = Some((self.work)(txn)?);
        Ok(())
    }

    fn journaled(&self) -> bool {
        self.record.is_some()
    }

    fn take_record(&mut self) -> Vec<u8> {
        self.record.take().unwrap_or_default()
    }
}

/// Counters describing the writer's batching, for benchmarks and metrics.
#[derive(Default)]
pub struct WriterStats {
    pub commits: AtomicU64,
    pub jobs: AtomicU64,
    pub largest_batch: AtomicUsize,
    pub queued: AtomicUsize,
    /// Commits with `Durability::Immediate` (the rest are charges whose
    /// durability is the journal's).
    pub durable_commits: AtomicU64,
    /// Charges committed to redb since its last durable commit.
    pub unflushed: AtomicU64,
    /// The journal's group commit.
    pub journal: Arc<JournalStats>,
    /// Told the duration of every write transaction, commit and fsync
    /// included (the metrics' store write latency). Set once by whoever
    /// measures; the store does not know the metrics.
    pub commit_observer: std::sync::OnceLock<Box<dyn Fn(std::time::Duration) + Send + Sync>>,
}

impl std::fmt::Debug for WriterStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriterStats")
            .field("commits", &self.commits)
            .field("jobs", &self.jobs)
            .field("largest_batch", &self.largest_batch)
            .field("queued", &self.queued)
            .field("durable_commits", &self.durable_commits)
            .field("journal", &self.journal)
            .finish_non_exhaustive()
    }
}

pub struct Writer {
    queue: Mutex<Option<mpsc::Sender<Box<dyn Job>>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Asks for a checkpoint when charges wait for one and nothing else
    /// comes; stops when its channel closes.
    ticker: Mutex<Option<(std::sync::mpsc::Sender<()>, JoinHandle<()>)>>,
    /// Charges answered before their commit, for readers to wait on.
    visibility: Arc<Visibility>,
    pub stats: Arc<WriterStats>,
}

/// The writer thread's view of the journal: the next sequence to give and
/// what is applied but not yet durable in redb.
struct Sequencer {
    journal: Journal,
    next_seq: u64,
    /// The watermark committed to redb, durable or not.
    applied: u64,
    /// Every sequence up to this one is applied or failed: the watermark
    /// the next commit may write.
    settled: u64,
    /// Charges committed with `Durability::None` since the last checkpoint.
    pending: u64,
    since: Instant,
    every: Duration,
    visibility: Arc<Visibility>,
    /// Set by a commit that failed after its charges were answered: the
    /// writer refuses everything after it (see the module's last note).
    stopped: Option<StoreError>,
}

impl Sequencer {
    fn checkpoint_due(&self) -> bool {
        self.pending > 0
            && (self.pending >= CHECKPOINT_RECORDS || self.since.elapsed() >= self.every)
    }
}

impl Writer {
    /// Starts the writer; journaled jobs get sequences from `next_seq` on,
    /// their records written to the journal in `journal_dir`.
    pub fn start(
        db: Arc<Database>,
        journal_dir: &std::path::Path,
        next_seq: u64,
    ) -> Result<Writer, StoreError> {
        let (queue, mut jobs) = mpsc::channel::<Box<dyn Job>>(QUEUE_CAPACITY);
        let stats = Arc::new(WriterStats::default());
        let thread_stats = stats.clone();
        let visibility = Arc::new(Visibility::default());
        let sequencer_every = checkpoint_every();
        let mut sequencer = Sequencer {
            journal: Journal::start(journal_dir, next_seq, stats.journal.clone())?,
            next_seq,
            applied: next_seq - 1,
            settled: next_seq - 1,
            pending: 0,
            since: Instant::now(),
            every: sequencer_every,
            visibility: visibility.clone(),
            stopped: None,
        };
        let thread = std::thread::Builder::new()
            .name("tollgate-writer".into())
            .spawn(move || {
                while let Some(first) = jobs.blocking_recv() {
                    let mut batch = vec![first];
                    while batch.len() < MAX_BATCH {
                        match jobs.try_recv() {
                            Ok(job) => batch.push(job),
                            Err(_) => break,
                        }
                    }
                    thread_stats
                        .queued
                        .fetch_sub(batch.len(), Ordering::Relaxed);
                    run_batch(&db, batch, &thread_stats, &mut sequencer);
                }
                // Closing: make every charge durable in redb, then let the
                // journal answer what it holds and remove what redb covers.
                if sequencer.pending > 0 {
                    run_batch(&db, Vec::new(), &thread_stats, &mut sequencer);
                }
                sequencer.journal.close();
            })
            .map_err(|e| StoreError::Database(format!("spawning the writer thread: {e}")))?;
        let ticker = start_ticker(queue.downgrade(), stats.clone(), sequencer_every);
        Ok(Writer {
            queue: Mutex::new(Some(queue)),
            thread: Mutex::new(Some(thread)),
            ticker: Mutex::new(Some(ticker)),
            visibility,
            stats,
        })
    }

    /// Returns once every charge answered so far is committed to redb, so
    /// that a read started now sees it.
    pub fn wait_visible(&self) {
        self.visibility.wait();
    }

    /// Queues `work` and waits until its transaction is durable.
    pub async fn write<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnMut(&WriteTransaction) -> Result<T, StoreError> + Send + 'static,
    {
        self.submit(None, work).await
    }

    /// Queues a charge: `work` applies it, `record` is what the journal
    /// keeps to apply it again after a crash (the same `work`, rebuilt from
    /// the record, must write the same). Returns once the record is durable.
    pub async fn write_journaled<T, F>(&self, record: Vec<u8>, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnMut(&WriteTransaction) -> Result<T, StoreError> + Send + 'static,
    {
        self.submit(Some(record), work).await
    }

    async fn submit<T, F>(&self, record: Option<Vec<u8>>, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnMut(&WriteTransaction) -> Result<T, StoreError> + Send + 'static,
    {
        let queue = self
            .queue
            .lock()
            .expect("writer queue lock")
            .clone()
            .ok_or(StoreError::Closed)?;
        let (reply, answer) = oneshot::channel();
        self.stats.queued.fetch_add(1, Ordering::Relaxed);
        let job = Box::new(TypedJob {
            work,
            output: None,
            reply,
            record,
        });
        if queue.send(job).await.is_err() {
            self.stats.queued.fetch_sub(1, Ordering::Relaxed);
            return Err(StoreError::Closed);
        }
        answer.await.map_err(|_| StoreError::Closed)?
    }

    /// Stops accepting jobs, lets the thread apply what is queued, and waits
    /// for it: after this returns every accepted write is durable.
    pub fn close(&self) {
        if let Some((stop, ticker)) = self.ticker.lock().expect("writer ticker lock").take() {
            drop(stop);
            let _ = ticker.join();
        }
        self.queue.lock().expect("writer queue lock").take();
        let thread = self.thread.lock().expect("writer thread lock").take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.close();
    }
}

/// Sends an empty job now and then, so charges applied without
/// `Immediate` durability get their checkpoint even when traffic stops.
fn start_ticker(
    queue: mpsc::WeakSender<Box<dyn Job>>,
    stats: Arc<WriterStats>,
    every: Duration,
) -> (std::sync::mpsc::Sender<()>, JoinHandle<()>) {
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("tollgate-checkpoint".into())
        .spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every)
            {
                if stats.unflushed.load(Ordering::Relaxed) == 0 {
                    continue;
                }
                let Some(queue) = queue.upgrade() else { break };
                let (reply, _) = oneshot::channel::<Result<(), StoreError>>();
                let job: Box<dyn Job> = Box::new(TypedJob {
                    work: |_: &WriteTransaction| Ok(()),
                    output: None,
                    reply,
                    // Not a charge: its batch commits `Immediate`.
                    record: None,
                });
                // Counted like any job: the writer takes a batch's length
                // off `queued`, so an uncounted job would wrap it below 0.
                stats.queued.fetch_add(1, Ordering::Relaxed);
                // A full queue means traffic, which checkpoints by itself.
                if queue.try_send(job).is_err() {
                    stats.queued.fetch_sub(1, Ordering::Relaxed);
                }
            }
        })
        .expect("spawning the checkpoint thread");
    (stop, thread)
}

/// One job of a batch; a charge has its sequence and its meeting with the
/// journal.
struct Entry {
    job: Box<dyn Job>,
    charge: Option<(u64, Arc<Meeting>)>,
}

/// Applies a batch and answers its jobs; an empty batch is a checkpoint.
fn run_batch(db: &Database, batch: Vec<Box<dyn Job>>, stats: &WriterStats, seq: &mut Sequencer) {
    if let Some(error) = &seq.stopped {
        for job in batch {
            job.answer(Err(error.clone()));
        }
        return;
    }
    let mut entries = to_journal(batch, seq);
    let size = entries.len();
    match stage(db, &mut entries, seq) {
        Ok(staged) => {
            stats.commits.fetch_add(1, Ordering::Relaxed);
            stats.jobs.fetch_add(size as u64, Ordering::Relaxed);
            stats.largest_batch.fetch_max(size, Ordering::Relaxed);
            // Charges are durable by their record: answered now, readers
            // held until the commit.
            seq.visibility.stage();
            let others = release_charges(entries);
            let committed = commit(staged, stats, seq);
            seq.visibility.settle();
            if let Err(error) = &committed {
                tracing::error!(%error, "committing answered charges failed; the store stops writing until a restart replays the journal");
                seq.stopped = Some(error.clone());
            }
            for job in others {
                job.answer(committed.clone());
            }
        }
        Err(error) if size <= 1 => {
            if let Some(entry) = entries.pop() {
                settle(entry, Err(error));
            }
        }
        Err(_) => {
            // Isolate the failure: each job alone, in its own transaction.
            for mut entry in entries {
                let outcome = stage(db, std::slice::from_mut(&mut entry), seq)
                    .and_then(|staged| commit(staged, stats, seq));
                if outcome.is_ok() {
                    stats.commits.fetch_add(1, Ordering::Relaxed);
                    stats.jobs.fetch_add(1, Ordering::Relaxed);
                }
                settle(entry, outcome);
            }
        }
    }
    seq.settled = seq.next_seq - 1;
}

/// Gives each charge its sequence and hands the records to the journal,
/// which writes and syncs them while the batch is applied.
fn to_journal(batch: Vec<Box<dyn Job>>, seq: &mut Sequencer) -> Vec<Entry> {
    let mut records = Vec::new();
    let entries = batch
        .into_iter()
        .map(|mut job| {
            if !job.journaled() {
                return Entry { job, charge: None };
            }
            let meeting = Arc::new(Meeting::default());
            let met = meeting.clone();
            records.push(Append {
                seq: seq.next_seq,
                payload: job.take_record(),
                done: Box::new(move |outcome| met.durable(outcome)),
            });
            seq.next_seq += 1;
            Entry {
                job,
                charge: Some((seq.next_seq - 1, meeting)),
            }
        })
        .collect();
    seq.journal.append(records);
    entries
}

/// Answers an applied batch's charges (each once its record is durable);
/// returns the other jobs, answered after the commit.
fn release_charges(entries: Vec<Entry>) -> Vec<Box<dyn Job>> {
    let mut others = Vec::new();
    for entry in entries {
        match entry.charge {
            Some((_, meeting)) => meeting.applied(entry.job, Ok(())),
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

/// A write transaction with its batch applied, not yet committed.
struct Staged {
    txn: WriteTransaction,
    durable: bool,
    charges: u64,
    watermark: u64,
    started: Instant,
}

fn stage(db: &Database, entries: &mut [Entry], seq: &Sequencer) -> Result<Staged, StoreError> {
    let started = Instant::now();
    let charges = entries.iter().filter(|e| e.charge.is_some()).count() as u64;
    // `None` only for a batch of charges only, and not when a checkpoint is
    // due: see the module's argument.
    let durable = charges < entries.len() as u64 || entries.is_empty() || seq.checkpoint_due();
    let mut txn = db.begin_write()?;
    if !durable {
        txn.set_durability(Durability::None)
            .map_err(|e| StoreError::Database(e.to_string()))?;
    }
    for entry in entries.iter_mut() {
        // Dropping `txn` on error aborts it: nothing of the batch is written.
        entry.job.apply(&txn)?;
    }
    let highest = entries
        .iter()
        .filter_map(|e| e.charge.as_ref().map(|c| c.0))
        .max();
    let watermark = highest.unwrap_or(0).max(seq.settled);
    if watermark > seq.applied {
        txn.open_table(META)?.insert(
            journal::META_APPLIED_SEQ,
            watermark.to_be_bytes().as_slice(),
        )?;
    }
    Ok(Staged {
        txn,
        durable,
        charges,
        watermark,
        started,
    })
}

fn commit(staged: Staged, stats: &WriterStats, seq: &mut Sequencer) -> Result<(), StoreError> {
    staged.txn.commit()?;
    seq.applied = seq.applied.max(staged.watermark);
    if staged.durable {
        stats.durable_commits.fetch_add(1, Ordering::Relaxed);
        seq.pending = 0;
        seq.since = Instant::now();
        // After the records of every batch so far: the journal is past them.
        seq.journal.checkpoint(seq.applied);
    } else {
        seq.pending += staged.charges;
    }
    stats.unflushed.store(seq.pending, Ordering::Relaxed);
    if let Some(observe) = stats.commit_observer.get() {
        observe(staged.started.elapsed());
    }
    Ok(())
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
