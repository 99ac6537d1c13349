//! The media pipeline: image generation and edits, transcription and
//! speech, through the same stages as chat (DESIGN section 2): the model
//! must be in the catalogue and able to do the route, then the wallet
//! (the key's cap was checked when it was authenticated), the risk gate
//! over the text the request carries, the free tier's multimodal cap, the
//! walk over its deployments (the sub-processor registry checked for
//! each), the price, the durable charge with its audit entry, usage
//! record, events and metrics, and the answer with its extensions.
//!
//! There is no fallback chain here: a media request names one model. Its
//! deployments whose provider has the route's endpoint are walked as chat
//! walks them ([`super::walk::Walk`]: the router's order, retries,
//! cooldown, the time budget).
//!
//! Prices are per unit of the route (see `docs/media.md`): images returned,
//! seconds or minutes of audio, characters of speech input, or requests.
//! Speech is charged before its first byte is relayed (its price depends
//! only on the input, so it is known then), which makes the charge durable
//! whatever happens to the stream afterwards.

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Value, json};

use super::audio::{self, Source};
use super::form::FormPart;
use super::single::OneModel;
use super::walk::Call;
use super::{Extensions, Served};
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::base::money::{charge_for, credits_to_micros};
use crate::billing::Charged;
use crate::catalogue::Endpoint;
use crate::catalogue::{Capability, Model, Pricing, ProviderKind};
use crate::compliance::Classification;
use crate::gateway::Gateway;
use crate::providers::media::{ByteStream, MediaCall, MediaReply};
use crate::providers::{Providers, UpstreamError, gemini_image};
use crate::routing::AttemptStatus;

/// The four media routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Generation,
    Edit,
    Transcription,
    Speech,
}

impl Route {
    /// The usage dimension of the route.
    pub fn endpoint(self) -> Endpoint {
        match self {
            Route::Generation | Route::Edit => Endpoint::Images,
            Route::Transcription | Route::Speech => Endpoint::Audio,
        }
    }

    pub fn path(self) -> &'static str {
        match self {
            Route::Generation => "/v1/images/generations",
            Route::Edit => "/v1/images/edits",
            Route::Transcription => "/v1/audio/transcriptions",
            Route::Speech => "/v1/audio/speech",
        }
    }

    /// The `gen_ai.operation.name` of its spans: Tollgate's own values,
    /// the GenAI conventions name none for images or audio yet.
    pub fn operation(self) -> &'static str {
        match self {
            Route::Generation => "image_generation",
            Route::Edit => "image_edit",
            Route::Transcription => "transcription",
            Route::Speech => "speech",
        }
    }

    /// What the model must be able to do, and which side of it.
    fn requires(self) -> (Capability, bool) {
        match self {
            Route::Generation | Route::Edit => (Capability::Image, true),
            Route::Transcription => (Capability::Audio, false),
            Route::Speech => (Capability::Audio, true),
        }
    }
}

/// The service fields of a media request, taken out before forwarding
/// (spec, "Chat completion request"): the same as a native request's.
mod answer;

pub use super::native::ServiceFields;
use answer::{estimated_cost, imaged, reduce, spoken, transcribed, transcribed_text};
pub use answer::{image_cost, speech_cost};

/// A parsed media request.
pub struct MediaRequest {
    pub route: Route,
    /// The catalogue id the caller named.
    pub model: String,
    /// The text classified and gated: the prompt, the speech input, the
    /// transcription prompt.
    pub text: String,
    pub service: ServiceFields,
    /// The request as the conversation log keeps it (files are named,
    /// not copied).
    pub logged: String,
    pub call: MediaCall,
}

