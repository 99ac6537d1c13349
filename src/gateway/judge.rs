//! The optional LLM judge (TAXONOMY 3.1, step 4).
//!
//! Per tenant policy, the grey zones of the rules go to a catalogue model,
//! called through the same provider layer as any request, with a fixed
//! prompt that asks for `{level, area, confidence, reason}` as JSON. The
//! judge may raise any result. It may lower a result only when every hit at
//! that level came from the conversation (never from the declared purpose),
//! at a confidence of 0.8 or more and with a reason from a closed list; the
//! declared purpose stays a floor. A failure or a timeout keeps the rule
//! result and says so.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::compliance::judgement::{Judgement, LOWER_CONFIDENCE, LOWERING_REASONS, grey_zone};
use crate::compliance::{Classification, Grey, Level, Source};
use crate::gateway::gate::GateInput;
use crate::providers::Reply;
use crate::tenants::CompliancePolicy;

const PROMPT: &str = "You classify one request to an AI system under the EU AI Act \
(Regulation (EU) 2024/1689). Levels: \"prohibited\" (the request performs, or builds a system \
for, an Article 5 practice), \"high\" (an Annex III use on natural persons, or diagnosis or \
treatment of specific patients as a medical device), \"limited\" (an Article 50 transparency \
case: a public-facing chatbot, a deep fake, public-interest text for publication), \"minimal\" \
(anything else, including discussion, education, fiction, self-use and near-misses). Label the \
use, not the topic. Answer with one JSON object and nothing else: {\"level\": \
\"prohibited|high|limited|minimal\", \"area\": \"<TAXONOMY rule id or none>\", \"confidence\": \
<number from 0 to 1>, \"reason\": \"<one of meta, fiction, self_use, legal_person, \
exception_clause, use_on_people, other>: <one short sentence>\"}.";

/// The rules' result, reviewed by the judge when the policy asks for it and
/// the result is a grey zone.
pub async fn decide(
    parts: JudgeParts<'_>,
    policy: &CompliancePolicy,
    request: &GateInput<'_>,
    mut risk: Classification,
) -> Classification {
    let Some(model_name) = policy
        .judge_model
        .as_deref()
        .filter(|_| policy.judge_enabled)
    else {
        return risk;
    };
    if !grey_zone(&risk) {
        return risk;
    }
    let mut judgement = Judgement {
        used: false,
        model: model_name.to_owned(),
        level: None,
        area: None,
        confidence: None,
        reason: None,
        error: None,
        effect: "kept",
    };
    match ask(&parts, model_name, request, &risk).await {
        Err(error) => {
            tracing::warn!(judge = %model_name, %error, "the judge gave no usable answer; the rule result stands");
            judgement.error = Some(error);
        }
        Ok(verdict) => {
            judgement.used = true;
            judgement.level = Some(verdict.level);
            judgement.area = verdict.area;
            judgement.confidence = Some(verdict.confidence);
            judgement.reason = Some(verdict.reason.clone());
            let floor = risk
                .hits
                .iter()
                .filter(|h| h.source == Source::Purpose)
                .map(|h| h.level)
                .max()
                .unwrap_or(Level::Minimal);
            let lowering_reason = LOWERING_REASONS
                .iter()
                .any(|r| verdict.reason.trim_start().starts_with(r));
            if verdict.level > risk.level {
                risk.level = verdict.level;
                judgement.effect = "raised";
            } else if verdict.level < risk.level
                && verdict.confidence >= LOWER_CONFIDENCE
                && lowering_reason
                && floor < risk.level
            {
                risk.level = verdict.level.max(floor);
                judgement.effect = "lowered";
            }
        }
    }
    risk.judge = Some(judgement);
    risk
}

/// What the judge uses: the catalogue to find its model, the providers to
/// ask it, the metrics to count the call, and how long it may take.
pub struct JudgeParts<'a> {
    pub catalogue: &'a crate::catalogue::overlay::LiveCatalogue,
    pub providers: &'a crate::providers::Providers,
    pub metrics: &'a crate::metrics::Metrics,
    pub timeout: Duration,
}

struct Verdict {
    level: Level,
    area: Option<String>,
    confidence: f64,
    reason: String,
}

