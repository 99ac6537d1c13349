//! The sub-processor registry (GDPR Article 28): every upstream provider
//! that may receive a tenant's data is a sub-processor.
//!
//! The registry has one version, a counter stored with it and bumped by
//! every change, so a tenant told of a change can tell which list it has
//! read. Each entry records the version at which it last changed. At the
//! first start of a store every configured provider is proposed as an
//! entry; after that only owners change the list, and a provider added to
//! the configuration later is not in the registry until an owner adds it
//! (which a tenant policy with `enforceRegistry` relies on).
//!
//! Every change also keeps a [`Revision`] (the entry as it became, who
//! changed it, when, and how) in its own table, written in the change's
//! transaction and never rewritten: the registry's change history, which
//! every role reads, as it reads the registry. History starts with the
//! build that added the table: a store that already had entries gets one
//! `found` revision per entry at its next start (the entry as it was then,
//! by `system`), not invented revisions for the changes before.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::base::time::{format_rfc3339, now_ms};
use crate::store::tables::{META, SUB_PROCESSOR_HISTORY, SUB_PROCESSORS};
use crate::store::{Reader, Store, StoreError, Table};
use crate::upstream::ProviderConfig;

pub const REGISTRY_TABLE: Table<SubProcessor> = Table::new(SUB_PROCESSORS);
pub const HISTORY_TABLE: Table<Revision> = Table::new(SUB_PROCESSOR_HISTORY);
const META_REGISTRY_VERSION: &[u8] = b"registry_version";
/// When the change history started (big-endian ms): set once, by [`seed`].
const META_HISTORY_SINCE: &[u8] = b"registry_history_since";
/// Revisions answered by one history request at most.
pub const MAX_HISTORY_PAGE: usize = 1000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubProcessor {
    /// The provider id models route to.
    pub name: String,
    /// The legal entity behind it.
    pub legal_name: String,
    /// What it does with the data.
    pub purpose: String,
    /// Where the data is processed (country or region).
    pub location: String,
    /// Categories of personal data it may receive.
    pub data_categories: Vec<String>,
    /// The data-processing agreement, if published.
    pub dpa_url: Option<String>,
    /// `configured` (proposed at first start) or `manual`.
    pub source: String,
    /// The registry version of the entry's last change.
    pub version: u64,
    pub created_at: i64,
    pub updated_at: i64,
}

impl SubProcessor {
    pub fn view(&self) -> Value {
        json!({
            "name": self.name,
            "legalName": self.legal_name,
            "purpose": self.purpose,
            "location": self.location,
            "dataCategories": self.data_categories,
            "dpaUrl": self.dpa_url,
            "source": self.source,
            "version": self.version.to_string(),
            "createdAt": format_rfc3339(self.created_at),
            "updatedAt": format_rfc3339(self.updated_at),
        })
    }
}

/// The fields an owner sets (create and update).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fields {
    pub name: Option<String>,
    pub legal_name: Option<String>,
    pub purpose: Option<String>,
    pub location: Option<String>,
    pub data_categories: Option<Vec<String>>,
    #[serde(default, deserialize_with = "crate::base::json::nullable")]
    pub dpa_url: Option<Option<String>>,
}

/// How a revision came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChangeKind {
    Created,
    Updated,
    Deleted,
    /// The entry as it was when the history started (it predates it).
    Found,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Updated => "updated",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Found => "found",
        }
    }
}

/// Who made a change: the audit log's actor (`account:<id>` or `system`)
/// and, for an account, its e-mail at the time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Author {
    pub actor: String,
    pub email: Option<String>,
}

impl Author {
    pub fn account(id: &str, email: &str) -> Author {
        Author {
            actor: format!("account:{id}"),
            email: Some(email.to_owned()),
        }
    }

    pub fn system() -> Author {
        Author {
            actor: "system".into(),
            email: None,
        }
    }
}

