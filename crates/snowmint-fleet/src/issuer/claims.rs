//! Following the slot source: each new claim gets a generator that resumes
//! after the node's recorded mark and the claim's floor, and a fresh
//! reservation of the mark.
//!
//! # The node's lock
//!
//! The issuer holds the lock of the node it issues as (see
//! [`NodeLock`](crate::NodeLock)): taken before the claim's
//! generator is built, given up when the claim ends (fenced) or moves to
//! another node, after its reservation is retired, so that nothing it let
//! out is above the mark on disk that the next holder resumes after.
//!
//! A claim whose node is locked by another process on this host is not
//! used. A coordinated node gives the slot up and claims another, passing
//! the locked one over for a while ([`SlotSource::pass_over`]), and says
//! why in its log and in its coordinator's status (`/v1/node`): the
//! other process issues as that node, so this one could never issue under
//! the claim, and sitting on the slot would keep it from the rest of the
//! fleet too. (The other process is a fixed identity or another fleet
//! sharing the state directory by mistake, or one that lost the slot and
//! has not let its lock go yet; either way another slot serves at once.)
//! A node whose identity cannot change (flags, hostname) stays not ready
//! instead, saying which process holds its node, and tries the lock again
//! every second; at start that is a refusal (see
//! [`Issuer::start`](super::Issuer::start)).
//!
//! [`SlotSource::pass_over`]: crate::SlotSource::pass_over

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, Weak};
use std::time::{Duration, Instant};

use snowmint::{Clock, ClockPolicy, Generator, GeneratorStats, format_time};
use tokio::sync::watch;

use crate::{Claim, FleetError, MarkFile, NodeMark, NodeState, Reservation};

use super::Inner;

/// What one claim issues with.
pub(super) struct Minting {
    pub(super) claim: Claim,
    /// Shared with the previous claim's minting when the claim continues
    /// it (see [`Minting::continues`]).
    pub(super) generator: Arc<Generator<Arc<dyn Clock>>>,
    pub(super) reservation: Arc<Reservation>,
    /// The point the generator resumed after, if any (Unix ms).
    pub(super) resumed_after: Option<i64>,
    /// The node's recorded mark when the claim was taken (before any
    /// write under it): what a start waits out.
    pub(super) recorded_at_claim: Option<i64>,
}

impl Minting {
    /// Whether `claim`, which follows this (retired) minting, may keep its
    /// generator: it takes the same slot back, and the slot's floor is not
    /// above the mark this minting recorded.
    ///
    /// A node that held the slot in between and handed out any ID first
    /// raised the slot's mark above that ID, which is above ours; so a floor
    /// no higher than our own mark means nobody else issued on the slot
    /// since. Keeping the generator then keeps every ID of the slot in one
    /// strictly increasing sequence, even for a request of the old claim
    /// still in flight; a fresh generator would have to resume after the
    /// mark, reserved a step ahead of the clock, and refuse (under
    /// `refuse`) until the clock passed it.
    ///
    /// The node's state file, read again when the node was locked anew
    /// (after a fence), must not be above that mark either: another process
    /// on this host may have issued as the node meanwhile.
    fn continues(&self, claim: &Claim, node_mark: &Arc<NodeMark>) -> bool {
        // `None` sorts first: no floor is below any mark, and a floor is
        // above no recorded mark at all.
        let covered = self.reservation.covered_ms();
        self.claim.node == claim.node
            && self.claim.slots == claim.slots
            && claim.floor_ms <= covered
            && (Arc::ptr_eq(self.reservation.node_mark(), node_mark)
                || node_mark.recorded_ms() <= covered)
    }
}

/// How often a claim whose node another process holds tries the lock again.
const LOCK_RETRY: Duration = Duration::from_secs(1);

/// The longest nap between tries of a lock a start waits for.
const LOCK_WAIT_NAP: Duration = Duration::from_millis(20);

