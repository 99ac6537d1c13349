//! The call stage of a native request: one attempt sends the caller's
//! body to one deployment of the wire's kind with that provider's key
//! (or answers from the mock), and waits for the first chunk; a failed
//! attempt keeps the upstream's status and body, relayed as sent when the
//! walk ends on it.

use super::*;
use crate::routing::AttemptStatus;
use crate::upstream::ProviderConfig;

/// One attempt of a native request: its body to one deployment of the
/// wire's kind, with that provider's key.
pub(super) struct Forward<'a> {
    pub(super) gateway: &'a Gateway,
    pub(super) call: &'a NativeCall,
}

/// A served attempt: a stream at its first chunk, or a whole answer.
pub(super) enum Answer {
    Stream(relay::UpstreamBytes),
    Whole(Bytes, Value),
}

/// A failed attempt: the upstream's error, and the status and body it
/// answered (relayed as sent when the walk ends on it).
pub(super) struct Refusal {
    pub(super) error: UpstreamError,
    pub(super) status: u16,
    pub(super) body: Bytes,
}

impl AsRef<UpstreamError> for Refusal {
    fn as_ref(&self) -> &UpstreamError {
        &self.error
    }
}

impl From<UpstreamError> for Refusal {
    /// A failure without an upstream answer (nothing to relay).
    fn from(error: UpstreamError) -> Refusal {
        Refusal {
            error,
            status: 0,
            body: Bytes::new(),
        }
    }
}

impl walk::Call for Forward<'_> {
    type Reply = Answer;
    type Error = Refusal;

    fn operation(&self) -> &'static str {
        self.call.wire.operation()
    }

    fn unfit(&self, deployment: &Model) -> Option<(AttemptStatus, String)> {
        let wire = self.call.wire;
        (!wire.serves(&deployment.provider, &deployment.upstream)).then(|| {
            (
                AttemptStatus::WrongKind,
                format!(
                    "the provider `{}` is of kind `{}`; {} forwards only to providers of kind `{}`",
                    deployment.provider.id,
                    deployment.provider.kind.as_str(),
                    wire.route(),
                    wire.provider_kind().as_str()
                ),
            )
        })
    }

    async fn attempt(&self, deployment: Arc<Model>) -> Result<Answer, Refusal> {
        if deployment.provider.kind == ProviderKind::Mock {
            return mocked(self.call, &deployment);
        }
        let sent = send(self.gateway, self.call, &deployment).await?;
        if self.call.stream {
            return Ok(Answer::Stream(Box::pin(
                futures::stream::iter([Ok(sent.first)]).chain(
                    sent.response
                        .bytes_stream()
                        .map(|r| r.map_err(|e| without_url(&e))),
                ),
            )));
        }
        // A whole answer is read within the attempt: until it is here,
        // nothing reached the caller and another attempt may serve.
        let body = read_rest(sent, MAX_ANSWER)
            .await
            .map_err(|message| UpstreamError::new(Failure::Garbage, message))?;
        let answer = serde_json::from_slice::<Value>(&body)
            .map_err(|_| UpstreamError::new(Failure::Garbage, "the answer is not JSON"))?;
        Ok(Answer::Whole(body, answer))
    }
}

/// A legacy completion answered by the built-in mock provider, in the
/// completions shape (`providers::mock::completion`).
pub(super) fn mocked(call: &NativeCall, deployment: &Model) -> Result<Answer, Refusal> {
    let body = forwarded_body(call, deployment);
    let request: Value = serde_json::from_slice(body)
        .map_err(|_| UpstreamError::new(Failure::Garbage, "the body is not JSON"))?;
    let chunks =
        mock::completion(&deployment.upstream, &request, call.stream).map_err(|error| {
            let status = match error.failure {
                Failure::Status(status) => status,
                _ => 0,
            };
            let body = serde_json::json!({ "error": { "message": error.message, "type": "invalid_request_error", "code": null, "param": null } });
            Refusal {
                error,
                status,
                body: Bytes::from(body.to_string()),
            }
        })?;
    if call.stream {
        return Ok(Answer::Stream(Box::pin(futures::stream::iter(
            chunks.into_iter().map(Ok),
        ))));
    }
    let body = chunks.concat();
    let answer = serde_json::from_slice::<Value>(&body)
        .map_err(|_| UpstreamError::new(Failure::Garbage, "the answer is not JSON"))?;
    Ok(Answer::Whole(Bytes::from(body), answer))
}

