//! The fleet's layout record: the first node's layout binds the fleet.

use std::time::Duration;

use snowmint::{Layout, TWITTER_EPOCH_MS};
use snowmint_fleet::{Coordinator, CoordinatorConfig, NodeState, SlotRange, SlotSource};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::wait::eventually;

use super::{TTL, first_claim};

fn engine<S: CoordinatorServer>(
    server: &S,
    fleet: &str,
    name: &str,
    layout: Layout,
) -> Coordinator<S::Backend> {
    let config = CoordinatorConfig::new(
        fleet,
        SlotRange::new(0, 1023).unwrap(),
        TTL,
        name.into(),
        layout,
    )
    .unwrap();
    Coordinator::start(server.backend(server.client_addr()), config).unwrap()
}

/// The first node records the fleet's layout. A node with other widths,
/// or another epoch, claims no slot and says why, naming both layouts;
/// the record outlives the nodes that made it. Nodes of the recorded
/// layout keep claiming.
pub async fn a_fleet_keeps_the_layout_it_started_with<S: CoordinatorServer>() {
    let server = S::start().await;
    let fleet = "layout";
    let first = engine(&server, fleet, "first", Layout::TWITTER);
    let slot = first_claim(&mut first.state()).await.slot;

    let wide = Layout::twitter_shape(TWITTER_EPOCH_MS, [41, 5, 7, 10]).unwrap();
    let later = Layout::TWITTER.with_epoch(1_500_000_000_000).unwrap();
    let refused = [
        ("wide", wide, "41/5/7/10@1288834974657"),
        ("later", later, "41/5/5/12@1500000000000"),
    ];
    for (name, layout, spelled) in refused {
        let node = engine(&server, fleet, name, layout);
        refuses(&node, name, spelled).await;
        node.release().await;
    }

    // Another node of the recorded layout claims as usual.
    let second = engine(&server, fleet, "second", Layout::TWITTER);
    let other = first_claim(&mut second.state()).await.slot;
    assert_ne!(other, slot);
    first.release().await;
    second.release().await;
    assert!(server.slot_holders(fleet).await.is_empty());

    // No node is left, and the fleet still has its layout.
    let node = engine(&server, fleet, "wide", wide);
    refuses(&node, "wide", "41/5/7/10@1288834974657").await;
    node.release().await;
}

/// Waits until `node` (called `name`) refuses the layout record of the
/// fleet `layout`, which holds the Twitter layout, for its own layout
/// `spelled`; fails if it claims a slot meanwhile.
async fn refuses<S: SlotSource>(node: &S, name: &str, spelled: &str) {
    let expected = format!(
        "fleet layout is recorded with layout 41/5/5/12@1288834974657 at /snowmint/layout/layout, \
         but this node uses {spelled}; the nodes of a fleet must share one layout; retrying"
    );
    let states = node.state();
    eventually(
        &format!("{name} to refuse the fleet's layout"),
        Duration::from_secs(60),
        || {
            let state = states.borrow().clone();
            let expected = expected.clone();
            async move {
                match state {
                    NodeState::Active(claim) => {
                        panic!("{name} claimed slot {} in another layout", claim.slot)
                    }
                    NodeState::Fenced { reason } if reason == expected => Some(()),
                    NodeState::Fenced { .. } => None,
                }
            }
        },
    )
    .await;
    let claims = node.coordinator_status().map(|status| status.claims);
    assert_eq!(claims, Some(0), "{name} made a claim");
}
