//! What the gateway benchmark is made of, one module each: the mock
//! upstream, the bare proxy, the load generator, the servers it starts as
//! child processes (and how their CPU and memory are read), Tollgate's
//! seeded store, the scaling runs on it, and the peer gateways.

pub mod load;
pub mod mock;
pub mod peers;
pub mod procs;
pub mod proxy;
pub mod receiver;
pub mod report;
pub mod scale;
pub mod tollgate;

use std::net::SocketAddr;

/// A free loopback port: bound, read, released. The child that is handed
/// it binds it a moment later (nothing else on this machine races for it).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free loopback port")
}

/// Serves `router` on `addr` until the process ends (used by the role
/// processes and the in-process receiver).
pub async fn serve_on(listener: tokio::net::TcpListener, router: axum::Router) {
    axum::serve(listener, router)
        .await
        .expect("benchmark server stopped");
}

/// A listener on loopback, port `port` (0: any), with a backlog deep
/// enough for thousands of streams opening at once.
pub async fn listen(port: u16) -> (tokio::net::TcpListener, SocketAddr) {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket.set_reuseaddr(true).expect("SO_REUSEADDR");
    socket
        .bind(SocketAddr::from(([127, 0, 0, 1], port)))
        .expect("cannot bind loopback");
    let listener = socket.listen(4096).expect("cannot listen");
    let addr = listener
        .local_addr()
        .expect("bound listener has an address");
    (listener, addr)
}
