//! The decimal prefixes of an ID range: the shortest set of prefixes
//! whose numbers are exactly the range's, for searching text that holds
//! IDs (a search engine's "tweets of that minute", `grep`, `LIKE '…%'`).

use std::fmt;

/// Every decimal number of `digits` digits that starts with `prefix`.
///
/// # Examples
///
/// ```
/// use snowmint::decimal_prefixes;
///
/// let prefixes = decimal_prefixes(1200, 1399);
/// assert_eq!(prefixes.len(), 2);
/// assert_eq!((prefixes[0].to_string(), prefixes[0].digits()), ("12".to_owned(), 4));
/// assert_eq!(prefixes[1].to_string(), "13");
/// assert_eq!((prefixes[1].first(), prefixes[1].last()), (1300, 1399));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DecimalPrefix {
    /// The first number it stands for.
    first: u64,
    /// Digits of the numbers it stands for.
    digits: u8,
    /// Digits free after the prefix.
    free: u8,
}

impl DecimalPrefix {
    /// How many digits the numbers it stands for have.
    pub const fn digits(&self) -> u8 {
        self.digits
    }

    /// How many digits follow the prefix in each of its numbers.
    pub const fn free_digits(&self) -> u8 {
        self.free
    }

    /// The smallest number it stands for.
    pub const fn first(&self) -> u64 {
        self.first
    }

    /// The largest number it stands for.
    pub const fn last(&self) -> u64 {
        // Within u64: the prefix was cut from a range of u64s.
        (self.first as u128 + 10u128.pow(self.free as u32) - 1) as u64
    }

    /// How many numbers it stands for.
    pub const fn count(&self) -> u128 {
        10u128.pow(self.free as u32)
    }
}

impl fmt::Display for DecimalPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = u128::from(self.first) / 10u128.pow(u32::from(self.free));
        write!(f, "{prefix}")
    }
}

/// The shortest set of decimal prefixes whose numbers are exactly
/// `min..=max`, smallest first (empty when `min > max`).
///
/// Numbers of different lengths never share a prefix's meaning (`12`
/// followed by two digits is not `12` followed by three), so each prefix
/// says how many digits its numbers have. The set is the prefixes of the
/// largest aligned blocks `k·10^j ..= (k+1)·10^j − 1` inside the range:
/// no cover by prefixes is shorter, since any block of one lies in one of
/// these.
///
/// # Examples
///
/// ```
/// use snowmint::decimal_prefixes;
///
/// let texts = |min, max| -> Vec<String> {
///     decimal_prefixes(min, max).iter().map(|p| format!("{p}/{}", p.digits())).collect()
/// };
/// // 95-99, every 3-digit number (1-9 then two digits), 1000-1049.
/// assert_eq!(texts(95, 1049), [
///     "95/2", "96/2", "97/2", "98/2", "99/2",
///     "1/3", "2/3", "3/3", "4/3", "5/3", "6/3", "7/3", "8/3", "9/3",
///     "100/4", "101/4", "102/4", "103/4", "104/4",
/// ]);
/// assert_eq!(texts(0, 9), ["0/1", "1/1", "2/1", "3/1", "4/1", "5/1", "6/1", "7/1", "8/1", "9/1"]);
/// assert_eq!(texts(1000, 1999), ["1/4"]);
/// ```
pub fn decimal_prefixes(min: u64, max: u64) -> Vec<DecimalPrefix> {
    let mut prefixes = Vec::new();
    if min > max {
        return prefixes;
    }
    let (mut at, max) = (u128::from(min), u128::from(max));
    while at <= max {
        let digits = decimal_digits(at);
        // The numbers of this many digits: at ..= end.
        let end = max.min(10u128.pow(digits) - 1);
        while at <= end {
            // The largest aligned block that starts here and fits; never the
            // whole length class (a prefix of no digits), whose start has
            // fewer digits.
            let mut free = 0;
            while free + 1 < digits {
                let size = 10u128.pow(free + 1);
                if at % size != 0 || at + size - 1 > end {
                    break;
                }
                free += 1;
            }
            prefixes.push(DecimalPrefix {
                first: at as u64,
                digits: digits as u8,
                free: free as u8,
            });
            at += 10u128.pow(free);
        }
    }
    prefixes
}

/// How many decimal digits `n` has (1 for 0).
fn decimal_digits(n: u128) -> u32 {
    n.checked_ilog10().map_or(1, |log| log + 1)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The prefixes cover the range exactly, in order, and are maximal:
    /// no ten siblings of one parent are all there.
    fn check(min: u64, max: u64) {
        let prefixes = decimal_prefixes(min, max);
        let mut next = u128::from(min);
        for prefix in &prefixes {
            assert_eq!(
                u128::from(prefix.first()),
                next,
                "{min}..={max}: {prefixes:?}"
            );
            assert_eq!(
                decimal_digits(u128::from(prefix.first())),
                u32::from(prefix.digits())
            );
            assert_eq!(
                decimal_digits(u128::from(prefix.last())),
                u32::from(prefix.digits())
            );
            let text = prefix.to_string();
            assert_eq!(
                text.len() + usize::from(prefix.free_digits()),
                usize::from(prefix.digits())
            );
            assert!(prefix.first().to_string().starts_with(&text));
            assert!(prefix.last().to_string().starts_with(&text));
            next = u128::from(prefix.last()) + 1;
        }
        assert_eq!(next, u128::from(max) + 1);
        // Maximal: a parent block inside the range was not split.
        for prefix in &prefixes {
            let size = prefix.count() * 10;
            let parent = u128::from(prefix.first()) / size * size;
            let inside = u32::from(prefix.free_digits()) + 1 < u32::from(prefix.digits())
                && parent >= u128::from(min)
                && parent + size - 1 <= u128::from(max)
                && decimal_digits(parent) == u32::from(prefix.digits());
            assert!(!inside, "{prefix:?} could be its parent in {min}..={max}");
        }
    }

    #[test]
    fn edges() {
        for (min, max) in [
            (0, 0),
            (0, u64::MAX),
            (u64::MAX, u64::MAX),
            (9, 10),
            (99, 100),
            (1_724_551_110_456_246_272, 1_724_551_114_650_550_271),
            ((1 << 63) - 1, 1 << 63),
            (10_000_000_000_000_000_000, u64::MAX),
        ] {
            check(min, max);
        }
        assert!(decimal_prefixes(2, 1).is_empty());
        // Every number of 1 to 19 digits is 10 + 9 * 18 prefixes (0-9,
        // then 1-9 for each length).
        assert_eq!(
            decimal_prefixes(0, 9_999_999_999_999_999_999).len(),
            10 + 9 * 18
        );
    }

    proptest! {
        #[test]
        fn any_range_is_covered_exactly(a: u64, b: u64) {
            check(a.min(b), a.max(b));
        }

        #[test]
        fn narrow_ranges_are_covered_exactly(a: u64, width in 0u64..100_000) {
            check(a, a.saturating_add(width));
        }
    }
}
