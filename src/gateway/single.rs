//! The steps the single-model routes share (embeddings and the media
//! routes: a request names one model, there is no fallback chain): the
//! model named and of the route's kind, the gate over the text the request
//! carries, what the gate hands on to the route stage (the tenant's
//! sub-processor registry and the request's compliance records), and the
//! walk over the model's deployments, which ends in the [`Served`] the
//! charge reads or in `all_providers_failed`. Each route keeps its own
//! checks, limits and answer; these are the stages they go through alike.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::gate::GateInput;
use super::walk::{Call, Walk};
use super::{Attempt, Compliance, Gateway, Served, Single};
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::billing::ledger::CreditHold;
use crate::catalogue::{Endpoint, Model};
use crate::compliance::{Classification, registry};
use crate::events::Event;
use crate::providers::UpstreamError;
use crate::providers::wire::chat::ServiceFields;
use crate::tenants::CompliancePolicy;

/// A request to one model on a single-model route: who asked, on which
/// route, for which model (as the key's tenant sees it), since when.
pub(crate) struct OneModel<'a> {
    pub gateway: &'a Gateway,
    pub key: &'a ApiKey,
    pub request_id: &'a str,
    /// The name the caller used.
    pub requested: &'a str,
    pub model: Arc<Model>,
    pub started: Instant,
    pub endpoint: Endpoint,
}

/// What the gate hands on to the route stage: the request's risk, its
/// compliance records, and the tenant's registry when its policy routes
/// only to registered sub-processors.
pub(crate) struct Passed {
    pub risk: Classification,
    pub compliance: Arc<Compliance>,
    pub registered: Option<Vec<registry::SubProcessor>>,
}

impl<'a> OneModel<'a> {
    /// The model the caller named on the route at `path`: in the tenant's
    /// catalogue (404 otherwise) and of the route's kind, an embedding
    /// model for embeddings only (400 otherwise). The request's clock
    /// starts here.
    pub(crate) fn named(
        gateway: &'a Gateway,
        key: &'a ApiKey,
        request_id: &'a str,
        requested: &'a str,
        endpoint: Endpoint,
        path: &str,
    ) -> Result<OneModel<'a>, ApiError> {
        let started = Instant::now();
        let model = super::catalogued(gateway, key, requested)?;
        super::kind_fits(&model, endpoint == Endpoint::Embeddings, path)?;
        Ok(OneModel {
            gateway,
            key,
            request_id,
            requested,
            model,
            started,
            endpoint,
        })
    }

    /// The classify-and-gate stage over the text the request carries, as
    /// one user message, with its service fields.
    pub(crate) async fn gate_text(
        &self,
        policy: &CompliancePolicy,
        text: &str,
        service: &ServiceFields,
    ) -> Result<Classification, ApiError> {
        let mut messages = Value::Null;
        let input = GateInput::text(&mut messages, text, service);
        super::gate(self.gateway, self.key, policy, &input, self.request_id).await
    }

    /// Past the gate (and the route's own limits): the registry the walk
    /// checks each deployment against, and the request's compliance
    /// records, `logged` being the request as the log keeps it.
    pub(crate) fn passed(
        &self,
        policy: &CompliancePolicy,
        service: &ServiceFields,
        logged: &str,
        risk: Classification,
    ) -> Result<Passed, ApiError> {
        let registered = super::registered_providers(self.gateway, policy)?;
        let compliance = Arc::new(Compliance::new(policy, service, logged, &risk));
        Ok(Passed {
            risk,
            compliance,
            registered,
        })
    }

    /// The route and call stages: the model's deployments walked with
    /// `call`. Served, the reply and what the charge reads of it
    /// (`admission` and the prompt as estimated included); an upstream
    /// refusal of the request relayed; every deployment failed,
    /// [`OneModel::exhausted`].
    pub(crate) async fn walk<C: Call<Error = UpstreamError>>(
        &self,
        passed: Passed,
        admission: CreditHold,
        prompt_estimate: u64,
        call: &C,
    ) -> Result<(C::Reply, Served), ApiError> {
        let walk = Walk {
            gateway: self.gateway,
            tenant_id: &self.key.tenant_id,
            model: &self.model,
            name: self.requested,
            registered: passed.registered.as_deref(),
        };
        let mut attempts = Vec::new();
        let (reply, view, retries, in_flight) = walk
            .run(call, &mut attempts)
            .await
            .served_or(|| self.exhausted(&attempts))?;
        let single = Single {
            key: self.key,
            request_id: self.request_id,
            requested: self.requested,
            started: self.started,
            endpoint: self.endpoint,
            risk: passed.risk,
            compliance: passed.compliance,
            admission,
            prompt_estimate,
        };
        Ok((reply, single.served(view, attempts, retries, in_flight)))
    }

    /// Every deployment failed or was skipped (the attempts say why): the
    /// chain (of one) exhausted, as for chat.
    fn exhausted(&self, attempts: &[Attempt]) -> ApiError {
        let model = self.requested;
        let chain = vec![model.to_owned()];
        let summary: Vec<String> = attempts
            .iter()
            .map(|a| {
                format!(
                    "{} on {} ({}: {})",
                    a.model, a.deployment, a.status, a.message
                )
            })
            .collect();
        tracing::info!(%model, attempts = attempts.len(), "every deployment of the media model failed");
        self.gateway.metrics.exhausted();
        self.gateway.events.publish(Event::providers_exhausted(
            &self.key.tenant_id,
            self.request_id,
            &chain,
            attempts,
        ));
        ApiError::new(
            Code::AllProvidersFailed,
            format!("every model of the chain failed: {}", summary.join("; ")),
        )
    }
}
