//! Nodes that hold several slots: a block of K aligned slots claimed in
//! one step or not at all, kept and fenced as one, its mark raised on every
//! slot, released at once, and taken over slot by slot above its mark.

use std::collections::BTreeMap;
use std::ops::Range;

use snowmint::Layout;
use snowmint_fleet::{Backend, CoordinatorConfig, SlotRange, WhoisAnswer};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::proxy::Proxy;

use super::checks::last_issued_ms;
use super::{TTL, check_run};
use crate::node::{Finished, ShiftedClock, TestNode};

/// K = 2, then K = 4, each in a fleet of its own on one server.
pub async fn a_node_holds_a_block_of_slots<S: CoordinatorServer>() {
    let server = S::start().await;
    for per_node in [2, 4] {
        block_of::<S>(&server, per_node).await;
    }
}

/// The backend's primitives over several keys: created in one atomic
/// step (with one key held by another session, none is created), each
/// checked by a keep-alive, all released together.
pub async fn several_keys_are_created_together_or_not_at_all<S: CoordinatorServer>() {
    let server = S::start().await;
    let backend = server.backend(server.client_addr());
    let dirs = ["/snowmint/atomic/slots".to_owned()];
    let a = backend.open_session(TTL, &dirs).await.unwrap();
    let b = backend.open_session(TTL, &dirs).await.unwrap();
    let key = |slot: u64| format!("/snowmint/atomic/slots/{slot}");
    let block: Vec<String> = (0..4).map(key).collect();
    assert!(
        backend
            .create_if_absent(&a.session, &[key(3)], b"a")
            .await
            .unwrap()
    );
    assert!(
        !backend
            .create_if_absent(&b.session, &block, b"b")
            .await
            .unwrap(),
        "a block with a key held elsewhere was created"
    );
    assert_eq!(
        server.slot_holders("atomic").await,
        BTreeMap::from([(3, "a".into())]),
        "a refused block left some of its keys behind"
    );
    assert!(
        backend
            .keep_alive(&b.session, &block)
            .await
            .unwrap_err()
            .is_lost()
    );

    backend.release(&a.session, &[key(3)]).await.unwrap();
    assert!(
        backend
            .create_if_absent(&b.session, &block, b"b")
            .await
            .unwrap()
    );
    let all_b: BTreeMap<u64, String> = (0..4).map(|slot| (slot, "b".into())).collect();
    assert_eq!(server.slot_holders("atomic").await, all_b);
    backend.keep_alive(&b.session, &block).await.unwrap();
    // One key of the block gone: the keep-alive of the block says lost.
    server.delete_slot("atomic", 2).await;
    let lost = backend.keep_alive(&b.session, &block).await.unwrap_err();
    assert!(lost.is_lost(), "{lost}");
    assert!(lost.reason().contains('2'), "{lost}");
    backend.release(&b.session, &block).await.unwrap();
    assert!(server.slot_holders("atomic").await.is_empty());
}

