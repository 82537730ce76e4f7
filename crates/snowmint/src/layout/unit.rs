//! The time unit of a layout: a whole number of microseconds, 1 µs to 1 s.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::error::{Error, Repr};
use crate::value::echo;

/// How long one tick of a layout's time field lasts: a whole number of
/// microseconds from 1 µs to 1 s (1 ms for Twitter, 10 ms for Sonyflake,
/// 1 s for Baidu).
///
/// Written and read as a number and a unit, `us` (or `µs`), `ms` or `s`,
/// in the largest unit that holds it exactly: `1ms`, `10ms`, `1s`, `250us`.
///
/// # Examples
///
/// ```
/// use snowmint::Unit;
///
/// let unit: Unit = "10ms".parse()?;
/// assert_eq!(unit.as_micros(), 10_000);
/// assert_eq!(unit.to_string(), "10ms");
/// assert_eq!(Unit::from_micros(1_000_000)?.to_string(), "1s");
/// assert_eq!(
///     "2s".parse::<Unit>().unwrap_err().to_string(),
///     "invalid layout: unit 2s is out of range (1us..=1s)"
/// );
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Unit(u32);

impl Unit {
    /// One microsecond, the finest unit.
    pub const MICROSECOND: Unit = Unit(1);
    /// One millisecond, Twitter's unit and the default.
    pub const MILLISECOND: Unit = Unit(1_000);
    /// Ten milliseconds, Sonyflake's unit.
    pub const TEN_MILLISECONDS: Unit = Unit(10_000);
    /// One second, the coarsest unit.
    pub const SECOND: Unit = Unit(1_000_000);

    /// A unit of `micros` microseconds.
    ///
    /// # Errors
    ///
    /// An invalid-layout error when `micros` is outside 1..=1,000,000.
    pub fn from_micros(micros: u32) -> Result<Unit, Error> {
        if (1..=1_000_000).contains(&micros) {
            Ok(Unit(micros))
        } else {
            Err(out_of_range(&Unit(micros).to_string()))
        }
    }

    /// The unit in microseconds.
    pub const fn as_micros(self) -> u32 {
        self.0
    }

    /// The unit as a `Duration`.
    pub const fn as_duration(self) -> Duration {
        Duration::from_micros(self.0 as u64)
    }

    /// How many digits of a second the unit shows: 3 for milliseconds, 2
    /// for 10 ms, 0 for whole seconds, 6 for microseconds.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Unit;
    ///
    /// assert_eq!(Unit::MILLISECOND.digits(), 3);
    /// assert_eq!(Unit::TEN_MILLISECONDS.digits(), 2);
    /// assert_eq!(Unit::SECOND.digits(), 0);
    /// assert_eq!(Unit::MICROSECOND.digits(), 6);
    /// ```
    pub const fn digits(self) -> u8 {
        let mut micros = self.0;
        let mut digits = 6;
        while digits > 0 && micros.is_multiple_of(10) {
            micros /= 10;
            digits -= 1;
        }
        digits
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let micros = self.0;
        if micros >= 1_000_000 && micros.is_multiple_of(1_000_000) {
            write!(f, "{}s", micros / 1_000_000)
        } else if micros >= 1_000 && micros.is_multiple_of(1_000) {
            write!(f, "{}ms", micros / 1_000)
        } else {
            write!(f, "{micros}us")
        }
    }
}

impl fmt::Debug for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Unit({self})")
    }
}

impl FromStr for Unit {
    type Err = Error;

    fn from_str(text: &str) -> Result<Unit, Error> {
        let split = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (number, suffix) = text.split_at(split);
        let scale: u64 = match suffix {
            "us" | "µs" => 1,
            "ms" => 1_000,
            "s" => 1_000_000,
            _ => return Err(invalid(text)),
        };
        if number.is_empty() || number.len() > 10 {
            return Err(if number.is_empty() {
                invalid(text)
            } else {
                out_of_range(&echo(text))
            });
        }
        // At most 10 digits: no overflow.
        let micros = number.parse::<u64>().map_err(|_| invalid(text))? * scale;
        match u32::try_from(micros) {
            Ok(micros) if (1..=1_000_000).contains(&micros) => Ok(Unit(micros)),
            _ => Err(out_of_range(&echo(text))),
        }
    }
}

fn invalid(text: &str) -> Error {
    Repr::InvalidLayout {
        reason: format!(
            "unit {:?} is not a unit (expected a whole number of us, ms or s in 1us..=1s, such as 1ms or 10ms)",
            echo(text)
        ),
    }
    .into()
}

fn out_of_range(shown: &str) -> Error {
    Repr::InvalidLayout {
        reason: format!("unit {shown} is out of range (1us..=1s)"),
    }
    .into()
}
