//! A small seeded random number generator (SplitMix64), so that one seed
//! replays the same fault schedule and the same client requests.
//!
//! Not for anything but tests: it is fast, has a 64-bit state, and passes
//! the usual statistical batteries, which is all a fault schedule needs.

/// A SplitMix64 generator: each value is a mix of a counter stepped by a
/// fixed odd constant.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator that yields the same values for the same `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (`n` > 0), without the bias of a plain modulo.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        // Lemire's multiply-and-shift: the high half of a 128-bit product.
        let mut product = u128::from(self.next_u64()) * u128::from(n);
        if (product as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (product as u64) < threshold {
                product = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (product >> 64) as u64
    }

    /// A value in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        assert!(low <= high, "Rng::between({low}, {high})");
        low + self.below(high - low + 1)
    }

    /// True with probability `numerator / denominator`.
    pub fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.below(denominator) < numerator
    }

    /// A value in `low..=high` (`low` > 0) whose logarithm is uniform:
    /// 10..=10000 gives as many values under 100 as over 1000, so that
    /// small and large offsets are both tried.
    pub fn log_between(&mut self, low: u64, high: u64) -> u64 {
        assert!(0 < low && low <= high, "Rng::log_between({low}, {high})");
        let (low_log, high_log) = ((low as f64).ln(), (high as f64).ln());
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let value = (low_log + unit * (high_log - low_log)).exp().round() as u64;
        value.clamp(low, high)
    }

    /// One of `items`, picked uniformly.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs for seed 0 are SplitMix64's published reference
    /// values (as in the Java `SplittableRandom` and Vigna's C code).
    #[test]
    fn the_same_seed_gives_the_reference_sequence() {
        let mut rng = Rng::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(rng.next_u64(), 0x06c4_5d18_8009_454f);
    }

    /// Values stay in their ranges and reach both ends.
    #[test]
    fn ranges_are_respected_and_covered() {
        let mut rng = Rng::new(7);
        let (mut low, mut high) = (false, false);
        for _ in 0..10_000 {
            let value = rng.between(3, 9);
            assert!((3..=9).contains(&value));
            low |= value == 3;
            high |= value == 9;
        }
        assert!(low && high);
        let mut small = 0;
        for _ in 0..10_000 {
            let value = rng.log_between(10, 10_000);
            assert!((10..=10_000).contains(&value));
            small += usize::from(value < 100);
        }
        // A third of the logarithmic range lies under 100.
        assert!((2_500..4_200).contains(&small), "{small}");
    }
}
