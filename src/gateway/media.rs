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
use std::time::Instant;

use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Value, json};

use super::audio::{self, Source};
use super::form::FormPart;
use super::gate::GateInput;
use super::walk::{Call, Walk};
use super::{Attempt, Compliance, Extensions, Served};
use crate::auth::keys::ApiKey;
use crate::base::error::{ApiError, Code};
use crate::base::money::{charge_for, credits_to_micros};
use crate::billing::{Charged, Endpoint};
use crate::catalogue::{Capability, Model, Pricing, ProviderKind};
use crate::compliance::Classification;
use crate::events::Event;
use crate::gateway::Gateway;
use crate::providers::media::{ByteStream, MediaCall, MediaReply};
use crate::providers::{Providers, UpstreamError, gemini_image};

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
pub use super::native::ServiceFields;

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

pub async fn serve(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    mut request: MediaRequest,
) -> Result<MediaAnswer, ApiError> {
    let started = Instant::now();
    let model = super::catalogued(gateway, key, &request.model)?;
    super::kind_fits(&model, false, request.route.path())?;
    able(request.route, &model)?;
    // Some deployment can take it; else the first one's refusal.
    if !(0..model.deployments.len()).any(|i| fits(&request, &model.on(i)).is_none()) {
        let first = model.on(0);
        serves(request.route, &first)?;
        gemini_size(&request.call, &first)?;
    }
    let admitted = super::admit(gateway, key, estimated_cost(&request, &model))?;
    let tenant = &admitted.tenant;
    let mut messages = Value::Null;
    let input = GateInput::text(&mut messages, &request.text, &request.service);
    let risk = super::gate(gateway, key, &tenant.policy, &input, request_id).await?;
    if super::gate::holds(&tenant.policy, &risk) && request.route == Route::Speech {
        return Err(ApiError::new(
            Code::CapabilityUnsupported,
            "the tenant policy holds this answer for human review, and speech audio cannot be held: send the text through /v1/chat/completions for review first",
        ));
    }
    super::take_multimodal_cap(gateway, &admitted).await?;
    let registered = super::registered_providers(gateway, &tenant.policy)?;
    let compliance = Arc::new(Compliance::new(
        &tenant.policy,
        &request.service,
        &request.logged,
        &risk,
    ));
    let reduce_to = ask_for_duration(&mut request.call, &model);
    let file = uploaded_file(&request.call);
    let walk = Walk {
        gateway,
        tenant_id: &key.tenant_id,
        model: &model,
        name: &request.model,
        registered: registered.as_deref(),
    };
    let mut attempts = Vec::new();
    let forward = Forward {
        providers: &gateway.providers,
        request: &request,
    };
    let (reply, model, retries, in_flight) = walk
        .run(&forward, &mut attempts)
        .await
        .served_or(|| exhausted(gateway, key, request_id, &request.model, &attempts))?;
    let served = Served {
        request_id: request_id.to_owned(),
        key_id: key.id.clone(),
        tenant_id: key.tenant_id.clone(),
        model: model.clone(),
        requested: request.model.clone(),
        chain: vec![request.model.clone()],
        attempts,
        started,
        risk: risk.clone(),
        replaced_parts: 0,
        prompt_estimate: 0,
        truncation: None,
        compliance,
        retries,
        in_flight: Some(Arc::new(in_flight)),
        endpoint: request.route.endpoint(),
        admission: admitted.hold,
    };
    let streamed = request.route == Route::Speech;
    let extensions = Extensions::new(gateway, &served, streamed);
    match reply {
        MediaReply::Json(answer) if request.route == Route::Transcription => {
            let ms = audio::reported_ms(&answer);
            let answer = reduce(answer, reduce_to.as_deref());
            transcribed(extensions, &model, &risk, answer, ms, file).await
        }
        MediaReply::Text { body, content_type } if request.route == Route::Transcription => {
            let ms = audio::last_cue_end_ms(&body).map(|ms| (ms, Source::Cues));
            let answer = MediaReply::Text { body, content_type };
            transcribed_text(extensions, &model, &risk, answer, ms, file).await
        }
        MediaReply::Json(answer) => imaged(extensions, &model, answer).await,
        MediaReply::Audio { content_type, body } => {
            spoken(extensions, &model, &risk, &request.text, content_type, body).await
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
fn fits(request: &MediaRequest, deployment: &Model) -> Option<(&'static str, String)> {
    if let Err(e) = serves(request.route, deployment) {
        return Some(("wrong_kind", e.message));
    }
    if let Err(e) = gemini_size(&request.call, deployment) {
        return Some(("unsupported_size", e.message));
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

    fn unfit(&self, deployment: &Model) -> Option<(&'static str, String)> {
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

/// Every deployment failed or was skipped (the attempts say why): the
/// chain (of one) exhausted, as for chat.
pub(super) fn exhausted(
    gateway: &Gateway,
    key: &ApiKey,
    request_id: &str,
    model: &str,
    attempts: &[Attempt],
) -> ApiError {
    let chain = vec![model.to_owned()];
    let summary: Vec<String> = attempts
        .iter()
        .map(|a| {
            format!(
                "{} on {} ({}: {})",
                a.model, a.deployment, a.status, a.message
            )
        })
        .collect();
    tracing::info!(%model, attempts = attempts.len(), "every deployment of the media model failed");
    gateway.metrics.exhausted();
    gateway.events.publish(Event::providers_exhausted(
        &key.tenant_id,
        request_id,
        &chain,
        attempts,
    ));
    ApiError::new(
        Code::AllProvidersFailed,
        format!("every model of the chain failed: {}", summary.join("; ")),
    )
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

/// A verbose answer asked for internally, as the caller asked for it.
fn reduce(answer: Value, to: Option<&str>) -> TranscriptAnswer {
    match to {
        Some("text") => TranscriptAnswer::Text(answer["text"].as_str().unwrap_or_default().into()),
        Some(_) => TranscriptAnswer::Json(json!({ "text": answer["text"] })),
        None => TranscriptAnswer::Json(answer),
    }
}

enum TranscriptAnswer {
    Json(Value),
    Text(String),
}

/// Images: billed per image returned (the upstream's reported price, else
/// the catalogue's), per token when the model is priced so and the
/// upstream reports tokens, or per request.
async fn imaged(
    extensions: Extensions,
    model: &Model,
    mut answer: Value,
) -> Result<MediaAnswer, ApiError> {
    let images = answer["data"].as_array().map_or(0, Vec::len) as u64;
    let (cost, source) = image_cost(&model.pricing, &answer, images);
    let cost = cost.ok_or_else(|| extensions.overflowed(format_args!("{images} images")))?;
    let extensions = extensions.with_units(json!({ "images": images, "priceSource": source }));
    let output = if extensions.keeps_output() {
        revised_prompts(&answer)
    } else {
        String::new()
    };
    if let Some(held) = hold(&extensions, &mut answer, cost, false, &output).await? {
        return Ok(held);
    }
    let charged = extensions.charge_priced(cost, false, &output, None).await?;
    extensions.apply(&mut answer, &charged);
    Ok(MediaAnswer::Json(answer))
}

/// The price of `images` images (`None` when too large to record), and
/// where the per-image price came from.
pub fn image_cost(pricing: &Pricing, answer: &Value, images: u64) -> (Option<u64>, &'static str) {
    let usage = &answer["usage"];
    let credits = |v: &Value| v.as_f64().and_then(|c| credits_to_micros(c).ok());
    match *pricing {
        Pricing::PerImage { per_image } => {
            if let Some(each) = credits(&usage["cost_per_image"]) {
                (charge_for(images, each, 1), "upstream")
            } else if let Some(total) = credits(&usage["cost"]) {
                (Some(total), "upstream")
            } else {
                (charge_for(images, per_image, 1), "catalogue")
            }
        }
        Pricing::PerToken { .. } => {
            let input = usage["input_tokens"].as_u64().unwrap_or(0);
            let output = usage["output_tokens"].as_u64().unwrap_or(0);
            (super::cost(pricing, input, output), "tokens")
        }
        Pricing::PerRequest { per_request } => (Some(per_request), "catalogue"),
        Pricing::PerSecond { .. } | Pricing::PerMinute { .. } | Pricing::PerCharacter { .. } => {
            (Some(0), "not_applicable")
        }
    }
}

fn revised_prompts(answer: &Value) -> String {
    answer["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["revised_prompt"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A transcript in JSON: billed by its duration.
async fn transcribed(
    extensions: Extensions,
    model: &Model,
    risk: &Classification,
    answer: TranscriptAnswer,
    reported: Option<u64>,
    file: Option<Bytes>,
) -> Result<MediaAnswer, ApiError> {
    match answer {
        TranscriptAnswer::Json(answer) => {
            let text = answer["text"].as_str().unwrap_or_default().to_owned();
            let duration = reported.map(|ms| (ms, Source::Upstream));
            let (cost, estimated, units) = transcript_cost(model, &answer, duration, file);
            let cost = cost.ok_or_else(|| extensions.overflowed("a transcript"))?;
            let extensions = extensions.with_units(units);
            let mut answer = answer;
            if let Some(held) = hold(&extensions, &mut answer, cost, estimated, &text).await? {
                return Ok(held);
            }
            let charged = extensions
                .charge_priced(cost, estimated, &text, None)
                .await?;
            extensions.apply(&mut answer, &charged);
            Ok(MediaAnswer::Json(answer))
        }
        TranscriptAnswer::Text(body) => {
            let duration = reported.map(|ms| (ms, Source::Upstream));
            let reply = MediaReply::Text {
                body,
                content_type: "text/plain; charset=utf-8".into(),
            };
            transcribed_text(extensions, model, risk, reply, duration, file).await
        }
    }
}

/// A transcript in `text`, `srt` or `vtt`: billed by its duration, the
/// extensions in headers.
async fn transcribed_text(
    extensions: Extensions,
    model: &Model,
    risk: &Classification,
    reply: MediaReply,
    duration: Option<(u64, Source)>,
    file: Option<Bytes>,
) -> Result<MediaAnswer, ApiError> {
    let MediaReply::Text { body, content_type } = reply else {
        unreachable!("called with text only");
    };
    let (cost, estimated, units) = transcript_cost(model, &Value::Null, duration, file);
    let cost = cost.ok_or_else(|| extensions.overflowed("a transcript"))?;
    let extensions = extensions.with_units(units);
    let mut held = json!({ "text": body });
    if let Some(answer) = hold(&extensions, &mut held, cost, estimated, &body).await? {
        return Ok(answer);
    }
    let charged = extensions
        .charge_priced(cost, estimated, &body, None)
        .await?;
    Ok(MediaAnswer::Text {
        body,
        content_type,
        headers: billing_headers(&charged, risk),
    })
}

/// The price of a transcript: by its duration (from the upstream, the
/// cues, the WAV header, else the file's size), by tokens, or per request.
/// Returns the cost (`None` when too large to record), whether it was
/// estimated, and the billed units.
fn transcript_cost(
    model: &Model,
    answer: &Value,
    duration: Option<(u64, Source)>,
    file: Option<Bytes>,
) -> (Option<u64>, bool, Value) {
    let pricing = model.pricing;
    if let Pricing::PerToken { .. } = pricing {
        let usage = &answer["usage"];
        let input = usage["input_tokens"].as_u64().unwrap_or(0);
        let output = usage["output_tokens"].as_u64().unwrap_or(0);
        return (
            super::cost(&pricing, input, output),
            false,
            json!({ "inputTokens": input, "outputTokens": output }),
        );
    }
    let file = file.unwrap_or_default();
    let (ms, source) = duration
        .or_else(|| audio::file_duration_ms(&file))
        .unwrap_or_else(|| (audio::estimate_ms(file.len()), Source::SizeEstimate));
    let cost = match pricing {
        Pricing::PerSecond { per_second } => proportional(ms, per_second, 1000),
        Pricing::PerMinute { per_minute } => proportional(ms, per_minute, 60_000),
        Pricing::PerRequest { per_request } => Some(per_request),
        Pricing::PerToken { .. } | Pricing::PerImage { .. } | Pricing::PerCharacter { .. } => {
            Some(0)
        }
    };
    (
        cost,
        source == Source::SizeEstimate,
        json!({ "seconds": ms as f64 / 1000.0, "durationSource": source.as_str() }),
    )
}

/// What admission reserves for a media request, from what is known before
/// the call: the images asked for (`n`, one by default) at the per-image
/// price, the speech input's characters, one minute of a transcription
/// (its length is known only from the answer), a per-request price, or a
/// token price for the prompt and the default output.
fn estimated_cost(request: &MediaRequest, model: &Model) -> u64 {
    let images = match &request.call {
        MediaCall::Generate(body) => body["n"].as_u64().unwrap_or(1).max(1),
        _ => 1,
    };
    let cost = match model.pricing {
        Pricing::PerImage { per_image } => charge_for(images, per_image, 1),
        Pricing::PerCharacter { .. } => speech_cost(&model.pricing, &request.text),
        Pricing::PerSecond { per_second } => Some(per_second.saturating_mul(60)),
        Pricing::PerMinute { per_minute } => Some(per_minute),
        Pricing::PerRequest { per_request } => Some(per_request),
        Pricing::PerToken { .. } => {
            let prompt = super::tokens::estimate_text(&request.text);
            return super::estimated_cost(model, prompt, super::expected_output(None, model));
        }
    };
    cost.unwrap_or(crate::base::money::MAX_CHARGE)
        .min(crate::base::money::MAX_CHARGE)
}

/// `ms` of a price per `per_ms` milliseconds, to the nearest micro-credit.
fn proportional(ms: u64, price: u64, per_ms: u64) -> Option<u64> {
    charge_for(ms, price, per_ms)
}

/// Speech: charged (per input character, per request, or by estimated
/// input tokens) before its first byte is relayed; the bytes then flow as
/// they come, the extensions in headers.
async fn spoken(
    extensions: Extensions,
    model: &Model,
    risk: &Classification,
    input: &str,
    content_type: Option<String>,
    body: ByteStream,
) -> Result<MediaAnswer, ApiError> {
    let characters = input.chars().count() as u64;
    let cost = speech_cost(&model.pricing, input)
        .ok_or_else(|| extensions.overflowed(format_args!("{characters} characters of speech")))?;
    let extensions = extensions.with_units(json!({ "characters": characters }));
    let charged = extensions.charge_priced(cost, false, "", None).await?;
    let headers = billing_headers(&charged, risk);
    // The extensions live as long as the stream: they hold the
    // streams-in-flight gauge up.
    let body = body.map(move |chunk| {
        let _alive = &extensions;
        chunk
    });
    Ok(MediaAnswer::Audio {
        content_type: content_type.unwrap_or_else(|| "application/octet-stream".into()),
        headers,
        body: Box::pin(body),
    })
}

pub fn speech_cost(pricing: &Pricing, input: &str) -> Option<u64> {
    match *pricing {
        Pricing::PerCharacter {
            per_million_characters,
        } => proportional(
            input.chars().count() as u64,
            per_million_characters,
            1_000_000,
        ),
        Pricing::PerRequest { per_request } => Some(per_request),
        Pricing::PerToken { .. } => super::cost(pricing, super::tokens::estimate_text(input), 0),
        Pricing::PerImage { .. } | Pricing::PerSecond { .. } | Pricing::PerMinute { .. } => Some(0),
    }
}

/// Holds a JSON answer for human review when the policy says so: charged,
/// stored with every extension but `billing`, and answered 202.
async fn hold(
    extensions: &Extensions,
    answer: &mut Value,
    cost: u64,
    estimated: bool,
    output: &str,
) -> Result<Option<MediaAnswer>, ApiError> {
    if !extensions.holds() {
        return Ok(None);
    }
    let held = extensions
        .charge_held((0, 0), Some(cost), estimated, output, answer.take())
        .await?;
    Ok(Some(MediaAnswer::Held(held)))
}

/// The extensions of an answer that is not JSON, as response headers.
fn billing_headers(charged: &Charged, risk: &Classification) -> Vec<(&'static str, String)> {
    let credits = |micros: i64| crate::base::money::micros_to_credits(micros).to_string();
    let mut headers = vec![
        (
            "x-tollgate-cost",
            crate::base::money::micros_to_credits(charged.cost).to_string(),
        ),
        ("x-tollgate-balance-after", credits(charged.balance_after)),
        ("x-tollgate-risk-level", risk.level.as_str().to_owned()),
    ];
    if let Some(remaining) = charged.key_remaining {
        headers.push(("x-tollgate-key-remaining", credits(remaining)));
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_priced_from_the_upstream_report_else_the_catalogue() {
        let per_image = Pricing::PerImage { per_image: 40_000 };
        let plain = json!({ "data": [{}, {}] });
        assert_eq!(
            image_cost(&per_image, &plain, 2),
            (Some(80_000), "catalogue")
        );
        let reported = json!({ "data": [{}, {}], "usage": { "cost_per_image": 0.05 } });
        assert_eq!(
            image_cost(&per_image, &reported, 2),
            (Some(100_000), "upstream")
        );
        let total = json!({ "data": [{}], "usage": { "cost": 0.07 } });
        assert_eq!(
            image_cost(&per_image, &total, 1),
            (Some(70_000), "upstream")
        );
    }

    #[test]
    fn an_overflowing_media_price_is_refused_not_saturated() {
        let dear = Pricing::PerImage {
            per_image: crate::base::money::MAX_CHARGE,
        };
        assert_eq!(image_cost(&dear, &json!({}), 2), (None, "catalogue"));
        // An upstream's report is checked the same way.
        let reported = json!({ "usage": { "cost_per_image": 9.0e12 } });
        let cheap = Pricing::PerImage { per_image: 1 };
        assert_eq!(image_cost(&cheap, &reported, 2).0, None);
        assert_eq!(proportional(u64::MAX, u64::MAX, 1000), None);
        let per_char = Pricing::PerCharacter {
            per_million_characters: crate::base::money::MAX_CHARGE,
        };
        assert_eq!(speech_cost(&per_char, &"x".repeat(2_000_000)), None);
    }

    #[test]
    fn audio_is_priced_proportionally_to_the_micro_credit() {
        assert_eq!(proportional(2500, 100, 1000), Some(250));
        assert_eq!(proportional(30_000, 6000, 60_000), Some(3000));
        assert_eq!(proportional(1, 1, 1000), Some(0));
        let per_char = Pricing::PerCharacter {
            per_million_characters: 15_000_000,
        };
        assert_eq!(speech_cost(&per_char, "héllo"), Some(75));
        assert_eq!(
            speech_cost(&Pricing::PerRequest { per_request: 9 }, "x"),
            Some(9)
        );
    }
}
