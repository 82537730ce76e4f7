//! Generators built over one caller-owned state word (`build_on`) issue as
//! one generator: one sequence, one last timestamp, no pair used twice.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;

use snowmint::{ClockPolicy, ErrorKind, Generator, Layout, ManualClock, Node, SnowflakeId};

const T0: i64 = 1_700_000_000_000;
/// Datacenter 7, machine 13.
const NODE: Node = Node::from_slot(7 * 32 + 13);

fn over<'w>(word: &'w AtomicU64, clock: &ManualClock) -> Generator<ManualClock, &'w AtomicU64> {
    Generator::builder(Layout::TWITTER, NODE)
        .clock(clock.clone())
        .build_on(word)
        .expect("valid generator")
}

/// Two generators over one word count one sequence between them, and fill
/// one millisecond together.
#[test]
fn two_generators_share_one_sequence() {
    let word = AtomicU64::new(0);
    let clock = ManualClock::new(T0);
    let a = over(&word, &clock);
    let b = over(&word, &clock);
    let mut sequences = Vec::new();
    for i in 0..4096 {
        let generator = if i % 3 == 0 { &a } else { &b };
        let id = generator.try_next_id().expect("room in the millisecond");
        let parts = Layout::TWITTER.decode(id).unwrap();
        assert_eq!(parts.time_ms(), T0);
        sequences.push(parts.get("sequence").unwrap());
    }
    assert_eq!(sequences, (0..4096).collect::<Vec<u64>>());
    assert!(
        a.try_next_id()
            .is_err_and(|e| e.kind() == ErrorKind::SequenceExhausted)
    );
    assert!(
        b.try_next_id()
            .is_err_and(|e| e.kind() == ErrorKind::SequenceExhausted)
    );
    clock.advance(1);
    let next = b.next_id().expect("the next millisecond");
    assert_eq!(Layout::TWITTER.timestamp_ms(next), T0 + 1);
    assert_eq!(
        Layout::TWITTER.decode(next).unwrap().get("sequence"),
        Some(0)
    );
    assert_eq!(a.last_timestamp_ms(), Some(T0 + 1));
}

/// A generator whose clock is behind what another one issued refuses with
/// both times, as one generator would.
#[test]
fn a_generator_behind_the_shared_word_refuses_with_both_times() {
    let word = AtomicU64::new(0);
    let ahead = ManualClock::new(T0 + 10);
    let behind = ManualClock::new(T0);
    over(&word, &ahead).next_id().expect("an ID");
    let refused = Generator::builder(Layout::TWITTER, NODE)
        .clock(behind.clone())
        .policy(ClockPolicy::Refuse)
        .build_on(&word)
        .expect("valid generator")
        .next_id();
    let regression = refused.unwrap_err().regression().unwrap();
    assert_eq!((regression.last_ms, regression.now_ms), (T0 + 10, T0));
    behind.set(T0 + 11);
    let id = over(&word, &behind).next_id().expect("caught up");
    assert_eq!(Layout::TWITTER.timestamp_ms(id), T0 + 11);
}

/// A resume point raises the word when it is ahead of it and never lowers
/// it.
#[test]
fn resume_points_raise_the_word_and_never_lower_it() {
    let word = AtomicU64::new(0);
    let clock = ManualClock::new(T0);
    let build = |resume_ms: i64| {
        Generator::builder(Layout::TWITTER, NODE)
            .clock(clock.clone())
            .resume_after(resume_ms)
            .build_on(&word)
            .expect("valid generator")
    };
    let high = build(T0 + 5);
    let raised = word.load(Ordering::SeqCst);
    assert_eq!(
        raised,
        ((T0 + 6 - Layout::TWITTER.epoch_ms()) as u64) << 12,
        "the word starts at the first pair after the resume point"
    );
    assert!(
        high.next_id_at(T0 + 4)
            .is_err_and(|e| e.kind() == ErrorKind::ClockBehind)
    );
    let low = build(T0 - 1_000);
    assert_eq!(
        word.load(Ordering::SeqCst),
        raised,
        "a lower point is ignored"
    );
    let id = low.next_id_at(T0 + 6).expect("after the resume point");
    assert_eq!(Layout::TWITTER.timestamp_ms(id), T0 + 6);
    // A resume point past the layout's end is refused and leaves the word.
    let past = Generator::builder(Layout::TWITTER, NODE)
        .resume_after(Layout::TWITTER.last_instant_ms())
        .build_on(&word);
    assert!(past.is_err_and(|e| e.to_string().contains("past the last")));
    assert_eq!(word.load(Ordering::SeqCst), raised + 1);
}

/// On the real clock, threads that each build their own generator over one
/// word (as processes sharing memory do) never issue the same ID, and each
/// thread's IDs increase.
#[test]
fn generators_on_threads_over_one_word_never_collide() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 50_000;
    let word = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let word = Arc::clone(&word);
            thread::spawn(move || {
                let generator = Generator::builder(Layout::TWITTER, NODE)
                    .build_on(word)
                    .expect("valid generator");
                (0..PER_THREAD)
                    .map(|_| generator.next_id().expect("an ID"))
                    .collect::<Vec<SnowflakeId>>()
            })
        })
        .collect();
    let mut all = HashSet::new();
    for handle in handles {
        let ids = handle.join().expect("thread");
        assert!(
            ids.windows(2).all(|pair| pair[0] < pair[1]),
            "a thread's IDs went down"
        );
        all.extend(ids);
    }
    assert_eq!(
        all.len(),
        THREADS * PER_THREAD,
        "some IDs were issued twice"
    );
}
