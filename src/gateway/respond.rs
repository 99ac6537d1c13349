//! The respond stage's shared pieces: the `billing` extension of a charged
//! answer and the `explainability` extension (why this model and
//! deployment served). The other extensions are applied by
//! [`super::Extensions`].

use std::time::Instant;

use serde_json::{Value, json};

use super::Served;
use crate::base::money::micros_to_credits;
use crate::billing::Charged;

pub(crate) fn billing_view(charged: &Charged, is_fallback: bool, started: Instant) -> Value {
    billing_view_at(charged, is_fallback, started.elapsed().as_millis() as u64)
}

/// [`billing_view`] with the latency already measured (a journaled held
/// answer is filed with the latency it had when charged).
pub(crate) fn billing_view_at(charged: &Charged, is_fallback: bool, latency_ms: u64) -> Value {
    json!({
        "cost": micros_to_credits(charged.cost),
        "balanceAfter": micros_to_credits(charged.balance_after),
        "keyRemaining": charged.key_remaining.map(micros_to_credits),
        "isFallback": is_fallback,
        "latencyMs": latency_ms,
    })
}

pub(crate) fn explain(served: &Served) -> Value {
    let provider = &served.model.provider.id;
    let deployment = format!("{provider}/{}", served.model.upstream);
    let (reason, mut sentence) = if served.attempts.is_empty() {
        (
            "primary".to_owned(),
            format!(
                "`{}` (provider `{provider}`, deployment `{deployment}`) was the first model of the chain and served the request.",
                served.requested
            ),
        )
    } else {
        let failed: Vec<String> = served
            .attempts
            .iter()
            .map(|a| {
                if a.deployment.is_empty() {
                    format!("`{}` ({})", a.model, a.status)
                } else {
                    format!("`{}` on `{}` ({})", a.model, a.deployment, a.status)
                }
            })
            .collect();
        (
            format!("fallback after {} failed attempt(s)", served.attempts.len()),
            format!(
                "{} failed, so `{}` (provider `{provider}`, deployment `{deployment}`) served the request.",
                failed.join(", "),
                served.requested
            ),
        )
    };
    if served.retries > 0 {
        sentence.push_str(&format!(
            " It answered after {} retr{} of that deployment.",
            served.retries,
            if served.retries == 1 { "y" } else { "ies" }
        ));
    }
    if served.replaced_parts > 0 {
        sentence.push_str(&format!(
            " {} attachment(s) the model cannot take were replaced by a note.",
            served.replaced_parts
        ));
    }
    json!({
        "model_selection_reason": reason,
        "human_readable": sentence,
        "attempts": served.attempts,
        "deployment": deployment,
        "strategy": served.model.strategy.as_str(),
        "retries": served.retries,
    })
}