/// The body sent to `deployment`: renamed for its upstream name if needed.
pub(super) fn forwarded_body<'a>(call: &'a NativeCall, deployment: &Model) -> &'a Bytes {
    call.renamed
        .iter()
        .find(|(name, _)| *name == deployment.upstream)
        .map_or(&call.body, |(_, body)| body)
}

/// The Messages body as Vertex AI's `:rawPredict` takes it:
/// `anthropic_version` set to Vertex's, `model` removed, the rest as sent.
pub(super) fn vertex_anthropic_body(body: &Bytes) -> Result<Bytes, Refusal> {
    let mut value: Map<String, Value> = serde_json::from_slice(body)
        .map_err(|_| UpstreamError::new(Failure::Garbage, "the body is not a JSON object"))?;
    value.remove("model");
    value.insert(
        "anthropic_version".into(),
        Value::String(vertex::ANTHROPIC_VERSION.into()),
    );
    Ok(Bytes::from(Value::Object(value).to_string()))
}

/// A successful upstream response, its first body chunk already here.
pub(super) struct Sent {
    pub(super) response: reqwest::Response,
    pub(super) first: Bytes,
    pub(super) deadline: Instant,
}

/// Sends the caller's body to `deployment`'s provider with the provider's
/// key, and waits for the first chunk within the first-byte timeout.
pub(super) async fn send(
    gateway: &Gateway,
    call: &NativeCall,
    deployment: &Model,
) -> Result<Sent, Refusal> {
    let provider = &deployment.provider;
    let (request, body) = addressed(gateway.providers.http(), call, deployment).await?;
    // `Bytes` clones share the buffer: the body is held once, whatever
    // the number of attempts.
    let request = with_headers(request, call, provider)
        .header("content-type", "application/json")
        .body(body);
    let timeout = provider.first_byte_timeout;
    let deadline = Instant::now() + timeout;
    let mut response = within(
        timeout,
        request.send(),
        "no response before the first-byte timeout",
    )
    .await?
    .map_err(|e| unsent(&e, provider))?;
    if !response.status().is_success() {
        return Err(refused(response, deadline).await);
    }
    let left = deadline.saturating_duration_since(Instant::now());
    let first = within(
        left,
        response.chunk(),
        "no first byte before the first-byte timeout",
    )
    .await?
    .map_err(|e| {
        UpstreamError::new(
            Failure::Garbage,
            format!("the body broke off: {}", without_url(&e)),
        )
    })?
    .unwrap_or_default();
    Ok(Sent {
        response,
        first,
        deadline,
    })
}

/// The request to `deployment`'s endpoint for the call's wire, with the
/// provider's authentication, and the body that endpoint takes.
async fn addressed(
    http: &reqwest::Client,
    call: &NativeCall,
    deployment: &Model,
) -> Result<(reqwest::RequestBuilder, Bytes), Refusal> {
    let provider = &deployment.provider;
    let Some(base) = provider.base_url.as_ref() else {
        return Err(
            UpstreamError::new(Failure::Unsupported, "the provider has no base_url").into(),
        );
    };
    let body = forwarded_body(call, deployment).clone();
    let request = match call.wire {
        // Vertex's Anthropic models take the Messages body with a changed
        // version field and no model (the path names it).
        Wire::Anthropic if provider.kind == ProviderKind::Vertex => {
            let (base, vertex) = vertex::settings(provider)?;
            let body = vertex_anthropic_body(&call.body)?;
            let action = if call.stream {
                "streamRawPredict"
            } else {
                "rawPredict"
            };
            let url = vertex::model_url(base, vertex, &deployment.upstream, action);
            return Ok((vertex::post(http, provider, vertex, url).await?, body));
        }
        Wire::Anthropic => {
            let request = http.post(endpoint(base, &["messages"]));
            let request = if call.headers.iter().any(|(n, _)| *n == "anthropic-version") {
                request
            } else {
                request.header("anthropic-version", DEFAULT_ANTHROPIC_VERSION)
            };
            keyed(request, provider, "x-api-key")
        }
        // Vertex AI: the same body at the publisher's URL, with a token.
        Wire::Gemini if provider.kind == ProviderKind::Vertex => {
            let (base, vertex) = vertex::settings(provider)?;
            let action = if call.stream {
                "streamGenerateContent"
            } else {
                "generateContent"
            };
            let mut url = vertex::model_url(base, vertex, &deployment.upstream, action);
            if call.stream {
                url.set_query(Some("alt=sse"));
            }
            vertex::post(http, provider, vertex, url).await?
        }
        Wire::Gemini => {
            let url = crate::providers::gemini::endpoint(base, &deployment.upstream, call.stream);
            keyed(http.post(url), provider, "x-goog-api-key")
        }
        Wire::Completions | Wire::Responses => {
            let path = if call.wire == Wire::Completions {
                "completions"
            } else {
                "responses"
            };
            let request = http.post(endpoint(base, &[path]));
            match &provider.api_key {
                Some(key) => request.bearer_auth(key.expose()),
                None => request,
            }
        }
    };
    Ok((request, body))
}

