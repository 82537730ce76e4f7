//! An instant as a family records it: nanoseconds since the Unix epoch and
//! the family's unit (1 s for KSUID and ObjectId, 1 ms for ULID, 1 µs for
//! Bluesky's TIDs, 100 ns for UUID v1 and v6...), written in RFC 3339 with
//! as many fractional digits as the unit has.

use std::fmt;

use crate::time::Ascii;

/// A nanosecond.
pub const NANOSECOND: u64 = 1;
/// A microsecond, in nanoseconds.
pub const MICROSECOND: u64 = 1_000;
/// A millisecond, in nanoseconds.
pub const MILLISECOND: u64 = 1_000_000;
/// A second, in nanoseconds.
pub const SECOND: u64 = 1_000_000_000;

/// When a family says an ID was made, at the family's precision.
///
/// The value is exact: nanoseconds since 1970-01-01T00:00:00Z, a whole
/// number of the family's unit. [`Display`](fmt::Display) writes RFC 3339
/// in UTC with the fractional digits the unit needs and no more: none for
/// seconds, 2 for 10 ms, 3 for milliseconds, 6 for microseconds, 7 for
/// UUID's 100 ns.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::{MILLISECOND, SECOND, Time};
///
/// let ms = Time::from_unix_ns(1_700_000_000_123_000_000, MILLISECOND);
/// assert_eq!(ms.to_string(), "2023-11-14T22:13:20.123Z");
/// assert_eq!(Time::from_unix_ns(1_700_000_000 * 1_000_000_000, SECOND).to_string(), "2023-11-14T22:13:20Z");
/// assert_eq!(Time::from_unix_ns(-100, 100).to_string(), "1969-12-31T23:59:59.9999999Z");
/// assert_eq!(ms.unix_ms(), 1_700_000_000_123);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Time {
    unix_ns: i128,
    unit_ns: u64,
}

impl Time {
    /// An instant in nanoseconds since the Unix epoch, recorded in units of
    /// `unit_ns` nanoseconds (a unit of 0 is taken as 1).
    pub const fn from_unix_ns(unix_ns: i128, unit_ns: u64) -> Time {
        Time {
            unix_ns,
            unit_ns: if unit_ns == 0 { 1 } else { unit_ns },
        }
    }

    /// An instant in Unix milliseconds, recorded in milliseconds.
    ///
    /// # Examples
    ///
    /// ```
    /// let time = snowmint::inspect::Time::from_unix_ms(1_462_015_105_796);
    /// assert_eq!(time.to_string(), "2016-04-30T11:18:25.796Z");
    /// ```
    pub const fn from_unix_ms(unix_ms: i64) -> Time {
        Time::from_unix_ns(unix_ms as i128 * MILLISECOND as i128, MILLISECOND)
    }

    /// Nanoseconds since the Unix epoch.
    pub const fn unix_ns(&self) -> i128 {
        self.unix_ns
    }

    /// The family's unit, in nanoseconds.
    pub const fn unit_ns(&self) -> u64 {
        self.unit_ns
    }

    /// Unix milliseconds, rounded toward the past (saturating at the ends
    /// of `i64`).
    pub const fn unix_ms(&self) -> i64 {
        saturate(self.unix_ns.div_euclid(MILLISECOND as i128))
    }

    /// Unix microseconds, rounded toward the past (saturating at the ends
    /// of `i64`): what a PostgreSQL `timestamptz` holds.
    pub const fn unix_us(&self) -> i64 {
        saturate(self.unix_ns.div_euclid(MICROSECOND as i128))
    }

    /// How many fractional digits of a second the unit needs: 9 less the
    /// trailing zeros of the unit in nanoseconds, so that every multiple of
    /// the unit is written exactly (10 ms: 2, 250 µs: 5).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::inspect::{MICROSECOND, Time};
    ///
    /// assert_eq!(Time::from_unix_ns(0, 10 * 1_000_000).fraction_digits(), 2);
    /// assert_eq!(Time::from_unix_ns(0, 250 * MICROSECOND).fraction_digits(), 5);
    /// ```
    pub const fn fraction_digits(&self) -> u32 {
        let mut unit = self.unit_ns;
        let mut digits = 9;
        while digits > 0 && unit.is_multiple_of(10) {
            unit /= 10;
            digits -= 1;
        }
        digits
    }
}

const fn saturate(value: i128) -> i64 {
    if value > i64::MAX as i128 {
        i64::MAX
    } else if value < i64::MIN as i128 {
        i64::MIN
    } else {
        value as i64
    }
}

