//! Single sign-on routes (all public: they are how one signs in).
//!
//! `GET /api/v1/auth/oidc/start` sends the browser to the provider;
//! `GET /api/v1/auth/oidc/callback` receives it back and sends it to the
//! dashboard with a one-time code (`/#/sso?code=...`) or a refusal
//! (`/#/sso?error=sso_...`); `POST /api/v1/auth/oidc/exchange` turns the
//! code into a session. `GET /api/v1/auth/methods` tells the sign-in page
//! which ways in exist. The domain work is in `crate::sso`.

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::json::Json;
use crate::api::state::AppState;
use crate::auth::accounts::ACCOUNT_TABLE;
use crate::auth::sessions;
use crate::base::error::{ApiError, Code};
use crate::base::time::format_rfc3339;
use crate::sso::{BINDING_COOKIE, Callback, Refusal};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/auth/methods", get(sign_in_methods))
        .route("/api/v1/auth/oidc/start", get(start_sso))
        .route("/api/v1/auth/oidc/callback", get(finish_sso))
        .route("/api/v1/auth/oidc/exchange", post(exchange_code))
}

async fn sign_in_methods(State(state): State<AppState>) -> axum::Json<Value> {
    let refusals: serde_json::Map<String, Value> = Refusal::ALL
        .iter()
        .map(|r| (r.as_str().to_owned(), json!(r.message())))
        .collect();
    axum::Json(json!({
        "password": state.sso.as_ref().is_none_or(|s| s.config.password_login),
        "sso": state.sso.is_some(),
        "ssoRefusals": refusals,
    }))
}

fn not_configured() -> ApiError {
    ApiError::not_found("single sign-on is not configured (no [sso] table)")
}

/// A redirect that no cache keeps, with the binding cookie set or cleared.
fn redirect(location: &str, cookie: String) -> Response {
    let mut response = StatusCode::FOUND.into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(location) {
        headers.insert(header::LOCATION, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        headers.insert(header::SET_COOKIE, value);
    }
    response
}

fn binding_cookie(state: &AppState, value: &str, max_age: u64) -> String {
    let secure = state
        .sso
        .as_ref()
        .is_some_and(|s| s.config.redirect_url.scheme() == "https");
    format!(
        "{BINDING_COOKIE}={value}; Path=/api/v1/auth/oidc; Max-Age={max_age}; HttpOnly; SameSite=Lax{}",
        if secure { "; Secure" } else { "" }
    )
}

async fn start_sso(State(state): State<AppState>) -> Result<Response, ApiError> {
    let sso = state.sso.as_ref().ok_or_else(not_configured)?;
    match sso.begin().await {
        Ok(begun) => Ok(redirect(
            &begun.location,
            binding_cookie(&state, &begun.binding, 600),
        )),
        Err(e) => {
            tracing::warn!(error = %e, "the OpenID provider's discovery document could not be read");
            Ok(redirect(
                &format!("/#/sso?error={}", Refusal::ProviderError.as_str()),
                binding_cookie(&state, "", 0),
            ))
        }
    }
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
}

async fn finish_sso(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(callback): Query<Callback>,
) -> Result<Response, ApiError> {
    let sso = state.sso.as_ref().ok_or_else(not_configured)?;
    let binding = cookie(&headers, BINDING_COOKIE);
    let location = match sso.complete(&state.store, callback, binding).await {
        Ok(completed) => format!("/#/sso?code={}", completed.code),
        Err(refusal) => format!("/#/sso?error={}", refusal.as_str()),
    };
    Ok(redirect(&location, binding_cookie(&state, "", 0)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExchangeBody {
    code: String,
}

async fn exchange_code(
    State(state): State<AppState>,
    Json(body): Json<ExchangeBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let sso = state.sso.as_ref().ok_or_else(not_configured)?;
    let invalid = || {
        ApiError::new(
            Code::InvalidSsoCode,
            "the sign-in code is unknown, used, or expired; sign in again",
        )
    };
    let account_id = sso.redeem(&body.code).ok_or_else(invalid)?;
    let account = state
        .store
        .read(|tx| ACCOUNT_TABLE.get(tx, account_id.as_bytes()))
        .map_err(|e| ApiError::internal("reading an account", e))?
        .ok_or_else(invalid)?;
    if account.disabled {
        return Err(ApiError::new(
            Code::AccountDisabled,
            "this account is disabled",
        ));
    }
    let ttl = i64::try_from(state.config.session_ttl.as_millis()).unwrap_or(i64::MAX);
    let issued = sessions::issue(&state.store, account, ttl).await?;
    Ok(axum::Json(json!({
        "token": issued.token,
        "expiresAt": format_rfc3339(issued.expires_at),
    })))
}
