//! Following the slot source: each new claim gets a generator that resumes
//! after the node's recorded mark and the claim's floor, and a fresh
//! reservation of the mark.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, Weak};

use snowmint::{Clock, ClockPolicy, Generator, GeneratorStats, format_time};
use snowmint_fleet::{Claim, FleetError, MarkFile, NodeMark, NodeState, Reservation};
use tokio::sync::watch;

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
    fn continues(&self, claim: &Claim) -> bool {
        // `None` sorts first: no floor is below any mark, and a floor is
        // above no recorded mark at all.
        self.claim.node == claim.node && claim.floor_ms <= self.reservation.covered_ms()
    }
}

/// Applies every change of the source's state, until the issuer is gone.
pub(super) async fn watch_claims(inner: Weak<Inner>, mut state: watch::Receiver<NodeState>) {
    while state.changed().await.is_ok() {
        let latest = state.borrow_and_update().clone();
        let Some(inner) = inner.upgrade() else {
            return;
        };
        if let Err(error) = inner.follow(latest).await {
            tracing::error!(%error, "cannot issue IDs under the new claim");
        }
    }
}

impl Inner {
    /// Applies a state of the source: a new claim gets a new generator.
    pub(super) async fn follow(&self, state: NodeState) -> Result<(), FleetError> {
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
                    "claimed slot {} (datacenter {} machine {})",
                    claim.slot,
                    claim.node.datacenter,
                    claim.node.machine
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
                *self.broken.write().unwrap_or_else(PoisonError::into_inner) = None;
                *self.current.write().unwrap_or_else(PoisonError::into_inner) =
                    Some(Arc::new(minting));
                Ok(())
            }
            Err(error) => {
                *self.broken.write().unwrap_or_else(PoisonError::into_inner) = Some(format!(
                    "the node cannot issue IDs under its claim: {error}"
                ));
                Err(error)
            }
        }
    }

    /// A generator and a reservation for `claim`. The previous claim's
    /// reservation is retired first, so that nothing it let out can be
    /// above the point the new generator resumes after (or, when the claim
    /// continues the previous one, so that its recorded mark is final).
    async fn mint(&self, claim: &Claim, previous: Option<&Minting>) -> Result<Minting, FleetError> {
        let options = &self.options;
        let node_mark = self.node_mark(claim)?;
        if let Some(previous) = previous {
            previous.reservation.retire().await;
        }
        let step_ms = i64::try_from(options.mark_step.as_millis()).unwrap_or(i64::MAX);
        let reservation = Arc::new(Reservation::new(
            node_mark.clone(),
            Arc::clone(&self.source),
            claim.generation,
            step_ms,
        ));
        if let Some(previous) = previous.filter(|previous| previous.continues(claim)) {
            return Ok(Minting {
                claim: claim.clone(),
                generator: Arc::clone(&previous.generator),
                reservation,
                resumed_after: previous.resumed_after,
            });
        }
        let resumed_after = node_mark.recorded_ms().max(claim.floor_ms);
        let policy = match options.clock_policy {
            // Waiting happens in `generate`, asynchronously.
            ClockPolicy::Wait { .. } => ClockPolicy::Refuse,
            other => other,
        };
        let mut builder = Generator::builder(options.layout, claim.node)
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
        })
    }

    /// The state file of the claim's node, opened once per process.
    fn node_mark(&self, claim: &Claim) -> Result<Arc<NodeMark>, FleetError> {
        let file = MarkFile::for_node(&self.options.state_dir, claim.node);
        let mut marks = self.marks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(mark) = marks.iter().find(|m| *m.file() == file) {
            return Ok(Arc::clone(mark));
        }
        let mark = NodeMark::open(file)?;
        marks.push(Arc::clone(&mark));
        Ok(mark)
    }
}

pub(super) fn add_stats(total: &mut GeneratorStats, more: GeneratorStats) {
    total.exhaustion_waits += more.exhaustion_waits;
    total.clock_regressions += more.clock_regressions;
    total.refusals += more.refusals;
}
