//! The load generator: a small client on reqwest (hyper underneath), in
//! the benchmark's own process, so it shares the two cores with the
//! servers it measures, the same way for every target.
//!
//! - [`closed_loop`]: `c` callers, each sending its next request when the
//!   last one is answered: requests per second, and every latency;
//! - [`first_bytes`]: streamed requests one at a time, timed to the first
//!   byte of the body;
//! - [`hold_streams`]: many slow streams open at once, to read the memory
//!   a server needs for them.
#![allow(clippy::disallowed_methods)] // Test and bench code spawns its own clients and servers.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, header};
use serde_json::json;

/// One way of calling a chat-completions endpoint.
#[derive(Clone)]
pub struct Target {
    pub name: String,
    /// The full URL of `POST .../chat/completions`.
    pub url: String,
    /// Sent with every request (Portkey's routing headers).
    pub headers: HeaderMap,
    /// Bearer keys, used in turn; none: no `Authorization`.
    pub keys: Arc<Vec<String>>,
    plain: Bytes,
    streamed: Bytes,
    slow: Bytes,
}

/// What a request asks for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Plain,
    Streamed,
    /// A slow stream (the mock paces models named `...slow`).
    Slow,
}

fn body(model: &str, stream: bool) -> Bytes {
    let mut body = json!({
        "model": model,
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Say hello to the benchmark."},
        ],
    });
    if stream {
        body["stream"] = json!(true);
    }
    Bytes::from(body.to_string())
}

impl Target {
    /// `model` names the fast answers; `slow_model` the slow stream.
    pub fn new(name: &str, url: String, model: &str, slow_model: &str) -> Target {
        Target {
            name: name.to_owned(),
            url,
            headers: HeaderMap::new(),
            keys: Arc::new(Vec::new()),
            plain: body(model, false),
            streamed: body(model, true),
            slow: body(slow_model, true),
        }
    }

    pub fn with_keys(mut self, keys: Vec<String>) -> Target {
        self.keys = Arc::new(keys);
        self
    }

    pub fn with_header(mut self, name: &'static str, value: &str) -> Target {
        self.headers.insert(
            name,
            HeaderValue::from_str(value).expect("a valid header value"),
        );
        self
    }

    fn request(&self, http: &reqwest::Client, kind: Kind, n: u64) -> reqwest::RequestBuilder {
        let body = match kind {
            Kind::Plain => self.plain.clone(),
            Kind::Streamed => self.streamed.clone(),
            Kind::Slow => self.slow.clone(),
        };
        let mut request = http
            .post(&self.url)
            .headers(self.headers.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .body(body);
        if !self.keys.is_empty() {
            let key = &self.keys[(n % self.keys.len() as u64) as usize];
            request = request.bearer_auth(key);
        }
        request
    }
}

/// The client every phase uses: enough idle connections for c=256.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(1024)
        .timeout(Duration::from_secs(120))
        .build()
        .expect("a reqwest client")
}

/// What a phase measured.
#[derive(Debug, Default)]
pub struct Samples {
    pub ok: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub elapsed: Duration,
    /// Nanoseconds, sorted once the phase ends.
    pub latencies: Vec<u64>,
}

impl Samples {
    fn merge(&mut self, other: Samples) {
        self.ok += other.ok;
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
        self.latencies.extend(other.latencies);
    }

    fn finish(mut self, elapsed: Duration) -> Samples {
        self.elapsed = elapsed;
        self.latencies.sort_unstable();
        self
    }

    fn fail(&mut self, error: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(error);
        }
    }

    /// Answered requests per second.
    pub fn rps(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The `p` quantile in microseconds (0 when nothing was measured).
    pub fn us(&self, p: f64) -> f64 {
        if self.latencies.is_empty() {
            return 0.0;
        }
        let i = ((self.latencies.len() - 1) as f64 * p).round() as usize;
        self.latencies[i] as f64 / 1000.0
    }
}

/// One plain request, read to its end: its latency, or what went wrong.
async fn call(http: &reqwest::Client, target: &Target, n: u64) -> Result<Duration, String> {
    let started = Instant::now();
    let response = target
        .request(http, Kind::Plain, n)
        .send()
        .await
        .map_err(|e| format!("{e:#}"))?;
    let status = response.status();
    let body = response.bytes().await.map_err(|e| format!("{e:#}"))?;
    if status != 200 {
        return Err(format!(
            "{status}: {}",
            String::from_utf8_lossy(&body[..body.len().min(300)])
        ));
    }
    Ok(started.elapsed())
}

