//! The HTTP accept loop: hyper's connection builder, with the timeouts
//! `axum::serve` does not set, and graceful shutdown.
//!
//! A client has `header_read_timeout` to send a request's head (HTTP/1; a
//! client sending a byte at a time is cut off) and then `body_read_timeout`
//! to send its body ([`body_deadline`], answered 408 `request_timeout`).
//! Each connection is its own task on the task set (detached request work),
//! so a slow client never holds up others; when shutdown's grace runs out,
//! `cut` drops the connections still open, and a stream dropped that way
//! is charged like one its caller abandoned.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, HttpBody};
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::base::error::{ApiError, Code};
use crate::base::tasks::Tasks;

/// Serves `app` on `listener` until `stop` is cancelled, then waits for
/// the open connections to finish their requests (or for `cut`).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    header_read_timeout: Duration,
    (stop, cut): (CancellationToken, CancellationToken),
    tasks: Tasks,
) -> std::io::Result<()> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    builder.http2().timer(TokioTimer::new());
    let graceful = GracefulShutdown::new();
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: back off, keep serving.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let _ = tcp.set_nodelay(true);
        let service = app
            .clone()
            .map_request(move |request: Request<hyper::body::Incoming>| {
                // The peer's address: the sign-in throttle's source, and
                // the source named in the log of refused requests.
                let mut request = request.map(Body::new);
                request.extensions_mut().insert(ConnectInfo(peer));
                request
            });
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(tcp), TowerToHyperService::new(service))
            .into_owned();
        let connection = graceful.watch(connection);
        let cut = cut.clone();
        tasks.detach(async move {
            tokio::select! {
                ended = connection => if let Err(e) = ended {
                    tracing::debug!(error = %e, "connection ended with an error");
                },
                // Dropping the connection drops its requests' futures and
                // bodies (a stream's drop charges what it relayed).
                () = cut.cancelled() => {}
            }
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = cut.cancelled() => {}
    }
    Ok(())
}

/// Gives a request's body `timeout` to arrive in full; a body still coming
/// after that ends in error and the answer is 408 `request_timeout`.
pub async fn body_deadline(
    State(timeout): State<Duration>,
    request: Request,
    next: Next,
) -> Response {
    if request.body().is_end_stream() {
        return next.run(request).await;
    }
    let expired = Arc::new(AtomicBool::new(false));
    let (parts, body) = request.into_parts();
    let sleep = Box::pin(tokio::time::sleep(timeout));
    let state = (body.into_data_stream(), sleep, expired.clone(), false);
    let timed = futures::stream::unfold(state, |(mut data, mut sleep, expired, over)| async move {
        if over {
            return None;
        }
        tokio::select! {
            item = data.next() => item.map(|item| (item, (data, sleep, expired, false))),
            () = &mut sleep => {
                expired.store(true, Ordering::SeqCst);
                let error = std::io::Error::new(std::io::ErrorKind::TimedOut, "the request body did not arrive in time");
                Some((Err(axum::Error::new(error)), (data, sleep, expired, true)))
            }
        }
    });
    let response = next
        .run(Request::from_parts(parts, Body::from_stream(timed)))
        .await;
    if expired.load(Ordering::SeqCst) {
        return timed_out(timeout).into_response();
    }
    response
}

fn timed_out(timeout: Duration) -> ApiError {
    ApiError::new(
        Code::RequestTimeout,
        format!(
            "the request body did not arrive within {} s",
            timeout.as_secs()
        ),
    )
}
