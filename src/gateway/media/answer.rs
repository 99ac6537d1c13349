//! The media answers, one kind each: images billed per image (or per
//! token, or per request), transcriptions per second or minute of audio,
//! speech per character; each charged, then shaped for the caller, or held
//! for review.

use super::*;

/// A verbose answer asked for internally, as the caller asked for it.
pub(super) fn reduce(answer: Value, to: Option<&str>) -> TranscriptAnswer {
    match to {
        Some("text") => TranscriptAnswer::Text(answer["text"].as_str().unwrap_or_default().into()),
        Some(_) => TranscriptAnswer::Json(json!({ "text": answer["text"] })),
        None => TranscriptAnswer::Json(answer),
    }
}

pub(super) enum TranscriptAnswer {
    Json(Value),
    Text(String),
}

/// Images: billed per image returned (the upstream's reported price, else
/// the catalogue's), per token when the model is priced so and the
/// upstream reports tokens, or per request.
pub(super) async fn imaged(
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
            (crate::gateway::cost(pricing, input, output), "tokens")
        }
        Pricing::PerRequest { per_request } => (Some(per_request), "catalogue"),
        Pricing::PerSecond { .. } | Pricing::PerMinute { .. } | Pricing::PerCharacter { .. } => {
            (Some(0), "not_applicable")
        }
    }
}

pub(super) fn revised_prompts(answer: &Value) -> String {
    answer["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["revised_prompt"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A transcript in JSON: billed by its duration.
pub(super) async fn transcribed(
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
pub(super) async fn transcribed_text(
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
pub(super) fn transcript_cost(
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
            crate::gateway::cost(&pricing, input, output),
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
pub(super) fn estimated_cost(request: &MediaRequest, model: &Model) -> u64 {
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
            let prompt = crate::providers::tokens::estimate_text(&request.text);
            return crate::gateway::estimated_cost(
                model,
                prompt,
                crate::gateway::expected_output(None, model),
            );
        }
    };
    cost.unwrap_or(crate::base::money::MAX_CHARGE)
        .min(crate::base::money::MAX_CHARGE)
}

/// `ms` of a price per `per_ms` milliseconds, to the nearest micro-credit.
pub(super) fn proportional(ms: u64, price: u64, per_ms: u64) -> Option<u64> {
    charge_for(ms, price, per_ms)
}

/// Speech: charged (per input character, per request, or by estimated
/// input tokens) before its first byte is relayed; the bytes then flow as
/// they come, the extensions in headers.
pub(super) async fn spoken(
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
        Pricing::PerToken { .. } => {
            crate::gateway::cost(pricing, crate::providers::tokens::estimate_text(input), 0)
        }
        Pricing::PerImage { .. } | Pricing::PerSecond { .. } | Pricing::PerMinute { .. } => Some(0),
    }
}

/// Holds a JSON answer for human review when the policy says so: charged,
/// stored with every extension but `billing`, and answered 202.
pub(super) async fn hold(
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
pub(super) fn billing_headers(
    charged: &Charged,
    risk: &Classification,
) -> Vec<(&'static str, String)> {
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
