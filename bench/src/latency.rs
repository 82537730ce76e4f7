//! A fixed-rate load generator that counts a stall in full (issue 36,
//! item 3).
//!
//! Each connection has its own timeline: request `i` is due at
//! `phase + i * interval`, fixed before the run starts, whatever the
//! server does. The connection sends a request when it is due (or at once
//! if it is late, because the one before it came back late), waits for the
//! whole answer, and records the time from when the request was *due* to
//! when its answer was complete. A server that stalls for 100 ms therefore
//! shows the stall in every request that was due during it, not just in
//! the one that was in flight: a client that measured from its actual send
//! would wait out the stall, send the next request late, and record it as
//! fast (coordinated omission, in Gil Tene's words). The spread between
//! when a request was due and when it was sent is kept apart, so a client
//! that cannot keep up is seen as such.
//!
//! The loop is written against a [`Timeline`] so that its arithmetic can be
//! checked against a hand-made clock; [`RealTimeline`] runs it on the
//! monotonic clock, sleeping with the operating system's timer (whose slack,
//! tens of microseconds, counts in the latencies as any client's would).

use std::io;
use std::thread;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// Where a connection's requests fall: request `i` is due at
/// `phase + i * interval` from the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// When the connection's first request is due.
    pub phase: Duration,
    /// The time between two requests of the connection.
    pub interval: Duration,
}

impl Schedule {
    /// Connection `index` of `connections` sharing `rate` requests per
    /// second: each connection sends `rate / connections` a second, their
    /// timelines staggered evenly so that the node sees one request every
    /// `1 / rate` seconds.
    ///
    /// # Panics
    ///
    /// If `rate` or `connections` is zero, or `index` is not below
    /// `connections`.
    pub fn spread(rate: u64, connections: u64, index: u64) -> Schedule {
        assert!(rate > 0 && connections > 0 && index < connections);
        let gap_ns = 1_000_000_000f64 / rate as f64;
        Schedule {
            phase: Duration::from_nanos((gap_ns * index as f64).round() as u64),
            interval: Duration::from_nanos((gap_ns * connections as f64).round() as u64),
        }
    }

    /// When request `i` is due, from the start of the run.
    pub fn due(&self, i: u64) -> Duration {
        self.phase + self.interval * u32::try_from(i).expect("fewer than 2^32 requests")
    }
}

/// A clock the load loop reads and sleeps on.
pub trait Timeline {
    /// The time since the start of the run.
    fn now(&mut self) -> Duration;
    /// Returns once `now()` is at least `until`.
    fn sleep_until(&mut self, until: Duration);
}

/// The monotonic clock, from a start instant.
#[derive(Debug, Clone, Copy)]
pub struct RealTimeline {
    /// The start of the run.
    pub start: Instant,
}

impl Timeline for RealTimeline {
    fn now(&mut self) -> Duration {
        self.start.elapsed()
    }

    fn sleep_until(&mut self, until: Duration) {
        loop {
            let now = self.now();
            if now >= until {
                return;
            }
            thread::sleep(until - now);
        }
    }
}

/// What one connection measured.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Nanoseconds from when each recorded request was due to when its
    /// answer was complete.
    pub latency: Histogram<u64>,
    /// The largest time a recorded request was sent after it was due.
    pub max_send_lag: Duration,
    /// When the last answer was complete, from the start of the run.
    pub finished: Duration,
}

impl Recorded {
    /// An empty record: latencies from 1 ns to 100 s, 3 significant
    /// digits.
    pub fn new() -> Recorded {
        Recorded {
            latency: Histogram::new_with_bounds(1, 100_000_000_000, 3)
                .expect("valid histogram bounds"),
            max_send_lag: Duration::ZERO,
            finished: Duration::ZERO,
        }
    }

    /// Adds another connection's record.
    pub fn merge(&mut self, other: &Recorded) {
        self.latency
            .add(&other.latency)
            .expect("histograms of the same bounds");
        self.max_send_lag = self.max_send_lag.max(other.max_send_lag);
        self.finished = self.finished.max(other.finished);
    }
}

impl Default for Recorded {
    fn default() -> Self {
        Recorded::new()
    }
}

/// Runs `warmup + count` requests of one connection on `schedule`,
/// recording the last `count` of them (from when each was due) into
/// `record`. `request` sends one request and reads its whole answer; it is
/// given the timeline (a hand-made one moves its clock in it).
///
/// # Errors
///
/// The first error of `request`.
pub fn run<T: Timeline>(
    timeline: &mut T,
    schedule: Schedule,
    warmup: u64,
    count: u64,
    record: &mut Recorded,
    mut request: impl FnMut(&mut T) -> io::Result<()>,
) -> io::Result<()> {
    for i in 0..warmup + count {
        let due = schedule.due(i);
        if timeline.now() < due {
            timeline.sleep_until(due);
        }
        let sent = timeline.now();
        request(timeline)?;
        let done = timeline.now();
        if i >= warmup {
            let nanos = u64::try_from((done - due).as_nanos()).unwrap_or(u64::MAX);
            record.latency.saturating_record(nanos.max(1));
            record.max_send_lag = record.max_send_lag.max(sent - due);
            record.finished = done;
        }
    }
    Ok(())
}

