//! Scenarios of the slot key's guard over the high-water mark: a key
//! deleted by hand and created anew by a waiting node, and a mark write
//! that finds the key gone.

use std::time::{Duration, Instant};

use snowmint::{Clock, Layout, SystemClock};
use snowmint_fleet::{
    Coordinator, CoordinatorConfig, FleetError, NodeState, SlotRange, SlotSource,
};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::wait::eventually;

use super::TTL;

/// An engine of `fleet` for `slots`, written into the slot key as `name`.
fn engine<S: CoordinatorServer>(
    server: &S,
    fleet: &str,
    slots: &str,
    name: &str,
    ttl: Duration,
) -> Coordinator<S::Backend> {
    let slots: SlotRange = slots.parse().unwrap();
    let config = CoordinatorConfig::new(fleet, slots, ttl, name.into(), Layout::TWITTER).unwrap();
    Coordinator::start(server.backend(server.client_addr()), config).unwrap()
}

/// Waits until `engine` is fenced for a reason that contains `part`.
async fn fenced<S: SlotSource>(engine: &S, part: &str) -> String {
    let states = engine.state();
    eventually(
        &format!("a node fenced because {part:?}"),
        Duration::from_secs(60),
        || {
            let state = states.borrow().clone();
            async move {
                match state {
                    NodeState::Fenced { reason } if reason.contains(part) => Some(reason),
                    _ => None,
                }
            }
        },
    )
    .await
}

/// Node A holds slot 0 and has reserved marks; node B waits for the same
/// slot (`0-0`). An operator deletes the slot key and B creates it anew,
/// before A has noticed. Then A's next mark write (made with the version
/// A cached) fails and ends A's claim at once, B's floor is at or above
/// every mark A reserved (A issues at or below its marks, B above its
/// floor, so their IDs cannot overlap), and B's marks stand.
///
/// A may notice the deletion first (its keep-alive) and take its slot
/// back, or be fenced before B claims; then it all starts again, up to a
/// few times.
pub async fn a_slot_key_recreated_by_a_waiting_node_stops_the_old_holder<S: CoordinatorServer>() {
    const ATTEMPTS: usize = 8;
    let server = S::start().await;
    let fleet = "recreated";
    // A long TTL for A: its keep-alives (every third of it) seldom come
    // between the deletion and B's claim, and after a loss it waits a while
    // before it claims again.
    let a = engine(&server, fleet, "0-0", "a", Duration::from_secs(10));
    let mut generation = 0;
    for attempt in 1..=ATTEMPTS {
        let held = eventually("A to hold slot 0", Duration::from_secs(60), || {
            let claim = a
                .state()
                .borrow()
                .claim_at(Instant::now())
                .filter(|claim| claim.generation > generation)
                .cloned();
            async move { claim }
        })
        .await;
        generation = held.generation;
        // A busy node's reservations, each above the last.
        let mut reserved = 0;
        for _ in 0..5 {
            reserved = SystemClock.now_ms() + 500;
            a.reserve(generation, reserved).await.unwrap();
        }
        let b = engine(&server, fleet, "0-0", &format!("b{attempt}"), TTL);
        fenced(&b, "the only slot of fleet recreated (0-0) is taken").await;

        server.delete_slot(fleet, 0).await;
        let (a_states, b_states) = (a.state(), b.state());
        let b_claim = eventually(
            "slot 0 to be claimed again",
            Duration::from_secs(60),
            || {
                let now = Instant::now();
                let taken = match b_states.borrow().claim_at(now) {
                    Some(claim) => Some(Some(claim.clone())),
                    None => a_states
                        .borrow()
                        .claim_at(now)
                        .is_some_and(|claim| claim.generation > generation)
                        .then_some(None),
                };
                async move { taken }
            },
        )
        .await;
        let Some(taken) = b_claim else {
            println!("attempt {attempt}: A took its slot back before B asked again");
            b.release().await;
            continue;
        };
        let unnoticed = a
            .state()
            .borrow()
            .claim_at(Instant::now())
            .is_some_and(|claim| claim.generation == generation);
        let losses = a.status().losses;

        // A's next write, as if its next request came now.
        let late = a.reserve(generation, SystemClock.now_ms() + 1_000).await;
        assert!(
            matches!(late, Err(FleetError::Fenced { .. })),
            "A's mark write succeeded after B claimed its slot: {late:?}"
        );
        let floor = taken
            .floor_ms
            .expect("B claimed without the mark that A left");
        assert!(
            floor >= reserved,
            "B starts above {floor} ms, below A's reserved mark {reserved} ms: their IDs can overlap"
        );
        assert_eq!(
            server.stored_mark(fleet, 0).await,
            Some(floor),
            "the stored mark moved after B claimed"
        );
        let mark = SystemClock.now_ms() + 2_000;
        b.reserve(taken.generation, mark).await.unwrap();
        assert_eq!(server.stored_mark(fleet, 0).await, Some(mark));
        if !unnoticed {
            println!("attempt {attempt}: A noticed the deletion before B claimed");
            b.release().await;
            continue;
        }
        // Ended by the write itself: fenced and counted when it returned.
        let status = a.status();
        assert_eq!(status.slot, None, "A still holds a slot: {status:?}");
        assert_eq!(status.losses, losses + 1, "A's loss was not counted");
        assert!(
            a.state().borrow().claim_at(Instant::now()).is_none(),
            "A is still active"
        );
        println!(
            "attempt {attempt}: A's write after B's claim was refused; floor {floor} >= {reserved}"
        );
        b.release().await;
        a.release().await;
        return;
    }
    panic!("in {ATTEMPTS} attempts, A always noticed the deletion before B claimed");
}

