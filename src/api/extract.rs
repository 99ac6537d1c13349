//! Authentication at the HTTP edge.
//!
//! [`authenticate`] runs in front of every route and denies by default:
//! a path is public only if [`is_public`] lists it; `/v1` and `/v1beta`
//! need an API key; everything else (`/api/v1`) needs a dashboard session.
//! What it establishes is put in the request's extensions, where the
//! extractors ([`InferenceKey`], [`Signed`], [`Require`]) pick it up, so a
//! handler states what it needs in its signature.

use std::marker::PhantomData;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api::state::AppState;
use crate::audit::{self, Draft};
pub use crate::auth::accounts::{PermissionMarker, perm};
use crate::auth::error::AuthError;
use crate::auth::keys::ApiKey;
use crate::auth::refusals;
use crate::auth::sessions::{self, CurrentAccount};
use crate::base::error::{ApiError, Code};
use crate::base::time::now_ms;

/// Routes anyone may call: probes, sign-in, and the single sign-on
/// round trip (which signs in: it cannot need a session).
const PUBLIC: &[&str] = &[
    "/healthz",
    "/readyz",
    "/api/v1/auth/login",
    "/api/v1/auth/methods",
    "/api/v1/auth/oidc/start",
    "/api/v1/auth/oidc/callback",
    "/api/v1/auth/oidc/exchange",
    "/metrics",
];

/// Listed routes, and the dashboard's page and files (its data comes from
/// `/api/v1`, which needs a session).
pub fn is_public(path: &str) -> bool {
    PUBLIC.contains(&path) || crate::api::ui::is_ui_path(path)
}

fn is_inference(path: &str) -> bool {
    path == "/v1" || path.starts_with("/v1/") || path.starts_with("/v1beta/")
}

/// The API key of an inference request.
#[derive(Debug, Clone)]
pub struct InferenceKey(pub Arc<ApiKey>);

/// The key value from whichever of the three accepted headers carries it.
pub fn presented_key(headers: &HeaderMap) -> Option<&str> {
    if let Some(token) = bearer(headers) {
        return Some(token);
    }
    ["x-api-key", "x-goog-api-key"]
        .into_iter()
        .find_map(|name| headers.get(name).and_then(|v| v.to_str().ok()))
        .map(str::trim)
}

/// The key of a Google generate-content call sent as `?key=`, as Google's
/// clients may. Only on those routes; the query is never logged (the trace
/// span holds the path alone) nor forwarded upstream.
pub fn query_key(uri: &axum::http::Uri) -> Option<String> {
    if crate::api::error::Dialect::for_path(uri.path()) != crate::api::error::Dialect::Google {
        return None;
    }
    url::form_urlencoded::parse(uri.query()?.as_bytes())
        .find(|(name, _)| name == "key")
        .map(|(_, value)| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// The credentials of an `Authorization: Bearer <token>` header. The
/// scheme is matched without regard to case (RFC 7235: `BEARER` is
/// `Bearer`); another scheme is no bearer token.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    bearer_token(headers.get("authorization")?.to_str().ok()?)
}

/// The token of a `Bearer <token>` header value.
pub fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once([' ', '\t'])?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

pub async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if is_public(path) {
        return next.run(request).await;
    }
    let now = now_ms();
    if is_inference(path) {
        authenticate_key(state, request, next, now).await
    } else {
        authenticate_session(state, request, next, now).await
    }
}

/// `/v1` and `/v1beta`: the API key, put in the extensions. A refusal of
/// a known key, or an error answer to its request, is audited; an
/// unknown or missing key is only counted.
async fn authenticate_key(state: AppState, mut request: Request, next: Next, now: i64) -> Response {
    let path = request.uri().path();
    let presented = presented_key(request.headers())
        .map(str::to_owned)
        .or_else(|| query_key(request.uri()));
    let source = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip());
    let Some(presented) = presented else {
        let error = ApiError::new(
            Code::MissingApiKey,
            "no API key: send it as `Authorization: Bearer <key>`, `X-Api-Key` or `x-goog-api-key`",
        );
        state
            .refusals
            .refused(source, path, error.code.as_str(), now);
        return error.into_response();
    };
    let path = path.to_owned();
    match state.keys.identify(&presented, now) {
        Ok(key) => {
            request.extensions_mut().insert(InferenceKey(key.clone()));
            let response = next.run(request).await;
            if response.status().is_client_error() || response.status().is_server_error() {
                let draft = refusal(&key.tenant_id, format!("key:{}", key.id), &path, &response);
                record_entry(&state, draft).await;
            }
            response
        }
        Err((Some(key), error)) => {
            let response = known_key_refused(&state, &key, error, now);
            let draft = refusal(&key.tenant_id, format!("key:{}", key.id), &path, &response);
            record_entry(&state, draft).await;
            response
        }
        Err((None, error)) => {
            // Not audited: anyone can send any value, as fast as they
            // like (refusals.rs).
            state
                .refusals
                .refused(source, &path, error.code().as_str(), now);
            ApiError::from(error).into_response()
        }
    }
}

