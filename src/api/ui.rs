//! The browser dashboard, embedded in the binary (DESIGN section 1).
//!
//! `ui/` holds plain HTML, CSS and ES modules with no build step; rust-embed
//! puts them into the binary, so `cargo build` alone produces the whole
//! product. The dashboard routes with the URL's fragment (`/#/keys`), so the
//! server only ever serves `/`, `/index.html` and `/assets/...`; every other
//! path keeps its JSON behaviour, 404s included.
//!
//! Every answer carries a strict Content-Security-Policy (nothing inline,
//! nothing from another origin), `nosniff` and `no-referrer`. Files have no
//! content hash in their names (ES modules import each other by plain
//! names), so each is served with an ETag made from its content hash and
//! `Cache-Control: no-cache`: the browser revalidates and gets a bodiless
//! 304 while the file is unchanged, and after an upgrade it never mixes
//! modules of two versions.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rust_embed::RustEmbed;

use crate::api::state::AppState;
use crate::base::error::ApiError;

#[derive(RustEmbed)]
#[folder = "ui/"]
struct Files;

/// What the dashboard's pages may load and do: only this origin, no inline
/// code or style, no framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
     base-uri 'none'; form-action 'self'";

/// Revalidate every time; the ETag makes that a bodiless 304.
const CACHE_CONTROL: &str = "no-cache";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(index))
        .route("/index.html", get(index))
        .route("/assets/{*path}", get(asset))
}

/// Paths the dashboard serves without a session: the page and its files
/// (the data they show comes from `/api/v1`, which needs one).
pub fn is_ui_path(path: &str) -> bool {
    path == "/" || path == "/index.html" || path.starts_with("/assets/")
}

async fn index(headers: HeaderMap) -> Response {
    serve("index.html", &headers)
}

async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    serve(&format!("assets/{path}"), &headers)
}

/// The content type of a file the dashboard ships, by extension; a file of
/// any other kind (such as `ui/README.md`) is not served.
fn content_type(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1;
    Some(match extension {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => return None,
    })
}

/// A relative path inside `ui/` with no way out of it.
fn is_safe(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

fn serve(path: &str, request: &HeaderMap) -> Response {
    let not_found = || ApiError::not_found(format!("no dashboard file `{path}`")).into_response();
    let Some(content_type) = content_type(path).filter(|_| is_safe(path)) else {
        return not_found();
    };
    let Some(file) = Files::get(path) else {
        return not_found();
    };
    let etag = etag(&file.metadata.sha256_hash());
    let mut response = if matches_etag(request, &etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut response = file.data.into_owned().into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        response
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    );
    security_headers(headers);
    response
}

/// The headers every dashboard answer carries.
fn security_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

/// A strong ETag: the first 16 bytes of the content's SHA-256, in hex.
fn etag(hash: &[u8; 32]) -> String {
    let hex: String = hash[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

/// Whether `If-None-Match` names this ETag (or `*`); a weak form matches
/// too, as RFC 9110 asks for this header.
fn matches_etag(request: &HeaderMap, etag: &str) -> bool {
    request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_inside_the_folder_are_served() {
        assert!(is_safe("assets/app.js"));
        assert!(is_safe("assets/pages/keys.js"));
        for bad in [
            "",
            "/etc/passwd",
            "assets/../../Cargo.toml",
            "assets//x.js",
            "assets/./x.js",
            "a\\b.js",
        ] {
            assert!(!is_safe(bad), "{bad}");
        }
    }

    #[test]
    fn only_known_kinds_of_file_are_served() {
        assert_eq!(content_type("index.html"), Some("text/html; charset=utf-8"));
        assert_eq!(
            content_type("assets/app.js"),
            Some("text/javascript; charset=utf-8")
        );
        assert_eq!(content_type("README.md"), None);
        assert_eq!(content_type("assets/noextension"), None);
    }

    #[test]
    fn if_none_match_accepts_lists_weak_tags_and_star() {
        let etag = "\"abc\"";
        for (sent, expected) in [
            ("\"abc\"", true),
            ("W/\"abc\"", true),
            ("\"x\", \"abc\"", true),
            ("*", true),
            ("\"abd\"", false),
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(header::IF_NONE_MATCH, HeaderValue::from_static(sent));
            assert_eq!(matches_etag(&headers, etag), expected, "{sent}");
        }
        assert!(!matches_etag(&HeaderMap::new(), etag));
    }

    #[test]
    fn the_dashboard_ships_its_page_and_modules() {
        assert!(Files::get("index.html").is_some());
        assert!(Files::get("assets/app.js").is_some());
    }
}
