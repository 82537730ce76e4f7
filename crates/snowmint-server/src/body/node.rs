//! The service's bodies: the node (`/v1/node`), liveness and readiness.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Serialize;
use snowmint::format_time;
use snowmint_fleet::{ClaimState, CoordinatorStatus};
use utoipa::ToSchema;
use utoipa::openapi::schema::ObjectBuilder;

use super::one_of_names;
use crate::state::AppState;

/// This node: its identity and claim, layout, clock policy and high-water
/// mark (`GET /v1/node`). Every key is always present; what does not apply
/// is `null`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Node)]
pub struct NodeDescription {
    /// Whether the node holds a claim that is not past its deadline.
    pub state: FencingState,
    /// Whether IDs can be issued now.
    pub ready: bool,
    /// Why not active or not ready.
    #[schema(required = true)]
    pub reason: Option<String>,
    /// Where the identity comes from: static, hostname, etcd, zookeeper,
    /// postgres.
    #[schema(examples("static"))]
    pub source: &'static str,
    /// The slot held: datacenter * 2^machine_bits + machine.
    #[schema(required = true)]
    pub slot: Option<u64>,
    /// The datacenter of the slot held.
    #[schema(required = true)]
    pub datacenter: Option<u64>,
    /// The machine of the slot held.
    #[schema(required = true)]
    pub machine: Option<u64>,
    /// Counts the claims this node made (from 1); a new one gets a new
    /// generator.
    #[schema(required = true)]
    pub generation: Option<u64>,
    /// How long the claim is still known to be held; null if it cannot
    /// expire.
    #[schema(required = true)]
    pub claim_valid_for_ms: Option<u64>,
    /// The mark left by earlier holders of the slot.
    #[schema(required = true)]
    pub claim_floor_ms: Option<i64>,
    /// What the slot source says about the claim.
    #[schema(required = true)]
    pub claim_details: Option<BTreeMap<String, String>>,
    /// Preset name or `T/D/M/S@EPOCH` of the IDs this node issues.
    #[schema(examples("twitter"))]
    pub layout: String,
    /// The full `T/D/M/S@EPOCH` specification, even for presets.
    #[schema(examples("41/5/5/12@1288834974657"))]
    pub spec: String,
    /// The layout's epoch, Unix milliseconds.
    pub epoch_ms: i64,
    /// What the node does when the clock goes back.
    #[schema(schema_with = clock_policy)]
    pub clock_policy: &'static str,
    /// The bound of the `wait` or `borrow` policy.
    #[schema(required = true)]
    pub clock_max_ms: Option<u64>,
    /// This node's clock (with any configured offset), Unix milliseconds.
    pub clock_ms: i64,
    /// The recorded high-water mark: no ID at or below it is issued again.
    #[schema(required = true)]
    pub high_water_mark_ms: Option<i64>,
    /// The mark: RFC 3339, UTC, milliseconds.
    #[schema(required = true, examples("2023-11-14T22:13:20.000Z"))]
    pub high_water_mark: Option<String>,
    /// The last timestamp an ID may have been issued at.
    #[schema(required = true)]
    pub last_timestamp_ms: Option<i64>,
    /// How far the node's IDs run ahead of its clock: zero unless the
    /// `borrow` clock policy borrows, and never more than `clock_max_ms`.
    pub lead_ms: LeadDescription,
    /// The node's state file, where the mark is recorded.
    #[schema(required = true)]
    pub state_file: Option<String>,
    /// The claim engine, for a node that claims its slot from etcd,
    /// ZooKeeper or PostgreSQL (`--coordinator`); null for a node given its
    /// identity.
    #[schema(required = true)]
    pub coordinator: Option<CoordinatorDescription>,
    /// The node's listeners: where each listens, what guards it, and
    /// whether it issues IDs to a client that shows no credential.
    pub listeners: Vec<ListenerDescription>,
}

/// How far the timestamps of a node's IDs run ahead of its clock, in
/// milliseconds (fractions for layouts with units below a millisecond).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Lead)]
pub struct LeadDescription {
    /// The lead now: under `borrow`, how far the last timestamp used runs
    /// ahead of the clock now (at most `clock_max_ms`), 0 once the clock is
    /// at or past it; always 0 under `refuse` and `wait`.
    #[schema(minimum = 0)]
    pub current: f64,
    /// The largest lead of any ID issued since the node started, measured
    /// against the clock when it was issued.
    #[schema(minimum = 0)]
    pub max: f64,
}

/// One listener of the node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Listener)]
pub struct ListenerDescription {
    /// Its protocol: `http`, `grpc`, `memcached`.
    #[schema(examples("http"))]
    pub name: &'static str,
    /// The address it listens on.
    #[schema(examples("127.0.0.1:8080"))]
    pub address: String,
    /// Whether its clients speak TLS.
    pub tls: bool,
    /// Whether its clients must show a certificate (mTLS).
    pub client_certificates: bool,
    /// Whether issuing on it needs a bearer token.
    pub tokens: bool,
    /// Whether it issues IDs to a client that shows no credential (no
    /// token, no client certificate): on a node with tokens or TLS, a
    /// protocol that carries neither (memcached's), served on loopback or
    /// by its switch.
    pub open: bool,
}

