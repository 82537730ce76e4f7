//! Prometheus metrics: counters moved by requests, gauges read at scrape.
//!
//! Each [`Metrics`] has its own recorder (none is installed globally), so
//! that several services, or tests, in one process count separately. The
//! hot path only bumps counter handles it already holds; everything that
//! can be read off the issuer (node state, generator slow paths, the mark)
//! is read when `/metrics` is scraped.
//!
//! The lead (how far an ID's timestamp runs ahead of the clock, issue 36)
//! is two gauges rather than a histogram: a histogram would count every ID
//! on the hot path, where almost every lead is zero, while the generator
//! can give the lead now (its last tick against the clock) and the largest
//! lead taken (kept only when it borrows) at no cost to the IDs that do not
//! borrow. The largest lead only grows, so several scrapers read the same
//! value and a lead that came and went between two scrapes still shows.
//!
//! | metric | type | meaning |
//! |---|---|---|
//! | `snowmint_ids_issued_total` | counter | IDs handed out |
//! | `snowmint_id_batch_size` | histogram | IDs per `/v1/ids` request |
//! | `snowmint_sequence_exhaustion_waits_total` | counter | waits for the next millisecond because 4096 IDs were used |
//! | `snowmint_clock_regressions_total` | counter | generator calls that found the clock behind the last timestamp |
//! | `snowmint_id_lead_ms` | gauge | the lead now: under the `borrow` clock policy, how far the last timestamp used runs ahead of the node's clock, in ms (at most `--clock-max`; 0 under `refuse` and `wait`) |
//! | `snowmint_id_lead_max_ms` | gauge | the largest lead of any ID issued since the node started, measured at issue |
//! | `snowmint_requests_refused_total{reason}` | counter | 503 answers (and gRPC `UNAVAILABLE` refusals), by error code |
//! | `snowmint_grpc_requests_total{method}` | counter | gRPC calls, by method (`NextIds`, `StreamIds`, ...); their IDs count in `snowmint_ids_issued_total` |
//! | `snowmint_node_active` | gauge | 1 while the node holds a claim, else 0 |
//! | `snowmint_node_ready` | gauge | 1 while IDs can be issued, else 0 |
//! | `snowmint_node_slot`, `snowmint_node_datacenter`, `snowmint_node_machine` | gauge | the claim (-1 without one) |
//! | `snowmint_claim_generation` | gauge | the claim's generation (0 without one) |
//! | `snowmint_high_water_mark_ms` | gauge | the recorded mark, Unix ms |
//! | `snowmint_high_water_mark_ahead_ms` | gauge | how far the recorded mark is ahead of the node's clock (negative: the next ID waits for a write; NaN without a mark) |
//! | `snowmint_mark_write_failing` | gauge | 1 while the high-water mark cannot be written (the node refuses IDs), else 0 |
//! | `snowmint_limit_reached_total{limit}` | counter | a limit held a client off: `connections` (accepting paused at the cap), `calls` (a gRPC call refused), `streams` (a connection reached its streams), `evicted` (a connection closed to make room), `first_request_timeout`, `tls_handshake_timeout`, `header_timeout`, `write_timeout`, `idle_timeout`, `keepalive_timeout`, `max_connection_age` (a connection closed) |
//! | `snowmint_connections_open{listener}` | gauge | client connections open, by listener (`Listener::name`: `http`, `grpc`, ...) |
//! | `snowmint_tls_handshake_failures_total{listener}` | counter | TLS handshakes that failed (a cleartext client, a client certificate refused, a client that does not trust the node's) |
//! | `snowmint_reloads_total{file,result}` | counter | the `tls` files or the `tokens` file read again after a change or SIGHUP: `ok`, or `failed` (what was in force stayed) |
//! | `snowmint_auth_refused_total{api,reason}` | counter | requests refused for their bearer token (`http`, `grpc`): `missing`, `malformed`, `unknown` |
//! | `snowmint_connections_max` | gauge | the connection cap in force (`--max-connections`, lowered to fit the descriptor limit) |
//!
//! A node that claims its slot from a coordinator (etcd, ZooKeeper,
//! PostgreSQL) also
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
//! | `snowmint_clock_skewed` | gauge | 1 while the last check found the clock out of range: beyond the skew allowed, or running slow (the node claims no slot), else 0 |

mod families;

use std::sync::{Arc, OnceLock};

use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};
use snowmint_fleet::{Issuer, Refusal};

use crate::auth::AuthFailure;
use crate::listener::Listener;
use crate::net::Limit;
use families::{BATCH_SIZE, ClaimMetrics, FrontEnd, Issuing, NodeGauges, Registrar, metadata};