/// `request` with the provider's key in the header `name`, if it has one.
fn keyed(
    request: reqwest::RequestBuilder,
    provider: &ProviderConfig,
    name: &str,
) -> reqwest::RequestBuilder {
    match &provider.api_key {
        Some(key) => request.header(name, key.expose()),
        None => request,
    }
}

/// `request` with the caller's own headers (`anthropic-version`,
/// `anthropic-beta`) and the attempt's trace context.
fn with_headers(
    mut request: reqwest::RequestBuilder,
    call: &NativeCall,
    provider: &ProviderConfig,
) -> reqwest::RequestBuilder {
    for (name, value) in &call.headers {
        // Vertex takes the version in the body only.
        if provider.kind == ProviderKind::Vertex && *name == "anthropic-version" {
            continue;
        }
        request = request.header(*name, value);
    }
    // The attempt's client span continues upstream (W3C trace context).
    match crate::traces::traceparent() {
        Some(traceparent) => request.header("traceparent", traceparent),
        None => request,
    }
}

/// `future`'s output if it comes within `left`; else the attempt failed
/// with a timeout saying `message`.
async fn within<T>(
    left: Duration,
    future: impl Future<Output = T>,
    message: &'static str,
) -> Result<T, Refusal> {
    tokio::time::timeout(left, future)
        .await
        .map_err(|_| UpstreamError::new(Failure::Timeout, message).into())
}

/// A request that got no response: the provider could not be reached, or
/// the exchange failed.
fn unsent(error: &reqwest::Error, provider: &ProviderConfig) -> UpstreamError {
    if error.is_connect() {
        UpstreamError::new(
            Failure::Connect,
            format!("cannot connect to the provider `{}`", provider.id),
        )
    } else {
        UpstreamError::new(
            Failure::Connect,
            format!("the request failed: {}", without_url(error)),
        )
    }
}

/// A non-2xx response: its status, its `Retry-After`, and its body (up to
/// [`MAX_ERROR_BODY`]) to relay as sent.
async fn refused(response: reqwest::Response, deadline: Instant) -> Refusal {
    let status = response.status().as_u16();
    let retry_after = crate::providers::http::retry_after(response.headers());
    let sent = Sent {
        response,
        first: Bytes::new(),
        deadline,
    };
    let body = read_rest(sent, MAX_ERROR_BODY).await.unwrap_or_default();
    let mut error = UpstreamError::new(Failure::Status(status), error_message(&body, status));
    error.retry_after = retry_after;
    Refusal {
        error,
        status,
        body,
    }
}

/// The rest of a body, up to `limit` bytes.
pub(super) async fn read_rest(mut sent: Sent, limit: usize) -> Result<Bytes, String> {
    let mut body = bytes::BytesMut::from(&sent.first[..]);
    loop {
        let left = sent.deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left.max(Duration::from_secs(30)), sent.response.chunk()).await {
            Err(_) => return Err("the body did not arrive in time".into()),
            Ok(Err(e)) => return Err(format!("the body broke off: {}", without_url(&e))),
            Ok(Ok(None)) => return Ok(body.freeze()),
            Ok(Ok(Some(chunk))) => {
                if body.len() + chunk.len() > limit {
                    return Err(format!("the body exceeds {limit} bytes"));
                }
                body.extend_from_slice(&chunk);
            }
        }
    }
}
