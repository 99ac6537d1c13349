//! Storage: one redb file in the data directory, and the charge journal
//! beside it (`journal/`, see [`journal`]).
//!
//! [`Store`] owns the database handle and the [`writer::Writer`]. Reads run
//! on read transactions (MVCC snapshots, cheap, never blocked by the writer);
//! every write goes through the writer's group commit and is durable before
//! its caller hears back: in redb, or, for a charge, in the journal (redb
//! catches up at the next checkpoint; a read sees the charge at once). Domain modules describe *what* to write as a
//! closure over the transaction, using the typed tables of [`tables`];
//! handlers never see redb.

pub mod backup;
pub mod codec;
pub mod compact;
pub mod day_key;
pub mod expiry;
mod handover;
pub mod journal;
pub mod migrate;
pub mod opened;
pub mod shape;
pub mod tables;
pub mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use redb::{Database, ReadTransaction, ReadableDatabase, WriteTransaction};

pub use tables::{CompactTable, Reader, SCHEMA_VERSION, Table};

/// The file name of the database inside the data directory.
pub const DB_FILE: &str = "tollgate.redb";
/// The admin socket inside the data directory.
pub const SOCKET_FILE: &str = "tollgate.sock";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// Another process has the data file open.
    Locked(PathBuf),
    /// The file was written by a newer Tollgate.
    NewerSchema { found: u32, supported: u32 },
    /// The file is not a Tollgate store, or it is damaged.
    Corrupt(String),
    /// Any other storage failure (I/O, redb).
    Database(String),
    /// The writer has shut down.
    Closed,
    /// A domain refusal: the record does not exist.
    NotFound(String),
    /// A domain refusal: the change conflicts with what is stored.
    Conflict(String),
    /// A domain refusal: the change is not valid.
    Invalid(String),
    /// A domain refusal: the caller may not make this change.
    Forbidden(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Locked(path) => write!(
                f,
                "the data file {} is in use by another tollgate process (a running server?)",
                path.display()
            ),
            StoreError::NewerSchema { found, supported } => write!(
                f,
                "the data file has schema version {found}, newer than this build supports ({supported}); \
                 run the newer tollgate or restore a backup made by this version"
            ),
            StoreError::Corrupt(m) => {
                write!(f, "the data file is damaged or not a tollgate store: {m}")
            }
            StoreError::Database(m) => write!(f, "storage error: {m}"),
            StoreError::Closed => write!(f, "the store is shutting down"),
            StoreError::NotFound(m)
            | StoreError::Conflict(m)
            | StoreError::Invalid(m)
            | StoreError::Forbidden(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for StoreError {}

impl StoreError {
    /// The stable code a caller is answered with: the domain refusals'
    /// own; every storage failure is `internal_error` (its detail is
    /// logged, never answered).
    pub fn code(&self) -> crate::base::error::Code {
        use crate::base::error::Code;
        match self {
            StoreError::NotFound(_) => Code::NotFound,
            StoreError::Conflict(_) => Code::Conflict,
            StoreError::Invalid(_) => Code::InvalidRequest,
            StoreError::Forbidden(_) => Code::Forbidden,
            StoreError::Locked(_)
            | StoreError::NewerSchema { .. }
            | StoreError::Corrupt(_)
            | StoreError::Database(_)
            | StoreError::Closed => Code::Internal,
        }
    }
}

macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                StoreError::Database(e.to_string())
            }
        }
    )*};
}
from_redb!(
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError,
    std::io::Error
);

impl From<redb::DatabaseError> for StoreError {
    fn from(e: redb::DatabaseError) -> Self {
        match e {
            redb::DatabaseError::Storage(redb::StorageError::Corrupted(m)) => {
                StoreError::Corrupt(m)
            }
            redb::DatabaseError::UpgradeRequired(v) => {
                StoreError::Corrupt(format!("redb file format {v} needs an upgrade"))
            }
            other => StoreError::Database(other.to_string()),
        }
    }
}

/// Re-applies one journaled charge during recovery: the function the live
/// charge ran, rebuilt from its record (the store cannot know the domain, so
/// the caller that opens the store gives it).
pub type Replay = fn(&WriteTransaction, &[u8]) -> Result<(), StoreError>;

/// What the parts above the store give it when opening a file they wrote
/// before: the migrations of older schemas (`crate::migrations::ALL`) and
/// the replay of journaled charges. The default has neither: it opens a
/// new store or one of today's schema with an empty journal.
#[derive(Clone, Copy, Default)]
pub struct Upgrades {
    pub migrations: &'static [migrate::Migration],
    pub replay: Option<Replay>,
}

