//! One client connection, from accept to close, with its deadlines:
//!
//! - the TLS handshake and the first request must arrive within the
//!   request timeout of the accept, or the connection is closed (a silent
//!   client holds a descriptor for that long, no longer);
//! - a connection with no request in flight for its listener's idle
//!   timeout (the request timeout, unless the listener has its own) is
//!   asked to close (HTTP/2 GOAWAY; a byte stream stops reading), and
//!   closed a request timeout later;
//! - a write that cannot go out for the request timeout ends it
//!   ([`Deadlined`](super::io::Deadlined));
//! - HTTP/2 pings it every request timeout, and ends it when a ping is
//!   not answered within another; HTTP/1.1 must send each request head
//!   within the request timeout (hyper's header deadline);
//! - past the maximum age an HTTP connection is asked to close, and
//!   closed a request timeout later (a byte stream has no way to tell its
//!   client, so only idling, room for others and shutdown close it);
//! - at shutdown it is asked to close, and closed a request timeout later.
//!
//! Each limit that ends a connection is counted in
//! `snowmint_limit_reached_total`. HTTP connections are served by hyper
//! ([`Http`]); a protocol of its own over the byte stream implements
//! [`ByteStream`], and is told through its [`Session`] when to close.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body as AxumBody;
use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::server::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use tower::{Service, ServiceExt};

use super::activity::{Activity, Busy, Connection};
use super::limits::{H2_SEND_BUFFER, Limit, Limits};
use crate::metrics::Metrics;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The front end's part of one connection, which every protocol is
/// served under.
pub(crate) struct Link<'a> {
    pub(crate) limits: &'a Limits,
    /// How long the connection may go without a request in flight.
    pub(crate) idle: Duration,
    pub(crate) metrics: &'a Metrics,
    /// Its accept time starts the first request's deadline.
    pub(crate) activity: &'a Arc<Activity>,
    /// The flag of the socket's write deadline.
    pub(crate) write_expired: &'a AtomicBool,
    pub(crate) stopping: &'a mut watch::Receiver<bool>,
}

impl Link<'_> {
    /// Counts the limit that ended the connection, if one did: the one the
    /// driver closed it for, else the write deadline's.
    fn record(&self, limit: Option<Limit>) {
        let limit = match limit {
            Some(limit) => Some(limit),
            None if self.write_expired.load(Ordering::Relaxed) => Some(Limit::WriteTimeout),
            None => None,
        };
        if let Some(limit) = limit {
            tracing::debug!(limit = limit.name(), "connection closed by a limit");
            self.metrics.limit_reached(limit);
        }
    }
}

/// How a listener speaks on each of its connections.
pub(crate) trait Serve: Clone + Send + Sync + 'static {
    /// Serves `io` to its end: the client's, a limit's, or the shutdown's.
    /// `h2`: TLS agreed on HTTP/2 by ALPN.
    fn serve<IO>(self, io: IO, h2: bool, link: Link<'_>) -> impl Future<Output = ()> + Send
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static;
}

/// An HTTP service (axum's routes, tonic's) as a listener's protocol.
#[derive(Clone)]
pub(crate) struct Http<S> {
    service: S,
    /// HTTP/2 whatever TLS agreed on (gRPC), else HTTP/1.1 unless TLS
    /// agreed on HTTP/2.
    h2_only: bool,
}

impl<S> Http<S> {
    /// HTTP/1.1, or HTTP/2 when TLS's ALPN agreed on it.
    pub(crate) fn one(service: S) -> Http<S> {
        Http {
            service,
            h2_only: false,
        }
    }

    /// HTTP/2 only (gRPC): with prior knowledge in cleartext.
    pub(crate) fn two(service: S) -> Http<S> {
        Http {
            service,
            h2_only: true,
        }
    }
}

impl<S, B> Serve for Http<S>
where
    S: Service<Request<AxumBody>, Response = Response<B>> + Clone + Send + Sync + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Unpin + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    fn serve<IO>(self, io: IO, h2: bool, link: Link<'_>) -> impl Future<Output = ()> + Send
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let protocol = if self.h2_only || h2 {
            Protocol::Http2
        } else {
            Protocol::Http1
        };
        serve_http(io, protocol, self.service, link)
    }
}

