//! Azure OpenAI: the OpenAI wire format at a deployment's own URL.
//!
//! `{base_url}/openai/deployments/{deployment}/{path}?api-version={v}`,
//! where the deployment is the model's `upstream` (one encoded path
//! segment) and `path` the OpenAI one (`chat/completions`, `embeddings`,
//! `images/generations`, `audio/transcriptions`, `audio/speech`). The key
//! goes in the `api-key` header; no `Authorization` header is sent.
//! Bodies and answers are OpenAI's, streams included. Azure's content
//! filter refuses a prompt with a 400 whose `error.code` is
//! `content_filter` (see [`super::http::send`]); a filtered completion
//! keeps its `finish_reason: "content_filter"` as OpenAI's own.

use url::Url;

use super::{Failure, UpstreamError, http};
use crate::upstream::ProviderConfig;

/// A POST to the deployment's `path`, with the `api-key` header.
pub fn post<'a>(
    client: &reqwest::Client,
    provider: &'a ProviderConfig,
    deployment: &str,
    path: &[&str],
) -> Result<(reqwest::RequestBuilder, &'a Url), UpstreamError> {
    let (Some(base), Some(api_version)) = (&provider.base_url, provider.cloud.api_version()) else {
        return Err(UpstreamError::new(
            Failure::Unsupported,
            "the provider has no base_url or api_version",
        ));
    };
    let mut request = client.post(url(base, deployment, path, api_version));
    if let Some(key) = &provider.api_key {
        request = request.header("api-key", key.expose());
    }
    Ok((request, base))
}

/// The URL of a deployment's endpoint.
pub fn url(base: &Url, deployment: &str, path: &[&str], api_version: &str) -> Url {
    let mut segments = vec!["openai", "deployments", deployment];
    segments.extend_from_slice(path);
    let mut url = http::endpoint(base, &segments);
    url.query_pairs_mut()
        .append_pair("api-version", api_version);
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deployment_is_one_segment_and_the_version_a_query() {
        let base = Url::parse("https://res.openai.azure.com").unwrap();
        let url = url(
            &base,
            "gpt 4o/../x?y",
            &["chat", "completions"],
            "2024-10-21",
        );
        assert_eq!(
            url.as_str(),
            "https://res.openai.azure.com/openai/deployments/gpt%204o%2F..%2Fx%3Fy/chat/completions?api-version=2024-10-21"
        );
    }
}
