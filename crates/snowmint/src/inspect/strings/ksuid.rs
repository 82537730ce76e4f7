//! KSUID (Segment's K-Sortable Unique IDentifier): 20 bytes, written as
//! 27 base62 characters: 4 bytes of seconds since 1400000000
//! (2014-05-13T16:53:20Z) and 16 random bytes (github.com/segmentio/ksuid).

use std::fmt;
use std::str::FromStr;

use super::{
    Alphabet, ParseError, Problem, Since, TextFamily, bad_character, date_ms, digits, hex,
};
use crate::inspect::reading::Field;
use crate::inspect::time::{SECOND, Time};

/// KSUID's epoch, in Unix seconds.
const EPOCH_SECONDS: i64 = 1_400_000_000;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE62_DIGITS: Alphabet = Alphabet {
    digits: digits(BASE62, false),
    radix: 62,
    what: "a base62 digit: 0-9, A-Z, a-z",
};
const LEN: usize = 27;
const RANGE: &str = "000000000000000000000000000..=aWgEPTl1tmebfsQzFP4bxwgy80V";

/// A KSUID.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::Ksuid;
///
/// // The example of Segment's README.
/// let ksuid: Ksuid = "0ujtsYcgvSTl8PAuAdqWYSMnLOv".parse()?;
/// assert_eq!(ksuid.timestamp(), 107_608_047);
/// assert_eq!(ksuid.unix_seconds(), 1_507_608_047);
/// assert_eq!(ksuid.to_string(), "0ujtsYcgvSTl8PAuAdqWYSMnLOv");
/// # Ok::<(), snowmint::inspect::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ksuid {
    timestamp: u32,
    payload: u128,
}

impl Ksuid {
    /// Seconds since KSUID's epoch (1400000000).
    pub const fn timestamp(&self) -> u32 {
        self.timestamp
    }

    /// When it was made, in Unix seconds.
    pub const fn unix_seconds(&self) -> i64 {
        self.timestamp as i64 + EPOCH_SECONDS
    }

    /// The 16 random bytes.
    pub const fn payload(&self) -> u128 {
        self.payload
    }
}

impl FromStr for Ksuid {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Ksuid, ParseError> {
        let found = text.chars().count();
        if found != LEN {
            let problem = Problem::Length {
                found,
                expected: "27",
            };
            return Err(ParseError::new("KSUID", text, problem));
        }
        // 160 bits: a big-endian number in five 32-bit limbs, times 62 plus
        // each digit.
        let mut limbs = [0u32; 5];
        for (at, &b) in text.as_bytes().iter().enumerate() {
            let digit = BASE62_DIGITS.digits[usize::from(b)];
            if digit == super::NOT {
                return Err(bad_character("KSUID", text, at, BASE62_DIGITS.what));
            }
            let mut carry = u64::from(digit);
            for limb in limbs.iter_mut().rev() {
                let next = u64::from(*limb) * 62 + carry;
                *limb = next as u32;
                carry = next >> 32;
            }
            if carry != 0 {
                let problem = Problem::OutOfRange { range: RANGE };
                return Err(ParseError::new("KSUID", text, problem));
            }
        }
        let payload = limbs[1..]
            .iter()
            .fold(0u128, |acc, &limb| acc << 32 | u128::from(limb));
        Ok(Ksuid {
            timestamp: limbs[0],
            payload,
        })
    }
}

impl fmt::Display for Ksuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut limbs = [
            self.timestamp,
            (self.payload >> 96) as u32,
            (self.payload >> 64) as u32,
            (self.payload >> 32) as u32,
            self.payload as u32,
        ];
        let mut out = [b'0'; LEN];
        for slot in out.iter_mut().rev() {
            // Divide the 160-bit number by 62, keeping the remainder.
            let mut remainder = 0u64;
            for limb in limbs.iter_mut() {
                let current = remainder << 32 | u64::from(*limb);
                *limb = (current / 62) as u32;
                remainder = current % 62;
            }
            *slot = BASE62[remainder as usize];
        }
        f.write_str(std::str::from_utf8(&out).unwrap_or_default())
    }
}

impl TextFamily for Ksuid {
    fn family(&self) -> &'static str {
        "ksuid"
    }

    fn since(&self) -> Since {
        Since {
            unix_ms: date_ms(2017, 1, 1),
            what: "2017, when Segment published it",
        }
    }

    fn time(&self) -> Option<Time> {
        let unix_ns = i128::from(self.unix_seconds()) * SECOND as i128;
        Some(Time::from_unix_ns(unix_ns, SECOND))
    }

    fn fields(&self) -> Vec<Field> {
        vec![Field::text("payload", hex(self.payload, 32))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ends_of_the_range() {
        let min: Ksuid = "000000000000000000000000000".parse().unwrap();
        assert_eq!((min.timestamp(), min.payload()), (0, 0));
        let max: Ksuid = "aWgEPTl1tmebfsQzFP4bxwgy80V".parse().unwrap();
        assert_eq!((max.timestamp(), max.payload()), (u32::MAX, u128::MAX));
        assert_eq!(max.to_string(), "aWgEPTl1tmebfsQzFP4bxwgy80V");
        assert_eq!(
            "aWgEPTl1tmebfsQzFP4bxwgy80W"
                .parse::<Ksuid>()
                .unwrap_err()
                .to_string(),
            format!("KSUID \"aWgEPTl1tmebfsQzFP4bxwgy80W\" is out of range ({RANGE})")
        );
    }
}
