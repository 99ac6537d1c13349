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
