//! What stands between a charge's two halves and its caller, and between
//! an answered charge and the readers.
//!
//! A charge's record goes to the journal as its job goes to the writer
//! (the caller hands both over, see `writer.rs`), so the `fdatasync` and
//! the B-tree work run at the same time: the caller is answered by whichever of the two finishes second
//! ([`Meeting`]). It is answered before the redb transaction commits (the
//! journal is what makes it durable), so a reader that starts after the
//! answer waits the few microseconds until that commit is visible
//! ([`Visibility`]): what a client was told it spent, every read sees.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::StoreError;

/// The job's way to answer its caller once both halves are in.
pub(super) trait Answer: Send {
    fn answer(self: Box<Self>, outcome: Result<(), StoreError>);
}

/// A charge's two halves: its record durable in the journal, its writes
/// applied to redb. The second to arrive answers the caller, with the
/// apply's error first, else the journal's.
#[derive(Default)]
pub(super) struct Meeting(Mutex<Half>);

#[derive(Default)]
enum Half {
    #[default]
    Neither,
    Durable(Result<(), StoreError>),
    Applied(Box<dyn Answer>, Result<(), StoreError>),
    Met,
}

impl Meeting {
    /// The journal's half: the record is durable (or its write failed).
    pub(super) fn durable(&self, outcome: Result<(), StoreError>) {
        let mut half = self.0.lock().expect("meeting lock");
        match std::mem::replace(&mut *half, Half::Met) {
            Half::Applied(job, applied) => {
                drop(half);
                job.answer(applied.and(outcome));
            }
            _ => *half = Half::Durable(outcome),
        }
    }

    /// The writer's half: the charge is applied to redb (or failed).
    pub(super) fn applied(&self, job: Box<dyn Answer>, outcome: Result<(), StoreError>) {
        let mut half = self.0.lock().expect("meeting lock");
        match std::mem::replace(&mut *half, Half::Met) {
            Half::Durable(durable) => {
                drop(half);
                job.answer(outcome.and(durable));
            }
            _ => *half = Half::Applied(job, outcome),
        }
    }
}

/// How long a reader waits for a commit before reading anyway: only a
/// writer stopped by a failed commit takes that long.
const LONGEST_WAIT: Duration = Duration::from_secs(2);

/// Write transactions whose charges may have been answered before their
/// commit (`staged`), and those committed or abandoned since (`settled`).
#[derive(Default)]
pub(super) struct Visibility {
    staged: AtomicU64,
    settled: AtomicU64,
    /// Readers blocked in [`Visibility::wait`]: without any, a commit wakes
    /// no one (a futex call per batch saved).
    waiting: AtomicUsize,
    lock: Mutex<()>,
    changed: Condvar,
}

impl Visibility {
    /// Before a transaction's charges are answered.
    pub(super) fn stage(&self) {
        self.staged.fetch_add(1, Ordering::SeqCst);
    }

    /// Once that transaction committed (or failed to).
    pub(super) fn settle(&self) {
        {
            let _guard = self.lock.lock().expect("visibility lock");
            self.settled
                .store(self.staged.load(Ordering::SeqCst), Ordering::SeqCst);
        }
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.changed.notify_all();
        }
    }

    /// Every transaction staged so far has settled.
    pub(super) fn is_settled(&self) -> bool {
        self.settled.load(Ordering::SeqCst) >= self.staged.load(Ordering::SeqCst)
    }

    /// A reader is blocked in [`Visibility::wait`].
    pub(super) fn has_readers(&self) -> bool {
        self.waiting.load(Ordering::SeqCst) > 0
    }

    /// Returns once every transaction staged before the call has settled:
    /// a read that starts then sees every charge answered so far.
    pub(super) fn wait(&self) {
        let want = self.staged.load(Ordering::SeqCst);
        if self.settled.load(Ordering::SeqCst) >= want {
            return;
        }
        let mut guard = self.lock.lock().expect("visibility lock");
        // Counted under the lock `settle` takes before it looks: a commit
        // that settles after this either sees the count or is seen below.
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _counted = Uncount(&self.waiting);
        while self.settled.load(Ordering::SeqCst) < want {
            let (next, timeout) = self
                .changed
                .wait_timeout(guard, LONGEST_WAIT)
                .expect("visibility lock");
            guard = next;
            if timeout.timed_out() {
                return;
            }
        }
    }
}

/// Takes a reader off the waiting count however its wait ends.
struct Uncount<'a>(&'a AtomicUsize);

impl Drop for Uncount<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    struct Reply(std::sync::mpsc::Sender<Result<(), StoreError>>);
    impl Answer for Reply {
        fn answer(self: Box<Self>, outcome: Result<(), StoreError>) {
            let _ = self.0.send(outcome);
        }
    }

    fn meet(
        durable_first: bool,
        durable: Result<(), StoreError>,
        applied: Result<(), StoreError>,
    ) -> Vec<Result<(), StoreError>> {
        let (tx, rx) = std::sync::mpsc::channel();
        let meeting = Meeting::default();
        if durable_first {
            meeting.durable(durable);
            assert!(rx.try_recv().is_err(), "answered before the apply");
            meeting.applied(Box::new(Reply(tx)), applied);
        } else {
            meeting.applied(Box::new(Reply(tx)), applied);
            assert!(rx.try_recv().is_err(), "answered before the journal");
            meeting.durable(durable);
        }
        rx.try_iter().collect()
    }

    #[test]
    fn the_second_half_answers_once_with_the_apply_error_first() {
        let io = StoreError::Database("disk".into());
        let gone = StoreError::NotFound("key".into());
        for first in [true, false] {
            assert_eq!(meet(first, Ok(()), Ok(())), vec![Ok(())]);
            assert_eq!(meet(first, Err(io.clone()), Ok(())), vec![Err(io.clone())]);
            assert_eq!(
                meet(first, Ok(()), Err(gone.clone())),
                vec![Err(gone.clone())]
            );
            assert_eq!(
                meet(first, Err(io.clone()), Err(gone.clone())),
                vec![Err(gone.clone())]
            );
        }
    }

    #[test]
    fn a_reader_waits_for_the_staged_commit_and_not_for_later_ones() {
        let visibility = Arc::new(Visibility::default());
        visibility.stage();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = {
            let visibility = visibility.clone();
            std::thread::spawn(move || {
                visibility.wait();
                tx.send(()).unwrap();
            })
        };
        // The reader cannot pass before the staged transaction settles.
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
        visibility.settle();
        rx.recv_timeout(Duration::from_secs(5))
            .expect("released by the commit");
        reader.join().unwrap();
        // Nothing staged: no wait at all.
        visibility.wait();
    }
}