pub struct Store {
    db: Arc<Database>,
    writer: writer::Writer,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the store in `data_dir`: the directory is
    /// made private (0700), the schema checked and migrated. A file written by
    /// a newer build is refused before anything is written to it.
    ///
    /// An older schema, or a journal left by a crash, cannot be brought up
    /// to date without the domain's [`Upgrades`]: this refuses them (see
    /// [`Store::open_with`]).
    pub fn open(data_dir: &Path) -> Result<Store, StoreError> {
        Store::open_with(data_dir, Upgrades::default())
    }

    /// [`Store::open`], migrating an older schema and replaying the charges
    /// a crash left in the journal above redb's watermark.
    pub fn open_with(data_dir: &Path, upgrades: Upgrades) -> Result<Store, StoreError> {
        Store::open_cached(data_dir, upgrades, DEFAULT_CACHE_MB)
    }

    /// [`Store::open_with`] with redb's page cache bounded to `cache_mb`
    /// MiB (the `store_cache_mb` setting): the store's share of resident
    /// memory, whatever the file's size.
    pub fn open_cached(
        data_dir: &Path,
        upgrades: Upgrades,
        cache_mb: u64,
    ) -> Result<Store, StoreError> {
        // A directory we create is private; an existing one is the
        // operator's and keeps its mode (the file itself is made 0600).
        if !data_dir.exists() {
            std::fs::create_dir_all(data_dir).map_err(|e| {
                StoreError::Database(format!("cannot create {}: {e}", data_dir.display()))
            })?;
            restrict_to_owner(data_dir, 0o700)?;
        }
        let path = data_dir.join(DB_FILE);
        check_not_newer(&path)?;
        let db = open_database(&path, cache_mb)?;
        restrict_to_owner(&path, 0o600)?;
        migrate::prepare(&db, upgrades.migrations)?;
        let journal_dir = data_dir.join(journal::JOURNAL_DIR);
        let next_seq = recover(&db, &journal_dir, upgrades.replay)?;
        let db = Arc::new(db);
        let writer = writer::Writer::start(db.clone(), &journal_dir, next_seq)?;
        Ok(Store { db, writer, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` on a consistent snapshot that holds every charge answered
    /// so far (it waits for the commit of charges answered before it, a
    /// few microseconds at most; see `handover`).
    pub fn read<T>(
        &self,
        f: impl FnOnce(&ReadTransaction) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.writer.wait_visible();
        let txn = self.db.begin_read()?;
        f(&txn)
    }

    /// [`Store::read`] without the wait: the last commit, which may lack
    /// the charges of the last few microseconds. For the request path's
    /// reads of what a charge does not decide (a tenant's policy, a consent
    /// record, a webhook's settings), which must not stall a worker thread
    /// behind the writer's commit.
    pub fn read_committed<T>(
        &self,
        f: impl FnOnce(&ReadTransaction) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let txn = self.db.begin_read()?;
        f(&txn)
    }

    /// Applies `work` through the group-commit writer; returns once durable.
    pub async fn write<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnMut(&WriteTransaction) -> Result<T, StoreError> + Send + 'static,
    {
        self.writer.write(work).await
    }

    pub fn writer_stats(&self) -> &writer::WriterStats {
        &self.writer.stats
    }

    /// A durable write of a probe value: the readiness check.
    pub async fn probe_writable(&self) -> Result<(), StoreError> {
        let now = crate::base::time::now_ms();
        self.write(move |txn| {
            txn.open_table(tables::META)?
                .insert(tables::META_READY_PROBE, now.to_be_bytes().as_slice())?;
            Ok(())
        })
        .await
    }

    /// Applies a charge (see [`writer::Writer::write_journaled`]); returns
    /// once its journal record is durable.
    pub async fn write_journaled<T, F>(&self, record: Vec<u8>, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnMut(&tables::Tables<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.writer.write_journaled(record, work).await
    }

    /// An empty durable commit: every charge applied so far (durable in the
    /// journal) becomes durable in redb too (shutdown's checkpoint).
    pub async fn checkpoint(&self) -> Result<(), StoreError> {
        self.write(|_| Ok(())).await
    }

    /// Flushes the writer and the journal: every accepted write is durable
    /// in redb afterwards, and the journal is empty.
    pub fn close(&self) {
        self.writer.close();
    }

    /// Copies a consistent snapshot to `out`, refusing a destination in the
    /// data directory, and an existing file unless `force` (see [`backup`]).
    pub fn backup_to(&self, out: &Path, force: bool) -> Result<backup::Summary, StoreError> {
        let out = backup::destination(out, &self.path, force)?;
        backup::snapshot(&self.db, &out)
    }
}

/// Replays the journal above redb's watermark (each charge in its own
/// transaction, the watermark with it), makes the result durable, then
/// clears the journal. Returns the next journal sequence.
fn recover(db: &Database, dir: &Path, replay: Option<Replay>) -> Result<u64, StoreError> {
    let applied = applied_seq(db)?;
    let found = journal::scan(dir, applied)?;
    let last = applied.max(found.last_seq.unwrap_or(0));
    if !found.records.is_empty() {
        let Some(replay) = replay else {
            return Err(StoreError::Database(format!(
                "the journal in {} holds {} charge(s) not yet in the store;                  start the tollgate server (or any tollgate command) to apply them",
                dir.display(),
                found.records.len()
            )));
        };
        for (seq, record) in &found.records {
            let mut txn = db.begin_write()?;
            txn.set_durability(redb::Durability::None)
                .map_err(|e| StoreError::Database(e.to_string()))?;
            if let Err(e) = replay(&txn, record) {
                // It committed once on this very state; refusing to start
                // would lock the operator out. Logged, skipped.
                tracing::error!(seq, error = %e, "a journaled charge could not be re-applied; skipped");
                txn.abort()?;
                txn = db.begin_write()?;
                txn.set_durability(redb::Durability::None)
                    .map_err(|e| StoreError::Database(e.to_string()))?;
            }
            txn.open_table(tables::META)?
                .insert(journal::META_APPLIED_SEQ, seq.to_be_bytes().as_slice())?;
            txn.commit()?;
        }
        tracing::info!(
            charges = found.records.len(),
            "re-applied the journaled charges of an unclean stop"
        );
    }
    if last > applied {
        // Durable before the journal goes (an Immediate commit persists
        // the replayed ones with it).
        let txn = db.begin_write()?;
        txn.open_table(tables::META)?
            .insert(journal::META_APPLIED_SEQ, last.to_be_bytes().as_slice())?;
        txn.commit()?;
    }
    journal::clear(dir)?;
    Ok(last + 1)
}

/// The highest journal sequence redb holds (0: none).
fn applied_seq(db: &Database) -> Result<u64, StoreError> {
    let read = db.begin_read()?;
    let table = match read.open_table(tables::META) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(0),
        Err(e) => return Err(e.into()),
    };
    let value = redb::ReadableTable::get(&table, journal::META_APPLIED_SEQ)?;
    Ok(value
        .and_then(|v| <[u8; 8]>::try_from(v.value()).ok())
        .map_or(0, u64::from_be_bytes))
}

/// Refuses a file from a newer build before opening it for writing (a
/// writable open may touch the file's header). A file that needs recovery
/// after a crash cannot be opened read-only; the writable open recovers it
/// and `migrate::prepare` checks the version again.
fn check_not_newer(path: &Path) -> Result<(), StoreError> {
    if !path.exists()
        || std::fs::metadata(path)
            .map(|m| m.len() == 0)
            .unwrap_or(true)
    {
        return Ok(());
    }
    let db = match redb::ReadOnlyDatabase::open(path) {
        Ok(db) => db,
        Err(redb::DatabaseError::DatabaseAlreadyOpen) => {
            return Err(StoreError::Locked(path.to_owned()));
        }
        Err(redb::DatabaseError::Storage(redb::StorageError::Corrupted(m))) => {
            return Err(StoreError::Corrupt(m));
        }
        Err(_) => return Ok(()),
    };
    let found = migrate::read_version(&db.begin_read()?)?;
    match found {
        Some(found) if found > SCHEMA_VERSION => Err(StoreError::NewerSchema {
            found,
            supported: SCHEMA_VERSION,
        }),
        _ => Ok(()),
    }
}

/// redb's page cache when no `store_cache_mb` is given, in MiB (redb's own
/// default, 1 GiB, would let a large store take that much resident memory).
pub const DEFAULT_CACHE_MB: u64 = 128;

fn open_database(path: &Path, cache_mb: u64) -> Result<Database, StoreError> {
    let cache_bytes = usize::try_from(cache_mb.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX);
    match Database::builder().set_cache_size(cache_bytes).create(path) {
        Ok(db) => Ok(db),
        Err(redb::DatabaseError::DatabaseAlreadyOpen) => Err(StoreError::Locked(path.to_owned())),
        Err(e) => Err(StoreError::from(e)),
    }
}

#[cfg(unix)]
pub(crate) fn restrict_to_owner(path: &Path, mode: u32) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| StoreError::Database(format!("cannot restrict {}: {e}", path.display())))
}

#[cfg(not(unix))]
pub(crate) fn restrict_to_owner(_: &Path, _: u32) -> Result<(), StoreError> {
    Ok(())
}
