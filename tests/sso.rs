//! Single sign-on against a real OpenID provider: node-oidc-provider
//! (tests/sso/provider.mjs), started per test. The test plays the browser:
//! it follows each redirect by hand with a cookie jar per host, so the
//! provider's login and consent and the gateway's browser binding are
//! exercised as a browser would. The provider's client is registered with a
//! fixed redirect URI on a closed port; the "browser" takes the provider's
//! redirect there to the gateway's real address (the gateway sends the
//! same registered URI at the code exchange, as it must).

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use common::{TestServer, client, error_code, login};
use serde_json::{Value, json};

const REDIRECT: &str = "http://127.0.0.1:9/api/v1/auth/oidc/callback";
const SECRET: &str = "test-secret";

/// The node provider, stopped when dropped.
struct Idp {
    child: Child,
    issuer: String,
}

impl Drop for Idp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Idp {
    fn start() -> Idp {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sso");
        let mut child = Command::new("node")
            .arg("provider.mjs")
            .current_dir(dir)
            .env("REDIRECT_URI", REDIRECT)
            .stdout(Stdio::piped())
            // Kept for a failing test's reader.
            .stderr(Stdio::from(
                std::fs::File::create(std::env::temp_dir().join("tollgate-sso-provider.log"))
                    .unwrap(),
            ))
            .spawn()
            .expect("node runs tests/sso/provider.mjs (npm ci in tests/sso)");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let port = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(port) = line.strip_prefix("listening ") {
                        break port.trim().to_owned();
                    }
                }
                _ => panic!("the OpenID provider did not start (run `npm ci` in tests/sso)"),
            }
        };
        // Keep reading: the provider writes notices to stdout, and a closed
        // pipe would kill it.
        std::thread::spawn(move || for _ in lines {});
        Idp {
            child,
            issuer: format!("http://127.0.0.1:{port}"),
        }
    }

    async fn control(&self, what: &str, body: Value) {
        let response = client()
            .post(format!("{}/__test/{what}", self.issuer))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 204);
    }

    async fn sign_in_as(&self, email: &str, groups: &[&str]) {
        let sub = email.split('@').next().unwrap();
        self.control(
            "user",
            json!({ "sub": sub, "email": email, "email_verified": true, "groups": groups }),
        )
        .await;
    }
}

fn sso_config(idp: &Idp, client_id: &str, extra: &str) -> String {
    format!(
        r#"
[sso]
issuer = "{issuer}"
client_id = "{client_id}"
client_secret_env = "TOLLGATE_SSO_CLIENT_SECRET"
redirect_url = "{REDIRECT}"
scopes = ["openid", "email", "profile", "groups"]
role_claim = "groups"
role_map = {{ "tollgate-admins" = "admin", "tollgate-users" = "user" }}
default_tenant = "default"
allowed_email_domains = ["example.com"]
create_accounts = true
{extra}
"#,
        issuer = idp.issuer
    )
}

fn gateway(idp: &Idp, client_id: &str, extra: &str) -> TestServer {
    TestServer::start_with(
        Some(&sso_config(idp, client_id, extra)),
        &[("TOLLGATE_SSO_CLIENT_SECRET", SECRET)],
    )
}

/// A browser: no automatic redirects, cookies kept per host.
struct Browser {
    http: reqwest::Client,
    jar: HashMap<String, HashMap<String, String>>,
}

impl Browser {
    fn new() -> Browser {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Browser {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            jar: HashMap::new(),
        }
    }

    /// GET with this host's cookies; keeps the cookies set; the status
    /// and the Location.
    async fn get(&mut self, url: &str) -> (u16, Option<String>) {
        let parsed = url::Url::parse(url).unwrap();
        let host = format!("{}:{}", parsed.host_str().unwrap(), parsed.port().unwrap());
        let cookies = self.jar.entry(host.clone()).or_default();
        let header: Vec<String> = cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let response = self
            .http
            .get(url)
            .header("cookie", header.join("; "))
            .send()
            .await
            .unwrap();
        for set in response.headers().get_all("set-cookie") {
            let pair = set.to_str().unwrap().split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            cookies.insert(name.trim().to_owned(), value.trim().to_owned());
        }
        let location = response
            .headers()
            .get("location")
            .map(|l| parsed.join(l.to_str().unwrap()).unwrap().to_string());
        (response.status().as_u16(), location)
    }

