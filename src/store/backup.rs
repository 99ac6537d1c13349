//! Online backup and offline restore.
//!
//! Backup copies every table from one read transaction (a consistent MVCC
//! snapshot that the writer keeps writing past) into a new redb file, which
//! is fsynced and renamed into place, so a backup file is either complete or
//! absent. Copying the live file instead could tear a commit in half.
//!
//! The destination is checked first ([`destination`]): renaming a backup
//! over the live store (or a link to it) would swap the file under the
//! running server, which would go on writing to a file nobody can open
//! again. So a destination that is, or resolves to, the store or anything in
//! its data directory is refused, and an existing file is only replaced when
//! forced.
//!
//! Restore refuses a backup from a newer schema, refuses to run while a
//! server has the target open, and refuses to replace a store holding data
//! unless forced. It replaces the file atomically (copy beside, fsync,
//! rename), and removes the replaced store's charge journal.
//!
//! A backup needs no journal: the snapshot is taken by a read transaction,
//! which sees every applied charge whether or not redb has made it durable
//! yet (every answered charge is applied before its record is journaled),
//! together with the journal watermark that covers them.

use std::fs::File;
use std::path::{Path, PathBuf};

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata};
use serde::Serialize;

use super::tables::{self, ALL, TENANTS};
use super::{DB_FILE, SCHEMA_VERSION, StoreError, migrate};

/// What a backup or restore moved: rows per table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub path: PathBuf,
    pub schema_version: u32,
    pub tables: Vec<(String, u64)>,
}

/// Where a backup of the store at `live` may be written: `out` resolved
/// (relative paths, `..`, symlinks of the file and of its directories), so
/// that the checks see the file that would really be replaced.
///
/// Refused: a destination inside the data directory (the store, its socket,
/// anything the server may create there), a hard link to the store, a
/// directory, and an existing file unless `force`.
pub fn destination(out: &Path, live: &Path, force: bool) -> Result<PathBuf, StoreError> {
    let invalid = |m: String| Err(StoreError::Invalid(m));
    let name = match out.file_name() {
        Some(name) if !out.as_os_str().to_string_lossy().ends_with('/') => name.to_owned(),
        _ => {
            return invalid(format!(
                "--out {}: name a file, not a directory",
                out.display()
            ));
        }
    };
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let parent = std::fs::canonicalize(&parent).map_err(|e| {
        StoreError::Invalid(format!(
            "--out {}: the directory {} cannot be used: {e}",
            out.display(),
            parent.display()
        ))
    })?;
    let mut resolved = parent.join(&name);
    // A symlink (or a `..` name) is followed to the file it names.
    if std::fs::symlink_metadata(&resolved).is_ok() {
        resolved = std::fs::canonicalize(&resolved)
            .map_err(|e| StoreError::Invalid(format!("--out {}: {e}", out.display())))?;
    }
    let data_dir = live
        .parent()
        .map(std::fs::canonicalize)
        .transpose()?
        .unwrap_or_default();
    if resolved.starts_with(&data_dir) {
        return invalid(format!(
            "--out {} is in the data directory {} (it would replace or sit beside the live store); \
             write the backup somewhere else",
            out.display(),
            data_dir.display()
        ));
    }
    match std::fs::metadata(&resolved) {
        Ok(meta) if meta.is_dir() => invalid(format!(
            "--out {} is a directory; name a file",
            out.display()
        )),
        Ok(meta) => {
            if same_file(&meta, live) {
                return invalid(format!(
                    "--out {} is a hard link to the live store in the data directory {}; \
                     write the backup somewhere else",
                    out.display(),
                    data_dir.display()
                ));
            }
            if !force {
                return Err(StoreError::Conflict(format!(
                    "--out {} already exists; pass --force to replace it",
                    out.display()
                )));
            }
            Ok(resolved)
        }
        Err(_) => Ok(resolved),
    }
}

#[cfg(unix)]
fn same_file(meta: &std::fs::Metadata, other: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(other).is_ok_and(|o| o.dev() == meta.dev() && o.ino() == meta.ino())
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &Path) -> bool {
    false
}

