//! The claim in force, for a front end whose IDs come from generators the
//! issuer does not own.
//!
//! The PostgreSQL extension is such a front end: each connection is a
//! process of its own, so its IDs come from one state word in shared
//! memory, not from the issuer's generator. Its background worker still
//! follows the claims through an [`Issuer`] (the node's lock, the
//! reservation per claim, the resume point, the order in which a claim is
//! retired before the next one starts: `claims.rs`), and hands the backends
//! what this returns: the claim, the point their word must be raised past,
//! and the reservation to move the mark with.

use std::sync::Arc;

use crate::{Claim, NodeState, Reservation};

use super::{Issuer, Refusal};

/// The claim an [`Issuer`] issues under now, after the fencing check; see
/// [`Issuer::claim_in_force`].
#[derive(Debug, Clone)]
pub struct ClaimInForce {
    /// The claim: slot, node, generation, floor, and its deadline as the
    /// source last renewed it.
    pub claim: Claim,
    /// The point IDs of this claim must be above (Unix ms), if any: the
    /// later of the node's recorded mark and the claim's floor when the
    /// claim's generator was built. A claim that took the same slot back
    /// with nobody else having issued on it keeps the previous claim's
    /// generator, and its resume point.
    pub resumed_after: Option<i64>,
    /// The claim's reservation of the high-water mark: an ID may leave
    /// only once [`Reservation::covers`] its timestamp. A new claim gets a
    /// new reservation, so comparing it ([`Arc::ptr_eq`]) tells a new
    /// claim from a renewed one.
    pub reservation: Arc<Reservation>,
}

impl Issuer {
    /// The claim in force now and what it issues under, for a front end
    /// that mints with generators of its own over a word it shares with
    /// them (docs/ARCHITECTURE.md §5). Such a front end must:
    ///
    /// - raise its word past [`resumed_after`](ClaimInForce::resumed_after)
    ///   before the first ID of the claim;
    /// - check the claim's deadline before each ID, and stop at it;
    /// - let an ID out only once the
    ///   [`reservation`](ClaimInForce::reservation) covers its timestamp
    ///   ([`Reservation::extend`] moves it).
    ///
    /// # Errors
    ///
    /// The [`Refusal`] an ID request would get now for want of a claim: no
    /// claim held, past its deadline, or not set up (its node locked by
    /// another process).
    pub fn claim_in_force(&self) -> Result<ClaimInForce, Refusal> {
        let minting = self.inner.minting()?;
        // The source's latest word on the claim: a renewal moves its
        // deadline without a new minting.
        let claim = match &*self.inner.state.borrow() {
            NodeState::Active(claim) if claim.generation == minting.claim.generation => {
                claim.clone()
            }
            _ => minting.claim.clone(),
        };
        Ok(ClaimInForce {
            claim,
            resumed_after: minting.resumed_after,
            reservation: Arc::clone(&minting.reservation),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::{Duration, Instant};

    use snowmint::{ClockPolicy, Layout, ManualClock};
    use tokio::sync::watch;

    use super::*;
    use crate::testing::TempDir;
    use crate::{BoxFuture, FleetError, IssuerOptions, MarkFile, NodeState, SlotSource};

    const T: i64 = 1_700_000_000_000;

    /// A source whose state the test sets; it records nothing.
    struct HandSource(watch::Sender<NodeState>);

    impl SlotSource for HandSource {
        fn kind(&self) -> &'static str {
            "hand"
        }
        fn state(&self) -> watch::Receiver<NodeState> {
            self.0.subscribe()
        }
        fn reserve(&self, _: u64, _: i64) -> BoxFuture<'_, Result<(), FleetError>> {
            Box::pin(async { Ok(()) })
        }
        fn release(&self) -> BoxFuture<'_, ()> {
            Box::pin(async {})
        }
    }

    fn claim(slot: u64, generation: u64, floor_ms: Option<i64>) -> Claim {
        Claim {
            slot,
            slots: 1,
            node: Layout::TWITTER.node_from_slot(slot).unwrap(),
            generation,
            valid_until: Some(Instant::now() + Duration::from_secs(60)),
            floor_ms,
            details: BTreeMap::new(),
        }
    }

    /// Waits until the issuer has followed the source to `generation`.
    async fn in_force(issuer: &Issuer, generation: u64) -> ClaimInForce {
        for _ in 0..1000 {
            if let Ok(view) = issuer.claim_in_force()
                && view.claim.generation == generation
            {
                return view;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("generation {generation} never came into force");
    }

    /// Fenced: the refusal names the source's reason. Claimed: the claim,
    /// a resume point that is the later of the node's file and the floor,
    /// and a reservation that covers nothing until it is extended. A new
    /// claim on another node brings a new reservation.
    #[tokio::test]
    async fn the_claim_in_force_follows_the_source() {
        let dir = TempDir::new("in-force");
        let node = Layout::TWITTER.node_from_slot(3).unwrap();
        MarkFile::for_node(dir.path(), Layout::TWITTER, node)
            .write(T + 500)
            .unwrap();
        let source = Arc::new(HandSource(watch::Sender::new(NodeState::Fenced {
            reason: "starting: claiming".to_owned(),
        })));
        let options = IssuerOptions {
            layout: Layout::TWITTER,
            clock_policy: ClockPolicy::Refuse,
            clock: Arc::new(ManualClock::new(T)),
            state_dir: dir.path().to_owned(),
            mark_step: Duration::from_millis(1000),
        };
        let issuer = Issuer::start(source.clone(), options).await.unwrap();
        let refusal = issuer.claim_in_force().unwrap_err();
        assert!(
            matches!(&refusal, Refusal::NoClaim { reason } if reason == "starting: claiming"),
            "{refusal:?}"
        );

        source
            .0
            .send_replace(NodeState::Active(claim(3, 1, Some(T + 200))));
        let first = in_force(&issuer, 1).await;
        assert_eq!(first.claim.slot, 3);
        assert_eq!(first.resumed_after, Some(T + 500), "the file's mark wins");
        assert!(!first.reservation.covers(T + 501));
        first.reservation.extend(T + 501, T).await.unwrap();
        assert!(first.reservation.covers(T + 1501));

        // A renewal: the same claim, a later deadline, the same reservation.
        let mut renewed = claim(3, 1, Some(T + 200));
        renewed.valid_until = Some(Instant::now() + Duration::from_secs(120));
        source.0.send_replace(NodeState::Active(renewed.clone()));
        let view = issuer.claim_in_force().unwrap();
        assert_eq!(view.claim.valid_until, renewed.valid_until);
        assert!(Arc::ptr_eq(&view.reservation, &first.reservation));

        source
            .0
            .send_replace(NodeState::Active(claim(4, 2, Some(T + 9_000))));
        let second = in_force(&issuer, 2).await;
        assert_eq!(second.resumed_after, Some(T + 9_000), "the floor wins");
        assert!(!Arc::ptr_eq(&first.reservation, &second.reservation));
        assert!(!second.reservation.covers(T));
    }
}
