//! A generator whose node holds several slots: every ID its slots can make
//! in a tick, each once, in ascending order, in every family that mints;
//! the same IDs whichever calls take them; threads never collide; and the
//! blocks a layout cannot give one node are refused, naming why.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::thread;

use snowmint::{ErrorKind, Generator, Layout, ManualClock, Node, SnowflakeId};

const T0: i64 = 1_800_000_000_000;

/// The presets that mint today (Baidu's 28-bit seconds ran out in 2024).
fn minting_presets() -> Vec<(&'static str, Layout)> {
    Layout::presets()
        .iter()
        .filter(|p| p.layout.is_mintable() && p.layout.last_instant_ms() > T0 + 10_000)
        .map(|p| (p.name, p.layout))
        .collect()
}

/// The sequence field's name and width, read off the layout's fields.
fn sequence_of(layout: &Layout) -> (&str, u8) {
    let field = layout
        .sequence_field()
        .expect("a minting layout has a sequence");
    (field.name(), field.width())
}

/// Takes every ID of the generator's first tick by `next_id` until it says
/// the tick is used up, on a clock that stays in that tick.
fn whole_tick(generator: &Generator<ManualClock>) -> Vec<SnowflakeId> {
    let mut ids = Vec::new();
    loop {
        match generator.try_next_id() {
            Ok(id) => ids.push(id),
            Err(error) => {
                assert_eq!(error.kind(), ErrorKind::SequenceExhausted, "{error}");
                return ids;
            }
        }
    }
}

#[test]
fn a_tick_holds_every_pair_of_slot_and_sequence_once_in_ascending_order() {
    for (name, layout) in minting_presets() {
        let (sequence, width) = sequence_of(&layout);
        let per_slot = 1u64 << width;
        for count in [2u64, 4, 8] {
            if count > layout.node_count() {
                continue;
            }
            // An aligned block and one that is not, both inside the layout.
            let last_first = layout.node_count() - count;
            let odd = ((last_first / 2) | 1).min(last_first);
            for first in BTreeSet::from([0, odd, last_first]) {
                let clock = ManualClock::new(T0);
                let generator = Generator::builder(layout, Node::from_slot(first))
                    .slots(count)
                    .clock(clock.clone())
                    .build()
                    .unwrap_or_else(|e| panic!("{name} slots {first}+{count}: {e}"));
                let ids = whole_tick(&generator);
                let what = format!("{name}, slots {first}..{}", first + count);
                assert_eq!(
                    ids.len() as u64,
                    count * per_slot,
                    "{what}: IDs in one tick"
                );
                assert!(
                    ids.windows(2).all(|w| w[0] < w[1]),
                    "{what}: not increasing"
                );
                let tick = layout.decode(ids[0]).unwrap().ticks();
                let mut pairs = BTreeSet::new();
                for &id in &ids {
                    let parts = layout.decode(id).unwrap();
                    assert_eq!(parts.ticks(), tick, "{what}: {id} left the tick");
                    let slot = parts.node().slot();
                    assert!(
                        (first..first + count).contains(&slot),
                        "{what}: {id} in slot {slot}"
                    );
                    pairs.insert((slot, parts.get(sequence).unwrap()));
                }
                // Every (slot, sequence) pair of the block, each once.
                assert_eq!(pairs.len() as u64, count * per_slot, "{what}: pairs");
                // The next tick starts above the last one, at its first pair.
                clock.advance(layout.unit().as_micros().div_ceil(1000) as i64);
                let next = generator.next_id().unwrap();
                assert!(next > ids[ids.len() - 1], "{what}: next tick below");
                let parts = layout.decode(next).unwrap();
                assert_eq!(parts.ticks(), tick + 1, "{what}");
                assert_eq!((parts.node().slot(), parts.get(sequence)), (first, Some(0)));
            }
        }
    }
}

#[test]
fn slot_order_follows_where_the_sequence_lies() {
    // Twitter: the sequence below the node fields: slot 6's 4096, then 7's.
    let clock = ManualClock::new(T0);
    let twitter = Generator::builder(Layout::TWITTER, Node::from_slot(6))
        .slots(2)
        .clock(clock.clone())
        .build()
        .unwrap();
    let ids = whole_tick(&twitter);
    let machine = |id: SnowflakeId| Layout::TWITTER.decode(id).unwrap().get("machine").unwrap();
    assert_eq!(
        (machine(ids[0]), machine(ids[4095]), machine(ids[4096])),
        (6, 6, 7)
    );
    // Sonyflake: the sequence above the machine: sequence 0 in machines
    // 8..16, then sequence 1 in them...
    let sonyflake = Generator::builder(Layout::SONYFLAKE, Node::from_slot(8))
        .slots(8)
        .clock(clock)
        .build()
        .unwrap();
    let ids = whole_tick(&sonyflake);
    let read = |id: SnowflakeId| {
        let parts = Layout::SONYFLAKE.decode(id).unwrap();
        (
            parts.get("sequence").unwrap(),
            parts.get("machine").unwrap(),
        )
    };
    let first: Vec<_> = ids[..9].iter().map(|&id| read(id)).collect();
    let expected: Vec<_> = (8..16).map(|m| (0, m)).chain([(1, 8)]).collect();
    assert_eq!(first, expected);
    assert_eq!(ids.len(), 8 * 256);
    assert_eq!(read(ids[ids.len() - 1]), (255, 15));
}

