//! What a claim engine reports about itself: its [`ClaimState`], the
//! [`CoordinatorStatus`] shown by `/v1/node` and metrics, and the
//! [`ClaimRecord`]s of its last claims.

use std::time::{Duration, Instant};

use super::{ClockVerdict, SlotRange};

/// What the engine is doing, for `/v1/node` and metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoordinatorStatus {
    /// The coordinator's URL.
    pub url: String,
    /// The fleet's name.
    pub fleet: String,
    /// The slots this node may claim.
    pub slots: SlotRange,
    /// What the engine is doing now.
    pub state: ClaimState,
    /// The slot held, if any (the first of its block).
    pub slot: Option<u64>,
    /// How many slots the node holds at once, from `slot` on.
    pub slots_per_node: u64,
    /// What the coordinator calls a session: `lease` (etcd), `session`
    /// (ZooKeeper).
    pub session_kind: &'static str,
    /// The open lease or session, if any, as the coordinator names it.
    pub session_id: Option<String>,
    /// The TTL granted to the open session, else the one asked for.
    pub ttl: Duration,
    /// Written into the slot key: who this node is.
    pub holder: String,
    /// Claims made so far (the generation of the latest claim).
    pub claims: u64,
    /// Claims lost so far (not counting a clean release).
    pub losses: u64,
    /// When the request that won the current claim was sent: the slot
    /// cannot have become this node's before then.
    pub claimed_at: Option<Instant>,
    /// Until when the current claim may be used.
    pub deadline: Option<Instant>,
    /// Slots this node gave up and does not claim for a while, because
    /// another process on its host holds their node.
    pub passed_over: Vec<PassedOver>,
    /// The last clock check and when it ended; `None` before the first,
    /// or with the check off.
    pub clock: Option<(ClockVerdict, Instant)>,
    /// The allowed clock skew; `None`: the check is off.
    pub max_clock_skew: Option<Duration>,
}

/// A slot a node gave up and does not claim for a while: another process
/// on its host holds the slot's node, so this one could not issue as it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PassedOver {
    /// The slot.
    pub slot: u64,
    /// Why: the node lock's message (state directory, holder's pid).
    pub reason: String,
    /// Until when it is passed over.
    pub until: Instant,
}

/// What a claim engine is doing.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::ClaimState;
///
/// assert_eq!(ClaimState::AllTaken.name(), "all_taken");
/// assert!(ClaimState::ALL.iter().all(|state| !state.name().is_empty()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClaimState {
    /// Opening a lease or session (at start, and after a loss).
    Connecting,
    /// A session is open; looking for a free slot.
    Claiming,
    /// A session is open, but every slot of the range is taken; retrying.
    AllTaken,
    /// The node's clock is too far from the clocks it was checked against:
    /// it claims no slot until it is back in range.
    ClockSkew,
    /// A slot is held.
    Held,
    /// The claim was given up for good (clean shutdown).
    Released,
}

impl ClaimState {
    /// Every state, for metric labels.
    pub const ALL: [ClaimState; 6] = [
        ClaimState::Connecting,
        ClaimState::Claiming,
        ClaimState::AllTaken,
        ClaimState::ClockSkew,
        ClaimState::Held,
        ClaimState::Released,
    ];

    /// Its name in `/v1/node` and metrics: `connecting`, `claiming`,
    /// `all_taken`, `clock_skew`, `held`, `released`.
    pub fn name(self) -> &'static str {
        match self {
            ClaimState::Connecting => "connecting",
            ClaimState::Claiming => "claiming",
            ClaimState::AllTaken => "all_taken",
            ClaimState::ClockSkew => "clock_skew",
            ClaimState::Held => "held",
            ClaimState::Released => "released",
        }
    }
}

/// One claim the engine made: when it was won and until when it could be
/// used. Kept for the last few claims, for `/v1/node` and to check that a
/// node always stopped before the next holder of its slot started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClaimRecord {
    /// The slot claimed (the first of its block).
    pub slot: u64,
    /// How many slots the claim held, from `slot` on (1 unless the node
    /// holds several).
    pub slots: u64,
    /// The claim's generation.
    pub generation: u64,
    /// When the request that won the slot was sent: the slot cannot have
    /// become this node's before then.
    pub claimed_at: Instant,
    /// The last instant at which IDs could be issued under the claim: its
    /// deadline, or when it was given up if that came first.
    pub valid_until: Instant,
    /// When the engine gave the claim up (lost or released); `None` while
    /// it is held.
    pub ended_at: Option<Instant>,
}

impl CoordinatorStatus {
    /// How long the current claim may still be used; `None` when fenced.
    pub fn time_to_deadline(&self, now: Instant) -> Option<Duration> {
        self.deadline
            .map(|deadline| deadline.saturating_duration_since(now))
    }
}
