//! `GET /api/v1/openapi.json`: the OpenAPI 3.1 document of the dashboard
//! API (`assets/openapi.json`) and of `POST /v1/responses`, embedded in the
//! binary. Session-protected like the rest of `/api/v1`; a test checks that
//! it documents every route the router serves there.

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::app::AppState;
use crate::auth::extract::Signed;

pub const DOCUMENT: &str = include_str!("../../assets/openapi.json");

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/openapi.json", get(document))
}

async fn document(_: Signed) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT)
}