async fn ask(
    parts: &JudgeParts<'_>,
    model_name: &str,
    request: &GateInput<'_>,
    risk: &Classification,
) -> Result<Verdict, String> {
    let model = parts
        .catalogue
        .get(model_name)
        .ok_or_else(|| format!("`{model_name}` is not in the catalogue"))?;
    let conversation: Vec<Value> = request
        .messages
        .as_array()
        .map(|m| {
            let asked: Vec<&Value> = m.iter().filter(|m| m["role"] != "assistant").collect();
            asked[asked.len().saturating_sub(6)..]
                .iter()
                .map(|m| json!({ "role": m["role"], "content": crate::providers::content_text(&m["content"]) }))
                .collect()
        })
        .unwrap_or_default();
    let question = json!({
        "declared_purpose": request.service.purpose,
        "deployer_context": request.service.deployer_context,
        "conversation": conversation,
        "rule_result": {
            "level": risk.level.as_str(),
            "rules": risk.triggered_rules(),
            // Rules that matched but were set aside because the n-gram
            // model read no listed use: the judge may raise them back.
            "overruled": risk.grey.iter().filter_map(|g| match g {
                Grey::Overruled { rule } => Some(rule.as_str()),
                _ => None,
            }).collect::<Vec<_>>(),
        },
    });
    let body = json!({
        "model": model.upstream,
        "messages": [
            { "role": "system", "content": PROMPT },
            { "role": "user", "content": question.to_string() },
        ],
        "temperature": 0,
        "max_tokens": 300,
    });
    let timeout = parts.timeout;
    let started = Instant::now();
    let reply = tokio::time::timeout(timeout, parts.providers.chat(&model, body, false)).await;
    let outcome = match &reply {
        Err(_) => "timeout".to_owned(),
        Ok(Err(e)) => e.status_label(),
        Ok(Ok(_)) => "ok".to_owned(),
    };
    parts
        .metrics
        .upstream(&model.provider.id, &outcome, started.elapsed());
    let completion = match reply {
        Err(_) => return Err(format!("no answer within {} ms", timeout.as_millis())),
        Ok(Err(e)) => return Err(format!("the upstream failed: {}", e.message)),
        Ok(Ok(Reply::Complete(completion))) => completion,
        Ok(Ok(Reply::Stream(_))) => return Err("the judge streamed".into()),
    };
    let text = completion["choices"][0]["message"]["content"]
        .as_str()
        .ok_or("the answer has no text")?;
    parse_verdict(text)
}

/// Reads the judge's JSON, tolerating a fenced code block around it.
fn parse_verdict(text: &str) -> Result<Verdict, String> {
    let start = text.find('{').ok_or("the answer holds no JSON object")?;
    let end = text.rfind('}').ok_or("the answer holds no JSON object")?;
    let value: Value = serde_json::from_str(&text[start..=end])
        .map_err(|e| format!("the answer is not valid JSON: {e}"))?;
    let level = match value["level"].as_str() {
        Some("prohibited") => Level::Prohibited,
        Some("high") => Level::High,
        Some("limited") => Level::Limited,
        Some("minimal") => Level::Minimal,
        _ => return Err("the answer's `level` is not one of the four levels".into()),
    };
    let confidence = value["confidence"]
        .as_f64()
        .filter(|c| (0.0..=1.0).contains(c))
        .ok_or("the answer's `confidence` is not a number from 0 to 1")?;
    let reason: String = value["reason"]
        .as_str()
        .unwrap_or("")
        .chars()
        .take(500)
        .collect();
    let area = value["area"]
        .as_str()
        .filter(|a| !a.is_empty() && *a != "none")
        .map(|a| a.chars().take(100).collect());
    Ok(Verdict {
        level,
        area,
        confidence,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_verdict_is_read_and_nonsense_refused() {
        let v = parse_verdict(
            "```json\n{\"level\": \"minimal\", \"area\": \"none\", \"confidence\": 0.93, \"reason\": \"meta: asks what a credit score is\"}\n```",
        )
        .unwrap();
        assert_eq!(v.level, Level::Minimal);
        assert_eq!(v.area, None);
        assert!((v.confidence - 0.93).abs() < 1e-9);
        assert!(parse_verdict("I think it is fine").is_err());
        assert!(parse_verdict("{\"level\": \"severe\", \"confidence\": 0.5}").is_err());
        assert!(parse_verdict("{\"level\": \"high\", \"confidence\": 7}").is_err());
    }
}
