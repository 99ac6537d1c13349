//! The running server: [`AppState`] (built once), the router and its
//! layers, the admin socket, and graceful shutdown.
//!
//! Layers, outermost first: request id, tracing (path only: a query may
//! carry a key), dialect of error bodies, the 50 MB body limit, then
//! authentication, which denies by default. Every background task runs on
//! the one task set made here ([`Tasks`]); shutdown on SIGTERM or Ctrl-C
//! follows the order in [`shutdown`].

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderName, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::trace::TraceLayer;

use crate::admin;
use crate::api::error::render_in_dialect;
use crate::api::extract::authenticate;
use crate::auth::keys::Keys;
use crate::base::error::{ApiError, Code};
use crate::base::tasks::Tasks;
use crate::catalogue::overlay::LiveCatalogue;
use crate::config::Config;
use crate::store::Store;

mod shutdown;

/// Bodies above this size are refused with 413 (spec, "Limits").
pub const MAX_BODY_BYTES: usize = 50 * 1024 * 1024;

static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Everything a request may need, cloned cheaply into each handler.
#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub store: Arc<Store>,
    /// The configuration's models with the dashboard's edits merged over
    /// them; swapped whole on each edit.
    pub catalogue: Arc<LiveCatalogue>,
    pub keys: Keys,
    pub providers: crate::providers::Providers,
    pub classifier: Arc<crate::compliance::Classifier>,
    pub limiter: Arc<crate::billing::limits::RateLimiter>,
    /// Failed sign-ins, per account and address (in memory).
    pub sign_in_throttle: Arc<crate::auth::throttle::SignInThrottle>,
    /// Keys' tokens per minute (`tpmLimit`), per allowance.
    pub key_tokens: Arc<crate::billing::limits::TokenLimiter>,
    /// What admission reads: keys' cycles, wallets, day counters and the
    /// credits requests in flight reserved (DESIGN section 4).
    pub ledger: Arc<crate::billing::ledger::Ledger>,
    /// Models' own request and token limits, across all keys.
    pub model_limits: Arc<crate::billing::limits::ModelLimits>,
    /// Deployment health and load, for choosing a model's deployment.
    pub router: Arc<crate::routing::Router>,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// OpenTelemetry spans and their exporter (off without `otlp_endpoint`).
    pub traces: crate::traces::Traces,
    pub events: crate::events::Events,
    pub sampler: crate::compliance::incidents::Sampler,
    /// Unauthenticated refusals, logged once per source and minute.
    pub refusals: Arc<crate::auth::refusals::RefusalLog>,
    /// Single sign-on, when `[sso]` is configured.
    pub sso: Option<Arc<crate::sso::Sso>>,
    /// Unix seconds at start, for `created` fields of catalogue views.
    pub started_at: i64,
    /// Every background task and every request's detached work (owned
    /// here, drained and stopped by [`shutdown`]).
    pub tasks: Tasks,
}

impl AppState {
    /// Builds the state and the task set, and starts the background work
    /// on it (webhook dispatch, trace export, the incident sampler, the
    /// compliance sweep).
    pub fn new(config: Config, store: Store) -> AppState {
        let tasks = Tasks::new();
        let store = Arc::new(store);
        let allow_private_images = config.image_fetch_allow_private_targets;
        let metrics = Arc::new(crate::metrics::Metrics::new());
        let observer = metrics.clone();
        // Set once per store; a second AppState on the same store (tests)
        // keeps the first observer.
        let _ = store
            .writer_stats()
            .commit_observer
            .set(Box::new(move |elapsed| observer.store_commit(elapsed)));
        let events = crate::events::Events::start(&config, store.clone(), metrics.clone(), &tasks);
        let traces = crate::traces::Traces::start(&config, metrics.clone(), &tasks);
        let connect_timeout = config
            .providers
            .iter()
            .map(|p| p.connect_timeout)
            .max()
            .unwrap_or(std::time::Duration::from_secs(5));
        let classifier = config.risk_rules.clone();
        let sampler = crate::compliance::incidents::Sampler::start(
            crate::compliance::incidents::SamplerSettings {
                share: config.incident_sample_share,
                window: std::time::Duration::from_secs(config.incident_window_seconds),
                refusal_burst: config.incident_refusal_burst,
            },
            store.clone(),
            classifier.clone(),
            events.clone(),
            &tasks,
        );
        crate::compliance::start_sweeper(
            store.clone(),
            std::time::Duration::from_secs(config.compliance_sweep_seconds),
            crate::billing::retention::Retention {
                usage_days: config.usage_retention_days,
                audit_days: config.audit_retention_days,
            },
            &tasks,
        );
        let catalogue = LiveCatalogue::load(&config, &store).unwrap_or_else(|e| {
            tracing::error!(error = %e, "reading the stored catalogue entries failed; serving the configuration's only");
            LiveCatalogue::from_config(&config)
        });
        let ledger = crate::billing::ledger::Ledger::load(&store, crate::base::time::now_ms())
            .unwrap_or_else(|e| {
                // Each key and wallet is then read on its first request.
                tracing::error!(error = %e, "loading the ledger failed; reading it as requests come");
                crate::billing::ledger::Ledger::default()
            });
        let sso = config
            .sso
            .clone()
            .map(|sso| Arc::new(crate::sso::Sso::new(sso)));
        AppState {
            sso,
            catalogue: Arc::new(catalogue),
            config: Arc::new(config),
            keys: Keys::new(store.clone()),
            providers: crate::providers::Providers::new(connect_timeout, allow_private_images),
            classifier,
            sampler,
            refusals: Arc::default(),
            limiter: Arc::default(),
            sign_in_throttle: Arc::default(),
            key_tokens: Arc::default(),
            model_limits: Arc::default(),
            ledger: Arc::new(ledger),
            router: Arc::default(),
            metrics,
            traces,
            events,
            store,
            started_at: crate::base::time::now_ms() / 1000,
            tasks,
        }
    }
}

