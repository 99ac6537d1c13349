//! The tenant's compliance policy: `GET` and `PUT /api/v1/policies`, with
//! every field of a patch checked before anything is written.

use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::billing::store_error;
use crate::api::extract::{Require, perm};
use crate::api::json::{Json, Query};
use crate::api::state::AppState;
use crate::base::error::ApiError;
use crate::pii;
use crate::tenants::{self, CompliancePolicy, MIN_HIGH_RISK_RETENTION_DAYS, ReviewMode};

use super::{TenantQuery, acting_tenant};

fn policy_view(tenant: &tenants::Tenant) -> Value {
    let p = &tenant.policy;
    json!({
        "tenantId": tenant.id,
        "requirePurpose": p.require_purpose,
        "requireConsent": p.require_consent,
        "reviewMode": match p.review_mode {
            ReviewMode::Off => "off",
            ReviewMode::HighRisk => "high_risk",
            ReviewMode::All => "all",
        },
        "reviewTtlSeconds": p.review_ttl_secs,
        "judgeEnabled": p.judge_enabled,
        "judgeModel": p.judge_model,
        "logBodies": p.log_bodies,
        "retentionDays": p.retention_days,
        "highRiskRetentionDays": p.high_risk_retention_days,
        "enforceRegistry": p.enforce_registry,
        "piiRedaction": p.pii_redaction.as_str(),
        "piiPatterns": p.pii_patterns.iter().map(|pattern| json!({
            "name": pattern.name,
            "regex": pattern.regex,
        })).collect::<Vec<_>>(),
    })
}

pub(super) async fn show_policy(
    State(state): State<AppState>,
    required: Require<perm::ManagePolicies>,
    Query(query): Query<TenantQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let tenant_id = acting_tenant(&required.0, query.tenant.as_deref(), &state)?;
    let tenant = state
        .store
        .read(|tx| tenants::resolve(tx, &tenant_id))
        .map_err(store_error)?;
    Ok(axum::Json(policy_view(&tenant)))
}

/// Every field is optional: those given replace the current values.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct PolicyPatch {
    require_purpose: Option<bool>,
    require_consent: Option<bool>,
    review_mode: Option<String>,
    review_ttl_seconds: Option<u32>,
    judge_enabled: Option<bool>,
    #[serde(default, deserialize_with = "crate::base::json::nullable")]
    judge_model: Option<Option<String>>,
    log_bodies: Option<bool>,
    retention_days: Option<u32>,
    high_risk_retention_days: Option<u32>,
    enforce_registry: Option<bool>,
    pii_redaction: Option<String>,
    pii_patterns: Option<Vec<PatternPatch>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PatternPatch {
    name: String,
    regex: String,
}

/// The tenant's PII patterns, each checked and compiled once here, so a
/// request never meets a pattern that does not compile. An error names
/// the pattern (`piiPatterns[2]`).
fn pii_patterns(patch: Vec<PatternPatch>) -> Result<Vec<pii::Pattern>, ApiError> {
    if patch.len() > pii::MAX_PATTERNS {
        return Err(ApiError::invalid(
            "piiPatterns",
            format!("at most {} `piiPatterns`", pii::MAX_PATTERNS),
        ));
    }
    let mut patterns: Vec<pii::Pattern> = Vec::with_capacity(patch.len());
    for (i, p) in patch.into_iter().enumerate() {
        let pattern = pii::Pattern {
            name: p.name,
            regex: p.regex,
        };
        let field = format!("piiPatterns[{i}]");
        if let Err(e) = pattern.compile() {
            return Err(ApiError::invalid(
                &field,
                format!("`{field}.{}`: {}", e.part, e.message),
            ));
        }
        if patterns
            .iter()
            .any(|q| q.name.eq_ignore_ascii_case(&pattern.name))
        {
            return Err(ApiError::invalid(
                &field,
                format!(
                    "`{field}.name`: another pattern is named `{}`",
                    pattern.name
                ),
            ));
        }
        patterns.push(pattern);
    }
    Ok(patterns)
}

