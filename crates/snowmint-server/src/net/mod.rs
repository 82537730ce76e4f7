//! The node's front door: accepting connections on every listener and
//! holding every client to limits, so that no client, however it behaves,
//! can take the node down or starve the others (docs/ARCHITECTURE.md §3,
//! invariant 6).
//!
//! [`Front`] serves any protocol: HTTP services ([`Http`]: the API's
//! routes, gRPC's) and protocols of their own over the byte stream
//! ([`Stream`] of a [`ByteStream`]). The connection cap, accept
//! backpressure, TLS, the deadlines and the metrics are the front's, the
//! same for every listener; a protocol only speaks on the connections it
//! is given (see `crate::listener`).
//!
//! [`Limits`] holds the settings and names each limit as
//! `snowmint_limit_reached_total` counts it. A gate shared by every
//! listener caps the connections open at once, under the process's
//! descriptor limit: at the cap it stops accepting, so that new clients
//! wait in the kernel's queue instead of being refused. Each accepted
//! connection then runs under its own deadlines (its first request, a
//! request head, idling, HTTP/2 keep-alive pings, its age, a write the
//! client does not read, on the socket itself) as HTTP/1.1, HTTP/2 or a
//! byte stream, and [`Tls`] wraps it in rustls on every
//! listener whose protocol carries it, with certificates read again when
//! their files change.
//!
//! What a client costs at most: a connection holds its socket buffers, an
//! HTTP/1.1 read buffer (hyper's, about 400 KiB at most) or, for HTTP/2,
//! [`H2_SEND_BUFFER`](limits::H2_SEND_BUFFER) per stream, or a byte
//! stream's request and answers (bounded by its protocol's module);
//! a gRPC call in flight also holds its queue (two batches,
//! `grpc/ids.rs`). Connections are capped, streams per connection and
//! gRPC calls per node too, so memory is bounded by the limits, whatever
//! the number of clients.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

mod activity;
mod connection;
mod gate;
mod io;
pub(crate) mod limits;
mod tls;

pub(crate) use activity::Connection;
pub(crate) use connection::{ByteStream, Http, Session, Stream};
pub use limits::{Limit, Limits};
pub use tls::{Tls, TlsError, TlsFiles};

use connection::{Link, Serve};
use gate::{Gate, Permit};
use io::Deadlined;
use limits::TLS_HANDSHAKE_TIMEOUT;

use crate::listener::Listener;
use crate::metrics::Metrics;

/// What every listener of a node shares: the limits, the connection cap,
/// TLS, the metrics, and the shutdown.
#[derive(Debug, Clone)]
pub(crate) struct Front {
    limits: Limits,
    tls: Option<Arc<Tls>>,
    gate: Arc<Gate>,
    metrics: Metrics,
    stopping: watch::Receiver<bool>,
}

impl Front {
    /// A front end with `limits` for `listeners` listeners, with TLS when
    /// given, whose connections are asked to close once `stopping` turns
    /// true.
    pub(crate) fn new(
        limits: Limits,
        tls: Option<Arc<Tls>>,
        listeners: usize,
        metrics: Metrics,
        stopping: watch::Receiver<bool>,
    ) -> Front {
        Front {
            tls,
            gate: Gate::new(
                limits.max_connections,
                listeners > 1,
                limits.request_timeout,
                metrics.clone(),
            ),
            limits,
            metrics,
            stopping,
        }
    }

    /// Accepts connections on `listener` and serves `protocol` on each,
    /// letting each idle at most `idle` between requests, until
    /// `stopping` turns true; then closes the listener (new connections
    /// are refused) and returns once every connection of it has closed:
    /// gently, each within a request timeout.
    pub(crate) async fn serve<P: Serve>(
        &self,
        listener: TcpListener,
        kind: Listener,
        idle: Duration,
        protocol: P,
    ) {
        let mut stopping = self.stopping.clone();
        // Each connection holds a receiver; all of them dropped means all
        // connections closed.
        let (open, _) = watch::channel(());
        let mut failing = false;
        loop {
            let accepted = tokio::select! {
                accepted = self.accept(&listener, kind, &mut failing) => accepted,
                () = stopped(&mut stopping) => break,
            };
            let (stream, permit) = accepted;
            let front = self.clone();
            let protocol = protocol.clone();
            let alive = open.subscribe();
            tokio::spawn(async move {
                front.connection(stream, kind, idle, protocol, permit).await;
                drop(alive);
            });
        }
        drop(listener);
        tracing::info!(
            listener = kind.name(),
            "shutting down: no new connections; finishing requests in flight"
        );
        open.closed().await;
    }