pub fn router(state: AppState) -> Router {
    crate::api::routes()
        .merge(crate::api::ui::routes())
        .fallback(|| async { ApiError::not_found("no such route") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(Code::MethodNotAllowed, "this route does not accept that method")
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(
            state.config.body_read_timeout,
            crate::api::serve::body_deadline,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .layer(middleware::from_fn(refuse_oversized))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            crate::metrics::track,
        ))
        .layer(middleware::from_fn(render_in_dialect))
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request| {
            let id = request.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("");
            // The path is cut short: every line logged in the span repeats it.
            let path = crate::auth::refusals::bounded_path(request.uri().path());
            tracing::info_span!("request", method = %request.method(), path = %path, request_id = %id)
        }))
        .layer(SetSensitiveRequestHeadersLayer::new([
            header::AUTHORIZATION,
            HeaderName::from_static("x-api-key"),
            HeaderName::from_static("x-goog-api-key"),
        ]))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID.clone()))
        .layer(SetRequestIdLayer::new(REQUEST_ID.clone(), MakeRequestUuid))
        .with_state(state)
}

/// Refuses a declared body above the limit before authentication or any
/// reading; a body without a length is cut at the limit when read.
async fn refuse_oversized(request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return payload_too_large().into_response();
    }
    next.run(request).await
}

pub fn payload_too_large() -> ApiError {
    ApiError::new(
        Code::PayloadTooLarge,
        format!(
            "the request body exceeds {} MB",
            MAX_BODY_BYTES / (1024 * 1024)
        ),
    )
}

/// A server bound to its address, not yet serving.
pub struct Server {
    pub state: AppState,
    pub listener: TcpListener,
    pub admin: tokio::net::UnixListener,
    pub shutdown: CancellationToken,
}

impl Server {
    pub async fn bind(state: AppState) -> std::io::Result<Server> {
        let listener = TcpListener::bind(state.config.listen).await?;
        let admin = admin::socket::bind(&state.config.data_dir)?;
        Ok(Server {
            state,
            listener,
            admin,
            shutdown: CancellationToken::new(),
        })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until the token is cancelled, then shuts down in order
    /// ([`shutdown::run`]).
    pub async fn run(self) -> std::io::Result<()> {
        let Server {
            state,
            listener,
            admin,
            shutdown,
        } = self;
        let socket = admin::socket::serve(admin, state.clone(), shutdown.clone());
        let app = router(state.clone());
        let cut = CancellationToken::new();
        let serving = crate::api::serve::serve(
            listener,
            app,
            state.config.header_read_timeout,
            (shutdown.clone(), cut.clone()),
            state.tasks.clone(),
        );
        let mut serving = std::pin::pin!(serving);
        let served = tokio::select! {
            result = &mut serving => { result?; true }
            () = shutdown.cancelled() => false,
        };
        shutdown::run(&state, (!served).then_some(serving), cut, socket).await;
        Ok(())
    }
}

/// Registers for SIGTERM and Ctrl-C now (so a signal that arrives before
/// the returned future is polled is not lost) and resolves on either.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate());
        let interrupt = signal(SignalKind::interrupt());
        async move {
            match (term, interrupt) {
                (Ok(mut term), Ok(mut interrupt)) => {
                    tokio::select! {
                        _ = term.recv() => {},
                        _ = interrupt.recv() => {},
                    }
                }
                _ => std::future::pending::<()>().await,
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
