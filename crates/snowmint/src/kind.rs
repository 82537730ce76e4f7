//! The classification of errors, and the facts each carries, for the front
//! ends that turn an [`Error`] into their own kind of answer (an HTTP
//! status, a gRPC status, a SQLSTATE, a Python exception, an exit code).
//!
//! [`Error::kind`] is the one place an error is classed; a front end maps
//! each [`ErrorKind`] in one exhaustive `match`. `ErrorKind` is
//! deliberately *not* `#[non_exhaustive]`: a new kind stops every front
//! end's build until it says what the kind means there (see
//! docs/ARCHITECTURE.md §6).
//!
//! [`Error::subject`], [`Error::value`], [`Error::min`], [`Error::max`] and
//! [`Error::retry_after`] give the facts behind the message, so that a
//! front end needs no `match` on the error's variants to report them.

use std::fmt;
use std::time::Duration;

use crate::encoding::Encoding;
use crate::error::{Error, InvalidIdKind};
use crate::id::SnowflakeId;
use crate::value::format_duration;

/// Declares [`ErrorKind`] and [`ErrorKind::ALL`] from one list, so that
/// the list of every kind cannot miss one.
macro_rules! kinds {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// What kind of failure an [`Error`] is: the one classification
        /// every front end maps (see the module docs).
        ///
        /// # Examples
        ///
        /// ```
        /// use snowmint::{ErrorKind, Layout};
        ///
        /// let error = "snowflake9000".parse::<Layout>().unwrap_err();
        /// assert_eq!(error.kind(), ErrorKind::InvalidLayout);
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorKind {
            $($(#[$doc])* $name,)*
        }

        impl ErrorKind {
            /// Every kind, for tests that walk each through a front end.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$name),*];
        }
    };
}

kinds! {
    /// A value outside its range: a field, a timestamp outside the
    /// layout, an ID beyond 2^63-1, a number or a duration out of bounds,
    /// a slot past the layout's nodes. `value`, `min` and `max` say which
    /// and where the range lies.
    OutOfRange,
    /// Text that does not read as the value asked for: not a number, not
    /// a duration, not a time, not an ID in its encoding.
    InvalidText,
    /// A name that is none of those accepted: an encoding, a clock policy.
    UnknownName,
    /// A layout that does not exist or cannot be made (its widths or its
    /// epoch).
    InvalidLayout,
    /// A time window whose start lies after its end.
    EmptyWindow,
    /// The clock reads earlier than IDs already issued: not now, later.
    ClockBehind,
    /// Every ID of this millisecond is used, and the call does not wait:
    /// not now, in a millisecond.
    SequenceExhausted,
}

/// A bound of a valid range, as an error reports it.
///
/// # Examples
///
/// ```
/// use snowmint::{Limit, SnowflakeId};
///
/// let error = "-1".parse::<SnowflakeId>().unwrap_err();
/// assert_eq!(error.min(), Some(Limit::Integer(0)));
/// assert_eq!(error.max().unwrap().to_string(), "9223372036854775807");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// A whole number: a field, Unix milliseconds, a count.
    Integer(i128),
    /// A duration, written as durations are read (`1s`, `24h`).
    Duration(Duration),
    /// An ID, written in the encoding the text it bounds was read in.
    Id(SnowflakeId, Encoding),
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Limit::Integer(n) => write!(f, "{n}"),
            Limit::Duration(d) => write!(f, "{}", format_duration(d)),
            Limit::Id(id, encoding) => f.write_str(id.encode(encoding).as_str()),
        }
    }
}