/// What the caller gets.
pub enum MediaAnswer {
    Json(Value),
    /// Held for human review: 202 with the review item (DESIGN 7.3).
    Held(Value),
    /// A transcript in `text`, `srt` or `vtt`; the extensions are headers.
    Text {
        body: String,
        content_type: String,
        headers: Vec<(&'static str, String)>,
    },
    /// Speech, relayed as it arrives; the extensions are headers.
    Audio {
        content_type: String,
        headers: Vec<(&'static str, String)>,
        body: ByteStream,
    },
}

/// A media route through the stages: the model named and able to do the
/// route, admission, the gate, the free tier's multimodal cap, the walk,
/// then the answer of its kind (priced, charged, with its extensions).
pub async fn serve(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    mut request: MediaRequest,
) -> Result<MediaAnswer, ApiError> {
    let route = request.route;
    let one = OneModel::named(
        gateway,
        key,
        request_id,
        &request.model,
        route.endpoint(),
        route.path(),
    )?;
    able(route, &one.model)?;
    some_deployment_fits(&request, &one.model)?;
    let admitted = super::admit(gateway, key, estimated_cost(&request, &one.model))?;
    let policy = &admitted.tenant.policy;
    let risk = one
        .gate_text(policy, &request.text, &request.service)
        .await?;
    if super::gate::holds(policy, &risk) && route == Route::Speech {
        return Err(ApiError::new(
            Code::CapabilityUnsupported,
            "the tenant policy holds this answer for human review, and speech audio cannot be held: send the text through /v1/chat/completions for review first",
        ));
    }
    super::take_multimodal_cap(gateway, &admitted).await?;
    let passed = one.passed(policy, &request.service, &request.logged, risk)?;
    let reduce_to = ask_for_duration(&mut request.call, &one.model);
    let file = uploaded_file(&request.call);
    let forward = Forward {
        providers: &gateway.providers,
        request: &request,
    };
    let (reply, served) = one.walk(passed, admitted.hold, 0, &forward).await?;
    let extensions = Extensions::new(gateway, &served, route == Route::Speech);
    let reduce_to = reduce_to.as_deref();
    answered(extensions, &served, &request, reply, reduce_to, file).await
}

/// Some deployment of `model` can take the request; else the first one's
/// refusal.
fn some_deployment_fits(request: &MediaRequest, model: &Model) -> Result<(), ApiError> {
    if !(0..model.deployments.len()).any(|i| fits(request, &model.on(i)).is_none()) {
        let first = model.on(0);
        serves(request.route, &first)?;
        gemini_size(&request.call, &first)?;
    }
    Ok(())
}

/// The answer of the reply's kind, priced and charged: a transcript (JSON,
/// or text with cues), images, or speech relayed; text where JSON was due
/// is the provider's failure.
async fn answered(
    extensions: Extensions,
    served: &Served,
    request: &MediaRequest,
    reply: MediaReply,
    reduce_to: Option<&str>,
    file: Option<Bytes>,
) -> Result<MediaAnswer, ApiError> {
    let (model, risk) = (&served.model, &served.risk);
    match reply {
        MediaReply::Json(answer) if request.route == Route::Transcription => {
            let ms = audio::reported_ms(&answer);
            let answer = reduce(answer, reduce_to);
            transcribed(extensions, model, risk, answer, ms, file).await
        }
        MediaReply::Text { body, content_type } if request.route == Route::Transcription => {
            let ms = audio::last_cue_end_ms(&body).map(|ms| (ms, Source::Cues));
            let answer = MediaReply::Text { body, content_type };
            transcribed_text(extensions, model, risk, answer, ms, file).await
        }
        MediaReply::Json(answer) => imaged(extensions, model, answer).await,
        MediaReply::Audio { content_type, body } => {
            spoken(extensions, model, risk, &request.text, content_type, body).await
        }
        MediaReply::Text { .. } => Err(ApiError::new(
            Code::AllProvidersFailed,
            format!(
                "the provider `{}` answered {} with text, not JSON",
                model.provider.id,
                request.route.path()
            ),
        )),
    }
}

/// The model can do the route (422 `capability_unsupported`).
fn able(route: Route, model: &Model) -> Result<(), ApiError> {
    let (capability, output) = route.requires();
    let has = if output {
        model.produces(capability)
    } else {
        model.accepts(capability)
    };
    if !has {
        let side = if output { "output" } else { "input" };
        let mut error = ApiError::new(
            Code::CapabilityUnsupported,
            format!(
                "`{}` cannot serve {}: its {side}Capabilities lack {}",
                model.id,
                route.path(),
                serde_json::to_value(capability)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            ),
        );
        error.param = Some("model".into());
        return Err(error);
    }
    Ok(())
}

/// The deployment's provider has the route's endpoint (400 naming the
/// model otherwise).
fn serves(route: Route, model: &Model) -> Result<(), ApiError> {
    match (model.provider.kind, route) {
        (ProviderKind::Openai | ProviderKind::Azure | ProviderKind::Mock, _) => Ok(()),
        // Translated to generate-content (`providers::gemini_image`).
        (ProviderKind::Gemini, Route::Generation) => Ok(()),
        (
            ProviderKind::Anthropic
            | ProviderKind::Gemini
            | ProviderKind::Bedrock
            | ProviderKind::Vertex,
            _,
        ) => Err(ApiError::invalid(
            "model",
            format!(
                "`{}` is served by the {} provider `{}`, which has no native {} endpoint; use a model of an OpenAI-compatible provider",
                model.id,
                model.provider.kind.as_str(),
                model.provider.id,
                route.path()
            ),
        )),
    }
}

/// A Gemini image model takes an aspect ratio, not a size: the size must
/// have one it takes (400 naming the size and the ratios otherwise).
fn gemini_size(call: &MediaCall, model: &Model) -> Result<(), ApiError> {
    let MediaCall::Generate(body) = call else {
        return Ok(());
    };
    if model.provider.kind != ProviderKind::Gemini {
        return Ok(());
    }
    let Some(size) = body["size"].as_str().filter(|s| *s != "auto") else {
        return Ok(());
    };
    if gemini_image::aspect_ratio(size).is_some() {
        return Ok(());
    }
    Err(ApiError::invalid(
        "size",
        format!(
            "`{}` is a Gemini image model, which takes an aspect ratio: the size `{size}` has none it supports ({}); use `auto` or a size of one of them, such as 1024x1024",
            model.id,
            gemini_image::ASPECT_RATIOS.join(", ")
        ),
    ))
}

/// Why a deployment cannot take `request` at all, if it cannot: its
/// provider has no such endpoint, or (Gemini) no aspect ratio for the size.
fn fits(request: &MediaRequest, deployment: &Model) -> Option<(AttemptStatus, String)> {
    if let Err(e) = serves(request.route, deployment) {
        return Some((AttemptStatus::WrongKind, e.message));
    }
    if let Err(e) = gemini_size(&request.call, deployment) {
        return Some((AttemptStatus::UnsupportedSize, e.message));
    }
    None
}

/// One attempt of a media request: the call, renamed for one deployment.
struct Forward<'a> {
    providers: &'a Providers,
    request: &'a MediaRequest,
}

impl Call for Forward<'_> {
    type Reply = MediaReply;
    type Error = UpstreamError;

