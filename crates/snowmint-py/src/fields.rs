//! The four numbers Python's `Parts` and `decode_many` give for an ID of
//! any layout: `timestamp_ms`, the node as two numbers (`datacenter`,
//! `machine`: the node fields above the lowest one, and the lowest; see
//! `Layout::node_from_pair`) and `sequence` (0 in a layout without one).
//! For Twitter's layout they are its four fields.

use snowmint::{Layout, SnowflakeId};

/// The four numbers of one ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fields {
    pub timestamp_ms: i64,
    pub datacenter: u64,
    pub machine: u64,
    pub sequence: u64,
}

/// Reads [`Fields`] out of raw IDs of one layout, with the layout's shifts
/// and masks worked out once (a column of millions is read this way).
#[derive(Debug, Clone, Copy)]
pub struct Extract {
    layout: Layout,
    max_id: u64,
    epoch_ms: i64,
    /// The unit in whole milliseconds, when it is one.
    unit_ms: Option<i64>,
    time: (u32, u64),
    upper: (u32, u64),
    lowest: (u32, u64),
    sequence: (u32, u64),
    /// Whether the node fields lie next to each other, so that the upper
    /// ones read as one number.
    contiguous: bool,
}

fn shift_mask(shift: u8, width: u8) -> (u32, u64) {
    let mask = 1u64
        .checked_shl(u32::from(width))
        .map_or(u64::MAX, |bit| bit - 1);
    (u32::from(shift.min(63)), if shift >= 64 { 0 } else { mask })
}

impl Extract {
    pub fn new(layout: &Layout) -> Extract {
        let time = layout.time_field();
        let nodes: Vec<_> = layout.node_fields().collect();
        let lowest = nodes
            .last()
            .map_or((0, 0), |f| shift_mask(f.shift(), f.width()));
        let upper_width: u8 = nodes.iter().rev().skip(1).map(|f| f.width()).sum();
        let upper_shift = nodes.last().map_or(0, |f| f.shift() + f.width());
        let contiguous = nodes
            .windows(2)
            .all(|pair| pair[0].shift() == pair[1].shift() + pair[1].width());
        let unit = i64::from(layout.unit().as_micros());
        Extract {
            layout: *layout,
            max_id: layout.max_id().as_u64(),
            epoch_ms: layout.epoch_ms(),
            unit_ms: (unit % 1000 == 0).then_some(unit / 1000),
            time: shift_mask(time.shift(), time.width()),
            upper: shift_mask(upper_shift, upper_width),
            lowest,
            sequence: layout
                .sequence_field()
                .map_or((0, 0), |f| shift_mask(f.shift(), f.width())),
            contiguous,
        }
    }

    /// The bits each of the four numbers needs, in their order; the time is
    /// a signed 64-bit Unix millisecond count, so it counts as 63.
    pub fn widths(layout: &Layout) -> [u8; 4] {
        let (upper, lowest) = layout.pair_max();
        let bits = |max: u64| (64 - max.leading_zeros()) as u8;
        let sequence = layout.sequence_field().map_or(0, |f| f.width());
        [63, bits(upper), bits(lowest), sequence]
    }

    /// The four numbers of `raw`, or `None` when it is no ID of the layout.
    #[inline]
    pub fn of(&self, raw: u64) -> Option<Fields> {
        if raw > self.max_id {
            return None;
        }
        let field = |(shift, mask): (u32, u64)| (raw >> shift) & mask;
        let ticks = field(self.time);
        let timestamp_ms = match self.unit_ms {
            Some(1) => self.epoch_ms + ticks as i64,
            Some(unit_ms) => self.epoch_ms + ticks as i64 * unit_ms,
            None => self.layout.timestamp_ms(SnowflakeId::from_u64(raw)),
        };
        let (datacenter, machine) = if self.contiguous {
            (field(self.upper), field(self.lowest))
        } else {
            self.layout
                .pair_of(self.layout.node_of(SnowflakeId::from_u64(raw)))
        };
        Some(Fields {
            timestamp_ms,
            datacenter,
            machine,
            sequence: field(self.sequence),
        })
    }
}
