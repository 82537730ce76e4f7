//! Prometheus metrics: counters moved by requests, gauges read at scrape.
//!
//! Each [`Metrics`] has its own recorder (none is installed globally), so
//! that several services, or tests, in one process count separately. The
//! hot path only bumps counter handles it already holds; everything that
//! can be read off the issuer (node state, generator slow paths, the mark)
//! is read when `/metrics` is scraped.
//!
//! | metric | type | meaning |
//! |---|---|---|
//! | `snowmint_ids_issued_total` | counter | IDs handed out |
//! | `snowmint_id_batch_size` | histogram | IDs per `/v1/ids` request |
//! | `snowmint_sequence_exhaustion_waits_total` | counter | waits for the next millisecond because 4096 IDs were used |
//! | `snowmint_clock_regressions_total` | counter | generator calls that found the clock behind the last timestamp |
//! | `snowmint_requests_refused_total{reason}` | counter | 503 answers (and gRPC `UNAVAILABLE` refusals), by error code |
//! | `snowmint_grpc_requests_total{method}` | counter | gRPC calls, by method (`NextIds`, `StreamIds`, ...); their IDs count in `snowmint_ids_issued_total` |
//! | `snowmint_node_active` | gauge | 1 while the node holds a claim, else 0 |
//! | `snowmint_node_ready` | gauge | 1 while IDs can be issued, else 0 |
//! | `snowmint_node_slot`, `snowmint_node_datacenter`, `snowmint_node_machine` | gauge | the claim (-1 without one) |
//! | `snowmint_claim_generation` | gauge | the claim's generation (0 without one) |
//! | `snowmint_high_water_mark_ms` | gauge | the recorded mark, Unix ms |
//! | `snowmint_high_water_mark_ahead_ms` | gauge | how far the recorded mark is ahead of the node's clock (negative: the next ID waits for a write; NaN without a mark) |
//! | `snowmint_mark_write_failing` | gauge | 1 while the high-water mark cannot be written (the node refuses IDs), else 0 |
//! | `snowmint_limit_reached_total{limit}` | counter | a limit held a client off: `connections` (accepting paused at the cap), `calls` (a gRPC call refused), `streams` (a connection reached its streams), `first_request_timeout`, `header_timeout`, `write_timeout`, `idle_timeout`, `keepalive_timeout`, `max_connection_age` (a connection closed) |
//! | `snowmint_connections_open{listener}` | gauge | client connections open, `http` and `grpc` |
//! | `snowmint_tls_handshake_failures_total{listener}` | counter | TLS handshakes that failed (a cleartext client, a client certificate refused, a client that does not trust the node's) |
//! | `snowmint_reloads_total{file,result}` | counter | the `tls` files or the `tokens` file read again after a change or SIGHUP: `ok`, or `failed` (what was in force stayed) |
//! | `snowmint_auth_refused_total{api,reason}` | counter | requests refused for their bearer token (`http`, `grpc`): `missing`, `malformed`, `unknown` |
//! | `snowmint_connections_max` | gauge | the connection cap in force (`--max-connections`, lowered to fit the descriptor limit) |
//!
//! A node that claims its slot from a coordinator (etcd, ZooKeeper) also
//! has, from its first scrape on:
//!
//! | metric | type | meaning |
//! |---|---|---|
//! | `snowmint_claim_state{state}` | gauge | 1 for what the claim engine is doing (`connecting`, `claiming`, `all_taken`, `clock_skew`, `held`, `released`), 0 for the others |
//! | `snowmint_claim_time_to_deadline_ms` | gauge | how long the claim may still be used without a confirmed keep-alive (0 without one) |
//! | `snowmint_claim_changes_total{change}` | counter | claims `acquired` and `lost` (a clean release is not a loss) |
//! | `snowmint_claim_slots` | gauge | how many slots the node may claim (`--slots`) |
//! | `snowmint_clock_offset_ms` | gauge | how far this node's clock is ahead of the median clock it was last checked against (negative: behind; NaN before a check with a reading) |
//! | `snowmint_clock_offset_error_ms` | gauge | the largest error bar (half a round trip, and 1 ms) of those readings |
//! | `snowmint_clock_sources{kind}` | gauge | the clocks read by the last check: `peer` (slot holders) and `coordinator` |
//! | `snowmint_clock_max_skew_ms` | gauge | the skew allowed (`--max-clock-skew`; NaN when the check is off) |
//! | `snowmint_clock_skewed` | gauge | 1 while the last check found the clock beyond the skew allowed (the node claims no slot), else 0 |

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use metrics::{Counter, Gauge, Histogram, Key, Label, Level, Metadata, Recorder, Unit};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

