//! The loopback webhook receiver: Tollgate's operator webhook URL points
//! here, so every `request.completed` event is delivered during the run.
//! It counts deliveries and answers 204.
#![allow(clippy::disallowed_methods)] // Test and bench code spawns its own clients and servers.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::Bytes;
use axum::http::StatusCode;
use axum::routing::post;

#[derive(Clone, Default)]
pub struct Receiver {
    pub deliveries: Arc<AtomicU64>,
}

impl Receiver {
    /// The receiver's routes: `POST /hook` counts and answers 204.
    pub fn router(&self) -> Router {
        let count = self.deliveries.clone();
        Router::new().route(
            "/hook",
            post(move |body: Bytes| {
                let count = count.clone();
                async move {
                    std::hint::black_box(body);
                    count.fetch_add(1, Ordering::Relaxed);
                    StatusCode::NO_CONTENT
                }
            }),
        )
    }

    /// Starts on loopback in this process; returns the hook's URL.
    pub async fn start(&self) -> (SocketAddr, String) {
        let (listener, addr) = super::listen(0).await;
        tokio::spawn(super::serve_on(listener, self.router()));
        (addr, format!("http://{addr}/hook"))
    }

    pub fn count(&self) -> u64 {
        self.deliveries.load(Ordering::Relaxed)
    }
}
