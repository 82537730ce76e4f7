//! The intervals that follow from a claim's TTL, and the backoff between
//! attempts.
//!
//! - Deadline: `sent + TTL - margin`, the margin a tenth of the TTL (at
//!   least [`MIN_MARGIN`]).
//! - Keep-alive every third of the TTL; after a failed one, every tenth.
//! - One claiming step (list, create, read) may take half the TTL.
//! - A clock check with no rate yet reads again a tenth of the TTL later
//!   (100 ms..=1 s).
//! - Backoff between attempts: from a tenth of the TTL (at least
//!   [`MIN_MARGIN`]), doubling up to half the TTL, with jitter.

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant};

/// The smallest safety margin kept before the TTL runs out.
pub(super) const MIN_MARGIN: Duration = Duration::from_millis(50);

/// The intervals that follow from a TTL.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timing {
    pub(super) ttl: Duration,
}

impl Timing {
    pub(super) fn margin(self) -> Duration {
        (self.ttl / 10).max(MIN_MARGIN)
    }

    /// The last instant a claim confirmed by a request sent at `sent` may
    /// be used, when the coordinator counts `ttl` from that request.
    pub(super) fn deadline(self, sent: Instant, ttl: Duration) -> Instant {
        sent + ttl.saturating_sub(self.margin())
    }

    pub(super) fn renew_every(self) -> Duration {
        self.ttl / 3
    }

    pub(super) fn retry_every(self) -> Duration {
        self.ttl / 10
    }

    /// The longest one claiming step (list, create, read) may take.
    pub(super) fn step_limit(self) -> Duration {
        self.ttl / 2
    }

    /// How soon after a claim the clock check reads its sources a second
    /// time when it has no rate yet: a tenth of the TTL, within
    /// 100 ms..=1 s (long enough for loopback and LAN round trips to time
    /// a rate of 0.5 or less; later checks time it over their interval).
    pub(super) fn rate_span(self) -> Duration {
        (self.ttl / 10).clamp(Duration::from_millis(100), Duration::from_secs(1))
    }
}

/// Exponential backoff with jitter, so that refused nodes do not retry in
/// lockstep.
pub(super) struct Backoff {
    first: Duration,
    most: Duration,
    next: Duration,
}

impl Backoff {
    pub(super) fn new(ttl: Duration) -> Backoff {
        let first = (ttl / 10).max(MIN_MARGIN);
        Backoff {
            first,
            most: ttl / 2,
            next: first,
        }
    }

    pub(super) fn next(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(self.most);
        // Half fixed, half random: RandomState is seeded per instance, which
        // is all the randomness jitter needs.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        pause / 2 + pause.mul_f64((random % 1000) as f64 / 2000.0)
    }

    pub(super) fn reset(&mut self) {
        self.next = self.first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_keeps_a_margin_inside_the_ttl() {
        let timing = Timing {
            ttl: Duration::from_secs(2),
        };
        let sent = Instant::now();
        assert_eq!(
            timing.deadline(sent, Duration::from_secs(2)),
            sent + Duration::from_millis(1800)
        );
        let short = Timing {
            ttl: Duration::from_millis(300),
        };
        assert_eq!(short.margin(), MIN_MARGIN);
    }

    #[test]
    fn backoff_grows_to_half_the_ttl_and_resets() {
        let mut backoff = Backoff::new(Duration::from_secs(2));
        let pauses: Vec<_> = (0..6).map(|_| backoff.next()).collect();
        for (pause, nominal) in pauses.iter().zip([200, 400, 800, 1000, 1000, 1000]) {
            let nominal = Duration::from_millis(nominal);
            assert!(
                *pause >= nominal / 2 && *pause <= nominal,
                "{pause:?} vs {nominal:?}"
            );
        }
        backoff.reset();
        assert!(backoff.next() <= Duration::from_millis(200));
    }
}
