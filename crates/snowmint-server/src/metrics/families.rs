//! The metric families, registered by what they count: issuing
//! ([`Issuing`]), the node's claim and mark ([`NodeGauges`]), the front
//! end ([`FrontEnd`]) and, once a coordinator shows up, the claim engine
//! ([`ClaimMetrics`]); each with its help text.

use std::time::Instant;

use metrics::{Counter, Gauge, Histogram, Key, Label, Level, Metadata, Recorder, Unit};
use metrics_exporter_prometheus::PrometheusRecorder;
use snowmint_fleet::{ClaimState, ClockSource, CoordinatorStatus, Refusal};

use crate::auth::AuthFailure;
use crate::listener::Listener;
use crate::net::Limit;

const IDS_ISSUED: &str = "snowmint_ids_issued_total";
pub(super) const BATCH_SIZE: &str = "snowmint_id_batch_size";
const EXHAUSTION_WAITS: &str = "snowmint_sequence_exhaustion_waits_total";
const CLOCK_REGRESSIONS: &str = "snowmint_clock_regressions_total";
const LEAD: &str = "snowmint_id_lead_ms";
const LEAD_MAX: &str = "snowmint_id_lead_max_ms";
const REFUSED: &str = "snowmint_requests_refused_total";
const GRPC_REQUESTS: &str = "snowmint_grpc_requests_total";

/// The methods of `snowmint.v1.IdService`, for the gRPC counter's labels.
pub(super) const GRPC_METHODS: [&str; 9] = [
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

/// Registers metrics on one recorder, each with its help text.
pub(super) struct Registrar<'a> {
    pub(super) recorder: &'a PrometheusRecorder,
    pub(super) meta: Metadata<'static>,
}

impl Registrar<'_> {
    pub(super) fn counter(&self, name: &'static str, help: &'static str) -> Counter {
        self.recorder
            .describe_counter(name.into(), None, help.into());
        self.recorder
            .register_counter(&Key::from_static_name(name), &self.meta)
    }

    pub(super) fn gauge(&self, name: &'static str, help: &'static str) -> Gauge {
        self.recorder.describe_gauge(name.into(), None, help.into());
        self.recorder
            .register_gauge(&Key::from_static_name(name), &self.meta)
    }

    /// One counter of `name` per value of `label`, in order.
    pub(super) fn counters(
        &self,
        name: &'static str,
        help: &'static str,
        label: &'static str,
        values: impl IntoIterator<Item = &'static str>,
    ) -> Vec<Counter> {
        self.recorder
            .describe_counter(name.into(), None, help.into());
        values
            .into_iter()
            .map(|value| self.labelled_counter(name, vec![Label::new(label, value)]))
            .collect()
    }

    pub(super) fn labelled_counter(&self, name: &'static str, labels: Vec<Label>) -> Counter {
        self.recorder
            .register_counter(&Key::from_parts(name, labels), &self.meta)
    }

    /// One gauge of `name` per value of `label`, in order.
    pub(super) fn gauges(
        &self,
        name: &'static str,
        help: &'static str,
        label: &'static str,
        values: impl IntoIterator<Item = &'static str>,
    ) -> Vec<Gauge> {
        self.recorder.describe_gauge(name.into(), None, help.into());
        values
            .into_iter()
            .map(|value| {
                let key = Key::from_parts(name, vec![Label::new(label, value)]);
                self.recorder.register_gauge(&key, &self.meta)
            })
            .collect()
    }
}

