//! How a generator is put together: layout, node, clock, policy, resume
//! point.

use std::ops::Deref;
use std::sync::atomic::{AtomicU64 as StdAtomicU64, Ordering};
use std::time::Duration;

#[cfg(loom)]
use loom::sync::atomic::AtomicU64;
#[cfg(not(loom))]
use std::sync::atomic::AtomicU64;

use super::slots::SlotBlock;
use super::ticks::Ticks;
use super::word::OwnWord;
use super::{ClockPolicy, Generator};
use crate::clock::{Clock, SystemClock};
use crate::error::Error;
use crate::layout::{Layout, Node, mask};

/// Builds a [`Generator`]: layout and node are required; the clock, the
/// clock-regression policy and a resume point are optional.
///
/// # Examples
///
/// ```
/// use snowmint::{ClockPolicy, Generator, Layout, ManualClock};
///
/// let generator = Generator::builder(Layout::DISCORD, Layout::DISCORD.node(&[0, 9])?)
///     .clock(ManualClock::new(1_700_000_000_000))
///     .policy(ClockPolicy::Refuse)
///     .resume_after(1_700_000_000_000)
///     .build()?;
/// // Everything up to the resume point counts as used.
/// assert!(generator.next_id_at(1_700_000_000_000).is_err());
/// let id = generator.next_id_at(1_700_000_000_001)?;
/// assert_eq!(Layout::DISCORD.timestamp_ms(id), 1_700_000_000_001);
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct GeneratorBuilder<C = SystemClock> {
    layout: Layout,
    node: Node,
    slots: u64,
    clock: C,
    policy: ClockPolicy,
    resume_after_ms: Option<i64>,
}

impl GeneratorBuilder<SystemClock> {
    /// A builder for a generator of `layout` on `node`, with the system
    /// clock and the `Refuse` policy.
    pub fn new(layout: Layout, node: Node) -> GeneratorBuilder<SystemClock> {
        GeneratorBuilder {
            layout,
            node,
            slots: 1,
            clock: SystemClock,
            policy: ClockPolicy::default(),
            resume_after_ms: None,
        }
    }
}

impl<C: Clock> GeneratorBuilder<C> {
    /// Reads time from `clock` instead.
    pub fn clock<D: Clock>(self, clock: D) -> GeneratorBuilder<D> {
        GeneratorBuilder {
            layout: self.layout,
            node: self.node,
            slots: self.slots,
            clock,
            policy: self.policy,
            resume_after_ms: self.resume_after_ms,
        }
    }

