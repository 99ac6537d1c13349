//! Dashboard routes under `/api/v1`: sign-in and the signed-in account.
//! Later capabilities add their routes here, each stating its permission
//! in the handler's signature.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::extract::Signed;
use crate::api::json::Json;
use crate::api::state::AppState;
use crate::auth::accounts::Permission;
use crate::auth::sessions;
use crate::base::error::{ApiError, Code};
use crate::base::time::format_rfc3339;
use crate::tenants;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/auth/login", post(login))
        .route("/api/v1/auth/logout", post(logout))
        .route("/api/v1/me", get(me))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginBody {
    email: String,
    password: String,
}

async fn login(
    State(state): State<AppState>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    Json(body): Json<LoginBody>,
) -> Result<axum::Json<Value>, ApiError> {
    // With single sign-on in charge, only the bootstrap owner keeps a
    // password: the way in when the provider is down or misconfigured.
    let password_closed = state.sso.as_ref().is_some_and(|s| !s.config.password_login);
    if password_closed && body.email.trim().to_lowercase() != state.config.owner_email {
        return Err(ApiError::new(
            Code::PasswordSignInDisabled,
            "password sign-in is disabled on this gateway; sign in with single sign-on",
        ));
    }
    let ttl = i64::try_from(state.config.session_ttl.as_millis()).unwrap_or(i64::MAX);
    let attempt = sessions::Attempt {
        email: &body.email,
        password: &body.password,
        address: peer.map(|Extension(ConnectInfo(addr))| addr.ip()),
    };
    let issued = sessions::login(&state.store, &state.sign_in_throttle, attempt, ttl).await?;
    tracing::info!(account = %issued.account.id, "signed in");
    Ok(axum::Json(json!({
        "token": issued.token,
        "expiresAt": format_rfc3339(issued.expires_at),
    })))
}

async fn logout(
    State(state): State<AppState>,
    Signed(current): Signed,
) -> Result<StatusCode, ApiError> {
    sessions::logout(&state.store, current.token_digest)
        .await
        .map_err(|e| ApiError::internal("ending a session", e))?;
    Ok(StatusCode::NO_CONTENT)
}

async fn me(
    State(state): State<AppState>,
    Signed(current): Signed,
) -> Result<axum::Json<Value>, ApiError> {
    let account = &current.account;
    let tenant = state
        .store
        .read(|tx| tenants::resolve(tx, &account.tenant_id))
        .map_err(|e| ApiError::internal("reading the tenant", e))?;
    let mut view = account.view();
    view["tenant"] = json!({ "id": tenant.id, "name": tenant.name, "tier": tenant.tier.as_str() });
    // The dashboard shows the wallet to the roles that see billing.
    if account.role.can(Permission::ViewBilling) {
        view["tenant"]["walletBalance"] = tenant.view()["walletBalance"].clone();
        view["tenant"]["walletReserved"] = json!(crate::base::money::micros_to_credits(
            state.ledger.wallet_reserved(&tenant.id)
        ));
    }
    view["permissions"] = json!(current.permissions());
    view["operator"] = json!(current.operator);
    view["sessionExpiresAt"] = json!(format_rfc3339(current.expires_at));
    Ok(axum::Json(view))
}
