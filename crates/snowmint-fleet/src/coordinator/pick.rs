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
    pub(super) fn pick(
        &mut self,
        range: SlotRange,
        taken: &BTreeSet<u64>,
        preferred: Option<u64>,
    ) -> Option<u64> {
        if let Some(slot) = preferred.filter(|slot| range.contains(*slot) && !taken.contains(slot))
        {
            return Some(slot);
        }
        let taken_in_range = taken.range(range.first()..=range.last()).count() as u64;
        let free = range.len().checked_sub(taken_in_range).filter(|&n| n > 0)?;
        // The k-th free slot, counting up from the range's first, without
        // building the list of free slots: skip every taken slot at or
        // below the candidate.
        let mut slot = range.first() + self.next() % free;
        for &used in taken.range(range.first()..=range.last()) {
            if used <= slot {
                slot += 1;
            } else {
                break;
            }
        }
        Some(slot)
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
        assert_eq!(picker.pick(range(0, 9), &taken, Some(7)), Some(7));
        // Taken, or outside the range: drawn like any other node's.
        for preferred in [Some(3), Some(12)] {
            let slot = picker.pick(range(0, 9), &taken, preferred).unwrap();
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
            let slot = picker.pick(range(5, 12), &taken, None).unwrap();
            assert!(
                range(5, 12).contains(slot) && !taken.contains(&slot),
                "{slot}"
            );
            seen.insert(slot);
        }
        assert_eq!(seen, BTreeSet::from([7, 8, 12]), "every free slot is drawn");
        let full: BTreeSet<u64> = (5..=12).collect();
        assert_eq!(picker.pick(range(5, 12), &full, Some(6)), None);
    }

    #[test]
    fn the_first_draw_follows_the_holder() {
        let taken = BTreeSet::new();
        let first = |holder: &str| SlotPicker::new(holder).pick(range(0, 1023), &taken, None);
        assert_eq!(first("host=web-1 pid=7"), first("host=web-1 pid=7"));
        let spread: BTreeSet<_> = (0..64).map(|n| first(&format!("pid={n}"))).collect();
        assert!(
            spread.len() > 56,
            "64 holders drew only {} slots",
            spread.len()
        );
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
                let slot = pickers[n].pick(range(0, 1023), &listing, None).unwrap();
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
