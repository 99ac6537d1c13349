//! Deployment routing: which of a model's deployments a request tries, in
//! which order, how long it waits before retrying one, and which are
//! resting after failures (docs/routing.md).
//!
//! The state is in memory, owned by the one process that serves every
//! request: requests in flight and a moving average of time to first byte
//! per deployment (for the `least_busy` and `lowest_latency` strategies),
//! and a circuit per deployment. A circuit opens (cooldown) after
//! `cooldown_after_failures` consecutive retryable failures; once
//! `cooldown_seconds` passed, exactly one request probes it (half-open) and
//! its outcome closes or reopens it. A restart forgets everything, which
//! only gives failing deployments one more chance.

pub mod attempt;
pub mod attempt_record;

pub use attempt_record::{Attempt, AttemptStatus};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::catalogue::{Model, Strategy};
use crate::upstream::{CooldownPolicy, RetryPolicy};

/// Weight of the newest sample in the time-to-first-byte average.
const EWMA_ALPHA: f64 = 0.3;

/// Identifies a deployment across catalogue reloads: model, provider and
/// upstream name.
pub fn deployment_key(model: &Model, index: usize) -> String {
    let d = &model.deployments[index];
    format!("{}|{}|{}", model.id, d.provider.id, d.upstream)
}

/// The circuit of one deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Circuit {
    /// Serving.
    Closed,
    /// Resting since `since`, until `until`.
    Open { since: Instant, until: Instant },
    /// The rest is over and one probe is in flight.
    Probing { since: Instant },
}

#[derive(Debug)]
struct State {
    in_flight: u32,
    ttfb_ms: Option<f64>,
    failures: u32,
    circuit: Circuit,
    cooldowns: u64,
}

impl Default for State {
    fn default() -> State {
        State {
            in_flight: 0,
            ttfb_ms: None,
            failures: 0,
            circuit: Circuit::Closed,
            cooldowns: 0,
        }
    }
}

/// A deployment's health as the dashboard and /metrics show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthState {
    Healthy,
    /// Resting after failures: no traffic while another deployment serves.
    Cooldown,
    /// Its rest is over and one request is trying it.
    Probing,
}

impl HealthState {
    pub fn as_str(self) -> &'static str {
        match self {
            HealthState::Healthy => "healthy",
            HealthState::Cooldown => "cooldown",
            HealthState::Probing => "probing",
        }
    }
}

/// The health of one deployment, as /metrics and the dashboard show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    pub model: String,
    pub deployment: String,
    pub state: HealthState,
    pub in_flight: u32,
    pub consecutive_failures: u32,
    pub cooldowns: u64,
    pub ttfb_ms: Option<f64>,
}

/// A deployment that just entered cooldown (for the event and the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cooled {
    pub model: String,
    pub deployment: String,
    pub failures: u32,
    pub seconds: u64,
}

/// Every deployment's routing state.
#[derive(Default)]
pub struct Router {
    states: Mutex<HashMap<String, State>>,
}

/// Holds a deployment's in-flight count up while an attempt (and, for a
/// stream, its relay) lives.
pub struct InFlight {
    router: Arc<Router>,
    key: String,
    /// This attempt probes a deployment whose rest is over.
    probe: bool,
}

impl InFlight {
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut states = self.router.states.lock().expect("router lock");
        if let Some(s) = states.get_mut(&self.key) {
            s.in_flight = s.in_flight.saturating_sub(1);
            // A probe abandoned before its outcome (the caller left): the
            // next request may probe instead.
            if self.probe
                && let Circuit::Probing { since } = s.circuit
            {
                s.circuit = Circuit::Open {
                    since,
                    until: since,
                };
            }
        }
    }
}

