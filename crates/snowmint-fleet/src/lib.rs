//! Node identity and durability for snowmint.
//!
//! Two nodes with the same (datacenter, machine) pair issue colliding IDs,
//! and a node that restarts with its clock set back could issue an ID it
//! already issued. This crate answers the two questions a service asks
//! before handing out an ID:
//!
//! - *Which node am I, and may I issue right now?* A [`SlotSource`]
//!   publishes the node's [`NodeState`]: a [`Claim`] on a slot (from flags, a
//!   hostname ordinal, or a coordination service) or a fenced state in which
//!   no ID may be issued.
//! - *Up to when may I already have issued IDs?* The high-water mark, kept
//!   durably and reserved ahead of the clock, so that after a crash or a
//!   take-over no ID at or below it is issued again.
//!
//! A slot numbers a node: `slot = datacenter * 32 + machine` in the Twitter
//! layout (see [`snowmint::Layout::node_from_slot`]).
//!
//! # How it fits together
//!
//! A [`SlotSource`] answers the first question: it publishes the node's
//! [`NodeState`] and raises its high-water mark. A [`NodeSource`] says
//! where the identity comes from and makes the source for it: a
//! [`StaticSource`] for identities that cannot be lost (explicit values,
//! or the ordinal at the end of a hostname: [`hostname_ordinal`] of
//! [`system_hostname`]), or a [`Coordinator`], the claim engine, for a
//! slot leased from etcd, ZooKeeper or PostgreSQL. The engine holds every
//! rule (claiming, keeping alive, fencing, the slot's shared mark, the
//! claim history, the clock check) and a [`Backend`] only speaks one
//! service's primitives ([`EtcdBackend`], [`ZooKeeperBackend`],
//! `PostgresBackend`). Above both sits the registry: [`connect`] picks the
//! backend a [`CoordinatorUrl`] names, with the TLS and credentials of a
//! [`CoordinatorAccess`], so that the engine never imports a backend.
//! Passwords are [`Secret`]s, never shown.
//!
//! The second question is the node's own files, in a state directory
//! ([`create_state_dir`], [`default_state_dir`]): a [`MarkFile`] keeps
//! the high-water mark, written atomically; a [`NodeLock`] keeps a second
//! process off the node; [`NodeMark`] and [`Reservation`] reserve the
//! mark ahead of the clock in steps, so that no ID costs a write.
//!
//! The [`Issuer`] is where they meet: it follows a slot source, holds the
//! node's lock, builds a generator per claim that resumes after the mark,
//! and hands an ID out only when the claim is in force (fencing) and the
//! mark covers it; a [`Refusal`] says why not, a [`NodeReport`] what the
//! node is. `snowmint serve` is a front end over it, and so is any
//! program that mints in-process through an [`EmbeddedIssuer`]. Every
//! failure is a [`FleetError`]; settings that cannot be used together are
//! a typed [`SettingError`] inside it.
//!
//! Reading a fleet from outside it takes no claim: [`read_holders`] lists
//! the nodes (how clients find them) and [`whois`] names the claim that
//! issued an ID.

mod coordinator;
#[cfg(feature = "etcd")]
mod etcd;
#[cfg(feature = "postgres")]
mod postgres;
mod registry;
#[cfg(feature = "zookeeper")]
mod zookeeper;

#[cfg(any(feature = "etcd", feature = "zookeeper"))]
pub use coordinator::TlsFiles;
pub use coordinator::{
    Backend, BackendError, Cause, ClaimEnd, ClaimEntry, ClaimError, ClaimRecord, ClaimState,
    ClockCheck, ClockReading, ClockSample, ClockSource, ClockVerdict, ConfigError, Coordinator,
    CoordinatorAccess, CoordinatorConfig, CoordinatorStatus, CoordinatorTls, CoordinatorUrl,
    Credentials, FleetHistory, FleetName, GuardedWrite, HIDDEN, HistoryRetention, Holder, Login,
    MAX_FLEET_NAME, MAX_HISTORY_AGE, MAX_HISTORY_KEEP, MAX_TTL, MIN_CLOCK_RATE, MIN_TTL, Opened,
    PEERS, PassedOver, PeerClock, PostgresUrl, RateReading, Secret, SlotClaims, SlotRange, SslMode,
    Versioned, Whois, WhoisAnswer, mask_user_part, parse_claim_ttl, parse_clock_check_every,
    parse_history_keep, parse_history_max_age, parse_max_clock_skew,
};
/// etcd's messages and calls, for the tests' own etcd client (not a stable
/// API).
#[cfg(feature = "etcd")]
#[doc(hidden)]
pub use etcd::api as etcd_api;
#[cfg(feature = "etcd")]
pub use etcd::{EtcdBackend, EtcdSession};
#[cfg(feature = "postgres")]
pub use postgres::{
    PostgresBackend, PostgresSession, copy_out as postgres_copy_out, postgres_schema,
};
#[cfg(feature = "zookeeper")]
pub use zookeeper::{ZooKeeperBackend, ZooKeeperSession};

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use snowmint::Node;
use tokio::sync::watch;

