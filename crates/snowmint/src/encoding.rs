//! Text encodings of an ID: decimal, hexadecimal, Crockford base32, base58.
//!
//! Decimal is the canonical form (what `Display` and `FromStr` use). The
//! others are for places where a shorter or case-insensitive token helps:
//!
//! | encoding | alphabet | width |
//! |---|---|---|
//! | `decimal` | `0-9` | 1 to 20 digits, no padding |
//! | `hex` | `0-9a-f` (any case read, `0x` prefix allowed) | always 16 digits |
//! | `base32` | Crockford: `0-9A-Z` without `I L O U` (any case read; `I`/`L` read as 1, `O` as 0) | always 13 digits |
//! | `base58` | Bitcoin: `1-9A-Za-z` without `0 O I l` | 1 to 11 digits, no padding |
//!
//! Hex and base32 are written at a fixed width so that sorting the text sorts
//! the IDs. Every parser accepts shorter input (leading zeros may be left
//! out) and rejects values above 2^64-1; whether a value is an ID of a
//! given layout is the layout's to say ([`Layout::check_id`](crate::Layout::check_id)).

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, InvalidIdKind, Repr, echo};

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const BASE58: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/// Fixed widths of the padded encodings (64 bits in 4-bit and 5-bit digits).
const HEX_WIDTH: usize = 16;
const BASE32_WIDTH: usize = 13;

/// A text encoding for IDs.
///
/// # Examples
///
/// ```
/// use snowmint::{Encoding, SnowflakeId};
///
/// let id = SnowflakeId::from_u64(1724551110457221119);
/// assert_eq!(id.encode(Encoding::Hex).to_string(), "17eed6190fcedfff");
/// assert_eq!(SnowflakeId::parse(Encoding::Hex, "17eed6190fcedfff")?, id);
/// # Ok::<(), snowmint::Error>(())
/// ```
///
/// With the `serde` feature it serializes as its [name](Encoding::name) and
/// deserializes from any name [`FromStr`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// Base 10, the canonical form.
    #[default]
    Decimal,
    /// Base 16, lower case, 16 digits.
    Hex,
    /// Crockford's base 32, upper case, 13 digits.
    Base32,
    /// Base 58 with the Bitcoin alphabet.
    Base58,
}

impl Encoding {
    /// All encodings, in the order they are usually listed.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Encoding::ALL.len(), 4);
    /// ```
    pub const ALL: [Encoding; 4] = [
        Encoding::Decimal,
        Encoding::Hex,
        Encoding::Base32,
        Encoding::Base58,
    ];

    /// The encoding's name as used on command lines and in APIs.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::Encoding::Base58.name(), "base58");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Encoding::Decimal => "decimal",
            Encoding::Hex => "hex",
            Encoding::Base32 => "base32",
            Encoding::Base58 => "base58",
        }
    }

    /// Writes `value` in this encoding (used for the ranges in messages).
    pub(crate) fn display_u64(self, value: u64) -> Encoded {
        Encoded::new(self, value)
    }

    /// Reads an integer in this encoding (up to 2^64-1).
    pub(crate) fn parse_u64(self, text: &str) -> Result<u64, InvalidIdKind> {
        if text.is_empty() {
            return Err(InvalidIdKind::Empty);
        }
        match self {
            Encoding::Decimal => parse_radix(text, 10, |b| match b {
                b'0'..=b'9' => Some(b - b'0'),
                _ => None,
            }),
            Encoding::Hex => {
                let digits = text
                    .strip_prefix("0x")
                    .or_else(|| text.strip_prefix("0X"))
                    .unwrap_or(text);
                if digits.is_empty() {
                    return Err(InvalidIdKind::Empty);
                }
                let offset = text.len() - digits.len();
                parse_radix(digits, 16, |b| (b as char).to_digit(16).map(|d| d as u8))
                    .map_err(|kind| shift_position(kind, offset))
            }
            Encoding::Base32 => parse_radix(text, 32, crockford_value),
            Encoding::Base58 => parse_radix(text, 58, |b| {
                BASE58.iter().position(|&c| c == b).map(|p| p as u8)
            }),
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Reads an encoding name, in any case: `decimal` (or `dec`), `hex`,
/// `base32`, `base58`.
///
/// # Examples
///
/// ```
/// use snowmint::Encoding;
///
/// assert_eq!("HEX".parse::<Encoding>()?, Encoding::Hex);
/// assert_eq!("dec".parse::<Encoding>()?, Encoding::Decimal);
/// assert_eq!(
///     "base64".parse::<Encoding>().unwrap_err().to_string(),
///     "unknown encoding \"base64\" (expected decimal, hex, base32 or base58)"
/// );
/// # Ok::<(), snowmint::Error>(())
/// ```
impl FromStr for Encoding {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let is = |name: &str| s.eq_ignore_ascii_case(name);
        if is("decimal") || is("dec") {
            Ok(Encoding::Decimal)
        } else if let Some(&encoding) = Encoding::ALL.iter().find(|e| is(e.name())) {
            Ok(encoding)
        } else {
            Err(Repr::UnknownEncoding { name: echo(s) }.into())
        }
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use std::fmt;

    use serde::de::{self, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Encoding;

    impl Serialize for Encoding {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_str(self.name())
        }
    }

    impl<'de> Deserialize<'de> for Encoding {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_str(NameVisitor)
        }
    }

    /// Reads the name with [`Encoding`]'s `FromStr`, the one reading of it.
    struct NameVisitor;

    impl Visitor<'_> for NameVisitor {
        type Value = Encoding;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an encoding name: decimal, hex, base32 or base58")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Encoding, E> {
            v.parse().map_err(E::custom)
        }
    }
}

