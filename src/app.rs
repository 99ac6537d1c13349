//! The composition root: builds every part (store handles, catalogue,
//! ledger, providers, classifier, events, metrics, traces) once, the
//! application state over them, and runs the server: the HTTP router, the
//! admin socket, and graceful shutdown.
//!
//! Every background task runs on the one task set made here ([`Tasks`]);
//! shutdown on SIGTERM or Ctrl-C follows the order in [`shutdown`].

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::admin;
use crate::api::router::router;
use crate::api::state::{AppState, Shared};
use crate::auth::keys::Keys;
use crate::base::tasks::Tasks;
use crate::catalogue::overlay::LiveCatalogue;
use crate::config::Config;
use crate::gateway::{Gateway, Settings};
use crate::store::Store;

mod shutdown;

/// Builds the task set, every part once and the application state over
/// them; starts the background work on the task set (webhook dispatch,
/// trace export, the incident sampler, the compliance sweep).
pub fn build(config: Config, store: Store) -> AppState {
    let tasks = Tasks::new();
    let store = Arc::new(store);
    let metrics = Arc::new(crate::metrics::Metrics::new());
    observe_store_commits(&store, &metrics);
    let events =
        crate::events::Events::start(&config.webhooks(), store.clone(), metrics.clone(), &tasks);
    let traces = crate::traces::Traces::start(&config.traces(), metrics.clone(), &tasks);
    let classifier = config.risk_rules.classifier();
    let sampler = start_compliance(&config, &store, &classifier, &events, &tasks);
    let catalogue = Arc::new(load_catalogue(&config, &store));
    let ledger = Arc::new(load_ledger(&store));
    let sso = config
        .sso
        .clone()
        .map(|sso| Arc::new(crate::sso::Sso::new(sso)));
    let providers = crate::providers::Providers::new(
        upstream_connect_timeout(&config),
        config.image_fetch_allow_private_targets,
    );
    let gateway = Arc::new(Gateway {
        keys: Keys::new(store.clone()),
        store,
        catalogue,
        ledger,
        providers,
        router: Arc::default(),
        model_limits: Arc::default(),
        key_tokens: Arc::default(),
        classifier,
        sampler,
        events,
        metrics,
        tasks,
        settings: Settings {
            free_multimodal_per_day: config.free_multimodal_per_day,
            judge_timeout: std::time::Duration::from_millis(config.judge_timeout_ms),
        },
    });
    AppState::new(Shared {
        gateway,
        sso,
        config: Arc::new(config),
        refusals: Arc::default(),
        limiter: Arc::default(),
        sign_in_throttle: Arc::default(),
        traces,
        started_at: crate::base::time::now_ms() / 1000,
    })
}

/// Times every store write transaction into the metrics. Set once per
/// store; a second AppState on the same store (tests) keeps the first
/// observer.
fn observe_store_commits(store: &Store, metrics: &Arc<crate::metrics::Metrics>) {
    let observer = metrics.clone();
    let _ = store
        .writer_stats()
        .commit_observer
        .set(Box::new(move |elapsed| observer.store_commit(elapsed)));
}

/// Starts the incident sampler and the compliance sweep (retention
/// included) on the task set; returns the sampler the gateway feeds.
fn start_compliance(
    config: &Config,
    store: &Arc<Store>,
    classifier: &Arc<crate::compliance::Classifier>,
    events: &crate::events::Events,
    tasks: &Tasks,
) -> crate::compliance::incidents::Sampler {
    let sampler = crate::compliance::incidents::Sampler::start(
        crate::compliance::incidents::SamplerSettings {
            share: config.incident_sample_share,
            window: std::time::Duration::from_secs(config.incident_window_seconds),
            refusal_burst: config.incident_refusal_burst,
        },
        store.clone(),
        classifier.clone(),
        events.clone(),
        tasks,
    );
    crate::compliance::start_sweeper(
        store.clone(),
        std::time::Duration::from_secs(config.compliance_sweep_seconds),
        crate::billing::retention::Retention {
            usage_days: config.usage_retention_days,
            audit_days: config.audit_retention_days,
        },
        tasks,
    );
    sampler
}

/// The configured catalogue with the stored entries over it; the
/// configured one alone when the stored entries cannot be read.
fn load_catalogue(config: &Config, store: &Store) -> LiveCatalogue {
    LiveCatalogue::load(&config.providers, &config.models, store).unwrap_or_else(|e| {
        tracing::error!(error = %e, "reading the stored catalogue entries failed; serving the configuration's only");
        LiveCatalogue::configured(&config.providers, &config.models)
    })
}

/// The ledger as stored; an empty one when loading fails (each key and
/// wallet is then read on its first request).
fn load_ledger(store: &Store) -> crate::billing::ledger::Ledger {
    crate::billing::ledger::Ledger::load(store, crate::base::time::now_ms()).unwrap_or_else(|e| {
        tracing::error!(error = %e, "loading the ledger failed; reading it as requests come");
        crate::billing::ledger::Ledger::default()
    })
}

/// The HTTP client's connect timeout: the longest any provider asks for
/// (5 s when no provider is configured).
fn upstream_connect_timeout(config: &Config) -> std::time::Duration {
    config
        .providers
        .iter()
        .map(|p| p.connect_timeout)
        .max()
        .unwrap_or(std::time::Duration::from_secs(5))
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
        let context = admin::Context {
            store: state.store.clone(),
            keys: state.keys.clone(),
            sign_in_throttle: state.sign_in_throttle.clone(),
            ledger: state.ledger.clone(),
        };
        let socket = admin::socket::serve(
            admin,
            &state.config.data_dir,
            context,
            &state.tasks,
            shutdown.clone(),
        );
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
