//! Dashboard routes for compliance (DESIGN section 5): tenant policies, the
//! audit log, the conversation log, the human-review queue, incidents, the
//! sub-processor registry, consent records and erasure.
//!
//! Scope as elsewhere: the owner is the operator and reads every tenant
//! (or one with `?tenant=`); every other role reads and acts on its own
//! tenant. Records outside the caller's scope answer 404.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::billing::{store_error, tenant_scope};
use crate::api::extract::{Require, Signed, perm};
use crate::api::json::{Json, Query};
use crate::api::state::AppState;
use crate::auth::accounts::{Account, Role};
use crate::auth::sessions::CurrentAccount;
use crate::base::error::ApiError;
use crate::base::time::{format_rfc3339, now_ms, parse_rfc3339};
use crate::compliance::{consents, conversations, erasure, incidents, registry, reviews};
use crate::tenants::{self, CompliancePolicy, MIN_HIGH_RISK_RETENTION_DAYS, ReviewMode};
use crate::{audit, pii};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/policies", get(show_policy).put(update_policy))
        .route("/api/v1/audit", get(list_audit))
        .route("/api/v1/audit/verify", get(verify_audit))
        .route("/api/v1/conversations", get(list_conversations))
        .route("/api/v1/conversations/{id}", get(show_conversation))
        .route("/api/v1/reviews", get(list_reviews))
        .route("/api/v1/reviews/{id}", get(show_review))
        .route("/api/v1/reviews/{id}/approve", post(approve_review))
        .route("/api/v1/reviews/{id}/reject", post(reject_review))
        .route("/api/v1/incidents", get(list_incidents).post(file_incident))
        .route(
            "/api/v1/incidents/{id}",
            get(show_incident).patch(update_incident),
        )
        .route(
            "/api/v1/sub-processors",
            get(list_registry).post(create_registry_entry),
        )
        .route(
            "/api/v1/sub-processors/{name}",
            axum::routing::put(update_registry_entry).delete(delete_registry_entry),
        )
        .route(
            "/api/v1/sub-processors/{name}/history",
            get(show_entry_history),
        )
        .route("/api/v1/sub-processor-history", get(list_registry_history))
        .route("/api/v1/consents", get(list_consents).post(grant_consent))
        .route(
            "/api/v1/consents/{id}",
            get(show_consent).delete(withdraw_consent),
        )
        .route("/api/v1/erasure", post(erase_subject))
        .route("/api/v1/erasure/export", post(export_subject))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct TenantQuery {
    tenant: Option<String>,
}

/// The one tenant an act applies to: the caller's, or for the operator the
/// one named by `?tenant=`.
fn acting_tenant(
    current: &CurrentAccount,
    asked: Option<&str>,
    state: &AppState,
) -> Result<String, ApiError> {
    Ok(tenant_scope(current, asked, state)?.unwrap_or_else(|| current.account.tenant_id.clone()))
}

fn actor(account: &Account) -> String {
    format!("account:{}", account.id)
}

fn time_param(field: &str, value: Option<&str>) -> Result<Option<i64>, ApiError> {
    value
        .map(|v| parse_rfc3339(v).map_err(|m| ApiError::invalid(field, m)))
        .transpose()
}

fn limit_param(value: Option<usize>, max: usize, default: usize) -> Result<usize, ApiError> {
    match value {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(_) => Err(ApiError::invalid(
            "limit",
            format!("`limit` must be 1 to {max}"),
        )),
    }
}

// ---- policies ----

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