impl Time {
    /// The longest text [`Time::write_to`] writes: a sign and 9 digits of
    /// year, `-MM-DDTHH:MM:SS`, 9 fractional digits and `Z`; or, past the
    /// calendar, the whole seconds of an `i128` and `s`.
    pub const MAX_LEN: usize = 48;

    /// Writes the text [`Display`](fmt::Display) writes into `buf` and
    /// returns it, without the formatting machinery: for writing millions
    /// of readings (the inspector writes a time into most explanations).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::inspect::{MICROSECOND, Time};
    ///
    /// let time = Time::from_unix_ns(1_700_000_000_123_456_000, MICROSECOND);
    /// let mut buf = [0; Time::MAX_LEN];
    /// assert_eq!(time.write_to(&mut buf), "2023-11-14T22:13:20.123456Z");
    /// assert_eq!(time.write_to(&mut buf), time.to_string());
    /// ```
    pub fn write_to<'b>(&self, buf: &'b mut [u8; Time::MAX_LEN]) -> &'b str {
        // Most instants fit an i64 of nanoseconds (1677 to 2262), where
        // dividing is much cheaper than in i128.
        let (second, nanos) = match i64::try_from(self.unix_ns) {
            Ok(ns) => (
                i128::from(ns.div_euclid(SECOND as i64)),
                ns.rem_euclid(SECOND as i64) as u64,
            ),
            Err(_) => (
                self.unix_ns.div_euclid(SECOND as i128),
                self.unix_ns.rem_euclid(SECOND as i128) as u64,
            ),
        };
        let Some(second) = i64::try_from(second)
            .ok()
            .filter(|s| s.checked_mul(1000).is_some())
        else {
            return far(second, buf);
        };
        // The calendar is the core's (as `format_time` writes it), with the
        // fraction at the unit.
        let mut text = Ascii::new(buf);
        text.date_time(second.div_euclid(86_400), second.rem_euclid(86_400) as u64);
        let digits = self.fraction_digits() as usize;
        if digits > 0 {
            text.byte(b'.');
            text.digits(nanos / 10u64.pow(9 - digits as u32), digits);
        }
        text.byte(b'Z');
        let len = text.len;
        // Only ASCII digits and separators were written.
        std::str::from_utf8(&buf[..len]).unwrap_or_default()
    }
}

/// Whole seconds past the calendar (beyond an `i64` of milliseconds),
/// written as `{second}s`.
#[cold]
fn far(second: i128, buf: &mut [u8; Time::MAX_LEN]) -> &str {
    use std::io::Write;
    let mut cursor = std::io::Cursor::new(&mut buf[..]);
    // An i128 has at most 39 digits and a sign: it fits.
    let _ = write!(cursor, "{second}s");
    let len = cursor.position() as usize;
    std::str::from_utf8(&buf[..len]).unwrap_or_default()
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.write_to(&mut [0; Time::MAX_LEN]))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Time {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.write_to(&mut [0; Time::MAX_LEN]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_follow_the_unit() {
        let at = |ns: i128, unit: u64| Time::from_unix_ns(ns, unit).to_string();
        assert_eq!(at(0, SECOND), "1970-01-01T00:00:00Z");
        assert_eq!(
            at(1_230_000_000, 10 * MILLISECOND),
            "1970-01-01T00:00:01.23Z"
        );
        assert_eq!(at(1_234_000, MICROSECOND), "1970-01-01T00:00:00.001234Z");
        assert_eq!(at(1_234_567_800, 100), "1970-01-01T00:00:01.2345678Z");
        assert_eq!(at(1, NANOSECOND), "1970-01-01T00:00:00.000000001Z");
        assert_eq!(at(-1_000_000, MILLISECOND), "1969-12-31T23:59:59.999Z");
        // UUID v1's first instant, 1582-10-15 (the Gregorian reform).
        assert_eq!(
            at(-12_219_292_800 * 1_000_000_000, 100),
            "1582-10-15T00:00:00.0000000Z"
        );
    }

    #[test]
    fn milliseconds_round_toward_the_past() {
        let time = Time::from_unix_ns(-1, NANOSECOND);
        assert_eq!((time.unix_ms(), time.unix_us()), (-1, -1));
        let far = Time::from_unix_ns(i128::MAX, NANOSECOND);
        assert_eq!(far.unix_ms(), i64::MAX);
        assert_eq!(far.to_string(), format!("{}s", i128::MAX / 1_000_000_000));
    }
}
