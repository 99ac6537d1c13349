//! Schema versions and migrations.
//!
//! The schema version lives in the `meta` table. Opening a store creates
//! every table, stamps a new file with [`SCHEMA_VERSION`], runs the migration
//! of each older version in turn, and refuses a newer file without writing to
//! it (an older binary must never rewrite what it does not understand).

use redb::{Database, ReadableTable, WriteTransaction};

use super::StoreError;
use super::tables::{self, ALL, META, META_SCHEMA_VERSION, SCHEMA_VERSION};

/// `MIGRATIONS[n]` upgrades a store from version `n + 1` to `n + 2`.
type Migration = fn(&WriteTransaction) -> Result<(), StoreError>;
const MIGRATIONS: &[Migration] = &[
    // 1 -> 2: tenants gain the time their webhook settings last changed.
    crate::tenants::migrate_v1_to_v2,
    // 2 -> 3: the compliance policy gains review expiry, judge switch and
    // high-risk retention.
    crate::tenants::migrate_v2_to_v3,
    // 3 -> 4: the operator tenant is recorded (the first owner's tenant).
    crate::tenants::migrate_v3_to_v4,
    // 4 -> 5: API keys gain a token-per-minute limit (none).
    crate::auth::keys::migrate_v4_to_v5,
    // 5 -> 6: the compliance policy gains PII redaction (`logs` by
    // default) and the tenant's own PII patterns.
    crate::tenants::migrate_pii_policy,
    // 6 -> 7: usage records gain their endpoint (inferred from the audit
    // entry's billed units, else `chat`).
    crate::billing::migrate::migrate_v6_to_v7,
    // 7 -> 8: usage and refusal rollups, built from the stored records.
    crate::billing::rollups::migrate_v7_to_v8,
    // 8 -> 9: usage records, audit entries and conversation records in
    // the compact layout.
    crate::compliance::migrate_v9::migrate_v8_to_v9,
];

pub fn prepare(db: &Database) -> Result<(), StoreError> {
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
        let step = MIGRATIONS
            .get(version as usize - 1)
            .ok_or_else(|| StoreError::Corrupt(format!("no migration from schema {version}")))?;
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
