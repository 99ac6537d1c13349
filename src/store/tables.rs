//! Every redb table, in one place.
//!
//! All tables map bytes to bytes: keys are chosen per table (ids as UTF-8,
//! digests raw, times big-endian so ranges scan in order) and values go
//! through the one codec. One uniform shape lets backup copy every table
//! without knowing what it holds; [`Table`] adds the typing back.

use std::marker::PhantomData;

use redb::{ReadableTable, TableDefinition, WriteTransaction};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::compact::{self, Compact};
pub use super::opened::{Tables, Writes};
use super::{StoreError, codec};

/// Raw (key, value) rows of a table scan.
pub type Rows = Vec<(Vec<u8>, Vec<u8>)>;

pub type Def = TableDefinition<'static, &'static [u8], &'static [u8]>;

/// The schema this build writes. Raise it with a migration in `migrate.rs`.
pub const SCHEMA_VERSION: u32 = 10;

/// Store-wide facts: schema version, first-start marker, readiness probe.
pub const META: Def = TableDefinition::new("meta");
/// tenant id -> `Tenant`
pub const TENANTS: Def = TableDefinition::new("tenants");
/// tenant name -> tenant id
pub const TENANT_NAMES: Def = TableDefinition::new("tenant_names");
/// key id -> `ApiKey`
pub const API_KEYS: Def = TableDefinition::new("api_keys");
/// SHA-256 of the key value -> key id
pub const KEY_DIGESTS: Def = TableDefinition::new("key_digests");
/// account id -> `Account`
pub const ACCOUNTS: Def = TableDefinition::new("accounts");
/// lower-cased email -> account id
pub const ACCOUNT_EMAILS: Def = TableDefinition::new("account_emails");
/// SHA-256 of the session token -> `Session`
pub const SESSIONS: Def = TableDefinition::new("sessions");

/// old key id -> the key id it was rotated to
pub const KEY_ROTATIONS: Def = TableDefinition::new("key_rotations");
/// time (big-endian ms) + request id (`compact::id_bytes`) ->
/// `UsageRecord` in the compact layout (schema 9)
pub const USAGE: Def = TableDefinition::new("usage");
/// day (big-endian u32, days since 1970) + tenant id `\0` key id `\0`
/// model `\0` endpoint -> `rollups::Rollup`: the usage records' sums, kept
/// in the charge's transaction and never pruned (schema 8)
pub const USAGE_ROLLUPS: Def = TableDefinition::new("usage_rollups");
/// day (big-endian u32) + tenant id `\0` actor `\0` endpoint -> count
/// (u64): refused inference requests (schema 8)
pub const ERROR_ROLLUPS: Def = TableDefinition::new("error_rollups");
/// time (big-endian ms) + sequence (big-endian) -> `StoredEvent` (outbox)
pub const EVENTS: Def = TableDefinition::new("events");
/// the outbox row's key, or time (big-endian ms) + (2^63 | n) for an event
/// saved at shutdown -> `StoredEvent`: events not yet handed to delivery
/// (spend events from their charge's transaction, any queued event at
/// shutdown); the dispatcher delivers them after a restart
pub const EVENTS_PENDING: Def = TableDefinition::new("events_pending");
/// time (big-endian ms) + entry id -> `WalletEntry` (top-ups)
pub const WALLET_ENTRIES: Def = TableDefinition::new("wallet_entries");
/// `<tenant id>/<YYYY-MM-DD>/<counter>` -> count (big-endian u32): durable
/// per-day counters such as the free tier's multimodal cap
pub const DAY_COUNTS: Def = TableDefinition::new("day_counts");
/// sequence number (big-endian u64) -> `audit::Entry` (hash-chained; the
/// compact layout, without the link, from schema 9)
pub const AUDIT: Def = TableDefinition::new("audit");
/// time (big-endian ms) + request id (`compact::id_bytes`) ->
/// `conversations::Conversation` in the compact layout (schema 9; its
/// bodies compressed from schema 10)
pub const CONVERSATIONS: Def = TableDefinition::new("conversations");
/// expiry (big-endian ms) + the conversation's key -> empty (schema 9)
pub const CONVERSATION_EXPIRY: Def = TableDefinition::new("conversation_expiry");
/// review id -> `reviews::Review`
pub const REVIEWS: Def = TableDefinition::new("reviews");
/// incident id -> `incidents::Incident`
pub const INCIDENTS: Def = TableDefinition::new("incidents");
/// entry name -> `registry::SubProcessor`
pub const SUB_PROCESSORS: Def = TableDefinition::new("sub_processors");
/// entry name + `\0` + registry version (big-endian u64) ->
/// `registry::Revision`: each change of an entry, never rewritten
pub const SUB_PROCESSOR_HISTORY: Def = TableDefinition::new("sub_processor_history");
/// consent id -> `consents::Consent`
pub const CONSENTS: Def = TableDefinition::new("consents");
/// model id -> `catalogue::overlay::Row`: catalogue entries added, edited,
/// disabled or deleted from the dashboard, merged over the configuration's
pub const MODEL_OVERRIDES: Def = TableDefinition::new("model_overrides");
/// tenant id -> the catalogue model ids the tenant may use (`Vec<String>`);
/// a tenant without a row may use every served model
pub const TENANT_MODELS: Def = TableDefinition::new("tenant_models");
/// tenant id + `\0` + response id -> `responses::stored::StoredResponse`:
/// the conversation behind a response made by translation, for
/// `previous_response_id`
pub const RESPONSES: Def = TableDefinition::new("responses");
/// expiry (big-endian ms) + the response's key -> the response's key
pub const RESPONSE_EXPIRY: Def = TableDefinition::new("response_expiry");

