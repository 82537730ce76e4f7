//! TSID (github.com/f4b6a3/tsid-creator): 42 bits of milliseconds since
//! 2020-01-01T00:00:00Z and 22 bits of node and counter, in its
//! 13-character Crockford base32 form.

use std::fmt;
use std::str::FromStr;

use super::{CROCKFORD, CROCKFORD_DIGITS, Format, ParseError, Since, TextFamily, date_ms};
use crate::inspect::reading::Field;
use crate::inspect::time::Time;

/// TSID's default epoch, 2020-01-01T00:00:00Z.
const EPOCH_MS: i64 = 1_577_836_800_000;

const FORMAT: Format = Format {
    name: "TSID",
    len: 13,
    alphabet: &CROCKFORD_DIGITS,
    bits: 64,
    range: "0000000000000..=FZZZZZZZZZZZZ",
};

/// A TSID in its 13-character form.
///
/// The 22 low bits are a node and a counter, split where the generator
/// was told (10 and 12 bits by default, 0 and 22 in some ports): they are
/// given whole, as `random`.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::Tsid;
///
/// // The string of tsid-creator's README.
/// let tsid: Tsid = "01226N0640J7Q".parse()?;
/// assert_eq!(tsid.as_u64(), 38_358_284_406_638_839);
/// assert_eq!(tsid.to_string(), "01226N0640J7Q");
/// assert!("G1226N0640J7Q".parse::<Tsid>().is_err()); // 65 bits
/// # Ok::<(), snowmint::inspect::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tsid(u64);

impl Tsid {
    /// The 64-bit value.
    pub const fn as_u64(&self) -> u64 {
        self.0
    }

    /// When it was made, in Unix milliseconds.
    pub const fn unix_ms(&self) -> i64 {
        EPOCH_MS + (self.0 >> 22) as i64
    }

    /// The 22 bits of node and counter.
    pub const fn random(&self) -> u32 {
        self.0 as u32 & 0x3F_FFFF
    }
}

impl FromStr for Tsid {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Tsid, ParseError> {
        FORMAT.read(text).map(|value| Tsid(value as u64))
    }
}

impl fmt::Display for Tsid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::write_fixed(
            u128::from(self.0),
            FORMAT.len,
            CROCKFORD,
        ))
    }
}

impl TextFamily for Tsid {
    fn family(&self) -> &'static str {
        "tsid"
    }

    fn since(&self) -> Since {
        Since {
            unix_ms: date_ms(2020, 1, 1),
            what: "2020-01-01, its epoch",
        }
    }

    fn time(&self) -> Option<Time> {
        Some(Time::from_unix_ms(self.unix_ms()))
    }

    fn fields(&self) -> Vec<Field> {
        vec![Field::number("random", u64::from(self.random()))]
    }
}
