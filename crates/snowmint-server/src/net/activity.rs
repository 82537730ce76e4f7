//! What one connection is doing, shared by its requests (which mark
//! themselves in flight), its driver (which reads it at its deadlines)
//! and the gate (which picks the connection to close at the cap).
//! Requests touch only atomics: nobody is woken per request.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::limits::Limit;
use crate::metrics::Metrics;

/// One connection's activity.
#[derive(Debug)]
pub(crate) struct Activity {
    /// When it was accepted.
    pub(crate) origin: Instant,
    /// Requests in flight (their answers not yet fully written).
    active: AtomicU64,
    /// Whether any request has arrived.
    started: AtomicBool,
    /// Milliseconds after `origin` at which `active` last fell to zero.
    idle_since_ms: AtomicU64,
    /// The streams it may have in flight (reaching it counts); set once the
    /// protocol is known.
    max_streams: AtomicU64,
    /// Whether its TLS handshake is under way: such a connection is the
    /// first closed to make room (its client has sent no request yet).
    handshaking: AtomicBool,
    /// Told when the gate closes it to make room for a new connection.
    evict: Notify,
    evicted: AtomicBool,
    metrics: Metrics,
}

impl Activity {
    pub(crate) fn new(metrics: Metrics) -> Arc<Activity> {
        Arc::new(Activity {
            origin: Instant::now(),
            active: AtomicU64::new(0),
            started: AtomicBool::new(false),
            idle_since_ms: AtomicU64::new(0),
            max_streams: AtomicU64::new(u64::MAX),
            handshaking: AtomicBool::new(false),
            evict: Notify::new(),
            evicted: AtomicBool::new(false),
            metrics,
        })
    }

    pub(crate) fn set_max_streams(&self, max: u64) {
        self.max_streams.store(max, Ordering::Relaxed);
    }

    /// Marks a request in flight until the returned guard is dropped.
    pub(crate) fn busy(self: &Arc<Activity>) -> Busy {
        // Relaxed: these are hints for the driver's next deadline and the
        // gate's choice, read again when they act; no other memory hangs
        // on them.
        let now = self.active.fetch_add(1, Ordering::Relaxed) + 1;
        self.started.store(true, Ordering::Relaxed);
        if now == self.max_streams.load(Ordering::Relaxed) {
            self.metrics.limit_reached(Limit::Streams);
        }
        Busy(Arc::clone(self))
    }

    /// Requests in flight now.
    pub(crate) fn in_flight(&self) -> u64 {
        self.active.load(Ordering::Relaxed)
    }

    /// Whether a request ever arrived.
    pub(crate) fn started(&self) -> bool {
        self.started.load(Ordering::Relaxed)
    }

    /// When the connection's current deadline falls: the first request's
    /// (`first` after the accept) while none came, the idle one (`idle`
    /// after the last answer) while nothing is in flight, `None` while a
    /// request is.
    pub(crate) fn deadline(&self, first: Duration, idle: Duration) -> Option<Instant> {
        if !self.started() {
            return Some(self.origin + first);
        }
        if self.in_flight() > 0 {
            return None;
        }
        let idle_since = Duration::from_millis(self.idle_since_ms.load(Ordering::Relaxed));
        Some(self.origin + idle_since + idle)
    }

    /// Marks the TLS handshake under way, or over.
    pub(crate) fn set_handshaking(&self, handshaking: bool) {
        self.handshaking.store(handshaking, Ordering::Relaxed);
    }

    /// Whether its TLS handshake is under way.
    pub(crate) fn is_handshaking(&self) -> bool {
        self.handshaking.load(Ordering::Relaxed)
    }

    /// Asks the connection to close, to make room (see `gate.rs`).
    pub(crate) fn evict(&self) {
        self.evicted.store(true, Ordering::Relaxed);
        self.evict.notify_one();
    }

    /// Whether the gate asked it to close.
    pub(crate) fn is_evicted(&self) -> bool {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Resolves once the gate asks the connection to close.
    pub(crate) async fn evicted(&self) {
        self.evict.notified().await;
    }
}

/// A request in flight; dropped when its answer is written (or dropped).
#[derive(Debug)]
pub(crate) struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        let activity = &self.0;
        if activity.active.fetch_sub(1, Ordering::Relaxed) == 1 {
            let ms = activity.origin.elapsed().as_millis() as u64;
            activity.idle_since_ms.store(ms, Ordering::Relaxed);
        }
    }
}

/// The connection a request came on, in the request's extensions, so that
/// a layer can see what else that connection has in flight.
#[derive(Debug, Clone)]
pub(crate) struct Connection(pub(crate) Arc<Activity>);
