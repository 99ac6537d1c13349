//! The route stage's inputs that do not depend on the deployment: the
//! tenant's sub-processor registry (when its policy routes only to
//! registered providers), and an upstream's final refusal in our error
//! shape. The walk over a model's deployments is `walk`'s.

use super::Gateway;
use crate::base::error::{ApiError, Code};
use crate::catalogue::Model;
use crate::compliance::registry;
use crate::providers::{Failure, UpstreamError};
use crate::tenants::CompliancePolicy;

/// The sub-processor registry when the tenant's policy routes only to
/// registered providers (`enforceRegistry`), else `None`: every route reads
/// it once per request and hands it to the deployment walk.
pub(crate) fn registered_providers(
    gateway: &Gateway,
    policy: &CompliancePolicy,
) -> Result<Option<Vec<registry::SubProcessor>>, ApiError> {
    if !policy.enforce_registry {
        return Ok(None);
    }
    gateway
        .store
        .read(registry::list)
        .map(Some)
        .map_err(|e| ApiError::internal("reading the sub-processor registry", e))
}

/// A final refusal of the request by the upstream, in our error shape.
pub(crate) fn relay_refusal(model: &Model, error: &UpstreamError) -> ApiError {
    let message = format!(
        "the provider `{}` refused the request: {}",
        model.provider.id, error.message
    );
    match error.failure {
        _ if error.content_filter => ApiError::new(Code::ContentFiltered, message),
        Failure::Status(413) => ApiError::new(Code::PayloadTooLarge, message),
        Failure::Status(422) => ApiError::new(Code::UpstreamUnprocessable, message),
        _ => ApiError::new(Code::InvalidRequest, message),
    }
}