    /// Follows redirects from `url` through the provider to the gateway's
    /// callback; returns the callback URL at the gateway.
    async fn follow_to_callback(&mut self, server: &TestServer, mut url: String) -> String {
        for _ in 0..20 {
            if let Some(query) = url.strip_prefix(REDIRECT) {
                return server.url(&format!("/api/v1/auth/oidc/callback{query}"));
            }
            let (status, location) = self.get(&url).await;
            assert!((300..400).contains(&status), "{url} answered {status}");
            url = location.expect("a redirect has a Location");
        }
        panic!("too many redirects");
    }

    /// The whole round trip: start, the provider, the callback; the
    /// dashboard fragment's parameters.
    async fn sign_in(&mut self, server: &TestServer) -> HashMap<String, String> {
        let (status, location) = self.get(&server.url("/api/v1/auth/oidc/start")).await;
        assert_eq!(status, 302);
        let callback = self.follow_to_callback(server, location.unwrap()).await;
        self.finish(&callback).await
    }

    async fn finish(&mut self, callback: &str) -> HashMap<String, String> {
        let (status, location) = self.get(callback).await;
        assert_eq!(status, 302);
        fragment(&location.unwrap())
    }
}

/// The parameters of a `/#/sso?...` dashboard URL.
fn fragment(location: &str) -> HashMap<String, String> {
    let (_, query) = location
        .split_once("#/sso?")
        .unwrap_or_else(|| panic!("{location} is not the dashboard's SSO page"));
    url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect()
}

async fn exchange(server: &TestServer, code: &str) -> reqwest::Response {
    client()
        .post(server.url("/api/v1/auth/oidc/exchange"))
        .json(&json!({ "code": code }))
        .send()
        .await
        .unwrap()
}

async fn me(server: &TestServer, token: &str) -> Value {
    common::get_json(server, token, "/api/v1/me").await
}

async fn audit(server: &TestServer, action: &str) -> Vec<Value> {
    let owner = login(server).await;
    let page = common::get_json(
        server,
        &owner,
        &format!("/api/v1/audit?action={action}&limit=100"),
    )
    .await;
    page["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn sso_signs_in_creates_the_account_and_hands_over_one_session() {
    let idp = Idp::start();
    let server = gateway(&idp, "tollgate", "");
    idp.sign_in_as("ada@example.com", &["staff", "tollgate-admins"])
        .await;
    let mut browser = Browser::new();

    // The authorization request: code flow, PKCE S256, state, nonce.
    let (status, location) = browser.get(&server.url("/api/v1/auth/oidc/start")).await;
    assert_eq!(status, 302);
    let location = location.unwrap();
    let auth = url::Url::parse(&location).unwrap();
    assert!(location.starts_with(&format!("{}/auth?", idp.issuer)));
    let params: HashMap<_, _> = auth.query_pairs().into_owned().collect();
    assert_eq!(params["response_type"], "code");
    assert_eq!(params["client_id"], "tollgate");
    assert_eq!(params["code_challenge_method"], "S256");
    assert_eq!(params["code_challenge"].len(), 43);
    assert!(params["state"].len() >= 32 && params["nonce"].len() >= 32);
    assert_eq!(params["redirect_uri"], REDIRECT);

    let callback = browser.follow_to_callback(&server, location).await;
    let answer = browser.finish(&callback).await;
    let code = answer.get("code").unwrap_or_else(|| panic!("{answer:?}"));

    let response = exchange(&server, code).await;
    assert_eq!(response.status(), 200);
    let token = response.json::<Value>().await.unwrap()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(token.starts_with("tgs_"));
    let signed_in = me(&server, &token).await;
    assert_eq!(signed_in["email"], "ada@example.com");
    assert_eq!(signed_in["role"], "admin");
    assert_eq!(signed_in["tenant"]["name"], "default");

    // The code is single use; the callback cannot be replayed.
    let again = exchange(&server, code).await;
    assert_eq!(error_code(again, 401).await, "invalid_sso_code");
    let replayed = browser.finish(&callback).await;
    assert_eq!(replayed["error"], "sso_bad_state");

    let entries = audit(&server, "auth.sso_sign_in").await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["target"], "ada@example.com");
    assert_eq!(entries[0]["details"]["accountCreated"], true);

    // The second sign-in finds the account; the provider's groups decide
    // the role at each sign-in.
    idp.sign_in_as("ada@example.com", &["tollgate-users"]).await;
    let answer = browser.sign_in(&server).await;
    let response = exchange(&server, &answer["code"]).await;
    let token = response.json::<Value>().await.unwrap()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(me(&server, &token).await["role"], "user");
}