/// Parses ID text in `encoding`, checking the range 0 ..= 2^64-1.
pub(crate) fn parse_id(encoding: Encoding, text: &str) -> Result<u64, Error> {
    // A leading minus on an otherwise valid number is a value, not a typo:
    // say that it is out of range rather than that '-' is not a digit.
    if let Some(rest) = text.strip_prefix('-')
        && matches!(encoding, Encoding::Decimal | Encoding::Hex)
        && encoding.parse_u64(rest).is_ok_and(|v| v != 0)
    {
        return Err(Error::invalid_id_text(
            text,
            encoding,
            InvalidIdKind::OutOfRange,
        ));
    }
    encoding
        .parse_u64(text)
        .map_err(|kind| Error::invalid_id_text(text, encoding, kind))
}

fn shift_position(kind: InvalidIdKind, by: usize) -> InvalidIdKind {
    match kind {
        InvalidIdKind::InvalidDigit {
            character,
            position,
        } => InvalidIdKind::InvalidDigit {
            character,
            position: position + by,
        },
        other => other,
    }
}

/// Accumulates digits; any bad character wins over overflow, so that
/// `99999999999999999999x` is reported for its `x`.
fn parse_radix(
    text: &str,
    radix: u64,
    digit: impl Fn(u8) -> Option<u8>,
) -> Result<u64, InvalidIdKind> {
    let mut value: u64 = 0;
    let mut overflow = false;
    for (position, character) in text.chars().enumerate() {
        let d =
            u8::try_from(character)
                .ok()
                .and_then(&digit)
                .ok_or(InvalidIdKind::InvalidDigit {
                    character,
                    position,
                })?;
        match value
            .checked_mul(radix)
            .and_then(|v| v.checked_add(d.into()))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
    }
    if overflow {
        Err(InvalidIdKind::OutOfRange)
    } else {
        Ok(value)
    }
}

fn crockford_value(b: u8) -> Option<u8> {
    let upper = b.to_ascii_uppercase();
    match upper {
        b'O' => Some(0),
        b'I' | b'L' => Some(1),
        _ => CROCKFORD.iter().position(|&c| c == upper).map(|p| p as u8),
    }
}

/// "00" to "99", for writing decimal digits two at a time.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Writes `value` in decimal at the end of `buf`, two digits at a time
/// (half the divisions of one at a time: writing batches of IDs and bulk
/// decoding spend much of their time here); returns where the digits start.
#[inline]
fn write_decimal(buf: &mut [u8; 20], mut value: u64) -> usize {
    let mut at = buf.len();
    while value >= 100 {
        let pair = (value % 100) as usize * 2;
        value /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if value >= 10 {
        let pair = value as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + value as u8;
    }
    at
}

/// Appends `value` in decimal to `out`, without the formatting machinery:
/// for writers of many numbers (batches of IDs, bulk decoding).
///
/// # Examples
///
/// ```
/// let mut out = b"id=".to_vec();
/// snowmint::push_decimal(&mut out, 1724551110457221119);
/// assert_eq!(out, b"id=1724551110457221119");
/// ```
#[inline]
pub fn push_decimal(out: &mut Vec<u8>, value: u64) {
    let mut buf = [0u8; 20];
    let at = write_decimal(&mut buf, value);
    out.extend_from_slice(&buf[at..]);
}

/// Writes `value` in base `RADIX` at the end of `buf`; returns where the
/// digits start.
#[inline]
fn write_digits<const RADIX: u64>(buf: &mut [u8; 20], mut value: u64, alphabet: &[u8]) -> usize {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = alphabet[(value % RADIX) as usize];
        value /= RADIX;
        if value == 0 {
            return at;
        }
    }
}

