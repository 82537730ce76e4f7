//! The one error type of the crate.
//!
//! Every message names what was wrong, the value that was found and what
//! would have been valid, so that a command-line tool or an HTTP service can
//! show it to a person as it is.
//!
//! [`Error`] is opaque, as `uuid`'s is: what it is about is read through
//! [`Error::kind`] and the accessors in `kind.rs`, so that a new case never
//! breaks a caller's `match`.

use std::fmt;
use std::time::Duration;

use crate::encoding::Encoding;
use crate::id::SnowflakeId;
use crate::layout::{Name, Unit};
pub(crate) use crate::value::echo;
use crate::value::format_duration;

/// Why a piece of ID text was rejected; see [`Error::invalid_id`].
///
/// # Examples
///
/// ```
/// use snowmint::{InvalidIdKind, SnowflakeId};
///
/// let err = "12x".parse::<SnowflakeId>().unwrap_err();
/// assert!(matches!(err.invalid_id(), Some(InvalidIdKind::InvalidDigit { character: 'x', position: 2 })));
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
    /// A well-formed number outside 0 ..= 2^64-1 (negative, or too large).
    OutOfRange,
}

/// The clock behind the last timestamp a generator used, as an
/// [`Error`] of kind [`ClockBehind`](crate::ErrorKind::ClockBehind)
/// reports it; see [`Error::regression`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint::{Generator, Layout, Node};
///
/// let generator = Generator::new(Layout::TWITTER, Node::default())?;
/// generator.next_id_at(1_700_000_000_000)?;
/// let regression = generator.next_id_at(1_699_999_999_990).unwrap_err().regression().unwrap();
/// assert_eq!((regression.last_ms, regression.now_ms), (1_700_000_000_000, 1_699_999_999_990));
/// assert_eq!(regression.behind(), Duration::from_millis(10));
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Regression {
    /// The last timestamp used, Unix milliseconds (the start of its tick).
    pub last_ms: i64,
    /// What the clock read, Unix milliseconds.
    pub now_ms: i64,
}

impl Regression {
    /// How far the clock is behind (0 when it is behind by less than a
    /// millisecond).
    pub fn behind(&self) -> Duration {
        Duration::from_millis(self.last_ms.saturating_sub(self.now_ms).max(0) as u64)
    }
}

/// Everything that can go wrong in this crate.
///
/// The messages are meant to be shown to people: each names the field or
/// input, the value found and the valid range. What kind of failure it is
/// and its facts are read with [`Error::kind`], [`Error::subject`],
/// [`Error::value`], [`Error::min`], [`Error::max`], [`Error::field`],
/// [`Error::retry_after`] and [`Error::regression`].
///
/// # Examples
///
/// ```
/// use snowmint::{ErrorKind, Layout};
///
/// let err = Layout::TWITTER
///     .encode(1_700_000_000_000, &[("datacenter", 32)])
///     .unwrap_err();
/// assert_eq!(err.to_string(), "datacenter 32 is out of range (0..=31)");
/// assert_eq!(err.kind(), ErrorKind::OutOfRange);
/// assert_eq!(err.field(), Some("datacenter"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub(crate) Box<Repr>);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Error {}

impl From<Repr> for Error {
    fn from(repr: Repr) -> Error {
        Error(Box::new(repr))
    }
}

/// What a number or a value is called in a message: a fixed name (`count`,
/// `clock_max`) or a layout's field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Label {
    Static(&'static str),
    Field(Name),
}

