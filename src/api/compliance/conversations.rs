//! The conversation log: listing and showing logged requests.

use axum::extract::{Path, State};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::billing::{store_error, tenant_scope};
use crate::api::extract::{Require, perm};
use crate::api::json::{Query, list_answer};
use crate::api::state::AppState;
use crate::base::error::ApiError;
use crate::compliance::conversations;

use super::{limit_param, time_param};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct ConversationQuery {
    tenant: Option<String>,
    key_id: Option<String>,
    end_user_id: Option<String>,
    level: Option<String>,
    from: Option<String>,
    to: Option<String>,
    cursor: Option<String>,
    limit: Option<usize>,
}

pub(super) async fn list_conversations(
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
    let mut answer = list_answer(page.iter().map(|c| c.view(true)));
    answer["nextCursor"] = json!(next.map(|k| URL_SAFE_NO_PAD.encode(k)));
    Ok(axum::Json(answer))
}

pub(super) async fn show_conversation(
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
