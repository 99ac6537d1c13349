//! The human-review queue: listing held requests and deciding them
//! (approve or reject, with an optional note).

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use serde_json::Value;

use crate::api::billing::{store_error, tenant_scope};
use crate::api::extract::{Require, perm};
use crate::api::json::{Query, list_answer};
use crate::api::state::AppState;
use crate::auth::sessions::CurrentAccount;
use crate::base::error::ApiError;
use crate::base::time::now_ms;
use crate::compliance::reviews;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct ReviewQuery {
    tenant: Option<String>,
    status: Option<String>,
}

pub(super) async fn list_reviews(
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
    Ok(axum::Json(list_answer(items.iter().map(|r| r.view(now)))))
}

pub(super) async fn show_review(
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
pub(super) struct DecisionBody {
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

pub(super) async fn approve_review(
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

pub(super) async fn reject_review(
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