impl Label {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Label::Static(name) => name,
            Label::Field(name) => name.as_str(),
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The cases behind an [`Error`]: private, so that callers go through its
/// accessors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Repr {
    /// A field's value (or a timestamp offset) does not fit the field.
    #[error("{field} {value} is out of range (0..={max})")]
    FieldOutOfRange { field: Name, value: u64, max: u64 },
    /// A timestamp earlier than the layout's epoch.
    #[error(
        "timestamp {timestamp_ms} is before the epoch {epoch_ms} (valid: {epoch_ms}..={last_ms})"
    )]
    TimestampBeforeEpoch {
        timestamp_ms: i64,
        epoch_ms: i64,
        last_ms: i64,
    },
    /// A timestamp later than the layout's last instant.
    #[error(
        "timestamp {timestamp_ms} is past the last representable instant {last_ms} (valid: {epoch_ms}..={last_ms})"
    )]
    TimestampPastEnd {
        timestamp_ms: i64,
        epoch_ms: i64,
        last_ms: i64,
    },
    /// Text that is not an ID in the expected encoding, or a number
    /// outside 0 ..= `max`.
    #[error("{}", InvalidIdMessage { input, encoding: *encoding, kind: *kind, max: *max })]
    InvalidId {
        input: String,
        encoding: Encoding,
        kind: InvalidIdKind,
        max: u64,
    },
    /// An ID above the largest of a layout.
    #[error("ID {id} is out of range for layout {layout} (0..={max})")]
    IdOutOfLayout {
        id: SnowflakeId,
        layout: String,
        max: u64,
    },
    /// Text that is neither Unix milliseconds nor an RFC 3339 time (nor
    /// `now`, where that is accepted).
    #[error(
        "{name} {input:?} is not valid: {reason} (expected {}Unix milliseconds such as 1700000000000, or RFC 3339 such as 2023-11-14T22:13:20.000Z)",
        if *accepts_now { "now, " } else { "" }
    )]
    InvalidTime {
        name: &'static str,
        input: String,
        reason: &'static str,
        accepts_now: bool,
    },
    /// A layout whose fields, unit or epoch do not make a valid format, or
    /// that cannot do what was asked (mint, give one range for a window).
    #[error("invalid layout: {reason}")]
    InvalidLayout { reason: String },
    /// A layout name that is not a preset and not a layout text.
    #[error(
        "unknown layout {name:?} (expected a preset ({}), widths T/D/M/S such as 42/0/10/11, \
         or fields such as time:39/sequence:8/machine:16; any of them optionally with @EPOCH and ,UNIT)",
        crate::Layout::preset_names().collect::<Vec<_>>().join(", ")
    )]
    UnknownLayout { name: String },
    /// A field name the layout does not have.
    #[error("layout {layout} has no field {name:?} (its fields: {known})")]
    UnknownField {
        name: String,
        layout: String,
        known: String,
    },
    /// A name given for a node that is no node field of the layout.
    #[error("layout {layout} has no node field {name:?} (its node fields: {known})")]
    UnknownNodeField {
        name: String,
        layout: String,
        known: String,
    },
    /// A node field not given, where a node was to be made.
    #[error("layout {layout} needs {field} (0..={max}) to make a node")]
    MissingField {
        field: Name,
        layout: String,
        max: u64,
    },
    /// One field given twice, by two names.
    #[error("field {field} is given twice (as {first} and as {second})")]
    FieldTwice {
        field: Name,
        first: String,
        second: String,
    },
    /// A name that is not an ID encoding.
    #[error("unknown encoding {name:?} (expected decimal, hex, base32 or base58)")]
    UnknownEncoding { name: String },
    /// A name that is not a clock policy.
    #[error("unknown clock policy {name:?} (expected refuse, wait or borrow)")]
    UnknownClockPolicy { name: String },
    /// Text that is not a whole number where one was expected.
    #[error("{name} {input:?} is not a number (expected an integer in {min}..={max})")]
    NotANumber {
        name: Label,
        input: String,
        min: i128,
        max: i128,
    },
    /// A whole number outside its range.
    #[error("{name} {input} is out of range ({min}..={max})")]
    NumberOutOfRange {
        name: Label,
        input: String,
        min: i128,
        max: i128,
    },
    /// Text that is not a duration.
    #[error(
        "{name} {input:?} is not a duration (expected a number and a unit: 500ms, 2s, 1.5s, 1m, 1h)"
    )]
    InvalidDuration { name: &'static str, input: String },
    /// A duration outside its range.
    #[error("{name} {input} is out of range ({}..={})", format_duration(*min), format_duration(*max))]
    DurationOutOfRange {
        name: &'static str,
        input: String,
        min: Duration,
        max: Duration,
    },
    /// A slot number beyond the layout's node count.
    #[error("slot {slot} is out of range (0..={max})")]
    SlotOutOfRange { slot: u64, max: u64 },
    /// A number of slots per node that is not a power of two, or more than
    /// the layout can give one node.
    #[error(
        "slots per node {count} is not valid: a node holds a power of two of slots, 1 to {max} in this layout (1, 2, 4, 8, ...)"
    )]
    SlotsPerNode { count: u64, max: u64 },
    /// A block of slots that runs past the layout's last slot.
    #[error("slots {first}..={last} run past the last slot {max} (slots are 0..={max})")]
    SlotBlockOutOfRange { first: u64, last: u64, max: u64 },
    /// A time window whose start lies after its end.
    #[error("time window is empty: from {from_ms} is after to {to_ms}")]
    EmptyWindow { from_ms: i64, to_ms: i64 },
    /// The clock reads earlier than the last timestamp the generator used.
    #[error(
        "clock moved backwards: it reads {now_ms} but IDs were already issued at {last_ms} ({} ms behind); refusing until it catches up",
        last_ms.saturating_sub(*now_ms)
    )]
    ClockBehind { last_ms: i64, now_ms: i64 },
    /// All sequence numbers of this tick are used (only from the calls
    /// that never wait).
    #[error("{}", ExhaustedMessage { timestamp_ms: *timestamp_ms, ids_per_tick: *ids_per_tick, unit: *unit })]
    SequenceExhausted {
        timestamp_ms: i64,
        ids_per_tick: u64,
        unit: Unit,
    },
}

