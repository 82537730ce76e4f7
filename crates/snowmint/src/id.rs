//! The ID type itself.

use std::fmt;
use std::str::FromStr;

use crate::encoding::{self, Encoded, Encoding};
use crate::error::{Error, InvalidIdKind, MAX_ID};

/// A Snowflake ID: a 63-bit integer, 0 ..= 2^63-1.
///
/// The type only guarantees the range; which bits mean what is the
/// [`Layout`](crate::Layout)'s business. Ordering is numeric, which for IDs
/// of one layout is time order.
///
/// - `Display` and `FromStr` use decimal, strictly: digits only, no sign, no
///   whitespace.
/// - Conversions from `u64` and `i64` are checked; conversions to them always
///   succeed.
/// - With the `serde` feature it serializes as a decimal *string* (JavaScript
///   loses precision above 2^53) and deserializes from a string or a number.
///
/// # Examples
///
/// ```
/// use snowmint::SnowflakeId;
///
/// let id: SnowflakeId = "1724551110457221119".parse()?;
/// assert_eq!(id.as_u64(), 1724551110457221119);
/// assert!("-1".parse::<SnowflakeId>().is_err());
/// assert!(SnowflakeId::try_from(u64::MAX).is_err());
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(transparent)]
pub struct SnowflakeId(u64);

impl SnowflakeId {
    /// The smallest ID, 0.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::SnowflakeId::MIN.as_u64(), 0);
    /// ```
    pub const MIN: SnowflakeId = SnowflakeId(0);
    /// The largest ID, 2^63 - 1.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::SnowflakeId::MAX.to_string(), "9223372036854775807");
    /// ```
    pub const MAX: SnowflakeId = SnowflakeId(MAX_ID);

    /// Builds an ID from a `u64`, checking that it is at most 2^63-1.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::SnowflakeId;
    ///
    /// assert!(SnowflakeId::from_u64(1 << 62).is_ok());
    /// assert!(SnowflakeId::from_u64(1 << 63).is_err());
    /// ```
    pub fn from_u64(value: u64) -> Result<SnowflakeId, Error> {
        SnowflakeId::from_u64_checked(value).ok_or_else(|| {
            Error::invalid_id(
                &value.to_string(),
                Encoding::Decimal,
                InvalidIdKind::OutOfRange,
            )
        })
    }

    /// Builds an ID from a `u64`, or `None` above 2^63-1.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::SnowflakeId;
    ///
    /// assert_eq!(SnowflakeId::from_u64_checked(7).map(SnowflakeId::as_u64), Some(7));
    /// assert_eq!(SnowflakeId::from_u64_checked(u64::MAX), None);
    /// ```
    pub const fn from_u64_checked(value: u64) -> Option<SnowflakeId> {
        if value <= MAX_ID {
            Some(SnowflakeId(value))
        } else {
            None
        }
    }

