//! What the node says about itself: readiness and the report behind
//! `/v1/node` and metrics.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{Claim, CoordinatorStatus, NodeState};

use super::claims::Minting;
use super::{Issuer, Refusal};

/// A report on the node for `/v1/node` and metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeReport {
    /// `static`, `hostname`, `etcd`, `zookeeper`, `postgres`.
    pub source: &'static str,
    /// The claim, if one is active (and not past its deadline).
    pub claim: Option<Claim>,
    /// Why not, when no claim is active.
    pub fenced_reason: Option<String>,
    /// How long the claim is still known to be held, if it can expire.
    pub valid_for: Option<Duration>,
    /// The node's state file.
    pub state_file: Option<PathBuf>,
    /// The mark recorded in it (Unix ms).
    pub high_water_mark_ms: Option<i64>,
    /// The last timestamp an ID may have been issued at (Unix ms).
    pub last_timestamp_ms: Option<i64>,
    /// Whether IDs can be issued now, and if not why: as
    /// [`Issuer::readiness`], except that no write is tried.
    pub readiness: Result<(), Refusal>,
    /// What the claim engine is doing, for coordinated sources.
    pub coordinator: Option<CoordinatorStatus>,
}

impl Issuer {
    /// Whether an ID request would be answered now; if not, the refusal it
    /// would get. `/readyz` answers with this.
    ///
    /// Not ready when, as `/v1/id` checks them:
    /// - no claim is in force (none held, past its deadline, its generator
    ///   not set up, its node locked by another process): `no_claim`,
    ///   `not_ready`;
    /// - the clock is outside the layout's range: `clock_out_of_range`;
    /// - the clock is further behind the last ID than the policy tolerates:
    ///   `clock_behind`;
    /// - the last write of the high-water mark failed: `mark_unwritable`.
    ///   The probe then tries the write again (the only write it ever
    ///   makes), since a node that is not ready gets no requests that
    ///   could find out that the disk has room again.
    pub async fn readiness(&self) -> Result<(), Refusal> {
        let minting = self.checked_minting()?;
        let reservation = &minting.reservation;
        if reservation.node_mark().write_failure().is_some() {
            let now_ms = self.inner.options.clock.now_ms();
            reservation
                .retry_failed_write(now_ms)
                .await
                .map_err(|error| self.inner.mark_refusal(error))?;
            self.inner.mark_recorded();
        }
        Ok(())
    }

    /// Readiness as it stands, without trying a write: a remembered
    /// failure of the mark counts as it is.
    pub(super) fn readiness_now(&self) -> Result<(), Refusal> {
        let minting = self.checked_minting()?;
        match minting.reservation.node_mark().write_failure() {
            Some(reason) => Err(Refusal::MarkUnwritable { reason }),
            None => Ok(()),
        }
    }

    /// The minting in force, if the claim and the clock allow an ID now.
    fn checked_minting(&self) -> Result<Arc<Minting>, Refusal> {
        let minting = self.inner.minting()?;
        let now_ms = self.inner.options.clock.now_ms();
        if let Err(error) = self.layout().timestamp_offset(now_ms) {
            return Err(Refusal::ClockOutOfRange {
                reason: error.to_string(),
            });
        }
        // Before its first ID, a claim's generator is bound by the point it
        // resumed after (the node's mark, the slot's floor): a node that
        // just took a slot over from a holder whose mark runs ahead of the
        // clock is not ready until the clock passes it, as its first
        // request would be refused until then.
        let Some(last_ms) = minting
            .generator
            .last_timestamp_ms()
            .or(minting.resumed_after)
        else {
            return Ok(minting);
        };
        let behind = Duration::from_millis(last_ms.saturating_sub(now_ms).max(0) as u64);
        let tolerated = self.clock_policy().bound().unwrap_or(Duration::ZERO);
        if behind > tolerated {
            Err(Refusal::ClockBehind { last_ms, now_ms })
        } else {
            Ok(minting)
        }
    }

    /// The node, for `/v1/node` and metrics.
    pub fn report(&self) -> NodeReport {
        let now = Instant::now();
        let (claim, fenced_reason) = match &*self.inner.state.borrow() {
            state @ NodeState::Active(claim) => match state.claim_at(now) {
                Some(_) => (Some(claim.clone()), None),
                None => (None, Some("the claim is past its deadline".to_owned())),
            },
            NodeState::Fenced { reason } => (None, Some(reason.clone())),
        };
        let minting = self.inner.current();
        let valid_for = claim
            .as_ref()
            .and_then(|c| c.valid_until)
            .map(|d| d.saturating_duration_since(now));
        NodeReport {
            source: self.inner.source.kind(),
            claim,
            fenced_reason,
            valid_for,
            state_file: minting
                .as_ref()
                .map(|m| m.reservation.node_mark().file().path().to_owned()),
            high_water_mark_ms: minting
                .as_ref()
                .and_then(|m| m.reservation.node_mark().recorded_ms()),
            last_timestamp_ms: minting
                .as_ref()
                .and_then(|m| m.generator.last_timestamp_ms().or(m.resumed_after)),
            readiness: self.readiness_now(),
            coordinator: self.inner.source.coordinator_status(),
        }
    }
}