use snowmint_fleet::{ClaimState, ClockSource, CoordinatorStatus};

use snowmint_fleet::{Issuer, Refusal};

use crate::auth::AuthFailure;
use crate::net::{Limit, Listener};

const IDS_ISSUED: &str = "snowmint_ids_issued_total";
const BATCH_SIZE: &str = "snowmint_id_batch_size";
const EXHAUSTION_WAITS: &str = "snowmint_sequence_exhaustion_waits_total";
const CLOCK_REGRESSIONS: &str = "snowmint_clock_regressions_total";
const REFUSED: &str = "snowmint_requests_refused_total";
const GRPC_REQUESTS: &str = "snowmint_grpc_requests_total";

/// The methods of `snowmint.v1.IdService`, for the gRPC counter's labels.
pub(crate) const GRPC_METHODS: [&str; 9] = [
    "NextIds",
    "StreamIds",
    "Decode",
    "Encode",
    "Range",
    "GetLayout",
    "GetNode",
    "Whois",
    "Inspect",
];
const NODE_ACTIVE: &str = "snowmint_node_active";
const NODE_READY: &str = "snowmint_node_ready";
const NODE_SLOT: &str = "snowmint_node_slot";
const NODE_DATACENTER: &str = "snowmint_node_datacenter";
const NODE_MACHINE: &str = "snowmint_node_machine";
const CLAIM_GENERATION: &str = "snowmint_claim_generation";
const HIGH_WATER_MARK: &str = "snowmint_high_water_mark_ms";
const MARK_AHEAD: &str = "snowmint_high_water_mark_ahead_ms";
const MARK_FAILING: &str = "snowmint_mark_write_failing";
const CLAIM_SLOTS: &str = "snowmint_claim_slots";
const CLOCK_OFFSET: &str = "snowmint_clock_offset_ms";
const CLOCK_ERROR: &str = "snowmint_clock_offset_error_ms";
const CLOCK_SOURCES: &str = "snowmint_clock_sources";
const CLOCK_MAX_SKEW: &str = "snowmint_clock_max_skew_ms";
const CLOCK_SKEWED: &str = "snowmint_clock_skewed";
const CLAIM_STATE: &str = "snowmint_claim_state";
const CLAIM_TIME_TO_DEADLINE: &str = "snowmint_claim_time_to_deadline_ms";
const CLAIM_CHANGES: &str = "snowmint_claim_changes_total";
const LIMIT_REACHED: &str = "snowmint_limit_reached_total";
const CONNECTIONS_OPEN: &str = "snowmint_connections_open";
const CONNECTIONS_MAX: &str = "snowmint_connections_max";
const TLS_HANDSHAKE_FAILURES: &str = "snowmint_tls_handshake_failures_total";
const RELOADS: &str = "snowmint_reloads_total";
const AUTH_REFUSED: &str = "snowmint_auth_refused_total";

