//! UUIDs (RFC 9562): versions 1 and 6 carry 60 bits of 100-nanosecond
//! intervals since 1582-10-15, version 7 carries 48 bits of Unix
//! milliseconds; the others carry no time.

use std::fmt;
use std::str::FromStr;

use super::{HEX, ParseError, Problem, Since, TextFamily, bad_character, date_ms, hex};
use crate::inspect::reading::Field;
use crate::inspect::time::Time;

/// 100 ns intervals from 1582-10-15T00:00:00Z (the Gregorian reform, UUID
/// time's zero) to the Unix epoch.
const GREGORIAN_TO_UNIX: i128 = 0x01B2_1DD2_1381_4000;

/// A UUID, read in its 36-character form (`8-4-4-4-12` hex digits) or as
/// 32 hex digits, in either case.
///
/// # Examples
///
/// ```
/// use snowmint::inspect::Uuid;
///
/// // RFC 9562's example of version 7 (appendix A.6).
/// let uuid: Uuid = "017F22E2-79B0-7CC3-98C4-DC0C0C07398F".parse()?;
/// assert_eq!(uuid.version(), 7);
/// assert_eq!(uuid.time().unwrap().to_string(), "2022-02-22T19:22:22.000Z");
/// assert_eq!(uuid.to_string(), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// # Ok::<(), snowmint::inspect::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uuid(u128);

/// Which layout of UUID the variant bits (the top bits of the 9th byte)
/// name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UuidVariant {
    /// `0xxx`: Apollo NCS's, kept for old UUIDs.
    Ncs,
    /// `10xx`: RFC 9562's (and RFC 4122's), the one with versions.
    Rfc9562,
    /// `110x`: Microsoft's, kept for old GUIDs.
    Microsoft,
    /// `111x`: reserved.
    Future,
}

impl UuidVariant {
    /// Its name in fields: `ncs`, `rfc9562`, `microsoft`, `future`.
    pub const fn name(self) -> &'static str {
        match self {
            UuidVariant::Ncs => "ncs",
            UuidVariant::Rfc9562 => "rfc9562",
            UuidVariant::Microsoft => "microsoft",
            UuidVariant::Future => "future",
        }
    }
}

impl Uuid {
    /// The UUID's 128 bits.
    pub const fn as_u128(&self) -> u128 {
        self.0
    }

    /// The version: the top 4 bits of the 7th byte.
    pub const fn version(&self) -> u8 {
        (self.0 >> 76) as u8 & 0xF
    }

    /// The variant.
    pub const fn variant(&self) -> UuidVariant {
        let bits = (self.0 >> 61) as u8 & 0b111;
        if bits & 0b100 == 0 {
            UuidVariant::Ncs
        } else if bits & 0b010 == 0 {
            UuidVariant::Rfc9562
        } else if bits & 0b001 == 0 {
            UuidVariant::Microsoft
        } else {
            UuidVariant::Future
        }
    }

    /// Whether it is RFC 9562's version `version`.
    const fn is(&self, version: u8) -> bool {
        matches!(self.variant(), UuidVariant::Rfc9562) && self.version() == version
    }

    /// Version 1's and 6's 60-bit count of 100 ns intervals since
    /// 1582-10-15, from its three pieces in the order each version keeps
    /// them.
    fn gregorian_ticks(&self) -> Option<u64> {
        let v = self.0;
        let time_high_or_low = (v >> 96) as u64; // 32 bits
        let time_mid = (v >> 80) as u64 & 0xFFFF;
        let twelve = (v >> 64) as u64 & 0xFFF;
        if self.is(1) {
            // time_low (32) | time_mid (16) | version | time_high (12)
            Some(twelve << 48 | time_mid << 32 | time_high_or_low)
        } else if self.is(6) {
            // time_high (32) | time_mid (16) | version | time_low (12)
            Some(time_high_or_low << 28 | time_mid << 12 | twelve)
        } else {
            None
        }
    }

    /// When it was made: versions 1 and 6 in 100 ns, version 7 in
    /// milliseconds; `None` for the others.
    pub fn time(&self) -> Option<Time> {
        if let Some(ticks) = self.gregorian_ticks() {
            let unix_ns = (i128::from(ticks) - GREGORIAN_TO_UNIX) * 100;
            Some(Time::from_unix_ns(unix_ns, 100))
        } else if self.is(7) {
            Some(Time::from_unix_ms((self.0 >> 80) as i64))
        } else {
            None
        }
    }

    /// The clock sequence of versions 1 and 6 (14 bits).
    pub const fn clock_seq(&self) -> u16 {
        (self.0 >> 48) as u16 & 0x3FFF
    }

    /// The node of versions 1 and 6 (48 bits, often a MAC address).
    pub const fn node(&self) -> u64 {
        self.0 as u64 & 0xFFFF_FFFF_FFFF
    }
}

impl FromStr for Uuid {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Uuid, ParseError> {
        let bytes = text.as_bytes();
        let dashed = match bytes.len() {
            36 => true,
            32 => false,
            _ => {
                let found = text.chars().count();
                let problem = Problem::Length {
                    found,
                    expected: "36 (8-4-4-4-12) or 32",
                };
                return Err(ParseError::new("UUID", text, problem));
            }
        };
        let mut value: u128 = 0;
        for (at, &b) in bytes.iter().enumerate() {
            if dashed && matches!(at, 8 | 13 | 18 | 23) {
                if b != b'-' {
                    return Err(bad_character("UUID", text, at, "'-'"));
                }
                continue;
            }
            let digit = HEX.digits[usize::from(b)];
            if digit == super::NOT {
                return Err(bad_character("UUID", text, at, HEX.what));
            }
            value = value << 4 | u128::from(digit);
        }
        Ok(Uuid(value))
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = hex(self.0, 32);
        write!(
            f,
            "{}-{}-{}-{}-{}",
            &text[..8],
            &text[8..12],
            &text[12..16],
            &text[16..20],
            &text[20..]
        )
    }
}

