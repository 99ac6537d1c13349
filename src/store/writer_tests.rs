//! The writer's batching, failure isolation and close.
use crate::store::journal::tests::add_to_total as add_amount;
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

fn total(store: &Store) -> u64 {
    read(store, b"test_total").map_or(0, |v| u64::from_be_bytes(v.try_into().unwrap()))
}

/// A charge of `amount`, journaled as the same amount.
async fn charge(store: &Store, amount: u64) -> Result<(), StoreError> {
    let record = amount.to_string().into_bytes();
    let applied = record.clone();
    store
        .write_journaled(record, move |txn| add_amount(txn, &applied))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_read_after_an_answered_charge_sees_it() {
    // Charges are answered before their redb commit: the read that follows
    // must wait for it, never see the total without the charge.
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(Store::open(dir.path()).unwrap());
    let mut callers = Vec::new();
    for _ in 0..4 {
        let store = store.clone();
        callers.push(async move {
            for _ in 0..100 {
                let before = total(&store);
                charge(&store, 1).await.unwrap();
                assert!(total(&store) > before, "an answered charge is not visible");
            }
        });
    }
    futures::future::join_all(callers).await;
    assert_eq!(total(&store), 400);
    store.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_charge_keeps_its_sequence_and_is_never_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let upgrades = crate::store::Upgrades {
        migrations: &[],
        replay: Some(add_amount),
    };
    let store = std::sync::Arc::new(Store::open_with(dir.path(), upgrades).unwrap());
    // Fifty charges at once, the last of them refusing after its write: its
    // record is in the journal (it went there before the apply), its write
    // is not in redb, and the others are.
    let mut calls = Vec::new();
    for i in 0..50u64 {
        let store = store.clone();
        calls.push(async move {
            let record = b"1000".to_vec();
            store
                .write_journaled(record, move |txn| {
                    add_amount(txn, if i == 49 { b"1000" } else { b"1" })?;
                    if i == 49 {
                        return Err(StoreError::Conflict("refused".into()));
                    }
                    Ok(())
                })
                .await
        });
    }
    let outcomes = futures::future::join_all(calls).await;
    assert_eq!(outcomes.iter().filter(|o| o.is_ok()).count(), 49);
    assert_eq!(total(&store), 49);
    // A clean stop settles every sequence, the refused one included: the
    // journal is emptied, and a restart has nothing to replay.
    store.close();
    drop(store);
    let journal =
        crate::store::journal::scan(&dir.path().join(crate::store::journal::JOURNAL_DIR), 0)
            .unwrap();
    assert!(
        journal.records.is_empty(),
        "{} records left",
        journal.records.len()
    );
    let reopened = Store::open_with(dir.path(), upgrades).unwrap();
    assert_eq!(total(&reopened), 49);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_charge_keeps_the_answered_charges_of_its_open_transaction() {
    // A charge is answered while its transaction stays open for the next
    // ones. A later charge that fails aborts that transaction: the charges
    // answered in it are applied again, never lost.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for _ in 0..50 {
        charge(&store, 1).await.unwrap();
        let refused = store
            .write_journaled(b"0".to_vec(), |txn| {
                add_amount(txn, b"1000")?;
                Err::<(), _>(StoreError::Conflict("refused".into()))
            })
            .await;
        assert!(matches!(refused, Err(StoreError::Conflict(_))));
    }
    assert_eq!(total(&store), 50);
    let stats = store.writer_stats();
    assert!(
        stats.reapplied.load(Ordering::Relaxed) > 0,
        "no refused charge met an open transaction"
    );
    store.close();
    drop(store);
    let reopened = Store::open(dir.path()).unwrap();
    assert_eq!(total(&reopened), 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn charges_and_plain_writes_of_one_batch_share_its_tables() {
    // Charges keep the batch's tables open; a plain write in the same
    // batch opens the same table itself (redb refuses a table opened
    // twice), and the charges after it open it again. Joined, not spawned:
    // every job is queued before the first is answered, so they share
    // batches.
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(Store::open(dir.path()).unwrap());
    let mut calls = Vec::new();
    for i in 0..300u32 {
        let store = store.clone();
        calls.push(async move {
            if i % 3 == 1 {
                store
                    .write(move |txn| {
                        txn.open_table(META)?
                            .insert(format!("plain-{i}").as_bytes(), b"v".as_slice())?;
                        Ok(())
                    })
                    .await
            } else {
                store
                    .write_journaled(b"1".to_vec(), |tables| add_amount(tables, b"1"))
                    .await
            }
        });
    }
    for outcome in futures::future::join_all(calls).await {
        outcome.unwrap();
    }
    assert_eq!(total(&store), 200);
    for i in (1..300).step_by(3) {
        assert!(read(&store, format!("plain-{i}").as_bytes()).is_some());
    }
    let stats = store.writer_stats();
    assert!(
        stats.largest_batch.load(Ordering::Relaxed) > 1,
        "no batch held more than one job"
    );
    store.close();
    drop(store);
    assert_eq!(total(&Store::open(dir.path()).unwrap()), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charge_reaches_the_journal_while_the_writer_is_busy() {
    // The caller hands a charge's record to the journal itself: its write
    // and sync start while the writer thread is still busy with an earlier
    // job, not once that thread takes the charge from its queue.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (started, busy) = tokio::sync::oneshot::channel::<()>();
    let mut started = Some(started);
    let blocker = store.write(move |_| {
        if let Some(started) = started.take() {
            let _ = started.send(());
        }
        let _ = held.recv();
        Ok(())
    });
    // Queued once the writer thread is inside the blocking job.
    let charged = async {
        busy.await.unwrap();
        charge(&store, 7).await
    };
    let journal_dir = dir.path().join(crate::store::journal::JOURNAL_DIR);
    let watched = async {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let journaled = loop {
            let found = crate::store::journal::scan(&journal_dir, 0).unwrap();
            if found.records.iter().any(|(_, record)| record == b"7") {
                break true;
            }
            if std::time::Instant::now() > deadline {
                break false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        };
        release.send(()).unwrap();
        journaled
    };
    let (blocked, charged, journaled) = tokio::join!(blocker, charged, watched);
    assert!(journaled, "the record waited for the writer thread");
    blocked.unwrap();
    charged.unwrap();
    assert_eq!(total(&store), 7);
    store.close();
}
