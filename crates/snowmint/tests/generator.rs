//! The generator's rules, driven by a hand clock, and its thread safety on
//! the real clock.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use snowmint::{
    ClockPolicy, Error, ErrorKind, Generator, Layout, ManualClock, Node, OffsetClock, SnowflakeId,
};

const T0: i64 = 1_700_000_000_000;
/// Datacenter 7, machine 13.
const NODE: Node = Node::from_slot(7 * 32 + 13);

/// A Twitter ID's fields, as these tests compare them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parts {
    timestamp_ms: i64,
    datacenter: u64,
    machine: u64,
    sequence: u64,
}

fn generator(clock: &ManualClock, policy: ClockPolicy) -> Generator<ManualClock> {
    Generator::builder(Layout::TWITTER, NODE)
        .clock(clock.clone())
        .policy(policy)
        .build()
        .unwrap()
}

fn decode(id: SnowflakeId) -> Parts {
    let parts = Layout::TWITTER.decode(id).unwrap();
    let field = |name| parts.get(name).unwrap();
    Parts {
        timestamp_ms: parts.time_ms(),
        datacenter: field("datacenter"),
        machine: field("machine"),
        sequence: field("sequence"),
    }
}

/// The last and current timestamps of a regression error.
fn behind(error: Error) -> (i64, i64) {
    let regression = error.regression().expect("a clock regression");
    (regression.last_ms, regression.now_ms)
}

fn is_kind<T>(result: Result<T, Error>, kind: ErrorKind) -> bool {
    result.is_err_and(|error| error.kind() == kind)
}

fn says<T>(result: Result<T, Error>, words: &str) -> bool {
    result.is_err_and(|error| error.to_string().contains(words))
}

/// Moves the clock to `to` after `delay`, from another thread, and says
/// when it did.
fn advance_later(clock: &ManualClock, delay: Duration, to: i64) -> thread::JoinHandle<Instant> {
    let clock = clock.clone();
    thread::spawn(move || {
        thread::sleep(delay);
        let at = Instant::now();
        clock.set(to);
        at
    })
}

#[test]
fn sequence_counts_up_within_a_millisecond_and_restarts_in_the_next() {
    let clock = ManualClock::new(T0);
    let g = generator(&clock, ClockPolicy::Refuse);
    for expected in 0..4096 {
        let p = decode(g.next_id().unwrap());
        assert_eq!(
            p,
            Parts {
                timestamp_ms: T0,
                datacenter: 7,
                machine: 13,
                sequence: expected
            }
        );
    }
    clock.advance(1);
    assert_eq!(decode(g.next_id().unwrap()).sequence, 0);
    assert_eq!(decode(g.next_id().unwrap()).sequence, 1);
    // A jump forward also restarts at 0.
    clock.advance(500);
    let p = decode(g.next_id().unwrap());
    assert_eq!((p.timestamp_ms, p.sequence), (T0 + 501, 0));
}

#[test]
fn exhausted_sequence_waits_for_the_next_millisecond() {
    let clock = ManualClock::new(T0);
    let g = generator(&clock, ClockPolicy::Refuse);
    let mut last = None;
    for _ in 0..4096 {
        last = Some(g.next_id().unwrap());
    }
    let mover = advance_later(&clock, Duration::from_millis(50), T0 + 1);
    let id = g.next_id().unwrap();
    let returned = Instant::now();
    let moved = mover.join().unwrap();
    assert!(returned >= moved, "returned before the clock moved");
    assert!(id > last.unwrap());
    assert_eq!((decode(id).timestamp_ms, decode(id).sequence), (T0 + 1, 0));
    assert_eq!(g.stats().exhaustion_waits, 1);
    assert_eq!(g.stats().clock_regressions, 0);
}

#[test]
fn explicit_time_calls_never_wait() {
    let g = Generator::new(Layout::TWITTER, NODE).unwrap();
    for _ in 0..4096 {
        g.next_id_at(T0).unwrap();
    }
    assert_eq!(
        g.next_id_at(T0).unwrap_err().to_string(),
        format!("sequence exhausted: all 4096 IDs of millisecond {T0} are used")
    );
    assert_eq!(decode(g.next_id_at(T0 + 1).unwrap()).sequence, 0);
}

