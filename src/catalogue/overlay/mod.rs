//! The catalogue as edited from the dashboard: stored entries merged over
//! the configuration's, and the live catalogue the gateway reads.
//!
//! The configuration file stays the base: its entries are listed first, in
//! file order. The `model_overrides` table holds one row per model id the
//! dashboard touched: a full definition (a new model, or an edited or
//! disabled configuration entry) or a removal of a configuration entry.
//! Merging is done at start and after each edit, and the result is swapped
//! in whole, so a request sees either the old catalogue or the new one,
//! never half of an edit. Disabled entries are listed for the dashboard but
//! not served: naming one answers `model_not_found`.
//!
//! Split by concern: [`entry`] (a listed entry and its view), [`rows`]
//! (the stored layout), [`change`] (what an edit asks and its checks); this
//! file is the live catalogue and its merge.

mod change;
mod entry;
mod rows;

use std::sync::{Arc, RwLock};

use change::validate;
pub use change::{ModelChange, PRICING_REFUSED, PricingInput};
pub use entry::{Entry, Source};
pub use rows::{OVERRIDE_TABLE, Row, StoredModel, StoredPricing, StoredRouting};

use super::access::ModelAccess;
use super::settings::{ModelConfig, ModelRouting};
use super::{Catalogue, Model, upstream_name};
use crate::base::time::now_ms;
use crate::store::{Store, StoreError};
use crate::upstream::ProviderConfig;

/// The merged catalogue at one moment.
#[derive(Debug, Default)]
pub struct Listing {
    /// Every entry, enabled or not: configuration order, then dashboard
    /// additions in id order.
    pub entries: Vec<Entry>,
    /// The enabled entries, resolved against their providers.
    pub served: Catalogue,
}

impl Listing {
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.model.id == id)
    }
}

/// The served models one tenant may use.
#[derive(Clone, Copy)]
pub struct TenantCatalogue<'a> {
    catalogue: &'a LiveCatalogue,
    tenant_id: &'a str,
}

impl TenantCatalogue<'_> {
    pub fn get(&self, id: &str) -> Option<Arc<Model>> {
        self.catalogue.get_for(self.tenant_id, id)
    }
}

/// The live catalogue: the configuration's entries, the stored rows, and
/// the current merge of both.
pub struct LiveCatalogue {
    /// Which models each tenant may use.
    pub access: Arc<ModelAccess>,
    providers: Vec<ProviderConfig>,
    configured: Vec<ModelConfig>,
    current: RwLock<Arc<Listing>>,
    /// Edits run one at a time, so each swap installs a merge that includes
    /// every edit committed before it.
    edits: tokio::sync::Mutex<()>,
}

impl LiveCatalogue {
    /// The configuration's catalogue, with nothing stored over it.
    pub fn configured(providers: &[ProviderConfig], models: &[ModelConfig]) -> LiveCatalogue {
        let catalogue = LiveCatalogue {
            access: Arc::default(),
            providers: providers.to_vec(),
            configured: models.to_vec(),
            current: RwLock::default(),
            edits: tokio::sync::Mutex::new(()),
        };
        catalogue.install(catalogue.merge(Vec::new()));
        catalogue
    }

    /// The configuration's catalogue with the stored rows merged over it.
    pub fn load(
        providers: &[ProviderConfig],
        models: &[ModelConfig],
        store: &Store,
    ) -> Result<LiveCatalogue, StoreError> {
        let mut catalogue = LiveCatalogue::configured(providers, models);
        catalogue.reload(store)?;
        catalogue.access = Arc::new(ModelAccess::load(store)?);
        Ok(catalogue)
    }

    /// The current merge; cheap (one `Arc` clone).
    pub fn snapshot(&self) -> Arc<Listing> {
        self.current.read().expect("catalogue lock").clone()
    }

    /// A served (enabled) model by id.
    pub fn get(&self, id: &str) -> Option<Arc<Model>> {
        self.snapshot().served.get(id).cloned()
    }

    /// The served models, in catalogue order.
    pub fn models(&self) -> Vec<Arc<Model>> {
        self.snapshot().served.models().to_vec()
    }

    /// A served model by id, if the tenant may use it: what every
    /// inference route resolves a model name with.
    pub fn get_for(&self, tenant_id: &str, id: &str) -> Option<Arc<Model>> {
        self.get(id).filter(|_| self.access.allows(tenant_id, id))
    }

    /// The catalogue as one tenant sees it.
    pub fn for_tenant<'a>(&'a self, tenant_id: &'a str) -> TenantCatalogue<'a> {
        TenantCatalogue {
            catalogue: self,
            tenant_id,
        }
    }

    /// The served models the tenant may use, in catalogue order.
    pub fn models_for(&self, tenant_id: &str) -> Vec<Arc<Model>> {
        let mut models = self.models();
        models.retain(|m| self.access.allows(tenant_id, &m.id));
        models
    }

