//! The slots a node may claim: [`SlotRange`].

use std::fmt;
use std::str::FromStr;

use snowmint::Layout;

use super::config::ConfigError;

/// The slots a node may claim: `A-B` (both included) or a single `N`.
///
/// # Examples
///
/// ```
/// use snowmint::Layout;
/// use snowmint_fleet::SlotRange;
///
/// let range: SlotRange = "32-63".parse()?;
/// assert_eq!((range.first(), range.last(), range.len()), (32, 63, 32));
/// assert_eq!(range.to_string(), "32-63");
/// assert_eq!(SlotRange::all(Layout::TWITTER).to_string(), "0-1023");
/// assert!("9-3".parse::<SlotRange>().is_err());
/// assert_eq!(
///     "0-1024".parse::<SlotRange>()?.check(Layout::TWITTER).unwrap_err().to_string(),
///     "slots \"0-1024\" is invalid: slot 1024 is out of range (0..=1023)"
/// );
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotRange {
    first: u64,
    last: u64,
}

impl SlotRange {
    /// The range `first..=last`.
    ///
    /// # Errors
    ///
    /// When `first > last`.
    pub fn new(first: u64, last: u64) -> Result<SlotRange, ConfigError> {
        if first > last {
            return Err(ConfigError::Slots {
                value: format!("{first}-{last}"),
                reason: format!("the first slot {first} is after the last {last}"),
            });
        }
        Ok(SlotRange { first, last })
    }

    /// Every slot of `layout` (0-1023 for the Twitter layout).
    pub fn all(layout: Layout) -> SlotRange {
        SlotRange {
            first: 0,
            last: layout.node_count() - 1,
        }
    }

    /// The lowest slot of the range.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// The highest slot of the range.
    pub fn last(&self) -> u64 {
        self.last
    }

    /// How many slots the range holds.
    #[allow(clippy::len_without_is_empty)] // a range is never empty
    pub fn len(&self) -> u64 {
        self.last - self.first + 1
    }

    /// Whether `slot` is in the range.
    pub fn contains(&self, slot: u64) -> bool {
        (self.first..=self.last).contains(&slot)
    }

    /// Checks that every slot of the range names a node of `layout`.
    ///
    /// # Errors
    ///
    /// When the last slot is past the layout's node count.
    pub fn check(self, layout: Layout) -> Result<SlotRange, ConfigError> {
        match layout.node_from_slot(self.last) {
            Ok(_) => Ok(self),
            Err(err) => Err(ConfigError::Slots {
                value: self.to_string(),
                reason: err.to_string(),
            }),
        }
    }

    /// The slots of the range, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = u64> + use<> {
        self.first..=self.last
    }

    /// The first slots of the aligned blocks of `count` slots that lie
    /// wholly inside the range, lowest first: a block's first slot is a
    /// multiple of `count` (a power of two). With `count` 1, every slot.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint_fleet::SlotRange;
    ///
    /// let range: SlotRange = "2-13".parse()?;
    /// assert_eq!(range.blocks(4).collect::<Vec<_>>(), [4, 8]);
    /// assert_eq!(range.blocks(1).count(), 12);
    /// assert_eq!(range.blocks(16).count(), 0);
    /// # Ok::<(), snowmint_fleet::ConfigError>(())
    /// ```
    pub fn blocks(&self, count: u64) -> impl Iterator<Item = u64> + use<> {
        let count = count.max(1);
        let (first, last) = (self.first, self.last);
        // The first multiple of `count` at or after the range's first slot.
        let start = first.div_ceil(count).checked_mul(count);
        start
            .into_iter()
            .flat_map(move |start| {
                (start..=last).step_by(usize::try_from(count).unwrap_or(usize::MAX))
            })
            .take_while(move |block| block.checked_add(count - 1).is_some_and(|end| end <= last))
    }
}

impl FromStr for SlotRange {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = |reason: String| ConfigError::Slots {
            value: snowmint::value::echo(text),
            reason,
        };
        let number = |part: &str| {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid(format!(
                    "{:?} is not a slot number (expected A-B, e.g. 0-1023)",
                    snowmint::value::echo(part)
                )));
            }
            part.parse::<u64>().map_err(|_| {
                invalid(format!(
                    "slot {} is out of range (0..={})",
                    snowmint::value::echo(part),
                    u64::MAX
                ))
            })
        };
        let (first, last) = match text.split_once('-') {
            Some((first, last)) => (number(first)?, number(last)?),
            None => {
                let only = number(text)?;
                (only, only)
            }
        };
        SlotRange::new(first, last)
            .map_err(|_| invalid(format!("the first slot {first} is after the last {last}")))
    }
}

/// The block of `count` slots from `first`, as ranges are written:
/// "4-7" (`slots_held` in a claim's details, the errors of its claim).
pub(crate) fn block_text(first: u64, count: u64) -> String {
    format!("{first}-{}", first + count.saturating_sub(1))
}

impl fmt::Display for SlotRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.first, self.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn slot_ranges() {
        assert_eq!(
            "7".parse::<SlotRange>().unwrap(),
            SlotRange::new(7, 7).unwrap()
        );
        assert_eq!("1-3".parse::<SlotRange>().unwrap().len(), 3);
        // Text is taken as it is, as every value's reader does.
        for bad in [" 1-3", "1 - 3", "+1-3", "1-", "-3", ""] {
            assert!(bad.parse::<SlotRange>().is_err(), "{bad:?}");
        }
        let err = "a-3".parse::<SlotRange>().unwrap_err().to_string();
        assert_eq!(
            err,
            "slots \"a-3\" is invalid: \"a\" is not a slot number (expected A-B, e.g. 0-1023)"
        );
        let err = "5-3".parse::<SlotRange>().unwrap_err().to_string();
        assert_eq!(
            err,
            "slots \"5-3\" is invalid: the first slot 5 is after the last 3"
        );
    }
}
