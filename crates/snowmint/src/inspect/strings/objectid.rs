//! MongoDB's ObjectId: 12 bytes, written as 24 hex digits: 4 bytes of
//! Unix seconds, 5 random bytes drawn once per process, and a 3-byte
//! counter (MongoDB's manual, "ObjectId").

use std::fmt;
use std::str::FromStr;

use super::{Format, HEX, ParseError, Since, TextFamily, date_ms, hex};
use crate::inspect::reading::Field;
use crate::inspect::time::{SECOND, Time};

const FORMAT: Format = Format {
    name: "ObjectId",
    len: 24,
    alphabet: &HEX,
    bits: 96,
    range: "000000000000000000000000..=ffffffffffffffffffffffff",
};

/// A MongoDB ObjectId.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::ObjectId;
///
/// // The example of MongoDB's manual.
/// let id: ObjectId = "507f1f77bcf86cd799439011".parse()?;
/// assert_eq!(id.unix_seconds(), 1_350_508_407); // 2012-10-17T21:13:27Z
/// assert_eq!(id.counter(), 0x439011);
/// # Ok::<(), snowmint::inspect::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(u128);

impl ObjectId {
    /// When it was made, in Unix seconds (an unsigned 32-bit count, so up
    /// to 2106).
    pub const fn unix_seconds(&self) -> i64 {
        (self.0 >> 64) as u32 as i64
    }

    /// The 5 bytes drawn once per process.
    pub const fn random(&self) -> u64 {
        (self.0 >> 24) as u64 & 0xFF_FFFF_FFFF
    }

    /// The 3-byte counter.
    pub const fn counter(&self) -> u32 {
        self.0 as u32 & 0xFF_FFFF
    }
}

impl FromStr for ObjectId {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<ObjectId, ParseError> {
        FORMAT.read(text).map(ObjectId)
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex(self.0, 24))
    }
}

impl TextFamily for ObjectId {
    fn family(&self) -> &'static str {
        "objectid"
    }

    fn since(&self) -> Since {
        Since {
            unix_ms: date_ms(2009, 1, 1),
            what: "2009, MongoDB's first release",
        }
    }

    fn time(&self) -> Option<Time> {
        let unix_ns = i128::from(self.unix_seconds()) * SECOND as i128;
        Some(Time::from_unix_ns(unix_ns, SECOND))
    }

    fn fields(&self) -> Vec<Field> {
        vec![
            Field::text("random", hex(u128::from(self.random()), 10)),
            Field::number("counter", u64::from(self.counter())),
        ]
    }
}
