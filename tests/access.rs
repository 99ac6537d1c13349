//! Access (issue 9, reliability 5), as tables:
//!
//! - every dashboard route outside compliance against every role and no
//!   token, with the status each must get (the compliance routes have
//!   their own table in `tests/compliance.rs`);
//! - every inference route with no key, a wrong key, a revoked key and a
//!   dashboard token instead of a key;
//! - tenant B's accounts can neither read nor change tenant A's keys,
//!   usage, wallet or webhooks (conversations, reviews, consents and
//!   incidents: `tests/compliance.rs`);
//! - every route in `src/api` appears in one of these tables: a new route
//!   fails [`every_route_in_the_source_has_an_access_row`] until it gets
//!   its line.

mod common;

use common::upstream::{Upstream, catalogue};
use common::{TestServer, account, client, error_code, login};
use reqwest::Method;
use serde_json::{Value, json};

const ROLES: [&str; 7] = [
    "owner", "admin", "billing", "auditor", "reviewer", "user", "tester",
];

/// One dashboard route: its pattern as written in `src/api`, the path
/// asked (`{key}` is a key of tenant A), a body, and the status of each
/// role in [`ROLES`] order. Without a token every one is 401.
struct Row {
    method: Method,
    pattern: &'static str,
    path: &'static str,
    body: Option<Value>,
    expect: [u16; 7],
}

fn row(
    method: Method,
    pattern: &'static str,
    path: &'static str,
    body: Option<Value>,
    expect: [u16; 7],
) -> Row {
    Row {
        method,
        pattern,
        path,
        body,
        expect,
    }
}

/// The dashboard routes' table. Write bodies are invalid where a route
/// changes something, so an allowed role gets 400 and nothing changes.
/// Columns: owner, admin, billing, auditor, reviewer, user, tester.
#[rustfmt::skip]
fn dashboard_table() -> Vec<Row> {
    use Method as M;
    let bad_urls = Some(json!({ "urls": "not a list" }));
    let no_credits = Some(json!({ "amount": 0 }));
    vec![
        row(M::GET, "/api/v1/me", "/api/v1/me", None, [200, 200, 200, 200, 200, 200, 200]),
        row(M::GET, "/api/v1/usage", "/api/v1/usage", None, [200, 200, 200, 200, 403, 200, 403]),
        row(M::GET, "/api/v1/usage/records", "/api/v1/usage/records", None, [200, 200, 200, 200, 403, 200, 403]),
        // A key made by the CLI belongs to no account: a `user` sees only its own.
        row(M::GET, "/api/v1/keys/{id}", "/api/v1/keys/{key}", None, [200, 200, 200, 200, 403, 404, 403]),
        row(M::POST, "/api/v1/tenants/{id}/credits", "/api/v1/tenants/default/credits", no_credits, [400, 400, 400, 403, 403, 403, 403]),
        row(M::GET, "/api/v1/billing/history", "/api/v1/billing/history", None, [200, 200, 200, 403, 403, 403, 403]),
        row(M::GET, "/api/v1/webhooks", "/api/v1/webhooks", None, [200, 200, 403, 403, 403, 403, 403]),
        row(M::PUT, "/api/v1/webhooks", "/api/v1/webhooks", bad_urls, [400, 400, 403, 403, 403, 403, 403]),
        row(M::POST, "/api/v1/webhooks/secret/rotate", "/api/v1/webhooks/secret/rotate", None, [200, 200, 403, 403, 403, 403, 403]),
        row(M::GET, "/api/v1/webhooks/deliveries", "/api/v1/webhooks/deliveries", None, [200, 200, 403, 403, 403, 403, 403]),
        // The operator's (every account here is of the operator tenant);
        // another tenant's are in `tests/security_access.rs`.
        row(M::GET, "/api/v1/tenants", "/api/v1/tenants", None, [200, 200, 403, 403, 403, 403, 403]),
        row(M::POST, "/api/v1/tenants", "/api/v1/tenants", Some(json!({ "name": "" })), [400, 400, 403, 403, 403, 403, 403]),
        row(M::PATCH, "/api/v1/tenants/{id}", "/api/v1/tenants/default", Some(json!({ "tier": "gold" })), [400, 400, 403, 403, 403, 403, 403]),
        row(M::GET, "/api/v1/tenants/{id}/models", "/api/v1/tenants/default/models", None, [200, 200, 200, 200, 200, 200, 200]),
        row(M::PUT, "/api/v1/tenants/{id}/models", "/api/v1/tenants/default/models", Some(json!({ "models": ["nope"] })), [400, 400, 403, 403, 403, 403, 403]),
        // Ends the session: checked last, on its own (see the test).
        row(M::POST, "/api/v1/auth/logout", "/api/v1/auth/logout", None, [204, 204, 204, 204, 204, 204, 204]),
    ]
}

