//! The embeddings pipeline (`POST /v1/embeddings`, docs/embeddings.md),
//! through the same stages as the media routes: the model must be in the
//! tenant's catalogue and be an embedding model, then the wallet (the
//! key's cap was checked when it was authenticated), the risk gate over
//! the input texts, the model's and the key's token limits, the walk over
//! its deployments (registry checked for each), the durable charge per
//! input token with its audit entry, usage record, events and metrics, and
//! the answer with its extensions.
//!
//! Decisions (documented in docs/embeddings.md):
//! - The input texts are classified like a chat prompt's text, joined as
//!   one user message; the gate refuses as it does for chat. Token-array
//!   inputs carry no text the classifier can read: only the service fields
//!   are classified for them.
//! - An embedding cannot be held for human review (a vector is nothing a
//!   reviewer can judge): when the tenant policy would hold the answer,
//!   the request is refused 422 `capability_unsupported`, as speech is.
//! - Billed per input token: the upstream's `usage.prompt_tokens`, else
//!   the local estimate (a token per 4 characters, the exact count for
//!   token arrays), marked `estimated` when it is one.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value, json};

use super::gate::GateInput;
use super::media::{ServiceFields, exhausted};
use super::walk::{Call, Walk, hold_key_tokens};
use super::{AttemptStatus, Compliance, Extensions, Single, tokens};
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::base::time::now_ms;
use crate::billing::limits;
use crate::catalogue::Endpoint;
use crate::catalogue::{Model, ProviderKind};
use crate::gateway::Gateway;
use crate::providers::{Providers, UpstreamError};

pub const PATH: &str = "/v1/embeddings";
/// The `gen_ai.operation.name` of its spans (the GenAI conventions' name).
pub const OPERATION: &str = "embeddings";

/// What was asked to be embedded.
#[derive(Debug, Clone, PartialEq)]
pub enum Inputs {
    Texts(Vec<String>),
    Tokens(Vec<Vec<u32>>),
}