impl TextFamily for Uuid {
    fn family(&self) -> &'static str {
        match (self.variant(), self.version()) {
            _ if self.0 == 0 => "uuid-nil",
            _ if self.0 == u128::MAX => "uuid-max",
            (UuidVariant::Rfc9562, 1) => "uuid-v1",
            (UuidVariant::Rfc9562, 2) => "uuid-v2",
            (UuidVariant::Rfc9562, 3) => "uuid-v3",
            (UuidVariant::Rfc9562, 4) => "uuid-v4",
            (UuidVariant::Rfc9562, 5) => "uuid-v5",
            (UuidVariant::Rfc9562, 6) => "uuid-v6",
            (UuidVariant::Rfc9562, 7) => "uuid-v7",
            (UuidVariant::Rfc9562, 8) => "uuid-v8",
            _ => "uuid",
        }
    }

    fn since(&self) -> Since {
        if self.is(1) {
            Since {
                unix_ms: date_ms(1990, 1, 1),
                what: "1990, OSF DCE's time-based UUIDs, which RFC 4122 took up",
            }
        } else {
            Since {
                unix_ms: date_ms(2020, 1, 1),
                what: "2020, the first draft of versions 6 and 7",
            }
        }
    }

    fn time(&self) -> Option<Time> {
        Uuid::time(self)
    }

    fn fields(&self) -> Vec<Field> {
        let mut fields = vec![
            Field::number("version", u64::from(self.version())),
            Field::text("variant", self.variant().name()),
        ];
        if self.is(1) || self.is(6) {
            fields.push(Field::number("clock_seq", u64::from(self.clock_seq())));
            fields.push(Field::text("node", hex(u128::from(self.node()), 12)));
        } else if self.is(7) {
            fields.push(Field::number("rand_a", (self.0 >> 64) as u64 & 0xFFF));
            fields.push(Field::text("rand_b", hex(self.0 & ((1 << 62) - 1), 16)));
        }
        fields
    }

    fn timeless(&self) -> &'static str {
        match (self.variant(), self.version()) {
            _ if self.0 == 0 => "the nil UUID holds no time",
            _ if self.0 == u128::MAX => "the max UUID holds no time",
            (UuidVariant::Rfc9562, 2) => {
                "a version 2 (DCE security) UUID overwrites its time with a local id"
            }
            (UuidVariant::Rfc9562, 3 | 5) => {
                "a version 3 or 5 UUID is a hash of a name, with no time"
            }
            (UuidVariant::Rfc9562, 4) => "a version 4 UUID is random, with no time",
            (UuidVariant::Rfc9562, 8) => "a version 8 UUID's bits are its maker's own",
            (UuidVariant::Rfc9562, _) => "this version has no time field",
            _ => "only RFC 9562's variant has time fields",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9562, appendix A: the same instant (2022-02-22T19:22:22Z) as
    /// versions 1, 6 and 7.
    #[test]
    fn rfc_9562_examples() {
        let v1: Uuid = "C232AB00-9414-11EC-B3C8-9F6BDECED846".parse().unwrap();
        let v6: Uuid = "1EC9414C-232A-6B00-B3C8-9F6BDECED846".parse().unwrap();
        let v7: Uuid = "017F22E2-79B0-7CC3-98C4-DC0C0C07398F".parse().unwrap();
        assert_eq!(
            v1.time().unwrap().to_string(),
            "2022-02-22T19:22:22.0000000Z"
        );
        assert_eq!(v6.time(), v1.time());
        assert_eq!(v7.time().unwrap().unix_ms(), 1_645_557_742_000);
        assert_eq!((v1.clock_seq(), v1.node()), (0x33C8, 0x9F6B_DECE_D846));
        assert_eq!((v6.clock_seq(), v6.node()), (v1.clock_seq(), v1.node()));
    }

    #[test]
    fn forms_and_errors() {
        let dashed: Uuid = "550e8400-e29b-41d4-a716-446655440000".parse().unwrap();
        let plain: Uuid = "550E8400E29B41D4A716446655440000".parse().unwrap();
        assert_eq!(dashed, plain);
        assert_eq!(dashed.time(), None);
        assert_eq!(dashed.family(), "uuid-v4");
        assert_eq!(
            "550e8400-e29b-41d4-a716_446655440000"
                .parse::<Uuid>()
                .unwrap_err()
                .to_string(),
            "UUID \"550e8400-e29b-41d4-a716_446655440000\" is not valid: '_' at position 23 (expected '-')"
        );
        assert_eq!(
            "550e84".parse::<Uuid>().unwrap_err().to_string(),
            "UUID \"550e84\" is not valid: it has 6 characters (expected 36 (8-4-4-4-12) or 32)"
        );
        assert_eq!(
            "550e8400-e29b-41d4-a716-44665544000g"
                .parse::<Uuid>()
                .unwrap_err()
                .to_string(),
            "UUID \"550e8400-e29b-41d4-a716-44665544000g\" is not valid: 'g' at position 35 (expected a hex digit)"
        );
    }
}
