//! The one error type of the crate.
//!
//! Every message names what was wrong, the value that was found and what
//! would have been valid, so that a command-line tool or an HTTP service can
//! show it to a person as it is.

use std::fmt;
use std::time::Duration;

use crate::encoding::Encoding;
pub(crate) use crate::value::echo;
use crate::value::format_duration;

/// The largest value an ID can have: 2^63 - 1.
pub(crate) const MAX_ID: u64 = (1 << 63) - 1;

/// A field of a Snowflake ID, as named in error messages.
///
/// # Examples
///
/// ```
/// use snowmint::Field;
///
/// assert_eq!(Field::Datacenter.to_string(), "datacenter");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// The timestamp, in milliseconds since the layout's epoch.
    Timestamp,
    /// The datacenter id.
    Datacenter,
    /// The machine id within the datacenter.
    Machine,
    /// The per-millisecond sequence number.
    Sequence,
}

impl Field {
    /// The field's name in lower case, as used in messages and APIs.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Field::Sequence.name(), "sequence");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Field::Timestamp => "timestamp",
            Field::Datacenter => "datacenter",
            Field::Machine => "machine",
            Field::Sequence => "sequence",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a piece of ID text was rejected.
///
/// # Examples
///
/// ```
/// use snowmint::{Error, InvalidIdKind, SnowflakeId};
///
/// let err = "12x".parse::<SnowflakeId>().unwrap_err();
/// assert!(matches!(err, Error::InvalidId { kind: InvalidIdKind::InvalidDigit { .. }, .. }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidIdKind {
    /// The text was empty.
    Empty,
    /// A character that is not a digit of the encoding.
    InvalidDigit {
        /// The offending character.
        character: char,
        /// Its position (in characters, from 0).
        position: usize,
    },
    /// A well-formed number outside 0 ..= 2^63-1 (negative, or too large).
    OutOfRange,
}

/// Everything that can go wrong in this crate.
///
/// The messages are meant to be shown to people: each names the field or
/// input, the value found and the valid range.
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, Parts};
///
/// let err = Layout::TWITTER
///     .encode(Parts { timestamp_ms: 1_700_000_000_000, datacenter: 32, machine: 0, sequence: 0 })
///     .unwrap_err();
/// assert_eq!(err.to_string(), "datacenter 32 is out of range (0..=31)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A datacenter, machine or sequence value (or a timestamp offset) does
    /// not fit its field.
    #[error("{field} {value} is out of range (0..={max})")]
    FieldOutOfRange {
        /// Which field.
        field: Field,
        /// The value given.
        value: u64,
        /// The largest valid value.
        max: u64,
    },
    /// A timestamp earlier than the layout's epoch.
    #[error(
        "timestamp {timestamp_ms} is before the epoch {epoch_ms} (valid: {epoch_ms}..={last_ms})"
    )]
    TimestampBeforeEpoch {
        /// The timestamp given, in Unix milliseconds.
        timestamp_ms: i64,
        /// The layout's epoch, in Unix milliseconds.
        epoch_ms: i64,
        /// The layout's last representable instant, in Unix milliseconds.
        last_ms: i64,
    },
    /// A timestamp later than the layout's last representable instant.
    #[error(
        "timestamp {timestamp_ms} is past the last representable instant {last_ms} (valid: {epoch_ms}..={last_ms})"
    )]
    TimestampPastEnd {
        /// The timestamp given, in Unix milliseconds.
        timestamp_ms: i64,
        /// The layout's epoch, in Unix milliseconds.
        epoch_ms: i64,
        /// The layout's last representable instant, in Unix milliseconds.
        last_ms: i64,
    },
    /// Text that is not an ID in the expected encoding, or a number outside
    /// 0 ..= 2^63-1.
    #[error("{}", InvalidIdMessage { input, encoding: *encoding, kind: *kind })]
    InvalidId {
        /// The text given (cut to a readable length).
        input: String,
        /// The encoding it was read in.
        encoding: Encoding,
        /// What was wrong with it.
        kind: InvalidIdKind,
    },
    /// Text that is neither Unix milliseconds nor an RFC 3339 time (nor
    /// `now`, where that is accepted).
    #[error(
        "{name} {input:?} is not valid: {reason} (expected {}Unix milliseconds such as 1700000000000, or RFC 3339 such as 2023-11-14T22:13:20.000Z)",
        if *accepts_now { "now, " } else { "" }
    )]
    InvalidTime {
        /// What the time is: `time`, `epoch`, or a parameter's name.
        name: &'static str,
        /// The text given (cut to a readable length).
        input: String,
        /// What was wrong with it.
        reason: &'static str,
        /// Whether `now` would have been accepted.
        accepts_now: bool,
    },
    /// A layout whose widths or epoch do not make a valid format.
    #[error("invalid layout: {reason}")]
    InvalidLayout {
        /// What is wrong with it.
        reason: String,
    },
    /// A layout name that is not a preset and not a custom specification.
    #[error(
        "unknown layout {name:?} (expected twitter, discord, or widths T/D/M/S such as 42/0/10/11; any of them optionally with @EPOCH)"
    )]
    UnknownLayout {
        /// The name given (cut to a readable length).
        name: String,
    },
    /// A name that is not an ID encoding.
    #[error("unknown encoding {name:?} (expected decimal, hex, base32 or base58)")]
    UnknownEncoding {
        /// The name given (cut to a readable length).
        name: String,
    },
    /// A name that is not a clock policy.
    #[error("unknown clock policy {name:?} (expected refuse, wait or borrow)")]
    UnknownClockPolicy {
        /// The name given (cut to a readable length).
        name: String,
    },
    /// Text that is not a whole number where one was expected.
    #[error("{name} {input:?} is not a number (expected an integer in {min}..={max})")]
    NotANumber {
        /// What the number is, such as `count`.
        name: &'static str,
        /// The text given (cut to a readable length).
        input: String,
        /// The smallest valid value.
        min: i128,
        /// The largest valid value.
        max: i128,
    },
    /// A whole number outside its range (negative numbers and numbers of
    /// any size included).
    #[error("{name} {input} is out of range ({min}..={max})")]
    NumberOutOfRange {
        /// What the number is, such as `count`.
        name: &'static str,
        /// The number as given (cut to a readable length).
        input: String,
        /// The smallest valid value.
        min: i128,
        /// The largest valid value.
        max: i128,
    },
    /// Text that is not a duration.
    #[error(
        "{name} {input:?} is not a duration (expected a number and a unit: 500ms, 2s, 1.5s, 1m, 1h)"
    )]
    InvalidDuration {
        /// What the duration is, such as `clock_max`.
        name: &'static str,
        /// The text given (cut to a readable length).
        input: String,
    },
    /// A duration outside its range.
    #[error("{name} {input} is out of range ({}..={})", format_duration(*min), format_duration(*max))]
    DurationOutOfRange {
        /// What the duration is, such as `clock_max`.
        name: &'static str,
        /// The duration as given (cut to a readable length).
        input: String,
        /// The shortest valid duration.
        min: Duration,
        /// The longest valid duration.
        max: Duration,
    },
    /// A slot number beyond the layout's node count.
    #[error("slot {slot} is out of range (0..={max})")]
    SlotOutOfRange {
        /// The slot given.
        slot: u64,
        /// The largest valid slot.
        max: u64,
    },
    /// A time window whose start lies after its end.
    #[error("time window is empty: from {from_ms} is after to {to_ms}")]
    EmptyWindow {
        /// Start of the window, Unix milliseconds.
        from_ms: i64,
        /// End of the window, Unix milliseconds.
        to_ms: i64,
    },
    /// The clock reads earlier than the last timestamp the generator used;
    /// the generator refuses until it catches up.
    #[error(
        "clock moved backwards: it reads {now_ms} but IDs were already issued at {last_ms} ({} ms behind); refusing until it catches up",
        last_ms.saturating_sub(*now_ms)
    )]
    ClockBehind {
        /// The last timestamp used, Unix milliseconds.
        last_ms: i64,
        /// What the clock reads now, Unix milliseconds.
        now_ms: i64,
    },
    /// All sequence numbers of this millisecond are used (only from the
    /// explicit-time calls, which never wait).
    #[error("sequence exhausted: all {ids_per_ms} IDs of millisecond {timestamp_ms} are used")]
    SequenceExhausted {
        /// The millisecond that is full, Unix milliseconds.
        timestamp_ms: i64,
        /// How many IDs a millisecond holds in this layout.
        ids_per_ms: u64,
    },
}

