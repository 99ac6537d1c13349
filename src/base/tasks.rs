//! Owned background work: the one place the server spawns async tasks.
//!
//! The composition root (`app`) makes one [`Tasks`] and hands it to every
//! part that runs work of its own. Work is of two kinds, waited for at two
//! different moments of shutdown:
//!
//! - **Detached request work** ([`Tasks::detach`]): what a request leaves
//!   behind when it cannot wait (the charge of a stream its caller
//!   dropped) and the HTTP connections themselves. Shutdown waits for it
//!   right after the requests drained, before the store is flushed, so
//!   nothing a request owed is lost.
//! - **Loops** ([`Tasks::spawn`]): long-lived work (webhook dispatch and
//!   deliveries, the compliance sweep, the incident sampler, the trace
//!   exporter, the signal listener). Each ends when [`Tasks::stopping`]
//!   resolves (or when its input closes); shutdown cancels the token, then
//!   waits for them within what is left of the grace period.
//!
//! `clippy.toml` forbids tokio's free `spawn` function and `Handle::spawn` everywhere
//! else, so a task cannot be started that shutdown does not know about.

use std::future::Future;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};
use tokio_util::task::TaskTracker;

/// The task set: cheap to clone, every clone the same set.
#[derive(Clone, Default)]
pub struct Tasks {
    stop: CancellationToken,
    loops: TaskTracker,
    detached: TaskTracker,
    /// Set in the handle of a loop started by [`Tasks::spawn_thread`]: the
    /// work it spawns, which its thread waits for.
    on_thread: Option<TaskTracker>,
}

impl Tasks {
    pub fn new() -> Tasks {
        Tasks::default()
    }

    /// Starts a long-lived loop. It must end once [`Tasks::stopping`]
    /// resolves (or its input closes): shutdown waits for it.
    #[allow(clippy::disallowed_methods)] // The one spawn site of loops.
    pub fn spawn<F>(&self, work: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match &self.on_thread {
            Some(on_thread) => self.loops.spawn(on_thread.track_future(work)),
            None => self.loops.spawn(work),
        }
    }

    /// Starts a long-lived loop on a thread of its own, in a
    /// single-threaded runtime: for work that should not take turns with
    /// the requests on the runtime's workers (webhook deliveries). `start`
    /// gets the set to spawn through; what the loop spawns with it runs on
    /// that thread too. Shutdown waits for the loop as for any other, and
    /// the thread runs until the loop and everything it spawned have ended.
    pub fn spawn_thread<F>(
        &self,
        name: &str,
        start: impl FnOnce(Tasks) -> F + Send + 'static,
    ) -> std::io::Result<()>
    where
        F: Future<Output = ()> + 'static,
    {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let on_thread = TaskTracker::new();
        let tasks = Tasks {
            on_thread: Some(on_thread.clone()),
            ..self.clone()
        };
        let token = self.loops.token();
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    start(tasks).await;
                    on_thread.close();
                    on_thread.wait().await;
                    drop(token);
                })
            })?;
        Ok(())
    }

    /// Starts work a request leaves behind; shutdown waits for it before
    /// the store is flushed. It must end by itself, promptly.
    #[allow(clippy::disallowed_methods)] // The one spawn site of request work.
    pub fn detach<F>(&self, work: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.detached.spawn(work)
    }

    /// Resolves once shutdown asks the loops to stop.
    pub fn stopping(&self) -> WaitForCancellationFuture<'_> {
        self.stop.cancelled()
    }

    /// The token loops select on, for a loop that outlives a borrow of
    /// `self` (cancelled with [`Tasks::stop_loops`]).
    pub fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    pub fn is_stopping(&self) -> bool {
        self.stop.is_cancelled()
    }

    /// How many detached tasks are running (tests, logs).
    pub fn detached_running(&self) -> usize {
        self.detached.len()
    }

    /// Waits up to `limit` for the detached request work to finish; new
    /// work may still be detached meanwhile (a connection dropping its
    /// stream charges it). False when time ran out.
    pub async fn drain_detached(&self, limit: Duration) -> bool {
        self.detached.close();
        let done = tokio::time::timeout(limit, self.detached.wait())
            .await
            .is_ok();
        self.detached.reopen();
        done
    }

    /// Cancels the token and waits up to `limit` for every loop (and any
    /// detached work still running) to end. False when time ran out.
    pub async fn stop_loops(&self, limit: Duration) -> bool {
        self.stop.cancel();
        self.loops.close();
        self.detached.close();
        tokio::time::timeout(limit, async {
            self.loops.wait().await;
            self.detached.wait().await;
        })
        .await
        .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    #[tokio::test]
    async fn stopping_waits_for_a_loop_that_ends_on_the_token() {
        let tasks = Tasks::new();
        let ended = Arc::new(AtomicBool::new(false));
        let (t, e) = (tasks.clone(), ended.clone());
        tasks.spawn(async move {
            t.stopping().await;
            tokio::task::yield_now().await;
            e.store(true, Ordering::SeqCst);
        });
        assert!(tasks.stop_loops(Duration::from_secs(10)).await);
        assert!(ended.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn draining_waits_for_detached_work_and_allows_more() {
        let tasks = Tasks::new();
        let (sender, receiver) = tokio::sync::oneshot::channel::<()>();
        tasks.detach(async move {
            let _ = receiver.await;
        });
        assert!(!tasks.drain_detached(Duration::from_millis(20)).await);
        sender.send(()).unwrap();
        assert!(tasks.drain_detached(Duration::from_secs(10)).await);
        // Still open: a late charge can be detached after a drain.
        tasks.detach(async {}).await.unwrap();
        assert_eq!(tasks.detached_running(), 0);
    }

    #[tokio::test]
    async fn a_loop_on_its_own_thread_runs_its_work_there_and_is_waited_for() {
        let tasks = Tasks::new();
        let (threads, done) = (
            Arc::new(Mutex::new(Vec::new())),
            Arc::new(AtomicBool::new(false)),
        );
        let (seen, finished) = (threads.clone(), done.clone());
        tasks
            .spawn_thread("test-loop", move |tasks| async move {
                let name = || std::thread::current().name().map(str::to_owned);
                seen.lock().unwrap().push(name());
                let (on_thread, stop) = (seen.clone(), tasks.clone());
                // Work the loop spawns: it outlives the loop, and
                // shutdown still waits for it.
                tasks.spawn(async move {
                    stop.stopping().await;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    on_thread.lock().unwrap().push(name());
                    finished.store(true, Ordering::SeqCst);
                });
                tasks.stopping().await;
            })
            .unwrap();
        assert!(tasks.stop_loops(Duration::from_secs(10)).await);
        assert!(done.load(Ordering::SeqCst));
        let threads = threads.lock().unwrap();
        assert_eq!(*threads, vec![Some("test-loop".to_owned()); 2]);
    }

    #[tokio::test]
    async fn a_loop_that_ignores_the_token_runs_out_the_limit() {
        let tasks = Tasks::new();
        tasks.spawn(std::future::pending::<()>());
        assert!(!tasks.stop_loops(Duration::from_millis(20)).await);
    }
}