/// Writes a snapshot of `db` to `out`, which [`destination`] resolved and
/// checked: into a new file beside it (created, never opened through a
/// planted link), fsynced, renamed over `out`, then the directory fsynced.
pub fn snapshot(db: &Database, out: &Path) -> Result<Summary, StoreError> {
    let read = db.begin_read()?;
    let schema_version = migrate::read_version(&read)?.unwrap_or(SCHEMA_VERSION);
    let tmp = sibling(
        out,
        &format!("partial-{}", crate::base::ids::random_token(6)),
    );
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    let written = copy_tables(&read, &tmp).and_then(|counts| {
        // A backup holds hashes, digests and signing secrets: owner only.
        super::restrict_to_owner(&tmp, 0o600)?;
        sync_file(&tmp)?;
        std::fs::rename(&tmp, out)?;
        Ok(counts)
    });
    let counts = match written {
        Ok(counts) => counts,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    sync_parent(out)?;
    Ok(Summary {
        path: out.to_owned(),
        schema_version,
        tables: counts,
    })
}

fn copy_tables(read: &redb::ReadTransaction, tmp: &Path) -> Result<Vec<(String, u64)>, StoreError> {
    let mut counts = Vec::new();
    {
        let target = Database::create(tmp)?;
        let write = target.begin_write()?;
        for def in ALL {
            let source = read.open_table(*def)?;
            let mut copy = write.open_table(*def)?;
            for item in source.iter()? {
                let (k, v) = item?;
                copy.insert(k.value(), v.value())?;
            }
            counts.push((def_name(*def), source.len()?));
        }
        write.commit()?;
    }
    Ok(counts)
}

/// Restores `from` as the store of `data_dir`. The server must be stopped.
pub fn restore(from: &Path, data_dir: &Path, force: bool) -> Result<Summary, StoreError> {
    let summary = inspect(from)?;
    if summary.schema_version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            found: summary.schema_version,
            supported: SCHEMA_VERSION,
        });
    }
    let target = data_dir.join(DB_FILE);
    if target.exists() {
        // A read-only open never writes to the file, and fails while a
        // server holds it.
        let holds_data = match redb::ReadOnlyDatabase::open(&target) {
            Ok(existing) => {
                let read = existing.begin_read()?;
                !tables::Table::<()>::new(TENANTS).is_empty(&read)?
            }
            Err(redb::DatabaseError::DatabaseAlreadyOpen) => {
                return Err(StoreError::Locked(target));
            }
            // Unreadable (damaged, or left mid-crash): treat as data.
            Err(e) => {
                tracing::warn!(error = %e, "the current data file cannot be read");
                true
            }
        };
        if holds_data && !force {
            return Err(StoreError::Conflict(format!(
                "{} already holds data; restoring would replace it. Move it away or pass --force",
                target.display()
            )));
        }
    }
    replace(from, data_dir, &target, summary)
}

fn replace(
    from: &Path,
    data_dir: &Path,
    target: &Path,
    summary: Summary,
) -> Result<Summary, StoreError> {
    if !data_dir.exists() {
        std::fs::create_dir_all(data_dir)?;
        super::restrict_to_owner(data_dir, 0o700)?;
    }
    let tmp = sibling(target, "restoring");
    std::fs::copy(from, &tmp)?;
    super::restrict_to_owner(&tmp, 0o600)?;
    sync_file(&tmp)?;
    // The journal belongs to the store being replaced: replayed on the
    // restored one, its charges would be applied to the wrong state. Gone
    // first, so a crash in between cannot leave that pairing behind.
    super::journal::clear(&data_dir.join(super::journal::JOURNAL_DIR))?;
    std::fs::rename(&tmp, target)?;
    sync_parent(target)?;
    Ok(Summary {
        path: target.to_owned(),
        ..summary
    })
}

/// Reads a backup file's schema version and row counts without changing it.
pub fn inspect(path: &Path) -> Result<Summary, StoreError> {
    if !path.is_file() {
        return Err(StoreError::NotFound(format!(
            "no backup file at {}",
            path.display()
        )));
    }
    let db = redb::ReadOnlyDatabase::open(path).map_err(|e| match e {
        redb::DatabaseError::DatabaseAlreadyOpen => StoreError::Locked(path.to_owned()),
        other => StoreError::Corrupt(format!("{}: {other}", path.display())),
    })?;
    let read = db.begin_read()?;
    let schema_version = migrate::read_version(&read)?.ok_or_else(|| {
        StoreError::Corrupt(format!(
            "{} is not a tollgate backup (no schema version)",
            path.display()
        ))
    })?;
    let mut counts = Vec::new();
    for def in ALL {
        let rows = match read.open_table(*def) {
            Ok(table) => table.len()?,
            Err(redb::TableError::TableDoesNotExist(_)) => 0,
            Err(e) => return Err(e.into()),
        };
        counts.push((def_name(*def), rows));
    }
    Ok(Summary {
        path: path.to_owned(),
        schema_version,
        tables: counts,
    })
}

fn def_name(def: tables::Def) -> String {
    use redb::TableHandle;
    def.name().to_owned()
}

fn sibling(path: &Path, tag: &str) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".{tag}-{}", std::process::id()));
    // Hidden, so a glob over backups does not pick up one being written.
    let name = if name.to_string_lossy().starts_with('.') {
        name
    } else {
        let mut hidden = std::ffi::OsString::from(".");
        hidden.push(name);
        hidden
    };
    path.with_file_name(name)
}

fn sync_file(path: &Path) -> Result<(), StoreError> {
    File::open(path)?.sync_all()?;
    Ok(())
}

fn sync_parent(path: &Path) -> Result<(), StoreError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        File::open(parent)?.sync_all()?;
    }
    Ok(())
}
