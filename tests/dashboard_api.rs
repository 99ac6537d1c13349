//! The dashboard's management API: keys, users, models, stats, the
//! playground, and the OpenAPI document that describes `/api/v1`.
//! Every route is checked against every role as a table.

mod common;

use common::{TestServer, account, chat_json, chat_post, client, error_code, get_json, login};
use serde_json::{Value, json};

const ROLES: [&str; 7] = [
    "owner", "admin", "billing", "auditor", "reviewer", "user", "tester",
];

/// A signed-in account of each role in the default tenant (the owner is
/// the one made at first start).
async fn tokens(server: &TestServer) -> Vec<(&'static str, String)> {
    let mut out = vec![("owner", login(server).await)];
    for role in &ROLES[1..] {
        let email = format!("{role}@default.test");
        out.push((role, account(server, "default", &email, role).await));
    }
    out
}

async fn send(
    server: &TestServer,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> reqwest::Response {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = client().request(method, server.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    request.send().await.unwrap()
}

async fn json_of(response: reqwest::Response, status: u16) -> Value {
    let got = response.status().as_u16();
    let body = response.text().await.unwrap();
    assert_eq!(got, status, "body: {body}");
    serde_json::from_str(&body).unwrap_or(Value::Null)
}

fn hello(model: &str) -> Value {
    json!({ "model": model, "messages": [{ "role": "user", "content": "hello there" }] })
}

fn ids(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .collect()
}

type Body = Box<dyn Fn(&str) -> Option<Value>>;
type Row = (&'static str, &'static str, Body, Vec<&'static str>);

fn none() -> Body {
    Box::new(|_| None)
}

fn row(method: &'static str, path: &'static str, body: Body, allowed: &[&'static str]) -> Row {
    (method, path, body, allowed.to_vec())
}

#[tokio::test]
async fn every_route_answers_each_role_as_the_permission_table_says() {
    let server = TestServer::start();
    let tokens = tokens(&server).await;
    let model = |n: &str| {
        json!({
            "id": format!("table-{n}"), "provider": "mock", "upstream": "echo",
            "inputCapabilities": ["TEXT"], "outputCapabilities": ["TEXT"],
            "contextWindow": 1000,
            "pricing": { "unit": "per_request", "per_request": 0.001 },
        })
    };
    // (method, path, body for a role, roles allowed). An allowed role may
    // still get 404 for a missing record; a refused one gets 403.
    let table: Vec<Row> = vec![
        row(
            "GET",
            "/api/v1/keys",
            none(),
            &["owner", "admin", "billing", "auditor", "user"],
        ),
        row(
            "POST",
            "/api/v1/keys",
            Box::new(|r| Some(json!({ "keyName": format!("by {r}") }))),
            &["owner", "admin", "user"],
        ),
        row(
            "PATCH",
            "/api/v1/keys/key_missing",
            Box::new(|_| Some(json!({ "keyName": "x" }))),
            &["owner", "admin", "user"],
        ),
        row(
            "POST",
            "/api/v1/keys/key_missing/rotate",
            none(),
            &["owner", "admin", "user"],
        ),
        row(
            "POST",
            "/api/v1/keys/key_missing/revoke",
            none(),
            &["owner", "admin", "user"],
        ),
        row("GET", "/api/v1/users", none(), &["owner", "admin"]),
        row(
            "POST",
            "/api/v1/users",
            Box::new(|r| {
                Some(json!({ "email": format!("made-by-{r}@default.test"), "role": "user" }))
            }),
            &["owner", "admin"],
        ),
        row(
            "PATCH",
            "/api/v1/users/acc_missing",
            Box::new(|_| Some(json!({ "disabled": false }))),
            &["owner", "admin"],
        ),
        row("GET", "/api/v1/models", none(), &ROLES),
        row("GET", "/api/v1/models/mock-chat", none(), &ROLES),
        row(
            "POST",
            "/api/v1/models",
            Box::new(move |r| Some(model(r))),
            &["owner", "admin"],
        ),
        row(
            "PATCH",
            "/api/v1/models/missing-model",
            Box::new(|_| Some(json!({ "enabled": true }))),
            &["owner", "admin"],
        ),
        row("DELETE", "/api/v1/models/missing-model", none(), &["owner"]),
        row(
            "GET",
            "/api/v1/stats",
            none(),
            &["owner", "admin", "billing", "auditor", "user"],
        ),
        row(
            "POST",
            "/api/v1/playground/chat",
            Box::new(|_| Some(hello("mock-chat"))),
            &["owner", "tester"],
        ),
        row("GET", "/api/v1/openapi.json", none(), &ROLES),
    ];
    for (method, path, body, allowed) in &table {
        for (role, token) in &tokens {
            let response = send(&server, method, path, Some(token), body(role).as_ref()).await;
            let status = response.status().as_u16();
            if allowed.contains(role) {
                assert!(
                    ![401, 403].contains(&status),
                    "{method} {path} as {role}: {status} {}",
                    response.text().await.unwrap()
                );
            } else {
                assert_eq!(
                    error_code(response, 403).await,
                    "forbidden",
                    "{method} {path} as {role}"
                );
            }
        }
        let anonymous = send(&server, method, path, None, body("none").as_ref()).await;
        assert_eq!(
            error_code(anonymous, 401).await,
            "missing_token",
            "{method} {path} without a token"
        );
    }
}

#[tokio::test]
async fn keys_created_from_the_dashboard_work_and_follow_their_lifecycle() {
    let server = TestServer::start();
    let owner = login(&server).await;
    let created = json_of(
        send(
            &server,
            "POST",
            "/api/v1/keys",
            Some(&owner),
            Some(&json!({
                "keyName": "ci",
                "creditLimit": 5,
                "resetInterval": "daily",
                "rateLimit": 100,
                "expiresAt": "2099-01-01T00:00:00Z",
            })),
        )
        .await,
        201,
    )
    .await;
    let value = created["value"].as_str().unwrap().to_owned();
    let key = created["key"].clone();
    let id = key["id"].as_str().unwrap().to_owned();
    assert!(value.starts_with("kp_live_"));
    assert_eq!(key["keyName"], "ci");
    assert_eq!(key["state"], "active");
    assert_eq!(key["creditLimit"], 5.0);
    assert_eq!(key["resetInterval"], "daily");
    assert_eq!(key["expiresAt"], "2099-01-01T00:00:00.000Z");
    assert!(
        !key.to_string().contains(&value),
        "the view never holds the value"
    );
    chat_json(&server, &value, hello("mock-chat")).await;

    let listed = get_json(&server, &owner, "/api/v1/keys").await;
    assert!(ids(&listed).contains(&id));
    let active = get_json(&server, &owner, "/api/v1/keys?state=active").await;
    assert!(ids(&active).contains(&id));

    // A cap below what was spent: over budget at once, then cleared.
    let path = format!("/api/v1/keys/{id}");
    let patch = |body: Value| {
        let (server, path, owner) = (&server, &path, &owner);
        async move { send(server, "PATCH", path, Some(owner), Some(&body)).await }
    };
    let capped = json_of(patch(json!({ "creditLimit": 0.000001 })).await, 200).await;
    assert_eq!(capped["state"], "over_budget");
    assert_eq!(
        error_code(chat_post(&server, &value, &hello("mock-chat")).await, 402).await,
        "budget_exceeded"
    );
    let cleared = json_of(
        patch(json!({ "creditLimit": null, "rateLimit": null, "allowHighRisk": true, "keyName": "ci-2" })).await,
        200,
    )
    .await;
    assert_eq!(cleared["creditLimit"], Value::Null);
    assert_eq!(cleared["rateLimit"], Value::Null);
    assert_eq!(cleared["allowHighRisk"], true);
    assert_eq!(cleared["keyName"], "ci-2");
    chat_json(&server, &value, hello("mock-chat")).await;

    // Bad inputs change nothing.
    let before = get_json(&server, &owner, &format!("/api/v1/keys/{id}")).await;
    for bad in [
        json!({ "creditLimit": -1 }),
        json!({ "expiresAt": "next tuesday" }),
        json!({ "expiresAt": "2001-01-01T00:00:00Z" }),
        json!({ "resetInterval": "hourly" }),
        json!({ "rateLimit": 0 }),
        json!({ "keyName": "" }),
        json!({ "colour": "red" }),
    ] {
        assert_eq!(
            error_code(patch(bad.clone()).await, 400).await,
            "invalid_request",
            "{bad}"
        );
    }
    assert_eq!(
        get_json(&server, &owner, &format!("/api/v1/keys/{id}")).await,
        before
    );
    let count = ids(&get_json(&server, &owner, "/api/v1/keys").await).len();
    for bad in [
        json!({}),
        json!({ "keyName": "x", "creditLimit": -5 }),
        json!({ "keyName": "x", "expiresAt": "2026-13-45" }),
        json!({ "keyName": "x", "secret": true }),
        json!({ "keyName": "x", "ownerAccountId": "acc_nobody" }),
    ] {
        let response = send(&server, "POST", "/api/v1/keys", Some(&owner), Some(&bad)).await;
        assert_eq!(error_code(response, 400).await, "invalid_request", "{bad}");
    }
    assert_eq!(
        ids(&get_json(&server, &owner, "/api/v1/keys").await).len(),
        count
    );
    let bad_state = send(
        &server,
        "GET",
        "/api/v1/keys?state=sleepy",
        Some(&owner),
        None,
    )
    .await;
    assert_eq!(error_code(bad_state, 400).await, "invalid_request");

    // Rotation: a new value that works; the old one stays valid until
    // revoked (rotation without downtime), then answers 403.
    let rotated = json_of(
        send(
            &server,
            "POST",
            &format!("/api/v1/keys/{id}/rotate"),
            Some(&owner),
            None,
        )
        .await,
        201,
    )
    .await;
    let new_value = rotated["value"].as_str().unwrap().to_owned();
    assert_eq!(rotated["key"]["rotatedFrom"], id.as_str());
    chat_json(&server, &new_value, hello("mock-chat")).await;
    chat_json(&server, &value, hello("mock-chat")).await;
    let revoked = json_of(
        send(
            &server,
            "POST",
            &format!("/api/v1/keys/{id}/revoke"),
            Some(&owner),
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(revoked["state"], "revoked");
    assert_eq!(
        error_code(chat_post(&server, &value, &hello("mock-chat")).await, 403).await,
        "invalid_api_key"
    );
    chat_json(&server, &new_value, hello("mock-chat")).await;
    let twice = send(
        &server,
        "POST",
        &format!("/api/v1/keys/{id}/revoke"),
        Some(&owner),
        None,
    )
    .await;
    assert_eq!(error_code(twice, 409).await, "conflict");
    let again = patch(json!({ "keyName": "zombie" })).await;
    assert_eq!(error_code(again, 409).await, "conflict");
    let listed = get_json(&server, &owner, "/api/v1/keys?state=revoked").await;
    assert_eq!(ids(&listed), std::slice::from_ref(&id));

    // Every change was audited, with its outcome; no key value was kept.
    let audit = get_json(
        &server,
        &owner,
        "/api/v1/audit?action=POST%20/api/v1/keys&limit=500",
    )
    .await;
    let entries = audit["data"].as_array().unwrap();
    let outcomes: Vec<&str> = entries
        .iter()
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    assert!(
        outcomes.contains(&"ok") && outcomes.contains(&"conflict"),
        "{outcomes:?}"
    );
    assert!(
        entries
            .iter()
            .any(|e| e["action"] == "POST /api/v1/keys/{id}/revoke")
    );
    let patches = get_json(&server, &owner, "/api/v1/audit?action=PATCH%20/api/v1/keys").await;
    assert!(patches["data"].as_array().unwrap().len() >= 2);
    let everything = get_json(&server, &owner, "/api/v1/audit?limit=500")
        .await
        .to_string();
    assert!(!everything.contains(&value) && !everything.contains(&new_value));
}

#[tokio::test]
async fn a_user_reaches_only_its_own_keys_and_tenants_are_isolated() {
    let server = TestServer::start();
    let admin = account(&server, "default", "admin@default.test", "admin").await;
    let user = account(&server, "default", "user@default.test", "user").await;
    let billing = account(&server, "default", "billing@default.test", "billing").await;
    let create = |token: &str, body: Value| {
        let token = token.to_owned();
        let server = &server;
        async move {
            json_of(
                send(server, "POST", "/api/v1/keys", Some(&token), Some(&body)).await,
                201,
            )
            .await
        }
    };
    let admins = create(&admin, json!({ "keyName": "admin's" })).await["key"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mine = create(&user, json!({ "keyName": "mine" })).await;
    let mine_id = mine["key"]["id"].as_str().unwrap().to_owned();
    let me = get_json(&server, &user, "/api/v1/me").await;
    assert_eq!(mine["key"]["ownerAccountId"], me["id"]);

    assert_eq!(
        ids(&get_json(&server, &user, "/api/v1/keys").await),
        std::slice::from_ref(&mine_id)
    );
    let all = ids(&get_json(&server, &admin, "/api/v1/keys").await);
    assert!(all.contains(&admins) && all.contains(&mine_id));
    assert!(ids(&get_json(&server, &billing, "/api/v1/keys").await).contains(&admins));
    for (method, path) in [
        ("GET", format!("/api/v1/keys/{admins}")),
        ("PATCH", format!("/api/v1/keys/{admins}")),
        ("POST", format!("/api/v1/keys/{admins}/rotate")),
        ("POST", format!("/api/v1/keys/{admins}/revoke")),
    ] {
        let body = (method == "PATCH").then(|| json!({ "keyName": "stolen" }));
        let response = send(&server, method, &path, Some(&user), body.as_ref()).await;
        assert_eq!(
            error_code(response, 404).await,
            "not_found",
            "{method} {path}"
        );
    }
    let admin_id = get_json(&server, &admin, "/api/v1/me").await["id"].clone();
    let theirs = send(
        &server,
        "POST",
        "/api/v1/keys",
        Some(&user),
        Some(&json!({ "keyName": "for admin", "ownerAccountId": admin_id })),
    )
    .await;
    assert_eq!(error_code(theirs, 403).await, "forbidden");
    let read_only = send(
        &server,
        "POST",
        &format!("/api/v1/keys/{admins}/revoke"),
        Some(&billing),
        None,
    )
    .await;
    assert_eq!(error_code(read_only, 403).await, "forbidden");

    // Another tenant's admin reaches none of it.
    server.cli_json(&["tenants", "create", "--name", "other", "--tier", "paid"]);
    let stranger = account(&server, "other", "admin@other.test", "admin").await;
    let theirs = create(&stranger, json!({ "keyName": "other's" })).await["key"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        ids(&get_json(&server, &stranger, "/api/v1/keys").await),
        std::slice::from_ref(&theirs)
    );
    // The admin here is of the operator tenant, which reaches every tenant.
    assert!(ids(&get_json(&server, &admin, "/api/v1/keys").await).contains(&theirs));
    for (method, path) in [
        ("PATCH", format!("/api/v1/keys/{admins}")),
        ("POST", format!("/api/v1/keys/{admins}/revoke")),
    ] {
        let body = (method == "PATCH").then(|| json!({ "keyName": "stolen" }));
        let response = send(&server, method, &path, Some(&stranger), body.as_ref()).await;
        assert_eq!(error_code(response, 404).await, "not_found");
    }
    let other_tenant = send(
        &server,
        "GET",
        "/api/v1/keys?tenant=default",
        Some(&stranger),
        None,
    )
    .await;
    assert_eq!(error_code(other_tenant, 403).await, "forbidden");
    let users = get_json(&server, &stranger, "/api/v1/users").await;
    assert_eq!(users["data"].as_array().unwrap().len(), 1);
    let user_id = me["id"].as_str().unwrap();
    let response = send(
        &server,
        "PATCH",
        &format!("/api/v1/users/{user_id}"),
        Some(&stranger),
        Some(&json!({ "disabled": true })),
    )
    .await;
    assert_eq!(error_code(response, 404).await, "not_found");
    assert_eq!(
        get_json(&server, &user, "/api/v1/me").await["disabled"],
        false
    );
    // The admin's own tenant was not touched.
    let name =
        get_json(&server, &admin, &format!("/api/v1/keys/{admins}")).await["keyName"].clone();
    assert_eq!(name, "admin's");
}

#[tokio::test]
async fn users_are_created_and_changed_and_the_last_owner_is_protected() {
    let server = TestServer::start();
    let owner = login(&server).await;
    let admin = account(&server, "default", "admin@default.test", "admin").await;
    let owner_id = get_json(&server, &owner, "/api/v1/me").await["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let made = json_of(
        send(
            &server,
            "POST",
            "/api/v1/users",
            Some(&admin),
            Some(&json!({ "email": "New@Default.test", "role": "user" })),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(made["user"]["email"], "new@default.test");
    assert_eq!(made["user"]["role"], "user");
    let password = made["password"].as_str().unwrap().to_owned();
    let newcomer = common::login_as(&server, "new@default.test", &password).await;
    let new_id = made["user"]["id"].as_str().unwrap().to_owned();
    let given = json_of(
        send(&server, "POST", "/api/v1/users", Some(&owner), Some(&json!({ "email": "given@default.test", "role": "tester", "password": "a-chosen-long-password" }))).await,
        201,
    )
    .await;
    assert!(given.get("password").is_none());
    common::login_as(&server, "given@default.test", "a-chosen-long-password").await;

    let listed = get_json(&server, &admin, "/api/v1/users").await;
    let emails: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["email"].as_str().unwrap())
        .collect();
    assert!(emails.contains(&"new@default.test") && emails.contains(&"owner@localhost"));
    assert!(!listed.to_string().contains("argon2"));

    // Bad inputs change nothing.
    for bad in [
        json!({ "email": "x@default.test", "role": "root" }),
        json!({ "email": "not an email", "role": "user" }),
        json!({ "email": "x@default.test", "role": "user", "password": "short" }),
        json!({ "email": "x@default.test", "role": "user", "admin": true }),
    ] {
        let response = send(&server, "POST", "/api/v1/users", Some(&owner), Some(&bad)).await;
        assert_eq!(error_code(response, 400).await, "invalid_request", "{bad}");
    }
    let duplicate = send(
        &server,
        "POST",
        "/api/v1/users",
        Some(&owner),
        Some(&json!({ "email": "new@default.test", "role": "user" })),
    )
    .await;
    assert_eq!(error_code(duplicate, 409).await, "conflict");
    assert_eq!(
        get_json(&server, &owner, "/api/v1/users").await["data"],
        listed["data"]
    );

    // Only an owner gives or takes the owner role, or touches an owner.
    let patch = |token: &str, id: &str, body: Value| {
        let (token, path) = (token.to_owned(), format!("/api/v1/users/{id}"));
        let server = &server;
        async move { send(server, "PATCH", &path, Some(&token), Some(&body)).await }
    };
    assert_eq!(
        error_code(
            patch(&admin, &new_id, json!({ "role": "owner" })).await,
            403
        )
        .await,
        "forbidden"
    );
    let invite = send(
        &server,
        "POST",
        "/api/v1/users",
        Some(&admin),
        Some(&json!({ "email": "boss@default.test", "role": "owner" })),
    )
    .await;
    assert_eq!(error_code(invite, 403).await, "forbidden");
    assert_eq!(
        error_code(
            patch(&admin, &owner_id, json!({ "disabled": true })).await,
            403
        )
        .await,
        "forbidden"
    );
    assert_eq!(
        error_code(
            patch(&admin, &owner_id, json!({ "role": "user" })).await,
            403
        )
        .await,
        "forbidden"
    );
    assert_eq!(
        error_code(
            patch(&owner, &new_id, json!({ "role": "wizard" })).await,
            400
        )
        .await,
        "invalid_request"
    );

    // The last owner can neither leave the role nor be disabled; nobody
    // disables itself.
    assert_eq!(
        error_code(
            patch(&owner, &owner_id, json!({ "role": "admin" })).await,
            409
        )
        .await,
        "conflict"
    );
    assert_eq!(
        error_code(
            patch(&owner, &owner_id, json!({ "disabled": true })).await,
            409
        )
        .await,
        "conflict"
    );
    assert_eq!(
        get_json(&server, &owner, "/api/v1/me").await["role"],
        "owner"
    );

    // Changes: a role, then disabling, which ends the account's sessions.
    let promoted = json_of(
        patch(&admin, &new_id, json!({ "role": "billing" })).await,
        200,
    )
    .await;
    assert_eq!(promoted["role"], "billing");
    let disabled = json_of(
        patch(&admin, &new_id, json!({ "disabled": true })).await,
        200,
    )
    .await;
    assert_eq!(disabled["disabled"], true);
    let after = send(&server, "GET", "/api/v1/me", Some(&newcomer), None).await;
    assert_eq!(after.status(), 401);
    // A password reset by the owner: the new one signs in.
    json_of(
        patch(
            &owner,
            &new_id,
            json!({ "disabled": false, "password": "a-brand-new-password" }),
        )
        .await,
        200,
    )
    .await;
    common::login_as(&server, "new@default.test", "a-brand-new-password").await;
    // With a second owner, the first may step down.
    json_of(
        patch(&owner, &new_id, json!({ "role": "owner" })).await,
        200,
    )
    .await;
    let stepped = json_of(
        patch(&owner, &owner_id, json!({ "role": "admin" })).await,
        200,
    )
    .await;
    assert_eq!(stepped["role"], "admin");
}

/// A model served by the mock provider that answers `text`.
fn fixed_model(id: &str, text: &str) -> Value {
    json!({
        "id": id,
        "provider": "mock",
        "upstream": format!("fixed:{text}"),
        "inputCapabilities": ["TEXT"],
        "outputCapabilities": ["TEXT"],
        "contextWindow": 4096,
        "pricing": { "unit": "per_token", "input_per_million": 1.5, "output_per_million": 3 },
    })
}

fn answer_text(completion: &Value) -> String {
    completion["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn served_models(server: &TestServer, key: &str) -> Vec<String> {
    let response = client()
        .get(server.url("/v1/models"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let body: Value = response.json().await.unwrap();
    ids(&body)
}

#[tokio::test]
async fn models_are_added_edited_disabled_and_deleted_with_effect_on_inference_and_restarts() {
    let mut server = TestServer::start();
    let key = server.demo_key();
    let owner = login(&server).await;
    let admin = account(&server, "default", "admin@default.test", "admin").await;

    let added = json_of(
        send(
            &server,
            "POST",
            "/api/v1/models",
            Some(&admin),
            Some(&fixed_model("dash-model", "from the dashboard")),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(added["source"], "dashboard");
    assert_eq!(added["enabled"], true);
    assert_eq!(
        added["pricing"],
        json!({ "unit": "per_token", "input_per_million": 1.5, "output_per_million": 3.0, "cached_input_per_million": null })
    );
    let answer = chat_json(&server, &key, hello("dash-model")).await;
    assert_eq!(answer_text(&answer), "from the dashboard");
    assert!(
        served_models(&server, &key)
            .await
            .contains(&"dash-model".to_owned())
    );

    // Edit: a new answer and price, at once.
    let edited = json_of(
        send(&server, "PATCH", "/api/v1/models/dash-model", Some(&admin), Some(&json!({ "upstream": "fixed:edited", "pricing": { "unit": "per_request", "per_request": 0.25 } }))).await,
        200,
    )
    .await;
    assert_eq!(edited["upstream"], "fixed:edited");
    let answer = chat_json(&server, &key, hello("dash-model")).await;
    assert_eq!(answer_text(&answer), "edited");
    assert_eq!(answer["billing"]["cost"], 0.25, "{answer}");

    // Disable: not served, not listed on /v1/models, still in the catalogue.
    let off = json_of(
        send(
            &server,
            "PATCH",
            "/api/v1/models/dash-model",
            Some(&admin),
            Some(&json!({ "enabled": false })),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(off["enabled"], false);
    let refused = chat_post(&server, &key, &hello("dash-model")).await;
    assert_eq!(error_code(refused, 404).await, "model_not_found");
    assert!(
        !served_models(&server, &key)
            .await
            .contains(&"dash-model".to_owned())
    );
    let listed = get_json(&server, &admin, "/api/v1/models").await;
    assert!(ids(&listed).contains(&"dash-model".to_owned()));

    // A configuration entry edited: stored as an override, still `config`.
    let vision = json_of(
        send(
            &server,
            "PATCH",
            "/api/v1/models/mock-vision",
            Some(&admin),
            Some(&json!({ "contextWindow": 1234, "upstream": "fixed:vision override" })),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(vision["source"], "config");
    assert_eq!(vision["contextWindow"], 1234);
    assert_eq!(
        answer_text(&chat_json(&server, &key, hello("mock-vision")).await),
        "vision override"
    );

    // Delete: owner only.
    let denied = send(
        &server,
        "DELETE",
        "/api/v1/models/mock-omni",
        Some(&admin),
        None,
    )
    .await;
    assert_eq!(error_code(denied, 403).await, "forbidden");
    let deleted = send(
        &server,
        "DELETE",
        "/api/v1/models/mock-omni",
        Some(&owner),
        None,
    )
    .await;
    assert_eq!(deleted.status(), 204);
    let gone = chat_post(&server, &key, &hello("mock-omni")).await;
    assert_eq!(error_code(gone, 404).await, "model_not_found");
    let missing = send(
        &server,
        "DELETE",
        "/api/v1/models/mock-omni",
        Some(&owner),
        None,
    )
    .await;
    assert_eq!(error_code(missing, 404).await, "not_found");

    // Bad inputs change nothing.
    let before = get_json(&server, &owner, "/api/v1/models").await;
    let mut bads = Vec::new();
    for (field, value) in [
        ("provider", json!("openai-nowhere")),
        ("inputCapabilities", json!([])),
        ("inputCapabilities", json!(["SMELL"])),
        ("contextWindow", json!(0)),
        ("contextWindow", json!(-5)),
        (
            "pricing",
            json!({ "unit": "per_token", "input_per_million": -1, "output_per_million": 1 }),
        ),
        ("pricing", json!({ "unit": "per_vibe", "amount": 1 })),
        ("pricing", json!({ "unit": "per_request" })),
        ("id", json!("has space")),
        ("enabled", json!(true)),
    ] {
        let mut body = fixed_model("bad-model", "x");
        body[field] = value;
        bads.push(body);
    }
    for body in bads {
        let response = send(&server, "POST", "/api/v1/models", Some(&owner), Some(&body)).await;
        assert_eq!(error_code(response, 400).await, "invalid_request", "{body}");
    }
    let taken = send(
        &server,
        "POST",
        "/api/v1/models",
        Some(&owner),
        Some(&fixed_model("mock-chat", "x")),
    )
    .await;
    assert_eq!(error_code(taken, 409).await, "conflict");
    for bad in [
        json!({ "provider": "nowhere" }),
        json!({ "id": "renamed" }),
        json!({ "pricing": { "unit": "per_image", "per_image": -2 } }),
        json!({ "source": "config" }),
    ] {
        let response = send(
            &server,
            "PATCH",
            "/api/v1/models/mock-chat",
            Some(&owner),
            Some(&bad),
        )
        .await;
        assert_eq!(error_code(response, 400).await, "invalid_request", "{bad}");
    }
    assert_eq!(get_json(&server, &owner, "/api/v1/models").await, before);

    // The catalogue survives a restart.
    server.restart();
    let owner = login(&server).await;
    assert_eq!(get_json(&server, &owner, "/api/v1/models").await, before);
    let refused = chat_post(&server, &key, &hello("dash-model")).await;
    assert_eq!(error_code(refused, 404).await, "model_not_found");
    assert_eq!(
        answer_text(&chat_json(&server, &key, hello("mock-vision")).await),
        "vision override"
    );
    json_of(
        send(
            &server,
            "PATCH",
            "/api/v1/models/dash-model",
            Some(&owner),
            Some(&json!({ "enabled": true })),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        answer_text(&chat_json(&server, &key, hello("dash-model")).await),
        "edited"
    );
    // A deleted configuration entry may be added back.
    let mut omni = fixed_model("mock-omni", "back");
    omni["upstream"] = json!("echo");
    let back = json_of(
        send(&server, "POST", "/api/v1/models", Some(&owner), Some(&omni)).await,
        201,
    )
    .await;
    assert_eq!(back["source"], "config");
    chat_json(&server, &key, hello("mock-omni")).await;
}

#[tokio::test]
async fn stats_totals_equal_the_usage_records_and_count_refusals() {
    let server = TestServer::start();
    let key = server.demo_key();
    let owner = login(&server).await;
    for model in ["mock-chat", "mock-chat", "mock-vision"] {
        chat_json(&server, &key, hello(model)).await;
    }
    let refused = chat_post(&server, &key, &hello("no-such-model")).await;
    assert_eq!(refused.status(), 404);

    let stats = get_json(&server, &owner, "/api/v1/stats?days=7").await;
    let records = get_json(&server, &owner, "/api/v1/usage/records").await;
    let records = records["data"].as_array().unwrap();
    let sum = |field: &str| {
        records
            .iter()
            .map(|r| r[field].as_u64().unwrap())
            .sum::<u64>()
    };
    let cost: f64 = records.iter().map(|r| r["cost"].as_f64().unwrap()).sum();
    let totals = &stats["totals"];
    assert_eq!(totals["requests"], 3);
    assert_eq!(totals["requests"].as_u64().unwrap(), records.len() as u64);
    assert_eq!(
        totals["promptTokens"].as_u64().unwrap(),
        sum("promptTokens")
    );
    assert_eq!(
        totals["completionTokens"].as_u64().unwrap(),
        sum("completionTokens")
    );
    assert!((totals["credits"].as_f64().unwrap() - cost).abs() < 1e-9);
    assert_eq!(totals["errors"], 1);
    let series = stats["series"].as_array().unwrap();
    assert_eq!(series.len(), 7);
    let today = &series[6];
    assert_eq!(today["requests"], 3);
    assert_eq!(today["errors"], 1);
    assert!(stats["from"].as_str().unwrap() < stats["to"].as_str().unwrap());
    assert_eq!(
        stats["topModels"][0]["model"], "mock-vision",
        "the dearer model first: {stats}"
    );
    assert_eq!(stats["topModels"].as_array().unwrap().len(), 2);
    assert_eq!(stats["topKeys"][0]["requests"], 3);
    assert!(stats["topKeys"][0]["keyName"].is_string());

    // A user sees its own keys only; bad ranges are refused.
    let user = account(&server, "default", "user@default.test", "user").await;
    let own = get_json(&server, &user, "/api/v1/stats").await;
    assert_eq!(own["totals"]["requests"], 0);
    assert_eq!(own["totals"]["errors"], 0);
    assert_eq!(own["series"].as_array().unwrap().len(), 14);
    for bad in ["days=0", "days=91", "days=many", "period=7"] {
        let response = send(
            &server,
            "GET",
            &format!("/api/v1/stats?{bad}"),
            Some(&owner),
            None,
        )
        .await;
        assert_eq!(error_code(response, 400).await, "invalid_request", "{bad}");
    }
}

#[tokio::test]
async fn the_playground_answers_plain_and_streamed_like_the_inference_api() {
    let server = TestServer::start();
    let owner = login(&server).await;
    let tester = account(&server, "default", "tester@default.test", "tester").await;
    let tester_id = get_json(&server, &tester, "/api/v1/me").await["id"].clone();
    let post = |body: Value| {
        let (server, tester) = (&server, &tester);
        async move {
            send(
                server,
                "POST",
                "/api/v1/playground/chat",
                Some(tester),
                Some(&body),
            )
            .await
        }
    };

    let plain = json_of(post(hello("mock-chat")).await, 200).await;
    let direct = chat_json(&server, &server.demo_key(), hello("mock-chat")).await;
    assert_eq!(answer_text(&plain), answer_text(&direct));
    assert_eq!(plain["model"], "mock-chat");
    assert!(plain["billing"]["cost"].as_f64().unwrap() > 0.0, "{plain}");
    assert!(plain.get("risk_classification").is_some(), "{plain}");

    let mut streamed = hello("mock-chat");
    streamed["stream"] = json!(true);
    let response = post(streamed).await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let text = response.text().await.unwrap();
    assert!(
        text.contains("echo: hello there") || text.contains("echo"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");

    let chain = json!({ "models": ["no-such-model", "mock-vision"], "messages": [{ "role": "user", "content": "hi" }] });
    assert_eq!(
        json_of(post(chain).await, 200).await["model"],
        "mock-vision"
    );
    let unknown = post(hello("no-such-model")).await;
    assert_eq!(error_code(unknown, 404).await, "model_not_found");
    let malformed = post(json!({ "messages": "nope" })).await;
    assert_eq!(error_code(malformed, 400).await, "invalid_request");

    // One playground key, owned by the tester, billed like any key.
    let keys = get_json(&server, &owner, "/api/v1/keys").await;
    let playground: Vec<&Value> = keys["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["keyName"] == "playground")
        .collect();
    assert_eq!(playground.len(), 1, "{keys}");
    assert_eq!(playground[0]["ownerAccountId"], tester_id);
    let key_id = playground[0]["id"].as_str().unwrap();
    let records = get_json(
        &server,
        &owner,
        &format!("/api/v1/usage/records?keyId={key_id}"),
    )
    .await;
    assert_eq!(records["data"].as_array().unwrap().len(), 3);
    assert!(playground[0]["creditsConsumed"].as_f64().unwrap() > 0.0);

    // The audit entry of a playground request does not keep its messages.
    let audit = get_json(
        &server,
        &owner,
        "/api/v1/audit?action=POST%20/api/v1/playground",
    )
    .await;
    let entry = &audit["data"][0];
    assert!(
        entry["details"]["body"]
            .as_str()
            .unwrap()
            .contains("not kept"),
        "{entry}"
    );
    assert!(!audit.to_string().contains("hello there"));

    // A revoked playground key is replaced on the next request.
    json_of(
        send(
            &server,
            "POST",
            &format!("/api/v1/keys/{key_id}/revoke"),
            Some(&owner),
            None,
        )
        .await,
        200,
    )
    .await;
    json_of(post(hello("mock-chat")).await, 200).await;
    let active = get_json(&server, &owner, "/api/v1/keys?state=active").await;
    assert!(
        active["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["keyName"] == "playground" && k["id"] != key_id)
    );
}

/// `(METHOD, path)` of every route the router serves under `/api/v1`,
/// read from the handlers' `routes()` functions.
fn served_routes() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut files = Vec::new();
    let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/api")];
    // Modules split into directories (src/api/compliance/) are read too.
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    for file in files {
        let source = std::fs::read_to_string(file).unwrap();
        let mut rest = source.as_str();
        while let Some(at) = rest.find(".route(") {
            rest = &rest[at + ".route(".len()..];
            let open = rest.find('"').unwrap();
            let close = open + 1 + rest[open + 1..].find('"').unwrap();
            let path = &rest[open + 1..close];
            // The method router: up to the parenthesis closing `.route(`.
            let mut depth = 1;
            let mut end = close;
            for (i, c) in rest[close..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    end = close + i;
                    break;
                }
            }
            let methods = &rest[close + 1..end];
            // The dashboard API (/api/v1) and the inference API (/v1,
            // /v1beta); not /healthz, /readyz, /metrics nor the UI.
            if !path.starts_with("/api/v1") && !path.starts_with("/v1") {
                continue;
            }
            for method in ["get", "post", "put", "patch", "delete"] {
                let called = methods
                    .match_indices(&format!("{method}("))
                    .any(|(i, _)| i == 0 || !methods.as_bytes()[i - 1].is_ascii_alphanumeric());
                if called {
                    out.push((method.to_uppercase(), path.to_owned()));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether a documented path is one the served route pattern matches: the
/// same segments, a `{param}` of the router matching any one segment
/// (Gemini's `{model}:generateContent` is one router segment,
/// `{model_action}`).
fn served_by(pattern: &str, documented: &str) -> bool {
    let pattern: Vec<&str> = pattern.split('/').collect();
    let documented: Vec<&str> = documented.split('/').collect();
    pattern.len() == documented.len()
        && pattern
            .iter()
            .zip(&documented)
            .all(|(p, d)| p.starts_with('{') || p == d)
}

/// The code of an error in any of the three dialects: OpenAI's
/// `error.code`, Anthropic's `error.type`, Google's `details[0].reason`.
async fn any_dialect_code(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    let error = &body["error"];
    let code = [
        &error["details"][0]["reason"],
        &error["code"],
        &error["type"],
    ]
    .into_iter()
    .find_map(Value::as_str)
    .unwrap_or_default()
    .to_owned();
    (status, code)
}

#[tokio::test]
async fn the_openapi_document_describes_every_served_route() {
    let text = include_str!("../assets/openapi.json");
    let document: Value = serde_json::from_str(text).expect("the OpenAPI document is JSON");
    assert!(document["openapi"].as_str().unwrap().starts_with("3.1"));
    let routes = served_routes();
    assert!(routes.len() > 55, "{routes:?}");
    assert!(routes.contains(&("PATCH".into(), "/api/v1/keys/{id}".into())));
    assert!(routes.contains(&("POST".into(), "/v1/embeddings".into())));
    assert!(routes.contains(&("POST".into(), "/v1beta/models/{model_action}".into())));
    let paths = document["paths"].as_object().unwrap();
    let operations: Vec<(String, &String, &Value)> = paths
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .iter()
                .filter(|(method, _)| *method != "parameters")
                .map(move |(method, operation)| (method.to_uppercase(), path, operation))
        })
        .collect();
    // Every served route is documented, with its responses.
    for (method, pattern) in &routes {
        let documented: Vec<_> = operations
            .iter()
            .filter(|(m, path, _)| m == method && served_by(pattern, path))
            .collect();
        assert!(
            !documented.is_empty(),
            "{method} {pattern} is not documented"
        );
        for (_, path, operation) in documented {
            assert!(
                operation["responses"].is_object(),
                "{method} {path} has no responses"
            );
        }
    }
    // Every documented operation is served.
    for (method, path, operation) in &operations {
        assert!(
            routes
                .iter()
                .any(|(m, pattern)| m == method && served_by(pattern, path)),
            "{method} {path} is documented but not served"
        );
        // Inference routes say which keys they take; the dashboard's
        // inherit the session scheme.
        if path.starts_with("/v1") {
            let security = operation["security"].as_array();
            assert!(
                security.is_some_and(|s| !s.is_empty()),
                "{method} {path} names no security scheme"
            );
            for requirement in security.unwrap() {
                for scheme in requirement.as_object().unwrap().keys() {
                    assert!(
                        document["components"]["securitySchemes"][scheme].is_object(),
                        "{method} {path}: no security scheme {scheme}"
                    );
                    assert_ne!(scheme, "session", "{method} {path} takes an API key");
                }
            }
        }
    }
    // The key headers each dialect's clients send.
    let schemes = &document["components"]["securitySchemes"];
    assert_eq!(schemes["anthropicKey"]["name"], "x-api-key");
    assert_eq!(schemes["googleKey"]["name"], "x-goog-api-key");
    assert_eq!(schemes["googleKeyQuery"]["in"], "query");
    let mut pending = vec![&document];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get("$ref") {
                    let pointer = reference.strip_prefix('#').expect("local reference");
                    assert!(
                        document.pointer(pointer).is_some(),
                        "{reference} does not resolve"
                    );
                }
                pending.extend(map.values());
            }
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }

    // The server gives the same document to a signed-in account.
    let server = TestServer::start();
    let owner = login(&server).await;
    let served = get_json(&server, &owner, "/api/v1/openapi.json").await;
    assert!(
        served == document,
        "the served document differs from assets/openapi.json"
    );

    // A route pattern's parameter may take only some values (Gemini's
    // actions): each documented path with literal text beside a parameter
    // is asked for real, and must not answer 404 `not_found` or 405.
    let key = server.demo_key();
    let ask = |path: String| {
        let request = client()
            .post(server.url(&path))
            .bearer_auth(&key)
            .json(&json!({}));
        async move { any_dialect_code(request.send().await.unwrap()).await }
    };
    let mut asked = 0;
    for (method, path, _) in &operations {
        let partial = path
            .split('/')
            .any(|s| s.contains('{') && !(s.starts_with('{') && s.ends_with('}')));
        if !partial {
            continue;
        }
        assert_eq!(method, "POST", "{path}");
        let (status, code) = ask(path.replace("{model}", "mock-chat")).await;
        assert!(
            !(status == 404 && code == "not_found") && status != 405,
            "POST {path} is documented but answers {status} {code}"
        );
        asked += 1;
    }
    assert_eq!(asked, 4, "both Gemini actions under /v1beta and /v1");
    // The check can fail: an action the router's pattern takes but the
    // handler does not serve.
    assert_eq!(
        ask("/v1beta/models/mock-chat:countTokens".into()).await,
        (404, "not_found".into())
    );
}