#[test]
fn runs_batches_and_single_ids_hand_out_the_same_ids() {
    for (name, layout) in minting_presets() {
        let count = 4.min(layout.node_count());
        let first = layout.node_count() - count;
        let make = || {
            let clock = ManualClock::new(T0);
            let generator = Generator::builder(layout, Node::from_slot(first))
                .slots(count)
                .clock(clock.clone())
                .build()
                .unwrap();
            (generator, clock)
        };
        let (one_by_one, _) = make();
        let expected = whole_tick(&one_by_one);
        let (batched, _) = make();
        let mut got = Vec::new();
        // Odd sizes, so that runs end inside rows and rows inside runs.
        let mut size = 1;
        while got.len() < expected.len() {
            let want = size.min(expected.len() - got.len());
            let before = got.len();
            if size % 2 == 0 {
                got.extend(batched.next_run(want).unwrap());
            } else {
                batched.next_ids(want, &mut got).unwrap();
            }
            assert!(got.len() > before);
            size = size * 3 + 1;
        }
        assert_eq!(got, expected, "{name}");
    }
}

#[test]
fn threads_on_one_node_of_four_slots_never_collide() {
    let generator = Arc::new(
        Generator::builder(Layout::TWITTER, Node::from_slot(100))
            .slots(4)
            .build()
            .unwrap(),
    );
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let generator = Arc::clone(&generator);
            thread::spawn(move || {
                let mut ids = Vec::with_capacity(60_000);
                for i in 0..60_000 {
                    if i % 7 == 0 {
                        generator.next_ids(13, &mut ids).unwrap();
                    } else {
                        ids.push(generator.next_id().unwrap());
                    }
                }
                // One thread's IDs increase.
                assert!(ids.windows(2).all(|w| w[0] < w[1]));
                ids
            })
        })
        .collect();
    let mut all = HashSet::new();
    let mut slots = BTreeSet::new();
    for handle in handles {
        for id in handle.join().unwrap() {
            slots.insert(Layout::TWITTER.decode(id).unwrap().node().slot());
            assert!(all.insert(id), "{id} issued twice");
        }
    }
    assert!(slots.iter().all(|s| (100..104).contains(s)), "{slots:?}");
}

#[test]
fn a_resume_point_and_a_shared_word_count_the_slots_together() {
    let clock = ManualClock::new(T0);
    let word = AtomicU64::new(0);
    let build = || {
        Generator::builder(Layout::TWITTER, Node::from_slot(2))
            .slots(2)
            .clock(clock.clone())
            .resume_after(T0 - 1)
            .build_on(&word)
            .unwrap()
    };
    let (a, b) = (build(), build());
    let mut ids = Vec::new();
    for i in 0..8192 {
        ids.push(
            if i % 2 == 0 {
                a.try_next_id()
            } else {
                b.try_next_id()
            }
            .unwrap(),
        );
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        a.try_next_id().unwrap_err().kind(),
        ErrorKind::SequenceExhausted
    );
    assert_eq!(a.last_timestamp_ms(), Some(T0));
    // Resuming after T0 skips the whole of it, in both slots.
    let resumed = Generator::builder(Layout::TWITTER, Node::from_slot(2))
        .slots(2)
        .clock(clock.clone())
        .resume_after(T0)
        .build()
        .unwrap();
    assert_eq!(
        resumed.try_next_id().unwrap_err().kind(),
        ErrorKind::SequenceExhausted
    );
    clock.advance(1);
    assert_eq!(
        Layout::TWITTER.timestamp_ms(resumed.next_id().unwrap()),
        T0 + 1
    );
}

#[test]
fn blocks_a_layout_cannot_give_one_node_are_refused() {
    let refuse = |layout: Layout, first: u64, count: u64| {
        let error = Generator::builder(layout, Node::from_slot(first))
            .slots(count)
            .build()
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            layout
                .check_slot_block(first, count)
                .unwrap_err()
                .to_string()
        );
        (error.kind(), error.to_string())
    };
    for count in [0, 3, 6, 2048] {
        let (kind, message) = refuse(Layout::TWITTER, 0, count);
        assert_eq!(kind, ErrorKind::OutOfRange);
        assert!(
            message.starts_with(&format!("slots per node {count} is not valid")),
            "{message}"
        );
        assert!(message.contains("1 to 1024"), "{message}");
    }
    let (kind, message) = refuse(Layout::SONYFLAKE, 65_534, 4);
    assert_eq!(kind, ErrorKind::OutOfRange);
    assert_eq!(
        message,
        "slots 65534..=65537 run past the last slot 65535 (slots are 0..=65535)"
    );
    // Room in the state word: Discord's 42 + 12 bits leave 9 for slots.
    let (_, message) = refuse(Layout::DISCORD, 0, 1024);
    assert!(message.contains("1 to 512"), "{message}");
    // Node fields apart, or above the time field.
    let apart: Layout = "time:41/datacenter:5/sequence:12/machine:5"
        .parse()
        .unwrap();
    let (kind, message) = refuse(apart, 0, 2);
    assert_eq!(kind, ErrorKind::InvalidLayout);
    assert!(
        message.contains("keeps its node fields datacenter and machine apart"),
        "{message}"
    );
    let above: Layout = "machine:10/time:41/sequence:12".parse().unwrap();
    let (kind, message) = refuse(above, 0, 2);
    assert_eq!(kind, ErrorKind::InvalidLayout);
    assert!(message.contains("above its time field"), "{message}");
    // One slot is still fine in both.
    assert!(
        Generator::builder(apart, Node::from_slot(3))
            .slots(1)
            .build()
            .is_ok()
    );
    assert!(
        Generator::builder(above, Node::from_slot(3))
            .build()
            .is_ok()
    );
}