mod error;
mod hostname;
mod issuer;
mod lock;
mod mark;
mod node_source;
mod reason;
mod reservation;
mod state_dir;
mod static_source;
#[cfg(test)]
mod testing;
#[cfg(any(feature = "etcd", feature = "zookeeper"))]
mod tls_probe;

pub use error::{FleetError, SettingError};
pub use hostname::{ordinal as hostname_ordinal, system_hostname};
pub use issuer::{
    ClaimInForce, EmbeddedIssuer, Issuer, IssuerBuilder, IssuerOptions, NodeReport, Refusal,
};
pub use lock::NodeLock;
pub use mark::MarkFile;
pub use node_source::NodeSource;
pub use registry::{
    connect, read_fleet_history, read_holders, read_holders_with, whois, whois_with,
};
pub use reservation::{NodeMark, Reservation};
pub use state_dir::{create_state_dir, default_state_dir, last_written_slot, state_dir_exists};
pub use static_source::StaticSource;

// The examples of the crate's README are compiled as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The most IDs a node hands out in one request: one millisecond's worth
/// in the Twitter layout. The service's `/v1/ids?count=`, gRPC's `NextIds`
/// and `StreamIds` batches, and the Rust client's batches all stop here
/// (`u32`: the gRPC messages carry counts as `uint32`).
pub const MAX_BATCH: u32 = 4096;

/// A boxed future, so that [`SlotSource`] stays object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The right to issue IDs as one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The slot held: with several slots per node, the first (lowest) of
    /// the block held.
    pub slot: u64,
    /// How many slots the claim holds: `slot .. slot + slots`, an aligned
    /// block (1 for a node of one slot). They are claimed, kept, fenced and
    /// released together, and the node issues from all of them.
    pub slots: u64,
    /// The (datacenter, machine) pair of `slot`.
    pub node: Node,
    /// Counts claims made by this source (starting at 1), so that a holder
    /// can tell a renewed claim from a new one: when it changes, the
    /// generator is rebuilt.
    pub generation: u64,
    /// Until when the claim is known to be held; `None` for identities that
    /// cannot be lost (flags, hostname). Past this instant the node must not
    /// issue IDs, whatever the state says.
    pub valid_until: Option<Instant>,
    /// A mark left by earlier holders of the slot (Unix ms): no ID at or
    /// below it may be issued under this claim.
    pub floor_ms: Option<i64>,
    /// What to show about the claim (`/v1/node`): coordinator, lease id...
    pub details: BTreeMap<String, String>,
}

/// What a node may do right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeState {
    /// Holds a slot and may issue IDs (until `valid_until`, if set).
    Active(Claim),
    /// Must not issue IDs: starting, claim lost, coordinator unreachable,
    /// all slots taken...
    Fenced {
        /// Why, for logs, `/readyz` and 503 answers.
        reason: String,
    },
}

impl NodeState {
    /// The claim, if active and not past its deadline at `now`.
    pub fn claim_at(&self, now: Instant) -> Option<&Claim> {
        match self {
            NodeState::Active(claim) if claim.valid_until.is_none_or(|d| now < d) => Some(claim),
            _ => None,
        }
    }
}

/// Where a node's identity comes from, and what keeps it.
///
/// Static identities (flags, hostname ordinal) never change; coordinated
/// ones (etcd, ZooKeeper, PostgreSQL) can be lost and claimed again,
/// possibly as another slot.
pub trait SlotSource: Send + Sync + 'static {
    /// A short name for logs and `/v1/node`: `static`, `hostname`, `etcd`,
    /// `zookeeper`, `postgres`.
    fn kind(&self) -> &'static str;

    /// The current state; every change is published on this channel.
    fn state(&self) -> watch::Receiver<NodeState>;

    /// Records, durably and where other holders of the slot will see it,
    /// that IDs up to `mark_ms` may be issued under the claim of
    /// `generation`. Must complete before such IDs are handed out. Sources
    /// without shared storage return `Ok` at once.
    fn reserve(&self, generation: u64, mark_ms: i64) -> BoxFuture<'_, Result<(), FleetError>>;

    /// What a claim engine is doing, for `/v1/node` and metrics; `None`
    /// for sources without one (flags, hostname).
    fn coordinator_status(&self) -> Option<CoordinatorStatus> {
        None
    }

    /// Which claim of the fleet covered the slot of `id` at its
    /// millisecond, from the fleet's claim history; `None` for sources
    /// without a coordinator (flags, hostname), which keep no history.
    fn whois(&self, id: snowmint::SnowflakeId) -> BoxFuture<'_, Option<Result<Whois, FleetError>>> {
        let _ = id;
        Box::pin(std::future::ready(None))
    }

    /// Gives the claim up (clean shutdown), so that the slot frees at once.
    fn release(&self) -> BoxFuture<'_, ()>;

    /// Asks the source to give up the claim of `generation`, which this
    /// process cannot use (`reason`: another process on this host holds
    /// the lock of its node), and to claim another slot, passing this one
    /// over for a while. Returns whether it will; a source whose node
    /// cannot change (flags, hostname) returns `false`, and the node waits
    /// for the lock instead. See `issuer/claims.rs`.
    fn pass_over(&self, generation: u64, reason: String) -> bool {
        let _ = (generation, reason);
        false
    }
}