/// One change of one entry, kept for good.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revision {
    pub name: String,
    /// The registry version the change raised it to (for `found`, the
    /// entry's own version then).
    pub version: u64,
    pub kind: ChangeKind,
    /// The entry's fields as they became (for `deleted`, as they were
    /// when it was deleted).
    pub entry: SubProcessor,
    pub by: Author,
    pub at: i64,
}

impl Revision {
    pub fn view(&self) -> Value {
        json!({
            "name": self.name,
            "version": self.version.to_string(),
            "change": self.kind.as_str(),
            "at": format_rfc3339(self.at),
            "actor": self.by.actor,
            "email": self.by.email,
            "entry": self.entry.view(),
        })
    }
}

fn history_key(name: &str, version: u64) -> Vec<u8> {
    // Names hold no NUL (validate_name), so `name\0` prefixes only its own.
    let mut key = Vec::with_capacity(name.len() + 9);
    key.extend_from_slice(name.as_bytes());
    key.push(0);
    key.extend_from_slice(&version.to_be_bytes());
    key
}

/// Keeps one revision of `entry`, as of registry `version`, in the
/// history.
fn keep(
    txn: &redb::WriteTransaction,
    entry: &SubProcessor,
    version: u64,
    kind: ChangeKind,
    by: &Author,
    at: i64,
) -> Result<(), StoreError> {
    let revision = Revision {
        name: entry.name.clone(),
        version,
        kind,
        entry: entry.clone(),
        by: by.clone(),
        at,
    };
    HISTORY_TABLE.put(txn, &history_key(&entry.name, version), &revision)
}

/// Stores `entry` as of registry `version` and keeps its revision.
fn put(
    txn: &redb::WriteTransaction,
    entry: &mut SubProcessor,
    version: u64,
    kind: ChangeKind,
    by: &Author,
    at: i64,
) -> Result<(), StoreError> {
    entry.version = version;
    REGISTRY_TABLE.put(txn, entry.name.as_bytes(), entry)?;
    keep(txn, entry, version, kind, by, at)
}

/// The change history, newest first: one entry's (`name`), or every
/// entry's, at most `limit` revisions. `None` when `name` is neither in
/// the registry nor in its history.
pub fn history(
    tx: &impl Reader,
    name: Option<&str>,
    limit: usize,
) -> Result<Option<Value>, StoreError> {
    let prefix = name.map(|n| {
        let mut p = n.as_bytes().to_vec();
        p.push(0);
        p
    });
    let mut revisions: Vec<Revision> = tx
        .scan_raw(SUB_PROCESSOR_HISTORY)?
        .iter()
        .filter(|(k, _)| prefix.as_ref().is_none_or(|p| k.starts_with(p)))
        .map(|(_, v)| crate::store::codec::decode(v))
        .collect::<Result<_, _>>()?;
    if let Some(name) = name
        && revisions.is_empty()
        && !contains(tx, name)?
    {
        return Ok(None);
    }
    // Registry versions are one counter, so they order every entry's
    // changes; `found` revisions (all written at once) by time, then name.
    revisions.sort_by(|a, b| (b.version, b.at, &b.name).cmp(&(a.version, a.at, &a.name)));
    let more = revisions.len() > limit;
    revisions.truncate(limit);
    let since = tx
        .get_raw(META, META_HISTORY_SINCE)?
        .and_then(|b| b.as_slice().try_into().ok().map(i64::from_be_bytes));
    Ok(Some(json!({
        "historySince": since.map(format_rfc3339),
        "more": more,
        "data": revisions.iter().map(Revision::view).collect::<Vec<_>>(),
    })))
}

/// A committed change, for the event.
#[derive(Debug, Clone)]
pub struct Change {
    pub action: &'static str,
    pub entry: SubProcessor,
    pub version: u64,
    pub at: i64,
}

impl Change {
    pub fn event(&self) -> crate::events::Event {
        crate::events::Event::sub_processor_changed(
            self.action,
            &self.entry.name,
            &self.version.to_string(),
            self.at,
        )
    }
}

