//! `GET /api/v1/openapi.json`: the OpenAPI 3.1 document
//! (`assets/openapi.json`, embedded in the binary) of the dashboard API
//! under `/api/v1` and of every inference route under `/v1` and `/v1beta`
//! (OpenAI's, Anthropic's and Gemini's wires, with their key headers and
//! error shapes). Session-protected like the rest of `/api/v1`.
//! tests/dashboard_api.rs checks that it documents every route the router
//! serves there and nothing else; tests/sdk.rs validates it as OpenAPI 3.1.

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::api::extract::Signed;
use crate::api::state::AppState;

pub const DOCUMENT: &str = include_str!("../../assets/openapi.json");

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/openapi.json", get(document))
}

async fn document(_: Signed) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT)
}
