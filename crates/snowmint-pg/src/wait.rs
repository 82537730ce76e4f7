//! Every wait a backend makes, in naps that a cancel request or
//! `statement_timeout` ends ([`shmem::nap`]):
//!
//! - [`clock_past`]: for the clock to pass the high-water mark after a
//!   restart or a new claim (a short gap, at most `snowmint.mark_wait_max`);
//! - [`generate`]: for the clock to catch up with the last ID under the
//!   `wait` clock policy (at most `snowmint.clock_wait_max`);
//! - the waits for the mark itself (`static_mark.rs`, `claimed.rs`) nap
//!   here too.
//!
//! After each nap the caller's `still` check runs: a coordinated node's
//! claim may have ended or changed meanwhile, and then the wait ends with
//! its refusal rather than at its own bound. No wait holds a lock.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use pgrx::pg_sys::panic::ErrorReport;
use snowmint::{Clock, ClockPolicy, Generator, SnowflakeId, SystemClock};

use crate::errors;
use crate::shmem;

/// The longest nap: the clock may jump forward meanwhile.
const LONGEST_NAP: Duration = Duration::from_millis(50);

/// Sleeps, a nap at a time, until the clock reads past `mark_ms`.
pub fn clock_past(
    mark_ms: i64,
    still: impl Fn() -> Result<(), ErrorReport>,
) -> Result<(), ErrorReport> {
    loop {
        let now_ms = SystemClock.now_ms();
        if now_ms > mark_ms {
            return Ok(());
        }
        let gap = Duration::from_millis(mark_ms.abs_diff(now_ms) + 1);
        shmem::nap(gap.min(LONGEST_NAP));
        still()?;
    }
}

/// The next ID of `generator`, built with [`plain_policy`]. Under the
/// `wait` policy a clock behind the last ID by at most its bound is waited
/// out here, interruptibly, rather than inside the generator.
pub fn generate<W: std::ops::Deref<Target = std::sync::atomic::AtomicU64>>(
    generator: &Generator<SystemClock, W>,
    policy: ClockPolicy,
    still: impl Fn() -> Result<(), ErrorReport>,
) -> Result<SnowflakeId, ErrorReport> {
    let mut until: Option<Instant> = None;
    loop {
        let error = match generator.next_id() {
            Ok(id) => return Ok(id),
            Err(error) => error,
        };
        let (Some(regression), ClockPolicy::Wait { max }) = (error.regression(), policy) else {
            return Err(errors::from_core(error));
        };
        let behind = regression.behind();
        let until = *until.get_or_insert_with(|| Instant::now() + max);
        let left = until.saturating_duration_since(Instant::now());
        if behind > max || left.is_zero() {
            return Err(errors::from_core(error));
        }
        shmem::nap(behind.min(left).min(LONGEST_NAP));
        still()?;
    }
}

/// The policy to build a generator with: `wait` becomes `refuse`, since
/// the generator's own wait could not be cancelled ([`generate`] waits
/// instead).
pub fn plain_policy(policy: ClockPolicy) -> ClockPolicy {
    match policy {
        ClockPolicy::Wait { .. } => ClockPolicy::Refuse,
        other => other,
    }
}
