//! Misskey's IDs (misskey-dev/misskey, `packages/backend/src/misc/id/`):
//! `aid` is 8 base36 characters of milliseconds since 2000-01-01T00:00:00Z
//! and 2 of noise; `aidx` is the same 8, then 4 of node and 4 of counter.
//! Both are lower case.

use std::fmt;
use std::str::FromStr;

use super::{Alphabet, Format, ParseError, Since, TextFamily, date_ms, digits};
use crate::inspect::reading::Field;
use crate::inspect::time::Time;

/// 2000-01-01T00:00:00Z, Misskey's `TIME2000`.
const TIME2000_MS: i64 = 946_684_800_000;

const BASE36: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
const BASE36_DIGITS: Alphabet = Alphabet {
    digits: digits(BASE36, false),
    radix: 36,
    what: "a base36 digit: 0-9 or a-z, lower case",
};
const AID: Format = Format {
    name: "Misskey aid",
    len: 10,
    alphabet: &BASE36_DIGITS,
    bits: 128,
    range: "0000000000..=zzzzzzzzzz",
};
const AIDX: Format = Format {
    name: "Misskey aidx",
    len: 16,
    alphabet: &BASE36_DIGITS,
    bits: 128,
    range: "0000000000000000..=zzzzzzzzzzzzzzzz",
};

/// The time part, the first 8 characters, in ms since 2000.
fn time_part(text: &str) -> u64 {
    text.bytes().take(8).fold(0, |acc, b| {
        acc * 36 + u64::from(BASE36_DIGITS.digits[usize::from(b)])
    })
}

/// A Misskey `aid`.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::MisskeyAid;
///
/// let aid: MisskeyAid = "9gkl7xu1f4".parse()?;
/// // "9gkl7xu1" is 741350960137 in base36: ms since 2000-01-01.
/// assert_eq!(aid.unix_ms(), 946_684_800_000 + 741_350_960_137);
/// assert_eq!(aid.noise(), "f4");
/// assert!("9GKL7XU1F4".parse::<MisskeyAid>().is_err()); // lower case only
/// # Ok::<(), snowmint::inspect::ParseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MisskeyAid {
    time: u64,
    noise: [u8; 2],
}

impl MisskeyAid {
    /// When it was made, in Unix milliseconds.
    pub const fn unix_ms(&self) -> i64 {
        TIME2000_MS + self.time as i64
    }

    /// The 2 characters of noise (a counter from a random start).
    pub fn noise(&self) -> &str {
        std::str::from_utf8(&self.noise).unwrap_or_default()
    }
}

impl FromStr for MisskeyAid {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<MisskeyAid, ParseError> {
        AID.read(text)?;
        let bytes = text.as_bytes();
        Ok(MisskeyAid {
            time: time_part(text),
            noise: [bytes[8], bytes[9]],
        })
    }
}

impl fmt::Display for MisskeyAid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let time = super::write_fixed(u128::from(self.time), 8, BASE36);
        write!(f, "{time}{}", self.noise())
    }
}

impl TextFamily for MisskeyAid {
    fn family(&self) -> &'static str {
        "misskey-aid"
    }

    fn since(&self) -> Since {
        Since {
            unix_ms: date_ms(2019, 1, 1),
            what: "2019, when Misskey took it up",
        }
    }

    fn time(&self) -> Option<Time> {
        Some(Time::from_unix_ms(self.unix_ms()))
    }

    fn fields(&self) -> Vec<Field> {
        vec![Field::text("noise", self.noise())]
    }
}

/// A Misskey `aidx`.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::MisskeyAidx;
///
/// let aidx: MisskeyAidx = "9gkl7xu1abcd0001".parse()?;
/// assert_eq!(aidx.node(), "abcd");
/// assert_eq!(aidx.counter(), 1);
/// # Ok::<(), snowmint::inspect::ParseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MisskeyAidx {
    time: u64,
    node: [u8; 4],
    counter: u32,
}

impl MisskeyAidx {
    /// When it was made, in Unix milliseconds.
    pub const fn unix_ms(&self) -> i64 {
        TIME2000_MS + self.time as i64
    }

    /// The 4 characters that name the node (drawn at random when it
    /// starts).
    pub fn node(&self) -> &str {
        std::str::from_utf8(&self.node).unwrap_or_default()
    }

    /// The counter, the last 4 characters read in base36.
    pub const fn counter(&self) -> u32 {
        self.counter
    }
}

impl FromStr for MisskeyAidx {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<MisskeyAidx, ParseError> {
        let value = AIDX.read(text)?;
        let bytes = text.as_bytes();
        Ok(MisskeyAidx {
            time: time_part(text),
            node: [bytes[8], bytes[9], bytes[10], bytes[11]],
            counter: (value % 36u128.pow(4)) as u32,
        })
    }
}

impl fmt::Display for MisskeyAidx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let time = super::write_fixed(u128::from(self.time), 8, BASE36);
        let counter = super::write_fixed(u128::from(self.counter), 4, BASE36);
        write!(f, "{time}{}{counter}", self.node())
    }
}

impl TextFamily for MisskeyAidx {
    fn family(&self) -> &'static str {
        "misskey-aidx"
    }

    fn since(&self) -> Since {
        Since {
            unix_ms: date_ms(2019, 1, 1),
            what: "2019, when Misskey took up its aid",
        }
    }

    fn time(&self) -> Option<Time> {
        Some(Time::from_unix_ms(self.unix_ms()))
    }

    fn fields(&self) -> Vec<Field> {
        vec![
            Field::text("node", self.node()),
            Field::number("counter", u64::from(self.counter)),
        ]
    }
}