/// Applies every change of the source's state, until the issuer is gone.
/// A claim whose node is locked by another process is tried again every
/// [`LOCK_RETRY`] until the state changes.
pub(super) async fn watch_claims(inner: Weak<Inner>, mut state: watch::Receiver<NodeState>) {
    let mut locked_out = false;
    let mut last_error = None;
    loop {
        if locked_out {
            tokio::select! {
                changed = state.changed() => if changed.is_err() { return },
                () = tokio::time::sleep(LOCK_RETRY) => {}
            }
        } else if state.changed().await.is_err() {
            return;
        }
        let latest = state.borrow_and_update().clone();
        let active = matches!(latest, NodeState::Active(_));
        let Some(inner) = inner.upgrade() else {
            return;
        };
        match inner.follow(latest).await {
            Ok(()) => {
                if locked_out && active {
                    tracing::info!("the node's lock is free again; issuing IDs");
                }
                locked_out = false;
                last_error = None;
            }
            Err(FollowError::PassedOver) => {
                locked_out = false;
                last_error = None;
            }
            Err(FollowError::Failed(error)) => {
                locked_out = matches!(error, FleetError::NodeLocked { .. });
                let message = error.to_string();
                // Said once, not at every retry.
                if last_error.as_ref() != Some(&message) {
                    tracing::error!(%error, "cannot issue IDs under the new claim");
                }
                last_error = Some(message);
            }
        }
    }
}

/// Why a claim is not issued under.
pub(super) enum FollowError {
    /// Its node is locked by another process on this host, and the source
    /// gives the slot up for another.
    PassedOver,
    /// Anything else: the claim stays, not ready, and the error says why.
    Failed(FleetError),
}