pub fn version(tx: &impl Reader) -> Result<u64, StoreError> {
    Ok(tx
        .get_raw(META, META_REGISTRY_VERSION)?
        .and_then(|b| b.as_slice().try_into().ok().map(u64::from_be_bytes))
        .unwrap_or(0))
}

fn bump(txn: &redb::WriteTransaction) -> Result<u64, StoreError> {
    let next = version(txn)? + 1;
    txn.open_table(META)?
        .insert(META_REGISTRY_VERSION, next.to_be_bytes().as_slice())?;
    Ok(next)
}

pub fn list(tx: &impl Reader) -> Result<Vec<SubProcessor>, StoreError> {
    REGISTRY_TABLE.all(tx)
}

pub fn contains(tx: &impl Reader, name: &str) -> Result<bool, StoreError> {
    Ok(REGISTRY_TABLE.get(tx, name.as_bytes())?.is_some())
}

/// `GET /api/v1/sub-processors`.
pub fn view(tx: &impl Reader) -> Result<Value, StoreError> {
    let entries: Vec<Value> = list(tx)?.iter().map(SubProcessor::view).collect();
    Ok(json!({ "version": version(tx)?.to_string(), "subProcessors": entries }))
}

fn text(field: &str, value: Option<String>, max: usize) -> Result<Option<String>, StoreError> {
    value
        .map(|v| {
            let v = v.trim().to_owned();
            if v.is_empty() || v.len() > max || v.chars().any(char::is_control) {
                Err(StoreError::Invalid(format!(
                    "`{field}` must be 1 to {max} printable characters"
                )))
            } else {
                Ok(v)
            }
        })
        .transpose()
}

fn apply(entry: &mut SubProcessor, fields: Fields) -> Result<(), StoreError> {
    if let Some(v) = text("legalName", fields.legal_name, 200)? {
        entry.legal_name = v;
    }
    if let Some(v) = text("purpose", fields.purpose, 1000)? {
        entry.purpose = v;
    }
    if let Some(v) = text("location", fields.location, 200)? {
        entry.location = v;
    }
    if let Some(categories) = fields.data_categories {
        if categories.len() > 50 {
            return Err(StoreError::Invalid("at most 50 `dataCategories`".into()));
        }
        entry.data_categories = categories
            .into_iter()
            .map(|c| text("dataCategories", Some(c), 200).map(Option::unwrap_or_default))
            .collect::<Result<_, _>>()?;
    }
    if let Some(url) = fields.dpa_url {
        entry.dpa_url = match url {
            None => None,
            Some(u) => {
                let parsed = url::Url::parse(u.trim())
                    .ok()
                    .filter(|p| matches!(p.scheme(), "http" | "https"))
                    .ok_or_else(|| StoreError::Invalid("`dpaUrl` must be an http(s) URL".into()))?;
                Some(parsed.to_string())
            }
        };
    }
    Ok(())
}

fn validate_name(name: Option<String>) -> Result<String, StoreError> {
    let name =
        text("name", name, 100)?.ok_or_else(|| StoreError::Invalid("`name` is required".into()))?;
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(StoreError::Invalid(
            "`name` is the provider id: letters, digits, `-`, `_` and `.`".into(),
        ));
    }
    Ok(name)
}

pub async fn create(store: &Store, fields: Fields, by: Author) -> Result<Change, StoreError> {
    let name = validate_name(fields.name.clone())?;
    let now = now_ms();
    let mut entry = SubProcessor {
        name: name.clone(),
        legal_name: name.clone(),
        purpose: "AI model inference".into(),
        location: "unspecified".into(),
        data_categories: vec!["prompts and completions".into()],
        dpa_url: None,
        source: "manual".into(),
        version: 0,
        created_at: now,
        updated_at: now,
    };
    apply(&mut entry, fields)?;
    store
        .write(move |txn| {
            if contains(txn, &entry.name)? {
                return Err(StoreError::Conflict(format!(
                    "the registry already lists `{}`",
                    entry.name
                )));
            }
            let version = bump(txn)?;
            let mut entry = entry.clone();
            put(txn, &mut entry, version, ChangeKind::Created, &by, now)?;
            Ok(Change {
                action: "created",
                entry,
                version,
                at: now,
            })
        })
        .await
}