    fn operation(&self) -> &'static str {
        self.request.route.operation()
    }

    fn unfit(&self, deployment: &Model) -> Option<(AttemptStatus, String)> {
        fits(self.request, deployment)
    }

    fn attempt(
        &self,
        deployment: Arc<Model>,
    ) -> impl Future<Output = Result<MediaReply, UpstreamError>> + Send {
        // Each attempt sends its own copy: JSON cloned, file parts sharing
        // the request buffer.
        let call = for_upstream(self.request.call.clone(), &deployment);
        async move { self.providers.media(&deployment, call).await }
    }
}

/// When a transcription is billed by duration, the caller asked for plain
/// `json` or `text`, and the file's own header does not say its length,
/// the upstream is asked for `verbose_json` (which reports `duration`);
/// the answer is reduced to what the caller asked for. Returns that.
fn ask_for_duration(call: &mut MediaCall, model: &Model) -> Option<String> {
    let MediaCall::Transcribe(parts) = call else {
        return None;
    };
    if !matches!(
        model.pricing,
        Pricing::PerSecond { .. } | Pricing::PerMinute { .. }
    ) {
        return None;
    }
    if parts
        .iter()
        .any(|p| p.name == "file" && audio::wav_duration_ms(&p.data).is_some())
    {
        return None;
    }
    let asked = parts
        .iter()
        .find(|p| p.name == "response_format")
        .and_then(FormPart::text)
        .unwrap_or("json")
        .to_owned();
    if asked != "json" && asked != "text" {
        return None;
    }
    parts.retain(|p| p.name != "response_format");
    parts.push(FormPart::field("response_format", "verbose_json"));
    Some(asked)
}

/// The uploaded audio (a cheap handle on the request buffer), for its
/// WAV header or its size.
fn uploaded_file(call: &MediaCall) -> Option<Bytes> {
    match call {
        MediaCall::Transcribe(parts) => parts
            .iter()
            .find(|p| p.name == "file")
            .map(|p| p.data.clone()),
        _ => None,
    }
}

/// The call with the upstream's model name.
fn for_upstream(call: MediaCall, model: &Model) -> MediaCall {
    let name = Value::String(model.upstream.clone());
    match call {
        MediaCall::Generate(mut body) => {
            body["model"] = name;
            MediaCall::Generate(body)
        }
        MediaCall::Speak(mut body) => {
            body["model"] = name;
            MediaCall::Speak(body)
        }
        MediaCall::Edit(parts) => MediaCall::Edit(renamed(parts, &model.upstream)),
        MediaCall::Transcribe(parts) => MediaCall::Transcribe(renamed(parts, &model.upstream)),
    }
}

fn renamed(parts: Vec<FormPart>, upstream: &str) -> Vec<FormPart> {
    parts
        .into_iter()
        .map(|p| {
            if p.name == "model" {
                FormPart::field("model", upstream)
            } else {
                p
            }
        })
        .collect()
}
