//! The first attempt of every request: the fencing check from a per-thread
//! snapshot of the claim, the generator's compare-and-swap, the mark check.
//!
//! Reading the claim afresh costs two locks (the source's watch channel,
//! the current generator) and a read of the monotonic clock, more than the
//! generator itself. So each thread keeps a snapshot of what it read last:
//! the claim's generation and deadline, its generator and the cell of its
//! reserved mark. The snapshot is used only while
//!
//! - it is of this issuer (`Inner::id`),
//! - nothing it was taken from changed since: the source published no new
//!   state (the watch channel's version, one atomic load: a renewal, a
//!   fence, a new claim each publish one), and the issuer replaced neither
//!   the generator nor the reason it has none (`Inner::epoch`, one atomic
//!   load),
//! - and the claim's deadline has not passed. An async request (the
//!   service's) reads the monotonic clock for that at every ID. A
//!   synchronous call of the embedded issuer reads it at the first ID of
//!   each millisecond of IDs, and after the generator refused (under
//!   `borrow`, whose IDs may stay in one millisecond while the clock goes
//!   back, at every ID): reading it at every ID would double the cost of
//!   an ID, since a clock read is most of it. So a thread hands out at
//!   most the rest of one millisecond's IDs past a deadline, and only if
//!   the wall clock stands still across it; the claim engine fences the
//!   node at the deadline itself anyway, and the high-water mark, not the
//!   deadline, is what keeps a late ID unique: it is stored under the slot
//!   before the ID leaves (docs/ARCHITECTURE.md §3).
//!
//! Anything else (no snapshot, a stale one, a refusal by the generator, an
//! ID past the reserved mark) goes to the slow steps in `mod.rs`, which
//! take the claim afresh and check it again after any wait.
//!
//! The snapshot holds the generator and the mark's cell only, not the
//! reservation: a thread that called a dropped issuer once must not keep
//! its claim engine or its node's lock alive.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

use snowmint::{Clock, ClockPolicy, Error, ErrorKind, Generator, Layout, SnowflakeId};
use tokio::sync::watch;

use super::{Inner, Minting, Refusal, claim_in_force, past_deadline};
use crate::NodeState;

/// What a thread read last about one issuer's claim.
struct Snapshot {
    /// The issuer it is of (`Inner::id`).
    issuer: u64,
    /// `Inner::epoch` when it was taken.
    epoch: u64,
    /// The source's state, seen as of the snapshot: `has_changed` says
    /// whether anything was published since.
    state: watch::Receiver<NodeState>,
    generation: u64,
    deadline: Option<Instant>,
    generator: Arc<Generator<Arc<dyn Clock>>>,
    /// The layout, copied: its timestamp is read from every ID.
    layout: Layout,
    /// The reserved mark of the claim's reservation.
    covered: Arc<AtomicI64>,
    /// Half the reservation's step: IDs this close to the mark start a
    /// write that moves it on.
    half_step_ms: i64,
    /// The timestamp (Unix ms) of the last ID for which the deadline was
    /// checked and found not passed; `i64::MIN` for none.
    checked_ms: i64,
    /// Whether `checked_ms` may be trusted for the next IDs: not under
    /// `borrow`.
    remember_check: bool,
}

thread_local! {
    static SNAPSHOT: RefCell<Option<Snapshot>> = const { RefCell::new(None) };
}

/// How the first attempt ended, when it did not issue: boxed, so that the
/// common case returns no more than the ID (a big enum returned on every
/// call costs more than the box does on the slow path).
pub(super) type First = Result<SnowflakeId, Box<Slow>>;

/// Why the first attempt did not issue.
pub(super) enum Slow {
    /// Refused for good (no claim, the clock outside the layout).
    Refused(Refusal),
    /// Made under `minting`, but past its reserved mark: the mark must be
    /// written before the ID may leave.
    Uncovered {
        minting: Arc<Minting>,
        id: SnowflakeId,
    },
    /// The generator refused: the clock is behind the last ID. The `wait`
    /// policy waits; the others refuse.
    ClockBehind { minting: Arc<Minting>, error: Error },
}

