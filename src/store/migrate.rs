//! Schema versions and migrations.
//!
//! The schema version lives in the `meta` table. Opening a store creates
//! every table, stamps a new file with [`SCHEMA_VERSION`], runs the migration
//! of each older version in turn, and refuses a newer file without writing to
//! it (an older binary must never rewrite what it does not understand).

use redb::{Database, ReadableTable, WriteTransaction};

use super::StoreError;
use super::tables::{self, ALL, META, META_SCHEMA_VERSION, SCHEMA_VERSION};

/// One migration: upgrades a store by one schema version, in the
/// opening transaction. The list is the domain's (`crate::migrations`):
/// the store only runs it.
pub type Migration = fn(&WriteTransaction) -> Result<(), StoreError>;

/// Creates every table, then runs `migrations[n]` (schema `n + 1` to
/// `n + 2`) from the file's version up to [`SCHEMA_VERSION`].
pub fn prepare(db: &Database, migrations: &[Migration]) -> Result<(), StoreError> {
    let txn = db.begin_write()?;
    let found = read_version(&txn)?;
    if let Some(found) = found
        && found > SCHEMA_VERSION
    {
        // Dropping the transaction aborts it: the file stays untouched.
        return Err(StoreError::NewerSchema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for def in ALL {
        txn.open_table(*def)?;
    }
    let mut version = found.unwrap_or(SCHEMA_VERSION);
    while version < SCHEMA_VERSION {
        let step = migrations.get(version as usize - 1).ok_or_else(|| {
            StoreError::Database(format!(
                "the store is at schema {version} and needs migrating: \
                 open it with the tollgate binary (a server or any command)"
            ))
        })?;
        step(&txn)?;
        version += 1;
    }
    write_version(&txn, version)?;
    txn.commit()?;
    Ok(())
}

pub fn read_version(txn: &impl tables::Reader) -> Result<Option<u32>, StoreError> {
    match txn.get_raw(META, META_SCHEMA_VERSION)? {
        None => Ok(None),
        Some(bytes) => {
            let raw: [u8; 4] = bytes
                .as_slice()
                .try_into()
                .map_err(|_| StoreError::Corrupt("schema version is not 4 bytes".into()))?;
            Ok(Some(u32::from_be_bytes(raw)))
        }
    }
}

fn write_version(txn: &WriteTransaction, version: u32) -> Result<(), StoreError> {
    let mut meta = txn.open_table(META)?;
    let current = meta.get(META_SCHEMA_VERSION)?.map(|v| v.value().to_vec());
    let wanted = version.to_be_bytes();
    if current.as_deref() != Some(wanted.as_slice()) {
        meta.insert(META_SCHEMA_VERSION, wanted.as_slice())?;
    }
    Ok(())
}
