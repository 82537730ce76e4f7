//! What every gRPC call passes before and after the services:
//!
//! - bearer tokens, on the methods the node's scope guards
//!   ([`crate::auth`]): `UNAUTHENTICATED` without one the node accepts;
//! - the node's cap on calls in flight (`--max-calls`, streams included):
//!   one call more is refused at once with `UNAVAILABLE`,
//!   `snowmint-code: overloaded` and `retry-after-ms`, so that a client
//!   asks another node; it holds nothing. A connection's first call in
//!   flight does not count against the cap (the connection cap bounds
//!   those), so that a new client is served however many calls others
//!   hold;
//! - the deadline: the request timeout, or the client's `grpc-timeout`
//!   when shorter, until the answer starts (a stream's batches are not
//!   bound by it); past it, `DEADLINE_EXCEEDED`;
//! - malformed requests: tonic answers a request it cannot decode
//!   (undecodable protobuf, a compressed flag without `grpc-encoding`, a
//!   length prefix the body does not fill) with `INTERNAL`, and one over
//!   the size limit with `OUT_OF_RANGE`. Nothing in this server makes
//!   either status for any other reason (`status.rs`), so both are the
//!   client's fault and are answered as such: `INVALID_ARGUMENT`,
//!   `snowmint-code: malformed_request`, the message prefixed with
//!   `malformed request: `.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderMap, HeaderValue, Request, Response};
use http_body::{Body, Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::metadata::MetadataValue;
use tonic::{Code, Status};
use tower::{Service, ServiceExt};

use super::status::{CODE_KEY, RETRY_AFTER_KEY};
use crate::auth::Auth;
use crate::listener::Listener;
use crate::metrics::Metrics;
use crate::net::{Connection, Limit};

type BoxFuture<T> = Pin<Box<dyn std::future::Future<Output = T> + Send>>;

/// How long a client refused for overload is asked to wait.
const OVERLOAD_RETRY_MS: u64 = 1000;

/// `inner` behind the call cap, the deadline and the mapping of malformed
/// requests.
#[derive(Debug, Clone)]
pub(crate) struct Guard<S> {
    inner: S,
    auth: Option<Arc<Auth>>,
    calls: Arc<Semaphore>,
    max_calls: u64,
    timeout: Duration,
    metrics: Metrics,
}

impl<S> Guard<S> {
    pub(crate) fn new(
        inner: S,
        auth: Option<Arc<Auth>>,
        max_calls: u64,
        timeout: Duration,
        metrics: Metrics,
    ) -> Guard<S> {
        let permits = usize::try_from(max_calls)
            .unwrap_or(usize::MAX)
            .min(Semaphore::MAX_PERMITS);
        Guard {
            inner,
            auth,
            calls: Arc::new(Semaphore::new(permits)),
            max_calls,
            timeout,
            metrics,
        }
    }
}

impl<S, B> Service<Request<B>> for Guard<S>
where
    S: Service<Request<B>, Response = Response<tonic::body::Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    B: Send + 'static,
{
    type Response = Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Each call clones the service and waits on the clone.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if let Some(auth) = &self.auth
            && auth.guards_grpc(request.uri().path())
            && let Err(failure) = auth.check(request.headers())
        {
            self.metrics.auth_refused(Listener::Grpc, failure);
            tracing::debug!(reason = failure.name(), "refused (gRPC): bearer token");
            let refused = Status::unauthenticated(failure.message()).into_http();
            return Box::pin(async move { Ok(refused) });
        }
        // This call is counted in its connection's activity already.
        let alone = request
            .extensions()
            .get::<Connection>()
            .is_some_and(|connection| connection.0.in_flight() <= 1);
        let permit = if alone {
            None
        } else {
            match Arc::clone(&self.calls).try_acquire_owned() {
                Ok(permit) => Some(permit),
                Err(_) => {
                    self.metrics.limit_reached(Limit::Calls);
                    let refused = overloaded(self.max_calls);
                    return Box::pin(async move { Ok(refused) });
                }
            }
        };
        let timeout = grpc_timeout(request.headers()).map_or(self.timeout, |t| t.min(self.timeout));
        let call = self.inner.clone().oneshot(request);
        Box::pin(async move {
            let mut response = match tokio::time::timeout(timeout, call).await {
                Ok(Ok(response)) => response,
                Ok(Err(never)) => match never {},
                Err(_) => Status::deadline_exceeded(format!(
                    "no answer within {} ms (the server's request timeout, or the call's grpc-timeout)",
                    timeout.as_millis()
                ))
                .into_http(),
            };
            blame_the_request(response.headers_mut());
            Ok(response.map(|body| {
                tonic::body::Body::new(Held {
                    body,
                    _permit: permit,
                })
            }))
        })
    }
}

