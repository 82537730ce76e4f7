//! A node that holds several slots: how the state word's counter spreads
//! over them.
//!
//! A generator of `K` slots (a power of two) counts `K × 2^S` IDs per tick
//! in its state word instead of `2^S`: the word is still
//! `ticks << counter_bits | counter`, with `counter_bits = S + log2 K`, so
//! the pure decision (`plan`) is the same as for one slot, with a wider
//! counter. Only turning a counter into an ID changes, and it is chosen so
//! that a larger counter makes a larger ID:
//!
//! - the sequence field below the node fields (Twitter: `…node·sequence`):
//!   the counter is `slot index · sequence`, so each slot's sequence is
//!   used in turn, the lowest slot first;
//! - the sequence field above them (Sonyflake: `…sequence·machine`): the
//!   counter is `sequence · slot index`, so each sequence number is used
//!   in every slot, the lowest first, before the next.
//!
//! Either way the node's IDs of one tick are all `K × 2^S` IDs its slots
//! can make in that tick, issued in ascending order, and a tick's IDs stay
//! below the next tick's because the time field lies above both.
//!
//! For the slot index to move the node fields by plain addition, the node
//! fields must sit side by side in the ID in the order of the slot number
//! (most significant first, as every preset has them), below the time
//! field. A block of slots is `first .. first + K`; it need not be aligned.

use crate::error::{Error, Repr};
use crate::layout::{Layout, invalid};

/// Where a block of slots puts its counter: checked once, when a generator
/// is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotBlock {
    /// log2 of the number of slots.
    pub(crate) slot_bits: u8,
    /// The shift of the lowest node field: the slot index, moved there,
    /// is added to the first slot's node bits.
    pub(crate) node_shift: u8,
    /// Whether the counter is `slot index · sequence` (the sequence below
    /// the node fields) rather than `sequence · slot index`.
    pub(crate) slot_major: bool,
}

impl SlotBlock {
    /// One slot: the counter is the sequence.
    pub(crate) const ONE: SlotBlock = SlotBlock {
        slot_bits: 0,
        node_shift: 0,
        slot_major: true,
    };

    /// Checks that `layout` can mint from the `count` slots starting at
    /// `first`, and says how.
    pub(crate) fn of(layout: &Layout, first: u64, count: u64) -> Result<SlotBlock, Error> {
        let sequence = layout.sequence_to_mint()?;
        let node_count = layout.node_count();
        // The word keeps time, sequence and the slot index within 63 bits.
        let room = 63 - u32::from(layout.time_field().width()) - u32::from(sequence.width());
        let cap = node_count.min(1u64.checked_shl(room).unwrap_or(u64::MAX));
        // The largest power of two at or below the cap (which is at least 1).
        let max = 1u64 << (63 - cap.leading_zeros());
        if count == 0 || !count.is_power_of_two() || count > max {
            return Err(Repr::SlotsPerNode { count, max }.into());
        }
        let last = first.saturating_add(count - 1);
        if last >= node_count {
            return Err(Repr::SlotBlockOutOfRange {
                first,
                last,
                max: node_count - 1,
            }
            .into());
        }
        if count == 1 {
            return Ok(SlotBlock::ONE);
        }
        // Node fields side by side, most significant first, below time.
        let mut fields = layout.node_fields().filter(|f| f.width() > 0).peekable();
        let mut lowest = None;
        while let Some(field) = fields.next() {
            if let Some(below) = fields.peek()
                && below.shift() + below.width() != field.shift()
            {
                return Err(invalid(format!(
                    "layout {layout} keeps its node fields {} and {} apart, so a node cannot hold \
                     several slots (its slots would not be consecutive IDs); use one slot per node",
                    field.name(),
                    below.name()
                )));
            }
            lowest = Some(*field);
        }
        let Some(lowest) = lowest else {
            // count > 1 fits only a layout with node bits.
            return Err(Repr::SlotsPerNode { count, max }.into());
        };
        if layout.time_field().shift() < lowest.shift() {
            return Err(invalid(format!(
                "layout {layout} puts its node fields above its time field, so a node holding \
                 several slots would not issue increasing IDs; use one slot per node"
            )));
        }
        Ok(SlotBlock {
            slot_bits: count.trailing_zeros() as u8,
            node_shift: lowest.shift(),
            slot_major: sequence.shift() < lowest.shift(),
        })
    }
}
