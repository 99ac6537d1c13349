use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

fn payload(seq: u64) -> Vec<u8> {
    format!("charge {seq} of key k1, {} micro-credits", seq * 1000).into_bytes()
}

/// Writes records `first..=last` through the journal thread and waits until
/// each is reported durable; returns the directory.
fn write_journal(dir: &Path, first: u64, last: u64) {
    let stats = Arc::new(JournalStats::default());
    let mut journal = Journal::start(dir, first, stats.clone()).unwrap();
    let answered = Arc::new(AtomicUsize::new(0));
    for seq in first..=last {
        let answered = answered.clone();
        journal.append(vec![Append {
            seq,
            payload: payload(seq),
            done: Box::new(move |outcome| {
                outcome.unwrap();
                answered.fetch_add(1, Ordering::SeqCst);
            }),
        }]);
    }
    // Keep the segments: no checkpoint was announced, so close leaves them.
    journal.close();
    assert_eq!(answered.load(Ordering::SeqCst) as u64, last - first + 1);
}

fn the_segment(dir: &Path) -> PathBuf {
    let all = segments(dir).unwrap();
    assert_eq!(all.len(), 1);
    all[0].1.clone()
}

#[test]
fn crc32c_matches_the_standard_check_value() {
    assert_eq!(crc32c(&[b"123456789"]), 0xE306_9283);
    assert_eq!(crc32c(&[b"1234", b"56789"]), 0xE306_9283);
    // RFC 3720 (iSCSI), B.4: 32 bytes of zeros, of ones, ascending.
    assert_eq!(crc32c(&[&[0u8; 32]]), 0x8A91_36AA);
    assert_eq!(crc32c(&[&[0xFFu8; 32]]), 0x62A8_AB43);
    let ascending: Vec<u8> = (0u8..32).collect();
    assert_eq!(crc32c(&[&ascending]), 0x46DD_794E);
}

