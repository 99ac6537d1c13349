//! Tables kept open across the charges of one writer batch.
//!
//! redb's `open_table` looks the table up in the transaction's table tree,
//! and dropping the table writes its root back; a charge touches nine
//! tables and opened them thirteen times, and a batch holds many charges
//! (a fifth of the writer's time went there, docs/benchmarks.md). A
//! [`Tables`] opens each table the first time a charge of the batch uses it
//! and keeps it until the batch is applied; a job that works on the raw
//! transaction asks for it through [`Tables::txn`], which closes them first
//! (redb refuses to open a table twice).
//!
//! [`Writes`] is what the charge path needs (reads, inserts, removals, the
//! last row of a table): implemented by the raw transaction, which opens the
//! table per call as before, and by [`Tables`].

use std::cell::RefCell;

use redb::{ReadableTable, TableHandle, WriteTransaction};

use super::StoreError;
use super::tables::{Def, Reader, Rows};

/// Write access shared by a write transaction and a batch's open tables.
pub trait Writes: Reader {
    fn insert_raw(&self, def: Def, key: &[u8], value: &[u8]) -> Result<(), StoreError>;
    /// Whether a row was there.
    fn remove_raw(&self, def: Def, key: &[u8]) -> Result<bool, StoreError>;
    /// The row with the greatest key.
    fn last_raw(&self, def: Def) -> Result<Option<Row>, StoreError>;
}

impl Writes for WriteTransaction {
    fn insert_raw(&self, def: Def, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.open_table(def)?.insert(key, value)?;
        Ok(())
    }
    fn remove_raw(&self, def: Def, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.open_table(def)?.remove(key)?.is_some())
    }
    fn last_raw(&self, def: Def) -> Result<Option<Row>, StoreError> {
        let table = self.open_table(def)?;
        let last = table.last()?;
        Ok(last.map(|(k, v)| (k.value().to_vec(), v.value().to_vec())))
    }
}

/// One raw row: key, value.
pub type Row = (Vec<u8>, Vec<u8>);

type Open<'t> = redb::Table<'t, &'static [u8], &'static [u8]>;

/// The tables a batch has opened in its write transaction.
pub struct Tables<'t> {
    txn: &'t WriteTransaction,
    open: RefCell<Vec<(String, Open<'t>)>>,
}

impl<'t> Tables<'t> {
    pub fn new(txn: &'t WriteTransaction) -> Tables<'t> {
        Tables {
            txn,
            open: RefCell::new(Vec::new()),
        }
    }

    /// The raw transaction, every table closed first: for work that opens
    /// tables itself. Tables used after it are opened again.
    pub fn txn(&self) -> &'t WriteTransaction {
        self.open.borrow_mut().clear();
        self.txn
    }

    /// Runs `f` on the table, opened on first use. `f` must not use these
    /// tables again (it holds them).
    fn with<R>(
        &self,
        def: Def,
        f: impl FnOnce(&mut Open<'t>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let mut open = self.open.borrow_mut();
        let at = match open.iter().position(|(name, _)| name == def.name()) {
            Some(at) => at,
            None => {
                open.push((def.name().to_owned(), self.txn.open_table(def)?));
                open.len() - 1
            }
        };
        f(&mut open[at].1)
    }
}

impl Reader for Tables<'_> {
    fn get_raw(&self, def: Def, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.with(def, |table| Ok(table.get(key)?.map(|v| v.value().to_vec())))
    }
    fn scan_raw(&self, def: Def) -> Result<Rows, StoreError> {
        self.with(def, |table| {
            let mut out = Vec::new();
            for item in table.iter()? {
                let (k, v) = item?;
                out.push((k.value().to_vec(), v.value().to_vec()));
            }
            Ok(out)
        })
    }
}

impl Writes for Tables<'_> {
    fn insert_raw(&self, def: Def, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.with(def, |table| {
            table.insert(key, value)?;
            Ok(())
        })
    }
    fn remove_raw(&self, def: Def, key: &[u8]) -> Result<bool, StoreError> {
        self.with(def, |table| Ok(table.remove(key)?.is_some()))
    }
    fn last_raw(&self, def: Def) -> Result<Option<Row>, StoreError> {
        self.with(def, |table| {
            let last = table.last()?;
            Ok(last.map(|(k, v)| (k.value().to_vec(), v.value().to_vec())))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tables::META;

    #[test]
    fn tables_stay_open_until_the_raw_transaction_is_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let db = redb::Database::create(dir.path().join("t.redb")).unwrap();
        let txn = db.begin_write().unwrap();
        let tables = Tables::new(&txn);
        tables.insert_raw(META, b"a", b"1").unwrap();
        tables.insert_raw(META, b"c", b"3").unwrap();
        assert_eq!(tables.get_raw(META, b"a").unwrap(), Some(b"1".to_vec()));
        // Open: the raw transaction cannot open it again behind its back.
        assert!(txn.open_table(META).is_err());
        // Asked for, they close; what the raw transaction writes is read
        // through them afterwards.
        tables
            .txn()
            .open_table(META)
            .unwrap()
            .insert(b"b".as_slice(), b"2".as_slice())
            .unwrap();
        assert_eq!(tables.get_raw(META, b"b").unwrap(), Some(b"2".to_vec()));
        assert_eq!(
            tables.last_raw(META).unwrap(),
            Some((b"c".to_vec(), b"3".to_vec()))
        );
        assert!(tables.remove_raw(META, b"c").unwrap());
        assert!(!tables.remove_raw(META, b"c").unwrap());
        assert_eq!(tables.scan_raw(META).unwrap().len(), 2);
        drop(tables);
        txn.commit().unwrap();
        // The raw transaction's implementation reads the same rows.
        let txn = db.begin_write().unwrap();
        assert_eq!(
            Writes::last_raw(&txn, META).unwrap(),
            Some((b"b".to_vec(), b"2".to_vec()))
        );
    }
}