/// An ID written in one encoding, held on the stack.
///
/// Returned by [`SnowflakeId::encode`](crate::SnowflakeId::encode); it
/// implements `Display` and `as_str`, so writing many IDs allocates nothing.
///
/// # Examples
///
/// ```
/// use snowmint::{Encoding, SnowflakeId};
///
/// let id = SnowflakeId::from_u64(42);
/// assert_eq!(id.encode(Encoding::Base32).as_str(), "000000000001A");
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Encoded {
    buf: [u8; 20],
    start: u8,
}

impl Encoded {
    pub(crate) fn new(encoding: Encoding, value: u64) -> Encoded {
        let mut buf = [b'0'; 20];
        // A constant radix per arm: division by a constant compiles to a
        // multiplication, several times faster than a division by a value
        // known only at run time (bulk decoding spends its time here).
        let (mut at, alphabet, width): (usize, &[u8], usize) = match encoding {
            Encoding::Decimal => (write_decimal(&mut buf, value), b"0", 1),
            Encoding::Hex => (
                write_digits::<16>(&mut buf, value, HEX_DIGITS),
                HEX_DIGITS,
                HEX_WIDTH,
            ),
            Encoding::Base32 => (
                write_digits::<32>(&mut buf, value, CROCKFORD),
                CROCKFORD,
                BASE32_WIDTH,
            ),
            Encoding::Base58 => (write_digits::<58>(&mut buf, value, BASE58), BASE58, 1),
        };
        let padded = buf.len() - width;
        if at > padded {
            // The pad digit is the alphabet's zero: '0' in all of these
            // except base58, which is never padded.
            buf[padded..at].fill(alphabet[0]);
            at = padded;
        }
        Encoded {
            buf,
            start: at as u8,
        }
    }

    /// The text.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Encoding, SnowflakeId};
    ///
    /// assert_eq!(SnowflakeId::MAX.encode(Encoding::Hex).as_str(), "ffffffffffffffff");
    /// ```
    pub fn as_str(&self) -> &str {
        // Only ASCII from the alphabets above is ever written.
        std::str::from_utf8(&self.buf[self.start as usize..]).unwrap_or_default()
    }
}

impl fmt::Display for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl fmt::Debug for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl AsRef<str> for Encoded {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn decimal_digits_match_the_standard_formatting() {
        let mut samples = vec![
            0,
            1,
            9,
            10,
            99,
            100,
            101,
            999,
            1000,
            u64::MAX,
            u64::MAX >> 1,
        ];
        // Every power of ten and its neighbours, and a spread of others.
        let mut p = 1u64;
        while let Some(next) = p.checked_mul(10) {
            samples.extend([p - 1, p, p + 1]);
            p = next;
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            samples.push(x >> (x % 64));
        }
        for n in samples {
            let mut out = Vec::new();
            push_decimal(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
            assert_eq!(Encoded::new(Encoding::Decimal, n).as_str(), n.to_string());
        }
    }

    proptest! {
        #[test]
        fn every_encoding_round_trips(value: u64) {
            for encoding in Encoding::ALL {
                let text = Encoded::new(encoding, value);
                prop_assert_eq!(parse_id(encoding, text.as_str()), Ok(value));
            }
        }

        #[test]
        fn pushed_decimals_match_the_standard_library(value: u64) {
            let mut out = Vec::new();
            push_decimal(&mut out, value);
            prop_assert_eq!(String::from_utf8(out).unwrap(), value.to_string());
        }

        #[test]
        fn decimal_and_hex_match_the_standard_library(value: u64) {
            let (decimal, hex) = (Encoded::new(Encoding::Decimal, value), Encoded::new(Encoding::Hex, value));
            prop_assert_eq!(decimal.as_str(), value.to_string());
            prop_assert_eq!(hex.as_str(), format!("{value:016x}"));
        }
    }
}
