//! Reading settings and parameters from text: whole numbers in a range,
//! durations, and how input is echoed in messages. These are the pieces
//! front ends (flags, configuration, HTTP, SQL, Python) read their values
//! with; the ID's own types (`SnowflakeId`, `Layout`, times) are at the
//! crate's root.
//!
//! A command-line flag, an environment variable, a configuration file and
//! an HTTP query parameter all hand a value over as text. Each kind of
//! value is read here, by one function, so that a value means the same
//! wherever it is given and a bad one gets the same message; the caller
//! only adds where the value came from (`(from --datacenter)`).
//!
//! The rules every reader follows:
//!
//! - The text is taken as it is: no surrounding spaces are trimmed, so that
//!   `" 5"` is reported rather than silently read.
//! - Whole numbers are ASCII digits, with a `-` for negative values (which
//!   are then reported as out of range, not as typos); no `+`, no `_`.
//! - Names (layout presets, encodings, clock policies) are read in any case.
//! - A message names the value, echoes the text (cut by [`echo`] when
//!   long) and gives the valid range or forms.

use std::fmt;
use std::ops::RangeInclusive;
use std::time::Duration;

use crate::error::{Error, Label, Repr};

/// Longest input echoed back in an error message, counted as the quoted
/// (escaped) text a message shows; longer inputs are cut.
const ECHO_LIMIT: usize = 40;

/// Cuts `input` so that, quoted with `{:?}`, it shows at most 40 characters
/// (escapes such as `\u{5cd}` count at their written width), marking the cut
/// with `...`, for quoting it in a message.
///
/// # Examples
///
/// ```
/// assert_eq!(snowmint::value::echo("short"), "short");
/// assert_eq!(snowmint::value::echo(&"x".repeat(50)), format!("{}...", "x".repeat(40)));
/// // A combining mark is written as an 8-character escape: 5 of them fit.
/// assert_eq!(snowmint::value::echo(&"\u{5cd}".repeat(50)), format!("{}...", "\u{5cd}".repeat(5)));
/// ```
pub fn echo(input: &str) -> String {
    let mut shown = 0;
    for (at, c) in input.char_indices() {
        shown += c.escape_debug().count();
        if shown > ECHO_LIMIT {
            return format!("{}...", &input[..at]);
        }
    }
    input.to_owned()
}

/// Reads a whole number in `range`, naming it `name` in errors.
///
/// # Errors
///
/// An error of kind [`InvalidText`](crate::ErrorKind::InvalidText) for
/// text that is not digits (with an optional leading `-`), of kind
/// [`OutOfRange`](crate::ErrorKind::OutOfRange) for a number outside
/// `range` (negative numbers and numbers too large for any integer
/// included).
///
/// # Examples
///
/// ```
/// use snowmint::value::parse_bounded;
///
/// assert_eq!(parse_bounded("count", "42", 1..=4096)?, 42);
/// assert_eq!(
///     parse_bounded("count", "0", 1..=4096).unwrap_err().to_string(),
///     "count 0 is out of range (1..=4096)"
/// );
/// assert_eq!(
///     parse_bounded("count", "-1", 1..=4096).unwrap_err().to_string(),
///     "count -1 is out of range (1..=4096)"
/// );
/// assert_eq!(
///     parse_bounded("count", "+5", 1..=4096).unwrap_err().to_string(),
///     "count \"+5\" is not a number (expected an integer in 1..=4096)"
/// );
/// # Ok::<(), snowmint::Error>(())
/// ```
pub fn parse_bounded(
    name: &'static str,
    text: &str,
    range: RangeInclusive<u64>,
) -> Result<u64, Error> {
    parse_labelled(Label::Static(name), text, range)
}

/// [`parse_bounded`] for a value named by a [`Label`] (a layout's field).
pub(crate) fn parse_labelled(
    name: Label,
    text: &str,
    range: RangeInclusive<u64>,
) -> Result<u64, Error> {
    let (min, max) = (i128::from(*range.start()), i128::from(*range.end()));
    let value = parse_integer(name, text, min, max)?;
    // In range, so within u64.
    Ok(value as u64)
}