/// `try_next_id` is `next_id` except that it returns where `next_id` would
/// wait: on exhaustion, and on a regression under `Wait`.
#[test]
fn try_next_id_never_waits() {
    let clock = ManualClock::new(T0);
    let wait = ClockPolicy::Wait {
        max: Duration::from_secs(5),
    };
    let g = generator(&clock, wait);
    let first = g.try_next_id().unwrap();
    assert_eq!(decode(first).timestamp_ms, T0);
    assert_eq!(decode(first).sequence, 0);
    g.next_ids(4095, &mut Vec::new()).unwrap();
    assert_eq!(
        g.try_next_id().unwrap_err().to_string(),
        format!("sequence exhausted: all 4096 IDs of millisecond {T0} are used")
    );
    assert_eq!(g.stats().exhaustion_waits, 0, "it did not wait");
    clock.set(T0 + 1);
    let next = g.try_next_id().unwrap();
    assert_eq!(
        (decode(next).timestamp_ms, decode(next).sequence),
        (T0 + 1, 0)
    );
    // Behind, within the Wait bound: refused at once rather than waited for.
    clock.set(T0 - 3);
    let started = Instant::now();
    assert_eq!(behind(g.try_next_id().unwrap_err()), (T0 + 1, T0 - 3));
    assert!(started.elapsed() < Duration::from_secs(5), "it waited");
    // The waiting call still waits the regression out.
    let mover = advance_later(&clock, Duration::from_millis(50), T0 + 2);
    let after = g.next_id().unwrap();
    mover.join().unwrap();
    assert_eq!(decode(after).timestamp_ms, T0 + 2);
}

#[test]
fn regression_is_refused_with_both_timestamps_and_recovers() {
    let clock = ManualClock::new(T0);
    let g = generator(&clock, ClockPolicy::Refuse);
    let before = g.next_id().unwrap();
    clock.set(T0 - 1000);
    for _ in 0..3 {
        assert_eq!(behind(g.next_id().unwrap_err()), (T0, T0 - 1000));
    }
    let message = g.next_id().unwrap_err().to_string();
    assert!(
        message.contains("1700000000000") && message.contains("1699999999000"),
        "{message}"
    );
    assert!(message.contains("1000 ms behind"), "{message}");
    // Still behind by one millisecond: refused.
    clock.set(T0 - 1);
    assert!(is_kind(g.next_id(), ErrorKind::ClockBehind));
    // Back at the last timestamp: continues its sequence, no reuse.
    clock.set(T0);
    let after = g.next_id().unwrap();
    assert!(after > before);
    assert_eq!(decode(after).sequence, 1);
    let stats = g.stats();
    assert_eq!((stats.clock_regressions, stats.refusals), (5, 5));
}

#[test]
fn wait_policy_waits_out_a_small_regression() {
    let clock = ManualClock::new(T0);
    let g = generator(
        &clock,
        ClockPolicy::Wait {
            max: Duration::from_secs(5),
        },
    );
    let before = g.next_id().unwrap();
    clock.set(T0 - 20);
    let mover = advance_later(&clock, Duration::from_millis(100), T0 + 1);
    let after = g.next_id().unwrap();
    let returned = Instant::now();
    assert!(
        returned >= mover.join().unwrap(),
        "issued while the clock was still behind"
    );
    assert!(after > before);
    assert_eq!(decode(after).timestamp_ms, T0 + 1);
    assert_eq!(g.stats().refusals, 0);
}