impl Error {
    /// What kind of failure this is; see [`ErrorKind`].
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{ErrorKind, Layout};
    ///
    /// let error = Layout::TWITTER.parse_field(snowmint::Field::Machine, "32").unwrap_err();
    /// assert_eq!(error.kind(), ErrorKind::OutOfRange);
    /// let error = snowmint::parse_time("noon").unwrap_err();
    /// assert_eq!(error.kind(), ErrorKind::InvalidText);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::FieldOutOfRange { .. }
            | Error::TimestampBeforeEpoch { .. }
            | Error::TimestampPastEnd { .. }
            | Error::NumberOutOfRange { .. }
            | Error::DurationOutOfRange { .. }
            | Error::SlotOutOfRange { .. } => ErrorKind::OutOfRange,
            Error::InvalidId { kind, .. } => match kind {
                InvalidIdKind::OutOfRange => ErrorKind::OutOfRange,
                InvalidIdKind::Empty | InvalidIdKind::InvalidDigit { .. } => ErrorKind::InvalidText,
            },
            Error::InvalidTime { .. }
            | Error::NotANumber { .. }
            | Error::InvalidDuration { .. } => ErrorKind::InvalidText,
            Error::UnknownEncoding { .. } | Error::UnknownClockPolicy { .. } => {
                ErrorKind::UnknownName
            }
            Error::InvalidLayout { .. } | Error::UnknownLayout { .. } => ErrorKind::InvalidLayout,
            Error::EmptyWindow { .. } => ErrorKind::EmptyWindow,
            Error::ClockBehind { .. } => ErrorKind::ClockBehind,
            Error::SequenceExhausted { .. } => ErrorKind::SequenceExhausted,
        }
    }

    /// The name of the value the error is about, as the core calls it: an
    /// ID field (`datacenter`), `timestamp`, `id`, `slot`, `layout`,
    /// `encoding`, `policy`, the name a reader was given (`count`,
    /// `clock_max`, `epoch`), or `from` for a window whose start is after
    /// its end. `None` when the error is about no value (the clock).
    ///
    /// A front end that knows the value by another name (an HTTP
    /// parameter, a setting) says that name instead.
    ///
    /// # Examples
    ///
    /// ```
    /// let error = snowmint::value::parse_bounded("count", "0", 1..=10).unwrap_err();
    /// assert_eq!(error.subject(), Some("count"));
    /// ```
    pub fn subject(&self) -> Option<&'static str> {
        match self {
            Error::FieldOutOfRange { field, .. } => Some(field.name()),
            Error::TimestampBeforeEpoch { .. } | Error::TimestampPastEnd { .. } => {
                Some("timestamp")
            }
            Error::InvalidId { .. } => Some("id"),
            Error::InvalidTime { name, .. }
            | Error::NotANumber { name, .. }
            | Error::NumberOutOfRange { name, .. }
            | Error::InvalidDuration { name, .. }
            | Error::DurationOutOfRange { name, .. } => Some(name),
            Error::InvalidLayout { .. } | Error::UnknownLayout { .. } => Some("layout"),
            Error::UnknownEncoding { .. } => Some("encoding"),
            Error::UnknownClockPolicy { .. } => Some("policy"),
            Error::SlotOutOfRange { .. } => Some("slot"),
            Error::EmptyWindow { .. } => Some("from"),
            Error::ClockBehind { .. } | Error::SequenceExhausted { .. } => None,
        }
    }

    /// The offending value as it was given (text cut to a readable
    /// length), when there is one: for an empty window, its start.
    ///
    /// # Examples
    ///
    /// ```
    /// let error = snowmint::parse_time("noon").unwrap_err();
    /// assert_eq!(error.value().as_deref(), Some("noon"));
    /// ```
    pub fn value(&self) -> Option<String> {
        match self {
            Error::FieldOutOfRange { value, .. } => Some(value.to_string()),
            Error::TimestampBeforeEpoch { timestamp_ms, .. }
            | Error::TimestampPastEnd { timestamp_ms, .. } => Some(timestamp_ms.to_string()),
            Error::InvalidId { input, .. }
            | Error::InvalidTime { input, .. }
            | Error::NotANumber { input, .. }
            | Error::NumberOutOfRange { input, .. }
            | Error::InvalidDuration { input, .. }
            | Error::DurationOutOfRange { input, .. } => Some(input.clone()),
            Error::UnknownLayout { name }
            | Error::UnknownEncoding { name }
            | Error::UnknownClockPolicy { name } => Some(name.clone()),
            Error::SlotOutOfRange { slot, .. } => Some(slot.to_string()),
            Error::EmptyWindow { from_ms, .. } => Some(from_ms.to_string()),
            Error::InvalidLayout { .. }
            | Error::ClockBehind { .. }
            | Error::SequenceExhausted { .. } => None,
        }
    }

    /// The smallest valid value, when the value has a range.
    pub fn min(&self) -> Option<Limit> {
        self.range().0
    }

    /// The largest valid value, when the value has a range (for an empty
    /// window: its end, which its start may not pass).
    pub fn max(&self) -> Option<Limit> {
        self.range().1
    }

    fn range(&self) -> (Option<Limit>, Option<Limit>) {
        let integers =
            |min: i128, max: i128| (Some(Limit::Integer(min)), Some(Limit::Integer(max)));
        match self {
            Error::FieldOutOfRange { max, .. } | Error::SlotOutOfRange { max, .. } => {
                integers(0, i128::from(*max))
            }
            Error::TimestampBeforeEpoch {
                epoch_ms, last_ms, ..
            }
            | Error::TimestampPastEnd {
                epoch_ms, last_ms, ..
            } => integers(i128::from(*epoch_ms), i128::from(*last_ms)),
            Error::InvalidId { encoding, .. } => (
                Some(Limit::Integer(0)),
                Some(Limit::Id(SnowflakeId::MAX, *encoding)),
            ),
            Error::NotANumber { min, max, .. } | Error::NumberOutOfRange { min, max, .. } => {
                integers(*min, *max)
            }
            Error::DurationOutOfRange { min, max, .. } => {
                (Some(Limit::Duration(*min)), Some(Limit::Duration(*max)))
            }
            Error::EmptyWindow { to_ms, .. } => (None, Some(Limit::Integer(i128::from(*to_ms)))),
            Error::InvalidTime { .. }
            | Error::InvalidDuration { .. }
            | Error::InvalidLayout { .. }
            | Error::UnknownLayout { .. }
            | Error::UnknownEncoding { .. }
            | Error::UnknownClockPolicy { .. }
            | Error::ClockBehind { .. }
            | Error::SequenceExhausted { .. } => (None, None),
        }
    }

    /// For a failure that is "not now" rather than "never", how long until
    /// the same call may succeed: until the clock is back at the last
    /// timestamp used, or the next millisecond.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use snowmint::{Generator, Layout, Node};
    ///
    /// let generator = Generator::new(Layout::TWITTER, Node::default())?;
    /// generator.next_id_at(1_700_000_000_000)?;
    /// let error = generator.next_id_at(1_699_999_999_990).unwrap_err();
    /// assert_eq!(error.retry_after(), Some(Duration::from_millis(11)));
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            // Equal to the last timestamp is still behind: one more.
            Error::ClockBehind { last_ms, now_ms } => Some(Duration::from_millis(
                last_ms.saturating_sub(*now_ms).max(0) as u64 + 1,
            )),
            Error::SequenceExhausted { .. } => Some(Duration::from_millis(1)),
            Error::FieldOutOfRange { .. }
            | Error::TimestampBeforeEpoch { .. }
            | Error::TimestampPastEnd { .. }
            | Error::InvalidId { .. }
            | Error::InvalidTime { .. }
            | Error::InvalidLayout { .. }
            | Error::UnknownLayout { .. }
            | Error::UnknownEncoding { .. }
            | Error::UnknownClockPolicy { .. }
            | Error::NotANumber { .. }
            | Error::NumberOutOfRange { .. }
            | Error::InvalidDuration { .. }
            | Error::DurationOutOfRange { .. }
            | Error::SlotOutOfRange { .. }
            | Error::EmptyWindow { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Field, Generator, Layout, Node, Parts};

    /// One real error of each kind, made through the public API.
    pub(crate) fn one_of(kind: ErrorKind) -> Error {
        let generator = || Generator::new(Layout::TWITTER, Node::default()).unwrap();
        match kind {
            ErrorKind::OutOfRange => Layout::TWITTER.parse_field(Field::Machine, "32").map(drop),
            ErrorKind::InvalidText => crate::parse_time("noon").map(drop),
            ErrorKind::UnknownName => "b64".parse::<Encoding>().map(drop),
            ErrorKind::InvalidLayout => "41/5/5/13".parse::<Layout>().map(drop),
            ErrorKind::EmptyWindow => Layout::TWITTER
                .id_range(1_700_000_000_001, 1_700_000_000_000)
                .map(drop),
            ErrorKind::ClockBehind => {
                let generator = generator();
                generator.next_id_at(1_700_000_000_000).unwrap();
                generator.next_id_at(1_699_999_999_000).map(drop)
            }
            ErrorKind::SequenceExhausted => {
                let generator = generator();
                (0..=4096).try_for_each(|_| generator.next_id_at(1_700_000_000_000).map(drop))
            }
        }
        .unwrap_err()
    }

    #[test]
    fn every_kind_is_made_by_some_error() {
        for &kind in ErrorKind::ALL {
            assert_eq!(one_of(kind).kind(), kind);
        }
    }

    #[test]
    fn facts_repeat_the_message() {
        let error = Layout::TWITTER
            .encode(Parts {
                timestamp_ms: 1_700_000_000_000,
                datacenter: 0,
                machine: 0,
                sequence: 4096,
            })
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "sequence 4096 is out of range (0..=4095)"
        );
        assert_eq!(
            (error.subject(), error.value(), error.min(), error.max()),
            (
                Some("sequence"),
                Some("4096".to_owned()),
                Some(Limit::Integer(0)),
                Some(Limit::Integer(4095))
            )
        );
        let error = crate::value::parse_duration(
            "clock_max",
            "25h",
            Duration::ZERO..=Duration::from_secs(86_400),
        )
        .unwrap_err();
        assert_eq!(error.to_string(), "clock_max 25h is out of range (0..=24h)");
        assert_eq!(
            (
                error.min().unwrap().to_string(),
                error.max().unwrap().to_string()
            ),
            ("0".to_owned(), "24h".to_owned())
        );
        let error = SnowflakeId::parse(Encoding::Hex, "zz").unwrap_err();
        assert_eq!(error.max().unwrap().to_string(), "7fffffffffffffff");
        let error = one_of(ErrorKind::EmptyWindow);
        assert_eq!(
            (error.value(), error.max()),
            (
                Some("1700000000001".to_owned()),
                Some(Limit::Integer(1_700_000_000_000))
            )
        );
        assert_eq!(
            one_of(ErrorKind::ClockBehind).retry_after(),
            Some(Duration::from_millis(1001))
        );
    }
}
