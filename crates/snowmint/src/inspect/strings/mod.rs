//! The families of IDs written as text rather than as a number: each is
//! read exactly (length, alphabet, range), and gives its time and fields.
//!
//! | family | text | time |
//! |---|---|---|
//! | [`Ulid`] | 26 Crockford base32 characters | 48 bits of Unix ms |
//! | [`Uuid`] | 8-4-4-4-12 or 32 hex digits | v1 and v6: 100 ns since 1582-10-15; v7: Unix ms; others none |
//! | [`ObjectId`] | 24 hex digits | 32 bits of Unix seconds |
//! | [`Ksuid`] | 27 base62 characters | 32 bits of seconds since 1400000000 |
//! | [`Tid`] | 13 base32-sortable characters | 53 bits of Unix µs |
//! | [`MisskeyAid`], [`MisskeyAidx`] | 10 or 16 base36 characters | 8 characters of ms since 2000-01-01 |
//! | [`Tsid`] | 13 Crockford base32 characters | 42 bits of ms since 2020-01-01 |

use std::fmt;

use crate::kind::ErrorKind;
use crate::value::echo;

use super::reading::Field;
use super::time::Time;

mod ksuid;
mod misskey;
mod objectid;
mod tid;
mod tsid;
mod ulid;
mod uuid;

pub use ksuid::Ksuid;
pub use misskey::{MisskeyAid, MisskeyAidx};
pub use objectid::ObjectId;
pub use tid::Tid;
pub use tsid::Tsid;
pub use ulid::Ulid;
pub use uuid::{Uuid, UuidVariant};

/// A family of IDs written as text: how the inspector reads one.
pub(crate) trait TextFamily: Sized {
    /// The family's name in readings.
    fn family(&self) -> &'static str;
    /// When the family began, in Unix ms, and what that date is.
    fn since(&self) -> Since;
    /// When the ID was made, if it says.
    fn time(&self) -> Option<Time>;
    /// The family's fields.
    fn fields(&self) -> Vec<Field>;
    /// Why a reading without a time has none.
    fn timeless(&self) -> &'static str {
        "it holds no time"
    }
}

/// When a family began: IDs that read as made before it are implausible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Since {
    /// Unix milliseconds.
    pub(crate) unix_ms: i64,
    /// What the date is, for people: `2016-06-14, the spec's first release`.
    pub(crate) what: &'static str,
}

/// Why text is not an ID of a family.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::Ulid;
///
/// let error = "8ZZZZZZZZZZZZZZZZZZZZZZZZZ".parse::<Ulid>().unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "ULID \"8ZZZZZZZZZZZZZZZZZZZZZZZZZ\" is out of range (00000000000000000000000000..=7ZZZZZZZZZZZZZZZZZZZZZZZZZ)"
/// );
/// assert_eq!(error.kind(), snowmint::ErrorKind::OutOfRange);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    family: &'static str,
    input: String,
    problem: Problem,
}

/// What was wrong with the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// Not the family's length.
    Length {
        /// How many characters were found.
        found: usize,
        /// The lengths the family has, such as `26` or `32 or 36`.
        expected: &'static str,
    },
    /// A character that is not one of the family's alphabet (or not where
    /// it is, such as a UUID's dashes).
    Character {
        /// The character.
        character: char,
        /// Its position, in characters from 0.
        position: usize,
        /// What was expected there.
        expected: &'static str,
    },
    /// Well formed, but beyond the family's largest value.
    OutOfRange {
        /// The family's range, written as its text.
        range: &'static str,
    },
}

impl ParseError {
    pub(crate) fn new(family: &'static str, input: &str, problem: Problem) -> ParseError {
        ParseError {
            family,
            input: echo(input),
            problem,
        }
    }

