//! The writer: one thread that owns every write transaction.
//!
//! Callers queue a job and wait; the thread drains the queue and applies the
//! whole batch to its open write transaction (group commit).
//!
//! Charges are journaled jobs ([`Writer::write_journaled`]). The caller's
//! thread gives each its journal sequence and hands its record to the
//! [`journal`](super::journal) and its job to this thread in one step under
//! one lock ([`Intake`]), so both queues hold charges in sequence order and
//! the journal starts its write without waiting for this thread to wake;
//! the batch is applied to redb while the journal writes and syncs. The
//! open transaction takes the batches that come within [`COMMIT_DELAY`]
//! (at most [`MAX_OPEN`] charges), so that the copy-on-write of the B-tree
//! pages is paid once for all of them, and is committed with
//! `Durability::None` (visible to every reader, no fsync) together with the
//! highest sequence it settles (the watermark, `META_APPLIED_SEQ`). A
//! charge's caller is answered when both its record is durable and its
//! batch is applied
//! ([`handover::Meeting`](super::handover)), before the commit: readers
//! wait for that commit ([`handover::Visibility`](super::handover)), and
//! ask for it at once (a `Flush` job) rather than wait for the delay. Every
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
//! must not reach the others, so the open transaction is aborted with the
//! batch; the charges already answered in it are applied again at once by
//! their own closures, on the same state, in a transaction of their own
//! (`batch::abort_open`), and the failed batch's jobs are re-run one
//! transaction each: the failing job gets its error, the others commit,
//! each answered after its commit. A charge that failed keeps its
//! sequence (its record is in the journal); the watermark passes it, so it
//! is not replayed. Jobs are `FnMut` for that reason.
//!
//! A commit that fails after its charges were answered leaves them durable
//! in the journal only: the writer then stops (every later job gets the
//! error, no checkpoint moves the watermark past them), and the next start
//! replays them. The records of charges refused after that point are in
//! the journal too (their callers handed them over): the replay charges
//! them, as it charges any durable record whose caller heard no answer.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use std::time::{Duration, Instant};

use redb::{Database, WriteTransaction};
use tokio::sync::{mpsc, oneshot};

use super::StoreError;
use super::handover::{Answer, Meeting, Visibility};
use super::journal::{Append, Appender, Journal, JournalStats};
use super::opened::Tables;
use batch::{Open, end_open, run_batch};

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
/// How long answered charges may wait in the open transaction for more
/// before it commits; a read that waits for them asks for the commit at
/// once, so the delay is never a reader's wait. 10 ms rather than 1: at
/// low load each commit then carries several charges instead of one (the
/// writer's CPU per charge fell by about a quarter at c=1,
/// docs/benchmarks.md); the journal holds them meanwhile.
const COMMIT_DELAY: Duration = Duration::from_millis(10);
/// The most charges the open transaction takes before it commits.
const MAX_OPEN: usize = 4_096;

/// What a queued job is, for the writer's commit decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A charge: journaled, answered before its commit.
    Charge,
    /// Any other write: answered after an `Immediate` commit.
    Write,
    /// A reader's request that the open transaction commit now.
    Flush,
}