/// Reads a whole number, possibly negative, in `range`; see
/// [`parse_bounded`].
///
/// # Examples
///
/// ```
/// use snowmint::value::parse_bounded_signed;
///
/// assert_eq!(parse_bounded_signed("offset", "-20", -100..=100)?, -20);
/// assert_eq!(
///     parse_bounded_signed("offset", "101", -100..=100).unwrap_err().to_string(),
///     "offset 101 is out of range (-100..=100)"
/// );
/// # Ok::<(), snowmint::Error>(())
/// ```
pub fn parse_bounded_signed(
    name: &'static str,
    text: &str,
    range: RangeInclusive<i64>,
) -> Result<i64, Error> {
    let (min, max) = (i128::from(*range.start()), i128::from(*range.end()));
    let value = parse_integer(Label::Static(name), text, min, max)?;
    // In range, so within i64.
    Ok(value as i64)
}

/// Checks that a whole number given as a value (not as text) lies in
/// `range`, with the message [`parse_bounded`] would give for its text:
/// for front ends whose values arrive typed (a gRPC field, a SQL `int`).
///
/// # Examples
///
/// ```
/// use snowmint::value::check_bounded;
///
/// assert_eq!(check_bounded("count", 10u32, 1..=4096)?, 10);
/// assert_eq!(
///     check_bounded("machine", -1i32, 0..=31).unwrap_err().to_string(),
///     "machine -1 is out of range (0..=31)"
/// );
/// # Ok::<(), snowmint::Error>(())
/// ```
pub fn check_bounded(
    name: &'static str,
    value: impl Into<i128>,
    range: RangeInclusive<u64>,
) -> Result<u64, Error> {
    let value = value.into();
    let (min, max) = (i128::from(*range.start()), i128::from(*range.end()));
    if (min..=max).contains(&value) {
        // In range, so within u64.
        Ok(value as u64)
    } else {
        Err(Repr::NumberOutOfRange {
            name: Label::Static(name),
            input: value.to_string(),
            min,
            max,
        }
        .into())
    }
}

fn parse_integer(name: Label, text: &str, min: i128, max: i128) -> Result<i128, Error> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Repr::NotANumber {
            name,
            input: echo(text),
            min,
            max,
        }
        .into());
    }
    // Too many digits for an i128 is out of any range this is asked for.
    match text.parse::<i128>() {
        Ok(value) if (min..=max).contains(&value) => Ok(value),
        _ => Err(Repr::NumberOutOfRange {
            name,
            input: echo(text),
            min,
            max,
        }
        .into()),
    }
}

/// Reads a duration in `range`: a number and a unit, `ms`, `s`, `m` or `h`
/// (`500ms`, `2s`, `1.5s`, `1m`), or a bare `0`. Fractions are kept to the
/// microsecond.
///
/// # Errors
///
/// An error of kind [`InvalidText`](crate::ErrorKind::InvalidText) for
/// text of another form, of kind [`OutOfRange`](crate::ErrorKind::OutOfRange)
/// for a duration outside `range`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint::value::parse_duration;
///
/// let day = Duration::ZERO..=Duration::from_secs(86_400);
/// assert_eq!(parse_duration("clock_max", "1.5s", day.clone())?, Duration::from_millis(1500));
/// assert_eq!(
///     parse_duration("clock_max", "2", day.clone()).unwrap_err().to_string(),
///     "clock_max \"2\" is not a duration (expected a number and a unit: 500ms, 2s, 1.5s, 1m, 1h)"
/// );
/// assert_eq!(
///     parse_duration("clock_max", "25h", day).unwrap_err().to_string(),
///     "clock_max 25h is out of range (0..=24h)"
/// );
/// # Ok::<(), snowmint::Error>(())
/// ```
pub fn parse_duration(
    name: &'static str,
    text: &str,
    range: RangeInclusive<Duration>,
) -> Result<Duration, Error> {
    let bad = || -> Error {
        Repr::InvalidDuration {
            name,
            input: echo(text),
        }
        .into()
    };
    let duration = if text == "0" {
        Duration::ZERO
    } else {
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let (number, unit) = text.split_at(split);
        let scale_ms = match unit {
            "ms" => 1.0,
            "s" => 1_000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            _ => return Err(bad()),
        };
        if number.is_empty() || number.starts_with('.') || number.ends_with('.') {
            return Err(bad());
        }
        let value: f64 = number.parse().map_err(|_| bad())?;
        // `as` saturates: a number too large for any duration lands on
        // u64::MAX microseconds, which is out of every range asked for.
        Duration::from_micros((value * scale_ms * 1000.0).round() as u64)
    };
    if range.contains(&duration) {
        Ok(duration)
    } else {
        Err(duration_out_of_range(name, echo(text), range))
    }
}

