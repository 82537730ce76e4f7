//! What the claim worker tells the backends, in shared memory: the shapes
//! of the words and of the record (docs/ARCHITECTURE.md §5).
//!
//! - [`ClaimWord`]: the claim in force, one word a backend loads before
//!   every ID: the claim's serial and its deadline on the monotonic clock.
//!   0 means no claim.
//! - [`CoveredWord`]: the serial of a claim and the timestamp up to which
//!   its high-water mark is recorded (on disk and on the coordinator). A
//!   backend loads it after the compare-and-swap: an ID leaves only when
//!   the mark of the very claim it was made under covers it.
//! - [`ClaimRecord`]: the rest, read only when the serial changes, for
//!   `node()` and for refusals: slot, node, generation, resume point, mark,
//!   and why the node is not ready.
//!
//! A serial numbers the claims the worker published in this life of the
//! shared memory (the engine's generation starts again when the worker
//! does), so a backend never mistakes a new claim for the one it built its
//! generator for.
#![forbid(unsafe_code)]

use std::time::Instant;

use snowmint::Node;

/// Bits of a serial in both words.
const SERIAL_BITS: u32 = 21;
/// Bits of the value beside it: milliseconds, of the monotonic clock (139
/// years of uptime) or of Unix time (until 2109).
const VALUE_BITS: u32 = 42;
const VALUE_MASK: u64 = (1 << VALUE_BITS) - 1;

/// The largest serial; the worker publishes no claim past it (two
/// million claims in one life of the server: restart it).
pub const MAX_SERIAL: u64 = (1 << SERIAL_BITS) - 1;

/// The claim in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimWord {
    /// Which claim (1 ..= [`MAX_SERIAL`]).
    pub serial: u64,
    /// Until when it may be used: milliseconds of the monotonic clock
    /// ([`mono_ms`]), which no setting of the wall clock moves.
    pub deadline_mono_ms: u64,
}

impl ClaimWord {
    /// The word, or 0 for none.
    pub fn pack(self) -> u64 {
        debug_assert!((1..=MAX_SERIAL).contains(&self.serial));
        // A deadline past what the word holds is as good as none.
        (self.serial << VALUE_BITS) | self.deadline_mono_ms.min(VALUE_MASK)
    }

    /// The claim a word holds; `None` for 0.
    pub fn unpack(word: u64) -> Option<ClaimWord> {
        (word != 0).then_some(ClaimWord {
            serial: word >> VALUE_BITS,
            deadline_mono_ms: word & VALUE_MASK,
        })
    }
}

/// How far a claim's mark is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoveredWord {
    /// The claim.
    pub serial: u64,
    /// IDs with a timestamp (Unix ms) at or below this may leave.
    pub covered_ms: i64,
}

impl CoveredWord {
    /// The word.
    pub fn pack(self) -> u64 {
        let covered = u64::try_from(self.covered_ms).unwrap_or(0) & VALUE_MASK;
        (self.serial << VALUE_BITS) | covered
    }

    /// Whether `word` says that the claim `serial` covers `ts_ms`.
    #[inline]
    pub fn covers(word: u64, serial: u64, ts_ms: i64) -> bool {
        word >> VALUE_BITS == serial && ts_ms <= (word & VALUE_MASK) as i64
    }
}

/// Milliseconds of the monotonic clock (CLOCK_MONOTONIC, the clock of
/// [`Instant`] on Linux): one count for every process of the machine.
#[inline]
pub fn mono_ms() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (now.tv_sec as u64) * 1000 + (now.tv_nsec as u64) / 1_000_000
}

/// `instant` on the monotonic clock, never later than it is: the clock is
/// read before `Instant::now()`, and both are cut to whole milliseconds.
pub fn mono_ms_of(instant: Instant) -> u64 {
    let mono = mono_ms();
    let left = instant.saturating_duration_since(Instant::now());
    mono + u64::try_from(left.as_millis()).unwrap_or(u64::MAX / 2)
}

/// The Unix time (ms) of `mono` on the monotonic clock, given the two
/// clocks' readings now: for messages.
pub fn wall_ms_of(mono: u64, now_mono: u64, now_wall_ms: i64) -> i64 {
    now_wall_ms + (mono as i64 - now_mono as i64)
}

/// The longest reason a record holds, in bytes; a longer one is cut at a
/// character boundary.
const REASON_BYTES: usize = 1000;

/// "No value" in the record's millisecond fields.
pub const NONE: i64 = i64::MIN;

/// What the worker says about the claim, beyond the two words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct ClaimRecord {
    /// The serial of the claim in force; 0 while none is.
    pub serial: u64,
    /// The last serial given out in this life of the shared memory.
    pub last_serial: u64,
    /// The engine's generation of that claim (for `node()`).
    pub generation: u64,
    /// The slot held.
    pub slot: u64,
    /// Its datacenter.
    pub datacenter: u64,
    /// Its machine.
    pub machine: u64,
    /// IDs of the claim must be above this (Unix ms), or `NONE`.
    pub resumed_after_ms: i64,
    /// The node's mark on disk (Unix ms), or `NONE`.
    pub mark_ms: i64,
    /// Set once the worker has run in this life of the shared memory.
    pub started: bool,
    reason_len: u32,
    reason: [u8; REASON_BYTES],
}

impl ClaimRecord {
    /// Before the worker said anything.
    pub const EMPTY: ClaimRecord = ClaimRecord {
        serial: 0,
        last_serial: 0,
        generation: 0,
        slot: 0,
        datacenter: 0,
        machine: 0,
        resumed_after_ms: NONE,
        mark_ms: NONE,
        started: false,
        reason_len: 0,
        reason: [0; REASON_BYTES],
    };

    /// The node of the claim.
    pub fn node(&self) -> Node {
        Node::from_slot(self.slot)
    }

    /// Why the node may not issue, or `None` when it may.
    pub fn reason(&self) -> Option<&str> {
        let bytes = &self.reason[..(self.reason_len as usize).min(REASON_BYTES)];
        (!bytes.is_empty()).then(|| std::str::from_utf8(bytes).unwrap_or("(unreadable reason)"))
    }

    /// Sets the reason (`None`: ready), cut to what the record holds.
    pub fn set_reason(&mut self, reason: Option<&str>) {
        let text = reason.unwrap_or("");
        let mut end = text.len().min(REASON_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.reason[..end].copy_from_slice(&text.as_bytes()[..end]);
        self.reason_len = end as u32;
    }

    /// A millisecond field as an option.
    pub fn ms(value: i64) -> Option<i64> {
        (value != NONE).then_some(value)
    }
}
