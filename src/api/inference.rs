//! The frame every inference handler shares: the [`Inference`] extractor
//! (the state, the request's API key and its headers) and the one way a
//! handler runs its work, counted against the key's per-minute limit and
//! inside its server span ([`Inference::serve`]). A handler under `/v1`
//! then only parses its body and maps the pipeline's outcome.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::request::Parts;
use axum::response::Response;

use crate::api::extract::InferenceKey;
use crate::api::metrics::ModelLabel;
use crate::api::state::AppState;
use crate::api::v1::{limited, request_id};
use crate::auth::keys::ApiKey;
use crate::base::error::ApiError;

/// An inference request's state, key and headers, taken in that order (a
/// request without a key is refused before its headers are read, as when
/// a handler took them one by one).
pub struct Inference {
    pub state: AppState,
    pub key: Arc<ApiKey>,
    pub headers: HeaderMap,
}

impl FromRequestParts<AppState> for Inference {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let InferenceKey(key) = InferenceKey::from_request_parts(parts, state).await?;
        Ok(Inference {
            state: state.clone(),
            key,
            headers: parts.headers.clone(),
        })
    }
}

impl Inference {
    /// Runs `handle` within the key's per-minute limit and the server span
    /// named for `operation` ([`limited`], which boxes it: not an `async
    /// fn`, which would keep its own copy of `handle` in its future).
    pub fn serve<'a>(
        &'a self,
        operation: &'static str,
        handle: impl Future<Output = Result<Response, ApiError>> + 'a,
    ) -> impl Future<Output = Response> + 'a {
        limited(&self.state, &self.key, &self.headers, operation, handle)
    }

    /// The request's `x-request-id`, or "".
    pub fn request_id(&self) -> &str {
        request_id(&self.headers)
    }

    /// `response` labelled with `model` for the metrics, only when the
    /// key's tenant has that model in its catalogue.
    pub fn label_known(&self, model: String, mut response: Response) -> Response {
        if self
            .state
            .catalogue
            .get_for(&self.key.tenant_id, &model)
            .is_some()
        {
            response.extensions_mut().insert(ModelLabel(model));
        }
        response
    }
}
