//! The embedded dashboard as served: content types, the security headers,
//! ETag revalidation, and the paths around it keeping their JSON answers.
//! Its behaviour in a browser is tested in `tests/browser.rs`.

mod common;

use common::{TestServer, client, error_code};

const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

fn header<'a>(response: &'a reqwest::Response, name: &str) -> &'a str {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("no {name} header"))
}

#[tokio::test]
async fn the_page_and_its_files_are_served_without_a_session_with_strict_headers() {
    let server = TestServer::start();
    let http = client();
    for (path, content_type) in [
        ("/", "text/html; charset=utf-8"),
        ("/index.html", "text/html; charset=utf-8"),
        ("/assets/app.js", "text/javascript; charset=utf-8"),
        ("/assets/pages/keys.js", "text/javascript; charset=utf-8"),
        ("/assets/app.css", "text/css; charset=utf-8"),
        ("/assets/favicon.svg", "image/svg+xml"),
    ] {
        let response = http.get(server.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(header(&response, "content-type"), content_type, "{path}");
        assert_eq!(header(&response, "content-security-policy"), CSP, "{path}");
        assert_eq!(header(&response, "x-content-type-options"), "nosniff");
        assert_eq!(header(&response, "referrer-policy"), "no-referrer");
        assert_eq!(header(&response, "cache-control"), "no-cache");
        assert!(header(&response, "etag").starts_with('"'), "{path}");
        assert!(response.headers().get("set-cookie").is_none());
    }
    let page = http
        .get(server.url("/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains(r#"<script type="module" src="/assets/app.js">"#));
    assert!(
        !page.contains("<style") && !page.contains("style="),
        "no inline style"
    );
    assert_eq!(page.matches("<script").count(), 1, "no inline script");
}

#[tokio::test]
async fn an_unchanged_file_is_revalidated_with_a_304() {
    let server = TestServer::start();
    let http = client();
    let first = http.get(server.url("/assets/app.js")).send().await.unwrap();
    let etag = header(&first, "etag").to_owned();
    let again = http
        .get(server.url("/assets/app.js"))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(header(&again, "etag"), etag);
    assert!(again.bytes().await.unwrap().is_empty());
    let other = http
        .get(server.url("/assets/app.css"))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200, "another file's tag does not match");
    let head = http.head(server.url("/")).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(header(&head, "content-type"), "text/html; charset=utf-8");
}

#[tokio::test]
async fn paths_outside_the_dashboard_keep_their_json_answers() {
    let server = TestServer::start();
    let http = client();
    let missing = http
        .get(server.url("/assets/nope.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(missing, 404).await, "not_found");
    let readme = http
        .get(server.url("/assets/../README.md"))
        .send()
        .await
        .unwrap();
    assert_eq!(readme.status().as_u16() / 100, 4);
    let escaped = http
        .get(server.url("/assets/x%2f..%2f..%2fCargo.toml"))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(escaped, 404).await, "not_found");
    let api = http.get(server.url("/api/v1/me")).send().await.unwrap();
    assert_eq!(error_code(api, 401).await, "missing_token");
    let inference = http.get(server.url("/v1/models")).send().await.unwrap();
    assert_eq!(error_code(inference, 401).await, "missing_api_key");
    let health = http.get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert!(health.headers().get("content-security-policy").is_none());
    let post = http.post(server.url("/")).send().await.unwrap();
    assert_eq!(error_code(post, 405).await, "method_not_allowed");
}
