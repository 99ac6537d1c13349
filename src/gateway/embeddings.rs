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

use serde_json::{Map, Value, json};

use super::media::ServiceFields;
use super::single::OneModel;
use super::walk::{Call, hold_key_tokens, hold_model};
use super::{AttemptStatus, Compliance, Extensions, tokens};
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
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

/// The embeddings route through the stages: the model named and able to
/// take the input, admission, the gate, the model's and the key's token
/// limits, the walk, the charge per input token and the answer.
pub async fn serve(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    request: EmbeddingRequest,
) -> Result<Value, ApiError> {
    let one = OneModel::named(
        gateway,
        key,
        request_id,
        &request.model,
        Endpoint::Embeddings,
        PATH,
    )?;
    some_deployment_fits(&request.inputs, &one.model)?;
    let (estimate, estimated) = request.inputs.tokens();
    let admitted = super::admit(gateway, key, super::estimated_cost(&one.model, estimate, 0))?;
    let policy = &admitted.tenant.policy;
    let risk = one
        .gate_text(policy, &request.inputs.text(), &request.service)
        .await?;
    if super::gate::holds(policy, &risk) {
        return Err(ApiError::new(
            Code::CapabilityUnsupported,
            "the tenant policy holds this answer for human review, and an embedding cannot be held: a vector is nothing a reviewer can judge",
        ));
    }
    let reservations = reserve_tokens(gateway, key, &one.model, estimate)?;
    // Never held (refused above), so the log keeps the request only with
    // `logBodies`, as for any unheld answer.
    let passed = one.passed(policy, &request.service, &request.logged, risk)?;
    let forward = Forward {
        providers: &gateway.providers,
        inputs: &request.inputs,
        body: upstream_body(&request, &passed.compliance),
    };
    let (answer, served) = one.walk(passed, admitted.hold, estimate, &forward).await?;
    let extensions = Extensions::new(gateway, &served, false).with_reservations(reservations);
    charged(&extensions, answer, (estimate, estimated), &request.model).await
}

/// Some deployment of `model` can take `inputs`; else the refusal of
/// them all (400 on `input` for token arrays, on `model` otherwise).
fn some_deployment_fits(inputs: &Inputs, model: &Model) -> Result<(), ApiError> {
    let Some((status, message)) = (0..model.deployments.len())
        .map(|i| unfit(inputs, &model.on(i)))
        .reduce(|a, b| a.and(b))
        .flatten()
    else {
        return Ok(());
    };
    let param = if status == AttemptStatus::TokenInput {
        "input"
    } else {
        "model"
    };
    Err(ApiError::invalid(param, message))
}

/// The request's tokens reserved against the model's own limits, then the
/// key's `tpmLimit`; the charge settles them.
fn reserve_tokens(
    gateway: &Gateway,
    key: &ApiKey,
    model: &Model,
    estimate: u64,
) -> Result<Vec<limits::Reservation>, ApiError> {
    let mut reservations: Vec<limits::Reservation> = Vec::new();
    reservations.extend(hold_model(gateway, model, estimate)?);
    reservations.extend(hold_key_tokens(gateway, key, estimate)?);
    Ok(reservations)
}

/// The body forwarded: with placeholders for personal data in `upstream`
/// redaction (the provider embeds the texts with them).
fn upstream_body(request: &EmbeddingRequest, compliance: &Compliance) -> Value {
    let mut body = Value::Object(request.body.clone());
    if let Some(mut session) = compliance.upstream_pii() {
        session.redact_json(&mut body["input"]);
    }
    body
}

/// The charge per input token (the upstream's count, else the local
/// `estimate`, then marked estimated), and the answer with its
/// extensions, under the caller's name for the model.
async fn charged(
    extensions: &Extensions,
    mut answer: Value,
    (estimate, estimated): (u64, bool),
    requested: &str,
) -> Result<Value, ApiError> {
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
    answer["model"] = Value::String(requested.to_owned());
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