    /// The next connection, once the cap lets one in. At the cap, a
    /// client that is waiting is accepted (one at a time, from the
    /// descriptors in reserve) and room is made for it (see `gate.rs`).
    async fn accept(
        &self,
        listener: &TcpListener,
        kind: Listener,
        failing: &mut bool,
    ) -> (TcpStream, Permit) {
        loop {
            let accepted = if self.gate.has_room(kind) {
                listener.accept().await
            } else {
                tokio::select! {
                    () = self.gate.room_for(kind) => listener.accept().await,
                    accepted = listener.accept() => accepted,
                }
            };
            match accepted {
                Ok((stream, _)) => {
                    if std::mem::take(failing) {
                        tracing::info!(listener = kind.name(), "accepting connections again");
                    }
                    let permit = match self.gate.try_admit(kind) {
                        Some(permit) => permit,
                        None => self.gate.admit_waiting(kind).await,
                    };
                    return (stream, permit);
                }
                Err(error) => *failing = pause_after(kind, &error, *failing).await,
            }
        }
    }

    /// Serves one connection to its end: its TLS handshake when the
    /// listener's protocol carries TLS and the node has it, then
    /// `protocol`.
    async fn connection<P: Serve>(
        &self,
        stream: TcpStream,
        kind: Listener,
        idle: Duration,
        protocol: P,
        permit: Permit,
    ) {
        // No Nagle: the tail of an answer must not wait for the ACK of its
        // head (a delayed ACK costs 40 ms).
        let _ = stream.set_nodelay(true);
        let expired = Arc::new(AtomicBool::new(false));
        let io = Deadlined::new(stream, self.limits.request_timeout, Arc::clone(&expired));
        let activity = permit.activity();
        let mut stopping = self.stopping.clone();
        let link = Link {
            limits: &self.limits,
            idle,
            metrics: &self.metrics,
            activity,
            write_expired: &expired,
            stopping: &mut stopping,
        };
        let Some(config) = self.tls.as_ref().and_then(|tls| tls.config(kind)) else {
            protocol.serve(io, false, link).await;
            return;
        };
        // The handshake has a deadline of its own, and counts towards the
        // first request's. Until it is over, the connection is the first
        // the gate closes to make room.
        let deadline = activity.origin + self.limits.request_timeout.min(TLS_HANDSHAKE_TIMEOUT);
        let acceptor = tokio_rustls::TlsAcceptor::from(config);
        activity.set_handshaking(true);
        let handshake = tokio::select! {
            handshake = tokio::time::timeout_at(deadline, acceptor.accept(io)) => handshake,
            // Counted by the gate when it chose this connection.
            () = activity.evicted() => return,
        };
        activity.set_handshaking(false);
        let stream = match handshake {
            Ok(Ok(stream)) => stream,
            Ok(Err(error)) => {
                // A cleartext client, a client certificate refused, a
                // client that does not trust ours: its own business, but
                // counted, since a rise says something is misconfigured.
                tracing::debug!(listener = kind.name(), %error, "TLS handshake failed");
                self.metrics.tls_handshake_failed(kind);
                return;
            }
            Err(_) => {
                self.metrics.limit_reached(Limit::TlsHandshakeTimeout);
                return;
            }
        };
        let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
        protocol.serve(stream, h2, link).await;
        drop(permit);
    }
}

/// Waits until `stopping` turns true (or its sender is gone).
async fn stopped(stopping: &mut watch::Receiver<bool>) {
    let _ = stopping.wait_for(|stop| *stop).await;
}

/// After a failed accept on `listener`: nothing for errors of the one
/// connection (it is gone), a pause for errors of the process, such as
/// running out of file descriptors, which only closing connections can
/// cure. Returns whether accepting is failing; logs when it starts to.
async fn pause_after(listener: Listener, error: &std::io::Error, failing: bool) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        error.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return failing;
    }
    if !failing {
        tracing::warn!(
            listener = listener.name(),
            %error,
            "cannot accept connections; trying again every 100 ms"
        );
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    true
}
