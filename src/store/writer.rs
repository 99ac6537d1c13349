//! The writer: one thread that owns every write transaction.
//!
//! Callers queue a job and wait; the thread drains the queue, applies a whole
//! batch in one write transaction with `Durability::Immediate`, commits, and
//! only then answers each caller (group commit). One fsync is shared by the
//! batch, which is how durable writes reach tens of thousands per second on
//! a disk whose fsync takes tens of microseconds to milliseconds.
//!
//! A job may fail (a name already taken, a record gone). Its partial writes
//! must not reach the others, so a failed batch is aborted and its jobs are
//! re-run one transaction each: the failing job gets its error, the others
//! commit. Jobs are `FnMut` for that reason.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use redb::{Database, WriteTransaction};
use tokio::sync::{mpsc, oneshot};

use super::StoreError;

/// Upper bound of jobs in one transaction, so a burst cannot make one
/// caller's answer wait behind an unbounded batch.
const MAX_BATCH: usize = 1024;
/// Bound of the queue: beyond it, callers wait (back-pressure).
const QUEUE_CAPACITY: usize = 16_384;

trait Job: Send {
    fn apply(&mut self, txn: &WriteTransaction) -> Result<(), StoreError>;
    fn finish(self: Box<Self>, outcome: Result<(), StoreError>);
}

struct TypedJob<T, F> {
    work: F,
    output: Option<T>,
    reply: oneshot::Sender<Result<T, StoreError>>,
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
}

/// Counters describing the writer's batching, for benchmarks and metrics.
#[derive(Default)]
pub struct WriterStats {
    pub commits: AtomicU64,
    pub jobs: AtomicU64,
    pub largest_batch: AtomicUsize,
    pub queued: AtomicUsize,
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
            .finish_non_exhaustive()
    }
}

pub struct Writer {
    queue: Mutex<Option<mpsc::Sender<Box<dyn Job>>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    pub stats: Arc<WriterStats>,
}

impl Writer {
    pub fn start(db: Arc<Database>) -> Writer {
        let (queue, mut jobs) = mpsc::channel::<Box<dyn Job>>(QUEUE_CAPACITY);
        let stats = Arc::new(WriterStats::default());
        let thread_stats = stats.clone();
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
                    run_batch(&db, batch, &thread_stats);
                }
            })
            .expect("spawning the writer thread");
        Writer {
            queue: Mutex::new(Some(queue)),
            thread: Mutex::new(Some(thread)),
            stats,
        }
    }

    /// Queues `work` and waits until its transaction is durable.
    pub async fn write<T, F>(&self, work: F) -> Result<T, StoreError>
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

fn run_batch(db: &Database, mut batch: Vec<Box<dyn Job>>, stats: &WriterStats) {
    let size = batch.len();
    match apply(db, &mut batch, stats) {
        Ok(()) => {
            stats.commits.fetch_add(1, Ordering::Relaxed);
            stats.jobs.fetch_add(size as u64, Ordering::Relaxed);
            stats.largest_batch.fetch_max(size, Ordering::Relaxed);
            for job in batch {
                job.finish(Ok(()));
            }
        }
        Err(error) if size == 1 => {
            batch.pop().expect("one job").finish(Err(error));
        }
        Err(_) => {
            // Isolate the failure: each job alone, in its own transaction.
            for job in batch {
                let mut single = vec![job];
                let outcome = apply(db, &mut single, stats);
                if outcome.is_ok() {
                    stats.commits.fetch_add(1, Ordering::Relaxed);
                    stats.jobs.fetch_add(1, Ordering::Relaxed);
                }
                single.pop().expect("one job").finish(outcome);
            }
        }
    }
}

fn apply(db: &Database, jobs: &mut [Box<dyn Job>], stats: &WriterStats) -> Result<(), StoreError> {
    let started = std::time::Instant::now();
    // Durability::Immediate is redb's default: commit returns after fsync.
    let txn = db.begin_write()?;
    for job in jobs.iter_mut() {
        // Dropping `txn` on error aborts it: nothing of the batch is written.
        job.apply(&txn)?;
    }
    txn.commit()?;
    if let Some(observe) = stats.commit_observer.get() {
        observe(started.elapsed());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::store::tables::META;
    use crate::store::{Store, StoreError};

    fn read(store: &Store, key: &[u8]) -> Option<Vec<u8>> {
        store
            .read(|tx| crate::store::Reader::get_raw(tx, META, key))
            .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_failing_job_leaks_nothing_and_fails_no_one_else() {
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(Store::open(dir.path()).unwrap());
        let mut tasks = Vec::new();
        for i in 0..200u32 {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
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
            }));
        }
        let mut failed = Vec::new();
        for (i, task) in tasks.into_iter().enumerate() {
            match task.await.unwrap() {
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
}