impl Inner {
    /// Makes one ID under the claim in force, if nothing needs waiting
    /// for. `EXACT`: the claim's deadline is checked against the monotonic
    /// clock at this very ID (the service: a request is worth a clock
    /// read); otherwise at the first ID of each millisecond of IDs (the
    /// embedded issuer's synchronous calls; see the module docs).
    #[inline]
    pub(super) fn first_attempt<const EXACT: bool>(&self) -> First {
        let attempt = SNAPSHOT.try_with(|cell| {
            // Taken: re-entered (by a clock that asks for IDs?); go on
            // without the snapshot.
            let Ok(mut slot) = cell.try_borrow_mut() else {
                return self.attempt_without_snapshot::<EXACT>();
            };
            match slot.as_mut() {
                Some(snapshot) if self.is_current(snapshot) => self.attempt::<EXACT>(snapshot),
                _ => self.attempt_with_new_snapshot::<EXACT>(&mut slot),
            }
        });
        // The thread is exiting and its snapshot is gone.
        attempt.unwrap_or_else(|_| self.attempt_without_snapshot::<EXACT>())
    }

    /// The minting of the claim in force, after the fencing check, from
    /// the snapshot when it is current (for batches).
    pub(super) fn acquire(&self) -> Result<Arc<Minting>, Refusal> {
        let cached = SNAPSHOT
            .try_with(|cell| {
                let slot = cell.try_borrow().ok()?;
                let snapshot = slot.as_ref().filter(|s| self.is_current(s))?;
                let in_force = snapshot.deadline.is_none_or(|d| Instant::now() < d);
                Some(in_force.then_some(snapshot.generation))
            })
            .ok()
            .flatten();
        match cached {
            Some(Some(generation)) => self.minting_of(generation),
            Some(None) => Err(Refusal::NoClaim {
                reason: past_deadline(),
            }),
            None => self.minting(),
        }
    }

    #[inline]
    fn is_current(&self, snapshot: &Snapshot) -> bool {
        // Acquire pairs with the Release of `changed`: the epoch of a
        // change is seen only with the change.
        snapshot.issuer == self.id
            && snapshot.epoch == self.epoch.load(Ordering::Acquire)
            && matches!(snapshot.state.has_changed(), Ok(false))
    }

    /// The hot path proper.
    #[inline(always)]
    fn attempt<const EXACT: bool>(&self, snapshot: &mut Snapshot) -> First {
        let id = match snapshot.generator.next_id() {
            Ok(id) => id,
            Err(error) => {
                // The clock went back (or out of the layout): the next ID
                // checks the deadline, whatever millisecond it is of.
                snapshot.checked_ms = i64::MIN;
                return self.generator_refused(snapshot.generation, error);
            }
        };
        let ts_ms = snapshot.layout.timestamp_ms(id);
        if EXACT || ts_ms != snapshot.checked_ms {
            if snapshot.deadline.is_some_and(|d| Instant::now() >= d) {
                return refused(Refusal::NoClaim {
                    reason: past_deadline(),
                });
            }
            if snapshot.remember_check {
                snapshot.checked_ms = ts_ms;
            }
        }
        // Acquire pairs with the Release of the reservation's write:
        // seeing the new mark means seeing that its write finished.
        let covered = snapshot.covered.load(Ordering::Acquire);
        if ts_ms > covered {
            return self.uncovered(snapshot.generation, &snapshot.generator, id);
        }
        if ts_ms > covered.saturating_sub(snapshot.half_step_ms) {
            self.refresh(snapshot.generation);
        }
        Ok(id)
    }

    /// The attempt with a snapshot taken afresh. Also where a clock that
    /// was behind is seen to have caught up: a regression moves the epoch
    /// on, so the first ID after it comes this way.
    #[cold]
    fn attempt_with_new_snapshot<const EXACT: bool>(&self, slot: &mut Option<Snapshot>) -> First {
        let first = match self.snapshot() {
            Ok(snapshot) => self.attempt::<EXACT>(slot.insert(snapshot)),
            Err(refusal) => {
                *slot = None;
                refused(refusal)
            }
        };
        self.after_fresh_attempt(&first);
        first
    }