impl Inputs {
    pub fn len(&self) -> usize {
        match self {
            Inputs::Texts(t) => t.len(),
            Inputs::Tokens(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The local count: estimated for texts, exact for token arrays.
    fn tokens(&self) -> (u64, bool) {
        match self {
            Inputs::Texts(texts) => (texts.iter().map(|t| tokens::estimate_text(t)).sum(), true),
            Inputs::Tokens(arrays) => (arrays.iter().map(|a| a.len() as u64).sum(), false),
        }
    }

    /// What the classifier reads: the texts, one a line.
    fn text(&self) -> String {
        match self {
            Inputs::Texts(texts) => texts.join("\n"),
            Inputs::Tokens(_) => String::new(),
        }
    }
}

/// A parsed embeddings request.
pub struct EmbeddingRequest {
    /// The catalogue id the caller named.
    pub model: String,
    pub inputs: Inputs,
    pub service: ServiceFields,
    /// The request as the conversation log keeps it.
    pub logged: String,
    /// The body forwarded, service fields removed (its `model` is renamed
    /// for each deployment).
    pub body: Map<String, Value>,
}

// Long on purpose: the adapter is the stages in order (admit, gate, limits,
// route and call, charge, respond), each one call; split, the order would no
// longer read in one place.
pub async fn serve(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    request: EmbeddingRequest,
) -> Result<Value, ApiError> {
    let started = Instant::now();
    let model = super::catalogued(gateway, key, &request.model)?;
    super::kind_fits(&model, true, PATH)?;
    if let Some(refusal) = (0..model.deployments.len())
        .map(|i| unfit(&request.inputs, &model.on(i)))
        .reduce(|a, b| a.and(b))
        .flatten()
    {
        return Err(ApiError::invalid(
            if refusal.0 == AttemptStatus::TokenInput {
                "input"
            } else {
                "model"
            },
            refusal.1,
        ));
    }
    let (estimate, estimated) = request.inputs.tokens();
    let admitted = super::admit(gateway, key, super::estimated_cost(&model, estimate, 0))?;
    let tenant = &admitted.tenant;
    let mut messages = Value::Null;
    let text = request.inputs.text();
    let input = GateInput::text(&mut messages, &text, &request.service);
    let risk = super::gate(gateway, key, &tenant.policy, &input, request_id).await?;
    if super::gate::holds(&tenant.policy, &risk) {
        return Err(ApiError::new(
            Code::CapabilityUnsupported,
            "the tenant policy holds this answer for human review, and an embedding cannot be held: a vector is nothing a reviewer can judge",
        ));
    }
    let mut reservations: Vec<limits::Reservation> = Vec::new();
    match gateway.model_limits.admit(
        &model.id,
        model.rpm_limit,
        model.tpm_limit,
        estimate,
        now_ms(),
    ) {
        Ok(reservation) => reservations.extend(reservation),
        Err(refusal) => {
            let mut error = ApiError::new(Code::ModelRateLimitExceeded, refusal.message);
            error.retry_after = Some(refusal.retry_after_seconds as u64);
            return Err(error);
        }
    }
    reservations.extend(hold_key_tokens(gateway, key, estimate)?);
    let registered = super::registered_providers(gateway, &tenant.policy)?;
    // Never held (refused above), so the log keeps the request only with
    // `logBodies`, as for any unheld answer.
    let compliance = Arc::new(Compliance::new(
        &tenant.policy,
        &request.service,
        &request.logged,
        &risk,
    ));
    // `upstream` redaction: the provider embeds the texts with placeholders.
    let mut body = Value::Object(request.body.clone());
    if let Some(mut session) = compliance.upstream_pii() {
        session.redact_json(&mut body["input"]);
    }
    let walk = Walk {
        gateway,
        tenant_id: &key.tenant_id,
        model: &model,
        name: &request.model,
        registered: registered.as_deref(),
    };
    let forward = Forward {
        providers: &gateway.providers,
        inputs: &request.inputs,
        body,
    };
    let mut attempts = Vec::new();
    let (mut answer, model, retries, in_flight) = walk
        .run(&forward, &mut attempts)
        .await
        .served_or(|| exhausted(gateway, key, request_id, &request.model, &attempts))?;
    let single = Single {
        key,
        request_id,
        requested: &request.model,
        started,
        endpoint: Endpoint::Embeddings,
        risk,
        compliance,
        admission: admitted.hold,
        prompt_estimate: estimate,
    };
    let served = single.served(model, attempts, retries, in_flight);
    let extensions = Extensions::new(gateway, &served, false).with_reservations(reservations);
    let (prompt_tokens, estimated) = match answer["usage"]["prompt_tokens"].as_u64() {
        Some(reported) => (reported, false),
        None => {
            answer["usage"] = json!({ "prompt_tokens": estimate, "total_tokens": estimate });
            (estimate, estimated)
        }
    };
    let count = answer["data"].as_array().map_or(0, Vec::len);
    let output = format!("[{count} embeddings]");
    let charged = extensions
        .charge(prompt_tokens, 0, estimated, true, &output, None)
        .await?;
    // The caller's name for the model, as chat answers it.
    answer["model"] = Value::String(request.model.clone());
    extensions.apply(&mut answer, &charged);
    Ok(answer)
}

/// Why a deployment cannot take the request at all: its provider has no
/// embeddings endpoint (Anthropic), or (Gemini) the input is token arrays,
/// which Gemini cannot embed.
fn unfit(inputs: &Inputs, deployment: &Model) -> Option<(AttemptStatus, String)> {
    match deployment.provider.kind {
        ProviderKind::Openai | ProviderKind::Azure | ProviderKind::Mock => None,
        ProviderKind::Gemini | ProviderKind::Vertex => matches!(inputs, Inputs::Tokens(_)).then(|| {
            (
                AttemptStatus::TokenInput,
                format!(
                    "`{}` is served by the {} provider `{}`, which embeds text only: send `input` as a string or an array of strings",
                    deployment.id,
                    deployment.provider.kind.as_str(),
                    deployment.provider.id
                ),
            )
        }),
        ProviderKind::Anthropic | ProviderKind::Bedrock => Some((
            AttemptStatus::WrongKind,
            format!(
                "`{}` is served by the {} provider `{}`, which has no embeddings endpoint",
                deployment.id,
                deployment.provider.kind.as_str(),
                deployment.provider.id
            ),
        )),
    }
}

/// One attempt: the body with the deployment's upstream name.
struct Forward<'a> {
    providers: &'a Providers,
    inputs: &'a Inputs,
    body: Value,
}

impl Call for Forward<'_> {
    type Reply = Value;
    type Error = UpstreamError;

    fn operation(&self) -> &'static str {
        OPERATION
    }

    fn unfit(&self, deployment: &Model) -> Option<(AttemptStatus, String)> {
        unfit(self.inputs, deployment)
    }

    fn attempt(
        &self,
        deployment: Arc<Model>,
    ) -> impl Future<Output = Result<Value, UpstreamError>> + Send {
        let mut body = self.body.clone();
        body["model"] = Value::String(deployment.upstream.clone());
        async move { self.providers.embed(&deployment, body).await }
    }
}
