//! The bearer token on the routes the node's scope guards (see
//! [`crate::auth`]): 401 with `WWW-Authenticate: Bearer` without one that
//! the node accepts.
//!
//! A layer of its own rather than `axum::middleware::from_fn`, which
//! clones the route's boxed service and boxes a future for every request:
//! that cost `/v1/id` 14% of its requests per second (BENCHMARKS.md,
//! `bench/auth.sh`). Here a request the token admits goes straight to the
//! route's own future.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::{MatchedPath, Request};
use axum::http::header::WWW_AUTHENTICATE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tower::{Layer, Service};

use crate::auth::Auth;
use crate::error::ApiError;
use crate::listener::Listener;
use crate::metrics::Metrics;

/// Adds [`Authorize`] to each route (as a route layer: after routing, so
/// that the route as matched decides, not the path as sent, which may be
/// spelled in other ways).
#[derive(Clone)]
pub(crate) struct AuthorizeLayer {
    auth: Arc<Auth>,
    metrics: Metrics,
}

impl AuthorizeLayer {
    pub(crate) fn new(auth: Arc<Auth>, metrics: Metrics) -> AuthorizeLayer {
        AuthorizeLayer { auth, metrics }
    }
}

impl<S> Layer<S> for AuthorizeLayer {
    type Service = Authorize<S>;

    fn layer(&self, inner: S) -> Authorize<S> {
        Authorize {
            inner,
            layer: self.clone(),
        }
    }
}

/// A route that answers 401 to a request its scope guards without a
/// token the node accepts.
#[derive(Clone)]
pub(crate) struct Authorize<S> {
    inner: S,
    layer: AuthorizeLayer,
}

impl<S> Service<Request> for Authorize<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    S::Future: Unpin,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Checked<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Checked<S::Future> {
        let AuthorizeLayer { auth, metrics } = &self.layer;
        let guarded = request
            .extensions()
            .get::<MatchedPath>()
            .is_none_or(|route| auth.guards_http(route.as_str()));
        if !guarded {
            return Checked::Allowed(self.inner.call(request));
        }
        match auth.check(request.headers()) {
            Ok(()) => Checked::Allowed(self.inner.call(request)),
            Err(failure) => {
                metrics.auth_refused(Listener::Http, failure);
                tracing::debug!(reason = failure.name(), "refused: bearer token");
                let mut response = ApiError::status(
                    StatusCode::UNAUTHORIZED,
                    "unauthenticated",
                    failure.message(),
                )
                .into_response();
                response.headers_mut().insert(
                    WWW_AUTHENTICATE,
                    HeaderValue::from_static(failure.challenge()),
                );
                Checked::Refused(Some(response))
            }
        }
    }
}

/// The answer of [`Authorize`]: the route's, or the refusal.
pub(crate) enum Checked<F> {
    Allowed(F),
    /// Taken when polled.
    Refused(Option<Response>),
}

impl<F> Future for Checked<F>
where
    F: Future<Output = Result<Response, Infallible>> + Unpin,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Checked::Allowed(future) => Pin::new(future).poll(cx),
            Checked::Refused(response) => Poll::Ready(Ok(response
                .take()
                .expect("a refusal is answered once: polled after it completed"))),
        }
    }
}
