//! AWS Bedrock through its Converse API, signed with SigV4 (service
//! `bedrock`).
//!
//! `POST {base}/model/{model id}/converse`, or `/converse-stream` for an
//! event stream ([`eventstream`]). The model id is one path segment,
//! AWS-encoded whole (`anthropic.claude-3-5-sonnet-20240620-v1:0` goes out
//! as `...-v1%3A0`, an inference-profile ARN's `/` as `%2F`), and the
//! signature covers that path encoded once more ([`sigv4`]).
//!
//! Credentials come from the environment variables the provider names
//! (read at start, kept as [`Secret`]s); the secret key never leaves the
//! process, and the session token, which does (`x-amz-security-token`),
//! is cut out of any upstream error message before it can reach a caller
//! or a log (AWS's signature-mismatch message quotes the canonical
//! request, headers included).
//!
//! Errors: HTTP statuses keep their meaning for the router
//! (`ThrottlingException` 429, `ServiceUnavailableException` 503 and
//! `InternalServerException` 500 retryable; `ValidationException` 400
//! final; `AccessDeniedException` 403 not retried on the same deployment).
//! An exception frame in a stream is mapped to the status its exception
//! has over HTTP, so one that arrives before the first chunk falls back
//! as the HTTP error would.

pub mod converse;
pub mod eventstream;
pub mod sigv4;

use std::collections::HashMap;

use futures::StreamExt;
use serde_json::{Value, json};
use url::Url;

use super::fetch::ImageFetcher;
use super::{ChunkStream, Failure, Reply, UpstreamError, http};
use crate::base::secret::Secret;
use crate::catalogue::Model;
use crate::upstream::BedrockSettings;

/// `https://bedrock-runtime.{region}.amazonaws.com`, the default base URL.
pub fn default_base_url(region: &str) -> Url {
    Url::parse(&format!("https://bedrock-runtime.{region}.amazonaws.com"))
        .expect("a checked region makes a valid host")
}

/// `{base}/model/{id}/converse` or `/converse-stream`, the id encoded as
/// AWS encodes a path label (everything but the unreserved characters).
pub fn endpoint(base: &Url, upstream: &str, stream: bool) -> Url {
    let action = if stream {
        "converse-stream"
    } else {
        "converse"
    };
    let mut url = base.clone();
    let path = format!(
        "{}/model/{}/{action}",
        base.path().trim_end_matches('/'),
        sigv4::uri_encode(upstream, false)
    );
    // The path is fully encoded already; `set_path` keeps `%XX` as is.
    url.set_path(&path);
    url.set_query(None);
    url.set_fragment(None);
    url
}

/// The provider's credentials, or which variable is missing.
fn credentials(settings: &BedrockSettings) -> Result<(&Secret, &Secret), UpstreamError> {
    let missing = |name: &str| {
        UpstreamError::new(
            Failure::Unsupported,
            format!("the AWS credentials are incomplete: {name} is not set"),
        )
    };
    let id = settings
        .access_key_id
        .as_ref()
        .ok_or_else(|| missing(&settings.access_key_id_env))?;
    let secret = settings
        .secret_access_key
        .as_ref()
        .ok_or_else(|| missing(&settings.secret_access_key_env))?;
    Ok((id, secret))
}

pub async fn chat(
    http_client: &reqwest::Client,
    fetcher: &ImageFetcher,
    model: &Model,
    body: Value,
    stream: bool,
) -> Result<Reply, UpstreamError> {
    let provider = &model.provider;
    let (Some(settings), Some(base)) = (&provider.bedrock, &provider.base_url) else {
        return Err(UpstreamError::new(
            Failure::Unsupported,
            "the bedrock provider has no region",
        ));
    };
    let (key_id, secret) = credentials(settings)?;
    let token = settings.session_token.as_ref();
    let name = body["model"].as_str().unwrap_or_default().to_owned();
    let images: HashMap<String, (String, String)> =
        super::gemini::fetch_images(fetcher, &body).await?;
    let request = converse::to_converse(&body, &images, model.max_output_tokens)?;
    let payload = serde_json::to_vec(&request).expect("JSON values serialize");
    let url = endpoint(base, &model.upstream, stream);
    let (headers, authorization) = sign(settings, key_id, secret, &url, &payload);
    let mut builder = http_client
        .post(url)
        .header("authorization", authorization)
        .body(payload);
    for (name, value) in headers.iter().filter(|(n, _)| n != "host") {
        builder = builder.header(name, value);
    }
    if stream {
        builder = builder.header("accept", "application/vnd.amazon.eventstream");
    }
    let sent = http::send(builder, provider, base)
        .await
        .map_err(|e| redact(e, [Some(secret), token]))?;
    if stream {
        let events = stream_events(sent.response.bytes_stream());
        return Ok(Reply::Stream(converse::translate_stream(events, name)));
    }
    let answer = http::read_json(sent).await?;
    Ok(Reply::Complete(converse::from_converse(&answer, &name)?))
}