impl Router {
    /// The order in which `model`'s deployments are tried: the available
    /// ones (serving, or resting no more and not being probed) as the
    /// strategy ranks them; when none is, the one resting longest alone,
    /// rather than failing closed. `unit` draws uniform numbers in [0, 1)
    /// (random in service, fixed in tests).
    /// The flag is true in that last case: every deployment rests.
    pub fn order(
        &self,
        model: &Model,
        now: Instant,
        unit: &mut dyn FnMut() -> f64,
    ) -> (Vec<usize>, bool) {
        self.order_among(model, &|_| true, now, unit)
    }

    /// [`Router::order`] among the deployments `eligible` admits (those
    /// whose provider can take the route's request): the others are
    /// neither ranked nor the one tried when every eligible one rests.
    pub fn order_among(
        &self,
        model: &Model,
        eligible: &dyn Fn(usize) -> bool,
        now: Instant,
        unit: &mut dyn FnMut() -> f64,
    ) -> (Vec<usize>, bool) {
        let mut states = self.states.lock().expect("router lock");
        let mut available = Vec::new();
        let mut resting: Option<(usize, Instant)> = None;
        for i in (0..model.deployments.len()).filter(|&i| eligible(i)) {
            let state = states.entry(deployment_key(model, i)).or_default();
            match state.circuit {
                Circuit::Closed => available.push(i),
                Circuit::Open { until, .. } if until <= now => available.push(i),
                Circuit::Open { since, .. } | Circuit::Probing { since } => {
                    if resting.is_none_or(|(_, s)| since < s) {
                        resting = Some((i, since));
                    }
                }
            }
        }
        if available.is_empty() {
            return (resting.map(|(i, _)| vec![i]).unwrap_or_default(), true);
        }
        (rank(model, &available, &states, unit), false)
    }

    /// Starts an attempt on deployment `index`: counts it in flight until
    /// the guard drops. A deployment whose rest is over becomes this
    /// attempt's probe; one resting, or being probed by another request,
    /// is refused (`None`) unless `forced` (every deployment rests).
    pub fn begin(
        self: &Arc<Self>,
        model: &Model,
        index: usize,
        now: Instant,
        forced: bool,
    ) -> Option<InFlight> {
        let key = deployment_key(model, index);
        let mut states = self.states.lock().expect("router lock");
        let state = states.entry(key.clone()).or_default();
        let probe = match state.circuit {
            Circuit::Closed => false,
            Circuit::Open { since, until } if until <= now => {
                state.circuit = Circuit::Probing { since };
                true
            }
            Circuit::Open { .. } | Circuit::Probing { .. } if forced => false,
            Circuit::Open { .. } | Circuit::Probing { .. } => return None,
        };
        state.in_flight += 1;
        Some(InFlight {
            router: self.clone(),
            key,
            probe,
        })
    }

    /// A served attempt: closes the circuit and feeds the latency average.
    pub fn success(&self, key: &str, ttfb: Duration) {
        let mut states = self.states.lock().expect("router lock");
        let state = states.entry(key.to_owned()).or_default();
        state.failures = 0;
        state.circuit = Circuit::Closed;
        let sample = ttfb.as_secs_f64() * 1000.0;
        state.ttfb_ms = Some(match state.ttfb_ms {
            Some(avg) => avg + EWMA_ALPHA * (sample - avg),
            None => sample,
        });
    }

    /// A retryable failure: counts it, and opens the circuit when the
    /// policy's count is reached or a probe failed. Returns the cooldown
    /// it started, if it started one.
    pub fn failure(
        &self,
        model: &Model,
        index: usize,
        policy: CooldownPolicy,
        now: Instant,
    ) -> Option<Cooled> {
        let mut states = self.states.lock().expect("router lock");
        let state = states.entry(deployment_key(model, index)).or_default();
        state.failures = state.failures.saturating_add(1);
        let open = match state.circuit {
            Circuit::Closed => state.failures >= policy.after_failures,
            // A failed probe, or a failure of the deployment tried because
            // every one was resting: rest again from now.
            Circuit::Probing { .. } | Circuit::Open { .. } => true,
        };
        if !open {
            return None;
        }
        state.circuit = Circuit::Open {
            since: now,
            until: now + policy.duration,
        };
        state.cooldowns += 1;
        Some(Cooled {
            model: model.id.clone(),
            deployment: model.deployments[index].label(),
            failures: state.failures,
            seconds: policy.duration.as_secs(),
        })
    }