impl Error {
    /// An [`InvalidId`](Repr::InvalidId) error, cutting long input to a
    /// readable size.
    pub(crate) fn invalid_id_text(input: &str, encoding: Encoding, kind: InvalidIdKind) -> Error {
        Repr::InvalidId {
            input: echo(input),
            encoding,
            kind,
            max: u64::MAX,
        }
        .into()
    }

    /// Why ID text was rejected, when this error is about ID text.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Encoding, InvalidIdKind, SnowflakeId};
    ///
    /// let err = SnowflakeId::parse(Encoding::Hex, "").unwrap_err();
    /// assert_eq!(err.invalid_id(), Some(InvalidIdKind::Empty));
    /// ```
    pub fn invalid_id(&self) -> Option<InvalidIdKind> {
        match &*self.0 {
            Repr::InvalidId { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// The field this error is about, when it is about one field of an ID:
    /// its name in the layout (`datacenter`, `shard`...), or `timestamp`
    /// for a time.
    ///
    /// Services use it to point the message at the right input.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Layout;
    ///
    /// let err = Layout::TWITTER.encode(0, &[]).unwrap_err();
    /// assert_eq!(err.field(), Some("timestamp"));
    /// let err = Layout::INSTAGRAM.parse_field("shard", "9000").unwrap_err();
    /// assert_eq!(err.field(), Some("shard"));
    /// ```
    pub fn field(&self) -> Option<&str> {
        match &*self.0 {
            Repr::FieldOutOfRange { field, .. } => Some(field.as_str()),
            Repr::NotANumber {
                name: Label::Field(field),
                ..
            }
            | Repr::NumberOutOfRange {
                name: Label::Field(field),
                ..
            } => Some(field.as_str()),
            Repr::MissingField { field, .. } | Repr::FieldTwice { field, .. } => {
                Some(field.as_str())
            }
            Repr::TimestampBeforeEpoch { .. }
            | Repr::TimestampPastEnd { .. }
            | Repr::InvalidTime { .. } => Some("timestamp"),
            _ => None,
        }
    }

    /// The clock's regression, when this error is of kind
    /// [`ClockBehind`](crate::ErrorKind::ClockBehind).
    pub fn regression(&self) -> Option<Regression> {
        match *self.0 {
            Repr::ClockBehind { last_ms, now_ms } => Some(Regression { last_ms, now_ms }),
            _ => None,
        }
    }
}

struct InvalidIdMessage<'a> {
    input: &'a str,
    encoding: Encoding,
    kind: InvalidIdKind,
    max: u64,
}

impl fmt::Display for InvalidIdMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let enc = self.encoding;
        let range = format_args!(
            "expected a {} integer in 0..={}",
            enc.name(),
            enc.display_u64(self.max)
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
                    enc.display_u64(self.max)
                )
            }
        }
    }
}

struct ExhaustedMessage {
    timestamp_ms: i64,
    ids_per_tick: u64,
    unit: Unit,
}

impl fmt::Display for ExhaustedMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (count, at) = (self.ids_per_tick, self.timestamp_ms);
        if self.unit == Unit::MILLISECOND {
            write!(
                f,
                "sequence exhausted: all {count} IDs of millisecond {at} are used"
            )
        } else {
            write!(
                f,
                "sequence exhausted: all {count} IDs of the {} tick at {at} are used",
                self.unit
            )
        }
    }
}
