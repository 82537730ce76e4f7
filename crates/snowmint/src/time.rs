//! Reading and writing instants: Unix milliseconds and RFC 3339.
//!
//! Most IDs carry milliseconds, so this module works in Unix milliseconds
//! (`i64`), with microsecond twins ([`parse_time_us`], [`format_time_us`])
//! for layouts with finer units. It needs no date library: the calendar
//! arithmetic is the proleptic Gregorian one of RFC 3339, without leap
//! seconds (as Unix time).

use std::fmt;

use crate::clock::Clock;
use crate::error::{Error, Repr, echo};

const MS_PER_DAY: i64 = 86_400_000;

/// Reads an instant: Unix milliseconds (`1700000000000`, `-5`) or an RFC 3339
/// time (`2023-11-14T22:13:20Z`, `2023-11-14T23:13:20.5+01:00`).
///
/// - Fractional seconds may have any number of digits; they are cut to
///   milliseconds (toward the past), as IDs hold no more.
/// - `T` may be `t` or a space; `Z` may be `z`; any offset `±HH:MM` is allowed.
/// - Seconds run 0..=59 (Unix time has no leap seconds; `:60` is rejected).
///
/// # Examples
///
/// ```
/// use snowmint::parse_time;
///
/// assert_eq!(parse_time("1700000000000")?, 1_700_000_000_000);
/// assert_eq!(parse_time("2023-11-14T22:13:20Z")?, 1_700_000_000_000);
/// assert_eq!(parse_time("2023-11-14T23:13:20.0009+01:00")?, 1_700_000_000_000);
/// assert!(parse_time("2023-02-29T00:00:00Z").is_err());
/// # Ok::<(), snowmint::Error>(())
/// ```
pub fn parse_time(input: &str) -> Result<i64, Error> {
    Reading::new("time", input, false).parse()
}

/// Reads an instant as [`parse_time`] does, to the microsecond: Unix
/// milliseconds, or RFC 3339 with up to 6 digits of fractional seconds
/// (more are cut, toward the past).
///
/// # Examples
///
/// ```
/// use snowmint::parse_time_us;
///
/// assert_eq!(parse_time_us("1700000000000")?, 1_700_000_000_000_000);
/// assert_eq!(parse_time_us("2023-11-14T22:13:20.0000019Z")?, 1_700_000_000_000_001);
/// # Ok::<(), snowmint::Error>(())
/// ```
pub fn parse_time_us(input: &str) -> Result<i64, Error> {
    Reading::new("time", input, false).parse_us()
}

/// Reads an instant as [`parse_time`] does, or `now` (any case) as what
/// `clock` reads; errors name the value `name` (`timestamp`, `from`...).
///
/// # Examples
///
/// ```
/// use snowmint::{ManualClock, parse_instant};
///
/// let clock = ManualClock::new(1_700_000_000_000);
/// assert_eq!(parse_instant("to", "now", &clock)?, 1_700_000_000_000);
/// assert_eq!(parse_instant("to", "1288834974657", &clock)?, 1_288_834_974_657);
/// assert!(parse_instant("to", "yesterday", &clock)
///     .unwrap_err()
///     .to_string()
///     .starts_with("to \"yesterday\" is not valid: the year needs 4 digits (expected now, Unix milliseconds"));
/// # Ok::<(), snowmint::Error>(())
/// ```
pub fn parse_instant(name: &'static str, input: &str, clock: &dyn Clock) -> Result<i64, Error> {
    if input.eq_ignore_ascii_case("now") {
        return Ok(clock.now_ms());
    }
    Reading::new(name, input, true).parse()
}

/// [`parse_instant`] to the microsecond, as [`parse_time_us`] reads: for
/// layouts whose unit is finer than a millisecond.
///
/// # Examples
///
/// ```
/// use snowmint::{ManualClock, parse_instant_us};
///
/// let clock = ManualClock::new(1_700_000_000_000);
/// assert_eq!(parse_instant_us("timestamp", "now", &clock)?, 1_700_000_000_000_000);
/// assert_eq!(
///     parse_instant_us("timestamp", "2023-11-14T22:13:20.000123Z", &clock)?,
///     1_700_000_000_000_123
/// );
/// # Ok::<(), snowmint::Error>(())
/// ```
pub fn parse_instant_us(name: &'static str, input: &str, clock: &dyn Clock) -> Result<i64, Error> {
    if input.eq_ignore_ascii_case("now") {
        return Ok(clock.now_us());
    }
    Reading::new(name, input, true).parse_us()
}