/// Whether the node may issue under a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FencingState {
    /// It holds a claim that is not past its deadline.
    Active,
    /// It holds none: it may not issue IDs.
    Fenced,
}

/// The schema of a clock policy's name.
fn clock_policy() -> ObjectBuilder {
    one_of_names(
        ["refuse", "wait", "borrow"],
        "What the node does when the clock goes back: refuse, wait (up to a bound), or borrow (run ahead of the clock, up to a bound).",
    )
}

impl NodeDescription {
    /// What the node of `state` reports now.
    pub fn new(state: &AppState) -> NodeDescription {
        let issuer = state.issuer();
        let report = issuer.report();
        let layout = issuer.layout();
        let policy = issuer.clock_policy();
        let claim = report.claim.as_ref();
        NodeDescription {
            state: if claim.is_some() {
                FencingState::Active
            } else {
                FencingState::Fenced
            },
            ready: report.readiness.is_ok(),
            reason: report
                .fenced_reason
                .clone()
                .or_else(|| report.readiness.as_ref().err().map(ToString::to_string)),
            source: report.source,
            slot: claim.map(|c| c.slot),
            datacenter: claim.map(|c| layout.pair_of(c.node).0),
            machine: claim.map(|c| layout.pair_of(c.node).1),
            generation: claim.map(|c| c.generation),
            claim_valid_for_ms: report.valid_for.map(|d| d.as_millis() as u64),
            claim_floor_ms: claim.and_then(|c| c.floor_ms),
            claim_details: claim.map(|c| c.details.clone()),
            layout: layout.to_string(),
            spec: layout.spec(),
            epoch_ms: layout.epoch_ms(),
            clock_policy: policy.name(),
            clock_max_ms: policy.bound().map(|d| d.as_millis() as u64),
            clock_ms: issuer.clock().now_ms(),
            high_water_mark_ms: report.high_water_mark_ms,
            high_water_mark: report
                .high_water_mark_ms
                .map(|ms| format_time(ms).to_string()),
            last_timestamp_ms: report.last_timestamp_ms,
            lead_ms: LeadDescription {
                current: issuer.lead().as_secs_f64() * 1000.0,
                max: issuer.stats().max_lead.as_secs_f64() * 1000.0,
            },
            state_file: report.state_file.as_ref().map(|p| p.display().to_string()),
            coordinator: report
                .coordinator
                .as_ref()
                .map(|status| CoordinatorDescription::new(status, Instant::now())),
            listeners: ListenerDescription::all(state),
        }
    }
}

impl ListenerDescription {
    /// The listeners of `state`'s node (none for state made without them,
    /// as in tests).
    fn all(state: &AppState) -> Vec<ListenerDescription> {
        let Some(listeners) = state.listeners() else {
            return Vec::new();
        };
        listeners
            .on()
            .map(|(listener, address)| {
                let guarded = listener.is_guarded();
                let tls = guarded && state.tls().is_some();
                let client_certificates = tls
                    && state
                        .tls()
                        .is_some_and(|tls| tls.requires_client_certificates());
                let tokens = guarded && state.auth().is_some();
                ListenerDescription {
                    name: listener.name(),
                    address: address.to_string(),
                    tls,
                    client_certificates,
                    tokens,
                    open: !(tokens || client_certificates),
                }
            })
            .collect()
    }
}

/// The claim engine's side of `/v1/node`: where it claims, what it holds,
/// and how often its claim changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Coordinator)]
pub struct CoordinatorDescription {
    /// The coordinator's URL; a password in it shows as `***`.
    #[schema(examples("etcd://127.0.0.1:2379"))]
    pub url: String,
    /// The fleet: slots live under `/snowmint/<fleet>/slots/<slot>`.
    #[schema(examples("ids"))]
    pub fleet: String,
    /// The slots this node may claim, A-B.
    #[schema(examples("0-1023"))]
    pub slots: String,
    /// What the claim engine is doing.
    #[schema(schema_with = claim_state)]
    pub state: &'static str,
    /// The slot held.
    #[schema(required = true)]
    pub slot: Option<u64>,
    /// What holds the slot key: an etcd lease, or a ZooKeeper or
    /// PostgreSQL session.
    #[schema(schema_with = session_kind)]
    pub session_kind: &'static str,
    /// The open lease or session, as the coordinator names it (hex for
    /// etcd).
    #[schema(required = true, examples("694d9a5c1e2f3b04"))]
    pub session_id: Option<String>,
    /// The lease TTL or session timeout granted (else asked for).
    pub ttl_ms: u64,
    /// How long the claim may still be used without a confirmed
    /// keep-alive; null without a claim.
    #[schema(required = true)]
    pub time_to_deadline_ms: Option<u64>,
    /// Claims made since the process started.
    pub claims_acquired: u64,
    /// Claims lost since the process started (a clean release is not a
    /// loss).
    pub claims_lost: u64,
    /// What this node writes into its slot key.
    #[schema(examples(
        "host=web-1 pid=4242 listen=127.0.0.1:8081 started=2023-11-14T22:13:20.000Z"
    ))]
    pub holder: String,
    /// Slots this node gave up, and does not claim for a while, because
    /// another process on its host holds their node (it could not issue
    /// as it); empty when none.
    pub passed_over: Vec<PassedOverDescription>,
    /// The clock check: this node's clock against up to 5 slot holders'
    /// and the coordinator's (PostgreSQL, ZooKeeper); null when it is off.
    #[schema(required = true)]
    pub clock_check: Option<ClockCheckDescription>,
}