/// The compliance routes: their role table is `route_table` in
/// `tests/compliance.rs`.
const COVERED_BY_COMPLIANCE: &[&str] = &[
    "/api/v1/policies",
    "/api/v1/audit",
    "/api/v1/audit/verify",
    "/api/v1/conversations",
    "/api/v1/conversations/{id}",
    "/api/v1/reviews",
    "/api/v1/reviews/{id}",
    "/api/v1/reviews/{id}/approve",
    "/api/v1/reviews/{id}/reject",
    "/api/v1/incidents",
    "/api/v1/incidents/{id}",
    "/api/v1/sub-processors",
    "/api/v1/sub-processors/{name}",
    "/api/v1/sub-processors/{name}/history",
    "/api/v1/sub-processor-history",
    "/api/v1/consents",
    "/api/v1/consents/{id}",
    "/api/v1/erasure",
    "/api/v1/erasure/export",
];

/// The dashboard API's own routes: their role table is
/// `every_route_answers_each_role_as_the_permission_table_says` in
/// `tests/dashboard_api.rs`.
const COVERED_BY_DASHBOARD_API: &[&str] = &[
    "/api/v1/keys",
    "/api/v1/keys/{id}/revoke",
    "/api/v1/keys/{id}/rotate",
    "/api/v1/models",
    "/api/v1/models/{id}",
    "/api/v1/openapi.json",
    "/api/v1/playground/chat",
    "/api/v1/stats",
    "/api/v1/users",
    "/api/v1/users/{id}",
];

/// Routes open without credentials (`login` checks its body itself; the
/// single sign-on round trip is checked in tests/sso.rs).
const PUBLIC: &[&str] = &[
    "/api/v1/auth/login",
    "/api/v1/auth/methods",
    "/api/v1/auth/oidc/start",
    "/api/v1/auth/oidc/callback",
    "/api/v1/auth/oidc/exchange",
    "/healthz",
    "/readyz",
    "/metrics",
];

/// Every inference route: (method, pattern, path asked, body).
#[rustfmt::skip]
fn inference_table() -> Vec<(Method, &'static str, &'static str, Option<Value>)> {
    let chat = json!({ "model": "ok", "messages": [{ "role": "user", "content": "hi" }] });
    vec![
        (Method::GET, "/v1/models", "/v1/models", None),
        (Method::POST, "/v1/chat/completions", "/v1/chat/completions", Some(chat)),
        (Method::GET, "/v1/reviews/{id}", "/v1/reviews/nope", None),
        (Method::POST, "/v1/images/generations", "/v1/images/generations", Some(json!({ "model": "ok", "prompt": "a cat" }))),
        (Method::POST, "/v1/images/edits", "/v1/images/edits", None),
        (Method::POST, "/v1/audio/transcriptions", "/v1/audio/transcriptions", None),
        (Method::POST, "/v1/audio/speech", "/v1/audio/speech", Some(json!({ "model": "ok", "input": "hi", "voice": "alloy" }))),
        (Method::POST, "/v1/embeddings", "/v1/embeddings", Some(json!({ "model": "ok", "input": "hi" }))),
        (Method::POST, "/v1/messages", "/v1/messages", Some(json!({ "model": "ok", "max_tokens": 8, "messages": [{ "role": "user", "content": "hi" }] }))),
        (Method::POST, "/v1/messages/count_tokens", "/v1/messages/count_tokens", Some(json!({ "model": "ok", "messages": [{ "role": "user", "content": "hi" }] }))),
        (Method::POST, "/v1beta/models/{model_action}", "/v1beta/models/ok:generateContent", Some(json!({ "contents": [{ "parts": [{ "text": "hi" }] }] }))),
        (Method::POST, "/v1/models/{model_action}", "/v1/models/ok:streamGenerateContent?alt=sse", Some(json!({ "contents": [{ "parts": [{ "text": "hi" }] }] }))),
        (Method::GET, "/v1/models/{model_action}", "/v1/models/ok", None),
        (Method::POST, "/v1/completions", "/v1/completions", Some(json!({ "model": "ok", "prompt": "hi" }))),
        (Method::POST, "/v1/responses", "/v1/responses", Some(json!({ "model": "ok", "input": "hi" }))),
    ]
}