    /// The health of every deployment of `models`, in their order.
    pub fn health<'a>(&self, models: impl IntoIterator<Item = &'a Arc<Model>>) -> Vec<Health> {
        let states = self.states.lock().expect("router lock");
        let now = Instant::now();
        let mut out = Vec::new();
        for model in models {
            for (i, d) in model.deployments.iter().enumerate() {
                let state = states.get(&deployment_key(model, i));
                let (label, in_flight, failures, cooldowns, ttfb) = match state {
                    Some(s) => (
                        match s.circuit {
                            Circuit::Closed => HealthState::Healthy,
                            Circuit::Open { until, .. } if until <= now => HealthState::Healthy,
                            Circuit::Open { .. } => HealthState::Cooldown,
                            Circuit::Probing { .. } => HealthState::Probing,
                        },
                        s.in_flight,
                        s.failures,
                        s.cooldowns,
                        s.ttfb_ms,
                    ),
                    None => (HealthState::Healthy, 0, 0, 0, None),
                };
                out.push(Health {
                    model: model.id.clone(),
                    deployment: d.label(),
                    state: label,
                    in_flight,
                    consecutive_failures: failures,
                    cooldowns,
                    ttfb_ms: ttfb,
                });
            }
        }
        out
    }
}

/// Ranks `available` deployments by the model's strategy. Ties (and the
/// whole of `weighted`) are broken by a weighted random draw, so equal
/// deployments share the load.
fn rank(
    model: &Model,
    available: &[usize],
    states: &HashMap<String, State>,
    unit: &mut dyn FnMut() -> f64,
) -> Vec<usize> {
    let mut drawn = weighted_order(
        available
            .iter()
            .map(|&i| (i, model.deployments[i].weight))
            .collect(),
        unit,
    );
    let state = |i: usize| states.get(&deployment_key(model, i));
    match model.strategy {
        Strategy::Weighted => {}
        // Stable sorts keep the random draw among equals.
        Strategy::LeastBusy => drawn.sort_by_key(|&i| state(i).map_or(0, |s| s.in_flight)),
        Strategy::LowestLatency => {
            // A deployment never measured goes first, so it gets measured.
            drawn.sort_by(|&a, &b| {
                let ttfb = |i| state(i).and_then(|s| s.ttfb_ms).unwrap_or(0.0);
                ttfb(a).total_cmp(&ttfb(b))
            })
        }
    }
    drawn
}

/// A weighted random order without replacement: each place is drawn in
/// proportion to the weights of those not yet placed.
pub fn weighted_order(mut pool: Vec<(usize, u32)>, unit: &mut dyn FnMut() -> f64) -> Vec<usize> {
    let mut out = Vec::with_capacity(pool.len());
    while pool.len() > 1 {
        let total: u64 = pool.iter().map(|(_, w)| u64::from(*w)).sum();
        let mut target = (unit() * total as f64) as u64;
        let mut pick = pool.len() - 1;
        for (n, (_, w)) in pool.iter().enumerate() {
            if target < u64::from(*w) {
                pick = n;
                break;
            }
            target -= u64::from(*w);
        }
        out.push(pool.remove(pick).0);
    }
    out.extend(pool.into_iter().map(|(i, _)| i));
    out
}

/// The wait before retry number `retry` (1 for the first retry): an
/// upstream's `Retry-After` when it gave one, else exponential backoff
/// with full jitter, `unit` × base × 2^(retry-1). `None` when the upstream
/// asked for longer than the cap: the caller moves on at once.
pub fn backoff(
    policy: RetryPolicy,
    retry: u32,
    retry_after: Option<Duration>,
    unit: f64,
) -> Option<Duration> {
    if let Some(asked) = retry_after {
        return (asked <= policy.retry_after_cap).then_some(asked);
    }
    let ceiling = policy
        .backoff_base
        .saturating_mul(1u32 << retry.saturating_sub(1).min(16));
    Some(ceiling.mul_f64(unit.clamp(0.0, 1.0)))
}