/// A protocol of its own over the byte stream (see `crate::listener`): it reads
/// requests and writes answers on one connection, and leaves accepting,
/// the cap, TLS, the deadlines and the metrics to the front end.
pub(crate) trait ByteStream: Clone + Send + Sync + 'static {
    /// Serves one connection, `io`, until its client is done or `session`
    /// asks it to close: mark each request in flight with
    /// [`Session::request`] from when it has arrived whole until its
    /// answer is written, and once [`Session::closing`] resolves, read no
    /// more requests, write what is owed and return. An error ends the
    /// connection (it is the client's: nobody is told).
    fn serve<IO>(self, io: IO, session: Session) -> impl Future<Output = io::Result<()>> + Send
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static;
}

/// A [`ByteStream`] as a listener's protocol.
#[derive(Clone)]
pub(crate) struct Stream<P>(pub(crate) P);

impl<P: ByteStream> Serve for Stream<P> {
    async fn serve<IO>(self, io: IO, _h2: bool, mut link: Link<'_>)
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let session = Session {
            activity: Some(Arc::clone(link.activity)),
            closing: Arc::new(Closing::default()),
        };
        let connection = Streamed {
            closing: Arc::clone(&session.closing),
            served: Box::pin(self.0.serve(io, session)),
        };
        let ended = drive(connection, &mut link, None).await;
        let limit = match ended {
            Ended::Cut(limit) => limit,
            Ended::Done(Err(error), _) => {
                // The client hung up, or sent what cannot be read.
                tracing::trace!(%error, "connection ended");
                None
            }
            Ended::Done(Ok(()), limit) => limit,
        };
        link.record(limit);
    }
}

/// A byte-stream connection as its protocol sees it: where it marks its
/// requests in flight (which the deadlines and the cap go by), and how
/// the front end asks it to close.
#[derive(Debug)]
pub(crate) struct Session {
    /// `None` for a connection served outside a listener.
    activity: Option<Arc<Activity>>,
    closing: Arc<Closing>,
}

/// The front end's request that a byte stream close.
#[derive(Debug, Default)]
struct Closing {
    asked: AtomicBool,
    told: Notify,
}

impl Session {
    /// A session for a connection served outside a listener (fuzzing the
    /// protocol over an in-memory stream): nothing asks it to close.
    pub(crate) fn detached() -> Session {
        Session {
            activity: None,
            closing: Arc::new(Closing::default()),
        }
    }

    /// Marks a request in flight until the returned guard is dropped:
    /// from when the request has arrived whole until its answer is
    /// written. No idle deadline runs meanwhile; the write deadline does.
    pub(crate) fn request(&self) -> Option<Busy> {
        self.activity.as_ref().map(Activity::busy)
    }

    /// Resolves once the front end asks the connection to close: it was
    /// idle too long, the node is shutting down, or a new client needs
    /// its place.
    pub(crate) async fn closing(&self) {
        let closing = &self.closing;
        let told = closing.told.notified();
        let mut told = std::pin::pin!(told);
        // Registered before the check, so that a request made in between
        // is not missed.
        told.as_mut().enable();
        if closing.asked.load(Ordering::Acquire) {
            return;
        }
        told.await;
    }
}

/// A byte stream's connection as the driver runs it.
struct Streamed<F> {
    closing: Arc<Closing>,
    served: Pin<Box<F>>,
}

impl<F: Future> Future for Streamed<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.served.as_mut().poll(cx)
    }
}

impl<F: Future> Graceful for Streamed<F> {
    fn close_gently(self: Pin<&mut Self>) {
        // Release: pairs with the Acquire in `Session::closing`.
        self.closing.asked.store(true, Ordering::Release);
        self.closing.told.notify_waiters();
    }
}