#[test]
fn wait_policy_refuses_a_regression_larger_than_its_bound() {
    let clock = ManualClock::new(T0);
    let g = generator(
        &clock,
        ClockPolicy::Wait {
            max: Duration::from_millis(10),
        },
    );
    g.next_id().unwrap();
    clock.set(T0 - 11);
    let started = Instant::now();
    assert_eq!(behind(g.next_id().unwrap_err()), (T0, T0 - 11));
    // Refused at once: the gap is larger than the bound, nothing to wait for.
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn wait_policy_gives_up_when_the_clock_stays_behind() {
    let clock = ManualClock::new(T0);
    let g = generator(
        &clock,
        ClockPolicy::Wait {
            max: Duration::from_millis(30),
        },
    );
    g.next_id().unwrap();
    clock.set(T0 - 5); // within the bound, but the hand clock never moves
    let started = Instant::now();
    assert!(is_kind(g.next_id(), ErrorKind::ClockBehind));
    assert!(
        started.elapsed() >= Duration::from_millis(30),
        "gave up before its bound"
    );
}

#[test]
fn borrow_policy_runs_ahead_of_the_clock_within_its_bound() {
    let clock = ManualClock::new(T0);
    let g = generator(
        &clock,
        ClockPolicy::Borrow {
            max_ahead: Duration::from_millis(2),
        },
    );
    let mut ids = vec![g.next_id().unwrap()];
    clock.set(T0 - 1);
    // Borrows T0 (1 ms ahead), then T0 + 1 (2 ms ahead) once T0 is full.
    for _ in 0..(4095 + 4096) {
        ids.push(g.next_id().unwrap());
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(decode(*ids.last().unwrap()).timestamp_ms, T0 + 1);
    // T0 + 2 would be 3 ms ahead: refused.
    assert_eq!(behind(g.next_id().unwrap_err()), (T0 + 1, T0 - 1));
    // The clock catches up: a fresh millisecond, sequence from 0.
    clock.set(T0 + 5);
    let p = decode(g.next_id().unwrap());
    assert_eq!((p.timestamp_ms, p.sequence), (T0 + 5, 0));
}

#[test]
fn borrow_policy_still_waits_on_plain_exhaustion() {
    let clock = ManualClock::new(T0);
    let g = generator(
        &clock,
        ClockPolicy::Borrow {
            max_ahead: Duration::from_secs(1),
        },
    );
    for _ in 0..4096 {
        g.next_id().unwrap();
    }
    let mover = advance_later(&clock, Duration::from_millis(50), T0 + 1);
    let id = g.next_id().unwrap();
    assert!(Instant::now() >= mover.join().unwrap());
    assert_eq!(decode(id).timestamp_ms, T0 + 1);
}

#[test]
fn resume_never_issues_at_or_below_the_mark() {
    let clock = ManualClock::new(T0);
    let g = Generator::builder(Layout::TWITTER, NODE)
        .clock(clock.clone())
        .resume_after(T0 + 100)
        .build()
        .unwrap();
    assert_eq!(g.last_timestamp_ms(), Some(T0 + 100));
    assert_eq!(behind(g.next_id().unwrap_err()), (T0 + 100, T0));
    clock.set(T0 + 100);
    assert!(is_kind(
        g.next_id_at(T0 + 100),
        ErrorKind::SequenceExhausted
    ));
    clock.set(T0 + 101);
    let p = decode(g.next_id().unwrap());
    assert_eq!((p.timestamp_ms, p.sequence), (T0 + 101, 0));
}

#[test]
fn resume_from_a_mark_before_the_epoch_is_a_fresh_start() {
    let clock = ManualClock::new(T0);
    let g = Generator::builder(Layout::TWITTER, NODE)
        .clock(clock)
        .resume_after(5)
        .build()
        .unwrap();
    assert_eq!(g.last_timestamp_ms(), None);
    assert_eq!(decode(g.next_id().unwrap()).timestamp_ms, T0);
}

#[test]
fn never_past_the_last_instant() {
    let last = Layout::TWITTER.last_instant_ms();
    let clock = ManualClock::new(last);
    let g = generator(
        &clock,
        ClockPolicy::Borrow {
            max_ahead: Duration::from_secs(10),
        },
    );
    let mut ids = Vec::new();
    g.next_ids(4096, &mut ids).unwrap();
    let p = decode(*ids.last().unwrap());
    assert_eq!((p.timestamp_ms, p.sequence), (last, 4095));
    // The millisecond is full and there is no next one; borrowing cannot help.
    clock.set(last + 1);
    assert!(says(g.next_id(), "past the last"));
    clock.set(last - 1);
    assert!(says(g.next_id(), "past the last"));
    // Resuming at the last instant is refused up front.
    assert!(says(
        Generator::builder(Layout::TWITTER, NODE)
            .resume_after(last)
            .build(),
        "past the last"
    ));
}

#[test]
fn clock_before_the_epoch_is_an_error_not_a_regression() {
    let clock = ManualClock::new(Layout::TWITTER.epoch_ms() - 1);
    let g = generator(&clock, ClockPolicy::Refuse);
    assert!(says(g.next_id(), "before the epoch"));
    assert_eq!(g.stats().clock_regressions, 0);
}

#[test]
fn node_out_of_range_is_rejected_at_build() {
    for node in [Node::from_slot(1024), Node::from_slot(u64::MAX)] {
        assert!(is_kind(
            Generator::new(Layout::TWITTER, node),
            ErrorKind::OutOfRange
        ));
    }
}

#[test]
fn batches_fill_whole_milliseconds_and_continue() {
    let clock = ManualClock::new(T0);
    let g = generator(&clock, ClockPolicy::Refuse);
    g.next_id().unwrap();
    let run = g.next_run(100_000).unwrap();
    assert_eq!(run.len(), 4095);
    let run: Vec<_> = run.collect();
    assert_eq!(decode(run[0]).sequence, 1);
    assert_eq!(decode(run[4094]).sequence, 4095);

    // 10,000 IDs need three milliseconds; the clock moves in another thread.
    let mover = {
        let clock = clock.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                thread::sleep(Duration::from_millis(5));
                clock.advance(1);
            }
        });
        (stop, handle)
    };
    let mut ids = Vec::new();
    g.next_ids(10_000, &mut ids).unwrap();
    mover.0.store(true, Ordering::Relaxed);
    mover.1.join().unwrap();
    assert_eq!(ids.len(), 10_000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(ids[0] > run[4094]);
    for window in ids.windows(2) {
        let (a, b) = (decode(window[0]), decode(window[1]));
        if a.timestamp_ms == b.timestamp_ms {
            assert_eq!(b.sequence, a.sequence + 1, "no gap within a millisecond");
        } else {
            assert_eq!(
                (a.sequence, b.sequence),
                (4095, 0),
                "a millisecond is used up before the next"
            );
        }
    }
}

