//! Clock chaos: a clock that jumps back and forth at random points drives
//! the generator over millions of IDs, under each clock policy. Whatever the
//! clock does, IDs stay strictly increasing; `refuse` and `wait` only issue
//! at the time the clock reads, and `borrow` never runs further ahead than
//! its bound.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::Config;
use snowmint::{Clock, ClockPolicy, ErrorKind, Generator, Layout};

const T0: i64 = 1_700_000_000_000;

/// The system clock plus an error that jumps at random points: with a small
/// chance per read, the error is redrawn from `-max_step_ms..=max_step_ms/2`,
/// so the clock steps back or ahead and later returns. The randomness is
/// seeded; the underlying time is real, so that the `wait` policy's real
/// waits see it move. It remembers what it last said.
struct ChaosClock {
    start: Instant,
    state: Mutex<ChaosState>,
}

struct ChaosState {
    /// xorshift64 state: a small seeded generator is all the chaos needs.
    rng: u64,
    offset_ms: i64,
    /// Chance per read of a step (out of 1,000,000).
    step_chance: u32,
    max_step_ms: i64,
    last_read: i64,
}

impl ChaosClock {
    fn new(seed: u64, step_chance: u32, max_step_ms: i64) -> ChaosClock {
        ChaosClock {
            start: Instant::now(),
            state: Mutex::new(ChaosState {
                rng: seed | 1,
                offset_ms: 0,
                step_chance,
                max_step_ms,
                last_read: T0,
            }),
        }
    }

    fn last_read(&self) -> i64 {
        self.state.lock().unwrap().last_read
    }
}

impl ChaosState {
    fn random(&mut self, below: u64) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % below
    }
}

impl Clock for ChaosClock {
    fn now_ms(&self) -> i64 {
        let mut s = self.state.lock().unwrap();
        if s.random(1_000_000) < u64::from(s.step_chance) {
            let max = s.max_step_ms;
            s.offset_ms = s.random((max + max / 2 + 1) as u64) as i64 - max;
        }
        s.last_read = T0 + self.start.elapsed().as_millis() as i64 + s.offset_ms;
        s.last_read
    }
}

fn policies() -> impl Strategy<Value = ClockPolicy> {
    prop_oneof![
        Just(ClockPolicy::Refuse),
        (1u64..50).prop_map(|ms| ClockPolicy::Wait {
            max: Duration::from_millis(ms)
        }),
        (1u64..50).prop_map(|ms| ClockPolicy::Borrow {
            max_ahead: Duration::from_millis(ms)
        }),
    ]
}

/// IDs per case; with 24 cases that is about five million IDs.
const IDS_PER_CASE: usize = 200_000;

proptest! {
    #![proptest_config(Config { cases: 24, ..Config::default() })]

    #[test]
    fn ids_stay_increasing_whatever_the_clock_does(
        seed in any::<u64>(),
        policy in policies(),
        sequence_bits in 10u8..=12,
        step_chance in 1u32..200,
        max_step_ms in 1i64..100,
        batch in any::<bool>(),
    ) {
        let clock = ChaosClock::new(seed, step_chance, max_step_ms);
        let layout = Layout::twitter_shape(T0 - 1000, [63 - 10 - sequence_bits, 5, 5, sequence_bits]).unwrap();
        let generator = Generator::builder(layout, layout.node(&[3, 4]).unwrap())
            .clock(&clock)
            .policy(policy)
            .build()
            .unwrap();
        let mut last = None;
        let mut issued = 0usize;
        let mut refused = 0usize;
        let mut batch_ids = Vec::new();
        while issued < IDS_PER_CASE {
            let result = if batch {
                batch_ids.clear();
                generator.next_ids(37, &mut batch_ids).map(|()| batch_ids.as_slice())
            } else {
                generator.next_id().map(|id| {
                    batch_ids.clear();
                    batch_ids.push(id);
                    batch_ids.as_slice()
                })
            };
            match result {
                Ok(ids) => {
                    let now = clock.last_read();
                    for &id in ids {
                        prop_assert!(last < Some(id), "{:?} after {:?}", id, last);
                        last = Some(id);
                    }
                    // The last ID was made with the last clock reading.
                    let ts = layout.timestamp_ms(*ids.last().unwrap());
                    match policy {
                        ClockPolicy::Borrow { max_ahead } => {
                            prop_assert!(ts >= now, "issued at {} before the clock {}", ts, now);
                            prop_assert!(ts - now <= max_ahead.as_millis() as i64, "{} ahead of {}", ts, now);
                        }
                        _ => prop_assert_eq!(ts, now, "issued while the clock was elsewhere"),
                    }
                    issued += ids.len();
                }
                Err(error) if error.kind() == ErrorKind::ClockBehind => {
                    let regression = error.regression().unwrap();
                    prop_assert!(regression.last_ms > regression.now_ms);
                    prop_assert_eq!(regression.now_ms, clock.last_read());
                    refused += 1;
                }
                Err(other) => prop_assert!(false, "unexpected error: {}", other),
            }
        }
        let stats = generator.stats();
        prop_assert_eq!(stats.refusals as usize, refused);
        if refused > 0 {
            prop_assert!(stats.clock_regressions > 0);
        }
    }
}