impl Error {
    /// Builds an [`Error::InvalidId`], cutting long input to a readable size.
    pub(crate) fn invalid_id(input: &str, encoding: Encoding, kind: InvalidIdKind) -> Error {
        Error::InvalidId {
            input: echo(input),
            encoding,
            kind,
        }
    }

    /// The field this error is about, when it is about one field of an ID.
    ///
    /// Services use it to point the message at the right input.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Field, Layout, Parts};
    ///
    /// let err = Layout::TWITTER
    ///     .encode(Parts { timestamp_ms: 0, datacenter: 0, machine: 0, sequence: 0 })
    ///     .unwrap_err();
    /// assert_eq!(err.field(), Some(Field::Timestamp));
    /// ```
    pub fn field(&self) -> Option<Field> {
        match self {
            Error::FieldOutOfRange { field, .. } => Some(*field),
            Error::TimestampBeforeEpoch { .. }
            | Error::TimestampPastEnd { .. }
            | Error::InvalidTime { .. } => Some(Field::Timestamp),
            _ => None,
        }
    }
}

struct InvalidIdMessage<'a> {
    input: &'a str,
    encoding: Encoding,
    kind: InvalidIdKind,
}

impl fmt::Display for InvalidIdMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let enc = self.encoding;
        let range = format_args!(
            "expected a {} integer in 0..={}",
            enc.name(),
            enc.display_u64(MAX_ID)
        );
        match self.kind {
            InvalidIdKind::Empty => write!(f, "ID is empty; {range}"),
            InvalidIdKind::InvalidDigit {
                character,
                position,
            } => write!(
                f,
                "ID {:?} is not a {} integer: {character:?} at position {position}; {range}",
                self.input,
                enc.name()
            ),
            InvalidIdKind::OutOfRange => {
                write!(
                    f,
                    "ID {} is out of range (0..={})",
                    self.input,
                    enc.display_u64(MAX_ID)
                )
            }
        }
    }
}
