//! Accepting connections and serving HTTP/1.1 on them, with a deadline on
//! reading each request's head.
//!
//! `axum::serve` would do, except that it reads request heads without a
//! deadline: a client that opens connections and sends its headers a byte
//! at a time (slowloris) holds each connection, and its file descriptor,
//! for as long as it likes, until the process runs out of descriptors and
//! stops answering everyone. Here a connection must deliver each request
//! head within the request timeout, or it is closed; the same deadline
//! closes connections left idle between requests.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// Serves `app` on `listener` until `shutdown` resolves; then closes the
/// listener (new connections are refused), lets requests in flight finish
/// and returns once every connection has closed.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    head_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) {
    let connections = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    // Whether accepting has been failing, so that an episode is logged once.
    let mut failing = false;
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    failing = pause_after(&error, failing).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        if std::mem::take(&mut failing) {
            tracing::info!("accepting connections again");
        }
        let service = TowerToHyperService::new(
            app.clone()
                .map_request(|request: Request<Incoming>| request.map(Body::new)),
        );
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(head_timeout)
            .serve_connection(TokioIo::new(stream), service);
        let connection = connections.watch(connection);
        tokio::spawn(async move {
            // A client that hangs up, or sends what is not HTTP, ends its
            // own connection; there is nobody to tell.
            if let Err(error) = connection.await {
                tracing::trace!(%error, "connection ended");
            }
        });
    }
    drop(listener);
    tracing::info!("shutting down: no new connections; finishing requests in flight");
    connections.shutdown().await;
}

/// After a failed accept: nothing for errors of the one connection (it is
/// gone), a pause for errors of the process, such as running out of file
/// descriptors, which only closing connections can cure. Returns whether
/// accepting is failing; logs when it starts to.
async fn pause_after(error: &std::io::Error, failing: bool) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        error.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return failing;
    }
    if !failing {
        tracing::warn!(%error, "cannot accept connections; trying again every 100 ms");
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    true
}
