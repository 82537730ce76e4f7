//! Everything off the hot path: reading the clock with its errors, waiting
//! out a used-up tick or a regression, and refusing.

use std::hint;
use std::ops::Deref;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

#[cfg(loom)]
use loom::sync::atomic::AtomicU64;
#[cfg(not(loom))]
use std::sync::atomic::AtomicU64;

use super::ticks::{At, Reading};
use super::{ClockPolicy, Generator, Plan};
use crate::clock::Clock;
use crate::error::{Error, Repr};

/// How long a short wait spins before it starts to sleep: longer than the
/// wait for the next millisecond on a clock that moves by itself, which so
/// never sleeps...
const SPIN_LIMIT: Duration = Duration::from_millis(2);

/// ... and the sleeps after that, for clocks that move only when told to
/// (or a clock stuck behind a `Wait` policy's target).
const WAIT_STEP: Duration = Duration::from_micros(50);

impl<C: Clock, W: Deref<Target = AtomicU64>> Generator<C, W> {
    /// The clock at `at`, read once, in both units.
    pub(super) fn reading(&self, at: At) -> Reading {
        match at {
            At::Clock if self.ticks.in_millis() => Reading::of_ms(self.clock.now_ms()),
            At::Clock => Reading::of_us(self.clock.now_us()),
            At::Ms(ms) => Reading::of_ms(ms),
            At::Us(us) => Reading::of_us(us),
        }
    }

    /// The clock's tick at `at`, with the reading it came from, or the
    /// error for a reading outside the layout.
    pub(super) fn ticks_checked(&self, at: At) -> Result<(u64, Reading), Error> {
        let reading = self.reading(at);
        let ticks = if self.ticks.in_millis() {
            self.layout.timestamp_offset(reading.ms)?
        } else {
            self.layout.ticks_at_us(reading.us)?
        };
        Ok((ticks, reading))
    }

    /// Everything but taking IDs: waits out exhaustion or a regression when
    /// allowed (then returns the state word to retry with), or returns the
    /// error to give the caller.
    #[cold]
    #[inline(never)]
    pub(super) fn slow_path(
        &self,
        plan: Plan,
        next: u64,
        now: u64,
        reading: Reading,
        wait: bool,
        waited_since: &mut Option<Instant>,
    ) -> Result<u64, Error> {
        let sequence_bits = self.sequence_bits;
        match plan {
            // Not sent here; retrying with a fresh word would be harmless.
            Plan::Take { .. } => {}
            Plan::Exhausted { until } => {
                if !wait {
                    return Err(Repr::SequenceExhausted {
                        timestamp_ms: self.layout.tick_start_ms(now),
                        ids_per_tick: self.layout.ids_per_tick(),
                        unit: self.layout.unit(),
                    }
                    .into());
                }
                self.exhaustion_waits.fetch_add(1, Ordering::Relaxed);
                // Ends when the clock arrives, or goes back: the next plan
                // then sees it behind.
                let _ = self.wait_for(until, None);
            }
            Plan::Behind { until } => {
                self.clock_regressions.fetch_add(1, Ordering::Relaxed);
                let behind = self
                    .layout
                    .unit()
                    .as_duration()
                    .saturating_mul(u32::try_from(until - now).unwrap_or(u32::MAX));
                let deadline = match (self.policy, wait) {
                    (ClockPolicy::Wait { max }, true) if behind <= max => {
                        let since = *waited_since.get_or_insert_with(Instant::now);
                        Some(since + max)
                    }
                    _ => None,
                };
                let waited = match deadline {
                    Some(deadline) => self.wait_for(until, Some(deadline)),
                    None => Err(reading),
                };
                let last_tick = (next - 1) >> sequence_bits;
                // A wait that ran out with the clock back at the last tick
                // used is no longer behind, only out of IDs for that tick:
                // the next plan waits that out.
                if let Err(reading) = waited
                    && self.tick_of(reading) < Some(last_tick)
                {
                    self.refusals.fetch_add(1, Ordering::Relaxed);
                    return Err(Repr::ClockBehind {
                        last_ms: self.layout.tick_start_ms(last_tick),
                        now_ms: reading.ms,
                    }
                    .into());
                }
            }
            Plan::PastEnd => {
                return Err(self
                    .layout
                    .past_end(self.layout.tick_start_ms(next >> sequence_bits)));
            }
        }
        Ok(self.next.load(Ordering::Acquire))
    }

    /// The tick of a reading, `None` before the epoch (past the layout's end
    /// is a tick too large for any word).
    fn tick_of(&self, reading: Reading) -> Option<u64> {
        let since = reading.us.checked_sub(self.layout.epoch_us())?;
        u64::try_from(since)
            .ok()
            .map(|since| since / u64::from(self.layout.unit().as_micros()))
    }

    /// Waits until the clock reaches tick `until`; if `deadline` passes
    /// first, or (without a deadline) the clock goes back, returns the last
    /// reading instead.
    ///
    /// A gap of more than a couple of milliseconds is slept off in one go.
    /// The last millisecond or two are spun, reading the clock, so that the
    /// first IDs of the new tick come right at its start: a thread that
    /// sleeps or yields there can wake a whole millisecond late and lose
    /// that millisecond's IDs (BENCHMARKS.md compares the two). A clock
    /// that has not moved after [`SPIN_LIMIT`] of spinning is a hand-driven
    /// one: it is then polled in short sleeps.
    pub(super) fn wait_for(&self, until: u64, deadline: Option<Instant>) -> Result<(), Reading> {
        let target_us = self.layout.tick_start_us(until);
        let mut spinning_since: Option<Instant> = None;
        loop {
            let reading = self.reading(At::Clock);
            let gap_us = target_us.saturating_sub(reading.us);
            if gap_us <= 0 {
                return Ok(());
            }
            // Exhaustion (no deadline) waits for the next tick only: a
            // larger gap means the clock went back meanwhile, which is the
            // caller's policy to decide (refuse, wait within its bound,
            // borrow), not a gap to sleep off, however long.
            let unit_us = i64::from(self.layout.unit().as_micros());
            if deadline.is_none() && gap_us > unit_us {
                return Err(reading);
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|left| left.is_zero()) {
                return Err(reading);
            }
            if gap_us > 2_000 {
                let nap = Duration::from_micros(gap_us as u64 - 1_000);
                thread::sleep(left.map_or(nap, |left| left.min(nap)));
            } else if spinning_since.get_or_insert_with(Instant::now).elapsed() < SPIN_LIMIT {
                hint::spin_loop();
            } else {
                thread::sleep(WAIT_STEP);
            }
        }
    }
}
