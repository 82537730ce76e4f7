//! The fleet scenarios, written once and run against every backend.
//!
//! Each scenario ends with [`check_run`] (in `scenarios/checks.rs`) over
//! every node that took part: no ID issued twice, every ID issued inside
//! its claim, and every slot handed from one holder to the next only after
//! the first had stopped.

mod blocks;
mod checks;
mod guards;
mod layout;
pub mod refusals;

pub use blocks::{a_node_holds_a_block_of_slots, several_keys_are_created_together_or_not_at_all};
pub use checks::check_run;
pub use guards::{
    a_mark_write_that_finds_the_key_gone_ends_the_claim_at_once,
    a_slot_key_recreated_by_a_waiting_node_stops_the_old_holder,
};
pub use layout::a_fleet_keeps_the_layout_it_started_with;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use snowmint::Layout;
use snowmint_fleet::{
    Coordinator, CoordinatorConfig, FleetError, NodeState, SlotRange, SlotSource,
};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::proxy::Proxy;
use snowmint_test_support::wait::eventually;
use tokio::sync::watch;

use crate::node::{Finished, ShiftedClock, TestNode};
use checks::{assert_handed, last_issued_ms};

/// The claim TTL of every scenario: short, so that expiry is quick.
pub const TTL: Duration = Duration::from_secs(2);

/// The first usable claim published on `states`.
async fn first_claim(states: &mut watch::Receiver<NodeState>) -> snowmint_fleet::Claim {
    eventually("a claim", Duration::from_secs(60), || {
        let claim = states.borrow_and_update().claim_at(Instant::now()).cloned();
        async move { claim }
    })
    .await
}

async fn release_all<B: snowmint_fleet::Backend>(nodes: Vec<TestNode<B>>) -> Vec<Finished> {
    let mut finished = Vec::new();
    for node in nodes {
        finished.push(node.release().await);
    }
    finished
}

/// A node claims a free slot, keeps it past several TTLs, releases it at
/// once on shutdown; a second node gets another slot; a third, told that
/// it held the released slot before, takes it back, above its high-water
/// mark.
pub async fn claim_keep_release<S: CoordinatorServer>() {
    let server = S::start().await;
    let fleet = "keep";
    let direct = || server.backend(server.client_addr());
    let first = TestNode::start("first", direct(), fleet, "0-1023", TTL);
    let claim = first.wait_active(1).await;
    let slot = claim.slot;
    assert!(slot < 1024, "slot {slot} is outside 0-1023");
    assert_eq!((claim.generation, claim.floor_ms), (1, None));
    assert_eq!(claim.details["holder"], "first");
    let second = TestNode::start("second", direct(), fleet, "0-1023", TTL);
    let other = second.wait_active(1).await.slot;
    assert!(
        other < 1024 && other != slot,
        "the second node got slot {other}"
    );

    // Kept alive well past the TTL, without a single loss.
    let issued = first.issued_count();
    tokio::time::sleep(TTL * 3).await;
    first.assert_undisturbed();
    second.assert_undisturbed();
    first.wait_issued(issued, 1).await;
    let holders = server.slot_holders(fleet).await;
    assert_eq!(
        holders,
        BTreeMap::from([(slot, "first".into()), (other, "second".into())])
    );

    let first = first.release().await;
    // The slot frees at once, not after the TTL.
    assert_eq!(
        server
            .slot_holders(fleet)
            .await
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        [other]
    );
    let mark = server
        .stored_mark(fleet, slot)
        .await
        .expect("the released slot has a high-water mark");
    let last = last_issued_ms(&first);
    assert!(
        mark >= last,
        "the mark {mark} is below the last ID's time {last}"
    );

    // A restarted service knows the slot it held (from its state file)
    // and passes it as the preferred slot.
    let config = CoordinatorConfig::new(
        fleet,
        SlotRange::all(Layout::TWITTER),
        TTL,
        "third".into(),
        Layout::TWITTER,
    )
    .unwrap()
    .with_preferred_slot(Some(slot));
    let third = TestNode::start_configured("third", direct(), config, ShiftedClock::default());
    let claim = third.wait_active(1).await;
    assert_eq!((claim.slot, claim.floor_ms), (slot, Some(mark)));
    third.wait_issued(0, 20).await;

    let mut finished = vec![first];
    finished.extend(release_all(vec![second, third]).await);
    assert!(server.slot_holders(fleet).await.is_empty());
    let handovers = check_run(&finished);
    assert_handed(&handovers, slot, "first", "third");
}