    /// Makes the node hold `count` slots, `node.slot() .. node.slot() +
    /// count`, instead of one: its ceiling is `count` times one slot's.
    ///
    /// `count` is a power of two. Within each tick the generator issues
    /// every ID its slots can make in that tick, in ascending order: each
    /// slot's sequence in turn, lowest slot first, where the sequence lies
    /// below the node fields (Twitter); each sequence number in every slot
    /// in turn where it lies above them (Sonyflake). So its IDs still
    /// strictly increase. The node fields must sit side by side below the
    /// time field, as in every preset.
    ///
    /// The slots are the node's alone, as one slot is: whoever hands them
    /// out (a fleet's coordinator, a node's flags) hands out all of them.
    /// The state word then counts the slots' IDs together, so a word
    /// shared by [`build_on`](GeneratorBuilder::build_on) must be shared
    /// only by generators with the same slots.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Generator, Layout, ManualClock, Node};
    ///
    /// let clock = ManualClock::new(1_700_000_000_000);
    /// // Slots 6 and 7 (datacenter 0, machines 6 and 7): 8192 IDs per ms.
    /// let generator = Generator::builder(Layout::TWITTER, Node::from_slot(6))
    ///     .slots(2)
    ///     .clock(clock)
    ///     .build()?;
    /// let mut ids = Vec::new();
    /// generator.next_ids(8192, &mut ids)?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// let machine = |i: usize| Layout::TWITTER.decode(ids[i]).unwrap().get("machine");
    /// assert_eq!((machine(0), machine(4095), machine(4096), machine(8191)), (Some(6), Some(6), Some(7), Some(7)));
    /// assert_eq!(Layout::TWITTER.timestamp_ms(ids[8191]), 1_700_000_000_000);
    ///
    /// assert_eq!(
    ///     Generator::builder(Layout::TWITTER, Node::from_slot(0)).slots(3).build().unwrap_err().to_string(),
    ///     "slots per node 3 is not valid: a node holds a power of two of slots, 1 to 1024 in this layout (1, 2, 4, 8, ...)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn slots(mut self, count: u64) -> Self {
        self.slots = count;
        self
    }

    /// What to do when the clock goes backwards.
    pub fn policy(mut self, policy: ClockPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Treats every tick that starts at or before the end of millisecond
    /// `last_ms` as already used: the first ID will be from a later tick.
    /// Services pass the high-water mark they recorded before a restart.
    pub fn resume_after(mut self, last_ms: i64) -> Self {
        self.resume_after_ms = Some(last_ms);
        self
    }

    /// Checks the layout (that it can mint) and the node against it, and
    /// builds the generator.
    ///
    /// # Errors
    ///
    /// A layout that cannot mint ([`Layout::check_mintable`]), a node
    /// beyond its slots, a block of [`slots`](GeneratorBuilder::slots) it
    /// cannot give one node ([`Layout::check_slot_block`]), or a resume
    /// point at or past its last instant.
    pub fn build(self) -> Result<Generator<C>, Error> {
        let floor = self.floor()?;
        self.assemble(OwnWord::new(floor))
    }

    /// Checks the node against the layout and builds a generator over a
    /// state word that the caller owns, such as a word in memory shared
    /// between processes.
    ///
    /// Every generator built over one word takes its IDs from that word by
    /// compare-and-swap, so together they keep the rules of one generator:
    /// each ID, from any of them, is greater than every ID any of them
    /// handed out before, and no (tick, sequence) pair is used twice.
    ///
    /// - A fresh word is `0`: nothing used yet.
    /// - The word is only ever raised: a
    ///   [`resume_after`](GeneratorBuilder::resume_after) point moves it up
    ///   to just after that millisecond if it is lower, and leaves it alone
    ///   otherwise, so building another generator over a word in use never
    ///   takes back what was handed out.
    /// - The generators over one word must share its layout (the word counts
    ///   ticks from the layout's epoch in units of its sequence width) and
    ///   should share the node; the caller keeps to that.
    ///
    /// # Errors
    ///
    /// As [`build`](GeneratorBuilder::build).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::AtomicU64;
    /// use snowmint::{Generator, Layout, ManualClock};
    ///
    /// let word = AtomicU64::new(0);
    /// let node = Layout::TWITTER.node(&[1, 2])?;
    /// let clock = ManualClock::new(1_700_000_000_000);
    /// let a = Generator::builder(Layout::TWITTER, node).clock(clock.clone()).build_on(&word)?;
    /// let b = Generator::builder(Layout::TWITTER, node).clock(clock.clone()).build_on(&word)?;
    /// let first = a.next_id()?;
    /// let second = b.next_id()?;
    /// assert_eq!(second.as_u64(), first.as_u64() + 1); // one sequence for both
    ///
    /// // A resume point below what the word holds changes nothing.
    /// let c = Generator::builder(Layout::TWITTER, node)
    ///     .clock(clock)
    ///     .resume_after(1_600_000_000_000)
    ///     .build_on(&word)?;
    /// assert!(c.next_id()? > second);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn build_on<W: Deref<Target = AtomicU64>>(self, word: W) -> Result<Generator<C, W>, Error> {
        let floor = self.floor()?;
        // AcqRel, like a successful exchange in `take`: a generator that
        // later reads this word sees everything before the raise.
        word.fetch_max(floor, Ordering::AcqRel);
        self.assemble(word)
    }

    /// The lowest state word the resume point allows: the first pair of
    /// the first tick starting after millisecond `last_ms` ends, or `0`
    /// without one.
    fn floor(&self) -> Result<u64, Error> {
        let layout = self.layout;
        layout.check_mintable()?;
        layout.node_bits(self.node)?;
        let block = SlotBlock::of(&layout, self.node.slot(), self.slots)?;
        let Some(last_ms) = self.resume_after_ms else {
            return Ok(0);
        };
        // The first tick whose start is at or after the next millisecond:
        // ceil((next_ms - epoch) / unit), in microseconds.
        let next_us = (i128::from(last_ms) + 1) * 1000;
        let since = next_us - i128::from(layout.epoch_us());
        if since <= 0 {
            return Ok(0);
        }
        let unit = i128::from(layout.unit().as_micros());
        let first_free = (since + unit - 1) / unit;
        let sequence_bits = layout.sequence_field().map_or(0, |f| f.width()) + block.slot_bits;
        if first_free > i128::from(layout.time_field().max()) {
            return Err(layout.past_end(last_ms.saturating_add(1)));
        }
        // Below 2^(time width), and time + counter widths fit 63 bits.
        Ok((first_free as u64) << sequence_bits)
    }

    /// The generator over `next`, already at or above the floor.
    fn assemble<W>(self, next: W) -> Result<Generator<C, W>, Error> {
        let layout = self.layout;
        let node_bits = layout.node_bits(self.node)?;
        let sequence = layout.sequence_to_mint()?;
        let block = SlotBlock::of(&layout, self.node.slot(), self.slots)?;
        let (s, k) = (sequence.width(), block.slot_bits);
        let (counter_sequence, counter_index) = if block.slot_major {
            ((0, mask(s)), (s, mask(k)))
        } else {
            ((k, mask(s)), (0, mask(k)))
        };
        // Slot-major rows are a slot's sequence, evenly spaced by the
        // sequence's step; they run on into the next slot when the node
        // fields sit right above the sequence. Sequence-major rows are one
        // sequence number across the slots, spaced by the node's step; they
        // run on only when the slots fill the node fields.
        let (row_bits, run_step) = if block.slot_major {
            let runs_on = sequence.shift() + s == block.node_shift;
            (if runs_on { s + k } else { s }, 1u64 << sequence.shift())
        } else {
            let runs_on = block.node_shift + k == sequence.shift();
            (if runs_on { s + k } else { k }, 1u64 << block.node_shift)
        };
        let unit_us = u128::from(layout.unit().as_micros());
        let bound = |d: Duration| u64::try_from(d.as_micros() / unit_us).unwrap_or(u64::MAX);
        Ok(Generator {
            next,
            node_bits,
            epoch_ms: layout.epoch_ms(),
            epoch_us: layout.epoch_us(),
            ticks: Ticks::of(&layout),
            sequence_bits: s + k,
            counter_sequence,
            counter_index,
            node_shift: block.node_shift,
            row_bits,
            run_step,
            sequence_shift: sequence.shift(),
            time_shift: layout.time_field().shift(),
            max_offset: mask(layout.time_field().width()),
            layout,
            node: self.node,
            slots: self.slots,
            clock: self.clock,
            policy: self.policy,
            borrow_ticks: match self.policy {
                ClockPolicy::Borrow { max_ahead } => Some(bound(max_ahead)),
                _ => None,
            },
            exhaustion_waits: StdAtomicU64::new(0),
            clock_regressions: StdAtomicU64::new(0),
            refusals: StdAtomicU64::new(0),
            max_lead_ticks: StdAtomicU64::new(0),
        })
    }
}
