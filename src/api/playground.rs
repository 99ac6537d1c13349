//! `POST /api/v1/playground/chat`: a chat completion sent from the
//! dashboard (tester and owner roles), through the real pipeline.
//!
//! The request runs under the account's playground key: an ordinary API key
//! named `playground`, owned by the account, created on first use and
//! stored as a digest like any key (its value is never shown, nor needed:
//! the session authenticates the caller). It is billed, capped, rate
//! limited, classified and logged like any key, and the answer is exactly
//! what `/v1/chat/completions` answers for it, streamed when
//! `stream: true`. A revoked or expired playground key is replaced by a new
//! one on the next request; to take the playground away, change the role.
//!
//! Every playground answer, served or refused, carries
//! `x-tollgate-risk-explanation`: which risk rules fired on the request and
//! on which words, and which matches were set aside and why (the same as
//! `tollgate risk classify --explain`), so the dashboard can show a tester
//! or a compliance officer why a request was classified as it was.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use crate::api::billing::store_error;
use crate::api::extract::{Require, perm, record_entry, refusal};
use crate::api::json::JsonBody;
use crate::api::state::AppState;
use crate::auth::accounts::Account;
// The playground key has default settings, chosen here, not by the caller.
use crate::auth::keys::{ApiKey, KeySettings, KeyState, Latitude};
use crate::base::error::{ApiError, Code};
use crate::base::time::now_ms;

/// The name of every account's playground key.
pub const PLAYGROUND_KEY_NAME: &str = "playground";

/// First uses run one at a time, so concurrent first requests of an
/// account create one key, not two.
static CREATING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/playground/chat", post(playground_chat))
}

async fn playground_chat(
    State(state): State<AppState>,
    required: Require<perm::UsePlayground>,
    headers: HeaderMap,
    body: JsonBody,
) -> Response {
    let key = match playground_key(&state, &required.0.account).await {
        Ok(key) => key,
        Err(error) => return error.into_response(),
    };
    // What the authentication layer checks for a presented key.
    if key.state(now_ms()) == KeyState::OverBudget {
        return ApiError::new(
            Code::BudgetExceeded,
            "the playground key has reached its credit limit for this cycle",
        )
        .into_response();
    }
    let mut response = crate::api::v1::answer_chat(&state, &key, &headers, &body.0).await;
    if let Some(explanation) = explanation_header(&state.classifier, &body.0) {
        response
            .headers_mut()
            .insert(EXPLANATION_HEADER, explanation);
    }
    if response.status().is_client_error() || response.status().is_server_error() {
        let draft = refusal(
            &key.tenant_id,
            format!("key:{}", key.id),
            "/api/v1/playground/chat",
            &response,
        );
        record_entry(&state, draft).await;
    }
    response
}

/// The header that carries the risk explanation.
pub const EXPLANATION_HEADER: &str = "x-tollgate-risk-explanation";

/// The rules' explanation of a chat request body (rules only, as the
/// gateway classifies it before any judge), as a header value: JSON with
/// every character outside ASCII escaped, since a header is ASCII. None
/// when the body is not a JSON object.
fn explanation_header(
    classifier: &crate::compliance::Classifier,
    body: &[u8],
) -> Option<HeaderValue> {
    let request: serde_json::Value = serde_json::from_slice(body).ok()?;
    request.is_object().then_some(())?;
    let c = classifier.classify(
        request["purpose"].as_str(),
        request.get("deployer_context"),
        &request["messages"],
    );
    let mut explanation = c.explanation();
    explanation["level"] = c.level.as_str().into();
    let mut ascii = String::new();
    for ch in explanation.to_string().chars() {
        if ch.is_ascii() && !ch.is_ascii_control() {
            ascii.push(ch);
        } else {
            let mut units = [0u16; 2];
            for unit in ch.encode_utf16(&mut units) {
                ascii.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    HeaderValue::from_str(&ascii).ok()
}

/// The account's usable playground key (not revoked, not expired), created
/// when there is none.
async fn playground_key(state: &AppState, account: &Account) -> Result<ApiKey, ApiError> {
    if let Some(key) = find(state, account)? {
        return Ok(key);
    }
    let _creating = CREATING.lock().await;
    if let Some(key) = find(state, account)? {
        return Ok(key);
    }
    let settings = KeySettings {
        name: PLAYGROUND_KEY_NAME.into(),
        owner_account_id: Some(account.id.clone()),
        ..KeySettings::default()
    };
    let issued = state
        .keys
        .create(&account.tenant_id, settings, Latitude::Any)
        .await
        .map_err(store_error)?;
    tracing::info!(account = %account.id, key = %issued.key.id, "playground key created");
    Ok(issued.key)
}

fn find(state: &AppState, account: &Account) -> Result<Option<ApiKey>, ApiError> {
    let now = now_ms();
    Ok(state
        .keys
        .list(Some(&account.tenant_id))
        .map_err(store_error)?
        .into_iter()
        .filter(|k| {
            k.owner_account_id.as_deref() == Some(&account.id)
                && k.name == PLAYGROUND_KEY_NAME
                && matches!(k.state(now), KeyState::Active | KeyState::OverBudget)
        })
        .max_by_key(|k| k.created_at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compliance::Classifier;

    #[test]
    fn the_explanation_header_names_the_rules_and_is_ascii_json() {
        let body = serde_json::json!({
            "model": "mock",
            "messages": [{ "role": "user", "content": "Sortiere die Bewerber aus und lehne die schwächsten ab." }],
        });
        let header =
            explanation_header(&Classifier::built_in(), body.to_string().as_bytes()).unwrap();
        let text = header.to_str().unwrap();
        let parsed: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(parsed["level"], "high");
        assert_eq!(parsed["hits"][0]["rule"], "annex3_4a_recruitment");
        assert!(parsed["hits"][0]["matched"].is_string());
        assert!(explanation_header(&Classifier::built_in(), b"not json").is_none());
    }
}