/// Reads an epoch: Unix milliseconds or an RFC 3339 time, as
/// [`parse_time`] does, with errors that call it `epoch`. Whether the
/// epoch suits a layout is [`Layout::with_epoch`](crate::Layout::with_epoch)'s
/// to say.
///
/// # Examples
///
/// ```
/// use snowmint::parse_epoch;
///
/// assert_eq!(parse_epoch("2015-01-01T00:00:00Z")?, snowmint::DISCORD_EPOCH_MS);
/// assert_eq!(parse_epoch("1420070400000")?, snowmint::DISCORD_EPOCH_MS);
/// assert!(parse_epoch("soon").unwrap_err().to_string().starts_with("epoch \"soon\" is not valid"));
/// # Ok::<(), snowmint::Error>(())
/// ```
pub fn parse_epoch(input: &str) -> Result<i64, Error> {
    Reading::new("epoch", input, false).parse()
}

/// What an instant's text held.
enum Read {
    Millis(i64),
    Micros(i64),
}

/// One reading of an instant's text, with what to say when it fails.
struct Reading<'a> {
    name: &'static str,
    input: &'a str,
    accepts_now: bool,
}

impl<'a> Reading<'a> {
    fn new(name: &'static str, input: &'a str, accepts_now: bool) -> Reading<'a> {
        Reading {
            name,
            input,
            accepts_now,
        }
    }

    fn bad(&self, reason: &'static str) -> Error {
        Repr::InvalidTime {
            name: self.name,
            input: echo(self.input),
            reason,
            accepts_now: self.accepts_now,
        }
        .into()
    }

    /// Unix milliseconds.
    fn parse(&self) -> Result<i64, Error> {
        match self.read()? {
            Read::Millis(ms) => Ok(ms),
            Read::Micros(us) => Ok(us.div_euclid(1000)),
        }
    }

    /// Unix microseconds.
    fn parse_us(&self) -> Result<i64, Error> {
        match self.read()? {
            Read::Millis(ms) => ms
                .checked_mul(1000)
                .ok_or_else(|| self.bad("the number is too large to count in microseconds")),
            Read::Micros(us) => Ok(us),
        }
    }

    fn read(&self) -> Result<Read, Error> {
        let input = self.input;
        let bytes = input.as_bytes();
        if bytes.is_empty() {
            return Err(self.bad("it is empty"));
        }
        let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
        if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
            return input
                .parse::<i64>()
                .map(Read::Millis)
                .map_err(|_| self.bad("the number does not fit 64 bits"));
        }
        parse_rfc3339(input)
            .map(Read::Micros)
            .map_err(|reason| self.bad(reason))
    }
}