/// A mark write that finds the slot key gone ends the claim at once: when
/// the write returns, the node is already fenced for that reason and the
/// loss is counted; then it claims anew, preferring the slot it held.
///
/// The TTL is long, so that the next keep-alive (every third of it) almost
/// never comes between the deletion and the write; when it does, it is the
/// one that notices, and the scenario tries again.
pub async fn a_mark_write_that_finds_the_key_gone_ends_the_claim_at_once<S: CoordinatorServer>() {
    const ATTEMPTS: usize = 5;
    let server = S::start().await;
    let fleet = "unguarded";
    let node = engine(&server, fleet, "0-1023", "lone", Duration::from_secs(10));
    let mut states = node.state();
    let mut generation = 0;
    for attempt in 1..=ATTEMPTS {
        let claim = eventually("a new claim", Duration::from_secs(60), || {
            let claim = states
                .borrow_and_update()
                .claim_at(Instant::now())
                .filter(|claim| claim.generation > generation)
                .cloned();
            async move { claim }
        })
        .await;
        generation = claim.generation;
        node.reserve(generation, SystemClock.now_ms() + 500)
            .await
            .unwrap();
        let losses = node.status().losses;

        server.delete_slot(fleet, claim.slot).await;
        let refused = node.reserve(generation, SystemClock.now_ms() + 1_000).await;
        // Read at once: no waiting for the engine to catch up.
        let state = node.state().borrow().clone();
        let status = node.status();
        let noticed = "a high-water mark write found key";
        match refused {
            Err(FleetError::Fenced { reason }) if reason.contains(noticed) => {
                let expected = format!(
                    "the claim on slot {slot} is lost: a high-water mark write found key \
                     /snowmint/{fleet}/slots/{slot} no longer held by this {session}; retrying",
                    slot = claim.slot,
                    session = status.session_kind,
                );
                assert_eq!(reason, expected);
                assert_eq!(
                    state,
                    NodeState::Fenced {
                        reason: expected.clone()
                    },
                    "the node was not fenced when the write returned"
                );
                assert_eq!(status.losses, losses + 1, "the loss was not counted");
                assert_eq!(status.slot, None);
                let again = eventually("the claim anew", Duration::from_secs(60), || {
                    let claim = states
                        .borrow_and_update()
                        .claim_at(Instant::now())
                        .filter(|again| again.generation > generation)
                        .cloned();
                    async move { claim }
                })
                .await;
                assert_eq!(again.slot, claim.slot, "the slot held last was free");
                node.release().await;
                return;
            }
            other => println!(
                "attempt {attempt}: the keep-alive noticed the deleted key first ({other:?}); again"
            ),
        }
    }
    panic!(
        "in {ATTEMPTS} attempts, a keep-alive always noticed the deleted key before the mark write"
    );
}