/// A slot given up because another process on the host holds its node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = PassedOver)]
pub struct PassedOverDescription {
    /// The slot.
    pub slot: u64,
    /// Why: the node's lock file, its state directory and the holder's
    /// pid.
    pub reason: String,
    /// How much longer it is passed over.
    pub for_ms: u64,
}

/// The last clock check of a coordinated node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ClockCheck)]
pub struct ClockCheckDescription {
    /// The skew allowed (`--max-clock-skew`).
    pub max_skew_ms: u64,
    /// How far this node's clock is ahead of the median of the clocks
    /// read (negative: behind); null before a check with a reading.
    #[schema(required = true)]
    pub offset_ms: Option<i64>,
    /// The largest error bar of the readings: half a round trip, and 1 ms.
    #[schema(required = true)]
    pub error_ms: Option<i64>,
    /// Whether more than half of the clocks read put this one beyond the
    /// skew allowed: the node then claims no slot.
    pub skewed: bool,
    /// How long ago the last check ended; null before the first.
    #[schema(required = true)]
    pub checked_ms_ago: Option<u64>,
    /// Each reading: the source, and how far this clock is ahead of it.
    pub readings: Vec<String>,
    /// The sources asked that did not answer, and why.
    pub unanswered: Vec<String>,
    /// The last check in a sentence; null before the first.
    #[schema(required = true)]
    pub summary: Option<String>,
}

/// The schema of the claim engine's state.
fn claim_state() -> ObjectBuilder {
    one_of_names(
        ClaimState::ALL.map(ClaimState::name),
        "What the claim engine is doing: opening a lease or session, looking for a free slot, finding them all taken (and retrying), finding its clock too far from the fleet's (and retrying), holding a slot, or released for good (shutdown).",
    )
}

/// The schema of what holds a slot key.
fn session_kind() -> ObjectBuilder {
    one_of_names(
        ["lease", "session"],
        "What holds the slot key: an etcd lease, or a ZooKeeper or PostgreSQL session.",
    )
}

impl CoordinatorDescription {
    /// What `status` says, with the deadline counted from `now`.
    pub fn new(status: &CoordinatorStatus, now: Instant) -> CoordinatorDescription {
        CoordinatorDescription {
            url: status.url.clone(),
            fleet: status.fleet.clone(),
            slots: status.slots.to_string(),
            state: status.state.name(),
            slot: status.slot,
            session_kind: status.session_kind,
            session_id: status.session_id.clone(),
            ttl_ms: status.ttl.as_millis() as u64,
            time_to_deadline_ms: status
                .time_to_deadline(now)
                .map(|left| left.as_millis() as u64),
            claims_acquired: status.claims,
            claims_lost: status.losses,
            holder: status.holder.clone(),
            passed_over: status
                .passed_over
                .iter()
                .map(|passed| PassedOverDescription {
                    slot: passed.slot,
                    reason: passed.reason.clone(),
                    for_ms: passed.until.saturating_duration_since(now).as_millis() as u64,
                })
                .collect(),
            clock_check: status.max_clock_skew.map(|max| {
                let verdict = status.clock.as_ref();
                ClockCheckDescription {
                    max_skew_ms: max.as_millis() as u64,
                    offset_ms: verdict.and_then(|(v, _)| v.offset_ms),
                    error_ms: verdict.and_then(|(v, _)| v.error_ms()),
                    skewed: verdict.is_some_and(|(v, _)| v.skewed),
                    checked_ms_ago: verdict
                        .map(|(_, at)| now.saturating_duration_since(*at).as_millis() as u64),
                    readings: verdict.map_or_else(Vec::new, |(v, _)| {
                        v.readings.iter().map(ToString::to_string).collect()
                    }),
                    unanswered: verdict.map_or_else(Vec::new, |(v, _)| v.unanswered.clone()),
                    summary: verdict.map(|(v, _)| v.to_string()),
                }
            }),
        }
    }
}

/// The process answers (`GET /healthz`: `ok`), or the node may issue IDs
/// (`GET /readyz`: `ready`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Status {
    /// `ok` or `ready`.
    pub status: StatusWord,
}

/// What a status answer says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusWord {
    /// The process answers.
    Ok,
    /// The node may issue IDs.
    Ready,
}