    fn install(&self, listing: Listing) {
        *self.current.write().expect("catalogue lock") = Arc::new(listing);
    }

    fn reload(&self, store: &Store) -> Result<(), StoreError> {
        let rows = store.read(|tx| OVERRIDE_TABLE.all(tx))?;
        self.install(self.merge(rows));
        Ok(())
    }

    fn merge(&self, rows: Vec<Row>) -> Listing {
        let mut entries = Vec::new();
        for model in &self.configured {
            let row = rows.iter().find(|r| r.id() == model.id);
            match row.map(|r| (r, r.defined())) {
                Some((_, None)) => {}
                // A row written before routing was stored keeps the
                // file's further deployments, strategy and limits.
                Some((_, Some((m, routing)))) => entries.push(Entry {
                    model: ModelConfig {
                        routing: routing.map_or_else(|| model.routing.clone(), ModelRouting::from),
                        ..m.definition()
                    },
                    enabled: m.enabled,
                    source: Source::Config,
                }),
                None => entries.push(Entry {
                    model: model.clone(),
                    enabled: true,
                    source: Source::Config,
                }),
            }
        }
        for row in &rows {
            if let Some((m, routing)) = row.defined()
                && !self.configured.iter().any(|c| c.id == m.id)
            {
                entries.push(Entry {
                    model: ModelConfig {
                        routing: routing.map(ModelRouting::from).unwrap_or_default(),
                        ..m.definition()
                    },
                    enabled: m.enabled,
                    source: Source::Dashboard,
                });
            }
        }
        entries.retain(|e| {
            let known = self.providers.iter().any(|p| p.id == e.model.provider);
            if !known {
                tracing::warn!(model = %e.model.id, provider = %e.model.provider,
                    "a stored catalogue entry names a provider the configuration no longer has; not serving it");
            }
            known
        });
        // Rows stored before upstream names were checked: listed, so an
        // admin can fix them, but not served.
        for entry in entries.iter_mut().filter(|e| e.enabled) {
            if let Some(why) = self.upstream_refusal(&entry.model.provider, &entry.model.upstream) {
                tracing::warn!(model = %entry.model.id, %why,
                    "a stored catalogue entry has an upstream name that is now refused; not serving it");
                entry.enabled = false;
            }
        }
        let served = Catalogue::from_definitions(
            &self.providers,
            entries.iter().filter(|e| e.enabled).map(|e| &e.model),
        );
        Listing { entries, served }
    }

    /// Why `upstream` cannot name a model of the provider `provider`, if
    /// the provider is known and the name is refused
    /// ([`upstream_name::check`]).
    pub fn upstream_refusal(&self, provider: &str, upstream: &str) -> Option<String> {
        let kind = self.providers.iter().find(|p| p.id == provider)?.kind;
        upstream_name::check(upstream, kind).err()
    }

    /// Adds a model that is not listed yet (a configuration entry deleted
    /// from the dashboard may be added again).
    pub async fn add(&self, store: &Store, model: ModelConfig) -> Result<Entry, StoreError> {
        validate(&model, &self.providers)?;
        let _edit = self.edits.lock().await;
        if self.snapshot().entry(&model.id).is_some() {
            return Err(StoreError::Conflict(format!(
                "the catalogue already has a model `{}`",
                model.id
            )));
        }
        let row = Row::routed(&model, true);
        let id = model.id.clone();
        store
            .write(move |txn| OVERRIDE_TABLE.put(txn, id.as_bytes(), &row))
            .await?;
        self.reload(store)?;
        self.listed(&model.id)
    }

    /// Changes a listed entry; for a configuration entry the result is
    /// stored as an override of it.
    pub async fn change(
        &self,
        store: &Store,
        id: &str,
        change: ModelChange,
    ) -> Result<Entry, StoreError> {
        let _edit = self.edits.lock().await;
        let entry = self.listed(id)?;
        let mut model = entry.model;
        let enabled = change.enabled.unwrap_or(entry.enabled);
        change.apply(&mut model)?;
        validate(&model, &self.providers)?;
        let row = Row::routed(&model, enabled);
        let key = id.to_owned();
        store
            .write(move |txn| OVERRIDE_TABLE.put(txn, key.as_bytes(), &row))
            .await?;
        self.reload(store)?;
        self.listed(id)
    }

    /// Deletes an entry: a dashboard entry's row goes; a configuration
    /// entry is remembered as removed, so it stays gone after a restart.
    pub async fn remove(&self, store: &Store, id: &str) -> Result<(), StoreError> {
        let _edit = self.edits.lock().await;
        let entry = self.listed(id)?;
        let key = id.to_owned();
        let source = entry.source;
        store
            .write(move |txn| match source {
                Source::Config => OVERRIDE_TABLE.put(
                    txn,
                    key.as_bytes(),
                    &Row::Removed {
                        id: key.clone(),
                        at: now_ms(),
                    },
                ),
                Source::Dashboard => OVERRIDE_TABLE.remove(txn, key.as_bytes()).map(|_| ()),
            })
            .await?;
        self.reload(store)
    }

