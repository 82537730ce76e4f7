//! What the claim engine holds: the session and what the coordinator
//! granted ([`Live`]), the claim held ([`Held`]), and the engine's state
//! behind its one lock ([`Inner`]).

use super::super::{ClaimError, ClaimRecord, ClockVerdict};
use snowmint::Node;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How many ended claims [`Coordinator::claims`](super::super::Coordinator::claims)
/// remembers.
pub(super) const HISTORY: usize = 32;

/// A session with what the coordinator granted.
pub(in crate::coordinator) struct Live<S> {
    pub(in crate::coordinator) session: S,
    pub(in crate::coordinator) ttl: Duration,
    pub(in crate::coordinator) id: String,
}

/// A session that could not be released when it ended, and the slot keys
/// it held (none, one, or a block's).
pub(super) struct Unreleased<S> {
    pub(super) live: Arc<Live<S>>,
    pub(super) keys: Vec<String>,
}

/// What the engine holds, behind one lock.
pub(in crate::coordinator) struct Inner<S> {
    /// The open session, kept here (not only in the task) so that
    /// `release` can end it whatever the task was doing.
    pub(in crate::coordinator) session: Option<Arc<Live<S>>>,
    pub(in crate::coordinator) claim: Option<Held>,
    /// Ended claims, oldest first, at most `HISTORY`.
    pub(in crate::coordinator) history: VecDeque<ClaimRecord>,
    pub(in crate::coordinator) generation: u64,
    pub(in crate::coordinator) losses: u64,
    /// Set while the open session found every slot taken.
    pub(in crate::coordinator) all_taken: bool,
    /// Set once the claim is given up for good.
    pub(in crate::coordinator) released: bool,
    /// The (first) slot of the last claim, tried first by the next one.
    pub(in crate::coordinator) last_slot: Option<u64>,
    /// The claim (generation) the issuer asked to give up, and why.
    pub(in crate::coordinator) pass_over: Option<(u64, String)>,
    /// Slots given up for that reason, not claimed until the instant.
    pub(in crate::coordinator) passed_over: BTreeMap<u64, (String, Instant)>,
    /// The last clock check, and when it ended.
    pub(in crate::coordinator) clock: Option<(ClockVerdict, Instant)>,
    /// Set while the last clock check found the clock out of range.
    pub(in crate::coordinator) clock_skewed: bool,
    /// The last reading of each source the clock check read, for the
    /// next check's rates.
    pub(in crate::coordinator) rate_samples: Vec<crate::coordinator::clock_check::RateSample>,
}

impl<S> Inner<S> {
    /// Nothing held yet.
    pub(in crate::coordinator) fn new() -> Inner<S> {
        Inner {
            session: None,
            claim: None,
            history: VecDeque::new(),
            generation: 0,
            losses: 0,
            all_taken: false,
            released: false,
            last_slot: None,
            pass_over: None,
            passed_over: BTreeMap::new(),
            clock: None,
            clock_skewed: false,
            rate_samples: Vec::new(),
        }
    }

    /// The slots passed over at `now`, forgetting those whose time is up.
    pub(in crate::coordinator) fn passed_over_now(
        &mut self,
        now: Instant,
    ) -> Vec<super::super::PassedOver> {
        self.passed_over.retain(|_, (_, until)| *until > now);
        self.passed_over
            .iter()
            .map(|(slot, (reason, until))| super::super::PassedOver {
                slot: *slot,
                reason: reason.clone(),
                until: *until,
            })
            .collect()
    }

    /// Ends the current claim, if any, at `now`.
    pub(in crate::coordinator) fn end_claim(&mut self, now: Instant) -> Option<Held> {
        let held = self.claim.take()?;
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(ClaimRecord {
            valid_until: held.deadline.min(now),
            ended_at: Some(now),
            ..held.record()
        });
        Some(held)
    }
}

/// What the search for a free slot found.
pub(super) enum Free {
    /// This slot, won by the request sent at that instant, with the
    /// clock's reading (ms) just before it: every ID of the claim is at
    /// or after it.
    Won(u64, Instant, i64),
    /// None: why.
    None(ClaimError),
}

/// The claim held now.
#[derive(Debug, Clone, Copy)]
pub(in crate::coordinator) struct Held {
    /// The first slot of the block held.
    pub(in crate::coordinator) slot: u64,
    /// How many slots the block holds, from `slot` on.
    pub(in crate::coordinator) slots: u64,
    pub(in crate::coordinator) node: Node,
    pub(in crate::coordinator) generation: u64,
    pub(in crate::coordinator) claimed_at: Instant,
    /// The node's clock (ms) when it asked for the block, as the claim
    /// history records it.
    pub(in crate::coordinator) start_ms: i64,
    pub(in crate::coordinator) deadline: Instant,
    pub(in crate::coordinator) floor_ms: Option<i64>,
    /// The claim's generation in the history of its (first) slot; `None`
    /// with the history off.
    pub(in crate::coordinator) history_generation: Option<u64>,
}

impl Held {
    pub(in crate::coordinator) fn record(&self) -> ClaimRecord {
        ClaimRecord {
            slot: self.slot,
            slots: self.slots,
            generation: self.generation,
            claimed_at: self.claimed_at,
            valid_until: self.deadline,
            ended_at: None,
        }
    }
}