/// `UNAVAILABLE` for a call over the cap.
fn overloaded(max_calls: u64) -> Response<tonic::body::Body> {
    let mut status = Status::unavailable(format!(
        "this node has {max_calls} gRPC calls in flight, its limit (--max-calls); ask another node, or again in {OVERLOAD_RETRY_MS} ms"
    ));
    let metadata = status.metadata_mut();
    metadata.insert(CODE_KEY, MetadataValue::from_static("overloaded"));
    metadata.insert(RETRY_AFTER_KEY, MetadataValue::from(OVERLOAD_RETRY_MS));
    status.into_http()
}

/// The client's `grpc-timeout` (`<up to 8 digits><H|M|S|m|u|n>`), if it
/// sent a valid one.
fn grpc_timeout(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get("grpc-timeout")?.to_str().ok()?;
    if text.len() < 2 || text.len() > 9 {
        return None;
    }
    let (digits, unit) = text.split_at(text.len() - 1);
    let value: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(value.checked_mul(3600)?),
        "M" => Duration::from_secs(value.checked_mul(60)?),
        "S" => Duration::from_secs(value),
        "m" => Duration::from_millis(value),
        "u" => Duration::from_micros(value),
        "n" => Duration::from_nanos(value),
        _ => return None,
    })
}

/// Turns tonic's `INTERNAL` and `OUT_OF_RANGE` for a request it could not
/// read into `INVALID_ARGUMENT` (see the module docs), in the headers of a
/// trailers-only answer or in trailers.
fn blame_the_request(headers: &mut HeaderMap) {
    let code = headers
        .get(Status::GRPC_STATUS)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<i32>().ok())
        .map(Code::from_i32);
    if !matches!(code, Some(Code::Internal | Code::OutOfRange)) {
        return;
    }
    let code = (Code::InvalidArgument as i32).to_string();
    headers.insert(
        Status::GRPC_STATUS,
        HeaderValue::from_str(&code).expect("digits"),
    );
    // grpc-message is percent-encoded; the prefix is written encoded.
    let message = headers
        .get(Status::GRPC_MESSAGE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if let Ok(value) = HeaderValue::from_str(&format!("malformed%20request%3A%20{message}")) {
        headers.insert(Status::GRPC_MESSAGE, value);
    }
    headers.insert(CODE_KEY, HeaderValue::from_static("malformed_request"));
}

/// An answer's body, holding the call's place under the cap until it
/// ends, with its trailers checked as the headers were.
struct Held<B> {
    body: B,
    _permit: Option<OwnedSemaphorePermit>,
}

impl<B: Body + Unpin> Body for Held<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx).map(|frame| {
            frame.map(|frame| {
                frame.map(|mut frame| {
                    if let Some(trailers) = frame.trailers_mut() {
                        blame_the_request(trailers);
                    }
                    frame
                })
            })
        })
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts_are_read_in_every_unit_and_junk_is_ignored() {
        let read = |text: &str| {
            let mut headers = HeaderMap::new();
            headers.insert("grpc-timeout", HeaderValue::from_str(text).unwrap());
            grpc_timeout(&headers)
        };
        assert_eq!(read("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(read("3M"), Some(Duration::from_secs(180)));
        assert_eq!(read("4S"), Some(Duration::from_secs(4)));
        assert_eq!(read("500m"), Some(Duration::from_millis(500)));
        assert_eq!(read("7u"), Some(Duration::from_micros(7)));
        assert_eq!(read("99999999n"), Some(Duration::from_nanos(99_999_999)));
        for junk in ["", "S", "5", "5s", "-5S", "123456789S", "1.5S"] {
            assert_eq!(read(junk), None, "{junk}");
        }
    }

    #[test]
    fn decoding_failures_become_invalid_argument_and_others_stay() {
        let status_of = |code: Code| {
            let mut headers = HeaderMap::new();
            Status::new(code, "Unexpected EOF decoding stream.")
                .add_header(&mut headers)
                .unwrap();
            blame_the_request(&mut headers);
            (
                headers[Status::GRPC_STATUS].to_str().unwrap().to_owned(),
                headers
                    .get(CODE_KEY)
                    .map(|v| v.to_str().unwrap().to_owned()),
                Status::from_header_map(&headers)
                    .unwrap()
                    .message()
                    .to_owned(),
            )
        };
        assert_eq!(
            status_of(Code::Internal),
            (
                "3".to_owned(),
                Some("malformed_request".to_owned()),
                "malformed request: Unexpected EOF decoding stream.".to_owned()
            )
        );
        assert_eq!(status_of(Code::OutOfRange).0, "3");
        assert_eq!(status_of(Code::Unavailable).0, "14");
        assert_eq!(status_of(Code::Unavailable).1, None);
    }
}