/// Checks that a duration given as a value (not as text) lies in `range`,
/// with the message [`parse_duration`] would give for its text.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint::value::check_duration;
///
/// let range = Duration::from_secs(1)..=Duration::from_secs(3600);
/// assert_eq!(
///     check_duration("claim_ttl", Duration::from_millis(500), range).unwrap_err().to_string(),
///     "claim_ttl 500ms is out of range (1s..=1h)"
/// );
/// ```
pub fn check_duration(
    name: &'static str,
    duration: Duration,
    range: RangeInclusive<Duration>,
) -> Result<Duration, Error> {
    if range.contains(&duration) {
        Ok(duration)
    } else {
        Err(duration_out_of_range(
            name,
            format_duration(duration).to_string(),
            range,
        ))
    }
}

/// [`check_duration`] for a duration that may be negative, given in
/// microseconds (a Python `timedelta`, a SQL `interval`): a negative one is
/// out of range, written with its sign.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint::value::check_duration_micros;
///
/// let range = Duration::ZERO..=Duration::from_secs(60);
/// assert_eq!(check_duration_micros("clock_max", 1_500_000, range.clone())?, Duration::from_millis(1500));
/// assert_eq!(
///     check_duration_micros("clock_max", -2_000_000, range).unwrap_err().to_string(),
///     "clock_max -2s is out of range (0..=1m)"
/// );
/// # Ok::<(), snowmint::Error>(())
/// ```
pub fn check_duration_micros(
    name: &'static str,
    micros: i128,
    range: RangeInclusive<Duration>,
) -> Result<Duration, Error> {
    let magnitude = Duration::from_micros(u64::try_from(micros.unsigned_abs()).unwrap_or(u64::MAX));
    if micros < 0 {
        Err(duration_out_of_range(
            name,
            format!("-{}", format_duration(magnitude)),
            range,
        ))
    } else {
        check_duration(name, magnitude, range)
    }
}

fn duration_out_of_range(
    name: &'static str,
    input: String,
    range: RangeInclusive<Duration>,
) -> Error {
    Repr::DurationOutOfRange {
        name,
        input,
        min: *range.start(),
        max: *range.end(),
    }
    .into()
}

/// A duration written the way [`parse_duration`] reads it back, in the
/// largest unit that holds it exactly: `0`, `250ms`, `1.5ms`, `90s`, `2m`,
/// `1h`; see [`format_duration`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationText(Duration);

/// Writes a duration for messages and logs, in a form [`parse_duration`]
/// reads back (to the microsecond).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint::value::format_duration;
///
/// assert_eq!(format_duration(Duration::from_secs(3600)).to_string(), "1h");
/// assert_eq!(format_duration(Duration::from_millis(1500)).to_string(), "1500ms");
/// assert_eq!(format_duration(Duration::from_micros(1500)).to_string(), "1.5ms");
/// assert_eq!(format_duration(Duration::ZERO).to_string(), "0");
/// ```
pub fn format_duration(duration: Duration) -> DurationText {
    DurationText(duration)
}