    #[cold]
    fn attempt_without_snapshot<const EXACT: bool>(&self) -> First {
        let first = match self.snapshot() {
            Ok(mut snapshot) => self.attempt::<EXACT>(&mut snapshot),
            Err(refusal) => refused(refusal),
        };
        self.after_fresh_attempt(&first);
        first
    }

    fn after_fresh_attempt(&self, first: &First) {
        let issued = match first {
            Ok(_) => true,
            Err(slow) => matches!(**slow, Slow::Uncovered { .. }),
        };
        if issued && self.in_regression.load(Ordering::Relaxed) {
            self.clock_caught_up();
        }
    }

    /// Reads the claim afresh.
    fn snapshot(&self) -> Result<Snapshot, Refusal> {
        // Read before what it guards: a change after this read moves the
        // epoch past it, and the snapshot is not used.
        let epoch = self.epoch.load(Ordering::Acquire);
        let mut state = self.state.clone();
        let (generation, deadline) = claim_in_force(&state.borrow_and_update(), Instant::now())?;
        let minting = self.minting_of(generation)?;
        Ok(Snapshot {
            issuer: self.id,
            epoch,
            state,
            generation,
            deadline,
            generator: Arc::clone(&minting.generator),
            layout: self.options.layout,
            covered: Arc::clone(minting.reservation.covered_cell()),
            half_step_ms: minting.reservation.step_ms() / 2,
            checked_ms: i64::MIN,
            remember_check: !matches!(self.options.clock_policy, ClockPolicy::Borrow { .. }),
        })
    }

    /// The minting the snapshot of `generation` was taken from, or why the
    /// request cannot go on under it.
    fn minting_of_snapshot(
        &self,
        generation: u64,
        generator: &Arc<Generator<Arc<dyn Clock>>>,
    ) -> Result<Arc<Minting>, Refusal> {
        let minting = self.minting_of(generation)?;
        if Arc::ptr_eq(&minting.generator, generator) {
            Ok(minting)
        } else {
            Err(Refusal::NotReady {
                reason: "the claim changed while the ID was made".to_owned(),
            })
        }
    }

    #[cold]
    fn uncovered(
        &self,
        generation: u64,
        generator: &Arc<Generator<Arc<dyn Clock>>>,
        id: SnowflakeId,
    ) -> First {
        match self.minting_of_snapshot(generation, generator) {
            Ok(minting) => Err(Box::new(Slow::Uncovered { minting, id })),
            Err(refusal) => refused(refusal),
        }
    }

    #[cold]
    fn generator_refused(&self, generation: u64, error: Error) -> First {
        let minting = match self.minting_of(generation) {
            Ok(minting) => minting,
            Err(refusal) => return refused(refusal),
        };
        match error.kind() {
            ErrorKind::ClockBehind => Err(Box::new(Slow::ClockBehind { minting, error })),
            _ => refused(Refusal::ClockOutOfRange {
                reason: error.to_string(),
            }),
        }
    }

    /// Starts moving the mark of the claim of `generation` ahead.
    #[cold]
    fn refresh(&self, generation: u64) {
        if let Ok(minting) = self.minting_of(generation) {
            minting
                .reservation
                .refresh_in_background(self.options.clock.now_ms());
        }
    }

    /// Logs that the clock caught up, once.
    #[cold]
    pub(super) fn clock_caught_up(&self) {
        if self.in_regression.swap(false, Ordering::Relaxed) {
            tracing::info!("clock caught up; issuing IDs again");
        }
    }
}

/// The first attempt's refusal.
#[cold]
fn refused(refusal: Refusal) -> First {
    Err(Box::new(Slow::Refused(refusal)))
}

/// Forgets this thread's snapshot if it is of the issuer `id`, without
/// dropping it: in a child process after `fork`, nothing of the parent's
/// issuer may be touched, not even its reference counts' last owners.
pub(super) fn forget_snapshot_of(id: u64) {
    let _ = SNAPSHOT.try_with(|cell| {
        if let Ok(mut slot) = cell.try_borrow_mut()
            && slot.as_ref().is_some_and(|s| s.issuer == id)
        {
            std::mem::forget(slot.take());
        }
    });
}