/// The fleet's range is two aligned blocks of `k`: `0..k` and `k..2k`.
async fn block_of<S: CoordinatorServer>(server: &S, k: u64) {
    let fleet = format!("block{k}");
    let fleet = fleet.as_str();
    let range = format!("0-{}", 2 * k - 1);
    let direct = || server.backend(server.client_addr());
    let wide = |name: &str, backend: S::Backend| {
        let slots: SlotRange = range.parse().unwrap();
        let config = CoordinatorConfig::new(fleet, slots, TTL, name.into(), Layout::TWITTER)
            .unwrap()
            .with_slots_per_node(k)
            .unwrap();
        TestNode::start_configured(name, backend, config, ShiftedClock::default())
    };

    // Another session holds one slot of each block (slot 1, and the last
    // slot of the range): the node claims nothing at all.
    let last = 2 * k - 1;
    let low = TestNode::start("low", direct(), fleet, "1-1", TTL);
    let high = TestNode::start("high", direct(), fleet, &format!("{last}-{last}"), TTL);
    low.wait_active(1).await;
    high.wait_active(1).await;
    let node = wide("wide", direct());
    let all_taken =
        format!("all 2 blocks of {k} slots of fleet {fleet} in {range} have a slot taken");
    assert_eq!(node.wait_fenced(&all_taken).await, all_taken);
    assert_eq!(
        server.slot_holders(fleet).await,
        BTreeMap::from([(1, "low".into()), (last, "high".into())]),
        "a node of {k} slots created a key while every block had a slot taken"
    );
    assert_eq!(node.issued_count(), 0);

    // The high block frees: the node claims exactly its K slots, all held
    // by its one session.
    let high = high.release().await;
    let claim = node.wait_active(1).await;
    assert_eq!((claim.slot, claim.slots), (k, k));
    assert_eq!(claim.details["slots_held"], format!("{k}-{last}"));
    assert_eq!(
        holders_of(server, fleet, "wide").await,
        (k..2 * k).collect::<Vec<_>>()
    );
    assert_eq!(server.slot_holders(fleet).await[&1], "low");
    node.wait_issued(0, 20).await;
    assert_marks_cover(server, fleet, k..2 * k, &node).await;
    // Whois of an ID of any slot of the block, at a time the node issued,
    // names the node: each slot's history holds the claim's record.
    let issued_ms = node.with_log(|log| Layout::TWITTER.timestamp_ms(log.issued[0].id));
    for slot in k..2 * k {
        let id = Layout::TWITTER
            .encode_pair(issued_ms, slot / 32, slot % 32, 0)
            .unwrap();
        let found = node.engine.whois(id).await.unwrap();
        assert_eq!(
            found.answer,
            WhoisAnswer::Covered,
            "slot {slot}: {}",
            found.message()
        );
        assert_eq!(found.claims[0].holder, "wide", "slot {slot}");
    }

    // One of its keys deleted by hand: the whole claim ends (one key lost
    // is the block lost), and the node claims its block again.
    let before = node.engine.status();
    assert_eq!((before.claims, before.losses), (1, 0));
    server.delete_slot(fleet, k + 1).await;
    let again = node.wait_active(2).await;
    assert_eq!((again.slot, again.slots), (k, k));
    let after = node.engine.status();
    assert_eq!(after.losses, 1);
    assert!(
        again.floor_ms.is_some(),
        "the new claim starts above the old marks"
    );
    let count = node.issued_count();
    node.wait_issued(count, 20).await;

    // A clean release frees every slot of the block at once.
    let node = node.release().await;
    assert_eq!(
        server.slot_holders(fleet).await,
        BTreeMap::from([(1, "low".into())]),
        "the release left keys of the block behind"
    );
    for record in &node.claims {
        assert_eq!((record.slot, record.slots), (k, k));
        assert!(record.ended_at.is_some());
    }

    // A second node of K slots takes the block above every mark; it
    // crashes (its network with it), and a node of one slot takes over one
    // slot of the block (not the first) above that node's mark.
    let proxy = Proxy::start(server.client_addr()).await;
    let crashing = wide("crashing", server.backend(proxy.addr()));
    let claim = crashing.wait_active(1).await;
    assert_eq!((claim.slot, claim.slots), (k, k));
    assert!(claim.floor_ms.is_some(), "the block's marks were not read");
    crashing.wait_issued(0, 50).await;
    // Cut off, its session can no longer be confirmed: the node fences
    // itself (the whole block: one claim), before its keys expire.
    proxy.cut();
    crashing.wait_fenced("").await;
    assert!(crashing.claim().is_none());
    let crashing = crashing.crash();
    let marks = assert_marks_cover_finished(server, fleet, k..2 * k, &crashing).await;
    let taken = k + k / 2;
    let taker = TestNode::start("taker", direct(), fleet, &format!("{taken}-{taken}"), TTL);
    let took = taker.wait_active(1).await;
    assert_eq!((took.slot, took.slots), (taken, 1));
    let floor = took.floor_ms.expect("the take-over read a mark");
    assert!(
        floor >= marks[&taken],
        "the take-over's floor {floor} is below the mark {} of slot {taken}",
        marks[&taken]
    );
    taker.wait_issued(0, 20).await;
    let taker = taker.release().await;
    let low = low.release().await;
    let handovers = check_run(&[low, high, node, crashing, taker]);
    assert!(
        handovers
            .iter()
            .any(|h| h.slot == taken && h.from == "crashing" && h.to == "taker"),
        "no hand-over of slot {taken} from the crashed node: {handovers:?}"
    );
}

/// The mark of every slot of `block` is at or above the time of every ID
/// `finished` issued; returns the marks by slot.
async fn assert_marks_cover_finished<S: CoordinatorServer>(
    server: &S,
    fleet: &str,
    block: Range<u64>,
    finished: &Finished,
) -> BTreeMap<u64, i64> {
    let last = last_issued_ms(finished);
    let mut marks = BTreeMap::new();
    for slot in block {
        marks.insert(slot, mark_at_least(server, fleet, slot, last).await);
    }
    marks
}

/// The mark of every slot of `block` is at or above the time of every ID
/// `node` has handed out so far (each was reserved before).
async fn assert_marks_cover<S: CoordinatorServer, B: Backend>(
    server: &S,
    fleet: &str,
    block: Range<u64>,
    node: &TestNode<B>,
) {
    let last = node.with_log(|log| {
        log.issued
            .iter()
            .map(|issued| Layout::TWITTER.timestamp_ms(issued.id))
            .max()
            .expect("the node issued IDs")
    });
    for slot in block {
        mark_at_least(server, fleet, slot, last).await;
    }
}

/// The mark of `slot`, which must be at or above `last`.
async fn mark_at_least<S: CoordinatorServer>(server: &S, fleet: &str, slot: u64, last: i64) -> i64 {
    let mark = server
        .stored_mark(fleet, slot)
        .await
        .unwrap_or_else(|| panic!("slot {slot} of the block has no mark"));
    assert!(
        mark >= last,
        "the mark {mark} of slot {slot} is below the last ID's time {last}"
    );
    mark
}

/// The slots whose key names `holder`, lowest first.
async fn holders_of<S: CoordinatorServer>(server: &S, fleet: &str, holder: &str) -> Vec<u64> {
    server
        .slot_holders(fleet)
        .await
        .into_iter()
        .filter(|(_, name)| name == holder)
        .map(|(slot, _)| slot)
        .collect()
}