impl fmt::Display for DurationText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let micros = self.0.as_micros();
        const MS: u128 = 1_000;
        const S: u128 = 1_000 * MS;
        const M: u128 = 60 * S;
        const H: u128 = 60 * M;
        if micros == 0 {
            f.write_str("0")
        } else if micros.is_multiple_of(H) {
            write!(f, "{}h", micros / H)
        } else if micros.is_multiple_of(M) {
            write!(f, "{}m", micros / M)
        } else if micros.is_multiple_of(S) {
            write!(f, "{}s", micros / S)
        } else if micros.is_multiple_of(MS) {
            write!(f, "{}ms", micros / MS)
        } else {
            let fraction = format!("{:03}", micros % MS);
            write!(f, "{}.{}ms", micros / MS, fraction.trim_end_matches('0'))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: RangeInclusive<Duration> = Duration::ZERO..=Duration::from_secs(86_400);

    /// Found by the `time_text` fuzz target: combining marks are escaped
    /// 8 characters wide in a quoted echo, so cutting by characters let a
    /// 73-byte input make a 407-byte message.
    #[test]
    fn echo_is_short_however_it_is_escaped() {
        for input in [
            "\u{5cd}\u{5cc}".repeat(40),
            "\u{1}".repeat(100),
            "\"".repeat(100),
            "\u{1F600}".repeat(100),
            "x".repeat(100),
        ] {
            let quoted = format!("{:?}", echo(&input));
            assert!(quoted.chars().count() <= ECHO_LIMIT + 5, "{quoted}");
            assert!(quoted.len() > 3, "{quoted}");
        }
        let message = crate::parse_time(&"\u{1}\u{5cd}\u{5cc}".repeat(30))
            .unwrap_err()
            .to_string();
        assert!(message.len() < 200, "{message}");
    }

    #[test]
    fn durations() {
        let parse = |text| parse_duration("x", text, DAY);
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        assert_eq!(parse("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse("0.5ms"), Ok(Duration::from_micros(500)));
        for bad in [
            "", "s", "1", "1.s", ".5s", "1sec", "-1s", "1e3ms", " 1s", "1s ", "+1s", "00",
        ] {
            assert!(
                matches!(parse(bad), Err(e) if matches!(*e.0, Repr::InvalidDuration { .. })),
                "{bad:?}"
            );
        }
        for long in ["25h", "99999999999999999999999h"] {
            assert!(
                matches!(parse(long), Err(e) if matches!(*e.0, Repr::DurationOutOfRange { .. })),
                "{long}"
            );
        }
    }

    #[test]
    fn written_durations_read_back() {
        for micros in [
            0,
            1,
            999,
            1000,
            1500,
            1_000_000,
            90_000_000,
            120_000_000,
            3_600_000_000,
        ] {
            let duration = Duration::from_micros(micros);
            let text = format_duration(duration).to_string();
            assert_eq!(parse_duration("x", &text, DAY), Ok(duration), "{text}");
        }
    }

    #[test]
    fn numbers() {
        let parse = |text| parse_bounded("n", text, 0..=31);
        assert_eq!(parse("31"), Ok(31));
        assert_eq!(parse("007"), Ok(7));
        for not_a_number in ["", "-", "x", " 1", "1 ", "+1", "1_000", "1.0", "0x1"] {
            assert!(
                matches!(parse(not_a_number), Err(e) if matches!(*e.0, Repr::NotANumber { .. })),
                "{not_a_number:?}"
            );
        }
        let huge = "9".repeat(60);
        for out in ["32", "-1", "18446744073709551616", huge.as_str()] {
            assert!(
                matches!(parse(out), Err(e) if matches!(*e.0, Repr::NumberOutOfRange { .. })),
                "{out}"
            );
        }
        assert_eq!(
            parse(&huge).unwrap_err().to_string(),
            format!("n {}... is out of range (0..=31)", "9".repeat(40))
        );
        assert_eq!(
            parse_bounded("count", "18446744073709551615", 0..=u64::MAX),
            Ok(u64::MAX)
        );
        assert_eq!(
            parse_bounded_signed("ms", "-9223372036854775808", i64::MIN..=i64::MAX),
            Ok(i64::MIN)
        );
    }
}