#[tokio::test]
async fn es256_tokens_verify_and_an_unknown_kid_fetches_the_keys_again() {
    let idp = Idp::start();
    let server = gateway(&idp, "tollgate-es", "");
    idp.sign_in_as("grace@example.com", &["tollgate-users"])
        .await;
    let mut browser = Browser::new();
    let answer = browser.sign_in(&server).await;
    assert!(answer.contains_key("code"), "ES256: {answer:?}");

    // The provider rotates to a key the gateway has not seen (published
    // from now on): the gateway fetches the set again and accepts it.
    idp.control("tamper", json!({ "key": "late" })).await;
    let answer = browser.sign_in(&server).await;
    let code = answer.get("code").unwrap_or_else(|| panic!("{answer:?}"));
    assert_eq!(exchange(&server, code).await.status(), 200);
}

#[tokio::test]
async fn each_refusal_reaches_the_sign_in_page_and_is_audited() {
    let idp = Idp::start();
    let server = gateway(&idp, "tollgate", "");
    let mut browser = Browser::new();
    let mut expected = Vec::new();

    // A state this gateway never issued.
    let (_, location) = browser
        .get(&server.url("/api/v1/auth/oidc/callback?code=x&state=forged"))
        .await;
    assert_eq!(fragment(&location.unwrap())["error"], "sso_bad_state");
    expected.push("sso_bad_state");

    // A genuine callback carried to another browser (no binding cookie).
    idp.sign_in_as("ada@example.com", &["tollgate-admins"])
        .await;
    let (_, location) = browser.get(&server.url("/api/v1/auth/oidc/start")).await;
    let callback = browser.follow_to_callback(&server, location.unwrap()).await;
    let answer = Browser::new().finish(&callback).await;
    assert_eq!(answer["error"], "sso_bad_state");
    expected.push("sso_bad_state");

    // Signed by the provider's key, but for another client.
    idp.control("tamper", json!({ "aud": "someone-else" }))
        .await;
    assert_eq!(
        browser.sign_in(&server).await["error"],
        "sso_wrong_audience"
    );
    expected.push("sso_wrong_audience");

    // Expired an hour ago.
    idp.control("tamper", json!({ "expOffset": -3600 })).await;
    assert_eq!(browser.sign_in(&server).await["error"], "sso_token_expired");
    expected.push("sso_token_expired");

    // Signed by the provider's key, but naming another issuer.
    idp.control("tamper", json!({ "iss": "http://127.0.0.1:9/other" }))
        .await;
    assert_eq!(browser.sign_in(&server).await["error"], "sso_wrong_issuer");
    expected.push("sso_wrong_issuer");

    // Signed by the provider's key, but with a nonce this sign-in did not
    // send (a token replayed from another sign-in).
    idp.control("tamper", json!({ "nonce": "a-nonce-from-another-sign-in" }))
        .await;
    assert_eq!(browser.sign_in(&server).await["error"], "sso_wrong_nonce");
    expected.push("sso_wrong_nonce");

    idp.control("tamper", json!({})).await;
    idp.sign_in_as("eve@elsewhere.org", &["tollgate-admins"])
        .await;
    assert_eq!(
        browser.sign_in(&server).await["error"],
        "sso_domain_not_allowed"
    );
    expected.push("sso_domain_not_allowed");

    idp.sign_in_as("bob@example.com", &["staff"]).await;
    assert_eq!(
        browser.sign_in(&server).await["error"],
        "sso_no_mapped_role"
    );
    expected.push("sso_no_mapped_role");

    // Nothing was created by a refused sign-in.
    let owner = login(&server).await;
    let users = common::get_json(&server, &owner, "/api/v1/users").await;
    assert!(!users.to_string().contains("bob@example.com"));

    let entries = audit(&server, "auth.sso_refused").await;
    let mut outcomes: Vec<&str> = entries
        .iter()
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    outcomes.sort();
    expected.sort();
    assert_eq!(outcomes, expected);
    let domain = entries
        .iter()
        .find(|e| e["outcome"] == "sso_domain_not_allowed")
        .unwrap();
    assert_eq!(domain["target"], "eve@elsewhere.org");

    // The sign-in page has a message for each refusal code.
    let methods: Value = client()
        .get(server.url("/api/v1/auth/methods"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for code in expected {
        assert!(methods["ssoRefusals"][code].is_string(), "{code}");
    }
    // The client secret is nowhere in the log.
    assert!(!server.log().contains(SECRET));
}

#[tokio::test]
async fn an_unknown_email_is_refused_without_create_accounts() {
    let idp = Idp::start();
    let text = sso_config(&idp, "tollgate", "").replace("create_accounts = true", "");
    let server = TestServer::start_with(Some(&text), &[("TOLLGATE_SSO_CLIENT_SECRET", SECRET)]);
    idp.sign_in_as("ada@example.com", &["tollgate-admins"])
        .await;
    let mut browser = Browser::new();
    assert_eq!(browser.sign_in(&server).await["error"], "sso_no_account");
}

#[tokio::test]
async fn password_login_false_leaves_only_the_bootstrap_owner_a_password() {
    let idp = Idp::start();
    let server = gateway(&idp, "tollgate", "password_login = false");
    let methods: Value = client()
        .get(server.url("/api/v1/auth/methods"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(methods["sso"], true);
    assert_eq!(methods["password"], false);
    // The bootstrap owner still signs in with the password.
    let owner = login(&server).await;
    assert_eq!(me(&server, &owner).await["role"], "owner");
    let out = server.cli_with_stdin(
        &[
            "users",
            "create",
            "--email",
            "carl@example.com",
            "--role",
            "user",
            "--tenant",
            "default",
            "--password-stdin",
        ],
        "a-long-test-password",
    );
    assert!(out.status.success());
    let refused = client()
        .post(server.url("/api/v1/auth/login"))
        .json(&json!({ "email": "carl@example.com", "password": "a-long-test-password" }))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(refused, 403).await, "password_sign_in_disabled");
}

#[tokio::test]
async fn without_sso_the_routes_say_so_and_the_page_shows_no_button() {
    let server = TestServer::start();
    let methods: Value = client()
        .get(server.url("/api/v1/auth/methods"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(methods["sso"], false);
    assert_eq!(methods["password"], true);
    let start = client()
        .get(server.url("/api/v1/auth/oidc/start"))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(start, 404).await, "not_found");
}

#[test]
fn a_missing_client_secret_refuses_the_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tollgate.toml");
    std::fs::write(
        &path,
        "[sso]\nissuer = \"https://idp.example.com\"\nclient_id = \"t\"\nclient_secret_env = \"TOLLGATE_SSO_CLIENT_SECRET\"\nredirect_url = \"https://gw.example.com/api/v1/auth/oidc/callback\"\n",
    )
    .unwrap();
    let out = Command::new(common::BIN)
        .env_clear()
        .arg("--config")
        .arg(&path)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("serve")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sso.client_secret_env") && err.contains("TOLLGATE_SSO_CLIENT_SECRET"),
        "{err}"
    );
}