/// The service's metrics. Cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    /// Kept to register the claim metrics when a coordinator shows up.
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    issuing: Issuing,
    node: NodeGauges,
    front: FrontEnd,
    /// Registered at the first scrape that finds a claim engine, so that
    /// nodes with a fixed identity do not export claim metrics.
    claim: OnceLock<ClaimMetrics>,
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
        let r = Registrar {
            recorder: &recorder,
            meta: metadata(),
        };
        let (issuing, node, front) = (
            Issuing::register(&r),
            NodeGauges::register(&r),
            FrontEnd::register(&r),
        );
        Metrics {
            inner: Arc::new(Inner {
                issuing,
                node,
                front,
                handle: recorder.handle(),
                recorder,
                claim: OnceLock::new(),
            }),
        }
    }

    /// Counts `n` IDs handed out.
    #[inline]
    pub fn issued(&self, n: u64) {
        self.inner.issuing.ids_issued.increment(n);
    }

    /// Records the size of a `/v1/ids` batch.
    pub fn batch(&self, size: usize) {
        self.inner.issuing.batch_size.record(size as f64);
    }

    /// Counts a 503 answer.
    pub fn refused(&self, refusal: &Refusal) {
        let code = refusal.code();
        if let Some((_, counter)) = self.inner.issuing.refused.iter().find(|(c, _)| *c == code) {
            counter.increment(1);
        }
    }

    /// Counts a gRPC call of `method` (one of `snowmint.v1.IdService`'s).
    pub fn grpc_call(&self, method: &str) {
        if let Some((_, counter)) = self
            .inner
            .issuing
            .grpc_requests
            .iter()
            .find(|(m, _)| *m == method)
        {
            counter.increment(1);
        }
    }

    /// Counts a limit that held a client off.
    pub fn limit_reached(&self, limit: Limit) {
        self.inner.front.limits[limit as usize].increment(1);
    }

    /// Counts a failed TLS handshake on `listener`.
    pub(crate) fn tls_handshake_failed(&self, listener: Listener) {
        if let Some(counter) = &self.inner.front.tls_handshake_failures[listener as usize] {
            counter.increment(1);
        }
    }

    /// Counts a reload of `file` (`tls` or `tokens`).
    pub(crate) fn reloaded(&self, file: &str, ok: bool) {
        if let Some((_, _, counter)) = self
            .inner
            .front
            .reloads
            .iter()
            .find(|(f, o, _)| *f == file && *o == ok)
        {
            counter.increment(1);
        }
    }

    /// Counts a request refused for its bearer token.
    pub(crate) fn auth_refused(&self, api: Listener, failure: AuthFailure) {
        if let Some(counter) = self.inner.front.auth_refused[api as usize].get(failure as usize) {
            counter.increment(1);
        }
    }

    /// Records the connections open on `listener` and the cap in force.
    pub(crate) fn connections(&self, listener: Listener, open: u64, cap: u64) {
        self.inner.front.connections_open[listener as usize].set(open as f64);
        self.inner.front.connections_max.set(cap as f64);
    }

    /// Reads the issuer's state into the gauges and renders the text format.
    pub fn render(&self, issuer: &Issuer) -> String {
        let m = &self.inner;
        let stats = issuer.stats();
        m.issuing.exhaustion_waits.absolute(stats.exhaustion_waits);
        m.issuing
            .clock_regressions
            .absolute(stats.clock_regressions);
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
        m.issuing.lead.set(ms(issuer.lead()));
        m.issuing.lead_max.set(ms(stats.max_lead));
        let report = issuer.report();
        let flag = |on: bool| if on { 1.0 } else { 0.0 };
        m.node.active.set(flag(report.claim.is_some()));
        m.node.ready.set(flag(report.readiness.is_ok()));
        let claim = report.claim.as_ref();
        let or_none = |value: Option<u64>| value.map_or(-1.0, |v| v as f64);
        m.node.slot.set(or_none(claim.map(|c| c.slot)));
        let layout = issuer.layout();
        m.node
            .datacenter
            .set(or_none(claim.map(|c| layout.pair_of(c.node).0)));
        m.node
            .machine
            .set(or_none(claim.map(|c| layout.pair_of(c.node).1)));
        m.node
            .generation
            .set(claim.map_or(0.0, |c| c.generation as f64));
        m.node
            .high_water_mark
            .set(report.high_water_mark_ms.map_or(0.0, |ms| ms as f64));
        let now_ms = issuer.clock().now_ms();
        m.node.mark_ahead.set(
            report
                .high_water_mark_ms
                .map_or(f64::NAN, |ms| (ms - now_ms) as f64),
        );
        m.node.mark_failing.set(flag(matches!(
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