trait Job: Answer {
    fn apply(&mut self, tables: &Tables<'_>) -> Result<(), StoreError>;
    fn kind(&self) -> Kind;
    /// A charge: its sequence and its meeting with the journal, which
    /// already has its record.
    fn take_charge(&mut self) -> Option<(u64, Arc<Meeting>)>;
    /// An applied charge: what applies it again if its transaction must be
    /// aborted, and what answers its caller.
    fn split(self: Box<Self>) -> (Box<dyn Again>, Box<dyn Answer>);
}

/// An answered charge's work, kept until its transaction commits.
trait Again: Send {
    fn again(&mut self, tables: &Tables<'_>) -> Result<(), StoreError>;
}

/// How a job's work reaches the transaction.
trait Work<T>: Send {
    fn run(&mut self, tables: &Tables<'_>) -> Result<T, StoreError>;
}

/// Work on the raw transaction (every write but a charge).
struct Raw<F>(F);

impl<T, F> Work<T> for Raw<F>
where
    F: FnMut(&WriteTransaction) -> Result<T, StoreError> + Send,
{
    fn run(&mut self, tables: &Tables<'_>) -> Result<T, StoreError> {
        (self.0)(tables.txn())
    }
}

/// A charge's work, on the tables its batch keeps open.
struct Cached<F>(F);

impl<T, F> Work<T> for Cached<F>
where
    F: FnMut(&Tables<'_>) -> Result<T, StoreError> + Send,
{
    fn run(&mut self, tables: &Tables<'_>) -> Result<T, StoreError> {
        (self.0)(tables)
    }
}

struct TypedJob<T, F> {
    work: F,
    output: Option<T>,
    reply: oneshot::Sender<Result<T, StoreError>>,
    charge: Option<(u64, Arc<Meeting>)>,
    kind: Kind,
}

/// The caller's half of a job: its output and where it goes.
struct Reply<T> {
    output: Option<T>,
    reply: oneshot::Sender<Result<T, StoreError>>,
}

impl<T: Send> Answer for Reply<T> {
    fn answer(self: Box<Self>, outcome: Result<(), StoreError>) {
        let result = match (outcome, self.output) {
            (Ok(()), Some(output)) => Ok(output),
            (Ok(()), None) => Err(StoreError::Database("job committed without output".into())),
            (Err(e), _) => Err(e),
        };
        // The caller may have gone away; its write is durable regardless.
        let _ = self.reply.send(result);
    }
}

impl<T: Send, F: Send> Answer for TypedJob<T, F> {
    fn answer(self: Box<Self>, outcome: Result<(), StoreError>) {
        let this = *self;
        Box::new(this.reply()).answer(outcome);
    }
}

impl<T, F> TypedJob<T, F> {
    /// The caller's half alone.
    fn reply(self) -> Reply<T> {
        Reply {
            output: self.output,
            reply: self.reply,
        }
    }
}

struct AgainWork<W, T>(W, std::marker::PhantomData<fn() -> T>);

impl<T, W: Work<T>> Again for AgainWork<W, T> {
    fn again(&mut self, tables: &Tables<'_>) -> Result<(), StoreError> {
        self.0.run(tables).map(|_| ())
    }
}

impl<T, W> Job for TypedJob<T, W>
where
    T: Send + 'static,
    W: Work<T> + 'static,
{
    fn apply(&mut self, tables: &Tables<'_>) -> Result<(), StoreError> {
        self.output = Some(self.work.run(tables)?);
        Ok(())
    }

    fn kind(&self) -> Kind {
        self.kind
    }

    fn take_charge(&mut self) -> Option<(u64, Arc<Meeting>)> {
        self.charge.take()
    }

    fn split(self: Box<Self>) -> (Box<dyn Again>, Box<dyn Answer>) {
        let this = *self;
        let reply = Box::new(Reply {
            output: this.output,
            reply: this.reply,
        });
        (
            Box::new(AgainWork(this.work, std::marker::PhantomData)),
            reply,
        )
    }
}

/// A job that writes nothing: the ticker's checkpoint (`Write`) or a
/// reader's flush.
fn empty_job(kind: Kind) -> Box<dyn Job> {
    let (reply, _) = oneshot::channel::<Result<(), StoreError>>();
    Box::new(TypedJob {
        work: Raw(|_: &WriteTransaction| Ok(())),
        output: None,
        reply,
        charge: None,
        kind,
    })
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
    /// Charges applied again after a later job aborted their open
    /// transaction.
    pub reapplied: AtomicU64,
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
    /// Where charges get their sequence; `None` once closing.
    intake: Mutex<Option<Intake>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Asks for a checkpoint when charges wait for one and nothing else
    /// comes; stops when its channel closes.
    ticker: Mutex<Option<(std::sync::mpsc::Sender<()>, JoinHandle<()>)>>,
    /// Charges answered before their commit, for readers to wait on.
    visibility: Arc<Visibility>,
    pub stats: Arc<WriterStats>,
}

/// Where a charge gets its journal sequence: its record goes to the journal
/// and its job to the writer's queue under this one lock, so that the
/// journal writes and the writer applies charges in the same order (the
/// module's argument needs it) and the journal need not wait for the
/// writer's thread to wake before it writes.
struct Intake {
    next_seq: u64,
    journal: Appender,
}

/// The writer thread's view of the journal: the charges it took and what
/// is applied but not yet durable in redb.
struct Sequencer {
    journal: Journal,
    /// The highest charge sequence the writer has taken from its queue:
    /// every lower one was taken before it (the queue is in sequence order).
    seen: u64,
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
    /// The transaction batches are applied to until it commits.
    open: Option<Open>,
}

impl Sequencer {
    fn checkpoint_due(&self) -> bool {
        self.pending > 0
            && (self.pending >= CHECKPOINT_RECORDS || self.since.elapsed() >= self.every)
    }

    /// When the open transaction must commit even if nothing else comes.
    fn open_until(&self) -> Option<Instant> {
        self.open.as_ref().map(|open| open.since + COMMIT_DELAY)
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
        let (queue, jobs) = mpsc::channel::<Box<dyn Job>>(QUEUE_CAPACITY);
        let stats = Arc::new(WriterStats::default());
        let thread_stats = stats.clone();
        let visibility = Arc::new(Visibility::default());
        let sequencer_every = checkpoint_every();
        let journal = Journal::start(journal_dir, next_seq, stats.journal.clone())?;
        let intake = Intake {
            next_seq,
            journal: journal.appender().ok_or(StoreError::Closed)?,
        };
        let sequencer = Sequencer {
            journal,
            seen: next_seq - 1,
            applied: next_seq - 1,
            settled: next_seq - 1,
            pending: 0,
            since: Instant::now(),
            every: sequencer_every,
            visibility: visibility.clone(),
            stopped: None,
            open: None,
        };
        // The clock of the open transaction's deadline.
        let clock = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(|e| StoreError::Database(format!("the writer's clock: {e}")))?;
        let thread = std::thread::Builder::new()
            .name("tollgate-writer".into())
            .spawn(move || run(&db, jobs, &thread_stats, sequencer, &clock))
            .map_err(|e| StoreError::Database(format!("spawning the writer thread: {e}")))?;
        let ticker = start_ticker(queue.downgrade(), stats.clone(), sequencer_every);
        Ok(Writer {
            queue: Mutex::new(Some(queue)),
            intake: Mutex::new(Some(intake)),
            thread: Mutex::new(Some(thread)),
            ticker: Mutex::new(Some(ticker)),
            visibility,
            stats,
        })
    }

    /// Returns once every charge answered so far is committed to redb, so
    /// that a read started now sees it (asking the writer to commit at once
    /// if it holds some in its open transaction).
    pub fn wait_visible(&self) {
        if self.visibility.is_settled() {
            return;
        }
        let queue = self.queue.lock().expect("writer queue lock").clone();
        if let Some(queue) = queue {
            self.stats.queued.fetch_add(1, Ordering::Relaxed);
            // A full queue means the writer is busy and commits soon.
            if queue.try_send(empty_job(Kind::Flush)).is_err() {
                self.stats.queued.fetch_sub(1, Ordering::Relaxed);
            }
        }
        self.visibility.wait();
    }

    /// Queues `work` and waits until its transaction is durable.
    pub async fn write<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnMut(&WriteTransaction) -> Result<T, StoreError> + Send + 'static,
    {
        self.submit(None, Raw(work)).await
    }

    /// Queues a charge: `work` applies it, `record` is what the journal
    /// keeps to apply it again after a crash (the same `work`, rebuilt from
    /// the record, must write the same). Returns once the record is durable.
    /// `work` gets the tables its batch keeps open ([`Tables`]).
    pub async fn write_journaled<T, F>(&self, record: Vec<u8>, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnMut(&Tables<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.submit(Some(record), Cached(work)).await
    }

    async fn submit<T, W>(&self, record: Option<Vec<u8>>, work: W) -> Result<T, StoreError>
    where
        T: Send + 'static,
        W: Work<T> + 'static,
    {
        let queue = self
            .queue
            .lock()
            .expect("writer queue lock")
            .clone()
            .ok_or(StoreError::Closed)?;
        let (reply, answer) = oneshot::channel();
        let Ok(permit) = queue.reserve().await else {
            return Err(StoreError::Closed);
        };
        let job = TypedJob {
            work,
            output: None,
            reply,
            charge: None,
            kind: Kind::Write,
        };
        match record {
            None => {
                self.stats.queued.fetch_add(1, Ordering::Relaxed);
                permit.send(Box::new(job));
            }
            Some(record) => {
                let mut intake = self.intake.lock().expect("writer intake lock");
                let intake = intake.as_mut().ok_or(StoreError::Closed)?;
                let seq = intake.next_seq;
                intake.next_seq += 1;
                let meeting = Arc::new(Meeting::default());
                let met = meeting.clone();
                // The journal first: its write is what the caller waits for.
                intake.journal.append(vec![Append {
                    seq,
                    payload: record,
                    done: Box::new(move |outcome| met.durable(outcome)),
                }]);
                self.stats.queued.fetch_add(1, Ordering::Relaxed);
                permit.send(Box::new(TypedJob {
                    charge: Some((seq, meeting)),
                    kind: Kind::Charge,
                    ..job
                }));
            }
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
        // No charge is sequenced after this; the journal's thread ends
        // once the writer's own handle goes too.
        self.intake.lock().expect("writer intake lock").take();
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

/// The writer thread: takes what is queued as one batch, applies it to the
/// open transaction, and commits that when a batch asks for it or its
/// deadline passes with nothing queued.
fn run(
    db: &Database,
    mut jobs: mpsc::Receiver<Box<dyn Job>>,
    stats: &WriterStats,
    mut seq: Sequencer,
    clock: &tokio::runtime::Runtime,
) {
    loop {
        let first = match seq.open_until() {
            None => jobs.blocking_recv(),
            Some(until) => match jobs.try_recv() {
                Ok(job) => Some(job),
                Err(mpsc::error::TryRecvError::Disconnected) => None,
                Err(mpsc::error::TryRecvError::Empty) => {
                    let until = tokio::time::Instant::from_std(until);
                    // The timer is made inside the clock's context.
                    let next = async { tokio::time::timeout_at(until, jobs.recv()).await };
                    match clock.block_on(next) {
                        Ok(job) => job,
                        Err(_) => {
                            // A failure is logged and stops the writer.
                            let _ = end_open(stats, &mut seq);
                            continue;
                        }
                    }
                }
            },
        };
        let Some(first) = first else { break };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        stats.queued.fetch_sub(batch.len(), Ordering::Relaxed);
        run_batch(db, batch, stats, &mut seq);
    }
    // Closing: make every charge durable in redb, then let the journal
    // answer what it holds and remove what redb covers.
    let _ = end_open(stats, &mut seq);
    if seq.pending > 0 {
        run_batch(db, Vec::new(), stats, &mut seq);
    }
    seq.journal.close();
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
                // Counted like any job: the writer takes a batch's length
                // off `queued`, so an uncounted job would wrap it below 0.
                stats.queued.fetch_add(1, Ordering::Relaxed);
                // Not a charge: its batch commits `Immediate`. A full queue
                // means traffic, which checkpoints by itself.
                if queue.try_send(empty_job(Kind::Write)).is_err() {
                    stats.queued.fetch_sub(1, Ordering::Relaxed);
                }
            }
        })
        .expect("spawning the checkpoint thread");
    (stop, thread)
}

#[path = "writer_batch.rs"]
mod batch;

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
