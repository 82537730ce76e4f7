//! Which free slot a node tries next.
//!
//! Trying the free slots lowest first makes n nodes that start together
//! race for the same few keys: about n²/2 create attempts in all. Instead:
//!
//! - a slot the node prefers (the one it held last in this process, else
//!   the one its service says it held before a restart) is tried first,
//!   when the listing shows it free;
//! - otherwise a free slot is drawn from a pseudo-random sequence seeded
//!   with the node's holder value (host, pid, listen address, start time),
//!   so that nodes starting together spread over the range;
//! - after a conflict, the next draw is from a fresh listing and the
//!   sequence is stirred with fresh randomness, so that two nodes that
//!   collided once do not keep colliding.
//!
//! Each attempt then succeeds unless another node took the same slot since
//! the listing: with every node drawing at random, a storm of n nodes costs
//! a small constant number of attempts per node, not n/2.

use std::collections::BTreeSet;
use std::hash::BuildHasher;

use super::SlotRange;

/// Draws the slots a node tries, in the order the module docs give.
#[derive(Debug, Clone)]
pub(super) struct SlotPicker {
    /// The state of the pseudo-random sequence (SplitMix64).
    state: u64,
}

impl SlotPicker {
    /// A sequence seeded with `holder`: the same holder value draws the
    /// same first slot from the same listing.
    pub(super) fn new(holder: &str) -> SlotPicker {
        // FNV-1a: stable across builds and platforms, unlike the standard
        // library's hasher, so the first draw depends on the holder alone.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in holder.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        SlotPicker { state: hash }
    }

    /// The slot to try among the free slots of `range` (those not in
    /// `taken`): `preferred` if it is free, else a free slot drawn at
    /// random; `None` when every slot is taken.
    ///
    /// With `count` above 1 (a node that holds several slots), the same
    /// over the aligned blocks of `count` slots inside the range: the
    /// first slot of a block none of whose slots is taken.
    pub(super) fn pick(
        &mut self,
        range: SlotRange,
        count: u64,
        taken: &BTreeSet<u64>,
        preferred: Option<u64>,
    ) -> Option<u64> {
        let count = count.max(1);
        // Blocks numbered by their first slot over `count`: with one slot
        // per node, a block is a slot.
        let mut blocks = range.blocks(count);
        let first = blocks.next()? / count;
        let last = blocks.last().map_or(first, |block| block / count);
        let taken_blocks: BTreeSet<u64> = taken
            .range(first * count..(last + 1) * count)
            .map(|slot| slot / count)
            .collect();
        // A preferred slot names its block (the state file written last
        // may be any slot of it).
        let preferred = preferred.map(|slot| slot - slot % count);
        if let Some(slot) = preferred.filter(|slot| {
            (first..=last).contains(&(slot / count)) && !taken_blocks.contains(&(slot / count))
        }) {
            return Some(slot);
        }
        let free = (last - first + 1)
            .checked_sub(taken_blocks.len() as u64)
            .filter(|&n| n > 0)?;
        // The k-th free block, counting up from the range's first, without
        // building the list of free blocks: skip every taken block at or
        // below the candidate.
        let mut block = first + self.next() % free;
        for &used in &taken_blocks {
            if used <= block {
                block += 1;
            } else {
                break;
            }
        }
        Some(block * count)
    }

    /// Mixes fresh randomness into the sequence, after a conflict.
    pub(super) fn stir(&mut self) {
        // RandomState is seeded per instance, from the system's randomness.
        self.state ^= std::collections::hash_map::RandomState::new().hash_one(self.state);
    }

    /// The next number of the sequence (SplitMix64).
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(first: u64, last: u64) -> SlotRange {
        SlotRange::new(first, last).unwrap()
    }

    #[test]
    fn a_free_preferred_slot_comes_first() {
        let mut picker = SlotPicker::new("host=a pid=1");
        let taken = BTreeSet::from([3, 4]);
        assert_eq!(picker.pick(range(0, 9), 1, &taken, Some(7)), Some(7));
        // Taken, or outside the range: drawn like any other node's.
        for preferred in [Some(3), Some(12)] {
            let slot = picker.pick(range(0, 9), 1, &taken, preferred).unwrap();
            assert!(
                range(0, 9).contains(slot) && !taken.contains(&slot),
                "{slot}"
            );
        }
    }

