//! The cost of one call inside a burst, right after the clock ticks.
//!
//! A sample waits until the system clock enters a new unit (a new
//! millisecond for most layouts), then times `len` consecutive calls, where
//! `len` is what the layout allows per unit (4096): the generator never has
//! to wait inside a sample, so the sample is the cost of the calls alone.
//! Samples of all subjects are interleaved round by round, so that a change
//! of load on the machine hits every subject alike, and each subject is
//! summarised by its median.

use std::hint::{self, black_box};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime};

use crate::contenders::unix_ms;

/// Waits, spinning, until the system clock enters a new unit of `unit_ms`.
pub fn wait_for_tick(unit_ms: u64) {
    let current = unix_ms() / unit_ms;
    while unix_ms() / unit_ms == current {
        hint::spin_loop();
    }
}

/// Times `len` calls of `next` right after a tick; returns ns per call.
///
/// The IDs go into `out` (cleared first, its capacity reused), as they would
/// in a caller that keeps them; they must be strictly increasing.
pub fn time_calls(
    next: &mut impl FnMut() -> u64,
    unit_ms: u64,
    len: usize,
    out: &mut Vec<u64>,
) -> f64 {
    out.clear();
    out.reserve(len);
    wait_for_tick(unit_ms);
    let began = Instant::now();
    for _ in 0..len {
        out.push(next());
    }
    let elapsed = began.elapsed();
    black_box(&*out);
    assert!(
        out.windows(2).all(|pair| pair[0] < pair[1]),
        "IDs of a burst must increase"
    );
    elapsed.as_nanos() as f64 / len as f64
}

/// Times one read of the system clock the same way as [`time_calls`].
pub fn time_clock_reads(len: usize, out: &mut Vec<u64>) -> f64 {
    let mut count = 0;
    // The counter keeps the burst's order check meaningful; the clock
    // reading itself goes through `black_box` so that it is not removed.
    time_calls(
        &mut || {
            black_box(SystemTime::now());
            count += 1;
            count
        },
        1,
        len,
        out,
    )
}

/// Times one read of the system clock followed by one uncontended atomic
/// read-modify-write (`fetch_add` on an `AtomicU64`), the same way as
/// [`time_calls`]: the least a generator that reads the clock on every call
/// and shares one atomic word between threads can cost.
pub fn time_floor(len: usize, out: &mut Vec<u64>) -> f64 {
    let counter = AtomicU64::new(0);
    time_calls(
        &mut || {
            black_box(SystemTime::now());
            // AcqRel, as a generator's exchange would use; the value keeps
            // the burst's order check meaningful.
            counter.fetch_add(1, Ordering::AcqRel) + 1
        },
        1,
        len,
        out,
    )
}

/// Times one read of the system clock turned into Unix milliseconds the
/// usual way (`duration_since(UNIX_EPOCH)`, then `as_millis`), as a
/// generator needs it.
pub fn time_clock_ms_reads(len: usize, out: &mut Vec<u64>) -> f64 {
    let mut count = 0;
    time_calls(
        &mut || {
            black_box(crate::contenders::unix_ms());
            count += 1;
            count
        },
        1,
        len,
        out,
    )
}

/// Times one call that appends `len` IDs to `out`, right after a tick;
/// returns ns per ID.
pub fn time_batch<T>(
    fill: &mut impl FnMut(usize, &mut Vec<T>),
    len: usize,
    out: &mut Vec<T>,
) -> f64 {
    out.clear();
    out.reserve(len);
    wait_for_tick(1);
    let began = Instant::now();
    fill(len, out);
    let elapsed = began.elapsed();
    black_box(&*out);
    assert_eq!(out.len(), len, "a batch call makes all the IDs asked for");
    elapsed.as_nanos() as f64 / len as f64
}

/// One thing measured in samples.
pub struct Subject<'a> {
    /// How the report names it.
    pub label: String,
    sample: Box<dyn FnMut() -> f64 + 'a>,
}

impl<'a> Subject<'a> {
    /// A subject whose `sample` takes one sample, in ns per call.
    pub fn new(label: impl Into<String>, sample: impl FnMut() -> f64 + 'a) -> Subject<'a> {
        Subject {
            label: label.into(),
            sample: Box::new(sample),
        }
    }
}

/// The median and spread of one subject's samples, in ns.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    /// The middle sample.
    pub median: f64,
    /// The 10th percentile.
    pub p10: f64,
    /// The 90th percentile.
    pub p90: f64,
}

/// Takes `rounds * per_round` samples of every subject, interleaved round by
/// round, and summarises each subject's samples.
pub fn measure(subjects: &mut [Subject<'_>], rounds: usize, per_round: usize) -> Vec<Summary> {
    sample(subjects, rounds, per_round)
        .iter_mut()
        .map(|samples| summarise(samples))
        .collect()
}

/// Takes `rounds * per_round` samples of every subject, interleaved round by
/// round; returns every subject's samples, in ns per call.
pub fn sample(subjects: &mut [Subject<'_>], rounds: usize, per_round: usize) -> Vec<Vec<f64>> {
    let mut samples = vec![Vec::with_capacity(rounds * per_round); subjects.len()];
    for _ in 0..rounds {
        for (subject, samples) in subjects.iter_mut().zip(&mut samples) {
            for _ in 0..per_round {
                samples.push((subject.sample)());
            }
        }
    }
    samples
}

/// The median and spread of `samples` (sorted in place; at least one).
pub fn summarise(samples: &mut [f64]) -> Summary {
    assert!(!samples.is_empty(), "a summary needs at least one sample");
    samples.sort_by(f64::total_cmp);
    let at = |fraction: f64| samples[((samples.len() - 1) as f64 * fraction) as usize];
    Summary {
        median: at(0.5),
        p10: at(0.1),
        p90: at(0.9),
    }
}
