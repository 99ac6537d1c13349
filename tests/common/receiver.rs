//! A webhook receiver on loopback: it records every delivery (path,
//! headers, raw body bytes) and answers by path:
//!
//! | path | answer |
//! |---|---|
//! | `/fail...` | 500 |
//! | `/hang...` | nothing for 60 s (past the gateway's 5 s timeout) |
//! | anything else | 204 |

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use serde_json::Value;

#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON delivery")
    }

    pub fn event(&self) -> String {
        self.json()["event"].as_str().unwrap_or_default().to_owned()
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    }
}

#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<Received>>>);

pub struct Receiver {
    pub base_url: String,
    log: Log,
    _task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let log = Log::default();
        let app = Router::new().fallback(receive).with_state(log.clone());
        let (addr, task) = super::serve(app).await;
        Receiver {
            base_url: format!("http://{addr}"),
            log,
            _task: task,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// Everything received on `path`, in arrival order.
    pub fn at(&self, path: &str) -> Vec<Received> {
        self.log
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.path == path)
            .cloned()
            .collect()
    }

    /// Waits (bounded) until `path` has received `n` deliveries.
    pub async fn wait_for(&self, path: &str, n: usize) -> Vec<Received> {
        for _ in 0..300 {
            let got = self.at(path);
            if got.len() >= n {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let got = self.at(path);
        panic!(
            "{path} received {} deliveries, expected {n}: {:?}",
            got.len(),
            got.iter().map(Received::event).collect::<Vec<_>>()
        );
    }
}

async fn receive(State(log): State<Log>, uri: Uri, headers: HeaderMap, body: Bytes) -> StatusCode {
    let path = uri.path().to_owned();
    log.0.lock().unwrap().push(Received {
        path: path.clone(),
        headers,
        body,
    });
    if path.starts_with("/fail") {
        StatusCode::INTERNAL_SERVER_ERROR
    } else if path.starts_with("/hang") {
        tokio::time::sleep(Duration::from_secs(60)).await;
        StatusCode::NO_CONTENT
    } else {
        StatusCode::NO_CONTENT
    }
}
