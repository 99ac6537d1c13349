//! The writer: one thread that owns every write transaction.
//!
//! Callers queue a job and wait; the thread drains the queue, applies a whole
//! batch in one write transaction, commits, and only then answers each
//! caller (group commit).
//!
//! Charges are journaled jobs ([`Writer::write_journaled`]): their batch is
//! committed with `Durability::None` (visible to every reader at once, no
//! fsync) together with the highest journal sequence it contains (the
//! watermark, `META_APPLIED_SEQ`); their records then go to the
//! [`journal`](super::journal), and each caller is answered once its record
//! is durable there. Every other job, and a periodic checkpoint (every
//! [`CHECKPOINT_EVERY`] or [`CHECKPOINT_RECORDS`] charges), commits with
//! `Durability::Immediate`, which makes every earlier commit durable too.
//!
//! Why this is as safe as an fsync per charge: redb guarantees that after a
//! crash the file holds exactly the last `Immediate` commit, and with it
//! the watermark W of the charges it includes. Every charge after W was
//! applied by a `None` commit after that point, in sequence order, and no
//! non-journaled write happened between them (that write would have been
//! `Immediate` and moved W). So replaying the journal's records above W in
//! order, through the same function, on the state at W, repeats exactly the
//! writes that were lost; the replay commits the watermark with them, so a
//! second replay finds nothing to do. A record that never reached the
//! journal was never answered: losing it loses no answered charge. A charge
//! made durable by redb before its record (an `Immediate` commit of a mixed
//! batch) is simply below W and is never replayed.
//!
//! A job may fail (a name already taken, a record gone). Its partial writes
//! must not reach the others, so a failed batch is aborted and its jobs are
//! re-run one transaction each: the failing job gets its error, the others
//! commit. Jobs are `FnMut` for that reason.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use std::time::{Duration, Instant};

use redb::{Database, Durability, WriteTransaction};
use tokio::sync::{mpsc, oneshot};

use super::StoreError;
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