/// The HTTP version a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
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
trait Graceful: Future {
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
/// ends it, or until the shutdown asks it to close and the calls in
/// flight end.
async fn serve_http<IO, S, B>(io: IO, protocol: Protocol, service: S, mut link: Link<'_>)
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: Service<Request<AxumBody>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Unpin + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let limits = link.limits;
    let timeout = limits.request_timeout;
    let io = TokioIo::new(io);
    if protocol == Protocol::Http2 {
        link.activity.set_max_streams(u64::from(limits.max_streams));
    }
    let service = Counting {
        service,
        activity: Arc::clone(link.activity),
    };
    let age = Some(limits.max_connection_age);
    let ended = match protocol {
        Protocol::Http1 => {
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(timeout)
                .serve_connection(io, service);
            drive(connection, &mut link, age).await
        }
        Protocol::Http2 => {
            let connection = http2::Builder::new(TokioExecutor::new())
                .timer(TokioTimer::new())
                .max_concurrent_streams(limits.max_streams)
                .keep_alive_interval(timeout)
                .keep_alive_timeout(timeout)
                .max_send_buf_size(H2_SEND_BUFFER)
                .serve_connection(io, service);
            drive(connection, &mut link, age).await
        }
    };
    let limit = match ended {
        Ended::Cut(limit) => limit,
        _ if link.write_expired.load(Ordering::Relaxed) => None,
        Ended::Done(Err(error), _) if error.is_timeout() => Some(match protocol {
            Protocol::Http1 => Limit::HeaderTimeout,
            Protocol::Http2 => Limit::KeepaliveTimeout,
        }),
        Ended::Done(Err(error), _) => {
            // A client that hangs up, or sends what is not HTTP, ends its
            // own connection; there is nobody to tell.
            tracing::trace!(%error, "connection ended");
            None
        }
        Ended::Done(Ok(()), limit) => limit,
    };
    link.record(limit);
}

/// How a connection ended.
enum Ended<T> {
    /// Its future finished with `T` (the client closed it, or it closed
    /// gently), after the driver asked it to close for this limit, if it
    /// did.
    Done(T, Option<Limit>),
    /// The driver cut it: for this limit, or (`None`) because it did not
    /// close within a request timeout of being asked to at shutdown or to
    /// make room.
    Cut(Option<Limit>),
}

/// Runs `connection`, closing it at its deadlines (at `age` too, when
/// given).
async fn drive<C: Graceful>(
    connection: C,
    link: &mut Link<'_>,
    age: Option<Duration>,
) -> Ended<C::Output> {
    let timeout = link.limits.request_timeout;
    let (activity, stopping) = (link.activity, &mut *link.stopping);
    let mut connection = std::pin::pin!(connection);
    let old_at = age.map(|age| activity.origin + age);
    // Set once the connection was asked to close: it is closed then, and
    // why (for the metrics).
    let mut closing: Option<(Instant, Option<Limit>)> = None;
    let mut stop_seen = *stopping.borrow();
    if stop_seen {
        connection.as_mut().close_gently();
        closing = Some((Instant::now() + timeout, None));
    }
    // A deadline that never comes, for the branches that are off.
    let never = || Instant::now() + Duration::from_secs(86_400 * 365);
    loop {
        // While a request is in flight there is no idle deadline; look
        // again after a request timeout.
        let check_at = activity
            .deadline(timeout, link.idle)
            .unwrap_or_else(|| Instant::now() + timeout);
        tokio::select! {
            ended = connection.as_mut() => {
                return Ended::Done(ended, closing.and_then(|(_, limit)| limit));
            }
            () = tokio::time::sleep_until(check_at), if closing.is_none() => {
                let now = Instant::now();
                match activity.deadline(timeout, link.idle) {
                    Some(at) if at <= now => {
                        if !activity.started() {
                            // Nothing in flight: nothing to finish.
                            return Ended::Cut(Some(Limit::FirstRequestTimeout));
                        }
                        connection.as_mut().close_gently();
                        closing = Some((now + timeout, Some(Limit::IdleTimeout)));
                    }
                    _ => {}
                }
            }
            () = tokio::time::sleep_until(old_at.unwrap_or_else(never)), if closing.is_none() && old_at.is_some() => {
                connection.as_mut().close_gently();
                closing = Some((Instant::now() + timeout, Some(Limit::MaxConnectionAge)));
            }
            () = tokio::time::sleep_until(closing.map_or_else(never, |(at, _)| at)), if closing.is_some() => {
                return Ended::Cut(closing.and_then(|(_, limit)| limit));
            }
            () = activity.evicted(), if closing.is_none() => {
                // Made room for a new client: an idle connection closes
                // gently (at once, nothing is in flight), a busy one at
                // once, since its client is what keeps others out.
                if activity.in_flight() > 0 {
                    // Counted by the gate when it chose this connection.
                    return Ended::Cut(None);
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
