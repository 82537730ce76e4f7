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
use crate::error::{Error, InvalidIdKind, Repr};
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
    /// A name that is none of those accepted: an encoding, a clock
    /// policy, a field the layout does not have.
    UnknownName,
    /// Fields given by name that do not make a node or an ID: a node field
    /// not given, or one field given twice (by its own name and by
    /// `datacenter`, `machine` or `sequence`).
    InvalidFields,
    /// A layout that does not exist, cannot be made (its fields, unit or
    /// epoch), or cannot do what was asked (mint, give one range for a
    /// time window).
    InvalidLayout,
    /// A time window whose start lies after its end.
    EmptyWindow,
    /// The clock reads earlier than IDs already issued: not now, later.
    ClockBehind,
    /// Every ID of this tick is used, and the call does not wait: not now,
    /// in a tick.
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
/// assert_eq!(error.max().unwrap().to_string(), "18446744073709551615");
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
    /// let error = Layout::TWITTER.parse_field("machine", "32").unwrap_err();
    /// assert_eq!(error.kind(), ErrorKind::OutOfRange);
    /// let error = snowmint::parse_time("noon").unwrap_err();
    /// assert_eq!(error.kind(), ErrorKind::InvalidText);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match &*self.0 {
            Repr::FieldOutOfRange { .. }
            | Repr::TimestampBeforeEpoch { .. }
            | Repr::TimestampPastEnd { .. }
            | Repr::IdOutOfLayout { .. }
            | Repr::NumberOutOfRange { .. }
            | Repr::DurationOutOfRange { .. }
            | Repr::SlotOutOfRange { .. }
            | Repr::SlotsPerNode { .. }
            | Repr::SlotBlockOutOfRange { .. } => ErrorKind::OutOfRange,
            Repr::InvalidId { kind, .. } => match kind {
                InvalidIdKind::OutOfRange => ErrorKind::OutOfRange,
                InvalidIdKind::Empty | InvalidIdKind::InvalidDigit { .. } => ErrorKind::InvalidText,
            },
            Repr::InvalidTime { .. } | Repr::NotANumber { .. } | Repr::InvalidDuration { .. } => {
                ErrorKind::InvalidText
            }
            Repr::UnknownEncoding { .. }
            | Repr::UnknownClockPolicy { .. }
            | Repr::UnknownField { .. }
            | Repr::UnknownNodeField { .. } => ErrorKind::UnknownName,
            Repr::MissingField { .. } | Repr::FieldTwice { .. } => ErrorKind::InvalidFields,
            Repr::InvalidLayout { .. } | Repr::UnknownLayout { .. } => ErrorKind::InvalidLayout,
            Repr::EmptyWindow { .. } => ErrorKind::EmptyWindow,
            Repr::ClockBehind { .. } => ErrorKind::ClockBehind,
            Repr::SequenceExhausted { .. } => ErrorKind::SequenceExhausted,
        }
    }

    /// The name of the value the error is about, as the core calls it: an
    /// ID field by its layout's name (`datacenter`, `shard`), `timestamp`,
    /// `id`, `slot`, `layout`, `field` (a name the layout does not have),
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
    pub fn subject(&self) -> Option<&str> {
        match &*self.0 {
            Repr::FieldOutOfRange { field, .. } => Some(field.as_str()),
            Repr::TimestampBeforeEpoch { .. } | Repr::TimestampPastEnd { .. } => Some("timestamp"),
            Repr::InvalidId { .. } | Repr::IdOutOfLayout { .. } => Some("id"),
            Repr::NotANumber { name, .. } | Repr::NumberOutOfRange { name, .. } => {
                Some(name.as_str())
            }
            Repr::InvalidTime { name, .. }
            | Repr::InvalidDuration { name, .. }
            | Repr::DurationOutOfRange { name, .. } => Some(name),
            Repr::InvalidLayout { .. } | Repr::UnknownLayout { .. } => Some("layout"),
            Repr::UnknownField { .. } | Repr::UnknownNodeField { .. } => Some("field"),
            Repr::MissingField { field, .. } | Repr::FieldTwice { field, .. } => {
                Some(field.as_str())
            }
            Repr::UnknownEncoding { .. } => Some("encoding"),
            Repr::UnknownClockPolicy { .. } => Some("policy"),
            Repr::SlotOutOfRange { .. } | Repr::SlotBlockOutOfRange { .. } => Some("slot"),
            Repr::SlotsPerNode { .. } => Some("slots_per_node"),
            Repr::EmptyWindow { .. } => Some("from"),
            Repr::ClockBehind { .. } | Repr::SequenceExhausted { .. } => None,
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
        match &*self.0 {
            Repr::FieldOutOfRange { value, .. } => Some(value.to_string()),
            Repr::TimestampBeforeEpoch { timestamp_ms, .. }
            | Repr::TimestampPastEnd { timestamp_ms, .. } => Some(timestamp_ms.to_string()),
            Repr::IdOutOfLayout { id, .. } => Some(id.to_string()),
            Repr::InvalidId { input, .. }
            | Repr::InvalidTime { input, .. }
            | Repr::NotANumber { input, .. }
            | Repr::NumberOutOfRange { input, .. }
            | Repr::InvalidDuration { input, .. }
            | Repr::DurationOutOfRange { input, .. } => Some(input.clone()),
            Repr::UnknownLayout { name }
            | Repr::UnknownField { name, .. }
            | Repr::UnknownNodeField { name, .. }
            | Repr::UnknownEncoding { name }
            | Repr::UnknownClockPolicy { name } => Some(name.clone()),
            Repr::SlotOutOfRange { slot, .. } => Some(slot.to_string()),
            Repr::SlotBlockOutOfRange { last, .. } => Some(last.to_string()),
            Repr::SlotsPerNode { count, .. } => Some(count.to_string()),
            Repr::EmptyWindow { from_ms, .. } => Some(from_ms.to_string()),
            Repr::FieldTwice { second, .. } => Some(second.clone()),
            Repr::InvalidLayout { .. }
            | Repr::MissingField { .. }
            | Repr::ClockBehind { .. }
            | Repr::SequenceExhausted { .. } => None,
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
        match &*self.0 {
            Repr::FieldOutOfRange { max, .. }
            | Repr::SlotOutOfRange { max, .. }
            | Repr::SlotBlockOutOfRange { max, .. }
            | Repr::IdOutOfLayout { max, .. }
            | Repr::MissingField { max, .. } => integers(0, i128::from(*max)),
            Repr::TimestampBeforeEpoch {
                epoch_ms, last_ms, ..
            }
            | Repr::TimestampPastEnd {
                epoch_ms, last_ms, ..
            } => integers(i128::from(*epoch_ms), i128::from(*last_ms)),
            Repr::InvalidId { encoding, max, .. } => (
                Some(Limit::Integer(0)),
                Some(Limit::Id(SnowflakeId::from_u64(*max), *encoding)),
            ),
            Repr::NotANumber { min, max, .. } | Repr::NumberOutOfRange { min, max, .. } => {
                integers(*min, *max)
            }
            Repr::DurationOutOfRange { min, max, .. } => {
                (Some(Limit::Duration(*min)), Some(Limit::Duration(*max)))
            }
            Repr::SlotsPerNode { max, .. } => integers(1, i128::from(*max)),
            Repr::EmptyWindow { to_ms, .. } => (None, Some(Limit::Integer(i128::from(*to_ms)))),
            Repr::InvalidTime { .. }
            | Repr::InvalidDuration { .. }
            | Repr::InvalidLayout { .. }
            | Repr::UnknownLayout { .. }
            | Repr::UnknownField { .. }
            | Repr::UnknownNodeField { .. }
            | Repr::FieldTwice { .. }
            | Repr::UnknownEncoding { .. }
            | Repr::UnknownClockPolicy { .. }
            | Repr::ClockBehind { .. }
            | Repr::SequenceExhausted { .. } => (None, None),
        }
    }

    /// For a failure that is "not now" rather than "never", how long until
    /// the same call may succeed: until the clock is back at the last
    /// timestamp used, or the next tick.
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
        match &*self.0 {
            // Equal to the last timestamp is still behind: one more.
            Repr::ClockBehind { last_ms, now_ms } => Some(Duration::from_millis(
                last_ms.saturating_sub(*now_ms).max(0) as u64 + 1,
            )),
            Repr::SequenceExhausted { unit, .. } => Some(unit.as_duration()),
            Repr::FieldOutOfRange { .. }
            | Repr::TimestampBeforeEpoch { .. }
            | Repr::TimestampPastEnd { .. }
            | Repr::InvalidId { .. }
            | Repr::IdOutOfLayout { .. }
            | Repr::InvalidTime { .. }
            | Repr::InvalidLayout { .. }
            | Repr::UnknownLayout { .. }
            | Repr::UnknownField { .. }
            | Repr::UnknownNodeField { .. }
            | Repr::MissingField { .. }
            | Repr::FieldTwice { .. }
            | Repr::UnknownEncoding { .. }
            | Repr::UnknownClockPolicy { .. }
            | Repr::NotANumber { .. }
            | Repr::NumberOutOfRange { .. }
            | Repr::InvalidDuration { .. }
            | Repr::DurationOutOfRange { .. }
            | Repr::SlotOutOfRange { .. }
            | Repr::SlotsPerNode { .. }
            | Repr::SlotBlockOutOfRange { .. }
            | Repr::EmptyWindow { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Generator, Layout, Node};

    /// One real error of each kind, made through the public API.
    pub(crate) fn one_of(kind: ErrorKind) -> Error {
        let generator = || Generator::new(Layout::TWITTER, Node::default()).unwrap();
        match kind {
            ErrorKind::OutOfRange => Layout::TWITTER.parse_field("machine", "32").map(drop),
            ErrorKind::InvalidText => crate::parse_time("noon").map(drop),
            ErrorKind::UnknownName => "b64".parse::<Encoding>().map(drop),
            ErrorKind::InvalidFields => Layout::TWITTER.node_named(&[("machine", 1)]).map(drop),
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
            .encode(1_700_000_000_000, &[("sequence", 4096)])
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
        assert_eq!(error.max().unwrap().to_string(), "ffffffffffffffff");
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