    #[test]
    fn draws_are_free_slots_of_the_range_and_none_when_all_are_taken() {
        let mut picker = SlotPicker::new("host=b pid=2");
        let taken: BTreeSet<u64> = [0, 1, 2, 5, 6, 9, 10, 11, 40].into();
        let mut seen = BTreeSet::new();
        for _ in 0..1000 {
            let slot = picker.pick(range(5, 12), 1, &taken, None).unwrap();
            assert!(
                range(5, 12).contains(slot) && !taken.contains(&slot),
                "{slot}"
            );
            seen.insert(slot);
        }
        assert_eq!(seen, BTreeSet::from([7, 8, 12]), "every free slot is drawn");
        let full: BTreeSet<u64> = (5..=12).collect();
        assert_eq!(picker.pick(range(5, 12), 1, &full, Some(6)), None);
    }

    #[test]
    fn the_first_draw_follows_the_holder() {
        let taken = BTreeSet::new();
        let first = |holder: &str| SlotPicker::new(holder).pick(range(0, 1023), 1, &taken, None);
        assert_eq!(first("host=web-1 pid=7"), first("host=web-1 pid=7"));
        let spread: BTreeSet<_> = (0..64).map(|n| first(&format!("pid={n}"))).collect();
        assert!(
            spread.len() > 56,
            "64 holders drew only {} slots",
            spread.len()
        );
    }

    /// With several slots per node, only aligned blocks wholly inside the
    /// range and wholly free are drawn; a block with one slot taken is
    /// not free.
    #[test]
    fn blocks_are_aligned_free_and_inside_the_range() {
        let mut picker = SlotPicker::new("host=c pid=3");
        // Blocks of 4 inside 2-21: 4-7, 8-11, 12-15, 16-19; 9 is taken.
        let taken: BTreeSet<u64> = [9, 22].into();
        let mut seen = BTreeSet::new();
        for _ in 0..1000 {
            seen.insert(picker.pick(range(2, 21), 4, &taken, None).unwrap());
        }
        assert_eq!(seen, BTreeSet::from([4, 12, 16]));
        // The preferred slot's block, when it is free.
        assert_eq!(picker.pick(range(2, 21), 4, &taken, Some(12)), Some(12));
        assert_eq!(picker.pick(range(2, 21), 4, &taken, Some(14)), Some(12));
        for preferred in [8, 11, 20] {
            let slot = picker
                .pick(range(2, 21), 4, &taken, Some(preferred))
                .unwrap();
            assert!([4, 12, 16].contains(&slot), "{slot}");
        }
        let full: BTreeSet<u64> = [5, 10, 15, 19].into();
        assert_eq!(picker.pick(range(2, 21), 4, &full, None), None);
        assert_eq!(picker.pick(range(5, 6), 4, &BTreeSet::new(), None), None);
    }

    /// A storm simulated in rounds: every node that has no slot lists,
    /// draws, and the first to ask for a slot wins it. The attempts stay a
    /// small multiple of the nodes, where lowest-first needs about n²/2.
    #[test]
    fn a_storm_costs_a_few_attempts_per_node() {
        let nodes = 1024;
        let mut pickers: Vec<SlotPicker> = (0..nodes)
            .map(|n| SlotPicker::new(&format!("host=h pid={n}")))
            .collect();
        let mut taken = BTreeSet::new();
        let mut waiting: Vec<usize> = (0..nodes).collect();
        let mut attempts = 0;
        while !waiting.is_empty() {
            let listing = taken.clone();
            let mut lost = Vec::new();
            for n in waiting {
                let slot = pickers[n].pick(range(0, 1023), 1, &listing, None).unwrap();
                attempts += 1;
                if !taken.insert(slot) {
                    pickers[n].stir();
                    lost.push(n);
                }
            }
            waiting = lost;
        }
        assert_eq!(taken.len(), nodes);
        assert!(
            attempts < 2 * nodes,
            "{attempts} attempts for {nodes} nodes"
        );
    }
}
