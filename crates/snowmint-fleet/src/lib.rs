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
//! # Layout of the crate
//!
//! - `lib.rs`: the interfaces: [`SlotSource`], [`NodeState`], [`Claim`],
//!   [`FleetError`].
//! - `static_source.rs`: [`StaticSource`], identities that cannot be lost
//!   (explicit values, hostname ordinals).
//! - `hostname.rs`: [`hostname_ordinal`] (`ids-12` -> 12) and
//!   [`system_hostname`].
//! - `mark.rs`: [`MarkFile`], the high-water mark's state file (atomic
//!   writes, the start-up wait-or-refuse rule).
//! - `state_dir.rs`: [`create_state_dir`], the directory the state files
//!   live in, and [`last_written_slot`], the slot a restarted node most
//!   likely held.
//! - `lock.rs`: [`NodeLock`], one holder per node on a host (an exclusive
//!   lock beside the state file).
//! - `reservation.rs`: [`NodeMark`] and [`Reservation`], reserving the mark
//!   ahead of the clock in steps so that no ID costs a write.
//! - `issuer/`: [`Issuer`], minting under a claim: it follows a
//!   [`SlotSource`], holds the node's lock, builds a generator per claim
//!   that resumes after the mark, and hands an ID out only when the claim is
//!   in force (fencing) and the mark covers it; [`Refusal`] says why not,
//!   [`NodeReport`] what the node is. `snowmint serve` is a front end over
//!   it; so is any program that mints in-process.
//! - `coordinator/`: the claim engine shared by every coordination service
//!   ([`Coordinator`], [`connect`]), its errors ([`ClaimError`]), its
//!   settings and their one reading ([`CoordinatorUrl`], [`FleetName`],
//!   [`SlotRange`], [`parse_claim_ttl`], [`CoordinatorConfig`]) and the
//!   primitives a service must offer ([`Backend`]).
//! - `reason.rs`: how I/O errors read in messages (the system's words,
//!   once).
//! - `etcd.rs` (feature `etcd`): [`EtcdBackend`], leases and transactions.
//! - `zookeeper.rs` (feature `zookeeper`): [`ZooKeeperBackend`], ephemeral
//!   znodes and sessions.
//! - `postgres.rs` (feature `postgres`): `PostgresBackend`, rows of a
//!   PostgreSQL database leased on its clock, and `postgres_schema`, the
//!   tables' DDL.

mod coordinator;
#[cfg(feature = "etcd")]
mod etcd;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "zookeeper")]
mod zookeeper;

#[cfg(any(feature = "etcd", feature = "zookeeper"))]
pub use coordinator::TlsFiles;
pub use coordinator::{
    Backend, BackendError, Cause, ClaimEnd, ClaimEntry, ClaimError, ClaimRecord, ClaimState,
    ClockCheck, ClockReading, ClockSample, ClockSource, ClockVerdict, ConfigError, Coordinator,
    CoordinatorAccess, CoordinatorConfig, CoordinatorStatus, CoordinatorTls, CoordinatorUrl,
    Credentials, FleetName, GuardedWrite, HIDDEN, HistoryRetention, Holder, Login, MAX_FLEET_NAME,
    MAX_HISTORY_AGE, MAX_HISTORY_KEEP, MAX_TTL, MIN_TTL, Opened, PEERS, PassedOver, PeerClock,
    PostgresUrl, Secret, SlotRange, SslMode, Versioned, Whois, WhoisAnswer, connect,
    mask_user_part, parse_claim_ttl, parse_clock_check_every, parse_history_keep,
    parse_history_max_age, parse_max_clock_skew, read_holders, read_holders_with, whois,
    whois_with,
};
/// etcd's messages and calls, for the tests' own etcd client (not a stable
/// API).
#[cfg(feature = "etcd")]
#[doc(hidden)]
pub use etcd::api as etcd_api;
#[cfg(feature = "etcd")]
pub use etcd::{EtcdBackend, EtcdSession};
#[cfg(feature = "postgres")]
pub use postgres::{PostgresBackend, PostgresSession, postgres_schema};
#[cfg(feature = "zookeeper")]
pub use zookeeper::{ZooKeeperBackend, ZooKeeperSession};

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};

