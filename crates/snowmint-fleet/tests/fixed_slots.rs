//! A node given explicitly that holds several slots (`slots_per_node`):
//! each slot locked on the host as a node of its own would be, so that a
//! range overlapping a running node's is refused, naming the slot and its
//! holder; the marks of every slot read (the highest wins) and written.

use std::time::Duration;

use snowmint::{Layout, ManualClock, Node};
use snowmint_fleet::{EmbeddedIssuer, FleetError, IssuerBuilder, MarkFile};

/// The first instant of the tests' manual clocks.
const T0: i64 = 1_700_000_000_000;

/// A node of `count` slots from slot `first` (datacenter 0 in the Twitter
/// layout, so the slot is the machine). Its start does not wait for the
/// manual clock to pass a mark (it never moves by itself).
fn node(dir: &tempfile::TempDir, clock: &ManualClock, first: u64, count: u64) -> IssuerBuilder {
    EmbeddedIssuer::builder()
        .node(0, first)
        .slots_per_node(count)
        .state_dir(dir.path())
        .clock(clock.clone())
        .wait_for_claim(Duration::ZERO)
}

/// The mark on disk of `slot`.
fn mark_of(dir: &tempfile::TempDir, slot: u64) -> Option<i64> {
    MarkFile::for_node(dir.path(), Layout::TWITTER, Node::from_slot(slot))
        .read()
        .unwrap()
}

/// Slots 4-7 run as one node: every range that shares a slot with it is
/// refused (naming the first shared slot it met and this process as its
/// holder), and leaves no lock behind; ranges beside it start.
#[test]
fn a_range_that_overlaps_a_running_node_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let wide = node(&dir, &clock, 4, 4).start_blocking().unwrap();
    // (first, count, the slot found held)
    for (first, count, held) in [(6, 2, 6), (7, 1, 7), (4, 1, 4), (0, 8, 4), (4, 4, 4)] {
        let refused = node(&dir, &clock, first, count)
            .start_blocking()
            .unwrap_err();
        let message = refused.to_string();
        match &refused {
            FleetError::NodeLocked {
                node: Some(locked),
                pid: Some(pid),
                ..
            } => {
                assert_eq!(*locked, Node::from_slot(held), "{message}");
                assert_eq!(*pid, std::process::id(), "{message}");
            }
            other => panic!("slots {first}+{count} were not refused as locked: {other:?}"),
        }
        assert!(
            message.contains(&format!("node-dc0-m{held}.lock")),
            "{message}"
        );
    }
    // Beside it: 0-3 (which the refused 0-7 had locked for a moment) and
    // 8-15.
    let low = node(&dir, &clock, 0, 4).start_blocking().unwrap();
    let high = node(&dir, &clock, 8, 8).start_blocking().unwrap();
    for issuer in [&wide, &low, &high] {
        issuer.next_id().unwrap();
    }
    wide.shutdown();
    // Its slots are free once it is gone.
    let taker = node(&dir, &clock, 6, 1).start_blocking().unwrap();
    low.shutdown();
    high.shutdown();
    taker.shutdown();
}

/// A node of four slots writes the mark of every slot before its IDs
/// leave; a later node of one of those slots resumes after it.
#[test]
fn every_slot_keeps_the_mark_and_a_later_holder_of_one_resumes_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let wide = node(&dir, &clock, 4, 4).start_blocking().unwrap();
    // One tick's worth of every slot: the clock stands still.
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.extend(wide.next_ids(4096).unwrap());
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let slots: std::collections::BTreeSet<u64> = ids
        .iter()
        .map(|id| {
            Layout::TWITTER
                .slot_of(Layout::TWITTER.node_of(*id))
                .unwrap()
        })
        .collect();
    assert_eq!(slots, (4..8).collect());
    let last = ids
        .iter()
        .map(|id| Layout::TWITTER.timestamp_ms(*id))
        .max()
        .unwrap();
    wide.shutdown();
    let marks: Vec<Option<i64>> = (4..8).map(|slot| mark_of(&dir, slot)).collect();
    for (slot, mark) in (4..8).zip(&marks) {
        assert!(
            mark.is_some_and(|mark| mark >= last),
            "slot {slot}'s mark {mark:?} is below the last ID's time {last}"
        );
    }
    assert_eq!(mark_of(&dir, 3), None, "a slot outside the node got a mark");

    // Slot 6 alone, with the clock where the wide node started: refused
    // until the clock passes the mark, then above it.
    let one = node(&dir, &clock, 6, 1).start_blocking().unwrap();
    let refusal = one.next_id().unwrap_err();
    assert_eq!(refusal.code(), "clock_behind", "{refusal}");
    let mark = marks[2].unwrap();
    clock.advance(mark - T0 + 1);
    let after = one.next_id().unwrap();
    assert!(Layout::TWITTER.timestamp_ms(after) > mark);
    one.shutdown();
}

/// The node's floor is the highest mark of its slots: a mark left on one
/// slot (not the first) by an earlier node is waited out by the block.
#[test]
fn the_highest_mark_of_the_slots_is_the_floor() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let ahead = T0 + 1_500;
    MarkFile::for_node(dir.path(), Layout::TWITTER, Node::from_slot(7))
        .write(ahead)
        .unwrap();
    MarkFile::for_node(dir.path(), Layout::TWITTER, Node::from_slot(5))
        .write(T0 + 200)
        .unwrap();
    let wide = node(&dir, &clock, 4, 4).start_blocking().unwrap();
    let refusal = wide.next_id().unwrap_err();
    assert_eq!(refusal.code(), "clock_behind", "{refusal}");
    assert!(
        refusal.retry_after() > Duration::from_millis(1_400),
        "{refusal:?}"
    );
    clock.advance(1_501);
    let id = wide.next_id().unwrap();
    assert!(Layout::TWITTER.timestamp_ms(id) > ahead);
    wide.shutdown();
    for slot in 4..8 {
        assert!(
            mark_of(&dir, slot).is_some_and(|mark| mark > ahead),
            "slot {slot}"
        );
    }
}

/// A count that is not a power of two, or a block past the layout, is
/// refused at the start; so is a count for a hostname's node.
#[test]
fn bad_counts_are_refused_at_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let three = node(&dir, &clock, 4, 3).start_blocking().unwrap_err();
    assert_eq!(
        three.to_string(),
        "slots per node 3 is not valid: a node holds a power of two of slots, \
         1 to 1024 in this layout (1, 2, 4, 8, ...)"
    );
    let past = EmbeddedIssuer::builder()
        .node(31, 30)
        .slots_per_node(4)
        .state_dir(dir.path())
        .start_blocking()
        .unwrap_err();
    assert_eq!(
        past.to_string(),
        "slots 1022..=1025 run past the last slot 1023 (slots are 0..=1023)"
    );
    let hostname = EmbeddedIssuer::builder()
        .hostname("ids-4")
        .slots_per_node(2)
        .state_dir(dir.path())
        .start_blocking()
        .unwrap_err();
    assert!(matches!(hostname, FleetError::Setting(_)), "{hostname}");
}
