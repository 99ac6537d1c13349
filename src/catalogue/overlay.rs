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

use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::access::ModelAccess;
use super::settings::{DeploymentConfig, ModelConfig, ModelRouting};
use super::{Capability, Catalogue, Model, Pricing, Strategy, upstream_name};
use crate::base::money::credits_to_micros;
use crate::base::time::now_ms;
use crate::store::tables::MODEL_OVERRIDES;
use crate::store::{Store, StoreError, Table};
use crate::upstream::ProviderConfig;

pub const OVERRIDE_TABLE: Table<Row> = Table::new(MODEL_OVERRIDES);

/// Where an entry was first defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Config,
    Dashboard,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Config => "config",
            Source::Dashboard => "dashboard",
        }
    }
}

/// One listed entry: its definition, whether it is served, its origin.
#[derive(Debug, Clone)]
pub struct Entry {
    pub model: ModelConfig,
    pub enabled: bool,
    pub source: Source,
}

impl Entry {
    pub fn view(&self) -> Value {
        let m = &self.model;
        json!({
            "id": m.id,
            "provider": m.provider,
            "upstream": m.upstream,
            "deployments": m.deployments().iter().map(|d| json!({
                "provider": d.provider,
                "upstream": d.upstream,
                "weight": d.weight,
            })).collect::<Vec<_>>(),
            "strategy": m.routing.strategy.as_str(),
            "rpmLimit": m.routing.rpm_limit,
            "tpmLimit": m.routing.tpm_limit,
            "inputCapabilities": m.input,
            "outputCapabilities": m.output,
            "contextWindow": m.context_window,
            "maxOutputTokens": m.max_output_tokens,
            "pricing": m.pricing.view(),
            "enabled": self.enabled,
            "source": self.source.as_str(),
        })
    }
}

/// A stored row of `model_overrides`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Row {
    Defined(StoredModel),
    /// A configuration entry deleted from the dashboard.
    Removed {
        id: String,
        at: i64,
    },
    /// A full definition with its routing (written since schema 5; a
    /// `Defined` row keeps the file's routing, or has one deployment).
    Routed(StoredModel, StoredRouting),
}

/// [`ModelRouting`] in the store's layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRouting {
    pub primary_weight: u32,
    /// (provider, upstream, weight) of the deployments after the first.
    pub more: Vec<(String, String, u32)>,
    pub strategy: Strategy,
    pub request_timeout_ms: Option<u64>,
    pub rpm_limit: Option<u32>,
    pub tpm_limit: Option<u64>,
}

impl From<&ModelRouting> for StoredRouting {
    fn from(r: &ModelRouting) -> Self {
        StoredRouting {
            primary_weight: r.primary_weight,
            more: r
                .more
                .iter()
                .map(|d| (d.provider.clone(), d.upstream.clone(), d.weight))
                .collect(),
            strategy: r.strategy,
            request_timeout_ms: r.request_timeout.map(|t| t.as_millis() as u64),
            rpm_limit: r.rpm_limit,
            tpm_limit: r.tpm_limit,
        }
    }
}

impl From<&StoredRouting> for ModelRouting {
    fn from(r: &StoredRouting) -> Self {
        ModelRouting {
            primary_weight: r.primary_weight,
            more: r
                .more
                .iter()
                .map(|(provider, upstream, weight)| DeploymentConfig {
                    provider: provider.clone(),
                    upstream: upstream.clone(),
                    weight: *weight,
                })
                .collect(),
            strategy: r.strategy,
            request_timeout: r.request_timeout_ms.map(std::time::Duration::from_millis),
            rpm_limit: r.rpm_limit,
            tpm_limit: r.tpm_limit,
        }
    }
}

impl Row {
    fn id(&self) -> &str {
        match self {
            Row::Defined(m) | Row::Routed(m, _) => &m.id,
            Row::Removed { id, .. } => id,
        }
    }

    /// A stored definition and its routing, if any (`None` for a
    /// `Defined` row: the file's routing, or one deployment).
    fn defined(&self) -> Option<(&StoredModel, Option<&StoredRouting>)> {
        match self {
            Row::Defined(m) => Some((m, None)),
            Row::Routed(m, r) => Some((m, Some(r))),
            Row::Removed { .. } => None,
        }
    }