/// The SigV4-signed headers of a Converse request (`host` included, for
/// the signature; reqwest writes it itself) and its `authorization` value.
fn sign(
    settings: &BedrockSettings,
    key_id: &Secret,
    secret: &Secret,
    url: &Url,
    payload: &[u8],
) -> (Vec<(String, String)>, String) {
    let token = settings.session_token.as_ref();
    let scope = sigv4::Scope {
        region: &settings.region,
        service: "bedrock",
        time: time::OffsetDateTime::now_utc(),
    };
    // reqwest writes `Host` from the URL: the port only when not the
    // scheme's default, which is what `Url::port` gives.
    let host = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_owned(),
    };
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("host".to_owned(), host),
        ("x-amz-date".to_owned(), scope.amz_date()),
    ];
    if let Some(token) = token {
        headers.push(("x-amz-security-token".to_owned(), token.expose().to_owned()));
    }
    let authorization = sigv4::authorization(
        &sigv4::Credentials {
            access_key_id: key_id.expose(),
            secret_access_key: secret.expose(),
            session_token: token.map(Secret::expose),
        },
        &scope,
        &sigv4::Request {
            method: "POST",
            path: url.path(),
            query: url.query(),
            headers: &headers,
            payload,
            normalize: true,
        },
    );
    (headers, authorization)
}

/// Cuts the secret key and the session token out of an upstream error's
/// message: AWS's signature-mismatch message quotes the request.
fn redact(mut e: UpstreamError, secrets: [Option<&Secret>; 2]) -> UpstreamError {
    for secret in secrets.into_iter().flatten() {
        if !secret.expose().is_empty() {
            e.message = e.message.replace(secret.expose(), "[redacted]");
        }
    }
    e
}

/// The status an exception has over HTTP (Bedrock's API reference), so a
/// streamed exception gets the retry decision the same error would get as
/// an answer.
pub fn exception_failure(exception: &str) -> Failure {
    match exception.to_ascii_lowercase().as_str() {
        "throttlingexception" | "modelnotreadyexception" => Failure::Status(429),
        "serviceunavailableexception" => Failure::Status(503),
        "internalserverexception" => Failure::Status(500),
        "modeltimeoutexception" => Failure::Status(408),
        "validationexception" | "servicequotaexceededexception" => Failure::Status(400),
        "accessdeniedexception" => Failure::Status(403),
        "resourcenotfoundexception" => Failure::Status(404),
        // modelStreamErrorException: the model broke off mid-answer.
        _ => Failure::Cut,
    }
}

/// The Converse stream's events as `{"event": type, "body": payload}`;
/// an exception or error message, or broken framing, ends it with an
/// error.
pub fn stream_events<S, E>(bytes: S) -> ChunkStream
where
    S: futures::Stream<Item = Result<bytes::Bytes, E>> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    let messages = eventstream::messages(bytes);
    let mut ended = false;
    Box::pin(
        messages
            .map(|item| -> Result<Value, UpstreamError> {
                let message =
                    item.map_err(|e| UpstreamError::new(Failure::Garbage, e.0.clone()))?;
                let payload: Value =
                    serde_json::from_slice(&message.payload).unwrap_or(Value::Null);
                match message.header(":message-type").unwrap_or("event") {
                    "event" => Ok(json!({
                        "event": message.header(":event-type").unwrap_or_default(),
                        "body": payload,
                    })),
                    "exception" => {
                        let kind = message.header(":exception-type").unwrap_or("exception");
                        let text = payload["message"]
                            .as_str()
                            .or(payload["Message"].as_str())
                            .unwrap_or("no message");
                        Err(UpstreamError::new(
                            exception_failure(kind),
                            format!("Bedrock sent {kind}: {text}"),
                        ))
                    }
                    other => {
                        let code = message.header(":error-code").unwrap_or(other);
                        let text = message.header(":error-message").unwrap_or("no message");
                        Err(UpstreamError::new(
                            exception_failure(code),
                            format!("Bedrock sent an error ({code}): {text}"),
                        ))
                    }
                }
            })
            // Nothing is read after the first error.
            .take_while(move |item| {
                let go = !ended;
                ended |= item.is_err();
                futures::future::ready(go)
            }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_id_is_one_encoded_segment() {
        let base = default_base_url("eu-central-1");
        let url = endpoint(&base, "anthropic.claude-3-5-sonnet-20240620-v1:0", false);
        assert_eq!(
            url.as_str(),
            "https://bedrock-runtime.eu-central-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"
        );
        let arn = "arn:aws:bedrock:eu-central-1:123456789012:inference-profile/eu.anthropic.x-v1:0";
        let url = endpoint(
            &Url::parse("http://127.0.0.1:9/prefix/").unwrap(),
            arn,
            true,
        );
        assert_eq!(
            url.path(),
            "/prefix/model/arn%3Aaws%3Abedrock%3Aeu-central-1%3A123456789012%3Ainference-profile%2Feu.anthropic.x-v1%3A0/converse-stream"
        );
        let url = endpoint(&base, "a?b#c/../d", false);
        assert_eq!(url.path(), "/model/a%3Fb%23c%2F..%2Fd/converse");
        assert_eq!((url.query(), url.fragment()), (None, None));
    }

    #[test]
    fn exceptions_keep_their_http_meaning() {
        let retryable = |name: &str| {
            let e = UpstreamError::new(exception_failure(name), "x");
            (e.retries_same_deployment(), e.retryable())
        };
        assert_eq!(retryable("throttlingException"), (true, true));
        assert_eq!(retryable("serviceUnavailableException"), (true, true));
        assert_eq!(retryable("internalServerException"), (true, true));
        assert_eq!(retryable("validationException"), (false, false));
        assert_eq!(retryable("accessDeniedException"), (false, true));
    }
}
