//! Online backup and offline restore.
//!
//! Backup copies every table from one read transaction (a consistent MVCC
//! snapshot that the writer keeps writing past) into a new redb file, which
//! is fsynced and renamed into place, so a backup file is either complete or
//! absent. Copying the live file instead could tear a commit in half.
//!
//! Restore refuses a backup from a newer schema, refuses to run while a
//! server has the target open, and refuses to replace a store holding data
//! unless forced. It replaces the file atomically (copy beside, fsync,
//! rename).

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

pub fn snapshot(db: &Database, out: &Path) -> Result<Summary, StoreError> {
    let read = db.begin_read()?;
    let schema_version = migrate::read_version(&read)?.unwrap_or(SCHEMA_VERSION);
    let tmp = sibling(out, "partial");
    let _ = std::fs::remove_file(&tmp);
    let mut counts = Vec::new();
    {
        let target = Database::create(&tmp)?;
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
    // A backup holds hashes, digests and signing secrets: owner only.
    super::restrict_to_owner(&tmp, 0o600)?;
    sync_file(&tmp)?;
    std::fs::rename(&tmp, out)?;
    sync_parent(out)?;
    Ok(Summary {
        path: out.to_owned(),
        schema_version,
        tables: counts,
    })
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
