//! ULID: 48 bits of Unix milliseconds and 80 random bits, written as 26
//! Crockford base32 characters (github.com/ulid/spec).

use std::fmt;
use std::str::FromStr;

use super::{CROCKFORD, CROCKFORD_DIGITS, Format, ParseError, Since, TextFamily, date_ms, hex};
use crate::inspect::reading::Field;
use crate::inspect::time::Time;

const FORMAT: Format = Format {
    name: "ULID",
    len: 26,
    alphabet: &CROCKFORD_DIGITS,
    bits: 128,
    range: "00000000000000000000000000..=7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
};

/// A ULID: a 128-bit value whose top 48 bits are Unix milliseconds and
/// whose other 80 bits are random (the spec's "randomness").
///
/// It reads 26 Crockford base32 characters in either case; the first is at
/// most `7`, as 26 characters hold 130 bits. It writes upper case.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::Ulid;
///
/// // The example of `decodeTime` in the README of the reference
/// // implementation (github.com/ulid/javascript).
/// let ulid: Ulid = "01ARYZ6S41TSV4RRFFQ69G5FAV".parse()?;
/// assert_eq!(ulid.unix_ms(), 1_469_918_176_385);
/// assert_eq!(ulid.to_string(), "01ARYZ6S41TSV4RRFFQ69G5FAV");
/// assert_eq!("01aryz6s41tsv4rrffq69g5fav".parse::<Ulid>()?, ulid);
/// assert!("01ARZ3NDEKTSV4RRFFQ69G5FAU0".parse::<Ulid>().is_err());
/// # Ok::<(), snowmint::inspect::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ulid(u128);

impl Ulid {
    /// The 128-bit value.
    pub const fn as_u128(&self) -> u128 {
        self.0
    }

    /// When it was made, in Unix milliseconds (the top 48 bits).
    pub const fn unix_ms(&self) -> i64 {
        (self.0 >> 80) as i64
    }

    /// The 80 random bits.
    pub const fn randomness(&self) -> u128 {
        self.0 & ((1 << 80) - 1)
    }
}

impl FromStr for Ulid {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Ulid, ParseError> {
        FORMAT.read(text).map(Ulid)
    }
}

impl fmt::Display for Ulid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::write_fixed(self.0, FORMAT.len, CROCKFORD))
    }
}

impl TextFamily for Ulid {
    fn family(&self) -> &'static str {
        "ulid"
    }

    fn since(&self) -> Since {
        Since {
            unix_ms: date_ms(2016, 1, 1),
            what: "2016, when the spec was published",
        }
    }

    fn time(&self) -> Option<Time> {
        Some(Time::from_unix_ms(self.unix_ms()))
    }

    fn fields(&self) -> Vec<Field> {
        vec![Field::text("randomness", hex(self.randomness(), 20))]
    }
}
