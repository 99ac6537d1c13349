//! `GET /api/v1/stats`: the dashboard overview. Requests, credits and
//! tokens per UTC day, the top models and keys, for the last `days` days.
//!
//! Two sources, both daily rollups read over the period's days only (never
//! the raw records, so the answer costs the same at any store size):
//! - `requests`, `credits`, `promptTokens`, `completionTokens` count the
//!   answered, billed inference requests: the usage rollups.
//! - `errors` counts the inference requests refused with a 4xx or 5xx
//!   status (`inference.refused` entries of the audit log, which the
//!   authentication layer writes for every such answer on `/v1`, counted
//!   in the refusal rollups in the entry's transaction), so
//!   `requests + errors` is every inference request that reached a key.
//!   Refusals of unknown keys belong to no tenant and show only in the
//!   owner's every-tenant view.
//!
//! Scope is that of `/api/v1/usage`: the owner every tenant (or one with
//! `tenant`), roles reading all usage their tenant, `user` its own keys.
//! `endpoint` narrows both sources: the usage records by their endpoint,
//! the refusals by the endpoint of their path.

use std::collections::BTreeMap;

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::billing::{endpoint_filter, store_error, tenant_scope, usage_keys};
use crate::api::extract::Signed;
use crate::api::json::Query;
use crate::api::state::AppState;
use crate::audit::refusals::ErrorRow;
use crate::auth::keys::ResetInterval;
use crate::base::error::ApiError;
use crate::base::money::micros_to_credits;
use crate::base::time::{format_rfc3339, now_ms};
use crate::billing::rollups::Row;
use crate::billing::usage;
use crate::catalogue::Endpoint;

const DAY_MS: i64 = 86_400_000;
/// Entries of `topModels` and `topKeys`.
const TOP: usize = 5;

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/stats", get(stats))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatsQuery {
    /// Days back, today included: 1 to 90, 14 by default.
    days: Option<u32>,
    /// Owner only: one tenant (id or name) instead of every tenant.
    tenant: Option<String>,
    /// Only this endpoint (`chat`, `messages`, ...).
    endpoint: Option<String>,
}

#[derive(Default, Clone, Copy)]
struct Day {
    requests: u64,
    errors: u64,
    /// Wider than one charge: a sum of many cannot overflow it.
    credits: i128,
    prompt_tokens: u64,
    completion_tokens: u64,
}

impl Day {
    fn view(&self) -> Value {
        json!({
            "requests": self.requests,
            "errors": self.errors,
            "credits": micros_to_credits(self.credits),
            "promptTokens": self.prompt_tokens,
            "completionTokens": self.completion_tokens,
        })
    }
}

#[derive(Default)]
struct Top {
    requests: u64,
    credits: i128,
}

/// The `n` largest by credits, then requests, then name.
fn top(groups: BTreeMap<String, Top>) -> Vec<(String, Top)> {
    let mut all: Vec<(String, Top)> = groups.into_iter().collect();
    all.sort_by(|(a, x), (b, y)| {
        (y.credits, y.requests)
            .cmp(&(x.credits, x.requests))
            .then_with(|| a.cmp(b))
    });
    all.truncate(TOP);
    all
}

fn day_of(at: i64) -> String {
    format_rfc3339(at)[..10].to_owned()
}

async fn stats(
    State(state): State<AppState>,
    Signed(current): Signed,
    Query(query): Query<StatsQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let key_ids = usage_keys(&state, &current)?;
    let days = query.days.unwrap_or(14);
    if !(1..=90).contains(&days) {
        return Err(ApiError::invalid("days", "`days` must be 1 to 90"));
    }
    let today = ResetInterval::Daily.cycle_start(now_ms());
    let from = today - i64::from(days - 1) * DAY_MS;
    let to = today + DAY_MS;
    let endpoint = endpoint_filter(query.endpoint.as_deref())?;
    let tenant_id = tenant_scope(&current, query.tenant.as_deref(), &state)?;
    let scope = usage::Scope {
        tenant_id,
        key_ids,
        from,
        to,
        endpoint,
    };

    let mut tally = Tally::new(from, days);
    for r in usage::rows(&state.store, &scope).map_err(store_error)? {
        tally.add_usage(&r);
    }
    for refused in
        crate::audit::refusals::error_rows(&state.store, from, to).map_err(store_error)?
    {
        if refusal_in_scope(&scope, &refused) {
            tally.add_errors(refused.day, refused.count);
        }
    }
    Ok(axum::Json(tally.view(&state, &scope)))
}

