//! Why no ID was issued.

use std::time::Duration;

use snowmint::format_time;

/// Why no ID was issued: each is a 503 with `Retry-After` in the service,
/// and an error with [`retry_after`](Refusal::retry_after) in embedded
/// programs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The node holds no valid claim.
    #[error("this node holds no slot and may not issue IDs: {reason}")]
    NoClaim {
        /// Why.
        reason: String,
    },
    /// The clock reads earlier than IDs already issued (or than the mark).
    #[error(
        "the clock is behind the IDs this slot may already have issued: it reads {} but IDs may have gone out up to {} ({} ms ahead; a clock step back, or the high-water mark left by this node or the slot's previous holder); refusing until it catches up",
        format_time(*now_ms), format_time(*last_ms), last_ms.saturating_sub(*now_ms)
    )]
    ClockBehind {
        /// The last timestamp used, Unix ms.
        last_ms: i64,
        /// The clock, Unix ms.
        now_ms: i64,
    },
    /// The high-water mark could not be recorded.
    #[error("the high-water mark could not be recorded, so no ID may go out: {reason}")]
    MarkUnwritable {
        /// Why.
        reason: String,
    },
    /// A claim is held but its generator is not (yet) usable.
    #[error("{reason}")]
    NotReady {
        /// Why.
        reason: String,
    },
    /// The clock is outside what the layout can hold.
    #[error("the clock is outside the layout's range: {reason}")]
    ClockOutOfRange {
        /// The core error's message.
        reason: String,
    },
    /// A synchronous call would have had to wait (for the high-water
    /// mark's write, or for the clock under the `wait` policy) on a thread
    /// that cannot wait without stopping the runtime the wait depends on
    /// (see [`EmbeddedIssuer::next_id`](crate::EmbeddedIssuer::next_id)).
    /// What it waited for goes on in the background: try again shortly.
    #[error("{reason}")]
    WouldBlock {
        /// What the call would have waited for, and why it could not.
        reason: String,
    },
}

impl Refusal {
    /// The error code of the answer.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::NoClaim { .. } => "no_claim",
            Refusal::ClockBehind { .. } => "clock_behind",
            Refusal::MarkUnwritable { .. } => "mark_unwritable",
            Refusal::NotReady { .. } => "not_ready",
            Refusal::ClockOutOfRange { .. } => "clock_out_of_range",
            Refusal::WouldBlock { .. } => "would_block",
        }
    }

    /// How long the refusal is expected to last.
    pub fn retry_after(&self) -> Duration {
        match self {
            Refusal::ClockBehind { last_ms, now_ms } => {
                Duration::from_millis(last_ms.saturating_sub(*now_ms).max(0) as u64 + 1)
            }
            // A write of the mark takes milliseconds.
            Refusal::WouldBlock { .. } => Duration::from_millis(10),
            _ => Duration::from_secs(1),
        }
    }

    /// Every code, for metrics labels.
    pub const CODES: [&'static str; 6] = [
        "no_claim",
        "clock_behind",
        "mark_unwritable",
        "not_ready",
        "clock_out_of_range",
        "would_block",
    ];
}
