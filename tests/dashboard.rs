//! Dashboard authentication: login, sessions, logout, `/api/v1/me`, and
//! the router's deny-by-default.

mod common;

use common::{TestServer, client, error_code};
use serde_json::json;

async fn fetch_me(server: &TestServer, token: &str) -> serde_json::Value {
    let response = client()
        .get(server.url("/api/v1/me"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

async fn login(server: &TestServer, email: &str, password: &str) -> reqwest::Response {
    client()
        .post(server.url("/api/v1/auth/login"))
        .json(&json!({ "email": email, "password": password }))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_owner_signs_in_sees_itself_and_signs_out() {
    let server = TestServer::start();
    let response = login(&server, "owner@localhost", &server.owner_password()).await;
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = response.json().await.unwrap();
    let token = body["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("tgs_"));
    assert!(body["expiresAt"].as_str().unwrap().ends_with('Z'));

    let http = client();
    let me = fetch_me(&server, &token).await;
    assert_eq!(me["email"], "owner@localhost");
    assert_eq!(me["role"], "owner");
    assert_eq!(me["tenant"]["name"], "default");
    assert!(
        me["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "users.assign_owner")
    );
    assert!(me.get("password_hash").is_none() && me.get("passwordHash").is_none());

    let out = http
        .post(server.url("/api/v1/auth/logout"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 204);
    let after = http
        .get(server.url("/api/v1/me"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(after, 401).await, "invalid_token");
}

#[tokio::test]
async fn wrong_passwords_unknown_accounts_and_bad_bodies_are_refused() {
    let server = TestServer::start();
    let wrong = login(&server, "owner@localhost", "not the password").await;
    assert_eq!(error_code(wrong, 401).await, "invalid_credentials");
    let unknown = login(&server, "nobody@example.com", "whatever-password").await;
    assert_eq!(error_code(unknown, 401).await, "invalid_credentials");
    let http = client();
    let malformed = http
        .post(server.url("/api/v1/auth/login"))
        .header("content-type", "application/json")
        .body("{\"email\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(malformed, 400).await, "invalid_request");
    let missing = http
        .post(server.url("/api/v1/auth/login"))
        .json(&json!({ "email": "a@b.io" }))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(missing, 400).await, "invalid_request");
    let not_json = http
        .post(server.url("/api/v1/auth/login"))
        .body("email=a")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(not_json, 415).await, "unsupported_media_type");
}

#[tokio::test]
async fn accounts_made_with_the_cli_sign_in_and_disabling_ends_their_sessions() {
    let server = TestServer::start();
    let created = server.cli_with_stdin(
        &[
            "users",
            "create",
            "--email",
            "Ada@Example.com",
            "--role",
            "auditor",
            "--password-stdin",
            "--json",
        ],
        "a long enough password\n",
    );
    assert!(created.status.success(), "{}", common::stderr(&created));
    let account: serde_json::Value = serde_json::from_slice(&created.stdout).unwrap();
    assert_eq!(account["email"], "ada@example.com");
    assert_eq!(account["role"], "auditor");

    let response = login(&server, "ada@example.com", "a long enough password").await;
    let token = response.json::<serde_json::Value>().await.unwrap()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let http = client();
    let me = fetch_me(&server, &token).await;
    assert_eq!(me["role"], "auditor");
    assert!(
        !me["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "keys.manage_all")
    );

    let changed = server.cli_json(&["users", "set-role", "ada@example.com", "reviewer"]);
    assert_eq!(changed["role"], "reviewer");
    let me = fetch_me(&server, &token).await;
    assert_eq!(
        me["role"], "reviewer",
        "a role change applies to live sessions"
    );

    server.cli_json(&["users", "disable", "ada@example.com"]);
    let after = http
        .get(server.url("/api/v1/me"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(after, 401).await, "invalid_token");
    let again = login(&server, "ada@example.com", "a long enough password").await;
    assert_eq!(error_code(again, 403).await, "account_disabled");

    // Generated passwords are printed once, on stderr.
    let generated = server.cli(&[
        "users",
        "create",
        "--email",
        "bob@example.com",
        "--role",
        "user",
    ]);
    assert!(generated.status.success());
    let text = common::stderr(&generated);
    let password = text.rsplit(": ").next().unwrap().trim();
    assert_eq!(
        login(&server, "bob@example.com", password).await.status(),
        200
    );
    // Duplicates and short passwords are refused.
    let dup = server.cli_with_stdin(
        &[
            "users",
            "create",
            "--email",
            "bob@example.com",
            "--role",
            "user",
            "--password-stdin",
        ],
        "another long password",
    );
    assert!(!dup.status.success());
    assert!(common::stderr(&dup).contains("already exists"));
    let short = server.cli_with_stdin(
        &[
            "users",
            "create",
            "--email",
            "c@example.com",
            "--role",
            "user",
            "--password-stdin",
        ],
        "short",
    );
    assert!(!short.status.success());
    assert!(common::stderr(&short).contains("at least 12"));
}

#[tokio::test]
async fn the_router_denies_by_default() {
    let server = TestServer::start();
    let http = client();
    for path in ["/api/v1/me", "/api/v1/keys", "/api/v1/no-such-route"] {
        let response = http.get(server.url(path)).send().await.unwrap();
        assert_eq!(error_code(response, 401).await, "missing_token", "{path}");
    }
    // An API key is not a dashboard token.
    let response = http
        .get(server.url("/api/v1/me"))
        .bearer_auth(server.demo_key())
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(response, 401).await, "invalid_token");
    // Public: the probes.
    assert_eq!(
        http.get(server.url("/healthz"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        http.get(server.url("/readyz"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // Paths outside the public list need credentials, even unknown ones;
    // with credentials, unknown routes are 404 in the error shape.
    let response = http.get(server.url("/nowhere")).send().await.unwrap();
    assert_eq!(error_code(response, 401).await, "missing_token");
    let token: serde_json::Value = login(&server, "owner@localhost", &server.owner_password())
        .await
        .json()
        .await
        .unwrap();
    let token = token["token"].as_str().unwrap();
    let response = http
        .get(server.url("/api/v1/no-such-route"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(response, 404).await, "not_found");
    let response = http
        .get(server.url("/v1/no-such-route"))
        .bearer_auth(server.demo_key())
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(response, 404).await, "not_found");
    let response = http
        .delete(server.url("/v1/models"))
        .bearer_auth(server.demo_key())
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(response, 405).await, "method_not_allowed");
    // Every response carries a request id.
    let response = http.get(server.url("/healthz")).send().await.unwrap();
    assert!(response.headers().contains_key("x-request-id"));
}