use snowmint::Node;
use tokio::sync::watch;

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

pub use hostname::{ordinal as hostname_ordinal, system_hostname};
pub use issuer::{
    ClaimInForce, EmbeddedIssuer, Issuer, IssuerBuilder, IssuerOptions, NodeReport, Refusal,
};
pub use lock::NodeLock;
pub use mark::MarkFile;
pub use node_source::NodeSource;
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
    /// The slot held.
    pub slot: u64,
    /// The (datacenter, machine) pair of that slot.
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

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FleetError {
    /// The node's identity is not valid for the layout.
    #[error(transparent)]
    Id(#[from] snowmint::Error),
    /// Reading or writing local state failed.
    ///
    /// The message says what was being done and the system's words for
    /// what went wrong ("cannot read the state file /x: permission
    /// denied"); the I/O error itself is in `error`, not repeated as a
    /// source.
    #[error("{context}: {}", reason::io_reason(error))]
    Io {
        /// What was being done, with the path: "cannot read the state
        /// file /x".
        context: String,
        /// The underlying error.
        error: std::io::Error,
    },
    /// The state directory cannot be used.
    #[error("state directory {} {problem}", path.display())]
    StateDir {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it: "is not a directory (it is a file)".
        problem: String,
    },
    /// The coordination service could not be used (this build lacks its
    /// backend, or there is no async runtime to run the claim engine in).
    #[error("coordinator {coordinator}: {message}")]
    Coordinator {
        /// Which coordinator (its URL).
        coordinator: String,
        /// What went wrong.
        message: String,
    },
    /// The claim engine failed (a mark could not be written).
    #[error(transparent)]
    Claim(#[from] ClaimError),
    /// The node holds no valid claim.
    #[error("no slot is held: {reason}")]
    Fenced {
        /// Why.
        reason: String,
    },
    /// A state file that exists but cannot be understood.
    #[error("state file {}: {reason}", path.display())]
    StateFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The recorded high-water mark lies further ahead of the clock than the
    /// node is willing to wait at start.
    #[error(
        "the state file {} says IDs may have been issued up to {} ({mark_ms} ms), but the clock reads {} ({now_ms} ms), {} ms earlier; that is more than the {} ms this node waits at start, so it refuses to start. Fix the clock, or wait until it passes the mark",
        path.display(),
        snowmint::format_time(*mark_ms),
        snowmint::format_time(*now_ms),
        mark_ms.saturating_sub(*now_ms),
        max_wait.as_millis()
    )]
    MarkAhead {
        /// The state file.
        path: PathBuf,
        /// The recorded mark, Unix ms.
        mark_ms: i64,
        /// The clock reading, Unix ms.
        now_ms: i64,
        /// The longest gap waited out.
        max_wait: Duration,
    },
    /// Another holder (another process on this host, or another handle in
    /// this one) has the node's lock: it issues as this node from this
    /// state directory.
    #[error("{}", lock::held_message(state_dir, *node, lock_file, *pid))]
    NodeLocked {
        /// The state directory.
        state_dir: PathBuf,
        /// The node, when known.
        node: Option<Node>,
        /// The lock file.
        lock_file: PathBuf,
        /// The holder's pid, as it wrote it into the lock file (not yet
        /// written, or unreadable: `None`).
        pid: Option<u32>,
    },
    /// A hostname that yields no slot.
    #[error("hostname {:?}: {reason}", snowmint::value::echo(.hostname))]
    Hostname {
        /// The hostname.
        hostname: String,
        /// Why it yields no slot.
        reason: String,
    },
    /// A coordinator setting (URL, fleet, slots, claim TTL) that cannot be
    /// used; the message names the value and what is accepted.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Settings of an [`IssuerBuilder`] that cannot be used together, or
    /// a missing one ("no node was given: ...").
    #[error("{0}")]
    Setting(String),
}

/// Where a node's identity comes from, and what keeps it.
///
/// Static identities (flags, hostname ordinal) never change; coordinated
/// ones (etcd, ZooKeeper) can be lost and claimed again, possibly as another
/// slot.
pub trait SlotSource: Send + Sync + 'static {
    /// A short name for logs and `/v1/node`: `static`, `hostname`, `etcd`,
    /// `zookeeper`.
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
