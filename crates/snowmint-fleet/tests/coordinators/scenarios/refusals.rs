//! A node a secured coordinator refuses (a wrong CA, no client
//! certificate, a wrong password, a role without the right): fenced, with
//! a reason that says what is wrong in one sentence, and still trying.

use std::time::{Duration, Instant};

use snowmint::Layout;
use snowmint_fleet::{Backend, Coordinator, CoordinatorConfig, NodeState, SlotRange, SlotSource};

use super::{TTL, first_claim};
use snowmint_test_support::wait::eventually;

/// The engine of a node of `fleet` on `backend`.
pub fn engine<B: Backend>(backend: B, fleet: &str) -> Coordinator<B> {
    let config = CoordinatorConfig::new(
        fleet,
        SlotRange::new(0, 3).unwrap(),
        TTL,
        format!("{fleet}-node"),
        Layout::TWITTER,
    )
    .unwrap();
    Coordinator::start(backend, config).unwrap()
}

/// Starts a node of `fleet` on `backend` and returns the reason it is
/// fenced for once it is past starting; panics if it claims. The reason
/// must be one sentence (no debug dump), and the node must still be
/// fenced for it, trying again, a few TTLs later (a refusal is not a
/// crash).
pub async fn refusal<B: Backend>(backend: B, fleet: &str) -> String {
    let node = engine(backend, fleet);
    let mut states = node.state();
    let reason = eventually("a reason past starting", Duration::from_secs(60), || {
        let state = states.borrow_and_update().clone();
        async move {
            match state {
                NodeState::Fenced { reason } if !reason.starts_with("starting") => Some(reason),
                NodeState::Active(claim) => panic!("a refused node claimed: {claim:?}"),
                NodeState::Fenced { .. } => None,
            }
        }
    })
    .await;
    println!("{fleet}: {reason}");
    for dump in ["{", "Error(", "tonic", "source:", "os error", "Status"] {
        assert!(!reason.contains(dump), "{dump:?} in {reason:?}");
    }
    assert!(reason.ends_with("; retrying"), "{reason}");
    tokio::time::sleep(TTL * 2).await;
    let state = node.state().borrow().clone();
    assert_eq!(
        state,
        NodeState::Fenced {
            reason: reason.clone()
        },
        "the refused node changed its state"
    );
    node.release().await;
    reason
}

/// Starts a node of `fleet` on `backend` and waits for its first claim:
/// what a node with the right settings does on the same coordinator.
pub async fn claims<B: Backend>(backend: B, fleet: &str) -> u64 {
    let node = engine(backend, fleet);
    let claim = first_claim(&mut node.state()).await;
    assert!(
        claim
            .valid_until
            .is_some_and(|deadline| deadline > Instant::now())
    );
    node.release().await;
    claim.slot
}
