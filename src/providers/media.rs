//! Image and audio endpoints of upstream providers: image generation and
//! edits, transcription and speech.
//!
//! Only OpenAI-compatible servers (Azure deployments included, at their
//! own URL) have these endpoints natively
//! (`{base_url}/images/generations`, `/images/edits`,
//! `/audio/transcriptions`, `/audio/speech`); the built-in mock answers
//! them offline. Image generation on a Gemini image model is translated to
//! generate-content ([`super::gemini_image`]). Uploads go out as multipart built from the caller's parts,
//! whose data are slices of the one request buffer (nothing is copied);
//! speech comes back as a byte stream relayed as it arrives.

use std::pin::Pin;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use serde_json::{Value, json};

use super::{Failure, Providers, UpstreamError, http};
use crate::catalogue::{Model, ProviderKind};
use crate::providers::audio;
use crate::providers::form::FormPart;

/// Audio bytes as they arrive from the upstream.
pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, UpstreamError>> + Send>>;

/// One media request, prepared for the routed model (its `model` is the
/// upstream's name). A clone is cheap (file parts share the request
/// buffer), so each attempt of a walk sends its own.
#[derive(Clone)]
pub enum MediaCall {
    /// `POST /images/generations`, JSON.
    Generate(Value),
    /// `POST /images/edits`, multipart.
    Edit(Vec<FormPart>),
    /// `POST /audio/transcriptions`, multipart.
    Transcribe(Vec<FormPart>),
    /// `POST /audio/speech`, JSON; answered with audio bytes.
    Speak(Value),
}

impl MediaCall {
    fn path(&self) -> &'static str {
        match self {
            MediaCall::Generate(_) => "images/generations",
            MediaCall::Edit(_) => "images/edits",
            MediaCall::Transcribe(_) => "audio/transcriptions",
            MediaCall::Speak(_) => "audio/speech",
        }
    }
}

pub enum MediaReply {
    Json(Value),
    /// A transcript in `text`, `srt` or `vtt`.
    Text {
        body: String,
        content_type: String,
    },
    Audio {
        content_type: Option<String>,
        body: ByteStream,
    },
}

impl Providers {
    /// One attempt at `model`'s media endpoint.
    pub async fn media(&self, model: &Model, call: MediaCall) -> Result<MediaReply, UpstreamError> {
        match model.provider.kind {
            ProviderKind::Openai | ProviderKind::Azure => openai(&self.http, model, call).await,
            ProviderKind::Mock => mock(&model.upstream, call).await,
            ProviderKind::Gemini => match call {
                MediaCall::Generate(body) => {
                    super::gemini_image::generate(&self.http, model, &body)
                        .await
                        .map(MediaReply::Json)
                }
                // The pipeline refuses the other routes before any call.
                other => Err(unsupported(model, &other)),
            },
            // The pipeline refuses these kinds before any call.
            ProviderKind::Anthropic | ProviderKind::Bedrock | ProviderKind::Vertex => {
                Err(unsupported(model, &call))
            }
        }
    }
}

fn unsupported(model: &Model, call: &MediaCall) -> UpstreamError {
    UpstreamError::new(
        Failure::Unsupported,
        format!(
            "a {} provider has no /{} endpoint",
            model.provider.kind.as_str(),
            call.path()
        ),
    )
}

async fn openai(
    client: &reqwest::Client,
    model: &Model,
    call: MediaCall,
) -> Result<MediaReply, UpstreamError> {
    let provider = &model.provider;
    let segments: Vec<&str> = call.path().split('/').collect();
    let (request, base) = super::openai::post(client, model, &segments)?;
    let (request, speech) = match call {
        MediaCall::Generate(body) => (request.json(&body), false),
        MediaCall::Speak(body) => (request.json(&body), true),
        MediaCall::Edit(parts) | MediaCall::Transcribe(parts) => {
            (request.multipart(form(parts)), false)
        }
    };
    let sent = http::send(request, provider, base).await?;
    let content_type = sent
        .response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if speech {
        let body = sent.response.bytes_stream().map(|chunk| {
            chunk.map_err(|e| {
                UpstreamError::new(
                    Failure::Cut,
                    format!("the audio broke off: {}", http::without_url(&e)),
                )
            })
        });
        return Ok(MediaReply::Audio {
            content_type,
            body: Box::pin(body),
        });
    }
    let json = content_type.as_deref().is_none_or(|t| t.contains("json"));
    if !json {
        let body = http::read_text(sent).await?;
        return Ok(MediaReply::Text {
            body,
            content_type: content_type.unwrap_or_else(|| "text/plain".into()),
        });
    }
    let answer = http::read_json(sent).await?;
    if !answer.is_object() {
        return Err(UpstreamError::new(
            Failure::Garbage,
            "the answer is not a JSON object",
        ));
    }
    Ok(MediaReply::Json(answer))
}