/// `concurrency` callers in a closed loop for `duration`.
pub async fn closed_loop(
    http: &reqwest::Client,
    target: &Target,
    concurrency: usize,
    duration: Duration,
) -> Samples {
    let issued = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let (http, target, issued) = (http.clone(), target.clone(), issued.clone());
            tokio::spawn(async move {
                let mut samples = Samples::default();
                loop {
                    let n = issued.fetch_add(1, Ordering::Relaxed);
                    if started.elapsed() >= duration {
                        return samples;
                    }
                    match call(&http, &target, n).await {
                        Ok(took) => {
                            samples.ok += 1;
                            samples.latencies.push(took.as_nanos() as u64);
                        }
                        Err(e) => samples.fail(e),
                    }
                }
            })
        })
        .collect();
    let mut all = Samples::default();
    for task in tasks {
        all.merge(task.await.expect("a load task panicked"));
    }
    all.finish(started.elapsed())
}

/// Streamed requests one after another for `duration`, each timed from
/// the send to the first byte of its body, and read to the end.
pub async fn first_bytes(http: &reqwest::Client, target: &Target, duration: Duration) -> Samples {
    let started = Instant::now();
    let mut samples = Samples::default();
    let mut i = 0;
    while started.elapsed() < duration {
        i += 1;
        match first_byte(http, target, Kind::Streamed, i).await {
            Ok((took, mut response)) => {
                while let Ok(Some(_)) = response.chunk().await {}
                samples.ok += 1;
                samples.latencies.push(took.as_nanos() as u64);
            }
            Err(e) => samples.fail(e),
        }
    }
    samples.finish(started.elapsed())
}

async fn first_byte(
    http: &reqwest::Client,
    target: &Target,
    kind: Kind,
    n: u64,
) -> Result<(Duration, reqwest::Response), String> {
    let started = Instant::now();
    let mut response = target
        .request(http, kind, n)
        .send()
        .await
        .map_err(|e| format!("{e:#}"))?;
    if response.status() != 200 {
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        return Err(format!("{status}: {}", &text[..text.len().min(300)]));
    }
    loop {
        match response.chunk().await.map_err(|e| format!("{e:#}"))? {
            Some(chunk) if !chunk.is_empty() => return Ok((started.elapsed(), response)),
            Some(_) => continue,
            None => return Err("the stream ended before its first byte".into()),
        }
    }
}

/// What [`hold_streams`] saw.
#[derive(Debug, Default)]
pub struct Held {
    /// Streams whose first byte arrived.
    pub opened: usize,
    /// Streams read to their end.
    pub completed: usize,
    pub errors: u64,
    pub first_error: Option<String>,
    /// What `at_peak` returned, read while the most streams were open.
    pub peak: (u64, u64),
    pub open_at_peak: usize,
}

/// Opens `n` slow streams (at most `ramp` connecting at once), calls
/// `at_peak` once every stream has its first byte (or `limit` has passed),
/// then reads every stream to its end.
pub async fn hold_streams(
    http: &reqwest::Client,
    target: &Target,
    n: usize,
    ramp: usize,
    limit: Duration,
    at_peak: impl Fn() -> (u64, u64),
) -> Held {
    let opened = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(tokio::sync::Semaphore::new(ramp));
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let (http, target) = (http.clone(), target.clone());
            let (opened, failed, gate) = (opened.clone(), failed.clone(), gate.clone());
            tokio::spawn(async move {
                let permit = gate.acquire_owned().await.expect("semaphore open");
                let first = first_byte(&http, &target, Kind::Slow, i as u64).await;
                drop(permit);
                match first {
                    Ok((_, mut response)) => {
                        opened.fetch_add(1, Ordering::Relaxed);
                        loop {
                            match response.chunk().await {
                                Ok(Some(_)) => {}
                                Ok(None) => return Ok(()),
                                Err(e) => return Err(format!("{e:#}")),
                            }
                        }
                    }
                    Err(e) => {
                        failed.fetch_add(1, Ordering::Relaxed);
                        Err(e)
                    }
                }
            })
        })
        .collect();
    let started = Instant::now();
    while opened.load(Ordering::Relaxed) + failed.load(Ordering::Relaxed) < n
        && started.elapsed() < limit
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut held = Held {
        open_at_peak: opened.load(Ordering::Relaxed),
        peak: at_peak(),
        ..Held::default()
    };
    for task in tasks {
        match task.await.expect("a stream task panicked") {
            Ok(()) => held.completed += 1,
            Err(e) => {
                held.errors += 1;
                held.first_error.get_or_insert(e);
            }
        }
    }
    held.opened = opened.load(Ordering::Relaxed);
    held
}