fn parse_rfc3339(input: &str) -> Result<i64, &'static str> {
    let mut cursor = Cursor {
        bytes: input.as_bytes(),
        at: 0,
    };

    let year = cursor.number(4).ok_or("the year needs 4 digits")?;
    cursor.expect(b"-").ok_or("expected '-' after the year")?;
    let month = cursor.number(2).ok_or("the month needs 2 digits")?;
    cursor.expect(b"-").ok_or("expected '-' after the month")?;
    let day = cursor.number(2).ok_or("the day needs 2 digits")?;
    cursor
        .expect(b"Tt ")
        .ok_or("expected 'T' between the date and the time")?;
    let hour = cursor.number(2).ok_or("the hour needs 2 digits")?;
    cursor.expect(b":").ok_or("expected ':' after the hour")?;
    let minute = cursor.number(2).ok_or("the minute needs 2 digits")?;
    cursor.expect(b":").ok_or("expected ':' after the minute")?;
    let second = cursor.number(2).ok_or("the second needs 2 digits")?;

    let mut micros = 0;
    if cursor.expect(b".").is_some() {
        let start = cursor.at;
        let mut scale = 100_000;
        while let Some(d) = cursor.digit() {
            micros += d * scale;
            scale /= 10;
        }
        if cursor.at == start {
            return Err("expected digits after the decimal point");
        }
    }

    let offset_minutes = match cursor.next() {
        Some(b'Z' | b'z') => 0,
        Some(sign @ (b'+' | b'-')) => {
            let hours = cursor.number(2).ok_or("the offset hours need 2 digits")?;
            cursor.expect(b":").ok_or("expected ':' in the offset")?;
            let minutes = cursor.number(2).ok_or("the offset minutes need 2 digits")?;
            if hours > 23 || minutes > 59 {
                return Err("the offset is out of range (-23:59..=+23:59)");
            }
            let total = hours * 60 + minutes;
            if sign == b'-' { -total } else { total }
        }
        _ => {
            return Err("expected 'Z' or an offset such as +01:00 after the time");
        }
    };
    if cursor.at != cursor.bytes.len() {
        return Err("unexpected text after the offset");
    }

    if !(1..=12).contains(&month) {
        return Err("the month is out of range (01..=12)");
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err("the day does not exist in that month");
    }
    if hour > 23 {
        return Err("the hour is out of range (00..=23)");
    }
    if minute > 59 {
        return Err("the minute is out of range (00..=59)");
    }
    if second > 59 {
        return Err("the second is out of range (00..=59)");
    }

    let days = days_from_civil(year, month, day);
    let seconds = ((days * 24 + hour) * 60 + minute - offset_minutes) * 60 + second;
    Ok(seconds * 1_000_000 + micros)
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn next(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn digit(&mut self) -> Option<i64> {
        let b = *self.bytes.get(self.at)?;
        if b.is_ascii_digit() {
            self.at += 1;
            Some(i64::from(b - b'0'))
        } else {
            None
        }
    }

    /// Exactly `width` digits.
    fn number(&mut self, width: usize) -> Option<i64> {
        (0..width).try_fold(0, |acc, _| Some(acc * 10 + self.digit()?))
    }

    /// One byte out of `choices`.
    fn expect(&mut self, choices: &[u8]) -> Option<()> {
        let b = *self.bytes.get(self.at)?;
        if choices.contains(&b) {
            self.at += 1;
            Some(())
        } else {
            None
        }
    }
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// algorithm: eras of 400 years, years starting in March).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let shifted_month = (month + 9) % 12; // March = 0
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The inverse of [`days_from_civil`]: (year, month, day).
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// An instant written as RFC 3339 in UTC, with milliseconds or at a
/// layout's precision, such as `2023-11-14T22:13:20.000Z`; see
/// [`format_time`] and [`format_time_us`].
///
/// # Examples
///
/// ```
/// let text: snowmint::Rfc3339 = snowmint::format_time(0);
/// assert_eq!(text.to_string(), "1970-01-01T00:00:00.000Z");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rfc3339 {
    ms: i64,
    /// Microseconds past `ms`, 0..=999.
    micros: u16,
    /// Digits of fractional seconds written, 0..=6.
    digits: u8,
}

/// Writes Unix milliseconds as RFC 3339 in UTC with milliseconds. Years
/// beyond 0000..=9999 get a sign and at least 6 digits (ISO 8601 extended).
///
/// # Examples
///
/// ```
/// use snowmint::format_time;
///
/// assert_eq!(format_time(1_700_000_000_000).to_string(), "2023-11-14T22:13:20.000Z");
/// assert_eq!(format_time(-1).to_string(), "1969-12-31T23:59:59.999Z");
/// ```
pub fn format_time(unix_ms: i64) -> Rfc3339 {
    Rfc3339 {
        ms: unix_ms,
        micros: 0,
        digits: 3,
    }
}

/// Writes Unix microseconds as RFC 3339 in UTC with `digits` digits of
/// fractional seconds (at most 6; cut, not rounded), as a layout's
/// precision asks ([`Unit::digits`](crate::Unit::digits)).
///
/// # Examples
///
/// ```
/// use snowmint::format_time_us;
///
/// assert_eq!(format_time_us(1_700_000_000_123_456, 6).to_string(), "2023-11-14T22:13:20.123456Z");
/// assert_eq!(format_time_us(1_700_000_000_120_000, 2).to_string(), "2023-11-14T22:13:20.12Z");
/// assert_eq!(format_time_us(1_700_000_000_000_000, 0).to_string(), "2023-11-14T22:13:20Z");
/// ```
pub fn format_time_us(unix_us: i64, digits: u8) -> Rfc3339 {
    Rfc3339 {
        ms: unix_us.div_euclid(1000),
        micros: unix_us.rem_euclid(1000) as u16,
        digits: digits.min(6),
    }
}

impl Rfc3339 {
    /// The longest text an instant can take: a sign and 9 digits of year
    /// (an `i64` of milliseconds reaches the year 292 million), then
    /// `-MM-DDTHH:MM:SS.uuuuuuZ`.
    pub const MAX_LEN: usize = 33;