/// The outgoing form: each part's data is the caller's slice, moved into
/// the request body, never copied.
fn form(parts: Vec<FormPart>) -> reqwest::multipart::Form {
    let mut form = reqwest::multipart::Form::new();
    for FormPart {
        name,
        filename,
        content_type,
        data,
    } in parts
    {
        let length = data.len() as u64;
        let mut part = reqwest::multipart::Part::stream_with_length(data, length);
        if let Some(filename) = filename {
            part = part.file_name(filename);
        }
        // The caller's type as it was sent (already a valid header value
        // when it arrived); `mime_str` would refuse types it cannot parse.
        if let Some(value) =
            content_type.and_then(|t| reqwest::header::HeaderValue::from_str(&t).ok())
        {
            let mut headers = reqwest::header::HeaderMap::new();
            headers.insert(reqwest::header::CONTENT_TYPE, value);
            part = part.headers(headers);
        }
        form = form.part(name, part);
    }
    form
}

/// The mock's answers: a 1x1 PNG, a transcript that says how much audio it
/// got (with the duration from a WAV header, else estimated), and silence.
async fn mock(upstream: &str, call: MediaCall) -> Result<MediaReply, UpstreamError> {
    if let Some(status) = upstream.strip_prefix("error:") {
        let status = status.parse().unwrap_or(500);
        return Err(UpstreamError::new(
            Failure::Status(status),
            format!("mock error {status}"),
        ));
    }
    let created = crate::base::time::now_ms() / 1000;
    match call {
        MediaCall::Generate(body) => {
            let n = body["n"].as_u64().unwrap_or(1);
            let prompt = body["prompt"].as_str().unwrap_or_default();
            let b64 = body["response_format"] == "b64_json";
            Ok(MediaReply::Json(images(created, n, prompt, b64)))
        }
        MediaCall::Edit(parts) => {
            let text = |name: &str| {
                parts
                    .iter()
                    .find(|p| p.name == name)
                    .and_then(FormPart::text)
            };
            let n = text("n").and_then(|n| n.parse().ok()).unwrap_or(1);
            let prompt = format!("edited: {}", text("prompt").unwrap_or_default());
            let b64 = text("response_format") == Some("b64_json");
            Ok(MediaReply::Json(images(created, n, &prompt, b64)))
        }
        MediaCall::Transcribe(parts) => Ok(transcript(&parts)),
        MediaCall::Speak(body) => {
            let characters = body["input"].as_str().unwrap_or_default().chars().count() as u64;
            let wav = Bytes::from(audio::silent_wav((characters * 60).min(10_000)));
            let chunks: Vec<Result<Bytes, UpstreamError>> = (0..wav.len())
                .step_by(4096)
                .map(|at| Ok(wav.slice(at..(at + 4096).min(wav.len()))))
                .collect();
            Ok(MediaReply::Audio {
                content_type: Some("audio/wav".into()),
                body: Box::pin(futures::stream::iter(chunks)),
            })
        }
    }
}

/// The PNG of one transparent pixel.
const PIXEL_PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn images(created: i64, n: u64, prompt: &str, b64: bool) -> Value {
    let data: Vec<Value> = (0..n)
        .map(|i| {
            if b64 {
                json!({ "b64_json": PIXEL_PNG_B64, "revised_prompt": prompt })
            } else {
                json!({ "url": format!("https://mock.invalid/images/{created}-{i}.png"), "revised_prompt": prompt })
            }
        })
        .collect();
    json!({ "created": created, "data": data })
}

fn transcript(parts: &[FormPart]) -> MediaReply {
    let file = parts.iter().find(|p| p.name == "file");
    let len = file.map_or(0, |f| f.data.len());
    let ms = file
        .and_then(|f| audio::file_duration_ms(&f.data))
        .map(|(ms, _)| ms)
        .unwrap_or_else(|| audio::estimate_ms(len));
    let text = format!("mock transcript of {len} bytes of audio");
    let format = parts
        .iter()
        .find(|p| p.name == "response_format")
        .and_then(FormPart::text)
        .unwrap_or("json");
    let clock = |ms: u64, sep: char| {
        format!(
            "{:02}:{:02}:{:02}{sep}{:03}",
            ms / 3_600_000,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000
        )
    };
    let seconds = ms as f64 / 1000.0;
    match format {
        "text" => MediaReply::Text {
            body: text,
            content_type: "text/plain; charset=utf-8".into(),
        },
        "srt" => MediaReply::Text {
            body: format!("1\n{} --> {}\n{text}\n", clock(0, ','), clock(ms, ',')),
            content_type: "text/plain; charset=utf-8".into(),
        },
        "vtt" => MediaReply::Text {
            body: format!(
                "WEBVTT\n\n{} --> {}\n{text}\n",
                clock(0, '.'),
                clock(ms, '.')
            ),
            content_type: "text/vtt; charset=utf-8".into(),
        },
        "verbose_json" => MediaReply::Json(json!({
            "task": "transcribe", "language": "english", "duration": seconds, "text": text,
            "segments": [{ "id": 0, "start": 0.0, "end": seconds, "text": text }],
        })),
        _ => MediaReply::Json(json!({
            "text": text,
            "usage": { "type": "duration", "seconds": seconds.ceil() },
        })),
    }
}