trait Job: Send {
    fn apply(&mut self, txn: &WriteTransaction) -> Result<(), StoreError>;
    fn finish(self: Box<Self>, outcome: Result<(), StoreError>);
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

impl<T, F> Job for TypedJob<T, F>
where
    T: Send,
    F: FnMut(&WriteTransaction) -> Result<T, StoreError> + Send,
{
    fn apply(&mut self, txn: &WriteTransaction) -> Result<(), StoreError> {
        self.output = Some((self.work)(txn)?);
        Ok(())
    }

    fn finish(self: Box<Self>, outcome: Result<(), StoreError>) {
        let this = *self;
        let result = match (outcome, this.output) {
            (Ok(()), Some(output)) => Ok(output),
            (Ok(()), None) => Err(StoreError::Database("job committed without output".into())),
            (Err(e), _) => Err(e),
        };
        // The caller may have gone away; its write is durable regardless.
        let _ = this.reply.send(result);
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
    pub stats: Arc<WriterStats>,
}

/// The writer thread's view of the journal: the next sequence to give and
/// what is applied but not yet durable in redb.
struct Sequencer {
    journal: Journal,
    next_seq: u64,
    /// The highest sequence committed to redb, durable or not.
    applied: u64,
    /// Charges committed with `Durability::None` since the last checkpoint.
    pending: u64,
    since: Instant,
    every: Duration,
    /// A checkpoint just committed, to announce to the journal.
    checkpoint: Option<u64>,
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
        let sequencer_every = checkpoint_every();
        let mut sequencer = Sequencer {
            journal: Journal::start(journal_dir, next_seq, stats.journal.clone())?,
            next_seq,
            applied: next_seq - 1,
            pending: 0,
            since: Instant::now(),
            every: checkpoint_every(),
            checkpoint: None,
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
            stats,
        })
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

/// Applies a batch and answers its jobs; an empty batch is a checkpoint.
fn run_batch(
    db: &Database,
    mut batch: Vec<Box<dyn Job>>,
    stats: &WriterStats,
    seq: &mut Sequencer,
) {
    let size = batch.len();
    match apply(db, &mut batch, stats, seq) {
        Ok(()) => {
            stats.commits.fetch_add(1, Ordering::Relaxed);
            stats.jobs.fetch_add(size as u64, Ordering::Relaxed);
            stats.largest_batch.fetch_max(size, Ordering::Relaxed);
            finish(batch, seq);
        }
        Err(error) if size <= 1 => {
            if let Some(job) = batch.pop() {
                job.finish(Err(error));
            }
        }
        Err(_) => {
            // Isolate the failure: each job alone, in its own transaction.
            for job in batch {
                let mut single = vec![job];
                match apply(db, &mut single, stats, seq) {
                    Ok(()) => {
                        stats.commits.fetch_add(1, Ordering::Relaxed);
                        stats.jobs.fetch_add(1, Ordering::Relaxed);
                        finish(single, seq);
                    }
                    Err(e) => single.pop().expect("one job").finish(Err(e)),
                }
            }
        }
    }
}

/// Answers a committed batch: plain jobs now, charges once their journal
/// record is durable. Their sequences are the ones `apply` gave, in order.
fn finish(batch: Vec<Box<dyn Job>>, seq: &mut Sequencer) {
    let mut records = Vec::new();
    for mut job in batch {
        if job.journaled() {
            let payload = job.take_record();
            records.push(Append {
                seq: seq.next_seq,
                payload,
                done: Box::new(move |outcome| job.finish(outcome)),
            });
            seq.next_seq += 1;
        } else {
            job.finish(Ok(()));
        }
    }
    seq.journal.append(records);
    // After this batch's records, so the journal is past them.
    if let Some(durable) = seq.checkpoint.take() {
        seq.journal.checkpoint(durable);
    }
}

fn apply(
    db: &Database,
    jobs: &mut [Box<dyn Job>],
    stats: &WriterStats,
    seq: &mut Sequencer,
) -> Result<(), StoreError> {
    let started = Instant::now();
    let charges = jobs.iter().filter(|j| j.journaled()).count() as u64;
    // `None` only for a batch of charges only, and not when a checkpoint is
    // due: see the module's argument.
    let durable = charges < jobs.len() as u64 || jobs.is_empty() || seq.checkpoint_due();
    let mut txn = db.begin_write()?;
    if !durable {
        txn.set_durability(Durability::None)
            .map_err(|e| StoreError::Database(e.to_string()))?;
    }
    for job in jobs.iter_mut() {
        // Dropping `txn` on error aborts it: nothing of the batch is written.
        job.apply(&txn)?;
    }
    let applied = seq.applied + charges;
    if charges > 0 {
        txn.open_table(META)?
            .insert(journal::META_APPLIED_SEQ, applied.to_be_bytes().as_slice())?;
    }
    txn.commit()?;
    seq.applied = applied;
    if durable {
        stats.durable_commits.fetch_add(1, Ordering::Relaxed);
        seq.pending = 0;
        seq.since = Instant::now();
        seq.checkpoint = Some(applied);
    } else {
        seq.pending += charges;
    }
    stats.unflushed.store(seq.pending, Ordering::Relaxed);
    if let Some(observe) = stats.commit_observer.get() {
        observe(started.elapsed());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::store::tables::META;
    use crate::store::{Store, StoreError};
    use std::sync::atomic::Ordering;

    fn read(store: &Store, key: &[u8]) -> Option<Vec<u8>> {
        store
            .read(|tx| crate::store::Reader::get_raw(tx, META, key))
            .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_failing_job_leaks_nothing_and_fails_no_one_else() {
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(Store::open(dir.path()).unwrap());
        // Two hundred callers waiting on the writer at once (joined, not
        // spawned: every job is queued before the first is answered).
        let mut calls = Vec::new();
        for i in 0..200u32 {
            let store = store.clone();
            calls.push(async move {
                store
                    .write(move |txn| {
                        let key = format!("job-{i}");
                        txn.open_table(META)?
                            .insert(key.as_bytes(), b"v".as_slice())?;
                        // Every 50th job writes, then refuses: its write
                        // must not survive.
                        if i % 50 == 7 {
                            return Err(StoreError::Conflict(format!("job {i} refuses")));
                        }
                        Ok(i)
                    })
                    .await
            });
        }
        let mut failed = Vec::new();
        for (i, result) in futures::future::join_all(calls)
            .await
            .into_iter()
            .enumerate()
        {
            match result {
                Ok(n) => assert_eq!(n as usize, i),
                Err(StoreError::Conflict(_)) => failed.push(i),
                Err(other) => panic!("unexpected {other}"),
            }
        }
        assert_eq!(failed, vec![7, 57, 107, 157]);
        for i in 0..200 {
            let present = read(&store, format!("job-{i}").as_bytes()).is_some();
            assert_eq!(present, i % 50 != 7, "job {i}");
        }
        let stats = store.writer_stats();
        assert_eq!(stats.jobs.load(std::sync::atomic::Ordering::Relaxed), 196);
    }

    #[tokio::test]
    async fn writes_after_close_are_refused_and_earlier_ones_are_durable() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .write(|txn| {
                txn.open_table(META)?
                    .insert(b"kept".as_slice(), b"1".as_slice())?;
                Ok(())
            })
            .await
            .unwrap();
        store.close();
        let refused = store.write(|_| Ok(())).await;
        assert_eq!(refused, Err(StoreError::Closed));
        drop(store);
        let reopened = Store::open(dir.path()).unwrap();
        assert_eq!(read(&reopened, b"kept"), Some(b"1".to_vec()));
    }

    #[tokio::test]
    async fn a_checkpoint_tick_leaves_the_queue_depth_at_zero() {
        // The checkpoint thread queues a job of its own once a second while
        // charges are only in the journal; the depth gauge counted the
        // writer taking it but not the tick sending it, and wrapped below 0.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .write_journaled(b"charge".to_vec(), |_| Ok(()))
            .await
            .unwrap();
        let stats = store.writer_stats();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while stats.unflushed.load(Ordering::Relaxed) > 0 {
            assert!(std::time::Instant::now() < deadline, "no checkpoint came");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(stats.queued.load(Ordering::Relaxed), 0);
        store.close();
    }
}