/// What issuing moves: IDs, batches, refusals, gRPC calls, and the
/// generator's slow paths (read at scrape).
pub(super) struct Issuing {
    pub(super) ids_issued: Counter,
    pub(super) batch_size: Histogram,
    pub(super) refused: Vec<(&'static str, Counter)>,
    pub(super) grpc_requests: Vec<(&'static str, Counter)>,
    pub(super) exhaustion_waits: Counter,
    pub(super) clock_regressions: Counter,
    pub(super) lead: Gauge,
    pub(super) lead_max: Gauge,
}

impl Issuing {
    pub(super) fn register(r: &Registrar<'_>) -> Issuing {
        r.recorder.describe_histogram(
            BATCH_SIZE.into(),
            Some(Unit::Count),
            "IDs asked for per /v1/ids request.".into(),
        );
        let refused = r.counters(
            REFUSED,
            "Requests refused with 503, by reason (the error code).",
            "reason",
            Refusal::CODES,
        );
        let grpc_requests = r.counters(
            GRPC_REQUESTS,
            "gRPC calls of snowmint.v1.IdService, by method.",
            "method",
            GRPC_METHODS,
        );
        Issuing {
            ids_issued: r.counter(IDS_ISSUED, "IDs handed out."),
            batch_size: r
                .recorder
                .register_histogram(&Key::from_static_name(BATCH_SIZE), &r.meta),
            refused: Refusal::CODES.into_iter().zip(refused).collect(),
            grpc_requests: GRPC_METHODS.into_iter().zip(grpc_requests).collect(),
            exhaustion_waits: r.counter(
                EXHAUSTION_WAITS,
                "Waits for the next millisecond because its 4096 sequence numbers were used.",
            ),
            clock_regressions: r.counter(
                CLOCK_REGRESSIONS,
                "Generator calls that found the clock behind the last timestamp used.",
            ),
            lead: r.gauge(
                LEAD,
                "The lead now: how far the last timestamp used runs ahead of the node's clock, ms, under the borrow clock policy (at most --clock-max; 0 under refuse and wait).",
            ),
            lead_max: r.gauge(
                LEAD_MAX,
                "The largest lead of any ID issued since the node started: its timestamp ahead of the clock at issue, ms (0 unless the borrow clock policy borrowed).",
            ),
        }
    }
}

/// What the node is: its claim and its mark, read off the issuer at
/// scrape.
pub(super) struct NodeGauges {
    pub(super) active: Gauge,
    pub(super) ready: Gauge,
    pub(super) slot: Gauge,
    pub(super) datacenter: Gauge,
    pub(super) machine: Gauge,
    pub(super) generation: Gauge,
    pub(super) high_water_mark: Gauge,
    pub(super) mark_ahead: Gauge,
    pub(super) mark_failing: Gauge,
}

impl NodeGauges {
    pub(super) fn register(r: &Registrar<'_>) -> NodeGauges {
        NodeGauges {
            active: r.gauge(NODE_ACTIVE, "1 while the node holds a claim, else 0."),
            ready: r.gauge(NODE_READY, "1 while the node can issue IDs, else 0."),
            slot: r.gauge(NODE_SLOT, "The slot held, or -1."),
            datacenter: r.gauge(NODE_DATACENTER, "The datacenter held, or -1."),
            machine: r.gauge(NODE_MACHINE, "The machine held, or -1."),
            generation: r.gauge(
                CLAIM_GENERATION,
                "Generation of the claim held (changes on every new claim), or 0.",
            ),
            high_water_mark: r.gauge(
                HIGH_WATER_MARK,
                "The recorded high-water mark, Unix ms (0 when none).",
            ),
            mark_ahead: r.gauge(
                MARK_AHEAD,
                "How far the recorded high-water mark is ahead of the node's clock, ms (negative: the next ID waits for a write; NaN without a mark).",
            ),
            mark_failing: r.gauge(
                MARK_FAILING,
                "1 while the high-water mark cannot be written (IDs are refused), else 0.",
            ),
        }
    }
}

/// What the front end counts: limits reached, connections, TLS
/// handshakes, files read again, tokens refused.
pub(super) struct FrontEnd {
    /// By `Limit as usize`.
    pub(super) limits: Vec<Counter>,
    /// By `Listener as usize`.
    pub(super) connections_open: Vec<Gauge>,
    pub(super) connections_max: Gauge,
    /// By `Listener as usize`; `None` for a listener without TLS.
    pub(super) tls_handshake_failures: Vec<Option<Counter>>,
    /// (file, ok, counter).
    pub(super) reloads: Vec<(&'static str, bool, Counter)>,
    /// By `Listener as usize` (empty for a listener without tokens), then
    /// `AuthFailure as usize`.
    pub(super) auth_refused: Vec<Vec<Counter>>,
}

impl FrontEnd {
    pub(super) fn register(r: &Registrar<'_>) -> FrontEnd {
        let limits = r.counters(
            LIMIT_REACHED,
            "Times a limit held a client off, by limit (see README, Limits).",
            "limit",
            Limit::ALL.map(Limit::name),
        );
        let connections_open = r.gauges(
            CONNECTIONS_OPEN,
            "Client connections open, by listener.",
            "listener",
            Listener::ALL.map(Listener::name),
        );
        r.recorder.describe_counter(
            TLS_HANDSHAKE_FAILURES.into(),
            None,
            "TLS handshakes that failed, by listener.".into(),
        );
        let tls_handshake_failures = Listener::ALL
            .iter()
            .map(|listener| {
                let labels = vec![Label::new("listener", listener.name())];
                listener
                    .is_guarded()
                    .then(|| r.labelled_counter(TLS_HANDSHAKE_FAILURES, labels))
            })
            .collect();
        r.recorder.describe_counter(
            RELOADS.into(),
            None,
            "TLS files and the token file read again after a change or SIGHUP, by file and result (failed: what was in force stayed).".into(),
        );
        let reloads = ["tls", "tokens"]
            .into_iter()
            .flat_map(|file| [(file, true), (file, false)])
            .map(|(file, ok)| {
                let result = if ok { "ok" } else { "failed" };
                let labels = vec![Label::new("file", file), Label::new("result", result)];
                (file, ok, r.labelled_counter(RELOADS, labels))
            })
            .collect();
        r.recorder.describe_counter(
            AUTH_REFUSED.into(),
            None,
            "Requests refused for their bearer token, by API and reason (never by token).".into(),
        );
        let auth_refused = Listener::ALL
            .iter()
            .map(|listener| {
                let failures: &[AuthFailure] = if listener.is_guarded() {
                    &AuthFailure::ALL
                } else {
                    &[]
                };
                failures
                    .iter()
                    .map(|failure| {
                        let labels = vec![
                            Label::new("api", listener.name()),
                            Label::new("reason", failure.name()),
                        ];
                        r.labelled_counter(AUTH_REFUSED, labels)
                    })
                    .collect()
            })
            .collect();
        FrontEnd {
            limits,
            connections_open,
            connections_max: r.gauge(
                CONNECTIONS_MAX,
                "The connection cap in force (--max-connections, lowered to fit the descriptor limit).",
            ),
            tls_handshake_failures,
            reloads,
            auth_refused,
        }
    }
}

/// The claim engine's metrics.
pub(super) struct ClaimMetrics {
    pub(super) state: Vec<(ClaimState, Gauge)>,
    pub(super) time_to_deadline: Gauge,
    pub(super) acquired: Counter,
    pub(super) lost: Counter,
    pub(super) slots: Gauge,
    pub(super) clock_offset: Gauge,
    pub(super) clock_error: Gauge,
    pub(super) clock_peers: Gauge,
    pub(super) clock_coordinator: Gauge,
    pub(super) clock_max_skew: Gauge,
    pub(super) clock_skewed: Gauge,
}

impl ClaimMetrics {
    pub(super) fn register(recorder: &PrometheusRecorder) -> ClaimMetrics {
        let r = Registrar {
            recorder,
            meta: metadata(),
        };
        let states = r.gauges(
            CLAIM_STATE,
            "1 for what the claim engine is doing (connecting, claiming, all_taken, clock_skew, held, released), else 0.",
            "state",
            ClaimState::ALL.map(ClaimState::name),
        );
        let changes = r.counters(
            CLAIM_CHANGES,
            "Claims acquired and lost (a clean release is not a loss).",
            "change",
            ["acquired", "lost"],
        );
        let [acquired, lost]: [Counter; 2] = changes
            .try_into()
            .unwrap_or_else(|_| unreachable!("two changes registered"));
        let sources = r.gauges(
            CLOCK_SOURCES,
            "Clocks read by the last clock check, by kind (peer: slot holders; coordinator).",
            "kind",
            ["peer", "coordinator"],
        );
        let [clock_peers, clock_coordinator]: [Gauge; 2] = sources
            .try_into()
            .unwrap_or_else(|_| unreachable!("two kinds registered"));
        ClaimMetrics {
            state: ClaimState::ALL.into_iter().zip(states).collect(),
            time_to_deadline: r.gauge(
                CLAIM_TIME_TO_DEADLINE,
                "Milliseconds the claim may still be used without a confirmed keep-alive (0 without a claim).",
            ),
            acquired,
            lost,
            slots: r.gauge(CLAIM_SLOTS, "Slots this node may claim (--slots)."),
            clock_offset: r.gauge(
                CLOCK_OFFSET,
                "Milliseconds this node's clock is ahead of the median clock of the last check (negative: behind; NaN before a reading).",
            ),
            clock_error: r.gauge(
                CLOCK_ERROR,
                "The largest error bar of the last clock check's readings (half a round trip, and 1 ms).",
            ),
            clock_peers,
            clock_coordinator,
            clock_max_skew: r.gauge(
                CLOCK_MAX_SKEW,
                "The clock skew allowed (--max-clock-skew), ms; NaN when the check is off.",
            ),
            clock_skewed: r.gauge(
                CLOCK_SKEWED,
                "1 while the last clock check found this clock out of range (beyond the skew allowed, or running slow), else 0.",
            ),
        }
    }

    pub(super) fn set(&self, status: &CoordinatorStatus) {
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
        self.clock_skewed
            .set(if verdict.is_some_and(|v| v.out_of_range()) {
                1.0
            } else {
                0.0
            });
    }
}

/// The metadata every metric is registered with.
pub(super) fn metadata() -> Metadata<'static> {
    Metadata::new(module_path!(), Level::INFO, Some(module_path!()))
}