impl Inner {
    /// Applies a state of the source: a new claim gets a new generator.
    pub(super) async fn follow(&self, state: NodeState) -> Result<(), FollowError> {
        let _switching = self.switching.lock().await;
        let claim = match state {
            NodeState::Active(claim) => claim,
            NodeState::Fenced { reason } => {
                // Not holding a claim yet (a coordinated node starting), or
                // giving it up on shutdown, is no trouble.
                if self.current().is_none() || self.releasing.load(Ordering::Relaxed) {
                    tracing::info!(%reason, "not issuing IDs");
                } else {
                    tracing::warn!(%reason, "fenced: this node may not issue IDs");
                }
                self.let_go().await;
                return Ok(());
            }
        };
        let previous = self.current();
        if previous
            .as_ref()
            .is_some_and(|m| m.claim.generation == claim.generation)
        {
            tracing::debug!(generation = claim.generation, "claim renewed");
            return Ok(());
        }
        match self.mint(&claim, previous.as_deref()).await {
            Ok(minting) => {
                tracing::info!(
                    source = self.source.kind(),
                    generation = claim.generation,
                    resume_after = ?minting.resumed_after.map(|ms| format_time(ms).to_string()),
                    state_file = %minting.reservation.node_mark().file().path().display(),
                    lock_file = %minting.reservation.node_mark().file().lock_path().display(),
                    "claimed slot {} ({})",
                    claim.slot,
                    self.options.layout.describe(claim.node)
                );
                if let Some(previous) = previous
                    && !Arc::ptr_eq(&previous.generator, &minting.generator)
                {
                    let stats = previous.generator.stats();
                    add_stats(
                        &mut self
                            .retired_stats
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner),
                        stats,
                    );
                }
                if self.prime {
                    // A failure is remembered by the node's mark (not
                    // ready), and the first ID tries the write again.
                    let now_ms = self.options.clock.now_ms();
                    if let Err(error) = minting.reservation.extend(now_ms, now_ms).await {
                        let _ = self.mark_refusal(error);
                    }
                }
                *self.broken.write().unwrap_or_else(PoisonError::into_inner) = None;
                *self.current.write().unwrap_or_else(PoisonError::into_inner) =
                    Some(Arc::new(minting));
                self.changed();
                Ok(())
            }
            Err(error @ FleetError::NodeLocked { .. })
                if self.source.pass_over(claim.generation, error.to_string()) =>
            {
                tracing::warn!(
                    %error,
                    slot = claim.slot,
                    "the claimed slot's node is locked by another process on this host; giving the slot up and claiming another"
                );
                *self.broken.write().unwrap_or_else(PoisonError::into_inner) = Some(format!(
                    "slot {} was given up: {error}; claiming another slot",
                    claim.slot
                ));
                self.changed();
                Err(FollowError::PassedOver)
            }
            Err(error) => {
                let retry = match error {
                    FleetError::NodeLocked { .. } => "; trying again every second",
                    _ => "",
                };
                *self.broken.write().unwrap_or_else(PoisonError::into_inner) = Some(format!(
                    "the node cannot issue IDs under its claim on slot {}: {error}{retry}",
                    claim.slot
                ));
                self.changed();
                Err(FollowError::Failed(error))
            }
        }
    }

    /// A generator and a reservation for `claim`. The previous claim's
    /// reservation is retired first, so that nothing it let out can be
    /// above the point the new generator resumes after (or, when the claim
    /// continues the previous one, so that its recorded mark is final).
    async fn mint(&self, claim: &Claim, previous: Option<&Minting>) -> Result<Minting, FleetError> {
        let options = &self.options;
        if let Some(previous) = previous {
            previous.reservation.retire().await;
        }
        let node_mark = self.node_mark(claim).await?;
        let step_ms = i64::try_from(options.mark_step.as_millis()).unwrap_or(i64::MAX);
        let reservation = Arc::new(Reservation::new(
            node_mark.clone(),
            Arc::clone(&self.source),
            claim.generation,
            step_ms,
        ));
        let recorded_at_claim = node_mark.recorded_ms();
        if let Some(previous) = previous.filter(|previous| previous.continues(claim, &node_mark)) {
            return Ok(Minting {
                claim: claim.clone(),
                generator: Arc::clone(&previous.generator),
                reservation,
                resumed_after: previous.resumed_after,
                recorded_at_claim,
            });
        }
        let resumed_after = node_mark.recorded_ms().max(claim.floor_ms);
        let policy = match options.clock_policy {
            // Waiting happens in `generate`, asynchronously.
            ClockPolicy::Wait { .. } => ClockPolicy::Refuse,
            other => other,
        };
        let mut builder = Generator::builder(options.layout, claim.node)
            .slots(claim.slots)
            .clock(Arc::clone(&options.clock))
            .policy(policy);
        if let Some(mark) = resumed_after {
            builder = builder.resume_after(mark);
        }
        Ok(Minting {
            claim: claim.clone(),
            generator: Arc::new(builder.build()?),
            reservation,
            resumed_after,
            recorded_at_claim,
        })
    }

    /// The state files of the claim's node (one per slot it holds),
    /// locked: the ones held already if the claim is on the same slots;
    /// otherwise the held ones are unlocked (their reservation is retired)
    /// and the claim's are locked and read.
    async fn node_mark(&self, claim: &Claim) -> Result<Arc<NodeMark>, FleetError> {
        let (dir, layout) = (&self.options.state_dir, self.options.layout);
        let mut files = vec![MarkFile::for_node(dir, layout, claim.node)];
        for slot in claim.slot + 1..claim.slot + claim.slots {
            files.push(MarkFile::for_node(
                dir,
                layout,
                layout.node_from_slot(slot)?,
            ));
        }
        let held = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mark) = held {
            if mark.files().eq(files.iter()) && mark.is_locked() {
                *self.held.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&mark));
                return Ok(mark);
            }
            mark.unlock().await;
        }
        let mark = self.open_waiting(files).await?;
        *self.held.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&mark));
        Ok(mark)
    }

    /// Locks and reads the node's state file; while another process holds
    /// the node, tries again until `lock_wait_until`, if set, in short
    /// naps (each try costs an open and a non-blocking lock, so that many
    /// processes waiting at once cost little).
    async fn open_waiting(&self, files: Vec<MarkFile>) -> Result<Arc<NodeMark>, FleetError> {
        let mut nap = Duration::from_millis(1);
        loop {
            match NodeMark::open_block(files.clone()) {
                Err(FleetError::NodeLocked { .. })
                    if self
                        .lock_wait_until
                        .is_some_and(|until| Instant::now() < until) =>
                {
                    // Jittered, so that the waiters do not all try at once.
                    let jitter = std::collections::hash_map::RandomState::new()
                        .build_hasher()
                        .finish()
                        % 1000;
                    tokio::time::sleep(nap.mul_f64(0.5 + jitter as f64 / 2000.0)).await;
                    nap = (nap * 2).min(LOCK_WAIT_NAP);
                }
                other => return other,
            }
        }
    }

    /// Tells the per-thread snapshots (`fast.rs`) that `current` or
    /// `broken` changed.
    pub(super) fn changed(&self) {
        // Release: a snapshot that sees the new epoch sees the new values.
        self.epoch.fetch_add(1, Ordering::Release);
    }

    /// The claim ended: retires its reservation, then gives the node's lock
    /// up, so that another process on this host may issue as the node
    /// (after the mark this one left on disk).
    pub(super) async fn let_go(&self) {
        if let Some(current) = self.current() {
            current.reservation.retire().await;
        }
        let held = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mark) = held {
            mark.unlock().await;
        }
    }
}

pub(super) fn add_stats(total: &mut GeneratorStats, more: GeneratorStats) {
    total.exhaustion_waits += more.exhaustion_waits;
    total.clock_regressions += more.clock_regressions;
    total.refusals += more.refusals;
    total.max_lead = total.max_lead.max(more.max_lead);
}
