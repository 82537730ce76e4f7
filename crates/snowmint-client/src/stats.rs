//! [`Stats`]: what the client's buffer and failover did.

/// Counters of a [`Client`](crate::Client), since it was built; they only
/// grow. Read them with [`Client::stats`](crate::Client::stats) and export
/// them to whatever metrics system the application uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// IDs handed out from the buffer.
    pub buffer_hits: u64,
    /// Batches put into the buffer (in the background or by a call that
    /// found it empty).
    pub refills: u64,
    /// IDs dropped from the buffer because they were older than
    /// `max_age`; never handed out.
    pub stale_dropped: u64,
    /// Attempts that failed on one node (error, refusal, no answer in
    /// time), after which the client tried another or waited.
    pub failovers: u64,
    /// Successful calls that brought IDs (`NextIds`).
    pub round_trips: u64,
}