#[test]
fn failed_batch_leaves_the_output_as_it_was() {
    let clock = ManualClock::new(T0);
    let g = generator(&clock, ClockPolicy::Refuse);
    g.next_id().unwrap();
    clock.set(T0 - 10);
    let mut ids = vec![SnowflakeId::MIN];
    assert!(g.next_ids(10, &mut ids).is_err());
    assert_eq!(ids, vec![SnowflakeId::MIN]);
}

#[test]
fn offset_clock_shifts_the_timestamps() {
    let clock = OffsetClock::new(ManualClock::new(T0), -60_000);
    let g = Generator::builder(Layout::TWITTER, NODE)
        .clock(clock)
        .build()
        .unwrap();
    assert_eq!(decode(g.next_id().unwrap()).timestamp_ms, T0 - 60_000);
}

/// Several threads share one generator on the real clock: no ID is issued
/// twice and each thread sees its own IDs strictly increase.
#[test]
fn threads_sharing_a_generator_on_the_real_clock_never_collide() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 1_000_000;
    let g = Arc::new(Generator::new(Layout::TWITTER, NODE).unwrap());
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let g = Arc::clone(&g);
            thread::spawn(move || {
                let mut ids = Vec::with_capacity(PER_THREAD);
                for _ in 0..PER_THREAD {
                    ids.push(g.next_id().unwrap());
                }
                ids
            })
        })
        .collect();
    let mut all = HashSet::with_capacity(THREADS * PER_THREAD);
    for handle in handles {
        let ids = handle.join().unwrap();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "a thread's IDs went down"
        );
        for id in ids {
            assert!(all.insert(id), "{id:?} issued twice");
            assert_eq!(Layout::TWITTER.node_of(id), NODE);
        }
    }
    assert_eq!(all.len(), THREADS * PER_THREAD);
}

/// Batches and single calls from several threads interleave without overlap.
#[test]
fn batch_and_single_calls_mixed_across_threads_never_collide() {
    let g = Arc::new(Generator::new(Layout::TWITTER, NODE).unwrap());
    let handles: Vec<_> = (0..3)
        .map(|t| {
            let g = Arc::clone(&g);
            thread::spawn(move || {
                let mut ids = Vec::new();
                for _ in 0..200 {
                    if t == 0 {
                        ids.push(g.next_id().unwrap());
                    } else {
                        g.next_ids(1000 * t, &mut ids).unwrap();
                    }
                }
                ids
            })
        })
        .collect();
    let mut all = HashSet::new();
    for handle in handles {
        let ids = handle.join().unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        for id in ids {
            assert!(all.insert(id), "{id:?} issued twice");
        }
    }
    assert_eq!(all.len(), 200 + 200 * 1000 + 200 * 2000);
}