/// A uniform draw in [0, 1) from the operating system's random source.
pub fn random_unit() -> f64 {
    let bits = getrandom::u64().unwrap_or(0) >> 11;
    bits as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Deployment;
    use crate::upstream::ProviderConfig;

    fn model(weights: &[u32], strategy: Strategy) -> Model {
        let provider = |id: &str| {
            Arc::new(ProviderConfig {
                id: id.into(),
                kind: crate::catalogue::ProviderKind::Mock,
                bedrock: None,
                base_url: None,
                api_key_env: None,
                api_key: None,
                cloud: Default::default(),
                connect_timeout: Duration::from_secs(1),
                first_byte_timeout: Duration::from_secs(1),
                retry: RetryPolicy::default(),
                cooldown: CooldownPolicy::default(),
                request_timeout: Duration::from_secs(1),
                responses: Default::default(),
            })
        };
        let deployments: Vec<Deployment> = weights
            .iter()
            .enumerate()
            .map(|(i, w)| Deployment {
                provider: provider(&format!("p{i}")),
                upstream: "u".into(),
                weight: *w,
            })
            .collect();
        Model {
            id: "m".into(),
            provider: deployments[0].provider.clone(),
            upstream: "u".into(),
            deployments,
            strategy,
            request_timeout: None,
            rpm_limit: None,
            tpm_limit: None,
            input: vec![],
            output: vec![],
            context_window: 1,
            max_output_tokens: None,
            pricing: crate::catalogue::Pricing::PerRequest { per_request: 0 },
        }
    }

    /// A fixed sequence of draws, cycled.
    fn draws(values: &[f64]) -> impl FnMut() -> f64 + '_ {
        let mut n = 0;
        move || {
            n += 1;
            values[(n - 1) % values.len()]
        }
    }

    #[test]
    fn backoff_is_full_jitter_under_an_exponential_ceiling() {
        let policy = RetryPolicy {
            max_retries: 5,
            backoff_base: Duration::from_millis(100),
            retry_after_cap: Duration::from_secs(2),
        };
        assert_eq!(backoff(policy, 1, None, 0.0), Some(Duration::ZERO));
        assert_eq!(
            backoff(policy, 1, None, 0.5),
            Some(Duration::from_millis(50))
        );
        assert_eq!(
            backoff(policy, 3, None, 0.5),
            Some(Duration::from_millis(200))
        );
        assert_eq!(
            backoff(policy, 3, None, 1.0),
            Some(Duration::from_millis(400))
        );
        for retry in 1..40 {
            assert!(backoff(policy, retry, None, 0.999).is_some());
        }
        // Retry-After wins up to the cap; beyond it, move on.
        let asked = Some(Duration::from_millis(1500));
        assert_eq!(backoff(policy, 1, asked, 0.9), asked);
        assert_eq!(backoff(policy, 1, Some(Duration::from_secs(3)), 0.9), None);
        let unit = random_unit();
        assert!((0.0..1.0).contains(&unit));
    }

    #[test]
    fn weighted_order_follows_the_draws() {
        // Weights 2 and 1: a draw below 2/3 takes the first.
        assert_eq!(
            weighted_order(vec![(0, 2), (1, 1)], &mut draws(&[0.5])),
            [0, 1]
        );
        assert_eq!(
            weighted_order(vec![(0, 2), (1, 1)], &mut draws(&[0.7])),
            [1, 0]
        );
        // Draws spread evenly over [0, 1) pick in proportion 3 : 2 : 1.
        let mut counts = [0; 3];
        for k in 0..60 {
            let draw = [f64::from(k) / 60.0];
            counts[weighted_order(vec![(0, 3), (1, 2), (2, 1)], &mut draws(&draw))[0]] += 1;
        }
        assert_eq!(counts, [30, 20, 10]);
    }

    #[test]
    fn least_busy_and_lowest_latency_rank_by_their_measure() {
        let router = Arc::new(Router::default());
        let m = model(&[1, 1, 1], Strategy::LeastBusy);
        let now = Instant::now();
        let _a = router.begin(&m, 0, now, false);
        let _b = router.begin(&m, 0, now, false);
        let _c = router.begin(&m, 2, now, false);
        assert_eq!(
            router.order(&m, Instant::now(), &mut draws(&[0.0])).0,
            [1, 2, 0]
        );
        drop(_a);
        drop(_b);
        assert_eq!(router.order(&m, Instant::now(), &mut draws(&[0.0])).0[0], 0);

        let m = model(&[1, 1, 1], Strategy::LowestLatency);
        router.success(&deployment_key(&m, 0), Duration::from_millis(300));
        router.success(&deployment_key(&m, 1), Duration::from_millis(100));
        // Deployment 2 was never measured: it goes first.
        assert_eq!(
            router.order(&m, Instant::now(), &mut draws(&[0.0])).0,
            [2, 1, 0]
        );
        router.success(&deployment_key(&m, 2), Duration::from_millis(200));
        assert_eq!(
            router.order(&m, Instant::now(), &mut draws(&[0.0])).0,
            [1, 2, 0]
        );
    }

    #[test]
    fn cooldown_then_a_single_half_open_probe() {
        let router = Arc::new(Router::default());
        let m = model(&[1, 1], Strategy::Weighted);
        let policy = CooldownPolicy {
            after_failures: 2,
            duration: Duration::from_secs(30),
        };
        let t0 = Instant::now();
        assert_eq!(router.failure(&m, 0, policy, t0), None);
        let cooled = router.failure(&m, 0, policy, t0).expect("cools");
        assert_eq!(cooled.deployment, "p0/u");
        // Resting: only deployment 1 is offered.
        assert_eq!(router.order(&m, t0, &mut draws(&[0.0])).0, [1]);
        assert!(router.begin(&m, 0, t0, false).is_none());
        // Rest over: one probe gets it, the next request does not.
        let later = t0 + Duration::from_secs(31);
        assert!(router.order(&m, later, &mut draws(&[0.0])).0.contains(&0));
        let probe = router.begin(&m, 0, later, false).expect("the probe");
        assert_eq!(router.order(&m, later, &mut draws(&[0.0])).0, [1]);
        assert!(router.begin(&m, 0, later, false).is_none());
        // The probe fails: resting again.
        assert!(router.failure(&m, 0, policy, later).is_some());
        drop(probe);
        assert_eq!(router.order(&m, later, &mut draws(&[0.0])).0, [1]);
        // A probe abandoned by its caller frees the place for another.
        let much_later = later + Duration::from_secs(31);
        drop(router.begin(&m, 0, much_later, false).expect("a probe"));
        let probe = router
            .begin(&m, 0, much_later, false)
            .expect("another probe");
        // It succeeds: serving again.
        router.success(&deployment_key(&m, 0), Duration::from_millis(5));
        drop(probe);
        assert_eq!(router.order(&m, much_later, &mut draws(&[0.0])).0.len(), 2);
        let health = router.health([&Arc::new(m)]);
        assert_eq!(health[0].state, HealthState::Healthy);
        assert_eq!(health[0].cooldowns, 2);
    }

    #[test]
    fn when_every_deployment_rests_the_one_resting_longest_is_tried() {
        let router = Router::default();
        let m = model(&[1, 1], Strategy::Weighted);
        let policy = CooldownPolicy {
            after_failures: 1,
            duration: Duration::from_secs(30),
        };
        let t0 = Instant::now();
        router.failure(&m, 1, policy, t0);
        router.failure(&m, 0, policy, t0 + Duration::from_secs(1));
        assert_eq!(
            router.order(&m, t0 + Duration::from_secs(2), &mut draws(&[0.0])),
            (vec![1], true)
        );
    }
}
