//! Security findings on access (issue 20, items 1 and 2):
//!
//! - a `user` may create, rename, revoke and tighten its keys, never
//!   loosen them: whatever would lift a control needs `keys.manage_all`,
//!   is refused with 403 `forbidden` naming the field, and changes nothing;
//! - the operator: only the tenant made at first start manages the global
//!   catalogue, the sub-processor registry and the tenants, and sees across
//!   tenants; every other tenant's admins choose which catalogue models
//!   their tenant may use, and that choice holds on `/v1`.

mod common;

use common::anthropic::Anthropic;
use common::gemini::Gemini;
use common::{TestServer, account, client, login};
use serde_json::{Value, json};

async fn send(
    server: &TestServer,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = client()
        .request(method, server.url(path))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_user_may_tighten_its_keys_but_never_loosen_them() {
    use reqwest::Method as M;
    let server = TestServer::start();
    let user = account(&server, "default", "user@a.test", "user").await;

    // Creating: a capped key is fine, a high-risk one or one above the
    // default rate limit (60) is not.
    let (status, created) = send(
        &server,
        &user,
        M::POST,
        "/api/v1/keys",
        Some(
            json!({ "keyName": "mine", "creditLimit": 10, "resetInterval": "daily",
                     "rateLimit": 30, "expiresAt": "2099-01-01T00:00:00Z" }),
        ),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["key"]["id"].as_str().unwrap().to_owned();
    for (body, field) in [
        (
            json!({ "keyName": "x", "allowHighRisk": true }),
            "allowHighRisk",
        ),
        (json!({ "keyName": "x", "rateLimit": 61 }), "rateLimit"),
    ] {
        let (status, error) = send(&server, &user, M::POST, "/api/v1/keys", Some(body)).await;
        assert_eq!(status, 403, "{error}");
        assert_eq!(error["error"]["code"], "forbidden");
        assert!(
            error["error"]["message"].as_str().unwrap().contains(field),
            "{error}"
        );
    }
    let (_, listed) = send(&server, &user, M::GET, "/api/v1/keys", None).await;
    assert_eq!(
        listed["data"].as_array().unwrap().len(),
        1,
        "nothing else created"
    );

    // Loosening an existing key: each refused, naming the field, and the
    // key is unchanged.
    let path = format!("/api/v1/keys/{id}");
    for (body, field) in [
        (json!({ "allowHighRisk": true }), "allowHighRisk"),
        (json!({ "creditLimit": null }), "creditLimit"),
        (json!({ "creditLimit": 11 }), "creditLimit"),
        (json!({ "rateLimit": 31 }), "rateLimit"),
        (json!({ "rateLimit": null }), "rateLimit"),
        (json!({ "resetInterval": "monthly" }), "resetInterval"),
        (json!({ "expiresAt": null }), "expiresAt"),
        (json!({ "expiresAt": "2100-01-01T00:00:00Z" }), "expiresAt"),
        // One loosening field spoils an otherwise allowed change.
        (
            json!({ "keyName": "renamed", "creditLimit": 100 }),
            "creditLimit",
        ),
    ] {
        let (status, error) = send(&server, &user, M::PATCH, &path, Some(body.clone())).await;
        assert_eq!(status, 403, "{body}: {error}");
        assert_eq!(error["error"]["code"], "forbidden");
        assert!(
            error["error"]["message"].as_str().unwrap().contains(field),
            "{body}: {error}"
        );
    }
    let (_, key) = send(&server, &user, M::GET, &path, None).await;
    assert_eq!(key["keyName"], "mine");
    assert_eq!(key["creditLimit"], 10.0);
    assert_eq!(key["rateLimit"], 30);
    assert_eq!(key["resetInterval"], "daily");
    assert_eq!(key["allowHighRisk"], false);
    assert_eq!(key["expiresAt"], "2099-01-01T00:00:00.000Z");

    // Tightening and renaming are the user's to do.
    let (status, key) = send(
        &server,
        &user,
        M::PATCH,
        &path,
        Some(
            json!({ "keyName": "renamed", "creditLimit": 5, "rateLimit": 10,
                     "expiresAt": "2098-01-01T00:00:00Z", "allowHighRisk": false }),
        ),
    )
    .await;
    assert_eq!(status, 200, "{key}");
    assert_eq!(key["creditLimit"], 5.0);
    assert_eq!(key["rateLimit"], 10);

    // An admin (keys.manage_all) may loosen the same key.
    let admin = account(&server, "default", "admin@a.test", "admin").await;
    let (status, key) = send(
        &server,
        &admin,
        M::PATCH,
        &path,
        Some(json!({ "creditLimit": null, "allowHighRisk": true, "rateLimit": 600 })),
    )
    .await;
    assert_eq!(status, 200, "{key}");
    assert_eq!(key["allowHighRisk"], true);

    // And the user may still revoke it.
    let (status, _) = send(&server, &user, M::POST, &format!("{path}/revoke"), None).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn the_owner_may_loosen_keys() {
    let server = TestServer::start();
    let owner = login(&server).await;
    let (status, created) = send(
        &server,
        &owner,
        reqwest::Method::POST,
        "/api/v1/keys",
        Some(json!({ "keyName": "wide", "allowHighRisk": true, "rateLimit": 1000 })),
    )
    .await;
    assert_eq!(status, 201, "{created}");
}

fn chat(model: &str) -> Value {
    json!({ "model": model, "messages": [{ "role": "user", "content": "hello" }] })
}

/// A second tenant with an owner and an admin, and a key of its own.
async fn second_tenant(server: &TestServer) -> (String, String, String) {
    server.cli_json(&[
        "tenants",
        "create",
        "--name",
        "beta",
        "--tier",
        "enterprise",
    ]);
    let owner = account(server, "beta", "owner@beta.test", "owner").await;
    let admin = account(server, "beta", "admin@beta.test", "admin").await;
    let key = server.cli_json(&["keys", "create", "--tenant", "beta", "--name", "b"]);
    (owner, admin, key["key"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn only_the_operator_manages_what_every_tenant_shares() {
    use reqwest::Method as M;
    let server = TestServer::start();
    let operator = login(&server).await;
    let operator_admin = account(&server, "default", "admin@a.test", "admin").await;
    let (beta_owner, beta_admin, _) = second_tenant(&server).await;
    let model = json!({ "id": "extra", "provider": "mock", "upstream": "mock-chat",
                        "inputCapabilities": ["TEXT"], "outputCapabilities": ["TEXT"],
                        "contextWindow": 1000,
                        "pricing": { "unit": "per_token", "input_per_million": 1, "output_per_million": 1 } });
    let processor = json!({ "name": "acme-ai", "legalName": "Acme AI GmbH", "purpose": "inference",
                            "location": "DE", "dataCategories": ["prompts"] });

    // Another tenant's owner and admin: refused, and nothing changes.
    for token in [&beta_owner, &beta_admin] {
        for (method, path, body) in [
            (M::POST, "/api/v1/models", Some(model.clone())),
            (
                M::PATCH,
                "/api/v1/models/mock-chat",
                Some(json!({ "enabled": false })),
            ),
            (M::DELETE, "/api/v1/models/mock-chat", None),
            (M::POST, "/api/v1/sub-processors", Some(processor.clone())),
            (M::GET, "/api/v1/tenants", None),
            (M::POST, "/api/v1/tenants", Some(json!({ "name": "gamma" }))),
            (
                M::PATCH,
                "/api/v1/tenants/beta",
                Some(json!({ "tier": "enterprise" })),
            ),
        ] {
            let (status, error) = send(&server, token, method.clone(), path, body).await;
            assert_eq!(status, 403, "{method} {path}: {error}");
            assert_eq!(error["error"]["code"], "forbidden");
        }
        let (_, me) = send(&server, token, M::GET, "/api/v1/me", None).await;
        assert_eq!(me["operator"], false);
        let permissions: Vec<&str> = me["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        for reserved in ["models.manage", "registry.manage", "tenants.manage"] {
            assert!(!permissions.contains(&reserved), "{permissions:?}");
        }
        assert!(permissions.contains(&"models.access"), "{permissions:?}");
    }
    let (_, models) = send(&server, &operator, M::GET, "/api/v1/models", None).await;
    assert!(
        models["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["id"] != "extra")
    );
    assert!(
        models["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == "mock-chat" && m["enabled"] == true)
    );
    let (_, registry) = send(&server, &beta_owner, M::GET, "/api/v1/sub-processors", None).await;
    assert!(
        registry["subProcessors"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["name"] != "acme-ai")
    );

    // The operator's owner and admin may.
    let (status, _) = send(
        &server,
        &operator_admin,
        M::POST,
        "/api/v1/sub-processors",
        Some(processor),
    )
    .await;
    assert_eq!(status, 201);
    let (status, created) = send(
        &server,
        &operator_admin,
        M::POST,
        "/api/v1/tenants",
        Some(json!({ "name": "gamma", "tier": "free" })),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let (_, listed) = send(&server, &operator, M::GET, "/api/v1/tenants", None).await;
    let names: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "default" && t["operator"] == true)
    );
    let (status, _) = send(&server, &operator, M::POST, "/api/v1/models", Some(model)).await;
    assert_eq!(status, 201);
}

#[tokio::test]
async fn the_operator_changes_a_tenants_tier() {
    use reqwest::Method as M;
    let server = TestServer::start();
    let operator = login(&server).await;
    let operator_admin = account(&server, "default", "admin@a.test", "admin").await;
    let (beta_owner, _, _) = second_tenant(&server).await;
    let tier_of = |listed: &Value, name: &str| {
        listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["tier"].as_str().unwrap().to_owned())
            .unwrap()
    };

    let (status, changed) = send(
        &server,
        &operator_admin,
        M::PATCH,
        "/api/v1/tenants/beta",
        Some(json!({ "tier": "free" })),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(changed["tier"], "free");
    assert_eq!(changed["name"], "beta");
    let (_, listed) = send(&server, &operator, M::GET, "/api/v1/tenants", None).await;
    assert_eq!(tier_of(&listed, "beta"), "free", "beta was made enterprise");
    let default_tier = tier_of(&listed, "default");

    // Refusals name the field, and change nothing.
    for (path, body, status, param) in [
        ("/api/v1/tenants/beta", json!({ "tier": "gold" }), 400, None),
        ("/api/v1/tenants/beta", json!({}), 400, Some("tier")),
        ("/api/v1/tenants/nope", json!({ "tier": "free" }), 404, None),
    ] {
        let (got, error) = send(&server, &operator, M::PATCH, path, Some(body)).await;
        assert_eq!(got, status, "{path}: {error}");
        if let Some(param) = param {
            assert_eq!(error["error"]["param"], param, "{error}");
        }
    }
    let (status, _) = send(
        &server,
        &beta_owner,
        M::PATCH,
        "/api/v1/tenants/beta",
        Some(json!({ "tier": "paid" })),
    )
    .await;
    assert_eq!(status, 403, "a tenant's own owner does not set its tier");
    let (_, listed) = send(&server, &operator, M::GET, "/api/v1/tenants", None).await;
    assert_eq!(tier_of(&listed, "beta"), "free");
    assert_eq!(tier_of(&listed, "default"), default_tier);
}

#[tokio::test]
async fn another_tenants_owner_stays_in_its_tenant() {
    use reqwest::Method as M;
    let server = TestServer::start();
    let operator = login(&server).await;
    let (beta_owner, _, _) = second_tenant(&server).await;
    let (default_key, _) = server.create_key(&[]);

    // Every listing of the other tenant's owner holds its own tenant only.
    let (_, keys) = send(&server, &beta_owner, M::GET, "/api/v1/keys", None).await;
    assert!(
        keys["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|k| k["id"] != default_key.as_str()),
        "{keys}"
    );
    let (_, users) = send(&server, &beta_owner, M::GET, "/api/v1/users", None).await;
    assert!(
        users["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["email"] != "owner@localhost"),
        "{users}"
    );
    let (status, _) = send(
        &server,
        &beta_owner,
        M::GET,
        &format!("/api/v1/keys/{default_key}"),
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = send(
        &server,
        &beta_owner,
        M::GET,
        "/api/v1/usage?tenant=default",
        None,
    )
    .await;
    assert_eq!(status, 403);
    let (status, _) = send(
        &server,
        &beta_owner,
        M::PATCH,
        &format!("/api/v1/keys/{default_key}"),
        Some(json!({ "keyName": "x" })),
    )
    .await;
    assert_eq!(status, 404);

    // The operator's owner sees both tenants.
    let (_, keys) = send(&server, &operator, M::GET, "/api/v1/keys", None).await;
    assert!(
        keys["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["id"] == default_key.as_str())
    );
    assert!(keys["data"].as_array().unwrap().len() >= 2);
    // And gives a new tenant its first owner from the dashboard.
    let (status, created) = send(&server, &operator, M::POST, "/api/v1/users?tenant=beta",
        Some(json!({ "email": "second@beta.test", "role": "owner", "password": "a-long-test-password" }))).await;
    assert_eq!(status, 201, "{created}");
    let (status, _) = send(&server, &beta_owner, M::POST, "/api/v1/users?tenant=default",
        Some(json!({ "email": "intruder@beta.test", "role": "admin", "password": "a-long-test-password" }))).await;
    assert_eq!(status, 403);
}

async fn v1_models(server: &TestServer, key: &str) -> Vec<String> {
    let listed: Value = client()
        .get(server.url("/v1/models"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_tenants_model_allow_list_holds_on_v1() {
    use reqwest::Method as M;
    let server = TestServer::start();
    let (beta_owner, beta_admin, beta_key) = second_tenant(&server).await;
    let default_key = server.demo_key();
    let beta_user = account(&server, "beta", "user@beta.test", "user").await;

    // Every model until a list is set.
    let (status, access) = send(
        &server,
        &beta_user,
        M::GET,
        "/api/v1/tenants/beta/models",
        None,
    )
    .await;
    assert_eq!(status, 200, "{access}");
    assert_eq!(access["models"], Value::Null);
    assert!(
        access["available"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "mock-vision")
    );

    // A user may not set it; an unknown model is refused naming the entry.
    let (status, _) = send(
        &server,
        &beta_user,
        M::PUT,
        "/api/v1/tenants/beta/models",
        Some(json!({ "models": ["mock-chat"] })),
    )
    .await;
    assert_eq!(status, 403);
    let (status, error) = send(
        &server,
        &beta_admin,
        M::PUT,
        "/api/v1/tenants/beta/models",
        Some(json!({ "models": ["mock-chat", "nope"] })),
    )
    .await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["error"]["param"], "models[1]");
    // Nor may it set another tenant's.
    let (status, _) = send(
        &server,
        &beta_admin,
        M::PUT,
        "/api/v1/tenants/default/models",
        Some(json!({ "models": [] })),
    )
    .await;
    assert_eq!(status, 403);

    let (status, access) = send(
        &server,
        &beta_admin,
        M::PUT,
        "/api/v1/tenants/beta/models",
        Some(json!({ "models": ["mock-chat"] })),
    )
    .await;
    assert_eq!(status, 200, "{access}");
    assert_eq!(access["models"], json!(["mock-chat"]));

    assert_eq!(
        v1_models(&server, &beta_key).await,
        vec!["mock-chat".to_owned()]
    );
    assert!(
        v1_models(&server, &default_key).await.len() > 1,
        "the other tenant keeps every model"
    );

    let url = server.url("/v1/chat/completions");
    let post = |key: &str, body: Value| client().post(&url).bearer_auth(key).json(&body).send();
    assert_eq!(
        post(&beta_key, chat("mock-chat")).await.unwrap().status(),
        200
    );
    let refused = post(&beta_key, chat("mock-vision")).await.unwrap();
    assert_eq!(refused.status(), 404);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "model_not_found");
    assert_eq!(
        post(&default_key, chat("mock-vision"))
            .await
            .unwrap()
            .status(),
        200
    );
    // A fallback chain steps over the model the tenant may not use.
    let chain = json!({ "models": ["mock-vision", "mock-chat"],
                        "messages": [{ "role": "user", "content": "hello" }] });
    let answered: Value = post(&beta_key, chain).await.unwrap().json().await.unwrap();
    assert_eq!(answered["model"], "mock-chat", "{answered}");
    // Images obey it too (and the native passthroughs: see
    // `the_native_passthroughs_obey_a_tenants_model_allow_list`).
    let images = client()
        .post(server.url("/v1/images/generations"))
        .bearer_auth(&beta_key)
        .json(&json!({ "model": "mock-image", "prompt": "a cat" }))
        .send()
        .await
        .unwrap();
    assert_eq!(images.status(), 404);

    // Survives a restart; clearing it gives every model back.
    let mut server = server;
    server.restart();
    assert_eq!(
        v1_models(&server, &beta_key).await,
        vec!["mock-chat".to_owned()]
    );
    let beta_owner = {
        let _ = beta_owner;
        common::login_as(&server, "owner@beta.test", "a-long-test-password").await
    };
    let (status, access) = send(
        &server,
        &beta_owner,
        M::PUT,
        "/api/v1/tenants/beta/models",
        Some(json!({ "models": null })),
    )
    .await;
    assert_eq!(status, 200, "{access}");
    assert!(v1_models(&server, &beta_key).await.len() > 1);
}

/// The native passthroughs hold the allow-list too, refusing in their own
/// dialect: Anthropic's error object on `/v1/messages`, Google's on
/// `:generateContent`. The operator's tenant (no list) is served by both
/// routes, so the refusal is the list's doing; nothing reaches a provider
/// for the refused tenant.
#[tokio::test]
async fn the_native_passthroughs_obey_a_tenants_model_allow_list() {
    use reqwest::Method as M;
    let anthropic = Anthropic::start().await;
    let gemini = Gemini::start().await;
    let mut text = format!(
        "[[providers]]\nid = \"claude\"\nkind = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"TEST_ANTHROPIC_KEY\"\n\
         [[providers]]\nid = \"gem\"\nkind = \"gemini\"\nbase_url = \"{}\"\napi_key_env = \"TEST_GEMINI_KEY\"\n\
         [[providers]]\nid = \"mock\"\nkind = \"mock\"\n",
        anthropic.base_url, gemini.base_url
    );
    for (id, provider, upstream) in [
        ("claude-ok", "claude", "claude-ok"),
        ("gemini-ok", "gem", "gemini-ok"),
        ("mock-chat", "mock", "echo"),
    ] {
        text.push_str(&format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\nupstream = \"{upstream}\"\n\
             input = [\"TEXT\"]\noutput = [\"TEXT\"]\ncontext_window = 8192\n\
             pricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
        ));
    }
    let server = TestServer::start_with(
        Some(&text),
        &[
            ("TEST_ANTHROPIC_KEY", "sk-ant-allow-list"),
            ("TEST_GEMINI_KEY", "gm-allow-list"),
        ],
    );
    let (_, beta_admin, beta_key) = second_tenant(&server).await;
    let (status, access) = send(
        &server,
        &beta_admin,
        M::PUT,
        "/api/v1/tenants/beta/models",
        Some(json!({ "models": ["mock-chat"] })),
    )
    .await;
    assert_eq!(status, 200, "{access}");
    let (_, operator_key) = server.create_key(&[]);

    let messages = |key: &str| {
        client()
            .post(server.url("/v1/messages"))
            .header("x-api-key", key)
            .json(&json!({ "model": "claude-ok", "max_tokens": 64,
                           "messages": [{ "role": "user", "content": "hello" }] }))
            .send()
    };
    let generate = |key: &str| {
        client()
            .post(server.url("/v1beta/models/gemini-ok:generateContent"))
            .header("x-goog-api-key", key)
            .json(&json!({ "contents": [{ "role": "user", "parts": [{ "text": "hello" }] }] }))
            .send()
    };

    let refused = messages(&beta_key).await.unwrap();
    assert_eq!(refused.status(), 404);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["type"], "error", "Anthropic's shape: {body}");
    assert_eq!(body["error"]["type"], "model_not_found", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("claude-ok"),
        "{body}"
    );

    let refused = generate(&beta_key).await.unwrap();
    assert_eq!(refused.status(), 404);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], 404, "Google's shape: {body}");
    assert_eq!(body["error"]["status"], "NOT_FOUND", "{body}");
    assert_eq!(
        body["error"]["details"][0]["reason"], "model_not_found",
        "{body}"
    );
    assert_eq!(
        anthropic.recorded.count() + gemini.recorded.count(),
        0,
        "nothing reached a provider"
    );

    // The same routes serve a tenant without a list.
    assert_eq!(messages(&operator_key).await.unwrap().status(), 200);
    assert_eq!(generate(&operator_key).await.unwrap().status(), 200);
    assert_eq!(anthropic.recorded.count(), 1);
    assert_eq!(gemini.recorded.count(), 1);
}

/// A store written before the operator existed (schema 3: no operator
/// recorded) is migrated on open: the first owner's tenant becomes the
/// operator, and the owner of a later tenant loses its reach.
#[tokio::test]
async fn a_schema_3_store_gets_the_first_owners_tenant_as_operator() {
    use reqwest::Method as M;
    use tollgate::store::tables::{META, META_OPERATOR_TENANT, META_SCHEMA_VERSION};
    let mut server = TestServer::start();
    second_tenant(&server).await;
    server.terminate();
    let data_file = server.data_dir().join("tollgate.redb");
    {
        let db = redb::Database::open(&data_file).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut meta = txn.open_table(META).unwrap();
            assert!(meta.remove(META_OPERATOR_TENANT).unwrap().is_some());
            meta.insert(META_SCHEMA_VERSION, 3u32.to_be_bytes().as_slice())
                .unwrap();
        }
        txn.delete_table(tollgate::store::tables::TENANT_MODELS)
            .unwrap();
        txn.commit().unwrap();
    }
    server.launch().unwrap();
    let operator = login(&server).await;
    let beta_owner = common::login_as(&server, "owner@beta.test", "a-long-test-password").await;
    let (status, listed) = send(&server, &operator, M::GET, "/api/v1/tenants", None).await;
    assert_eq!(status, 200, "{listed}");
    assert!(
        listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "default" && t["operator"] == true)
    );
    let (status, _) = send(&server, &beta_owner, M::GET, "/api/v1/tenants", None).await;
    assert_eq!(status, 403);
    let (_, me) = send(&server, &beta_owner, M::GET, "/api/v1/me", None).await;
    assert_eq!(me["operator"], false);
    server.terminate();
    let db = redb::Database::open(&data_file).unwrap();
    let read = redb::ReadableDatabase::begin_read(&db).unwrap();
    let meta = read.open_table(META).unwrap();
    assert_eq!(
        meta.get(META_SCHEMA_VERSION).unwrap().unwrap().value(),
        tollgate::store::tables::SCHEMA_VERSION.to_be_bytes()
    );
    assert!(meta.get(META_OPERATOR_TENANT).unwrap().is_some());
}