    /// Builds an ID from an `i64`, checking that it is not negative.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::SnowflakeId;
    ///
    /// assert_eq!(SnowflakeId::from_i64(5)?.as_u64(), 5);
    /// assert_eq!(
    ///     SnowflakeId::from_i64(-1).unwrap_err().to_string(),
    ///     "ID -1 is out of range (0..=9223372036854775807)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn from_i64(value: i64) -> Result<SnowflakeId, Error> {
        u64::try_from(value).map(SnowflakeId).map_err(|_| {
            Error::invalid_id(
                &value.to_string(),
                Encoding::Decimal,
                InvalidIdKind::OutOfRange,
            )
        })
    }

    /// Builds an ID from a value already known to be at most 2^63-1.
    pub(crate) const fn from_raw(value: u64) -> SnowflakeId {
        debug_assert!(value <= MAX_ID);
        SnowflakeId(value)
    }

    /// The ID as a `u64`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::SnowflakeId::MAX.as_u64(), (1 << 63) - 1);
    /// ```
    pub const fn as_u64(self) -> u64 {
        self.0
    }

    /// The ID as an `i64` (always non-negative), the type databases and JVM
    /// languages use.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::SnowflakeId::MAX.as_i64(), i64::MAX);
    /// ```
    pub const fn as_i64(self) -> i64 {
        // Lossless: the value is at most 2^63-1 = i64::MAX.
        self.0 as i64
    }

    /// Parses ID text in the given encoding.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Encoding, SnowflakeId};
    ///
    /// let id = SnowflakeId::parse(Encoding::Base58, "51BRJMCGQge")?;
    /// assert_eq!(id.encode(Encoding::Base58).as_str(), "51BRJMCGQge");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn parse(encoding: Encoding, text: &str) -> Result<SnowflakeId, Error> {
        encoding::parse_id(encoding, text).map(SnowflakeId)
    }

    /// Every encoding in which `text` is a valid ID, with the ID it reads
    /// as there, in the order of [`Encoding::ALL`]: what to suggest when
    /// text does not read in the encoding asked for.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Encoding, SnowflakeId};
    ///
    /// let readings: Vec<_> = SnowflakeId::readings("17eed6190fcedfff").collect();
    /// assert_eq!(readings, [(Encoding::Hex, SnowflakeId::from_u64(1724551110457221119)?)]);
    /// assert_eq!(SnowflakeId::readings("12").count(), 4);
    /// assert_eq!(SnowflakeId::readings("-1").count(), 0);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn readings(text: &str) -> impl Iterator<Item = (Encoding, SnowflakeId)> + '_ {
        Encoding::ALL
            .into_iter()
            .filter_map(move |encoding| Some((encoding, SnowflakeId::parse(encoding, text).ok()?)))
    }

    /// Writes the ID in the given encoding, without allocating.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Encoding, SnowflakeId};
    ///
    /// let id = SnowflakeId::from_u64(1724551110457221119)?;
    /// assert_eq!(id.encode(Encoding::Decimal).as_str(), "1724551110457221119");
    /// assert_eq!(id.encode(Encoding::Base32).as_str(), "1FVPP347WXQZZ");
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn encode(self, encoding: Encoding) -> Encoded {
        Encoded::new(encoding, self.0)
    }
}

impl fmt::Display for SnowflakeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for SnowflakeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SnowflakeId({})", self.0)
    }
}

impl FromStr for SnowflakeId {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SnowflakeId::parse(Encoding::Decimal, s)
    }
}

impl TryFrom<u64> for SnowflakeId {
    type Error = Error;

    fn try_from(value: u64) -> Result<Self, Self::Error> {
        SnowflakeId::from_u64(value)
    }
}

impl TryFrom<i64> for SnowflakeId {
    type Error = Error;

    fn try_from(value: i64) -> Result<Self, Self::Error> {
        SnowflakeId::from_i64(value)
    }
}

impl From<SnowflakeId> for u64 {
    fn from(id: SnowflakeId) -> u64 {
        id.as_u64()
    }
}

impl From<SnowflakeId> for i64 {
    fn from(id: SnowflakeId) -> i64 {
        id.as_i64()
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use std::fmt;

    use serde::de::{self, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::SnowflakeId;

    impl Serialize for SnowflakeId {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_str(&self.encode(crate::Encoding::Decimal))
        }
    }

    impl<'de> Deserialize<'de> for SnowflakeId {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(IdVisitor)
        }
    }

    struct IdVisitor;

    impl Visitor<'_> for IdVisitor {
        type Value = SnowflakeId;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a Snowflake ID: a decimal string or an integer in 0..=9223372036854775807")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<SnowflakeId, E> {
            v.parse().map_err(E::custom)
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<SnowflakeId, E> {
            SnowflakeId::from_u64(v).map_err(E::custom)
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<SnowflakeId, E> {
            SnowflakeId::from_i64(v).map_err(E::custom)
        }
    }
}