    fn listed(&self, id: &str) -> Result<Entry, StoreError> {
        self.snapshot()
            .entry(id)
            .cloned()
            .ok_or_else(|| StoreError::NotFound(format!("no model `{id}` in the catalogue")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, Overrides, load};

    fn demo_config() -> Config {
        load(None, &|_| None, &[], &Overrides::default()).expect("the embedded configuration")
    }

    fn served_ids(catalogue: &LiveCatalogue) -> Vec<String> {
        catalogue.models().iter().map(|m| m.id.clone()).collect()
    }

    #[tokio::test]
    async fn edits_merge_over_the_configuration_and_survive_a_reload() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let config = demo_config();
        let live = LiveCatalogue::load(&config.providers, &config.models, &store).unwrap();
        let configured: Vec<String> = config.models.iter().map(|m| m.id.clone()).collect();
        assert_eq!(served_ids(&live), configured);
        // What is served after the edits below: the configuration's
        // entries but the disabled and the removed one, then the added one.
        let edited: Vec<String> = configured
            .iter()
            .filter(|id| *id != "mock-vision" && *id != "mock-omni")
            .cloned()
            .chain(["added".to_owned()])
            .collect();

        let mut added = config.models[0].clone();
        added.id = "added".into();
        live.add(&store, added.clone()).await.unwrap();
        live.change(
            &store,
            "mock-vision",
            ModelChange {
                enabled: Some(false),
                context_window: Some(77),
                ..ModelChange::default()
            },
        )
        .await
        .unwrap();
        live.remove(&store, "mock-omni").await.unwrap();
        assert_eq!(served_ids(&live), edited);
        assert!(live.get("mock-vision").is_none());
        let vision = live.snapshot().entry("mock-vision").cloned().unwrap();
        assert_eq!(
            (vision.enabled, vision.source, vision.model.context_window),
            (false, Source::Config, 77)
        );

        // A new process: the same merge from the stored rows.
        let again = LiveCatalogue::load(&config.providers, &config.models, &store).unwrap();
        let ids = |l: &LiveCatalogue| -> Vec<(String, bool, &'static str)> {
            l.snapshot()
                .entries
                .iter()
                .map(|e| (e.model.id.clone(), e.enabled, e.source.as_str()))
                .collect()
        };
        assert_eq!(ids(&again), ids(&live));
        assert_eq!(served_ids(&again), edited);

        // Refusals: a taken id, an unknown provider, an empty capability
        // list, a missing entry.
        assert!(matches!(
            live.add(&store, added.clone()).await,
            Err(StoreError::Conflict(_))
        ));
        let mut stray = added.clone();
        stray.id = "stray".into();
        stray.provider = "nowhere".into();
        assert!(matches!(
            live.add(&store, stray).await,
            Err(StoreError::Invalid(_))
        ));
        let empty = ModelChange {
            input: Some(Vec::new()),
            ..ModelChange::default()
        };
        assert!(matches!(
            live.change(&store, "added", empty).await,
            Err(StoreError::Invalid(_))
        ));
        assert!(matches!(
            live.remove(&store, "mock-omni").await,
            Err(StoreError::NotFound(_))
        ));
        assert_eq!(served_ids(&live), edited);
    }

    #[tokio::test]
    async fn a_stored_entry_whose_upstream_name_is_now_refused_is_listed_but_not_served() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut config = demo_config();
        let mut gemini = config.providers[0].clone();
        gemini.id = "google".into();
        gemini.kind = super::super::ProviderKind::Gemini;
        gemini.base_url = Some(
            "https://generativelanguage.googleapis.com/v1beta"
                .parse()
                .unwrap(),
        );
        config.providers.push(gemini);
        // Written by a version that did not check names.
        let mut model = config.models[0].clone();
        model.id = "sneaky".into();
        model.provider = "google".into();
        model.upstream = "x/../../other".into();
        let row = Row::Defined(StoredModel::new(&model, true));
        store
            .write(move |txn| OVERRIDE_TABLE.put(txn, b"sneaky", &row))
            .await
            .unwrap();

        let live = LiveCatalogue::load(&config.providers, &config.models, &store).unwrap();
        assert!(live.get("sneaky").is_none(), "served a refused name");
        let listed = live.snapshot().entry("sneaky").cloned().unwrap();
        assert!(!listed.enabled);

        // An admin fixes it, and it is served again.
        let fixed = ModelChange {
            upstream: Some("gemini-2.0-flash".into()),
            enabled: Some(true),
            ..ModelChange::default()
        };
        live.change(&store, "sneaky", fixed).await.unwrap();
        assert_eq!(live.get("sneaky").unwrap().upstream, "gemini-2.0-flash");
    }
}