async fn show_policy(
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
struct PolicyPatch {
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
struct PatternPatch {
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
    if let Some(mode) = patch.review_mode {
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
    if let Some(v) = patch.review_ttl_seconds {
        if !(1..=30 * 86_400).contains(&v) {
            return Err(ApiError::invalid(
                "reviewTtlSeconds",
                "`reviewTtlSeconds` must be 1 to 2592000 (30 days)",
            ));
        }
        policy.review_ttl_secs = v;
    }
    if let Some(model) = patch.judge_model {
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
    if let Some(v) = patch.judge_enabled {
        policy.judge_enabled = v;
    }
    if policy.judge_enabled && policy.judge_model.is_none() {
        return Err(ApiError::invalid(
            "judgeModel",
            "the judge needs a `judgeModel` from the catalogue",
        ));
    }
    if let Some(v) = patch.log_bodies {
        policy.log_bodies = v;
    }
    if let Some(v) = patch.retention_days {
        if !(1..=3650).contains(&v) {
            return Err(ApiError::invalid(
                "retentionDays",
                "`retentionDays` must be 1 to 3650",
            ));
        }
        policy.retention_days = v;
    }
    if let Some(v) = patch.high_risk_retention_days {
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

async fn update_policy(
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

// ---- audit ----

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AuditQuery {
    tenant: Option<String>,
    action: Option<String>,
    actor: Option<String>,
    from: Option<String>,
    to: Option<String>,
    before: Option<u64>,
    limit: Option<usize>,
}

async fn list_audit(
    State(state): State<AppState>,
    required: Require<perm::ViewAudit>,
    Query(query): Query<AuditQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let filter = audit::Filter {
        tenant_id: tenant_scope(&required.0, query.tenant.as_deref(), &state)?,
        action: query.action,
        actor: query.actor,
        from: time_param("from", query.from.as_deref())?,
        to: time_param("to", query.to.as_deref())?,
        before: query.before,
        limit: limit_param(query.limit, audit::MAX_PAGE, 100)?,
    };
    let entries = state
        .store
        .read(|tx| audit::list(tx, &filter))
        .map_err(store_error)?;
    let next = (entries.len() == filter.limit)
        .then(|| entries.last().map(|e| e.seq))
        .flatten();
    Ok(axum::Json(json!({
        "object": "list",
        "data": entries.iter().map(audit::Entry::view).collect::<Vec<_>>(),
        "nextBefore": next,
    })))
}

async fn verify_audit(
    State(state): State<AppState>,
    _required: Require<perm::ViewAudit>,
) -> Result<axum::Json<Value>, ApiError> {
    let found = state.store.read(audit::verify).map_err(store_error)?;
    Ok(axum::Json(found.view()))
}

// ---- conversations ----

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConversationQuery {
    tenant: Option<String>,
    key_id: Option<String>,
    end_user_id: Option<String>,
    level: Option<String>,
    from: Option<String>,
    to: Option<String>,
    cursor: Option<String>,
    limit: Option<usize>,
}

async fn list_conversations(
    State(state): State<AppState>,
    required: Require<perm::ViewConversations>,
    Query(query): Query<ConversationQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    if let Some(level) = &query.level
        && !["minimal", "limited", "high", "prohibited"].contains(&level.as_str())
    {
        return Err(ApiError::invalid(
            "level",
            "`level` is minimal, limited, high or prohibited",
        ));
    }
    let before = query
        .cursor
        .as_deref()
        .map(|c| {
            URL_SAFE_NO_PAD
                .decode(c)
                .ok()
                .filter(|k| k.len() > 8)
                .ok_or_else(|| ApiError::invalid("cursor", "not a cursor of this list"))
        })
        .transpose()?;
    let filter = conversations::Filter {
        tenant_id: tenant_scope(&required.0, query.tenant.as_deref(), &state)?,
        key_id: query.key_id,
        end_user_id: query.end_user_id,
        level: query.level,
        from: time_param("from", query.from.as_deref())?.unwrap_or(0),
        to: time_param("to", query.to.as_deref())?.unwrap_or(i64::MAX),
        before,
        limit: limit_param(query.limit, conversations::MAX_PAGE, 50)?,
    };
    let (page, next) = state
        .store
        .read(|tx| conversations::list(tx, &filter))
        .map_err(store_error)?;
    Ok(axum::Json(json!({
        "object": "list",
        "data": page.iter().map(|c| c.view(true)).collect::<Vec<_>>(),
        "nextCursor": next.map(|k| URL_SAFE_NO_PAD.encode(k)),
    })))
}

async fn show_conversation(
    State(state): State<AppState>,
    required: Require<perm::ViewConversations>,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, None, &state)?;
    let record = state
        .store
        .read(|tx| conversations::get(tx, scope.as_deref(), &id))
        .map_err(store_error)?
        .ok_or_else(|| ApiError::not_found(format!("no conversation record `{id}`")))?;
    Ok(axum::Json(record.view(true)))
}

// ---- reviews ----

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ReviewQuery {
    tenant: Option<String>,
    status: Option<String>,
}

async fn list_reviews(
    State(state): State<AppState>,
    required: Require<perm::ReviewItems>,
    Query(query): Query<ReviewQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, query.tenant.as_deref(), &state)?;
    let status = query
        .status
        .as_deref()
        .map(|s| {
            reviews::Status::parse(s).ok_or_else(|| {
                ApiError::invalid(
                    "status",
                    "`status` is pending, approved, rejected or expired",
                )
            })
        })
        .transpose()?;
    let now = now_ms();
    let items = state
        .store
        .read(|tx| reviews::list(tx, scope.as_deref(), status, now))
        .map_err(store_error)?;
    Ok(axum::Json(json!({
        "object": "list",
        "data": items.iter().map(|r| r.view(now)).collect::<Vec<_>>(),
    })))
}

async fn show_review(
    State(state): State<AppState>,
    required: Require<perm::ReviewItems>,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, None, &state)?;
    let review = state
        .store
        .read(|tx| reviews::get(tx, scope.as_deref(), &id))
        .map_err(store_error)?;
    Ok(axum::Json(review.view(now_ms())))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DecisionBody {
    note: Option<String>,
    /// Approve only: the answer's text as the reviewer edited it.
    content: Option<String>,
}

/// A decision's body is optional: none means no note.
fn decision_body(headers: &HeaderMap, bytes: &[u8]) -> Result<DecisionBody, ApiError> {
    crate::api::json::optional_body(headers, bytes)?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(DecisionBody::default());
    }
    serde_json::from_slice(bytes).map_err(|e| {
        ApiError::new(
            crate::base::error::Code::InvalidRequest,
            format!("malformed decision body: {e}"),
        )
    })
}

async fn decide(
    state: &AppState,
    current: &CurrentAccount,
    id: &str,
    decision: reviews::Decision,
    note: Option<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let account = &current.account;
    let scope = tenant_scope(current, None, state)?;
    let review = reviews::decide(
        &state.store,
        scope,
        id,
        decision,
        format!("{} ({})", account.email, account.id),
        note.filter(|n| !n.trim().is_empty()),
    )
    .await
    .map_err(store_error)?;
    Ok(axum::Json(review.view(now_ms())))
}

async fn approve_review(
    State(state): State<AppState>,
    required: Require<perm::ReviewItems>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<axum::Json<Value>, ApiError> {
    let body = decision_body(&headers, &body)?;
    let decision = reviews::Decision::Approve { edit: body.content };
    decide(&state, &required.0, &id, decision, body.note).await
}

async fn reject_review(
    State(state): State<AppState>,
    required: Require<perm::ReviewItems>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<axum::Json<Value>, ApiError> {
    let body = decision_body(&headers, &body)?;
    if body.content.is_some() {
        return Err(ApiError::invalid(
            "content",
            "a rejection does not take edited `content`",
        ));
    }
    decide(
        &state,
        &required.0,
        &id,
        reviews::Decision::Reject,
        body.note,
    )
    .await
}

// ---- incidents ----

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct IncidentQuery {
    tenant: Option<String>,
    status: Option<String>,
}

fn incident_status(text: &str) -> Result<incidents::Status, ApiError> {
    incidents::Status::parse(text)
        .ok_or_else(|| ApiError::invalid("status", "`status` is open, reported or closed"))
}

async fn list_incidents(
    State(state): State<AppState>,
    required: Require<perm::ViewIncidents>,
    Query(query): Query<IncidentQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, query.tenant.as_deref(), &state)?;
    let status = query.status.as_deref().map(incident_status).transpose()?;
    let list = state
        .store
        .read(|tx| incidents::list(tx, scope.as_deref(), status))
        .map_err(store_error)?;
    Ok(axum::Json(json!({
        "object": "list",
        "data": list.iter().map(incidents::Incident::view).collect::<Vec<_>>(),
    })))
}

async fn show_incident(
    State(state): State<AppState>,
    required: Require<perm::ViewIncidents>,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, None, &state)?;
    let incident = state
        .store
        .read(|tx| incidents::get(tx, scope.as_deref(), &id))
        .map_err(store_error)?;
    Ok(axum::Json(incident.view()))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct IncidentBody {
    severity: String,
    category: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    request_ids: Vec<String>,
}

async fn file_incident(
    State(state): State<AppState>,
    required: Require<perm::ManageIncidents>,
    Query(query): Query<TenantQuery>,
    Json(body): Json<IncidentBody>,
) -> Result<impl IntoResponse, ApiError> {
    let tenant_id = acting_tenant(&required.0, query.tenant.as_deref(), &state)?;
    let severity = incidents::Severity::parse(&body.severity).ok_or_else(|| {
        ApiError::invalid(
            "severity",
            "`severity` is critical (2 days), fatal (10 days) or serious (15 days)",
        )
    })?;
    let incident = incidents::file(
        &state.store,
        incidents::Filing {
            tenant_id,
            severity,
            category: body.category,
            description: body.description,
            request_ids: body.request_ids,
            source: "manual",
            created_by: actor(&required.0.account),
        },
    )
    .await
    .map_err(store_error)?;
    state.events.publish(incident.event());
    Ok((StatusCode::CREATED, axum::Json(incident.view())))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IncidentUpdate {
    status: String,
}

async fn update_incident(
    State(state): State<AppState>,
    required: Require<perm::ManageIncidents>,
    Path(id): Path<String>,
    Json(body): Json<IncidentUpdate>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, None, &state)?;
    let status = incident_status(&body.status)?;
    let incident = incidents::set_status(&state.store, scope, &id, status)
        .await
        .map_err(store_error)?;
    Ok(axum::Json(incident.view()))
}

// ---- sub-processor registry ----

async fn list_registry(
    State(state): State<AppState>,
    Signed(_): Signed,
) -> Result<axum::Json<Value>, ApiError> {
    Ok(axum::Json(
        state.store.read(registry::view).map_err(store_error)?,
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryQuery {
    name: Option<String>,
    limit: Option<usize>,
}

/// The registry's change history (every entry's, or `?name=`'s), newest
/// first. Read by every role, as the registry is; the registry is global,
/// so no tenant applies.
async fn list_registry_history(
    State(state): State<AppState>,
    Signed(_): Signed,
    Query(query): Query<HistoryQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    registry_history(&state, query.name.as_deref(), query.limit)
}

/// One entry's change history, newest first.
async fn show_entry_history(
    State(state): State<AppState>,
    Signed(_): Signed,
    Path(name): Path<String>,
    Query(query): Query<HistoryQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    if query.name.is_some() {
        return Err(ApiError::invalid(
            "name",
            "the entry is named by the path; `name` is not a query parameter here",
        ));
    }
    registry_history(&state, Some(&name), query.limit)
}

fn registry_history(
    state: &AppState,
    name: Option<&str>,
    limit: Option<usize>,
) -> Result<axum::Json<Value>, ApiError> {
    let limit = limit_param(limit, registry::MAX_HISTORY_PAGE, 100)?;
    state
        .store
        .read(|tx| registry::history(tx, name, limit))
        .map_err(store_error)?
        .map(axum::Json)
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "the registry has no `{}` and never had",
                name.unwrap_or_default()
            ))
        })
}

fn author(account: &Account) -> registry::Author {
    registry::Author::account(&account.id, &account.email)
}

fn announce(state: &AppState, change: &registry::Change) -> Value {
    tracing::info!(action = change.action, name = %change.entry.name, version = change.version, "sub-processor registry changed");
    state.events.publish(change.event());
    let mut view = change.entry.view();
    view["registryVersion"] = json!(change.version.to_string());
    view
}

async fn create_registry_entry(
    State(state): State<AppState>,
    required: Require<perm::ManageRegistry>,
    Json(fields): Json<registry::Fields>,
) -> Result<impl IntoResponse, ApiError> {
    let change = registry::create(&state.store, fields, author(&required.0.account))
        .await
        .map_err(store_error)?;
    Ok((StatusCode::CREATED, axum::Json(announce(&state, &change))))
}

async fn update_registry_entry(
    State(state): State<AppState>,
    required: Require<perm::ManageRegistry>,
    Path(name): Path<String>,
    Json(fields): Json<registry::Fields>,
) -> Result<axum::Json<Value>, ApiError> {
    let change = registry::update(&state.store, &name, fields, author(&required.0.account))
        .await
        .map_err(store_error)?;
    Ok(axum::Json(announce(&state, &change)))
}

async fn delete_registry_entry(
    State(state): State<AppState>,
    required: Require<perm::ManageRegistry>,
    Path(name): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let change = registry::delete(&state.store, &name, author(&required.0.account))
        .await
        .map_err(store_error)?;
    let mut view = announce(&state, &change);
    view["deleted"] = json!(true);
    Ok(axum::Json(view))
}

// ---- consents ----

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConsentQuery {
    tenant: Option<String>,
    end_user_id: Option<String>,
}

async fn list_consents(
    State(state): State<AppState>,
    required: Require<perm::ManageConsents>,
    Query(query): Query<ConsentQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, query.tenant.as_deref(), &state)?;
    let list = state
        .store
        .read(|tx| consents::list(tx, scope.as_deref(), query.end_user_id.as_deref()))
        .map_err(store_error)?;
    Ok(axum::Json(json!({
        "object": "list",
        "data": list.iter().map(consents::Consent::view).collect::<Vec<_>>(),
    })))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConsentBody {
    end_user_id: String,
    purpose: String,
}

async fn grant_consent(
    State(state): State<AppState>,
    required: Require<perm::ManageConsents>,
    Query(query): Query<TenantQuery>,
    Json(body): Json<ConsentBody>,
) -> Result<impl IntoResponse, ApiError> {
    let tenant_id = acting_tenant(&required.0, query.tenant.as_deref(), &state)?;
    let consent = consents::grant(&state.store, &tenant_id, &body.end_user_id, &body.purpose)
        .await
        .map_err(store_error)?;
    Ok((StatusCode::CREATED, axum::Json(consent.view())))
}

async fn show_consent(
    State(state): State<AppState>,
    required: Require<perm::ManageConsents>,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, None, &state)?;
    let consent = state
        .store
        .read(|tx| consents::get(tx, scope.as_deref(), &id))
        .map_err(store_error)?;
    Ok(axum::Json(consent.view()))
}

async fn withdraw_consent(
    State(state): State<AppState>,
    required: Require<perm::ManageConsents>,
    Path(id): Path<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let scope = tenant_scope(&required.0, None, &state)?;
    let tenant_id = match scope {
        Some(t) => t,
        // The owner may withdraw any tenant's record.
        None => {
            state
                .store
                .read(|tx| consents::get(tx, None, &id))
                .map_err(store_error)?
                .tenant_id
        }
    };
    let consent = consents::withdraw(&state.store, &tenant_id, &id)
        .await
        .map_err(store_error)?;
    Ok(axum::Json(consent.view()))
}

// ---- erasure ----

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ErasureBody {
    end_user_id: String,
}

async fn erase_subject(
    State(state): State<AppState>,
    required: Require<perm::EraseSubjects>,
    Query(query): Query<TenantQuery>,
    Json(body): Json<ErasureBody>,
) -> Result<axum::Json<Value>, ApiError> {
    debug_assert_eq!(required.0.account.role, Role::Owner);
    let tenant_id = acting_tenant(&required.0, query.tenant.as_deref(), &state)?;
    let mut report = erasure::erase(
        &state.store,
        &tenant_id,
        &body.end_user_id,
        actor(&required.0.account),
    )
    .await
    .map_err(store_error)?;
    report["erasedAt"] = json!(format_rfc3339(now_ms()));
    Ok(axum::Json(report))
}

/// `POST /api/v1/erasure/export`: the subject's export alone, nothing
/// erased (GDPR Articles 15 and 20). A POST so the id stays out of URLs
/// and logs, and so the act is in the audit log like any other write.
async fn export_subject(
    State(state): State<AppState>,
    required: Require<perm::EraseSubjects>,
    Query(query): Query<TenantQuery>,
    Json(body): Json<ErasureBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let tenant_id = acting_tenant(&required.0, query.tenant.as_deref(), &state)?;
    let export =
        erasure::export(&state.store, &tenant_id, &body.end_user_id).map_err(store_error)?;
    Ok(axum::Json(export))
}
