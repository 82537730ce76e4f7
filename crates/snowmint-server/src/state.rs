//! What every request handler shares.

use std::sync::Arc;
use std::time::Duration;

use crate::metrics::Metrics;
use snowmint_fleet::Issuer;

/// The service's shared state: the issuer, the metrics and the limits.
/// Cheap to clone (one `Arc`).
#[derive(Clone, Debug)]
pub struct AppState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    issuer: Issuer,
    metrics: Metrics,
    /// Longest time a request may take before it is answered with 503.
    request_timeout: Duration,
    /// Bounds the whois look-ups running at once (each reads the
    /// coordinator).
    whois_permits: Arc<tokio::sync::Semaphore>,
}

impl AppState {
    /// State for `issuer`, with fresh metrics and a 10 s request timeout.
    pub fn new(issuer: Issuer) -> AppState {
        AppState::with_request_timeout(issuer, Duration::from_secs(10))
    }

    /// State for `issuer` with the given request timeout.
    pub fn with_request_timeout(issuer: Issuer, request_timeout: Duration) -> AppState {
        AppState {
            inner: Arc::new(Inner {
                issuer,
                metrics: Metrics::new(),
                request_timeout,
                whois_permits: Arc::new(tokio::sync::Semaphore::new(
                    crate::api::whois::MAX_LOOKUPS,
                )),
            }),
        }
    }

    /// The issuer.
    pub fn issuer(&self) -> &Issuer {
        &self.inner.issuer
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// The request timeout.
    pub fn request_timeout(&self) -> Duration {
        self.inner.request_timeout
    }

    /// The permits of whois look-ups.
    pub(crate) fn whois_permits(&self) -> &Arc<tokio::sync::Semaphore> {
        &self.inner.whois_permits
    }
}
