//! Sustained throughput with the real clock.
//!
//! Every thread calls the generator in a tight loop for a fixed wall-clock
//! time and keeps every ID in a buffer that was allocated and touched
//! beforehand, so the loop itself never allocates or page-faults. Checks run
//! after the clock stops: duplicates across all threads, strict order within
//! each thread.
//!
//! The rate is counted from the IDs' own timestamps, over the units (the
//! milliseconds, for most layouts) strictly between the first and the last
//! one seen. Those two are partial — the run started and stopped somewhere
//! inside them — and counting them would pull the ratio below 1 by about
//! one unit's worth per run, which is exactly the size of effect the 99.9%
//! target is about.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::contenders::Spec;

/// Per-thread ID buffers, allocated and touched once and reused by every run.
#[derive(Debug)]
pub struct Buffers {
    per_thread: Vec<Vec<u64>>,
    merged: Vec<u64>,
}

impl Buffers {
    /// Room for `capacity` IDs in each of `threads` buffers.
    pub fn new(threads: usize, capacity: usize) -> Buffers {
        let touched = |capacity: usize| {
            // Writing every element (not `vec![0; n]`, which maps zeroed
            // pages lazily) faults the pages in now rather than mid-run.
            let mut buffer = Vec::with_capacity(capacity);
            buffer.resize(capacity, u64::MAX);
            buffer.clear();
            buffer
        };
        Buffers {
            per_thread: (0..threads).map(|_| touched(capacity)).collect(),
            merged: touched(capacity * threads),
        }
    }
}

/// What one sustained run measured.
#[derive(Debug, Clone, Default)]
pub struct Sustained {
    /// Threads sharing the generator.
    pub threads: usize,
    /// Wall-clock length of the run.
    pub wall: Duration,
    /// Every ID made during the run.
    pub total_ids: u64,
    /// Whole timestamp units between the first and the last one seen.
    pub full_units: u64,
    /// IDs whose timestamp lies in those whole units.
    pub ids_in_full_units: u64,
    /// IDs that occurred more than once (each extra copy counts).
    pub duplicates: u64,
    /// Whole units with fewer IDs than the layout allows.
    pub short_units: u64,
    /// Whole units with no ID at all.
    pub empty_units: u64,
    /// Places where a thread got an ID not greater than its previous one.
    pub order_violations: u64,
    /// IDs whose timestamp lies outside the wall clock's reading at the
    /// start and at the end of the run, widened by one unit either way:
    /// timestamps that lag the clock or run ahead of it.
    pub off_clock: u64,
    /// Set when a thread filled its buffer or the generator panicked.
    pub failure: Option<String>,
}

impl Sustained {
    /// IDs per second over the whole units.
    pub fn ids_per_second(&self, spec: &Spec) -> f64 {
        if self.full_units == 0 {
            return 0.0;
        }
        self.ids_in_full_units as f64 / (self.full_units * spec.unit_ms) as f64 * 1000.0
    }

    /// IDs per second as a fraction of the layout's own ceiling.
    pub fn ratio(&self, spec: &Spec) -> f64 {
        if self.full_units == 0 {
            return 0.0;
        }
        self.ids_in_full_units as f64 / (self.full_units * spec.ids_per_unit) as f64
    }
}