#[test]
fn crc32c_by_eight_bytes_matches_the_byte_at_a_time_definition() {
    // The bitwise definition, one byte at a time, against the sliced one
    // on every length up to 70 and every split of the parts.
    fn bitwise(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &byte in data {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0x82F6_3B78
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    let data: Vec<u8> = (0..70u32).map(|i| (i * 37 + 11) as u8).collect();
    for len in 0..data.len() {
        let whole = &data[..len];
        for split in 0..=len {
            let (a, b) = whole.split_at(split);
            assert_eq!(
                crc32c(&[a, b]),
                bitwise(whole),
                "length {len}, split {split}"
            );
        }
    }
}

#[test]
fn records_round_trip_in_sequence() {
    let dir = tempfile::tempdir().unwrap();
    write_journal(dir.path(), 1, 50);
    let found = scan(dir.path(), 0).unwrap();
    assert_eq!(found.last_seq, Some(50));
    let expected: Vec<_> = (1..=50).map(|s| (s, payload(s))).collect();
    assert_eq!(found.records, expected);
    // Above a watermark: only the records not yet applied.
    let above = scan(dir.path(), 40).unwrap();
    assert_eq!(above.records, expected[40..].to_vec());
    assert_eq!(above.last_seq, Some(50));
}

#[test]
fn a_journal_cut_at_every_offset_of_its_last_record_recovers_to_the_last_whole_record() {
    let dir = tempfile::tempdir().unwrap();
    write_journal(dir.path(), 1, 3);
    let path = the_segment(dir.path());
    let whole = std::fs::read(&path).unwrap();
    let mut framed = Vec::new();
    for seq in 1..=3 {
        frame(seq, &payload(seq), &mut framed);
    }
    assert_eq!(&whole[..framed.len()], framed.as_slice());
    let last_starts = framed.len() - (HEADER + payload(3).len());
    for cut in last_starts..framed.len() {
        // A crash mid-write: the file holds the prefix, then what was
        // there before (zeros), as if the tail never reached the disk.
        let mut torn = whole.clone();
        torn[cut..framed.len()].fill(0);
        std::fs::write(&path, &torn).unwrap();
        let found = scan(dir.path(), 0).unwrap();
        assert_eq!(found.last_seq, Some(2), "cut at {cut}");
        assert_eq!(found.records.len(), 2, "cut at {cut}");
        // And a file physically truncated there.
        std::fs::write(&path, &whole[..cut]).unwrap();
        let found = scan(dir.path(), 0).unwrap();
        assert_eq!(found.last_seq, Some(2), "truncated at {cut}");
    }
    std::fs::write(&path, &whole).unwrap();
    assert_eq!(scan(dir.path(), 0).unwrap().last_seq, Some(3));
}

#[test]
fn a_flipped_byte_in_the_tail_drops_that_record_and_what_follows() {
    let dir = tempfile::tempdir().unwrap();
    write_journal(dir.path(), 1, 4);
    let path = the_segment(dir.path());
    let whole = std::fs::read(&path).unwrap();
    let mut framed = Vec::new();
    for seq in 1..=3 {
        frame(seq, &payload(seq), &mut framed);
    }
    let fourth = framed.len();
    let end = fourth + HEADER + payload(4).len();
    // Every byte of the last record, flipped in turn (length, checksum,
    // sequence, payload).
    for at in fourth..end {
        let mut bad = whole.clone();
        bad[at] ^= 0x40;
        std::fs::write(&path, &bad).unwrap();
        let found = scan(dir.path(), 0).unwrap();
        assert_eq!(found.last_seq, Some(3), "flipped byte {at}");
    }
    // A flip in the third record drops the fourth with it.
    let mut bad = whole.clone();
    bad[fourth - 1] ^= 1;
    std::fs::write(&path, &bad).unwrap();
    assert_eq!(scan(dir.path(), 0).unwrap().last_seq, Some(2));
}

#[test]
fn records_continue_across_segments_and_applied_ones_are_recycled() {
    let dir = tempfile::tempdir().unwrap();
    let stats = Arc::new(JournalStats::default());
    let mut journal = Journal::start(dir.path(), 1, stats).unwrap();
    // Large records: a few per segment.
    let big = |seq: u64| vec![(seq % 251) as u8 + 1; 3 << 20];
    let (done, answers) = mpsc::channel();
    for seq in 1..=7 {
        let done = done.clone();
        journal.append(vec![Append {
            seq,
            payload: big(seq),
            done: Box::new(move |outcome| done.send(outcome).unwrap()),
        }]);
    }
    for _ in 1..=7 {
        answers.recv().unwrap().unwrap();
    }
    assert!(segments(dir.path()).unwrap().len() >= 3);
    let found = scan(dir.path(), 0).unwrap();
    assert_eq!(found.last_seq, Some(7));
    assert_eq!(found.records[6].1, big(7));
    // redb durable up to 4: segments wholly at or below it go (one kept as
    // the spare, renamed only when reused), the rest still reads.
    journal.checkpoint(4);
    journal.close();
    let found = scan(dir.path(), 4).unwrap();
    assert_eq!(
        found.records.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![5, 6, 7]
    );
}

#[test]
fn a_closed_journal_whose_records_are_all_applied_leaves_no_segment() {
    let dir = tempfile::tempdir().unwrap();
    let stats = Arc::new(JournalStats::default());
    let mut journal = Journal::start(dir.path(), 10, stats).unwrap();
    let (done, answer) = mpsc::channel();
    journal.append(vec![Append {
        seq: 10,
        payload: payload(10),
        done: Box::new(move |outcome| done.send(outcome).unwrap()),
    }]);
    answer.recv().unwrap().unwrap();
    journal.checkpoint(10);
    journal.close();
    assert!(segments(dir.path()).unwrap().is_empty());
}

#[test]
fn a_journal_that_starts_above_the_watermark_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_journal(dir.path(), 20, 21);
    assert!(matches!(scan(dir.path(), 5), Err(StoreError::Corrupt(_))));
    assert_eq!(scan(dir.path(), 19).unwrap().records.len(), 2);
}

/// A charge, for the recovery tests: adds the amount its record names to a
/// running total (not idempotent by itself: only the watermark makes a
/// second replay harmless).
pub(in crate::store) fn add_to_total(
    txn: &impl crate::store::tables::Writes,
    record: &[u8],
) -> Result<(), StoreError> {
    use crate::store::tables::META;
    let amount: u64 = std::str::from_utf8(record).unwrap().parse().unwrap();
    let total = txn
        .get_raw(META, b"test_total")?
        .map_or(0, |v| u64::from_be_bytes(v.as_slice().try_into().unwrap()));
    txn.insert_raw(META, b"test_total", &(total + amount).to_be_bytes())
}

fn total(db: &redb::Database) -> u64 {
    use redb::ReadableDatabase;
    let read = db.begin_read().unwrap();
    let table = read.open_table(crate::store::tables::META).unwrap();
    redb::ReadableTable::get(&table, b"test_total".as_slice())
        .unwrap()
        .map_or(0, |v| u64::from_be_bytes(v.value().try_into().unwrap()))
}

fn write_amounts(dir: &Path, first: u64, amounts: &[u64]) {
    let stats = Arc::new(JournalStats::default());
    let mut journal = Journal::start(dir, first, stats).unwrap();
    let (done, answers) = mpsc::channel();
    for (i, amount) in amounts.iter().enumerate() {
        let done = done.clone();
        journal.append(vec![Append {
            seq: first + i as u64,
            payload: amount.to_string().into_bytes(),
            done: Box::new(move |outcome| done.send(outcome).unwrap()),
        }]);
    }
    for _ in amounts {
        answers.recv().unwrap().unwrap();
    }
    journal.close();
}

#[test]
fn replaying_twice_is_replaying_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = redb::Database::create(dir.path().join("t.redb")).unwrap();
    let journal_dir = dir.path().join(JOURNAL_DIR);
    write_amounts(&journal_dir, 1, &[1, 10, 100]);
    let next = crate::store::recover(&db, &journal_dir, Some(add_to_total)).unwrap();
    assert_eq!((next, total(&db)), (4, 111));
    assert!(segments(&journal_dir).unwrap().is_empty());

    // A crash after the replay's commit but before the journal was cleared:
    // the same records are found again, and skipped by the watermark.
    write_amounts(&journal_dir, 1, &[1, 10, 100]);
    let next = crate::store::recover(&db, &journal_dir, Some(add_to_total)).unwrap();
    assert_eq!((next, total(&db)), (4, 111));

    // Records past the watermark are applied, those below it are not.
    write_amounts(&journal_dir, 2, &[10, 100, 1000, 10000]);
    let next = crate::store::recover(&db, &journal_dir, Some(add_to_total)).unwrap();
    assert_eq!((next, total(&db)), (6, 11111));
}

