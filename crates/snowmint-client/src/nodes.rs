//! The nodes a client may ask, and which of them to ask next.
//!
//! - Nodes are taken in turn (round robin), so that load spreads and a
//!   failed node's share moves to the others.
//! - A node that fails (error, refusal, no answer within the per-call
//!   timeout) is skipped until its backoff has passed: 50 ms after the
//!   first failure, doubling up to the builder's `max_backoff`; a refusal
//!   that says when to come back (`retry-after-ms`) is believed, within the
//!   same cap. One success clears it.
//! - A node with a call waiting for longer than a quarter of the per-call
//!   timeout is asked only when no other node may be: it may have stopped
//!   answering, and its timeout has not said so yet.
//! - With discovery, the set is replaced when the fleet's slot keys change;
//!   a node that stays keeps its connection and its backoff.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};

use crate::Error;
use crate::proto::id_service_client::IdServiceClient;
use crate::secure::Bearer;

/// The stub every call goes through: a channel, with the token (if any)
/// put on each call.
pub(crate) type Stub = IdServiceClient<InterceptedService<Channel, Bearer>>;

/// How to reach a node: over TLS (when configured) and with a token.
#[derive(Clone, Default)]
pub(crate) struct Connect {
    pub(crate) tls: Option<ClientTlsConfig>,
    pub(crate) bearer: Bearer,
}

impl std::fmt::Debug for Connect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // tonic's TLS configuration would show the client key.
        f.debug_struct("Connect")
            .field("tls", &self.tls.is_some())
            .field("bearer", &self.bearer)
            .finish()
    }
}

/// The first backoff of a failed node.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);

/// One node: its address, connection and health as this client saw it.
#[derive(Debug)]
pub(crate) struct Node {
    /// `http://HOST:PORT`, as given or discovered (`https://` when the
    /// client speaks TLS).
    pub(crate) endpoint: String,
    /// A lazily connected channel: it connects on first use and again
    /// after the node went away.
    pub(crate) client: Stub,
    health: Mutex<Health>,
}

#[derive(Debug, Default)]
struct Health {
    /// Failures since the last success.
    failures: u32,
    /// Not to be asked before this.
    skip_until: Option<Instant>,
    /// Calls sent and not yet answered.
    in_flight: u32,
    /// When the oldest of those was sent (reset when none is left).
    waiting_since: Option<Instant>,
}

impl Node {
    fn connect(endpoint: &str, call_timeout: Duration, how: &Connect) -> Result<Node, Error> {
        // With TLS every node is dialled over TLS (tonic would speak
        // cleartext to an http:// endpoint).
        let url = match (&how.tls, endpoint.strip_prefix("http://")) {
            (Some(_), Some(rest)) => format!("https://{rest}"),
            _ => endpoint.to_owned(),
        };
        let mut builder = Endpoint::from_shared(url.clone()).map_err(|error| {
            Error::Config(format!(
                "endpoint {endpoint:?} is not a URL such as http://127.0.0.1:9090 ({error})"
            ))
        })?;
        if let Some(tls) = &how.tls {
            builder = builder.tls_config(tls.clone()).map_err(|_| {
                // tonic's message would say no more than this.
                Error::Config(format!(
                    "endpoint {endpoint:?}: the TLS settings cannot be used with it"
                ))
            })?;
        }
        let channel = builder
            .connect_timeout(call_timeout)
            .tcp_nodelay(true)
            .connect_lazy();
        Ok(Node {
            endpoint: url,
            client: IdServiceClient::with_interceptor(channel, how.bearer.clone()),
            health: Mutex::new(Health::default()),
        })
    }

    fn health(&self) -> std::sync::MutexGuard<'_, Health> {
        self.health.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// When the node may be asked again (`None`: now).
    fn skipped_until(&self, now: Instant) -> Option<Instant> {
        self.health().skip_until.filter(|until| *until > now)
    }

    /// A call goes out to the node.
    pub(crate) fn sent(&self) {
        let mut health = self.health();
        health.in_flight += 1;
        health.waiting_since.get_or_insert_with(Instant::now);
    }

    /// A call sent with [`Node::sent`] came back, or was given up.
    pub(crate) fn returned(&self) {
        let mut health = self.health();
        health.in_flight = health.in_flight.saturating_sub(1);
        if health.in_flight == 0 {
            health.waiting_since = None;
        }
    }