/// Every table, for creation at open and for backup.
pub const ALL: &[Def] = &[
    META,
    TENANTS,
    TENANT_NAMES,
    API_KEYS,
    KEY_DIGESTS,
    ACCOUNTS,
    ACCOUNT_EMAILS,
    SESSIONS,
    KEY_ROTATIONS,
    USAGE,
    USAGE_ROLLUPS,
    ERROR_ROLLUPS,
    EVENTS,
    EVENTS_PENDING,
    WALLET_ENTRIES,
    DAY_COUNTS,
    AUDIT,
    CONVERSATIONS,
    CONVERSATION_EXPIRY,
    REVIEWS,
    INCIDENTS,
    SUB_PROCESSORS,
    SUB_PROCESSOR_HISTORY,
    CONSENTS,
    MODEL_OVERRIDES,
    TENANT_MODELS,
    RESPONSES,
    RESPONSE_EXPIRY,
];

pub const META_SCHEMA_VERSION: &[u8] = b"schema_version";
pub const META_INITIALIZED: &[u8] = b"initialized";
pub const META_READY_PROBE: &[u8] = b"ready_probe";
/// The id of the operator tenant (the one made at first start).
pub const META_OPERATOR_TENANT: &[u8] = b"operator_tenant";

/// Read access shared by read and write transactions.
pub trait Reader {
    fn get_raw(&self, def: Def, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    fn scan_raw(&self, def: Def) -> Result<Rows, StoreError>;
}

fn collect<T: ReadableTable<&'static [u8], &'static [u8]>>(table: &T) -> Result<Rows, StoreError> {
    let mut out = Vec::new();
    for item in table.iter()? {
        let (k, v) = item?;
        out.push((k.value().to_vec(), v.value().to_vec()));
    }
    Ok(out)
}

// A read transaction on a file whose table was never created (an old or a
// foreign file) reads it as empty, as a write transaction would.
impl Reader for redb::ReadTransaction {
    fn get_raw(&self, def: Def, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        match self.open_table(def) {
            Ok(table) => Ok(table.get(key)?.map(|v| v.value().to_vec())),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
    fn scan_raw(&self, def: Def) -> Result<Rows, StoreError> {
        match self.open_table(def) {
            Ok(table) => collect(&table),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }
}

impl Reader for WriteTransaction {
    fn get_raw(&self, def: Def, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let table = self.open_table(def)?;
        Ok(table.get(key)?.map(|v| v.value().to_vec()))
    }
    fn scan_raw(&self, def: Def) -> Result<Rows, StoreError> {
        collect(&self.open_table(def)?)
    }
}

/// A table with typed values.
pub struct Table<V> {
    pub def: Def,
    _value: PhantomData<fn() -> V>,
}

impl<V: Serialize + DeserializeOwned> Table<V> {
    pub const fn new(def: Def) -> Self {
        Table {
            def,
            _value: PhantomData,
        }
    }

    pub fn get(&self, tx: &impl Reader, key: &[u8]) -> Result<Option<V>, StoreError> {
        tx.get_raw(self.def, key)?
            .map(|bytes| codec::decode(&bytes))
            .transpose()
    }

    pub fn all(&self, tx: &impl Reader) -> Result<Vec<V>, StoreError> {
        tx.scan_raw(self.def)?
            .iter()
            .map(|(_, v)| codec::decode(v))
            .collect()
    }

    pub fn is_empty(&self, tx: &impl Reader) -> Result<bool, StoreError> {
        Ok(tx.scan_raw(self.def)?.is_empty())
    }

    pub fn put(&self, tx: &impl Writes, key: &[u8], value: &V) -> Result<(), StoreError> {
        tx.insert_raw(self.def, key, &codec::encode(value))
    }

    pub fn remove(&self, tx: &impl Writes, key: &[u8]) -> Result<bool, StoreError> {
        tx.remove_raw(self.def, key)
    }
}

/// A table of records with a compact layout ([`compact`]): the row's key
/// is handed to the decoder, so a value need not repeat it.
pub struct CompactTable<V> {
    pub def: Def,
    _value: PhantomData<fn() -> V>,
}

impl<V: Compact> CompactTable<V> {
    pub const fn new(def: Def) -> Self {
        CompactTable {
            def,
            _value: PhantomData,
        }
    }

    pub fn get(&self, tx: &impl Reader, key: &[u8]) -> Result<Option<V>, StoreError> {
        tx.get_raw(self.def, key)?
            .map(|bytes| compact::decode(key, &bytes))
            .transpose()
    }

    pub fn all(&self, tx: &impl Reader) -> Result<Vec<V>, StoreError> {
        tx.scan_raw(self.def)?
            .iter()
            .map(|(k, v)| compact::decode(k, v))
            .collect()
    }

    pub fn put(&self, tx: &impl Writes, key: &[u8], value: &V) -> Result<(), StoreError> {
        tx.insert_raw(self.def, key, &compact::encode(value))
    }

    pub fn remove(&self, tx: &impl Writes, key: &[u8]) -> Result<bool, StoreError> {
        tx.remove_raw(self.def, key)
    }
}

/// Raw-valued index tables (name -> id and the like).
pub fn index_get(tx: &impl Reader, def: Def, key: &[u8]) -> Result<Option<String>, StoreError> {
    tx.get_raw(def, key)?
        .map(|v| {
            String::from_utf8(v).map_err(|_| StoreError::Corrupt("index value is not UTF-8".into()))
        })
        .transpose()
}

pub fn index_put(tx: &impl Writes, def: Def, key: &[u8], id: &str) -> Result<(), StoreError> {
    tx.insert_raw(def, key, id.as_bytes())
}

pub fn index_remove(tx: &impl Writes, def: Def, key: &[u8]) -> Result<(), StoreError> {
    tx.remove_raw(def, key).map(|_| ())
}
