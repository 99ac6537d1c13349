//! Which catalogue models each tenant may use.
//!
//! The catalogue is the operator's: one list of models for every tenant.
//! A tenant's admins narrow it for their tenant with an allow-list; a
//! tenant without one may use every served model (how every tenant started
//! before allow-lists existed). A model outside a tenant's list is, for
//! that tenant's keys, as if it were not in the catalogue: `/v1` answers
//! `model_not_found` and `/v1/models` does not show it.
//!
//! The lists live in the `tenant_models` table and in memory, swapped whole
//! inside the writer after each change, so the request path reads them
//! without touching the store.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use crate::store::tables::{Reader, TENANT_MODELS};
use crate::store::{Store, StoreError, codec};

type Lists = HashMap<String, Arc<BTreeSet<String>>>;

/// Every tenant's allow-list.
#[derive(Default)]
pub struct ModelAccess {
    lists: RwLock<Arc<Lists>>,
}

impl ModelAccess {
    /// The stored lists.
    pub fn load(store: &Store) -> Result<ModelAccess, StoreError> {
        let rows = store.read(|tx| tx.scan_raw(TENANT_MODELS))?;
        let mut lists = Lists::new();
        for (tenant, models) in rows {
            let tenant = String::from_utf8(tenant).map_err(|_| {
                StoreError::Corrupt("a tenant id in tenant_models is not UTF-8".into())
            })?;
            let models: Vec<String> = codec::decode(&models)?;
            lists.insert(tenant, Arc::new(models.into_iter().collect()));
        }
        Ok(ModelAccess {
            lists: RwLock::new(Arc::new(lists)),
        })
    }

    fn current(&self) -> Arc<Lists> {
        self.lists.read().expect("model access lock").clone()
    }

    /// Whether the tenant may use the model (every model without a list).
    pub fn allows(&self, tenant_id: &str, model: &str) -> bool {
        self.current()
            .get(tenant_id)
            .is_none_or(|list| list.contains(model))
    }

    /// The tenant's list, sorted; `None` when it may use every model.
    pub fn list_of(&self, tenant_id: &str) -> Option<Vec<String>> {
        self.current()
            .get(tenant_id)
            .map(|list| list.iter().cloned().collect())
    }

    /// Replaces the tenant's list (`None`: every model). The caller has
    /// checked that the tenant exists and the ids are catalogue entries.
    pub async fn set(
        self: &Arc<Self>,
        store: &Store,
        tenant_id: &str,
        models: Option<Vec<String>>,
    ) -> Result<(), StoreError> {
        let access = self.clone();
        let tenant_id = tenant_id.to_owned();
        store
            .write(move |txn| {
                let mut table = txn.open_table(TENANT_MODELS)?;
                match &models {
                    Some(models) => {
                        let models: BTreeSet<String> = models.iter().cloned().collect();
                        let stored: Vec<&String> = models.iter().collect();
                        table.insert(tenant_id.as_bytes(), codec::encode(&stored).as_slice())?;
                    }
                    None => {
                        table.remove(tenant_id.as_bytes())?;
                    }
                }
                // In the writer, in commit order, so two changes cannot
                // install their lists in the other order.
                let mut lists = (*access.current()).clone();
                match &models {
                    Some(models) => lists.insert(
                        tenant_id.clone(),
                        Arc::new(models.iter().cloned().collect()),
                    ),
                    None => lists.remove(&tenant_id),
                };
                *access.lists.write().expect("model access lock") = Arc::new(lists);
                Ok(())
            })
            .await
    }
}