/// As the audit log's tenant filter: entries of no tenant count in every
/// tenant's view.
fn refusal_in_scope(scope: &usage::Scope, refused: &ErrorRow) -> bool {
    scope
        .tenant_id
        .as_ref()
        .is_none_or(|t| refused.tenant_id.is_empty() || &refused.tenant_id == t)
        && match &scope.key_ids {
            None => true,
            Some(own) => own.iter().any(|k| refused.actor == format!("key:{k}")),
        }
        && scope.endpoint.is_none_or(|e| refused.endpoint == Some(e))
}

/// The sums the overview shows, filled from the rollups.
struct Tally {
    /// One entry per day of the period, empty days included.
    series: BTreeMap<String, Day>,
    totals: Day,
    models: BTreeMap<String, Top>,
    keys: BTreeMap<String, Top>,
    endpoints: BTreeMap<Endpoint, Top>,
}

impl Tally {
    fn new(from: i64, days: u32) -> Self {
        Self {
            series: (0..i64::from(days))
                .map(|i| (day_of(from + i * DAY_MS), Day::default()))
                .collect(),
            totals: Day::default(),
            models: BTreeMap::new(),
            keys: BTreeMap::new(),
            endpoints: BTreeMap::new(),
        }
    }

    fn add_usage(&mut self, r: &Row) {
        let sum = &r.sum;
        for day in [
            self.series.entry(day_of(r.day)).or_default(),
            &mut self.totals,
        ] {
            day.requests += sum.requests;
            day.credits += sum.cost;
            day.prompt_tokens = day.prompt_tokens.saturating_add(sum.prompt_tokens);
            day.completion_tokens = day.completion_tokens.saturating_add(sum.completion_tokens);
        }
        for (group, name) in [(&mut self.models, &r.model), (&mut self.keys, &r.key_id)] {
            let slot = group.entry(name.clone()).or_default();
            slot.requests += sum.requests;
            slot.credits += sum.cost;
        }
        let slot = self.endpoints.entry(r.endpoint).or_default();
        slot.requests += sum.requests;
        slot.credits += sum.cost;
    }

    fn add_errors(&mut self, day: i64, count: u64) {
        self.series.entry(day_of(day)).or_default().errors += count;
        self.totals.errors += count;
    }

    /// The response body; key names are looked up for the top keys.
    fn view(self, state: &AppState, scope: &usage::Scope) -> Value {
        let top_keys: Vec<Value> = top(self.keys)
            .into_iter()
            .map(|(id, t)| {
                let name = state.keys.get(&id).map(|k| k.name).ok();
                json!({
                    "keyId": id,
                    "keyName": name,
                    "requests": t.requests,
                    "credits": micros_to_credits(t.credits),
                })
            })
            .collect();
        let top_models: Vec<Value> = top(self.models)
            .into_iter()
            .map(|(model, t)| {
                json!({
                    "model": model,
                    "requests": t.requests,
                    "credits": micros_to_credits(t.credits),
                })
            })
            .collect();
        let by_endpoint: Vec<Value> = self
            .endpoints
            .iter()
            .map(|(endpoint, t)| {
                json!({
                    "endpoint": endpoint.as_str(),
                    "requests": t.requests,
                    "credits": micros_to_credits(t.credits),
                })
            })
            .collect();
        let series: Vec<Value> = self
            .series
            .iter()
            .map(|(day, d)| {
                let mut row = d.view();
                row["day"] = json!(day);
                row
            })
            .collect();
        json!({
            "from": format_rfc3339(scope.from),
            "to": format_rfc3339(scope.to),
            "totals": self.totals.view(),
            "series": series,
            "topModels": top_models,
            "topKeys": top_keys,
            "endpoint": scope.endpoint.map(Endpoint::as_str),
            "byEndpoint": by_endpoint,
        })
    }
}