    /// Writes the text into `buf` and returns it, without the formatting
    /// machinery: for writing millions of instants (bulk decoding), where
    /// going through `Display` costs several times more.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Rfc3339, format_time};
    ///
    /// let mut buf = [0; Rfc3339::MAX_LEN];
    /// let text = format_time(1_700_000_000_000).write_to(&mut buf);
    /// assert_eq!(text, "2023-11-14T22:13:20.000Z");
    /// ```
    pub fn write_to<'b>(&self, buf: &'b mut [u8; Rfc3339::MAX_LEN]) -> &'b str {
        let days = self.ms.div_euclid(MS_PER_DAY);
        let ms_of_day = self.ms.rem_euclid(MS_PER_DAY) as u64;
        let mut text = Ascii::new(buf);
        text.date_time(days, ms_of_day / 1000);
        if self.digits > 0 {
            text.byte(b'.');
            let fraction = ms_of_day % 1000 * 1000 + u64::from(self.micros);
            let digits = usize::from(self.digits);
            text.digits(fraction / 10u64.pow(6 - u32::from(self.digits)), digits);
        }
        text.byte(b'Z');
        let len = text.len;
        // Only ASCII digits and separators were written.
        std::str::from_utf8(&buf[..len]).unwrap_or_default()
    }
}

impl fmt::Display for Rfc3339 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0; Rfc3339::MAX_LEN];
        f.write_str(self.write_to(&mut buf))
    }
}

/// A cursor that writes ASCII into a fixed buffer: the calendar part of an
/// RFC 3339 time, for [`Rfc3339`] and the inspector's times.
pub(crate) struct Ascii<'b> {
    buf: &'b mut [u8],
    pub(crate) len: usize,
}

impl<'b> Ascii<'b> {
    pub(crate) fn new(buf: &'b mut [u8]) -> Ascii<'b> {
        Ascii { buf, len: 0 }
    }

    /// `YYYY-MM-DDTHH:MM:SS` of the day `days` since 1970-01-01 and the
    /// second `second_of_day` of it; a year outside 0..=9999 in ISO 8601's
    /// extended form (a sign and at least 6 digits).
    pub(crate) fn date_time(&mut self, days: i64, second_of_day: u64) {
        let (year, month, day) = civil_from_days(days);
        if (0..=9999).contains(&year) {
            self.digits(year as u64, 4);
        } else {
            self.byte(if year < 0 { b'-' } else { b'+' });
            let magnitude = year.unsigned_abs();
            self.digits(magnitude, decimal_width(magnitude).max(6));
        }
        self.byte(b'-');
        self.digits(month as u64, 2);
        self.byte(b'-');
        self.digits(day as u64, 2);
        self.byte(b'T');
        self.digits(second_of_day / 3600, 2);
        self.byte(b':');
        self.digits(second_of_day / 60 % 60, 2);
        self.byte(b':');
        self.digits(second_of_day % 60, 2);
    }

    pub(crate) fn byte(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    /// `value` in exactly `width` decimal digits (zero-padded).
    pub(crate) fn digits(&mut self, mut value: u64, width: usize) {
        for at in (self.len..self.len + width).rev() {
            self.buf[at] = b'0' + (value % 10) as u8;
            value /= 10;
        }
        self.len += width;
    }
}

pub(crate) fn decimal_width(mut value: u64) -> usize {
    let mut width = 1;
    while value >= 10 {
        value /= 10;
        width += 1;
    }
    width
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip_over_many_centuries() {
        for days in (-1_000_000..1_000_000).step_by(7) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
    }

    /// The text as the formatting machinery writes it: the reference for
    /// the hand-written `write_to`.
    fn reference(unix_ms: i64) -> String {
        let days = unix_ms.div_euclid(MS_PER_DAY);
        let ms_of_day = unix_ms.rem_euclid(MS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        let year = if (0..=9999).contains(&year) {
            format!("{year:04}")
        } else {
            format!("{year:+07}")
        };
        format!(
            "{year}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
            ms_of_day / 3_600_000,
            ms_of_day / 60_000 % 60,
            ms_of_day / 1000 % 60,
            ms_of_day % 1000
        )
    }

    #[test]
    fn hand_formatting_matches_the_formatting_machinery() {
        let edges = [i64::MIN, i64::MIN + 1, -62_167_219_200_001, -1, 0, 1];
        let more = [
            253_402_300_799_999,
            253_402_300_800_000,
            i64::MAX - 1,
            i64::MAX,
        ];
        let spread = (0..20_000i64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as i64));
        for unix_ms in edges.into_iter().chain(more).chain(spread) {
            assert_eq!(
                format_time(unix_ms).to_string(),
                reference(unix_ms),
                "{unix_ms}"
            );
        }
    }

    #[test]
    fn known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(format_time(0).to_string(), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_time(1_288_834_974_657).to_string(),
            "2010-11-04T01:42:54.657Z"
        );
    }
}
