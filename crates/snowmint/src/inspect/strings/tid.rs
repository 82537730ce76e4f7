//! Bluesky's TID (the AT Protocol's timestamp identifier, the record key
//! of posts): a 64-bit value whose top bit is 0, then 53 bits of Unix
//! microseconds and 10 bits of clock identifier, written as 13 characters
//! of the base32-sortable alphabet `234567abcdefghijklmnopqrstuvwxyz`
//! (atproto.com/specs/tid).

use std::fmt;
use std::str::FromStr;

use super::{Alphabet, Format, ParseError, Since, TextFamily, date_ms, digits};
use crate::inspect::reading::Field;
use crate::inspect::time::{MICROSECOND, Time};

const SORTABLE: &[u8; 32] = b"234567abcdefghijklmnopqrstuvwxyz";
const SORTABLE_DIGITS: Alphabet = Alphabet {
    digits: digits(SORTABLE, false),
    radix: 32,
    what: "a base32-sortable digit: 2-7 or a-z, lower case",
};
const FORMAT: Format = Format {
    name: "TID",
    len: 13,
    alphabet: &SORTABLE_DIGITS,
    bits: 63,
    range: "2222222222222..=jzzzzzzzzzzzz",
};

/// A Bluesky TID.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::Tid;
///
/// // The example of the AT Protocol's TID specification.
/// let tid: Tid = "3jzfcijpj2z2a".parse()?;
/// assert_eq!(tid.unix_us(), 1_688_137_381_887_007);
/// assert_eq!(tid.clock_id(), 6);
/// assert!("kjzfcijpj2z2a".parse::<Tid>().is_err()); // the top bit set
/// # Ok::<(), snowmint::inspect::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tid(u64);

impl Tid {
    /// The 64-bit value.
    pub const fn as_u64(&self) -> u64 {
        self.0
    }

    /// When it was made, in Unix microseconds.
    pub const fn unix_us(&self) -> i64 {
        (self.0 >> 10) as i64
    }

    /// The 10-bit clock identifier.
    pub const fn clock_id(&self) -> u16 {
        self.0 as u16 & 0x3FF
    }
}

impl FromStr for Tid {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Tid, ParseError> {
        FORMAT.read(text).map(|value| Tid(value as u64))
    }
}

impl fmt::Display for Tid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::write_fixed(
            u128::from(self.0),
            FORMAT.len,
            SORTABLE,
        ))
    }
}

impl TextFamily for Tid {
    fn family(&self) -> &'static str {
        "tid"
    }

    fn since(&self) -> Since {
        Since {
            unix_ms: date_ms(2022, 1, 1),
            what: "2022, the AT Protocol's first code",
        }
    }

    fn time(&self) -> Option<Time> {
        let unix_ns = i128::from(self.unix_us()) * MICROSECOND as i128;
        Some(Time::from_unix_ns(unix_ns, MICROSECOND))
    }

    fn fields(&self) -> Vec<Field> {
        vec![Field::number("clock_id", u64::from(self.clock_id()))]
    }
}