/// The service's metrics. Cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    /// Kept to register the claim metrics when a coordinator shows up.
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    ids_issued: Counter,
    batch_size: Histogram,
    refused: Vec<(&'static str, Counter)>,
    grpc_requests: Vec<(&'static str, Counter)>,
    /// By `Limit as usize`.
    limits: Vec<Counter>,
    /// By `Listener as usize`.
    connections_open: Vec<Gauge>,
    connections_max: Gauge,
    /// By `Listener as usize`.
    tls_handshake_failures: Vec<Counter>,
    /// (file, ok, counter).
    reloads: Vec<(&'static str, bool, Counter)>,
    /// By `Listener as usize`, then `AuthFailure as usize`.
    auth_refused: Vec<Vec<Counter>>,
    exhaustion_waits: Counter,
    clock_regressions: Counter,
    node_active: Gauge,
    node_ready: Gauge,
    node_slot: Gauge,
    node_datacenter: Gauge,
    node_machine: Gauge,
    claim_generation: Gauge,
    high_water_mark: Gauge,
    mark_ahead: Gauge,
    mark_failing: Gauge,
    /// Registered at the first scrape that finds a claim engine, so that
    /// nodes with a fixed identity do not export claim metrics.
    claim: OnceLock<ClaimMetrics>,
}

/// The claim engine's metrics.
struct ClaimMetrics {
    state: Vec<(ClaimState, Gauge)>,
    time_to_deadline: Gauge,
    acquired: Counter,
    lost: Counter,
    slots: Gauge,
    clock_offset: Gauge,
    clock_error: Gauge,
    clock_peers: Gauge,
    clock_coordinator: Gauge,
    clock_max_skew: Gauge,
    clock_skewed: Gauge,
}

impl ClaimMetrics {
    fn register(recorder: &PrometheusRecorder) -> ClaimMetrics {
        let meta = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));
        recorder.describe_gauge(
            CLAIM_STATE.into(),
            None,
            "1 for what the claim engine is doing (connecting, claiming, all_taken, clock_skew, held, released), else 0.".into(),
        );
        recorder.describe_gauge(
            CLAIM_TIME_TO_DEADLINE.into(),
            None,
            "Milliseconds the claim may still be used without a confirmed keep-alive (0 without a claim).".into(),
        );
        recorder.describe_counter(
            CLAIM_CHANGES.into(),
            None,
            "Claims acquired and lost (a clean release is not a loss).".into(),
        );
        let gauge = |name: &'static str, help: &'static str| {
            recorder.describe_gauge(name.into(), None, help.into());
            recorder.register_gauge(&Key::from_static_name(name), &meta)
        };
        recorder.describe_gauge(
            CLOCK_SOURCES.into(),
            None,
            "Clocks read by the last clock check, by kind (peer: slot holders; coordinator)."
                .into(),
        );
        let sources = |kind: &'static str| {
            let key = Key::from_parts(CLOCK_SOURCES, vec![Label::new("kind", kind)]);
            recorder.register_gauge(&key, &meta)
        };
        let clock_peers = sources("peer");
        let clock_coordinator = sources("coordinator");
        let slots = gauge(CLAIM_SLOTS, "Slots this node may claim (--slots).");
        let clock_offset = gauge(
            CLOCK_OFFSET,
            "Milliseconds this node's clock is ahead of the median clock of the last check (negative: behind; NaN before a reading).",
        );
        let clock_error = gauge(
            CLOCK_ERROR,
            "The largest error bar of the last clock check's readings (half a round trip, and 1 ms).",
        );
        let clock_max_skew = gauge(
            CLOCK_MAX_SKEW,
            "The clock skew allowed (--max-clock-skew), ms; NaN when the check is off.",
        );
        let clock_skewed = gauge(
            CLOCK_SKEWED,
            "1 while the last clock check found this clock beyond the skew allowed, else 0.",
        );
        let state = ClaimState::ALL
            .iter()
            .map(|&state| {
                let key = Key::from_parts(CLAIM_STATE, vec![Label::new("state", state.name())]);
                (state, recorder.register_gauge(&key, &meta))
            })
            .collect();
        let change = |name: &'static str| {
            let key = Key::from_parts(CLAIM_CHANGES, vec![Label::new("change", name)]);
            recorder.register_counter(&key, &meta)
        };
        ClaimMetrics {
            state,
            time_to_deadline: recorder
                .register_gauge(&Key::from_static_name(CLAIM_TIME_TO_DEADLINE), &meta),
            acquired: change("acquired"),
            lost: change("lost"),
            slots,
            clock_offset,
            clock_error,
            clock_peers,
            clock_coordinator,
            clock_max_skew,
            clock_skewed,
        }
    }

    fn set(&self, status: &CoordinatorStatus) {
        for (state, gauge) in &self.state {
            gauge.set(if *state == status.state { 1.0 } else { 0.0 });
        }
        let left = status.time_to_deadline(Instant::now()).unwrap_or_default();
        self.time_to_deadline.set(left.as_millis() as f64);
        self.acquired.absolute(status.claims);
        self.lost.absolute(status.losses);
        self.slots.set(status.slots.len() as f64);
        self.clock_max_skew.set(
            status
                .max_clock_skew
                .map_or(f64::NAN, |max| max.as_millis() as f64),
        );
        let verdict = status.clock.as_ref().map(|(verdict, _)| verdict);
        let or_nan = |value: Option<i64>| value.map_or(f64::NAN, |v| v as f64);
        self.clock_offset
            .set(or_nan(verdict.and_then(|v| v.offset_ms)));
        self.clock_error
            .set(or_nan(verdict.and_then(|v| v.error_ms())));
        let count = |peer: bool| {
            verdict.map_or(0, |v| {
                v.readings
                    .iter()
                    .filter(|r| matches!(r.source, ClockSource::Peer { .. }) == peer)
                    .count()
            }) as f64
        };
        self.clock_peers.set(count(true));
        self.clock_coordinator.set(count(false));
        self.clock_skewed.set(if verdict.is_some_and(|v| v.skewed) {
            1.0
        } else {
            0.0
        });
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// A fresh set of metrics with its own registry.
    pub fn new() -> Metrics {
        // Batch sizes in powers of two up to the largest batch.
        let buckets: Vec<f64> = (0..=12).map(|p| f64::from(1u32 << p)).collect();
        let recorder: PrometheusRecorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(BATCH_SIZE.to_owned()), &buckets)
            .map(PrometheusBuilder::build_recorder)
            .unwrap_or_else(|_| PrometheusBuilder::new().build_recorder());
        let meta = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));
        let counter = |name: &'static str, help: &'static str| {
            recorder.describe_counter(name.into(), None, help.into());
            recorder.register_counter(&Key::from_static_name(name), &meta)
        };
        let gauge = |name: &'static str, help: &'static str| {
            recorder.describe_gauge(name.into(), None, help.into());
            recorder.register_gauge(&Key::from_static_name(name), &meta)
        };
        recorder.describe_histogram(
            BATCH_SIZE.into(),
            Some(Unit::Count),
            "IDs asked for per /v1/ids request.".into(),
        );
        let batch_size = recorder.register_histogram(&Key::from_static_name(BATCH_SIZE), &meta);
        recorder.describe_counter(
            REFUSED.into(),
            None,
            "Requests refused with 503, by reason (the error code).".into(),
        );
        let refused = Refusal::CODES
            .iter()
            .map(|&code| {
                let key = Key::from_parts(REFUSED, vec![Label::new("reason", code)]);
                (code, recorder.register_counter(&key, &meta))
            })
            .collect();
        recorder.describe_counter(
            GRPC_REQUESTS.into(),
            None,
            "gRPC calls of snowmint.v1.IdService, by method.".into(),
        );
        let grpc_requests = GRPC_METHODS
            .iter()
            .map(|&method| {
                let key = Key::from_parts(GRPC_REQUESTS, vec![Label::new("method", method)]);
                (method, recorder.register_counter(&key, &meta))
            })
            .collect();
        recorder.describe_counter(
            LIMIT_REACHED.into(),
            None,
            "Times a limit held a client off, by limit (see docs/service.md, Limits).".into(),
        );
        let limits = Limit::ALL
            .iter()
            .map(|limit| {
                let key = Key::from_parts(LIMIT_REACHED, vec![Label::new("limit", limit.name())]);
                recorder.register_counter(&key, &meta)
            })
            .collect();
        recorder.describe_gauge(
            CONNECTIONS_OPEN.into(),
            None,
            "Client connections open, by listener.".into(),
        );
        let connections_open = Listener::ALL
            .iter()
            .map(|listener| {
                let key = Key::from_parts(
                    CONNECTIONS_OPEN,
                    vec![Label::new("listener", listener.name())],
                );
                recorder.register_gauge(&key, &meta)
            })
            .collect();
        recorder.describe_counter(
            TLS_HANDSHAKE_FAILURES.into(),
            None,
            "TLS handshakes that failed, by listener.".into(),
        );
        let tls_handshake_failures = Listener::ALL
            .iter()
            .map(|listener| {
                let key = Key::from_parts(
                    TLS_HANDSHAKE_FAILURES,
                    vec![Label::new("listener", listener.name())],
                );
                recorder.register_counter(&key, &meta)
            })
            .collect();
        recorder.describe_counter(
            RELOADS.into(),
            None,
            "TLS files and the token file read again after a change or SIGHUP, by file and result (failed: what was in force stayed).".into(),
        );
        let reloads = ["tls", "tokens"]
            .into_iter()
            .flat_map(|file| [(file, true), (file, false)])
            .map(|(file, ok)| {
                let result = if ok { "ok" } else { "failed" };
                let key = Key::from_parts(
                    RELOADS,
                    vec![Label::new("file", file), Label::new("result", result)],
                );
                (file, ok, recorder.register_counter(&key, &meta))
            })
            .collect();
        recorder.describe_counter(
            AUTH_REFUSED.into(),
            None,
            "Requests refused for their bearer token, by API and reason (never by token).".into(),
        );
        let auth_refused = Listener::ALL
            .iter()
            .map(|listener| {
                AuthFailure::ALL
                    .iter()
                    .map(|failure| {
                        let key = Key::from_parts(
                            AUTH_REFUSED,
                            vec![
                                Label::new("api", listener.name()),
                                Label::new("reason", failure.name()),
                            ],
                        );
                        recorder.register_counter(&key, &meta)
                    })
                    .collect()
            })
            .collect();
        Metrics {
            inner: Arc::new(Inner {
                tls_handshake_failures,
                reloads,
                auth_refused,
                connections_max: gauge(
                    CONNECTIONS_MAX,
                    "The connection cap in force (--max-connections, lowered to fit the descriptor limit).",
                ),
                limits,
                connections_open,
                ids_issued: counter(IDS_ISSUED, "IDs handed out."),
                exhaustion_waits: counter(
                    EXHAUSTION_WAITS,
                    "Waits for the next millisecond because its 4096 sequence numbers were used.",
                ),
                clock_regressions: counter(
                    CLOCK_REGRESSIONS,
                    "Generator calls that found the clock behind the last timestamp used.",
                ),
                node_active: gauge(NODE_ACTIVE, "1 while the node holds a claim, else 0."),
                node_ready: gauge(NODE_READY, "1 while the node can issue IDs, else 0."),
                node_slot: gauge(NODE_SLOT, "The slot held, or -1."),
                node_datacenter: gauge(NODE_DATACENTER, "The datacenter held, or -1."),
                node_machine: gauge(NODE_MACHINE, "The machine held, or -1."),
                claim_generation: gauge(
                    CLAIM_GENERATION,
                    "Generation of the claim held (changes on every new claim), or 0.",
                ),
                high_water_mark: gauge(
                    HIGH_WATER_MARK,
                    "The recorded high-water mark, Unix ms (0 when none).",
                ),
                mark_ahead: gauge(
                    MARK_AHEAD,
                    "How far the recorded high-water mark is ahead of the node's clock, ms (negative: the next ID waits for a write; NaN without a mark).",
                ),
                mark_failing: gauge(
                    MARK_FAILING,
                    "1 while the high-water mark cannot be written (IDs are refused), else 0.",
                ),
                batch_size,
                refused,
                grpc_requests,
                handle: recorder.handle(),
                recorder,
                claim: OnceLock::new(),
            }),
        }
    }

    /// Counts `n` IDs handed out.
    #[inline]
    pub fn issued(&self, n: u64) {
        self.inner.ids_issued.increment(n);
    }

    /// Records the size of a `/v1/ids` batch.
    pub fn batch(&self, size: usize) {
        self.inner.batch_size.record(size as f64);
    }

    /// Counts a 503 answer.
    pub fn refused(&self, refusal: &Refusal) {
        let code = refusal.code();
        if let Some((_, counter)) = self.inner.refused.iter().find(|(c, _)| *c == code) {
            counter.increment(1);
        }
    }

    /// Counts a gRPC call of `method` (one of `snowmint.v1.IdService`'s).
    pub fn grpc_call(&self, method: &str) {
        if let Some((_, counter)) = self.inner.grpc_requests.iter().find(|(m, _)| *m == method) {
            counter.increment(1);
        }
    }

    /// Counts a limit that held a client off.
    pub fn limit_reached(&self, limit: Limit) {
        self.inner.limits[limit as usize].increment(1);
    }

    /// Counts a failed TLS handshake on `listener`.
    pub(crate) fn tls_handshake_failed(&self, listener: Listener) {
        self.inner.tls_handshake_failures[listener as usize].increment(1);
    }

    /// Counts a reload of `file` (`tls` or `tokens`).
    pub(crate) fn reloaded(&self, file: &str, ok: bool) {
        if let Some((_, _, counter)) = self
            .inner
            .reloads
            .iter()
            .find(|(f, o, _)| *f == file && *o == ok)
        {
            counter.increment(1);
        }
    }

    /// Counts a request refused for its bearer token.
    pub(crate) fn auth_refused(&self, api: Listener, failure: AuthFailure) {
        self.inner.auth_refused[api as usize][failure as usize].increment(1);
    }

    /// Records the connections open on `listener` and the cap in force.
    pub(crate) fn connections(&self, listener: Listener, open: u64, cap: u64) {
        self.inner.connections_open[listener as usize].set(open as f64);
        self.inner.connections_max.set(cap as f64);
    }

    /// Reads the issuer's state into the gauges and renders the text format.
    pub fn render(&self, issuer: &Issuer) -> String {
        let m = &self.inner;
        let stats = issuer.stats();
        m.exhaustion_waits.absolute(stats.exhaustion_waits);
        m.clock_regressions.absolute(stats.clock_regressions);
        let report = issuer.report();
        let flag = |on: bool| if on { 1.0 } else { 0.0 };
        m.node_active.set(flag(report.claim.is_some()));
        m.node_ready.set(flag(report.readiness.is_ok()));
        let claim = report.claim.as_ref();
        let or_none = |value: Option<u64>| value.map_or(-1.0, |v| v as f64);
        m.node_slot.set(or_none(claim.map(|c| c.slot)));
        m.node_datacenter
            .set(or_none(claim.map(|c| c.node.datacenter)));
        m.node_machine.set(or_none(claim.map(|c| c.node.machine)));
        m.claim_generation
            .set(claim.map_or(0.0, |c| c.generation as f64));
        m.high_water_mark
            .set(report.high_water_mark_ms.map_or(0.0, |ms| ms as f64));
        let now_ms = issuer.clock().now_ms();
        m.mark_ahead.set(
            report
                .high_water_mark_ms
                .map_or(f64::NAN, |ms| (ms - now_ms) as f64),
        );
        m.mark_failing.set(flag(matches!(
            report.readiness,
            Err(Refusal::MarkUnwritable { .. })
        )));
        if let Some(status) = &report.coordinator {
            m.claim
                .get_or_init(|| ClaimMetrics::register(&m.recorder))
                .set(status);
        }
        m.handle.render()
    }

    /// Drains histogram samples nobody scraped, so that memory stays
    /// bounded; run now and then.
    pub fn run_upkeep(&self) {
        self.inner.handle.run_upkeep();
    }
}