/// The policy with the patch applied, every given field checked. One step
/// per group of fields; a step refuses with the field it names.
fn patched(
    mut policy: CompliancePolicy,
    patch: PolicyPatch,
    state: &AppState,
    tenant_id: &str,
) -> Result<CompliancePolicy, ApiError> {
    if let Some(v) = patch.require_purpose {
        policy.require_purpose = v;
    }
    if let Some(v) = patch.require_consent {
        policy.require_consent = v;
    }
    patch_review(&mut policy, patch.review_mode, patch.review_ttl_seconds)?;
    patch_judge(
        &mut policy,
        patch.judge_model,
        patch.judge_enabled,
        state,
        tenant_id,
    )?;
    if let Some(v) = patch.log_bodies {
        policy.log_bodies = v;
    }
    patch_retention(
        &mut policy,
        patch.retention_days,
        patch.high_risk_retention_days,
    )?;
    if let Some(v) = patch.enforce_registry {
        policy.enforce_registry = v;
    }
    if let Some(mode) = patch.pii_redaction {
        policy.pii_redaction = pii::Mode::parse(&mode).ok_or_else(|| {
            ApiError::invalid("piiRedaction", "`piiRedaction` is off, logs or upstream")
        })?;
    }
    if let Some(patterns) = patch.pii_patterns {
        policy.pii_patterns = pii_patterns(patterns)?;
    }
    Ok(policy)
}

/// `reviewMode` and `reviewTtlSeconds`.
fn patch_review(
    policy: &mut CompliancePolicy,
    mode: Option<String>,
    ttl_seconds: Option<u32>,
) -> Result<(), ApiError> {
    if let Some(mode) = mode {
        policy.review_mode = match mode.as_str() {
            "off" => ReviewMode::Off,
            "high_risk" => ReviewMode::HighRisk,
            "all" => ReviewMode::All,
            _ => {
                return Err(ApiError::invalid(
                    "reviewMode",
                    "`reviewMode` is off, high_risk or all",
                ));
            }
        };
    }
    if let Some(v) = ttl_seconds {
        if !(1..=30 * 86_400).contains(&v) {
            return Err(ApiError::invalid(
                "reviewTtlSeconds",
                "`reviewTtlSeconds` must be 1 to 2592000 (30 days)",
            ));
        }
        policy.review_ttl_secs = v;
    }
    Ok(())
}

/// `judgeModel` and `judgeEnabled`: the model must be one the tenant may
/// use, and an enabled judge needs one (checked after both are applied).
fn patch_judge(
    policy: &mut CompliancePolicy,
    model: Option<Option<String>>,
    enabled: Option<bool>,
    state: &AppState,
    tenant_id: &str,
) -> Result<(), ApiError> {
    if let Some(model) = model {
        if let Some(name) = &model
            && state.catalogue.get_for(tenant_id, name).is_none()
        {
            return Err(ApiError::invalid(
                "judgeModel",
                format!("`{name}` is not in the model catalogue, or not one the tenant may use"),
            ));
        }
        policy.judge_model = model;
    }
    if let Some(v) = enabled {
        policy.judge_enabled = v;
    }
    if policy.judge_enabled && policy.judge_model.is_none() {
        return Err(ApiError::invalid(
            "judgeModel",
            "the judge needs a `judgeModel` from the catalogue",
        ));
    }
    Ok(())
}

/// `retentionDays` and `highRiskRetentionDays`.
fn patch_retention(
    policy: &mut CompliancePolicy,
    days: Option<u32>,
    high_risk_days: Option<u32>,
) -> Result<(), ApiError> {
    if let Some(v) = days {
        if !(1..=3650).contains(&v) {
            return Err(ApiError::invalid(
                "retentionDays",
                "`retentionDays` must be 1 to 3650",
            ));
        }
        policy.retention_days = v;
    }
    if let Some(v) = high_risk_days {
        if !(MIN_HIGH_RISK_RETENTION_DAYS..=3650).contains(&v) {
            return Err(ApiError::invalid(
                "highRiskRetentionDays",
                format!(
                    "`highRiskRetentionDays` must be {MIN_HIGH_RISK_RETENTION_DAYS} to 3650: Article 26(6) keeps logs of high-risk use at least six months"
                ),
            ));
        }
        policy.high_risk_retention_days = v;
    }
    Ok(())
}

pub(super) async fn update_policy(
    State(state): State<AppState>,
    required: Require<perm::ManagePolicies>,
    Query(query): Query<TenantQuery>,
    Json(patch): Json<PolicyPatch>,
) -> Result<axum::Json<Value>, ApiError> {
    let tenant_id = acting_tenant(&required.0, query.tenant.as_deref(), &state)?;
    let current_policy = state
        .store
        .read(|tx| tenants::resolve(tx, &tenant_id))
        .map_err(store_error)?
        .policy;
    let policy = patched(current_policy, patch, &state, &tenant_id)?;
    let tenant = tenants::set_policy(&state.store, &tenant_id, policy)
        .await
        .map_err(store_error)?;
    Ok(axum::Json(policy_view(&tenant)))
}