/// The quantiles reported, in microseconds: p50, p99, p99.9 and max.
pub fn quantiles_us(latency: &Histogram<u64>) -> [f64; 4] {
    let us = |nanos: u64| nanos as f64 / 1000.0;
    [
        us(latency.value_at_quantile(0.5)),
        us(latency.value_at_quantile(0.99)),
        us(latency.value_at_quantile(0.999)),
        us(latency.max()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clock that moves only when told: sleeping jumps to the wake-up
    /// time, a request takes the service time the test gives it.
    struct HandClock {
        now: Duration,
        sleeps: Vec<Duration>,
    }

    impl Timeline for HandClock {
        fn now(&mut self) -> Duration {
            self.now
        }

        fn sleep_until(&mut self, until: Duration) {
            self.sleeps.push(until);
            self.now = self.now.max(until);
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn connections_share_the_rate_on_staggered_timelines() {
        // 10,000 requests a second over 4 connections: each sends one every
        // 400 µs, the node sees one every 100 µs.
        let schedules: Vec<_> = (0..4).map(|c| Schedule::spread(10_000, 4, c)).collect();
        for (c, schedule) in schedules.iter().enumerate() {
            assert_eq!(schedule.interval, Duration::from_micros(400));
            assert_eq!(schedule.phase, Duration::from_micros(100 * c as u64));
        }
        let mut all: Vec<_> = schedules
            .iter()
            .flat_map(|s| (0..5).map(|i| s.due(i)))
            .collect();
        all.sort();
        let expected: Vec<_> = (0..20).map(|k| Duration::from_micros(100 * k)).collect();
        assert_eq!(all, expected);
        // 50,000 a second over 8: 160 µs apart, 20 µs between connections.
        let last = Schedule::spread(50_000, 8, 7);
        assert_eq!(
            (last.phase, last.interval, last.due(1000)),
            (
                Duration::from_micros(140),
                Duration::from_micros(160),
                Duration::from_micros(140 + 160_000)
            )
        );
    }

    #[test]
    fn a_stall_counts_from_each_requests_due_time() {
        // One request every 1 ms, each served in 100 µs, but the 10th
        // (due at 9 ms) stalls for 50 ms more: it completes at 59.1 ms.
        let schedule = Schedule {
            phase: Duration::ZERO,
            interval: ms(1),
        };
        let mut clock = HandClock {
            now: Duration::ZERO,
            sleeps: Vec::new(),
        };
        let mut record = Recorded::new();
        let mut sent = Vec::new();
        let mut n = 0;
        run(&mut clock, schedule, 0, 1000, &mut record, |clock| {
            sent.push(clock.now);
            clock.now += if n == 9 {
                ms(50) + Duration::from_micros(100)
            } else {
                Duration::from_micros(100)
            };
            n += 1;
            Ok(())
        })
        .unwrap();
        // Requests 10 and on were due during the stall: each is sent as
        // soon as the one before it is back, without sleeping.
        assert_eq!(sent[10], ms(59) + Duration::from_micros(100));
        assert_eq!(sent[11], ms(59) + Duration::from_micros(200));
        assert!(!clock.sleeps.contains(&ms(10)));
        // Request 10 was due at 10 ms and done at 59.2 ms: 49.2 ms, not the
        // 100 µs it took once sent. Request 9 took its 50 ms in full.
        let latency = &record.latency;
        assert_eq!(latency.len(), 1000);
        assert!(latency.equivalent(latency.max(), 50_100_000));
        // Request k >= 10, due at k ms, is done at 58.2 + 0.1 k ms: late
        // until the client has caught up, after request 64 (0.6 ms late).
        // With request 9, 56 requests took 0.6 ms or more; from their
        // actual send, all but request 9 would have been 100 µs.
        assert_eq!(latency.count_between(500_000, u64::MAX), 56);
        let [p50, p99, _, max] = quantiles_us(latency);
        assert!((99.0..=101.0).contains(&p50), "p50 {p50}");
        // About the 10th largest: request 19's 41.1 ms (20's 40.2 ms).
        assert!((40_100.0..=41_200.0).contains(&p99), "p99 {p99}");
        assert!((50_000.0..=50_200.0).contains(&max), "max {max}");
        assert_eq!(record.max_send_lag, ms(49) + Duration::from_micros(100));
    }

    #[test]
    fn a_client_on_time_sleeps_to_each_due_time_and_records_the_service_time() {
        let schedule = Schedule {
            phase: Duration::from_micros(250),
            interval: ms(2),
        };
        let mut clock = HandClock {
            now: Duration::ZERO,
            sleeps: Vec::new(),
        };
        let mut record = Recorded::new();
        run(&mut clock, schedule, 3, 5, &mut record, |clock| {
            clock.now += Duration::from_micros(300);
            Ok(())
        })
        .unwrap();
        let expected: Vec<_> = (0..8).map(|i| schedule.due(i)).collect();
        assert_eq!(clock.sleeps, expected);
        // The warm-up's 3 are not recorded.
        assert_eq!(record.latency.len(), 5);
        assert_eq!(record.max_send_lag, Duration::ZERO);
        let low = record.latency.min();
        assert!(record.latency.equivalent(low, 300_000), "{low}");
        assert!(record.latency.equivalent(record.latency.max(), 300_000));
        assert_eq!(
            record.finished,
            schedule.due(7) + Duration::from_micros(300)
        );
    }

    #[test]
    fn an_error_stops_the_run() {
        let mut clock = HandClock {
            now: Duration::ZERO,
            sleeps: Vec::new(),
        };
        let schedule = Schedule::spread(1000, 1, 0);
        let mut calls = 0;
        let error = run(&mut clock, schedule, 0, 10, &mut Recorded::new(), |_| {
            calls += 1;
            if calls == 3 {
                Err(io::Error::other("gone"))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert_eq!((error.to_string(), calls), ("gone".to_owned(), 3));
    }
}
