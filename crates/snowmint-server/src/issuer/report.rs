//! What the node says about itself: readiness and the report behind
//! `/v1/node` and metrics.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use snowmint_fleet::{Claim, CoordinatorStatus, NodeState};

use super::{Issuer, Refusal};

/// A report on the node for `/v1/node` and metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeReport {
    /// `static`, `hostname`, `etcd`, `zookeeper`.
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
    /// Whether IDs can be issued now, and if not why.
    pub readiness: Result<(), Refusal>,
    /// What the claim engine is doing, for coordinated sources.
    pub coordinator: Option<CoordinatorStatus>,
}

impl Issuer {
    /// Whether IDs can be issued now; if not, why.
    pub fn readiness(&self) -> Result<(), Refusal> {
        let minting = self.inner.minting()?;
        let Some(last_ms) = minting.generator.last_timestamp_ms() else {
            return Ok(());
        };
        let now_ms = self.inner.options.clock.now_ms();
        let behind = Duration::from_millis(last_ms.saturating_sub(now_ms).max(0) as u64);
        let tolerated = self.clock_policy().bound().unwrap_or(Duration::ZERO);
        if behind > tolerated {
            Err(Refusal::ClockBehind { last_ms, now_ms })
        } else {
            Ok(())
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
            readiness: self.readiness(),
            coordinator: self.inner.source.coordinator_status(),
        }
    }
}