    fn routed(model: &ModelConfig, enabled: bool) -> Row {
        Row::Routed(
            StoredModel::new(model, enabled),
            StoredRouting::from(&model.routing),
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredModel {
    pub id: String,
    pub provider: String,
    pub upstream: String,
    pub input: Vec<Capability>,
    pub output: Vec<Capability>,
    pub context_window: u32,
    pub max_output_tokens: Option<u32>,
    pub pricing: StoredPricing,
    pub enabled: bool,
    pub updated_at: i64,
}

/// [`Pricing`] in the store's layout: the codec cannot read serde's
/// internally tagged enums back, so the stored form is externally tagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StoredPricing {
    PerToken {
        input_per_million: u64,
        output_per_million: u64,
        cached_input_per_million: Option<u64>,
    },
    PerImage(u64),
    PerSecond(u64),
    PerMinute(u64),
    PerCharacter(u64),
    PerRequest(u64),
}

impl From<Pricing> for StoredPricing {
    fn from(p: Pricing) -> Self {
        match p {
            Pricing::PerToken {
                input_per_million,
                output_per_million,
                cached_input_per_million,
            } => StoredPricing::PerToken {
                input_per_million,
                output_per_million,
                cached_input_per_million,
            },
            Pricing::PerImage { per_image } => StoredPricing::PerImage(per_image),
            Pricing::PerSecond { per_second } => StoredPricing::PerSecond(per_second),
            Pricing::PerMinute { per_minute } => StoredPricing::PerMinute(per_minute),
            Pricing::PerCharacter {
                per_million_characters,
            } => StoredPricing::PerCharacter(per_million_characters),
            Pricing::PerRequest { per_request } => StoredPricing::PerRequest(per_request),
        }
    }
}

impl From<StoredPricing> for Pricing {
    fn from(p: StoredPricing) -> Self {
        match p {
            StoredPricing::PerToken {
                input_per_million,
                output_per_million,
                cached_input_per_million,
            } => Pricing::PerToken {
                input_per_million,
                output_per_million,
                cached_input_per_million,
            },
            StoredPricing::PerImage(per_image) => Pricing::PerImage { per_image },
            StoredPricing::PerSecond(per_second) => Pricing::PerSecond { per_second },
            StoredPricing::PerMinute(per_minute) => Pricing::PerMinute { per_minute },
            StoredPricing::PerCharacter(per_million_characters) => Pricing::PerCharacter {
                per_million_characters,
            },
            StoredPricing::PerRequest(per_request) => Pricing::PerRequest { per_request },
        }
    }
}

impl StoredModel {
    fn new(model: &ModelConfig, enabled: bool) -> StoredModel {
        StoredModel {
            id: model.id.clone(),
            provider: model.provider.clone(),
            upstream: model.upstream.clone(),
            input: model.input.clone(),
            output: model.output.clone(),
            context_window: model.context_window,
            max_output_tokens: model.max_output_tokens,
            pricing: model.pricing.into(),
            enabled,
            updated_at: now_ms(),
        }
    }

    fn definition(&self) -> ModelConfig {
        ModelConfig {
            id: self.id.clone(),
            provider: self.provider.clone(),
            upstream: self.upstream.clone(),
            input: self.input.clone(),
            output: self.output.clone(),
            context_window: self.context_window,
            max_output_tokens: self.max_output_tokens,
            pricing: self.pricing.into(),
            routing: ModelRouting::default(),
        }
    }
}

/// Pricing as the API takes it: the shape of [`Pricing::view`], amounts in
/// credits.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "unit", rename_all = "snake_case", deny_unknown_fields)]
#[allow(clippy::enum_variant_names)] // the names are the API's `unit` values
pub enum PricingInput {
    PerToken {
        input_per_million: f64,
        output_per_million: f64,
        #[serde(default)]
        cached_input_per_million: Option<f64>,
    },
    PerImage {
        per_image: f64,
    },
    PerSecond {
        per_second: f64,
    },
    PerMinute {
        per_minute: f64,
    },
    PerCharacter {
        per_million_characters: f64,
    },
    PerRequest {
        per_request: f64,
    },
}

impl PricingInput {
    /// Amounts to micro-credits, refusing what cannot be money (negative,
    /// not finite, too large), as configuration loading does.
    pub fn to_pricing(&self) -> Result<Pricing, String> {
        self.priced(|v, field| credits_to_micros(v).map_err(|e| format!("`pricing.{field}`: {e}")))
    }

    /// The pricing with each amount converted by `price` (given the amount
    /// and its field name), the configuration file's way or the API's.
    pub fn priced<E>(&self, price: impl Fn(f64, &str) -> Result<u64, E>) -> Result<Pricing, E> {
        Ok(match *self {
            PricingInput::PerToken {
                input_per_million,
                output_per_million,
                cached_input_per_million,
            } => Pricing::PerToken {
                input_per_million: price(input_per_million, "input_per_million")?,
                output_per_million: price(output_per_million, "output_per_million")?,
                cached_input_per_million: cached_input_per_million
                    .map(|v| price(v, "cached_input_per_million"))
                    .transpose()?,
            },
            PricingInput::PerImage { per_image } => Pricing::PerImage {
                per_image: price(per_image, "per_image")?,
            },
            PricingInput::PerSecond { per_second } => Pricing::PerSecond {
                per_second: price(per_second, "per_second")?,
            },
            PricingInput::PerMinute { per_minute } => Pricing::PerMinute {
                per_minute: price(per_minute, "per_minute")?,
            },
            PricingInput::PerCharacter {
                per_million_characters,
            } => Pricing::PerCharacter {
                per_million_characters: price(per_million_characters, "per_million_characters")?,
            },
            PricingInput::PerRequest { per_request } => Pricing::PerRequest {
                per_request: price(per_request, "per_request")?,
            },
        })
    }
}

/// A change to an entry: `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct ModelChange {
    pub provider: Option<String>,
    pub upstream: Option<String>,
    pub input: Option<Vec<Capability>>,
    pub output: Option<Vec<Capability>>,
    pub context_window: Option<u32>,
    /// `Some(None)` clears it.
    pub max_output_tokens: Option<Option<u32>>,
    pub pricing: Option<Pricing>,
    pub enabled: Option<bool>,
    /// Replaces every deployment (the first becomes `provider` +
    /// `upstream`).
    pub deployments: Option<Vec<DeploymentConfig>>,
    pub strategy: Option<Strategy>,
    /// `Some(None)` clears it.
    pub rpm_limit: Option<Option<u32>>,
    pub tpm_limit: Option<Option<u64>>,
}

/// The longest model id accepted from the dashboard.
const MAX_ID_LEN: usize = 200;

/// How a refusal of the pricing begins, so the API can name the field.
pub const PRICING_REFUSED: &str = "`pricing`: ";

/// The checks configuration loading makes, plus a printable id.
fn validate(model: &ModelConfig, providers: &[ProviderConfig]) -> Result<(), StoreError> {
    let invalid = |m: String| Err(StoreError::Invalid(m));
    let id = &model.id;
    if id.is_empty()
        || id.len() > MAX_ID_LEN
        || id.trim() != id
        || id.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return invalid(format!(
            "a model id must be 1 to {MAX_ID_LEN} printable characters without spaces"
        ));
    }
    for (i, d) in model.deployments().iter().enumerate() {
        let at = if i == 0 {
            String::new()
        } else {
            format!("deployments[{i}]: ")
        };
        let Some(provider) = providers.iter().find(|p| p.id == d.provider) else {
            let known: Vec<&str> = providers.iter().map(|p| p.id.as_str()).collect();
            return invalid(format!(
                "{at}unknown provider `{}` (configured: {})",
                d.provider,
                known.join(", ")
            ));
        };
        if d.upstream.trim().is_empty() {
            return invalid(format!("{at}`upstream` must not be empty"));
        }
        if let Err(why) = upstream_name::check(&d.upstream, provider.kind) {
            return invalid(format!("{at}`upstream`: {why}"));
        }
        if d.weight == 0 {
            return invalid(format!("{at}`weight` must be at least 1"));
        }
    }
    if model.routing.rpm_limit == Some(0) || model.routing.tpm_limit == Some(0) {
        return invalid("`rpmLimit` and `tpmLimit` must be at least 1".into());
    }
    if model.input.is_empty() {
        return invalid("a model must accept at least one capability".into());
    }
    if model.output.is_empty() {
        return invalid("a model must produce at least one capability".into());
    }
    if let Err(why) = super::check_embedding(&model.input, &model.output, &model.pricing) {
        return invalid(why);
    }
    if model.context_window == 0 {
        return invalid("`contextWindow` must be at least 1 token".into());
    }
    if model.max_output_tokens == Some(0) {
        return invalid("`maxOutputTokens` must be at least 1 token".into());
    }
    model
        .pricing
        .check_fits(model.context_window)
        .map_err(|m| StoreError::Invalid(format!("{PRICING_REFUSED}{m}")))?;
    Ok(())
}

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
        if let Some(v) = change.provider {
            model.provider = v;
        }
        if let Some(v) = change.upstream {
            model.upstream = v;
        }
        if let Some(v) = change.input {
            model.input = v;
        }
        if let Some(v) = change.output {
            model.output = v;
        }
        if let Some(v) = change.context_window {
            model.context_window = v;
        }
        if let Some(v) = change.max_output_tokens {
            model.max_output_tokens = v;
        }
        if let Some(v) = change.pricing {
            model.pricing = v;
        }
        if let Some(list) = change.deployments {
            let mut list = list.into_iter();
            let Some(first) = list.next() else {
                return Err(StoreError::Invalid(
                    "`deployments` must list at least one deployment".into(),
                ));
            };
            model.provider = first.provider;
            model.upstream = first.upstream;
            model.routing.primary_weight = first.weight;
            model.routing.more = list.collect();
        }
        if let Some(v) = change.strategy {
            model.routing.strategy = v;
        }
        if let Some(v) = change.rpm_limit {
            model.routing.rpm_limit = v;
        }
        if let Some(v) = change.tpm_limit {
            model.routing.tpm_limit = v;
        }
        validate(&model, &self.providers)?;
        let row = Row::routed(&model, change.enabled.unwrap_or(entry.enabled));
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

    #[test]
    fn every_pricing_unit_survives_the_codec() {
        let all = [
            Pricing::PerToken {
                input_per_million: 1,
                output_per_million: 2,
                cached_input_per_million: Some(3),
            },
            Pricing::PerImage { per_image: 4 },
            Pricing::PerSecond { per_second: 5 },
            Pricing::PerMinute { per_minute: 6 },
            Pricing::PerCharacter {
                per_million_characters: 7,
            },
            Pricing::PerRequest { per_request: 8 },
        ];
        for pricing in all {
            let stored = StoredPricing::from(pricing);
            let bytes = crate::store::codec::encode(&stored);
            let back: StoredPricing = crate::store::codec::decode(&bytes).unwrap();
            assert_eq!(Pricing::from(back), pricing);
        }
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