    /// Whether a call has been waiting for the node longer than `patience`
    /// (it may have stopped answering; its timeout has not said so yet).
    fn seems_stuck(&self, now: Instant, patience: Duration) -> bool {
        self.health()
            .waiting_since
            .is_some_and(|since| now.duration_since(since) > patience)
    }

    /// The node answered.
    pub(crate) fn succeeded(&self) {
        let mut health = self.health();
        health.failures = 0;
        health.skip_until = None;
    }

    /// The node failed; skip it for its backoff, or for `retry_after` if it
    /// said so, at most `max`.
    pub(crate) fn failed(&self, retry_after: Option<Duration>, max: Duration) {
        let mut health = self.health();
        let doubled = FIRST_BACKOFF.saturating_mul(1 << health.failures.min(16));
        let wait = retry_after.unwrap_or(doubled).min(max);
        health.failures = health.failures.saturating_add(1);
        health.skip_until = Some(Instant::now() + wait);
    }
}

/// The set of nodes, shared by calls and the discovery task.
#[derive(Debug)]
pub(crate) struct Nodes {
    list: RwLock<Arc<Vec<Arc<Node>>>>,
    next: AtomicUsize,
    call_timeout: Duration,
    /// How every node, given or discovered, is reached.
    how: Connect,
}

/// What [`Nodes::pick`] found.
pub(crate) enum Pick {
    /// Ask this node.
    Ask(Arc<Node>),
    /// Every node is backing off; the first may be asked at this instant.
    WaitUntil(Instant),
    /// No node is known.
    Empty,
}

impl Nodes {
    pub(crate) fn new(
        endpoints: &[String],
        call_timeout: Duration,
        how: Connect,
    ) -> Result<Nodes, Error> {
        let list = endpoints
            .iter()
            .map(|e| Node::connect(e, call_timeout, &how).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Nodes {
            list: RwLock::new(Arc::new(list)),
            next: AtomicUsize::new(0),
            call_timeout,
            how,
        })
    }

    pub(crate) fn snapshot(&self) -> Arc<Vec<Arc<Node>>> {
        Arc::clone(&self.list.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The endpoints now known.
    pub(crate) fn endpoints(&self) -> Vec<String> {
        self.snapshot().iter().map(|n| n.endpoint.clone()).collect()
    }

    /// The next node in turn that is not backing off, preferring one that
    /// does not seem stuck (a call to it waiting longer than a quarter of
    /// the per-call timeout).
    pub(crate) fn pick(&self) -> Pick {
        let list = self.snapshot();
        if list.is_empty() {
            return Pick::Empty;
        }
        let now = Instant::now();
        let patience = self.call_timeout / 4;
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let mut earliest: Option<Instant> = None;
        let mut stuck = None;
        for offset in 0..list.len() {
            let node = &list[(start + offset) % list.len()];
            match node.skipped_until(now) {
                None if node.seems_stuck(now, patience) => {
                    stuck.get_or_insert_with(|| Arc::clone(node));
                }
                None => return Pick::Ask(Arc::clone(node)),
                Some(until) => earliest = Some(earliest.map_or(until, |e| e.min(until))),
            }
        }
        match stuck {
            Some(node) => Pick::Ask(node),
            None => Pick::WaitUntil(earliest.unwrap_or(now)),
        }
    }

    /// The URL `endpoint` is dialled at (`https://` with TLS).
    fn dialled(&self, endpoint: &str) -> String {
        match (&self.how.tls, endpoint.strip_prefix("http://")) {
            (Some(_), Some(rest)) => format!("https://{rest}"),
            _ => endpoint.to_owned(),
        }
    }

    /// Replaces the set with `endpoints`, keeping the nodes that stay.
    pub(crate) fn replace(&self, endpoints: &[String]) {
        let old = self.snapshot();
        let mut list = Vec::with_capacity(endpoints.len());
        for endpoint in endpoints {
            match old.iter().find(|n| n.endpoint == self.dialled(endpoint)) {
                Some(node) => list.push(Arc::clone(node)),
                None => match Node::connect(endpoint, self.call_timeout, &self.how) {
                    Ok(node) => list.push(Arc::new(node)),
                    Err(error) => tracing::warn!(%error, "skipping a discovered node"),
                },
            }
        }
        *self.list.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(list);
    }
}