async fn call(
    server: &TestServer,
    token: Option<&str>,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> reqwest::Response {
    let mut request = client().request(method, server.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    request.send().await.unwrap()
}

/// The status, and what is wrong with the answer's shape when not 2xx.
async fn status_and_shape(response: reqwest::Response) -> (u16, Option<String>) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    if status < 300 {
        return (status, None);
    }
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let shaped = body["error"]["code"].is_string() && body["error"]["message"].is_string();
    (
        status,
        (!shaped).then(|| format!("not in the error shape: {text}")),
    )
}

async fn setup() -> (Upstream, TestServer) {
    let upstream = Upstream::start().await;
    let server = TestServer::start_with(
        Some(&catalogue(&upstream.base_url, &[("ok", "ok")])),
        &[("TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")],
    );
    (upstream, server)
}

/// A signed-in account of each role in tenant `default`, owner first.
async fn tokens(server: &TestServer) -> Vec<(&'static str, String)> {
    let mut tokens = vec![("owner", login(server).await)];
    for role in &ROLES[1..] {
        let email = format!("{role}@a.test");
        tokens.push((role, account(server, "default", &email, role).await));
    }
    tokens
}

#[tokio::test]
async fn every_dashboard_route_answers_each_role_and_no_token_as_the_table_says() {
    let (_upstream, server) = setup().await;
    let (key_id, _) = server.create_key(&[]);
    let tokens = tokens(&server).await;
    let mut failures = Vec::new();
    let table = dashboard_table();
    for row in &table {
        let path = row.path.replace("{key}", &key_id);
        let (status, _) = status_and_shape(
            call(&server, None, row.method.clone(), &path, row.body.as_ref()).await,
        )
        .await;
        if status != 401 {
            failures.push(format!("{} {path} without a token: {status}", row.method));
        }
        if row.pattern == "/api/v1/auth/logout" {
            continue;
        }
        for ((role, token), expected) in tokens.iter().zip(row.expect) {
            let response = call(
                &server,
                Some(token),
                row.method.clone(),
                &path,
                row.body.as_ref(),
            )
            .await;
            let (status, shape) = status_and_shape(response).await;
            if status != expected || shape.is_some() {
                failures.push(format!(
                    "{} {path} as {role}: {status}, expected {expected} {shape:?}",
                    row.method
                ));
            }
        }
    }
    // Signing out: the token is gone after.
    let logout = table
        .iter()
        .find(|r| r.pattern == "/api/v1/auth/logout")
        .unwrap();
    for ((role, token), expected) in tokens.iter().zip(logout.expect) {
        let (status, _) =
            status_and_shape(call(&server, Some(token), Method::POST, logout.path, None).await)
                .await;
        let (after, _) =
            status_and_shape(call(&server, Some(token), Method::GET, "/api/v1/me", None).await)
                .await;
        if status != expected || after != 401 {
            failures.push(format!("logout as {role}: {status}, then /me {after}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test]
async fn every_inference_route_refuses_missing_wrong_revoked_keys_and_session_tokens() {
    let (_upstream, server) = setup().await;
    let (revoked_id, revoked) = server.create_key(&[]);
    server.cli_json(&["keys", "revoke", &revoked_id]);
    let owner = login(&server).await;
    let wrong = format!("kp_live_{}", "A".repeat(32));
    let mut failures = Vec::new();
    for (method, _, path, body) in inference_table() {
        for (who, token, status, code) in [
            ("no key", None, 401, "missing_api_key"),
            ("a wrong key", Some(wrong.as_str()), 401, "invalid_api_key"),
            (
                "a revoked key",
                Some(revoked.as_str()),
                403,
                "invalid_api_key",
            ),
            (
                "a session token",
                Some(owner.as_str()),
                401,
                "invalid_api_key",
            ),
        ] {
            let response = call(&server, token, method.clone(), path, body.as_ref()).await;
            let got_status = response.status().as_u16();
            let got: Value = response.json().await.unwrap_or(Value::Null);
            // Each route answers in its dialect: ours and OpenAI's
            // (`error.code`), Anthropic's (`error.type`), Google's (the
            // code in `error.details`).
            if got_status != status || !got["error"].to_string().contains(code) {
                failures.push(format!("{method} {path} with {who}: {got_status} {got}"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test]
async fn tenant_b_can_neither_read_nor_change_tenant_a_keys_usage_wallet_or_webhooks() {
    let (_upstream, server) = setup().await;
    let owner = login(&server).await;
    let (a_key_id, a_key) = server.create_key(&[]);
    let chat = json!({ "model": "ok", "messages": [{ "role": "user", "content": "hi" }] });
    assert_eq!(
        call(
            &server,
            Some(&a_key),
            Method::POST,
            "/v1/chat/completions",
            Some(&chat)
        )
        .await
        .status(),
        200
    );
    let a_hooks = json!({ "urls": ["http://127.0.0.1:9/a"] });
    assert_eq!(
        call(
            &server,
            Some(&owner),
            Method::PUT,
            "/api/v1/webhooks",
            Some(&a_hooks)
        )
        .await
        .status(),
        200
    );
    let a_wallet = server.cli_json(&["tenants", "show", "default"])["walletBalance"].clone();
    let a_webhooks: Value = call(&server, Some(&owner), Method::GET, "/api/v1/webhooks", None)
        .await
        .json()
        .await
        .unwrap();

    server.cli_json(&["tenants", "create", "--name", "beta", "--tier", "paid"]);
    let b_admin = account(&server, "beta", "admin@b.test", "admin").await;
    let b_billing = account(&server, "beta", "billing@b.test", "billing").await;
    let b_auditor = account(&server, "beta", "auditor@b.test", "auditor").await;
    let key_path = format!("/api/v1/keys/{a_key_id}");
    let records_path = format!("/api/v1/usage/records?keyId={a_key_id}");
    let new_hooks = json!({ "urls": ["http://127.0.0.1:9/b"] });
    let top_up = json!({ "amount": 5 });
    let mut failures = Vec::new();
    // (who, method, path, body, status)
    let cases: Vec<(&str, Method, &str, Option<&Value>, u16)> = vec![
        (&b_admin, Method::GET, &key_path, None, 404),
        (&b_auditor, Method::GET, &key_path, None, 404),
        (
            &b_auditor,
            Method::GET,
            "/api/v1/usage?tenant=default",
            None,
            403,
        ),
        (
            &b_auditor,
            Method::GET,
            "/api/v1/usage/records?tenant=default",
            None,
            403,
        ),
        (
            &b_billing,
            Method::GET,
            "/api/v1/billing/history?tenant=default",
            None,
            403,
        ),
        (
            &b_billing,
            Method::POST,
            "/api/v1/tenants/default/credits",
            Some(&top_up),
            403,
        ),
        (
            &b_admin,
            Method::GET,
            "/api/v1/webhooks?tenant=default",
            None,
            403,
        ),
        (
            &b_admin,
            Method::PUT,
            "/api/v1/webhooks?tenant=default",
            Some(&new_hooks),
            403,
        ),
        (
            &b_admin,
            Method::POST,
            "/api/v1/webhooks/secret/rotate?tenant=default",
            None,
            403,
        ),
        (
            &b_admin,
            Method::GET,
            "/api/v1/webhooks/deliveries?tenant=default",
            None,
            403,
        ),
    ];
    for (token, method, path, body, expected) in cases {
        let (status, shape) =
            status_and_shape(call(&server, Some(token), method.clone(), path, body).await).await;
        if status != expected || shape.is_some() {
            failures.push(format!(
                "{method} {path}: {status}, expected {expected} {shape:?}"
            ));
        }
    }
    // A's key is not B's to name: 404, as a key that does not exist.
    let records = call(&server, Some(&b_auditor), Method::GET, &records_path, None).await;
    let status = records.status().as_u16();
    let records: Value = records.json().await.unwrap();
    if status != 404 || records["error"]["code"] != "not_found" {
        failures.push(format!("B reads A's usage records: {status} {records}"));
    }
    let usage: Value = call(
        &server,
        Some(&b_auditor),
        Method::GET,
        "/api/v1/usage",
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    if usage["totals"]["requests"] != 0 {
        failures.push(format!("B's usage report counts A's requests: {usage}"));
    }
    // B's own webhook changes stay B's.
    let (status, _) = status_and_shape(
        call(
            &server,
            Some(&b_admin),
            Method::PUT,
            "/api/v1/webhooks",
            Some(&new_hooks),
        )
        .await,
    )
    .await;
    if status != 200 {
        failures.push(format!("B cannot set its own webhooks: {status}"));
    }
    let rotated = call(
        &server,
        Some(&b_admin),
        Method::POST,
        "/api/v1/webhooks/secret/rotate",
        None,
    )
    .await;
    if rotated.status() != 200 {
        failures.push(format!(
            "B cannot rotate its own secret: {}",
            rotated.status()
        ));
    }
    assert!(failures.is_empty(), "{failures:#?}");

    // Nothing of A changed.
    let after: Value = call(&server, Some(&owner), Method::GET, "/api/v1/webhooks", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(after, a_webhooks, "A's webhooks are untouched");
    assert_eq!(
        server.cli_json(&["tenants", "show", "default"])["walletBalance"],
        a_wallet
    );
    // A's key is A's: B's key is refused on A's review, and A's key works.
    let response = call(
        &server,
        Some(&a_key),
        Method::POST,
        "/v1/chat/completions",
        Some(&chat),
    )
    .await;
    assert_eq!(response.status(), 200);
    let unknown = call(&server, Some(&a_key), Method::GET, "/v1/reviews/nope", None).await;
    assert_eq!(error_code(unknown, 404).await, "not_found");
}

/// Route patterns in `src/api`: string literals that start with an API
/// prefix.
fn routes_in_source() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/api");
    let mut found = Vec::new();
    let mut files = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(dir)];
    // Modules split into directories (src/api/compliance/) are read too.
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).expect("src/api") {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        // The library's routes: a file's unit tests may name paths that
        // are no route (the dialect of an error, a rejected path).
        let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        for piece in text.split('"').skip(1).step_by(2) {
            let is_route = [
                "/api/", "/v1/", "/v1beta/", "/healthz", "/readyz", "/metrics",
            ]
            .iter()
            .any(|p| piece.starts_with(p))
                && !piece.contains(' ')
                // A prefix the dialect is chosen by, not a route.
                && !piece.ends_with('/');
            if is_route {
                found.push(piece.to_owned());
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn every_route_in_the_source_has_an_access_row() {
    let mut known: Vec<&str> = dashboard_table().iter().map(|r| r.pattern).collect();
    known.extend(COVERED_BY_COMPLIANCE);
    known.extend(COVERED_BY_DASHBOARD_API);
    known.extend(PUBLIC);
    known.extend(inference_table().iter().map(|(_, pattern, _, _)| *pattern));
    let missing: Vec<String> = routes_in_source()
        .into_iter()
        .filter(|r| !known.contains(&r.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "routes without an access row: {missing:?}; add one line each to `dashboard_table` or \
         `inference_table` in tests/access.rs (or to the compliance route table)"
    );
}
