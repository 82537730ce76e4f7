//! The ID type itself.

use std::fmt;
use std::str::FromStr;

use crate::encoding::{self, Encoded, Encoding};
use crate::error::{Error, InvalidIdKind, Repr};

/// A Snowflake ID: a 64-bit unsigned integer.
///
/// The type holds any `u64`; which bits mean what, and which values are
/// IDs of a family, is the [`Layout`](crate::Layout)'s business
/// ([`Layout::max_id`](crate::Layout::max_id), [`Layout::decode`](crate::Layout::decode)):
/// a Twitter ID keeps the top bit clear, a Discord ID may use it.
/// Ordering is numeric, which for IDs of one layout is time order.
///
/// - `Display` and `FromStr` use decimal, strictly: digits only, no sign, no
///   whitespace.
/// - Conversions from `u64` always succeed, from `i64` are checked (no
///   negative IDs); to `i64` is checked too (`i64::try_from`), since an ID
///   may use the top bit.
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
/// assert_eq!(SnowflakeId::from(u64::MAX), SnowflakeId::MAX);
/// assert!(i64::try_from(SnowflakeId::MAX).is_err());
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
    /// The largest ID of any layout, 2^64 - 1; each layout has its own
    /// [`max_id`](crate::Layout::max_id).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::SnowflakeId::MAX.to_string(), "18446744073709551615");
    /// ```
    pub const MAX: SnowflakeId = SnowflakeId(u64::MAX);

    /// The ID with the value `value`.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::SnowflakeId;
    ///
    /// assert_eq!(SnowflakeId::from_u64(1 << 63).as_u64(), 1 << 63);
    /// ```
    pub const fn from_u64(value: u64) -> SnowflakeId {
        SnowflakeId(value)
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
    ///     "ID -1 is out of range (0..=18446744073709551615)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn from_i64(value: i64) -> Result<SnowflakeId, Error> {
        u64::try_from(value).map(SnowflakeId).map_err(|_| {
            Error::invalid_id_text(
                &value.to_string(),
                Encoding::Decimal,
                InvalidIdKind::OutOfRange,
            )
        })
    }

    /// The ID as a `u64`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::SnowflakeId::MAX.as_u64(), u64::MAX);
    /// ```
    pub const fn as_u64(self) -> u64 {
        self.0
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
    /// assert_eq!(readings, [(Encoding::Hex, SnowflakeId::from_u64(1724551110457221119))]);
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
    /// let id = SnowflakeId::from_u64(1724551110457221119);
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

impl From<u64> for SnowflakeId {
    fn from(value: u64) -> Self {
        SnowflakeId(value)
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

/// The ID as an `i64`, the type databases and JVM languages use: checked,
/// since an ID of a 64-bit layout may use the top bit.
///
/// # Examples
///
/// ```
/// use snowmint::SnowflakeId;
///
/// assert_eq!(i64::try_from(SnowflakeId::from_u64(5))?, 5);
/// assert_eq!(
///     i64::try_from(SnowflakeId::from_u64(1 << 63)).unwrap_err().to_string(),
///     "ID 9223372036854775808 is out of range (0..=9223372036854775807)"
/// );
/// # Ok::<(), snowmint::Error>(())
/// ```
impl TryFrom<SnowflakeId> for i64 {
    type Error = Error;

    fn try_from(id: SnowflakeId) -> Result<i64, Error> {
        i64::try_from(id.0).map_err(|_| {
            Repr::InvalidId {
                input: id.to_string(),
                encoding: Encoding::Decimal,
                kind: InvalidIdKind::OutOfRange,
                max: i64::MAX as u64,
            }
            .into()
        })
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
            f.write_str(
                "a Snowflake ID: a decimal string or an integer in 0..=18446744073709551615",
            )
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<SnowflakeId, E> {
            v.parse().map_err(E::custom)
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<SnowflakeId, E> {
            Ok(SnowflakeId::from_u64(v))
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<SnowflakeId, E> {
            SnowflakeId::from_i64(v).map_err(E::custom)
        }
    }
}