    /// The family's name as messages write it (`ULID`, `UUID`, `KSUID`).
    pub fn family(&self) -> &'static str {
        self.family
    }

    /// The text, cut to a readable length.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// What was wrong.
    pub fn problem(&self) -> Problem {
        self.problem
    }

    /// The kind of error, as the core's errors are classed: text that does
    /// not read ([`ErrorKind::InvalidText`]) or a value past the family's
    /// range ([`ErrorKind::OutOfRange`]).
    pub fn kind(&self) -> ErrorKind {
        match self.problem {
            Problem::OutOfRange { .. } => ErrorKind::OutOfRange,
            Problem::Length { .. } | Problem::Character { .. } => ErrorKind::InvalidText,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (family, input) = (self.family, &self.input);
        match self.problem {
            Problem::Length { found, expected } => write!(
                f,
                "{family} {input:?} is not valid: it has {found} characters (expected {expected})"
            ),
            Problem::Character {
                character,
                position,
                expected,
            } => write!(
                f,
                "{family} {input:?} is not valid: {character:?} at position {position} (expected {expected})"
            ),
            Problem::OutOfRange { range } => {
                write!(f, "{family} {input:?} is out of range ({range})")
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// A digit table: the value of each byte in an alphabet, or [`NOT`].
pub(crate) type Digits = [u8; 256];

/// Not a digit of the alphabet.
pub(crate) const NOT: u8 = 0xFF;

/// The digit table of `alphabet`; with `fold_case`, a letter's other case
/// reads as the letter.
pub(crate) const fn digits(alphabet: &[u8], fold_case: bool) -> Digits {
    let mut table = [NOT; 256];
    let mut i = 0;
    while i < alphabet.len() {
        let c = alphabet[i];
        table[c as usize] = i as u8;
        if fold_case {
            table[c.to_ascii_lowercase() as usize] = i as u8;
            table[c.to_ascii_uppercase() as usize] = i as u8;
        }
        i += 1;
    }
    table
}

/// An alphabet: the value of each byte, its radix, and how messages name
/// it.
pub(crate) struct Alphabet {
    pub(crate) digits: Digits,
    pub(crate) radix: u32,
    pub(crate) what: &'static str,
}

/// Hexadecimal digits, either case.
pub(crate) const HEX: Alphabet = Alphabet {
    digits: digits(b"0123456789abcdef", true),
    radix: 16,
    what: "a hex digit",
};
/// Crockford's base32 digits, in the upper case they are written in.
pub(crate) const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Crockford's base32 digits, either case, without `I L O U`.
pub(crate) const CROCKFORD_DIGITS: Alphabet = Alphabet {
    digits: digits(CROCKFORD, true),
    radix: 32,
    what: "a Crockford base32 digit: 0-9 or A-Z without I, L, O, U",
};

/// The shape of a family's text: its length, alphabet and largest value.
pub(crate) struct Format {
    /// The family's name in messages (`ULID`).
    pub(crate) name: &'static str,
    /// Its length, in characters.
    pub(crate) len: usize,
    pub(crate) alphabet: &'static Alphabet,
    /// How many bits its value has at most.
    pub(crate) bits: u32,
    /// Its range, written as its text, for messages.
    pub(crate) range: &'static str,
}

impl Format {
    /// Reads `text`, of exactly the shape's length and alphabet, as a
    /// number of the shape's bits at most.
    pub(crate) fn read(&self, text: &str) -> Result<u128, ParseError> {
        let found = text.chars().count();
        if found != self.len {
            let expected = LENGTHS.get(self.len).copied().unwrap_or("more");
            return Err(ParseError::new(
                self.name,
                text,
                Problem::Length { found, expected },
            ));
        }
        let mut value: u128 = 0;
        let mut overflow = false;
        for (position, &b) in text.as_bytes().iter().enumerate() {
            let digit = self.alphabet.digits[usize::from(b)];
            if digit == NOT {
                return Err(bad_character(self.name, text, position, self.alphabet.what));
            }
            match value
                .checked_mul(u128::from(self.alphabet.radix))
                .and_then(|v| v.checked_add(u128::from(digit)))
            {
                Some(v) => value = v,
                None => overflow = true,
            }
        }
        if overflow || (self.bits < 128 && value >> self.bits != 0) {
            let range = self.range;
            return Err(ParseError::new(
                self.name,
                text,
                Problem::OutOfRange { range },
            ));
        }
        Ok(value)
    }
}

/// The error for the character at byte `at` of `text` (which is all ASCII
/// up to there, since every alphabet here is).
pub(crate) fn bad_character(
    family: &'static str,
    text: &str,
    at: usize,
    expected: &'static str,
) -> ParseError {
    let character = text[at..].chars().next().unwrap_or('\u{fffd}');
    ParseError::new(
        family,
        text,
        Problem::Character {
            character,
            position: text[..at].chars().count(),
            expected,
        },
    )
}

/// Lengths as messages write them, by length (for [`Format::read`]).
const LENGTHS: [&str; 37] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
    "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31", "32",
    "33", "34", "35", "36",
];

/// Writes `value` in `len` digits of `alphabet` (most significant first).
pub(crate) fn write_fixed(mut value: u128, len: usize, alphabet: &[u8]) -> String {
    let radix = alphabet.len() as u128;
    let mut out = vec![alphabet[0]; len];
    for slot in out.iter_mut().rev() {
        *slot = alphabet[(value % radix) as usize];
        value /= radix;
    }
    // Only bytes of the (ASCII) alphabet were written.
    String::from_utf8(out).unwrap_or_default()
}

/// `value` as `digits` lower-case hex digits.
pub(crate) fn hex(value: u128, digits: usize) -> String {
    format!("{value:0digits$x}")
}

/// Unix milliseconds of a UTC date, for the tables of when families
/// began.
pub(crate) const fn date_ms(year: i64, month: i64, day: i64) -> i64 {
    // H. Hinnant's days-from-civil, as the core's calendar (time.rs).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    (era * 146_097 + day_of_era - 719_468) * 86_400_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_match_the_core_calendar() {
        for (y, m, d) in [(1970, 1, 1), (2000, 1, 1), (2016, 2, 29), (1582, 10, 15)] {
            let text = format!("{y:04}-{m:02}-{d:02}T00:00:00Z");
            assert_eq!(
                date_ms(y, m, d),
                crate::parse_time(&text).unwrap(),
                "{text}"
            );
        }
    }
}