/// A known key refused (revoked, expired, over budget): its tenant's to
/// see, like any refusal of a key, and it still gets its request-rate
/// headers, uncounted.
fn known_key_refused(state: &AppState, key: &ApiKey, error: AuthError, now: i64) -> Response {
    let mut response = ApiError::from(error).into_response();
    let allowance = key.rotated_from.as_deref().unwrap_or(&key.id);
    let limit = key.rate_limit.unwrap_or(state.config.default_rate_limit);
    let mut headers = state.limiter.peek(allowance, limit, now).headers().to_vec();
    if let Some(tpm) = key.tpm_limit {
        headers.extend(state.key_tokens.peek(allowance, tpm, now).headers());
    }
    for (name, value) in headers {
        if let Ok(value) = axum::http::HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// `/api/v1`: the dashboard session, put in the extensions; an act
/// (anything but GET and HEAD) is audited.
async fn authenticate_session(
    state: AppState,
    mut request: Request,
    next: Next,
    now: i64,
) -> Response {
    let Some(token) = bearer(request.headers()) else {
        return ApiError::new(
            Code::MissingToken,
            "sign in first: send `Authorization: Bearer <session token>`",
        )
        .into_response();
    };
    match sessions::authenticate(&state.store, token, now) {
        Ok(current) => {
            if request.method() == axum::http::Method::GET
                || request.method() == axum::http::Method::HEAD
            {
                request.extensions_mut().insert(current);
                return next.run(request).await;
            }
            audited_act(&state, current, request, next).await
        }
        Err(error) => ApiError::from(error).into_response(),
    }
}

/// The audit entry of a refused inference request of a known key. The
/// path is cut to [`refusals::MAX_LOGGED_PATH`] bytes (its full length is
/// kept), so an entry stays small whatever the caller sends.
pub(crate) fn refusal(tenant_id: &str, actor: String, path: &str, response: &Response) -> Draft {
    let status = response.status().as_u16();
    let code = response
        .extensions()
        .get::<ApiError>()
        .map_or_else(|| status.to_string(), |e| e.code.as_str().to_owned());
    let target = refusals::bounded_path(path);
    let details = if target.len() < path.len() {
        serde_json::json!({ "status": status, "pathBytes": path.len() })
    } else {
        serde_json::json!({ "status": status })
    };
    Draft::new(tenant_id, actor, "inference.refused", target)
        .outcome(&code)
        .details(details)
}

pub(crate) async fn record_entry(state: &AppState, draft: Draft) {
    if let Err(e) = audit::record(&state.store, draft).await {
        tracing::error!(error = %e, "writing an audit entry failed");
    }
}

/// Dashboard routes whose body is an inference request.
fn is_inference_body(path: &str) -> bool {
    path == "/api/v1/playground/chat"
}

/// The largest administrative body kept in an audit entry.
const MAX_AUDITED_BODY: usize = 1 << 20;

/// Runs an administrative act (any `/api/v1` method but GET) and records
/// it, with its outcome, before the answer leaves: who, which route, which
/// target, and the body with secrets redacted and end-user ids
/// pseudonymised.
async fn audited_act(
    state: &AppState,
    current: CurrentAccount,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, crate::api::router::MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => return crate::api::router::payload_too_large().into_response(),
    };
    let route = parts
        .extensions
        .get::<axum::extract::MatchedPath>()
        .map_or_else(|| parts.uri.path().to_owned(), |m| m.as_str().to_owned());
    let action = format!("{} {route}", parts.method);
    let target = parts.uri.path().to_owned();
    let account = current.account.clone();
    parts.extensions.insert(current);
    let details_body = if is_inference_body(&target) {
        // A playground request is inference: its messages are kept (or
        // not) by the conversation log's policy, never in the audit log.
        serde_json::Value::String(format!("{} bytes of inference, not kept", bytes.len()))
    } else if bytes.len() <= MAX_AUDITED_BODY {
        serde_json::from_slice::<serde_json::Value>(&bytes)
            .map(|mut v| {
                redact(&mut v, &account.tenant_id);
                // Webhook URLs may carry their receiver's token.
                crate::base::redact::urls_in(&mut v);
                redact_pii(state, &account.tenant_id, &mut v);
                v
            })
            .unwrap_or(serde_json::Value::Null)
    } else {
        serde_json::Value::String(format!("{} bytes, not kept", bytes.len()))
    };
    let response = next
        .run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await;
    let outcome = match response.extensions().get::<ApiError>() {
        Some(error) => error.code.as_str().to_owned(),
        None if response.status().is_success() => "ok".to_owned(),
        None => response.status().as_u16().to_string(),
    };
    let draft = Draft::new(
        &account.tenant_id,
        format!("account:{}", account.id),
        &action,
        &target,
    )
    .outcome(&outcome)
    .details(serde_json::json!({
        "email": account.email,
        "role": account.role.as_str(),
        "status": response.status().as_u16(),
        "body": details_body,
    }));
    record_entry(state, draft).await;
    response
}

/// Replaces personal data in an audited body with placeholders, unless the
/// tenant's policy turns PII redaction off (an incident's description or a
/// consent's note may name a person's e-mail or phone).
fn redact_pii(state: &AppState, tenant_id: &str, body: &mut serde_json::Value) {
    let policy = match state
        .store
        .read(|tx| crate::tenants::resolve(tx, tenant_id))
    {
        Ok(tenant) => tenant.policy,
        // No such tenant: the default policy's redaction applies.
        Err(_) => crate::tenants::CompliancePolicy::default(),
    };
    if policy.pii_redaction != crate::pii::Mode::Off {
        crate::pii::Session::new(policy.pii_redaction, &policy.pii_patterns).redact_json(body);
    }
}

/// Removes secrets from an audited body and pseudonymises end-user ids.
fn redact(value: &mut serde_json::Value, tenant_id: &str) {
    match value {
        serde_json::Value::Object(map) => {
            for (field, v) in map.iter_mut() {
                let lower = field.to_ascii_lowercase();
                if lower.contains("password") || lower.contains("secret") || lower.contains("token")
                {
                    *v = serde_json::Value::String("[redacted]".into());
                } else if matches!(lower.as_str(), "enduserid" | "end_user_id") {
                    if let Some(id) = v.as_str() {
                        *v = serde_json::Value::String(audit::pseudonym(tenant_id, id));
                    }
                } else {
                    redact(v, tenant_id);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| redact(v, tenant_id)),
        _ => {}
    }
}

impl<S: Send + Sync> FromRequestParts<S> for InferenceKey {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<InferenceKey>()
            .cloned()
            .ok_or_else(|| ApiError::new(Code::MissingApiKey, "this route needs an API key"))
    }
}

/// Any signed-in account.
#[derive(Debug, Clone)]
pub struct Signed(pub CurrentAccount);

impl<S: Send + Sync> FromRequestParts<S> for Signed {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<CurrentAccount>()
            .cloned()
            .map(Signed)
            .ok_or_else(|| {
                ApiError::new(Code::MissingToken, "this route needs a dashboard session")
            })
    }
}

/// A signed-in account whose role has the permission `P`.
pub struct Require<P: PermissionMarker>(pub CurrentAccount, PhantomData<P>);

impl<P: PermissionMarker, S: Send + Sync> FromRequestParts<S> for Require<P> {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Signed(current) = Signed::from_request_parts(parts, state).await?;
        if !current.can(P::PERMISSION) {
            let whose = if P::PERMISSION.operator_only() && current.account.role.can(P::PERMISSION)
            {
                "only the operator tenant's accounts have"
            } else {
                "the role does not have"
            };
            return Err(ApiError::new(
                Code::Forbidden,
                format!(
                    "the role `{}` cannot do this: {whose} the permission `{}`",
                    current.account.role.as_str(),
                    P::PERMISSION.as_str()
                ),
            ));
        }
        Ok(Require(current, PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_key_is_read_from_any_of_the_three_headers() {
        for (name, value) in [
            ("authorization", "Bearer kp_live_x"),
            ("x-api-key", "kp_live_x"),
            ("x-goog-api-key", "kp_live_x"),
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(name, HeaderValue::from_static(value));
            assert_eq!(presented_key(&headers), Some("kp_live_x"), "{name}");
        }
        assert_eq!(presented_key(&HeaderMap::new()), None);
    }

    #[test]
    fn the_bearer_scheme_is_matched_without_regard_to_case() {
        for value in [
            "Bearer t",
            "bearer t",
            "BEARER t",
            "bEaReR   t ",
            " Bearer\tt",
        ] {
            assert_eq!(bearer_token(value), Some("t"), "{value:?}");
        }
        for value in ["Basic t", "Bearer", "Bearer ", "Bearert", "t"] {
            assert_eq!(bearer_token(value), None, "{value:?}");
        }
    }

    #[test]
    fn a_query_key_counts_on_the_google_routes_only() {
        let uri: axum::http::Uri = "/v1beta/models/g:generateContent?alt=sse&key=kp_live_x"
            .parse()
            .unwrap();
        assert_eq!(query_key(&uri).as_deref(), Some("kp_live_x"));
        let uri: axum::http::Uri = "/v1/chat/completions?key=kp_live_x".parse().unwrap();
        assert_eq!(query_key(&uri), None);
    }

    #[test]
    fn only_listed_paths_are_public() {
        assert!(is_public("/healthz"));
        assert!(is_public("/api/v1/auth/login"));
        assert!(!is_public("/api/v1/auth/logout"));
        assert!(!is_public("/api/v1/me"));
        assert!(!is_public("/v1/models"));
        assert!(is_public("/") && is_public("/index.html") && is_public("/assets/app.js"));
        assert!(!is_public("/api/v1/keys") && !is_public("/keys"));
    }
}