/// 40 nodes race for 32 slots: 32 distinct winners, 8 clear refusals, and
/// never a slot held twice.
pub async fn race_for_slots<S: CoordinatorServer>() {
    const NODES: usize = 40;
    let server = S::start().await;
    let fleet = "race";
    let nodes: Vec<_> = (0..NODES)
        .map(|n| {
            TestNode::start(
                &format!("node-{n}"),
                server.backend(server.client_addr()),
                fleet,
                "0-31",
                TTL,
            )
        })
        .collect();

    // Watch every node's state while they race.
    let receivers: Vec<watch::Receiver<NodeState>> =
        nodes.iter().map(|node| node.engine.state()).collect();
    let samples = Arc::new(Mutex::new((0usize, Vec::<String>::new())));
    let sampler = tokio::spawn({
        let samples = samples.clone();
        async move {
            loop {
                let now = Instant::now();
                let mut held = BTreeMap::new();
                let mut doubles = Vec::new();
                for (n, receiver) in receivers.iter().enumerate() {
                    let slot = receiver.borrow().claim_at(now).map(|claim| claim.slot);
                    if let Some(other) = slot.and_then(|slot| held.insert(slot, n)) {
                        doubles.push(format!("slot {slot:?} held by node-{other} and node-{n}"));
                    }
                }
                {
                    let mut samples = samples.lock().unwrap();
                    samples.0 += 1;
                    samples.1.extend(doubles);
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    });

    let all_taken = "all 32 slots of fleet race in 0-31 are taken";
    let (winners, refused) = eventually("32 winners and 8 refusals", Duration::from_secs(60), || async {
        let states: Vec<NodeState> = nodes.iter().map(TestNode::state).collect();
        let winners: Vec<(usize, u64)> = states
            .iter()
            .enumerate()
            .filter_map(|(n, state)| state.claim_at(Instant::now()).map(|claim| (n, claim.slot)))
            .collect();
        let refused: Vec<usize> = states
            .iter()
            .enumerate()
            .filter(|(_, state)| matches!(state, NodeState::Fenced { reason } if reason == all_taken))
            .map(|(n, _)| n)
            .collect();
        (winners.len() == 32 && refused.len() == NODES - 32).then_some((winners, refused))
    })
    .await;
    let slots: BTreeSet<u64> = winners.iter().map(|(_, slot)| *slot).collect();
    assert_eq!(
        slots,
        (0..32).collect(),
        "every slot has exactly one winner"
    );

    // The server agrees: one key per slot, naming its winner.
    let holders = server.slot_holders(fleet).await;
    let expected: BTreeMap<u64, String> = winners
        .iter()
        .map(|(n, slot)| (*slot, format!("node-{n}")))
        .collect();
    assert_eq!(holders, expected);

    // The refused keep retrying and stay refused; the winners keep serving.
    tokio::time::sleep(TTL).await;
    for n in &refused {
        assert_eq!(
            nodes[*n].state(),
            NodeState::Fenced {
                reason: all_taken.into()
            }
        );
        assert_eq!(nodes[*n].issued_count(), 0);
    }
    for (n, _) in &winners {
        nodes[*n].wait_issued(0, 1).await;
    }

    sampler.abort();
    let (count, doubles) = std::mem::take(&mut *samples.lock().unwrap());
    assert!(count > 10, "the sampler barely ran ({count} samples)");
    assert!(doubles.is_empty(), "a slot was held twice: {doubles:?}");
    let finished = release_all(nodes).await;
    check_run(&finished);
}

/// The coordinator stops answering (SIGSTOP): every node stops issuing
/// before its TTL runs out; when it answers again, every node claims anew
/// and issues again.
pub async fn server_pause_fences_everyone<S: CoordinatorServer>() {
    let server = S::start().await;
    let fleet = "pause";
    let nodes: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|name| {
            TestNode::start(
                name,
                server.backend(server.client_addr()),
                fleet,
                "0-1023",
                TTL,
            )
        })
        .collect();
    let mut ttls = Vec::new();
    for node in &nodes {
        let claim = node.wait_active(1).await;
        ttls.push(Duration::from_millis(
            claim.details["ttl_ms"].parse().unwrap(),
        ));
        node.wait_issued(0, 20).await;
    }

    let paused_at = Instant::now();
    server.process().pause();
    for node in &nodes {
        node.wait_fenced("").await;
    }
    let counts: Vec<usize> = nodes.iter().map(TestNode::issued_count).collect();
    for (node, ttl) in nodes.iter().zip(&ttls) {
        let record = node.engine.claims()[0];
        assert!(
            record.valid_until <= paused_at + *ttl,
            "{} could issue until after its TTL ran out",
            node.name
        );
        node.with_log(|log| {
            let last = log.issued.last().unwrap().at;
            assert!(
                last < paused_at + *ttl,
                "{} issued an ID after its TTL ran out",
                node.name
            );
        });
    }
    // Nothing is issued while the coordinator is away.
    tokio::time::sleep(TTL).await;
    let still: Vec<usize> = nodes.iter().map(TestNode::issued_count).collect();
    assert_eq!(counts, still, "a node issued IDs while fenced");

    server.process().resume();
    for (node, count) in nodes.iter().zip(&counts) {
        node.wait_active(2).await;
        node.wait_issued(*count, 20).await;
    }
    let finished = release_all(nodes).await;
    check_run(&finished);
}

/// One node is cut off from the coordinator: it fences itself before a
/// waiting node can take its slot; the other nodes keep serving.
pub async fn partition_fences_the_cut_node<S: CoordinatorServer>() {
    let server = S::start().await;
    let fleet = "partition";
    let proxy = Proxy::start(server.client_addr()).await;
    let cut = TestNode::start("cut", server.backend(proxy.addr()), fleet, "0-2", TTL);
    let slot = cut.wait_active(1).await.slot;
    let direct = || server.backend(server.client_addr());
    let others: Vec<_> = ["b", "c"]
        .iter()
        .map(|name| TestNode::start(name, direct(), fleet, "0-2", TTL))
        .collect();
    for node in &others {
        node.wait_active(1).await;
    }
    let waiter = TestNode::start("waiter", direct(), fleet, "0-2", TTL);
    waiter
        .wait_fenced("all 3 slots of fleet partition in 0-2 are taken")
        .await;
    cut.wait_issued(0, 20).await;

    proxy.cut();
    let counts: Vec<usize> = others.iter().map(TestNode::issued_count).collect();
    let taken = waiter.wait_active(1).await;
    assert_eq!(taken.slot, slot, "the waiter takes the cut node's slot");
    assert!(
        cut.claim().is_none(),
        "the cut node still thinks it holds slot {slot}"
    );
    for (node, count) in others.iter().zip(counts) {
        node.wait_issued(count, 20).await;
        node.assert_undisturbed();
    }

    // Healed, the cut node finds every slot taken and stays fenced.
    proxy.heal();
    cut.wait_fenced("all 3 slots of fleet partition in 0-2 are taken")
        .await;

    let mut nodes = vec![cut, waiter];
    nodes.extend(others);
    let finished = release_all(nodes).await;
    let handovers = check_run(&finished);
    assert_handed(&handovers, slot, "cut", "waiter");
}

/// An operator deletes a node's slot key: the node notices (at its next
/// keep-alive or mark write), fences itself and claims anew, above its own
/// mark, preferring the slot it held.
pub async fn a_deleted_slot_key_is_noticed<S: CoordinatorServer>() {
    let server = S::start().await;
    let fleet = "deleted";
    let node = TestNode::start(
        "node",
        server.backend(server.client_addr()),
        fleet,
        "0-1023",
        TTL,
    );
    let slot = node.wait_active(1).await.slot;
    node.wait_issued(0, 20).await;
    server.delete_slot(fleet, slot).await;
    let claim = node.wait_active(2).await;
    assert_eq!(claim.slot, slot, "the slot held last is free again");
    assert!(
        claim.floor_ms.is_some(),
        "the new claim starts above the old mark"
    );
    let status = node.engine.status();
    assert_eq!((status.claims, status.losses), (2, 1));
    let count = node.issued_count();
    node.wait_issued(count, 20).await;
    let finished = node.release().await;
    assert!(finished.claims[0].valid_until <= finished.claims[1].claimed_at);
    let handovers = check_run(&[finished]);
    assert_handed(&handovers, slot, "node", "node");
}

/// A node crashes without releasing: its slot frees after the TTL, and the
/// node that takes it over issues nothing at or below the old holder's
/// mark, even with its clock a minute behind.
pub async fn crash_takeover_respects_the_mark<S: CoordinatorServer>() {
    let server = S::start().await;
    let fleet = "crash";
    let proxy = Proxy::start(server.client_addr()).await;
    let old = TestNode::start("old", server.backend(proxy.addr()), fleet, "5-5", TTL);
    assert_eq!(old.wait_active(1).await.slot, 5);
    old.wait_issued(0, 50).await;
    // The crashed machine's network dies with it: nothing it had queued
    // (a session close) reaches the coordinator.
    proxy.cut();
    let old = old.crash();
    let mark = server
        .stored_mark(fleet, 5)
        .await
        .expect("the old holder left a mark");
    let last = last_issued_ms(&old);
    assert!(mark >= last);

    let clock = ShiftedClock::default();
    clock.shift(-60_000);
    let direct = server.backend(server.client_addr());
    let new = TestNode::start_with_clock("new", direct, fleet, "5-5", TTL, clock.clone());
    let claim = new.wait_active(1).await;
    assert_eq!((claim.slot, claim.floor_ms), (5, Some(mark)));
    eventually(
        "the new node to refuse with its clock behind the mark",
        Duration::from_secs(30),
        || async { new.with_log(|log| log.refusals > 20).then_some(()) },
    )
    .await;
    assert_eq!(
        new.issued_count(),
        0,
        "issued with the clock a minute behind the mark"
    );

    clock.shift(0);
    new.wait_issued(0, 50).await;
    let new = new.release().await;
    for issued in &new.issued {
        assert!(
            Layout::TWITTER.timestamp_ms(issued.id) > mark,
            "{} is at or below the mark",
            issued.id
        );
    }
    let handovers = check_run(&[old, new]);
    assert_handed(&handovers, 5, "old", "new");
}

/// Reservations raise the shared mark and never lower it, survive a write
/// by someone else (compare-and-set; a higher mark counts as cover, a
/// lower one is written over), and are refused once the claim is gone.
pub async fn reserve_rules<S: CoordinatorServer>() {
    let server = S::start().await;
    let fleet = "reserve";
    let slots = SlotRange::new(9, 9).unwrap();
    let config =
        CoordinatorConfig::new(fleet, slots, TTL, "reserver".into(), Layout::TWITTER).unwrap();
    let engine = Coordinator::start(server.backend(server.client_addr()), config).unwrap();
    let generation = first_claim(&mut engine.state()).await.generation;
    let base = 1_700_000_000_000;

    engine.reserve(generation, base).await.unwrap();
    assert_eq!(server.stored_mark(fleet, 9).await, Some(base));
    engine.reserve(generation, base - 1_000).await.unwrap();
    assert_eq!(
        server.stored_mark(fleet, 9).await,
        Some(base),
        "the mark was lowered"
    );
    engine.reserve(generation, base + 1_000).await.unwrap();
    assert_eq!(server.stored_mark(fleet, 9).await, Some(base + 1_000));

    // Someone else moves the mark: the engine's compare-and-set notices.
    server.set_mark(fleet, 9, base + 5_000).await;
    engine.reserve(generation, base + 2_000).await.unwrap();
    assert_eq!(
        server.stored_mark(fleet, 9).await,
        Some(base + 5_000),
        "a newer mark was overwritten"
    );
    engine.reserve(generation, base + 6_000).await.unwrap();
    assert_eq!(server.stored_mark(fleet, 9).await, Some(base + 6_000));

    // Someone else moves the mark, not as far: the compare-and-set
    // conflicts, and the engine writes again at the version it reads.
    server.set_mark(fleet, 9, base + 6_500).await;
    engine.reserve(generation, base + 7_000).await.unwrap();
    assert_eq!(server.stored_mark(fleet, 9).await, Some(base + 7_000));

    let wrong = engine.reserve(generation + 1, base + 8_000).await;
    assert!(matches!(wrong, Err(FleetError::Fenced { .. })), "{wrong:?}");
    engine.release().await;
    let gone = engine.reserve(generation, base + 9_000).await;
    match gone {
        Err(FleetError::Fenced { reason }) => assert!(reason.starts_with("released"), "{reason}"),
        other => panic!("reserved after release: {other:?}"),
    }
    assert_eq!(server.stored_mark(fleet, 9).await, Some(base + 7_000));
}

/// [`snowmint_fleet::connect`] turns a URL into a running engine whose
/// claim says where it came from.
pub async fn connect_from_url<S: CoordinatorServer>(
    server: &S,
    url: &str,
    kind: &str,
    session_name: &str,
) {
    let fleet = "url";
    let url: snowmint_fleet::CoordinatorUrl = url.parse().unwrap();
    let slots = SlotRange::new(3, 4).unwrap();
    let config =
        CoordinatorConfig::new(fleet, slots, TTL, "via-url".into(), Layout::TWITTER).unwrap();
    let source = snowmint_fleet::connect(&url, config).unwrap();
    assert_eq!(source.kind(), kind);
    let claim = first_claim(&mut source.state()).await;
    assert!(
        slots.contains(claim.slot),
        "slot {} is outside 3-4",
        claim.slot
    );
    assert_eq!(claim.node, snowmint::Node::from_slot(claim.slot));
    assert_eq!(claim.details["coordinator"], url.to_string());
    assert_eq!(claim.details["fleet"], fleet);
    assert_eq!(claim.details["slots"], "3-4");
    assert!(!claim.details[session_name].is_empty());
    assert!(
        claim
            .valid_until
            .is_some_and(|deadline| deadline > Instant::now())
    );
    source.release().await;
    let state = source.state().borrow().clone();
    assert!(
        matches!(state, NodeState::Fenced { ref reason } if reason.starts_with("released")),
        "{state:?}"
    );
    assert!(server.slot_holders(fleet).await.is_empty());
}

/// With nothing listening at `url`, the node is fenced for a reason that
/// is one sentence: `expected`, with no Rust type or debug dump in it.
pub async fn unreachable_coordinator(url: &str, expected: &str) {
    let url: snowmint_fleet::CoordinatorUrl = url.parse().unwrap();
    let slots = SlotRange::new(0, 1).unwrap();
    let config =
        CoordinatorConfig::new("away", slots, TTL, "lonely".into(), Layout::TWITTER).unwrap();
    let source = snowmint_fleet::connect(&url, config).unwrap();
    let mut states = source.state();
    let reason = eventually("a reason past starting", Duration::from_secs(60), || {
        let state = states.borrow_and_update().clone();
        async move {
            match state {
                NodeState::Fenced { reason } if !reason.starts_with("starting") => Some(reason),
                NodeState::Active(claim) => panic!("claimed through a closed port: {claim:?}"),
                NodeState::Fenced { .. } => None,
            }
        }
    })
    .await;
    assert_eq!(reason, expected);
    for dump in ["{", "Error(", "tonic", "source:", "os error"] {
        assert!(!reason.contains(dump), "{dump:?} in {reason:?}");
    }
    source.release().await;
}
