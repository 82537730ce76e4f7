//! One client connection, from accept to close, with its deadlines:
//!
//! - the TLS handshake and the first request must arrive within the
//!   request timeout of the accept, or the connection is closed (a silent
//!   client holds a descriptor for that long, no longer);
//! - a connection with no request in flight for the request timeout is
//!   asked to close (HTTP/2 GOAWAY), and closed a request timeout later;
//! - a write that cannot go out for the request timeout ends it
//!   ([`Deadlined`]);
//! - HTTP/2 pings it every request timeout, and ends it when a ping is
//!   not answered within another; HTTP/1.1 must send each request head
//!   within the request timeout (hyper's header deadline);
//! - past the maximum age it is asked to close, and closed a request
//!   timeout later;
//! - at shutdown it is asked to close, and closed a request timeout later.
//!
//! Each limit that ends a connection is counted in
//! `snowmint_limit_reached_total`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::Body as AxumBody;
use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::server::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;
use tower::{Service, ServiceExt};

use super::activity::{Activity, Busy, Connection};
use super::limits::{H2_SEND_BUFFER, Limit, Limits};
use crate::metrics::Metrics;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The HTTP version a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    Http1,
    Http2,
}

/// A response body that keeps its request counted as in flight until it
/// is written to the end, or dropped.
pub(crate) struct Tracked<B> {
    inner: B,
    _busy: Busy,
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// `service` as hyper wants it, counting each request in `activity`.
#[derive(Clone)]
struct Counting<S> {
    service: S,
    activity: Arc<Activity>,
}

impl<S, B> hyper::service::Service<Request<Incoming>> for Counting<S>
where
    S: Service<Request<AxumBody>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Unpin,
{
    type Response = Response<Tracked<B>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn call(&self, mut request: Request<Incoming>) -> Self::Future {
        let busy = self.activity.busy();
        request
            .extensions_mut()
            .insert(Connection(Arc::clone(&self.activity)));
        let call = self.service.clone().oneshot(request.map(AxumBody::new));
        Box::pin(async move {
            let response = call.await?;
            Ok(response.map(|inner| Tracked { inner, _busy: busy }))
        })
    }
}

/// What ends a connection gently: HTTP/2 sends GOAWAY and finishes the
/// calls in flight; HTTP/1.1 closes after the request in flight.
trait Graceful: Future<Output = Result<(), hyper::Error>> {
    fn close_gently(self: Pin<&mut Self>);
}

impl<I, S, B> Graceful for http1::Connection<I, S>
where
    S: hyper::service::HttpService<Incoming, ResBody = B>,
    S::Error: Into<BoxError>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    B: Body + 'static,
    B::Error: Into<BoxError>,
{
    fn close_gently(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

impl<I, S, B> Graceful for http2::Connection<I, S, TokioExecutor>
where
    S: hyper::service::HttpService<Incoming, ResBody = B>,
    S::Error: Into<BoxError>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    fn close_gently(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

/// Serves `service` on `io` with `protocol` until the client or a limit
/// ends it, or until `stopping` turns true and the calls in flight end.
/// `activity` is the connection's (its accept time starts the first
/// request's deadline); `write_expired` is the flag of the socket's write
/// deadline ([`Deadlined`](super::io::Deadlined)).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn serve<IO, S, B>(
    io: IO,
    protocol: Protocol,
    service: S,
    limits: &Limits,
    metrics: &Metrics,
    activity: &Arc<Activity>,
    write_expired: &AtomicBool,
    stopping: &mut tokio::sync::watch::Receiver<bool>,
) where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: Service<Request<AxumBody>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Unpin + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let timeout = limits.request_timeout;
    let io = TokioIo::new(io);
    if protocol == Protocol::Http2 {
        activity.set_max_streams(u64::from(limits.max_streams));
    }
    let service = Counting {
        service,
        activity: Arc::clone(activity),
    };
    let ended = match protocol {
        Protocol::Http1 => {
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(timeout)
                .serve_connection(io, service);
            drive(connection, activity, limits, stopping).await
        }
        Protocol::Http2 => {
            let connection = http2::Builder::new(TokioExecutor::new())
                .timer(TokioTimer::new())
                .max_concurrent_streams(limits.max_streams)
                .keep_alive_interval(timeout)
                .keep_alive_timeout(timeout)
                .max_send_buf_size(H2_SEND_BUFFER)
                .serve_connection(io, service);
            drive(connection, activity, limits, stopping).await
        }
    };
    let limit = match ended {
        Ended::Limit(limit) => Some(limit),
        _ if write_expired.load(Ordering::Relaxed) => Some(Limit::WriteTimeout),
        Ended::Error(error) if error.is_timeout() => Some(match protocol {
            Protocol::Http1 => Limit::HeaderTimeout,
            Protocol::Http2 => Limit::KeepaliveTimeout,
        }),
        Ended::Error(error) => {
            // A client that hangs up, or sends what is not HTTP, ends its
            // own connection; there is nobody to tell.
            tracing::trace!(%error, "connection ended");
            None
        }
        Ended::Closed => None,
    };
    if let Some(limit) = limit {
        tracing::debug!(limit = limit.name(), "connection closed by a limit");
        metrics.limit_reached(limit);
    }
}

/// How a connection ended.
enum Ended {
    /// It finished (the client closed it, or it closed gently).
    Closed,
    /// With an error of the connection.
    Error(hyper::Error),
    /// A limit of the driver closed it.
    Limit(Limit),
}

/// Runs `connection`, closing it at its deadlines.
async fn drive<C: Graceful>(
    connection: C,
    activity: &Activity,
    limits: &Limits,
    stopping: &mut tokio::sync::watch::Receiver<bool>,
) -> Ended {
    let timeout = limits.request_timeout;
    let mut connection = std::pin::pin!(connection);
    let old_at = activity.origin + limits.max_connection_age;
    // Set once the connection was asked to close: it is closed then, and
    // why (for the metrics).
    let mut closing: Option<(Instant, Option<Limit>)> = None;
    let mut stop_seen = *stopping.borrow();
    if stop_seen {
        connection.as_mut().close_gently();
        closing = Some((Instant::now() + timeout, None));
    }
    loop {
        // While a request is in flight there is no idle deadline; look
        // again after a request timeout.
        let check_at = activity
            .deadline(timeout)
            .unwrap_or_else(|| Instant::now() + timeout);
        tokio::select! {
            ended = connection.as_mut() => {
                return match (ended, closing) {
                    (Err(error), _) => Ended::Error(error),
                    (Ok(()), Some((_, Some(limit)))) => Ended::Limit(limit),
                    (Ok(()), _) => Ended::Closed,
                };
            }
            () = tokio::time::sleep_until(check_at), if closing.is_none() => {
                let now = Instant::now();
                match activity.deadline(timeout) {
                    Some(at) if at <= now => {
                        if !activity.started() {
                            // Nothing in flight: nothing to finish.
                            return Ended::Limit(Limit::FirstRequestTimeout);
                        }
                        connection.as_mut().close_gently();
                        closing = Some((now + timeout, Some(Limit::IdleTimeout)));
                    }
                    _ => {}
                }
            }
            () = tokio::time::sleep_until(old_at), if closing.is_none() => {
                connection.as_mut().close_gently();
                closing = Some((Instant::now() + timeout, Some(Limit::MaxConnectionAge)));
            }
            () = tokio::time::sleep_until(closing.map_or(old_at, |(at, _)| at)), if closing.is_some() => {
                return match closing {
                    Some((_, Some(limit))) => Ended::Limit(limit),
                    _ => Ended::Closed,
                };
            }
            () = activity.evicted(), if closing.is_none() => {
                // Made room for a new client: an idle connection closes
                // gently (at once, nothing is in flight), a busy one at
                // once, since its client is what keeps others out.
                if activity.in_flight() > 0 {
                    return Ended::Limit(Limit::Evicted);
                }
                connection.as_mut().close_gently();
                closing = Some((Instant::now() + timeout, None));
            }
            changed = stopping.changed(), if !stop_seen => {
                stop_seen = changed.is_err() || *stopping.borrow();
                if stop_seen && closing.is_none() {
                    connection.as_mut().close_gently();
                    closing = Some((Instant::now() + timeout, None));
                }
            }
        }
    }
}