#[test]
fn a_pending_journal_is_refused_without_a_replay() {
    let dir = tempfile::tempdir().unwrap();
    let db = redb::Database::create(dir.path().join("t.redb")).unwrap();
    let journal_dir = dir.path().join(JOURNAL_DIR);
    write_amounts(&journal_dir, 1, &[5]);
    let refused = crate::store::recover(&db, &journal_dir, None);
    assert!(matches!(refused, Err(StoreError::Database(m)) if m.contains("1 charge")));
    // Nothing was lost by the refusal.
    let next = crate::store::recover(&db, &journal_dir, Some(add_to_total)).unwrap();
    assert_eq!((next, total(&db)), (2, 5));
}

#[tokio::test]
async fn restore_removes_the_journal_of_the_store_it_replaces() {
    let source = tempfile::tempdir().unwrap();
    let store = crate::store::Store::open(source.path()).unwrap();
    let backup = source.path().with_extension("backup.redb");
    store.backup_to(&backup, true).unwrap();
    store.close();
    drop(store);

    // A crashed store's data directory: its journal holds charges the
    // backup knows nothing of.
    let target = tempfile::tempdir().unwrap();
    let journal_dir = target.path().join(JOURNAL_DIR);
    write_amounts(&journal_dir, 1, &[7, 8]);
    assert_eq!(scan(&journal_dir, 0).unwrap().records.len(), 2);
    crate::store::backup::restore(&backup, target.path(), false).unwrap();
    assert!(segments(&journal_dir).unwrap().is_empty());
    // The restored store opens (no foreign charges to replay).
    crate::store::Store::open(target.path()).unwrap().close();
    std::fs::remove_file(&backup).unwrap();
}