pub async fn update(
    store: &Store,
    name: &str,
    fields: Fields,
    by: Author,
) -> Result<Change, StoreError> {
    if fields.name.as_deref().is_some_and(|n| n != name) {
        return Err(StoreError::Invalid(
            "`name` cannot be changed; delete the entry and create another".into(),
        ));
    }
    let name = name.to_owned();
    store
        .write(move |txn| {
            let mut entry = REGISTRY_TABLE
                .get(txn, name.as_bytes())?
                .ok_or_else(|| StoreError::NotFound(format!("the registry has no `{name}`")))?;
            apply(&mut entry, fields.clone())?;
            let now = now_ms();
            let version = bump(txn)?;
            entry.updated_at = now;
            put(txn, &mut entry, version, ChangeKind::Updated, &by, now)?;
            Ok(Change {
                action: "updated",
                entry,
                version,
                at: now,
            })
        })
        .await
}

pub async fn delete(store: &Store, name: &str, by: Author) -> Result<Change, StoreError> {
    let name = name.to_owned();
    store
        .write(move |txn| {
            let entry = REGISTRY_TABLE
                .get(txn, name.as_bytes())?
                .ok_or_else(|| StoreError::NotFound(format!("the registry has no `{name}`")))?;
            REGISTRY_TABLE.remove(txn, name.as_bytes())?;
            let version = bump(txn)?;
            let now = now_ms();
            keep(txn, &entry, version, ChangeKind::Deleted, &by, now)?;
            Ok(Change {
                action: "deleted",
                entry,
                version,
                at: now,
            })
        })
        .await
}

/// At the first start of a store (no registry version yet), proposes
/// every configured provider as an entry. Returns the entries created.
///
/// Also starts the change history, once: the proposed entries are its
/// first `created` revisions; a store whose registry predates the history
/// gets one `found` revision per entry instead.
pub async fn seed(store: &Store, providers: &[ProviderConfig]) -> Result<usize, StoreError> {
    let proposed: Vec<SubProcessor> = providers
        .iter()
        .map(|p| {
            let now = now_ms();
            let kind = p.kind.as_str();
            SubProcessor {
                name: p.id.clone(),
                legal_name: format!("{} ({kind} API)", p.id),
                purpose: "AI model inference".into(),
                // A cloud provider's region or location is where the data
                // is processed; otherwise the host is the best the gateway
                // knows (an Azure resource's region is not in its URL).
                location: if let Some(aws) = &p.bedrock {
                    format!("AWS {}", aws.region)
                } else if let Some(vertex) = p.cloud.vertex() {
                    format!("Google Cloud {}", vertex.location)
                } else {
                    p.base_url
                        .as_ref()
                        .and_then(|u| u.host_str().map(str::to_owned))
                        .unwrap_or_else(|| "in-process".into())
                },
                data_categories: vec!["prompts and completions".into()],
                dpa_url: None,
                source: "configured".into(),
                version: 1,
                created_at: now,
                updated_at: now,
            }
        })
        .collect();
    store
        .write(move |txn| {
            let now = now_ms();
            let first = version(txn)? == 0;
            let started = txn.get_raw(META, META_HISTORY_SINCE)?.is_some();
            if !started {
                txn.open_table(META)?
                    .insert(META_HISTORY_SINCE, now.to_be_bytes().as_slice())?;
                if !first {
                    let by = Author::system();
                    for entry in list(txn)? {
                        keep(txn, &entry, entry.version, ChangeKind::Found, &by, now)?;
                    }
                }
            }
            if !first {
                return Ok(0);
            }
            let version = bump(txn)?;
            for entry in &proposed {
                let mut entry = entry.clone();
                let by = Author::system();
                put(txn, &mut entry, version, ChangeKind::Created, &by, now)?;
            }
            Ok(proposed.len())
        })
        .await
}
