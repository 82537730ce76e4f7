//! What every request handler shares.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};

use crate::auth::Auth;
use crate::listener::Listeners;
use crate::metrics::Metrics;
use crate::net::{Limits, Tls};
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
    /// What each client is allowed; its request timeout is the longest a
    /// request may take before it is answered with 503.
    limits: Limits,
    /// TLS on both listeners, when on.
    tls: Option<Arc<Tls>>,
    /// Bearer tokens, when on.
    auth: Option<Arc<Auth>>,
    /// The node's listeners, bound, when it serves them (for `/v1/node`).
    listeners: Option<Listeners>,
    /// The turn of batch requests at the generator (one permit, first come
    /// first served): see [`AppState::batch_turn`].
    batch_turn: Semaphore,
    /// What whois look-ups may cost the coordinator: a rate, a cap on
    /// those running at once, the last answer per slot.
    whois_lookups: crate::api::whois::Lookups,
}

impl AppState {
    /// State for `issuer`, with fresh metrics and a 10 s request timeout.
    pub fn new(issuer: Issuer) -> AppState {
        AppState::with_request_timeout(issuer, Duration::from_secs(10))
    }

    /// State for `issuer` with the given request timeout and the other
    /// limits at their defaults.
    pub fn with_request_timeout(issuer: Issuer, request_timeout: Duration) -> AppState {
        AppState::with_limits(issuer, Limits::new(request_timeout))
    }

    /// State for `issuer` with the given limits.
    pub fn with_limits(issuer: Issuer, limits: Limits) -> AppState {
        AppState::secured(issuer, limits, None, None)
    }

    /// State for `issuer` with the given limits, and TLS and bearer
    /// tokens when given.
    pub fn secured(
        issuer: Issuer,
        limits: Limits,
        tls: Option<Tls>,
        auth: Option<Auth>,
    ) -> AppState {
        AppState::serving(issuer, limits, tls, auth, None)
    }

    /// [`AppState::secured`] for a node serving `listeners`.
    pub(crate) fn serving(
        issuer: Issuer,
        limits: Limits,
        tls: Option<Tls>,
        auth: Option<Auth>,
        listeners: Option<Listeners>,
    ) -> AppState {
        AppState {
            inner: Arc::new(Inner {
                issuer,
                metrics: Metrics::new(),
                limits,
                tls: tls.map(Arc::new),
                auth: auth.map(Arc::new),
                listeners,
                batch_turn: Semaphore::new(1),
                whois_lookups: crate::api::whois::Lookups::default(),
            }),
        }
    }

    /// TLS, when on.
    pub fn tls(&self) -> Option<&Arc<Tls>> {
        self.inner.tls.as_ref()
    }

    /// Bearer tokens, when on.
    pub fn auth(&self) -> Option<&Arc<Auth>> {
        self.inner.auth.as_ref()
    }

    /// The node's listeners, when it serves them.
    pub(crate) fn listeners(&self) -> Option<&Listeners> {
        self.inner.listeners.as_ref()
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
        self.inner.limits.request_timeout
    }

    /// What each client is allowed.
    pub fn limits(&self) -> Limits {
        self.inner.limits
    }

    /// Waits for the turn of a batch of `count` IDs at the generator, for
    /// `count > 1`; hold the permit while taking them.
    ///
    /// A batch can use up a millisecond's IDs, and the generator waits
    /// for the next millisecond by spinning on the thread that asked: many
    /// batches at once (streams, `/v1/ids`) would keep every thread of the
    /// runtime spinning and starve everything else, a single `/v1/id`
    /// included. One batch at a time, in order of arrival, leaves the
    /// other threads free and shares the generator fairly among batches;
    /// single IDs do not queue. The generator makes at most 4096 IDs per
    /// millisecond whatever the order, so this costs batches nothing.
    pub async fn batch_turn(&self, count: usize) -> Option<SemaphorePermit<'_>> {
        if count <= 1 {
            return None;
        }
        // Never closed.
        self.inner.batch_turn.acquire().await.ok()
    }

    /// What whois look-ups may cost the coordinator.
    pub(crate) fn whois_lookups(&self) -> &crate::api::whois::Lookups {
        &self.inner.whois_lookups
    }
}