/// Runs one closure per thread for `duration`, then checks what they made.
///
/// Each closure is that thread's way of asking the (shared) generator for
/// an ID. `timestamp_now` reads the wall clock in the contender's timestamp
/// units, for the lag check.
pub fn run<F>(
    spec: &Spec,
    nexts: Vec<F>,
    duration: Duration,
    buffers: &mut Buffers,
    timestamp_now: impl Fn() -> u64,
) -> Sustained
where
    F: FnMut() -> u64 + Send,
{
    let threads = nexts.len();
    assert!(threads <= buffers.per_thread.len(), "not enough buffers");
    let stop = AtomicBool::new(false);
    let start = Barrier::new(threads + 1);
    let mut failure = None;
    let mut wall = Duration::ZERO;
    let mut start_timestamp = 0;
    thread::scope(|scope| {
        let workers: Vec<_> = nexts
            .into_iter()
            .zip(buffers.per_thread.iter_mut())
            .map(|(mut next, buffer)| {
                buffer.clear();
                let (stop, start) = (&stop, &start);
                scope.spawn(move || {
                    start.wait();
                    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                        // Relaxed: the flag orders nothing, it only stops.
                        while !stop.load(Ordering::Relaxed) {
                            if buffer.len() == buffer.capacity() {
                                return Err("buffer full".to_owned());
                            }
                            buffer.push(next());
                        }
                        Ok(())
                    }));
                    match outcome {
                        Ok(result) => result,
                        Err(payload) => Err(panic_message(&*payload)),
                    }
                })
            })
            .collect();
        start_timestamp = timestamp_now();
        start.wait();
        let began = Instant::now();
        thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        for worker in workers {
            if let Err(message) = worker.join().expect("worker panics are caught") {
                failure.get_or_insert(message);
            }
        }
        wall = began.elapsed();
    });
    let end_timestamp = timestamp_now();
    let mut result = check(
        spec,
        &mut buffers.per_thread[..threads],
        &mut buffers.merged,
    );
    let on_clock = start_timestamp.saturating_sub(1)..=end_timestamp + 1;
    result.off_clock = buffers.per_thread[..threads]
        .iter()
        .flatten()
        .filter(|&&id| !on_clock.contains(&spec.timestamp_of(id)))
        .count() as u64;
    result.threads = threads;
    result.wall = wall;
    result.failure = failure;
    result
}

/// Duplicates, order and the per-unit count, over every thread's IDs.
fn check(spec: &Spec, per_thread: &mut [Vec<u64>], merged: &mut Vec<u64>) -> Sustained {
    let order_violations = per_thread
        .iter()
        .map(|ids| ids.windows(2).filter(|pair| pair[1] <= pair[0]).count() as u64)
        .sum();
    merged.clear();
    for ids in per_thread.iter() {
        merged.extend_from_slice(ids);
    }
    merged.sort_unstable();
    let duplicates = merged.windows(2).filter(|pair| pair[0] == pair[1]).count() as u64;
    let (Some(&lowest), Some(&highest)) = (merged.first(), merged.last()) else {
        return Sustained::default();
    };
    let (first, last) = (spec.timestamp_of(lowest), spec.timestamp_of(highest));
    // `merged` is sorted, so each unit's IDs are one stretch of it.
    let mut ids_in_full_units = 0;
    let mut short_units = 0;
    let mut seen_units = 0;
    for unit in merged
        .chunk_by(|a, b| spec.timestamp_of(*a) == spec.timestamp_of(*b))
        .filter(|ids| (first + 1..last).contains(&spec.timestamp_of(ids[0])))
    {
        seen_units += 1;
        ids_in_full_units += unit.len() as u64;
        if (unit.len() as u64) < spec.ids_per_unit {
            short_units += 1;
        }
    }
    let full_units = last.saturating_sub(first + 1);
    Sustained {
        short_units: short_units + full_units - seen_units,
        empty_units: full_units - seen_units,
        total_ids: merged.len() as u64,
        full_units,
        ids_in_full_units,
        duplicates,
        order_violations,
        ..Sustained::default()
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic".to_owned());
    format!("panicked: {text}")
}

/// Threads that keep cores busy while they live, to measure how the
/// generators fare on a loaded machine (`--busy N`). They run at normal
/// priority and never sleep, like a compiler or a request handler.
#[derive(Debug)]
pub struct Busy {
    stop: std::sync::Arc<AtomicBool>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Busy {
    /// Starts `count` busy threads.
    pub fn start(count: usize) -> Busy {
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let threads = (0..count)
            .map(|_| {
                let stop = std::sync::Arc::clone(&stop);
                thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                })
            })
            .collect();
        Busy { stop, threads }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}
