//! The admit stage: the model a request names (`catalogued`, `kind_fits`),
//! the credits it reserves against the key's cap and the tenant's wallet
//! (`admit`), and the free tier's daily multimodal cap (`take_tier_caps`).
//! Every inference route goes through it before anything is classified or
//! sent upstream.

use std::sync::Arc;

use super::Gateway;
use super::multimodal;
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::base::money::micros_to_credits;
use crate::base::time::now_ms;
use crate::billing::ledger::{self, Claim, CreditHold, Refusal};
use crate::billing::limits;
use crate::catalogue::Model;
use crate::tenants::{self, Tier};

/// The single model a request names, as the calling key's tenant sees it;
/// 404 `model_not_found` on `model` otherwise.
pub(crate) fn catalogued(
    gateway: &Gateway,
    key: &ApiKey,
    model: &str,
) -> Result<Arc<Model>, ApiError> {
    gateway
        .catalogue
        .get_for(&key.tenant_id, model)
        .ok_or_else(|| {
            let mut error = ApiError::new(
                Code::ModelNotFound,
                format!("`{model}` is not in the catalogue"),
            );
            error.param = Some("model".into());
            error
        })
}

/// An embedding model serves `/v1/embeddings` only, and only an embedding
/// model serves it: 400 `wrong_model_kind` naming `model` otherwise, before
/// anything is charged, counted or classified.
pub(crate) fn kind_fits(model: &Model, embeddings: bool, path: &str) -> Result<(), ApiError> {
    if model.is_embedding() == embeddings {
        return Ok(());
    }
    let message = if embeddings {
        format!(
            "`{}` is not an embedding model (its outputCapabilities lack EMBEDDING): {path} takes an embedding model",
            model.id
        )
    } else {
        format!(
            "`{}` is an embedding model: it serves /v1/embeddings only, not {path}",
            model.id
        )
    };
    let mut error = ApiError::new(Code::WrongModelKind, message);
    error.param = Some("model".into());
    Err(error)
}

/// A request past admission: its tenant, and what it holds reserved.
pub(crate) struct Admitted {
    pub tenant: tenants::Tenant,
    pub hold: CreditHold,
}

/// The admission stage every inference route goes through: reserves the
/// request's estimated cost (micro-credits, see [`estimated_cost`]) against
/// the key's `creditLimit` and the tenant's wallet, atomically in the
/// in-memory ledger. The key's cap holds while `consumed + reserved <
/// limit`; the wallet, except for enterprise tenants (which may go
/// negative), while `balance - reserved > 0`. The reservation lives in the
/// returned [`CreditHold`]: the charge replaces it, dropping it releases it.
pub(crate) fn admit(gateway: &Gateway, key: &ApiKey, estimate: u64) -> Result<Admitted, ApiError> {
    let tenant = gateway
        .store
        .read_committed(|tx| tenants::resolve(tx, &key.tenant_id))
        .map_err(|e| ApiError::internal("reading the key's tenant", e))?;
    let claim = Claim {
        key,
        tenant: &tenant,
        cost: estimate,
        now: now_ms(),
    };
    match gateway.ledger.reserve(claim) {
        Ok(hold) => Ok(Admitted { tenant, hold }),
        Err(Refusal::KeyCap {
            consumed, reserved, ..
        }) => Err(ApiError::new(
            Code::BudgetExceeded,
            if reserved == 0 {
                "the API key has reached its credit limit for this cycle".to_owned()
            } else {
                format!(
                    "the API key has reached its credit limit for this cycle: {} credits consumed and {} reserved by requests in flight",
                    micros_to_credits(consumed),
                    micros_to_credits(reserved)
                )
            },
        )),
        Err(Refusal::Wallet { reserved, .. }) => Err(ApiError::new(
            Code::InsufficientCredits,
            if reserved == 0 {
                format!(
                    "the wallet of tenant `{}` is empty; top it up to continue",
                    tenant.name
                )
            } else {
                format!(
                    "the wallet of tenant `{}` is taken by requests in flight ({} credits reserved); retry once they end, or top it up",
                    tenant.name,
                    micros_to_credits(reserved)
                )
            },
        )),
        Err(Refusal::DayCap { .. }) => unreachable!("admission reserves no day unit"),
    }
}

/// What admission reserves for a request on `model`: its price for the
/// prompt as estimated locally and for the output it may produce
/// ([`expected_output`]). A price too large to record reserves the most a
/// charge can be.
pub(crate) fn estimated_cost(model: &Model, prompt_tokens: u64, output_tokens: u64) -> u64 {
    super::cost(&model.pricing, prompt_tokens, output_tokens)
        .unwrap_or(crate::base::money::MAX_CHARGE)
}

/// The output a request is expected to produce: what it allows itself
/// (`max_tokens` and its equivalents), else its model's
/// `max_output_tokens`, else [`ledger::DEFAULT_OUTPUT_TOKENS`].
pub(crate) fn expected_output(allowed: Option<u64>, model: &Model) -> u64 {
    allowed
        .or(model.max_output_tokens.map(u64::from))
        .unwrap_or(ledger::DEFAULT_OUTPUT_TOKENS)
}

/// The free tier's daily multimodal cap. Reserved only once the request
/// passed every other check, so a refused request does not use up the day;
/// counted durably by the request's charge, released if it is not charged.
/// `messages` are the request's as chat messages (the gate input's).
pub(crate) async fn take_tier_caps(
    gateway: &Gateway,
    admitted: &Admitted,
    messages: &serde_json::Value,
) -> Result<(), ApiError> {
    if !multimodal::is_multimodal(messages) {
        return Ok(());
    }
    take_multimodal_cap(gateway, admitted).await
}

/// Reserves one of a free-tier tenant's daily multimodal requests (every
/// image and audio route counts as one).
pub(crate) async fn take_multimodal_cap(
    gateway: &Gateway,
    admitted: &Admitted,
) -> Result<(), ApiError> {
    let tenant = &admitted.tenant;
    if tenant.tier != Tier::Free {
        return Ok(());
    }
    let now = now_ms();
    let cap = gateway.settings.free_multimodal_per_day;
    let row = limits::day_row(&tenant.id, "multimodal", now);
    let stored = || limits::daily_count(&gateway.store, &row);
    match admitted.hold.take_day(row.clone(), cap, stored) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => {
            let mut error = ApiError::new(
                Code::MultimodalCapExceeded,
                format!(
                    "the free tier allows {cap} multimodal requests per UTC day; the count resets at midnight UTC"
                ),
            );
            error.retry_after = Some((limits::ms_to_midnight(now) as u64).div_ceil(1000));
            Err(error)
        }
        Err(e) => Err(ApiError::internal("counting the multimodal cap", e)),
    }
}
