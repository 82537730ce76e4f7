//! A run of IDs taken with one compare-and-swap.

use crate::id::SnowflakeId;

/// A run of IDs, all from one tick, taken with one compare-and-swap by
/// [`Generator::next_run`](crate::Generator::next_run).
///
/// Within a tick only the sequence changes, so the IDs of a run are evenly
/// spaced: consecutive integers when the sequence is the lowest field (as
/// in Twitter's layout), 2^k apart when k bits lie below it (Sonyflake's
/// machine id). The run iterates over them.
///
/// # Examples
///
/// ```
/// use snowmint::{Generator, Layout, Node};
///
/// let generator = Generator::new(Layout::TWITTER, Node::default())?;
/// let run = generator.next_run(100)?;
/// assert!(run.len() >= 1 && run.len() <= 100);
/// let ids: Vec<_> = run.collect();
/// assert!(ids.windows(2).all(|w| w[1].as_u64() == w[0].as_u64() + 1));
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdRun {
    /// The next ID, as a number.
    next: u64,
    /// How many are left.
    left: u64,
    /// The distance between two IDs of the run.
    step: u64,
}

impl IdRun {
    pub(crate) fn new(first: u64, count: u64, step: u64) -> IdRun {
        IdRun {
            next: first,
            left: count,
            step,
        }
    }

    /// The first ID of the run, if any are left.
    pub fn first(&self) -> Option<SnowflakeId> {
        (self.left > 0).then(|| SnowflakeId::from_u64(self.next))
    }

    /// How many IDs are left in the run.
    pub fn len(&self) -> usize {
        self.left as usize
    }

    /// Whether no IDs are left.
    pub fn is_empty(&self) -> bool {
        self.left == 0
    }
}

impl Iterator for IdRun {
    type Item = SnowflakeId;

    #[inline]
    fn next(&mut self) -> Option<SnowflakeId> {
        let id = self.first()?;
        self.left -= 1;
        // Past the last ID the value is never read: wrapping is harmless.
        self.next = self.next.wrapping_add(self.step);
        Some(id)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len(), Some(self.len()))
    }
}

impl ExactSizeIterator for IdRun {}
