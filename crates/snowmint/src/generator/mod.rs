//! The ID generator: one packed atomic word, updated by compare-and-swap.
//!
//! A [`Generator`] holds the hot path and the calls around it; a
//! [`GeneratorBuilder`] checks the layout, the node, the clock, the
//! [`ClockPolicy`] and the resume point once, before the first ID. Each
//! attempt decides what to do from a pure function of the state word, the
//! clock's tick and the policy; the atomic loop around it only retries when
//! another thread got there first. Keeping the decision pure is what lets
//! the model-checking test (`tests/loom.rs`) and the unit tests cover it on
//! its own, and the common case for one ID (the clock at or past the word's
//! tick, with room left) is decided inline by a fast path that a property
//! test checks against the full decision.
//!
//! A clock reading becomes the layout's ticks by a conversion chosen once
//! per unit (milliseconds subtract; coarser units divide milliseconds,
//! finer ones microseconds). Waiting out an exhausted sequence or a clock
//! regression is kept off the hot path. An [`IdRun`] is a run of
//! consecutive IDs handed out at once, and an [`OwnWord`] the state word
//! when the generator owns it.

#[cfg(loom)]
use loom::sync::atomic::AtomicU64;
use std::ops::Deref;
#[cfg(not(loom))]
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicU64 as StdAtomicU64, Ordering};
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::error::Error;
use crate::id::SnowflakeId;
use crate::layout::{Layout, Node};

mod builder;
mod plan;
mod policy;
mod run;
mod slots;
mod ticks;
mod wait;
mod word;

pub use builder::GeneratorBuilder;
pub(crate) use plan::{Plan, plan, plan_one};
pub use policy::ClockPolicy;
pub use run::IdRun;
pub(crate) use slots::SlotBlock;
use ticks::{At, Ticks};
pub use word::OwnWord;

/// Counts of the generator's slow paths, for metrics.
///
/// # Examples
///
/// ```
/// use snowmint::{Generator, Layout, Node};
///
/// let generator = Generator::new(Layout::TWITTER, Node::default())?;
/// generator.next_id()?;
/// assert_eq!(generator.stats().clock_regressions, 0);
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct GeneratorStats {
    /// Times a caller waited for the next tick because the sequence of the
    /// current one was used up.
    pub exhaustion_waits: u64,
    /// Calls that found the clock behind the last timestamp used (refused,
    /// waited or borrowed, depending on the policy).
    pub clock_regressions: u64,
    /// Calls refused because of a regression.
    pub refusals: u64,
    /// The largest lead of any ID issued so far: how far its timestamp ran
    /// ahead of the clock reading it was issued at. Zero unless the
    /// [`Borrow`](ClockPolicy::Borrow) policy borrowed (waiting for the next
    /// tick or for the clock never makes a lead); never more than the
    /// policy's `max_ahead`. See [`Generator::lead`] for the lead now.
    pub max_lead: Duration,
}

/// A thread-safe Snowflake ID generator for one node, in any layout that
/// can mint ([`Layout::check_mintable`]).
///
/// - IDs are strictly increasing: each ID handed out, by any thread, is
///   greater than every ID handed out before it.
/// - Within a tick of the layout's unit (a millisecond for Twitter, 10 ms
///   for Sonyflake, a second for Baidu) the sequence counts up from 0; when
///   it is used up, callers wait for the next tick (sleeping until just
///   before it when the clock can say when it comes, then spinning). No
///   sequence number is used twice and none is skipped. The ceiling of one
///   node is [`Layout::ids_per_second`].
/// - A node may hold several slots ([`GeneratorBuilder::slots`]): each
///   tick then holds every ID of every one of its slots, issued in
///   ascending order, and the ceiling is that many times one slot's.
/// - When the clock is behind the last timestamp used, the [`ClockPolicy`]
///   decides (by default: refuse, with an error of kind
///   [`ClockBehind`](crate::ErrorKind::ClockBehind)).
/// - Past the layout's last instant it refuses with an error of kind
///   [`OutOfRange`](crate::ErrorKind::OutOfRange); it never wraps.
///
/// The hot path is one atomic load, one clock read and one compare-and-swap;
/// there is no lock.
///
/// # Examples
///
/// ```
/// use snowmint::{Generator, Layout};
///
/// let generator = Generator::new(Layout::TWITTER, Layout::TWITTER.node(&[7, 13])?)?;
/// let a = generator.next_id()?;
/// let b = generator.next_id()?;
/// assert!(b > a);
/// assert_eq!(Layout::TWITTER.decode(b)?.get("machine"), Some(13));
///
/// let sonyflake = Generator::new(Layout::SONYFLAKE, Layout::SONYFLAKE.node(&[513])?)?;
/// assert_eq!(Layout::SONYFLAKE.decode(sonyflake.next_id()?)?.get("machine"), Some(513));
/// # Ok::<(), snowmint::Error>(())
/// ```
///
/// A generator owns its state word by default; one built with
/// [`GeneratorBuilder::build_on`] works over a word that the caller owns
/// (`W` is then, for example, `&AtomicU64`), so that several generators, in
/// one process or in processes that share memory, issue as one.
#[derive(Debug)]
pub struct Generator<C = SystemClock, W = OwnWord> {
    /// The first unused (tick, counter) pair, packed. Owned, it sits alone
    /// on its cache line because every call writes it.
    next: W,
    /// The node fields of the node's first slot, already shifted into place.
    node_bits: u64,
    // The layout's numbers the hot path needs, copied out of it once.
    epoch_ms: i64,
    epoch_us: i64,
    ticks: Ticks,
    /// The width of the word's counter: the sequence's, plus log2 of the
    /// slots (see `slots.rs`).
    sequence_bits: u8,
    /// Where the sequence and the slot index sit in the counter, and their
    /// masks: `(counter >> shift) & mask`. One slot: the sequence at 0 with
    /// its own mask, the index masked to 0.
    counter_sequence: (u8, u64),
    counter_index: (u8, u64),
    /// Where a slot index moves the node fields.
    node_shift: u8,
    /// A run taken stops at the end of a row of `2^row_bits` pairs.
    row_bits: u8,
    /// The distance between two IDs of a row.
    run_step: u64,
    sequence_shift: u8,
    time_shift: u8,
    max_offset: u64,
    layout: Layout,
    node: Node,
    /// How many slots the node holds, from `node`'s.
    slots: u64,
    clock: C,
    policy: ClockPolicy,
    /// The borrow bound in ticks, when the policy borrows.
    borrow_ticks: Option<u64>,
    // Slow-path counters. Relaxed: they order nothing, they only count.
    exhaustion_waits: StdAtomicU64,
    clock_regressions: StdAtomicU64,
    refusals: StdAtomicU64,
    /// The largest lead taken, in ticks (moved only when an ID is issued
    /// ahead of the clock, which only borrowing does).
    max_lead_ticks: StdAtomicU64,
}

impl Generator<SystemClock> {
    /// A generator on the system clock with the default `Refuse` policy.
    ///
    /// # Errors
    ///
    /// A layout that cannot mint, or a node beyond its slots.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Generator, Layout, Node};
    ///
    /// assert!(Generator::new(Layout::TWITTER, Node::from_slot(1023)).is_ok());
    /// assert!(Generator::new(Layout::TWITTER, Node::from_slot(1024)).is_err());
    /// assert!(Generator::new(Layout::MASTODON, Node::default()).is_err());
    /// ```
    pub fn new(layout: Layout, node: Node) -> Result<Generator<SystemClock>, Error> {
        GeneratorBuilder::new(layout, node).build()
    }

    /// A builder, to choose the clock, policy and resume point.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Generator, Layout, ManualClock, Node};
    ///
    /// let generator = Generator::builder(Layout::TWITTER, Node::default())
    ///     .clock(ManualClock::new(1_700_000_000_000))
    ///     .build()?;
    /// let id = generator.next_id()?;
    /// assert_eq!(Layout::TWITTER.timestamp_ms(id), 1_700_000_000_000);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn builder(layout: Layout, node: Node) -> GeneratorBuilder<SystemClock> {
        GeneratorBuilder::new(layout, node)
    }
}

impl<C: Clock, W: Deref<Target = AtomicU64>> Generator<C, W> {
    /// The next ID. Waits for the next tick when this one's sequence is
    /// used up; follows the policy when the clock is behind.
    ///
    /// # Errors
    ///
    /// Of kind [`ClockBehind`](crate::ErrorKind::ClockBehind) when the
    /// policy refuses, [`OutOfRange`](crate::ErrorKind::OutOfRange) when
    /// the clock is outside the layout.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Generator, Layout, Node};
    ///
    /// let generator = Generator::new(Layout::TWITTER, Node::default())?;
    /// let ids: Vec<_> = (0..10_000).map(|_| generator.next_id()).collect::<Result<_, _>>()?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    #[inline]
    pub fn next_id(&self) -> Result<SnowflakeId, Error> {
        self.take_one(true, At::Clock)
    }

    /// The next ID if it can be had without waiting, read from the clock
    /// as [`next_id`](Generator::next_id) does.
    ///
    /// Where `next_id` would wait it returns at once instead:
    ///
    /// - this tick's sequence is used up: an error of kind
    ///   [`SequenceExhausted`](crate::ErrorKind::SequenceExhausted);
    /// - the clock is behind under a `Wait` policy: of kind
    ///   [`ClockBehind`](crate::ErrorKind::ClockBehind), as `Refuse` would
    ///   (and counted as a refusal in [`stats`](Generator::stats)).
    ///
    /// Otherwise it is `next_id`. It is for callers that must not block
    /// while they hold something others wait for (a Python binding holding
    /// the interpreter's lock): they try this first, and only on those two
    /// errors let go and call `next_id`.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{ErrorKind, Generator, Layout, ManualClock, Node};
    ///
    /// let clock = ManualClock::new(1_700_000_000_000);
    /// let generator = Generator::builder(Layout::TWITTER, Node::default())
    ///     .clock(clock.clone())
    ///     .build()?;
    /// generator.next_ids(4096, &mut Vec::new())?; // all of this millisecond
    /// assert_eq!(generator.try_next_id().unwrap_err().kind(), ErrorKind::SequenceExhausted);
    /// clock.advance(1);
    /// assert_eq!(Layout::TWITTER.timestamp_ms(generator.try_next_id()?), 1_700_000_000_001);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    #[inline]
    pub fn try_next_id(&self) -> Result<SnowflakeId, Error> {
        self.take_one(false, At::Clock)
    }

    /// The next ID for an explicit clock reading `now_ms` (Unix
    /// milliseconds); never waits.
    ///
    /// The twin of [`next_id`](Generator::next_id) for callers that own the
    /// time. When the tick is used up it returns an error of kind
    /// [`SequenceExhausted`](crate::ErrorKind::SequenceExhausted); a `Wait`
    /// policy acts as `Refuse`.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{ErrorKind, Generator, Layout, Node};
    ///
    /// let generator = Generator::new(Layout::TWITTER, Node::default())?;
    /// let t = 1_700_000_000_000;
    /// for _ in 0..4096 {
    ///     generator.next_id_at(t)?;
    /// }
    /// assert_eq!(generator.next_id_at(t).unwrap_err().kind(), ErrorKind::SequenceExhausted);
    /// assert_eq!(generator.next_id_at(t - 1).unwrap_err().kind(), ErrorKind::ClockBehind);
    /// assert!(generator.next_id_at(t + 1).is_ok());
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn next_id_at(&self, now_ms: i64) -> Result<SnowflakeId, Error> {
        self.take_one(false, At::Ms(now_ms))
    }

    /// [`next_id_at`](Generator::next_id_at) for a reading in Unix
    /// microseconds, for layouts with units finer than a millisecond.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Generator, Layout, Node};
    ///
    /// let layout: Layout = "time:44/sequence:8@1700000000000,1us".parse()?;
    /// let generator = Generator::new(layout, Node::default())?;
    /// let id = generator.next_id_at_us(1_700_000_000_000_123)?;
    /// assert_eq!(layout.timestamp_us(id), 1_700_000_000_000_123);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn next_id_at_us(&self, now_us: i64) -> Result<SnowflakeId, Error> {
        self.take_one(false, At::Us(now_us))
    }

    /// Up to `max` IDs from one tick, taken with one compare-and-swap
    /// (fewer if the tick has less room left; at least one). A node of
    /// several slots ends a run where its IDs stop being evenly spaced: at
    /// the end of a slot's sequence (Twitter's order), or of one sequence
    /// number across the slots (Sonyflake's), unless its IDs run on.
    ///
    /// # Errors
    ///
    /// As [`next_id`](Generator::next_id).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Generator, Layout, ManualClock, Node};
    ///
    /// let clock = ManualClock::new(1_700_000_000_000);
    /// let generator = Generator::builder(Layout::TWITTER, Node::default()).clock(clock).build()?;
    /// generator.next_id()?;
    /// let run = generator.next_run(10_000)?;
    /// assert_eq!(run.len(), 4095); // the rest of the millisecond
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn next_run(&self, max: usize) -> Result<IdRun, Error> {
        let (start, end) = self.take(max.max(1) as u64, true, At::Clock)?;
        Ok(IdRun::new(
            self.id_of(start).as_u64(),
            end - start,
            self.run_step,
        ))
    }

    /// Appends `count` new IDs to `out`, one compare-and-swap per tick used
    /// (one or two for up to a tick's worth), waiting for the next tick as
    /// needed. On error `out` is left as it was; the IDs reserved so far
    /// are not reused.
    ///
    /// # Errors
    ///
    /// As [`next_id`](Generator::next_id).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Generator, Layout, Node};
    ///
    /// let generator = Generator::new(Layout::TWITTER, Node::default())?;
    /// let mut ids = Vec::new();
    /// generator.next_ids(10_000, &mut ids)?;
    /// assert_eq!(ids.len(), 10_000);
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn next_ids(&self, count: usize, out: &mut Vec<SnowflakeId>) -> Result<(), Error> {
        let before = out.len();
        out.reserve(count);
        let mut left = count;
        while left > 0 {
            match self.next_run(left) {
                Ok(run) => {
                    left -= run.len();
                    out.extend(run);
                }
                Err(error) => {
                    out.truncate(before);
                    return Err(error);
                }
            }
        }
        Ok(())
    }

    /// The clock's tick at `at` as an offset from the epoch, wrapped: any
    /// value above `max_offset` means a reading outside the layout (the
    /// slow path says which end).
    ///
    /// For 1 ms units one comparison checks both ends: a reading before the
    /// epoch wraps to at least 2^63 as a `u64`, past `max_offset` (the
    /// epoch plus `max_offset` fits an `i64`, so no reading wraps back into
    /// range). Coarser and finer units divide, so they check the sign first.
    #[inline(always)]
    fn offset(&self, at: At) -> u64 {
        match self.ticks {
            Ticks::Millis => self.read_ms(at).wrapping_sub(self.epoch_ms) as u64,
            Ticks::CoarseMillis(unit) => match self.read_ms(at).checked_sub(self.epoch_ms) {
                Some(since) if since >= 0 => since as u64 / unit,
                _ => u64::MAX,
            },
            Ticks::Micros(unit) => match self.read_us(at).checked_sub(self.epoch_us) {
                Some(since) if since >= 0 => since as u64 / unit,
                _ => u64::MAX,
            },
        }
    }

    #[inline(always)]
    fn read_ms(&self, at: At) -> i64 {
        match at {
            At::Clock => self.clock.now_ms(),
            At::Ms(ms) => ms,
            At::Us(us) => us.div_euclid(1000),
        }
    }

    #[inline(always)]
    fn read_us(&self, at: At) -> i64 {
        match at {
            At::Clock => self.clock.now_us(),
            At::Ms(ms) => ms.saturating_mul(1000),
            At::Us(us) => us,
        }
    }

    /// One ID: the common case inline, everything else out of line.
    ///
    /// The common case is one load, one clock reading and one
    /// compare-and-swap: the clock is inside the layout, at or past the
    /// state word's tick, and that tick has room (`plan_one`). Anything
    /// else — another thread won the exchange, the tick is used up, the
    /// clock is behind or outside the layout — starts over in
    /// [`take_one_slow`](Generator::take_one_slow), which decides with the
    /// full `plan`. Kept this small so that it inlines into callers
    /// whatever the build profile: a call, a stack frame and a `Result`
    /// written through memory cost as much as the rest of it.
    #[inline(always)]
    fn take_one(&self, wait: bool, at: At) -> Result<SnowflakeId, Error> {
        // Acquire, and the clock read after it: see `take`.
        let next = self.next.load(Ordering::Acquire);
        let now = self.offset(at);
        if now <= self.max_offset
            && let Some(start) = plan_one(next, now, self.sequence_bits)
            // Release on success, Acquire on failure: see `take`.
            && self
                .next
                .compare_exchange_weak(next, start + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            return Ok(self.id_of(start));
        }
        self.take_one_slow(wait, at)
    }

    /// [`take_one`](Generator::take_one) when its common case did not apply:
    /// a fresh attempt through the full loop.
    #[cold]
    #[inline(never)]
    fn take_one_slow(&self, wait: bool, at: At) -> Result<SnowflakeId, Error> {
        let (start, _) = self.take(1, wait, at)?;
        Ok(self.id_of(start))
    }

    /// The core loop: takes up to `want` pairs; returns `(start, end)`.
    ///
    /// `wait` says whether to wait on exhaustion (and under `Wait`); `at`
    /// replaces the clock for the explicit-time calls. Only taking IDs is
    /// inlined into callers; everything else is in
    /// [`slow_path`](Generator::slow_path).
    #[inline]
    fn take(&self, want: u64, wait: bool, at: At) -> Result<(u64, u64), Error> {
        let mut waited_since = None;
        // Acquire pairs with the Release of the successful exchange below:
        // the clock is read after this load, so it is read after the clock
        // reading of whoever wrote the value seen. A regression is then only
        // reported when the clock really went back, not because another
        // thread read a newer tick a moment before this one.
        let mut next = self.next.load(Ordering::Acquire);
        loop {
            let (now, reading) = self.ticks_checked(at)?;
            match plan(
                next,
                now,
                want,
                (self.sequence_bits, self.row_bits),
                self.max_offset,
                self.borrow_ticks,
            ) {
                Plan::Take { start, end } => {
                    // The `fetch_update` shape: on failure, retry with the
                    // value the exchange saw. Release on success, see above;
                    // Acquire on failure for the same reason as the load.
                    match self.next.compare_exchange_weak(
                        next,
                        end,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => {
                            // Ahead of the clock only when borrowed; a
                            // comparison the common case pays, nothing more.
                            let tick = start >> self.sequence_bits;
                            if tick > now {
                                self.note_lead(tick - now);
                            }
                            return Ok((start, end));
                        }
                        Err(seen) => next = seen,
                    }
                }
                other => {
                    next = self.slow_path(other, next, now, reading, wait, &mut waited_since)?;
                }
            }
        }
    }

    /// The ID for a packed (tick, counter) pair. The counter is split into
    /// the sequence and the slot index without a branch: with one slot the
    /// index is masked to 0.
    #[inline]
    fn id_of(&self, packed: u64) -> SnowflakeId {
        let ticks = packed >> self.sequence_bits;
        let (sequence_at, sequence_mask) = self.counter_sequence;
        let (index_at, index_mask) = self.counter_index;
        let sequence = (packed >> sequence_at) & sequence_mask;
        let index = (packed >> index_at) & index_mask;
        SnowflakeId::from_u64(
            ticks << self.time_shift
                | sequence << self.sequence_shift
                | (self.node_bits + (index << self.node_shift)),
        )
    }

    /// The last timestamp an ID may have been issued at, or `None` if none
    /// has been and no resume point was given: the millisecond the last
    /// tick used starts in (Unix ms). A mark at or above it, given back to
    /// [`resume_after`](GeneratorBuilder::resume_after), skips every tick
    /// used.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Generator, Layout, Node};
    ///
    /// let generator = Generator::new(Layout::TWITTER, Node::default())?;
    /// assert_eq!(generator.last_timestamp_ms(), None);
    /// let id = generator.next_id()?;
    /// assert_eq!(generator.last_timestamp_ms(), Some(Layout::TWITTER.timestamp_ms(id)));
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn last_timestamp_ms(&self) -> Option<i64> {
        // Relaxed: a snapshot for reporting; it orders nothing else.
        let next = self.next.load(Ordering::Relaxed);
        (next > 0).then(|| self.layout.tick_start_ms((next - 1) >> self.sequence_bits))
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The node: with several slots, its first (lowest) slot.
    pub fn node(&self) -> Node {
        self.node
    }

    /// How many slots the node holds (1 unless built with
    /// [`slots`](GeneratorBuilder::slots)): it issues from slots
    /// `node().slot() .. node().slot() + slots()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Generator, Layout, Node};
    ///
    /// let generator = Generator::builder(Layout::TWITTER, Node::from_slot(8)).slots(4).build()?;
    /// assert_eq!(generator.slots(), 4);
    /// assert_eq!(generator.ids_per_second(), 4 * 4_096_000);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// The node's ceiling: one slot's
    /// [`ids_per_second`](Layout::ids_per_second) times its slots.
    pub fn ids_per_second(&self) -> u64 {
        self.layout.ids_per_second().saturating_mul(self.slots)
    }

    /// The clock-regression policy.
    pub fn policy(&self) -> ClockPolicy {
        self.policy
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Counts of waits, regressions and refusals so far, and the largest
    /// lead taken.
    pub fn stats(&self) -> GeneratorStats {
        GeneratorStats {
            exhaustion_waits: self.exhaustion_waits.load(Ordering::Relaxed),
            clock_regressions: self.clock_regressions.load(Ordering::Relaxed),
            refusals: self.refusals.load(Ordering::Relaxed),
            max_lead: self.ticks_to_duration(self.max_lead_ticks.load(Ordering::Relaxed)),
        }
    }

    /// The lead now: how far the IDs issued now run ahead of the clock.
    ///
    /// Under `Borrow` it is how far the last tick used runs ahead of what
    /// the clock reads now, at most the policy's `max_ahead` (an ID that
    /// would need more is refused, and the lead stays at the bound until
    /// the clock comes back within it); it falls back to zero as the clock
    /// catches up. `Refuse` and `Wait` never issue ahead of the clock: for
    /// them it is always zero, even while the clock is behind. Read off the
    /// state word and the clock when asked: the hot path pays nothing for
    /// it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use snowmint::{ClockPolicy, Generator, Layout, ManualClock, Node};
    ///
    /// let clock = ManualClock::new(1_700_000_000_000);
    /// let generator = Generator::builder(Layout::TWITTER, Node::default())
    ///     .clock(clock.clone())
    ///     .policy(ClockPolicy::Borrow { max_ahead: Duration::from_millis(50) })
    ///     .build()?;
    /// generator.next_id()?;
    /// assert_eq!(generator.lead(), Duration::ZERO);
    /// clock.advance(-10); // the clock steps back: the next IDs borrow
    /// generator.next_id()?;
    /// assert_eq!(generator.lead(), Duration::from_millis(10));
    /// assert_eq!(generator.stats().max_lead, Duration::from_millis(10));
    /// clock.advance(10); // caught up
    /// assert_eq!(generator.lead(), Duration::ZERO);
    /// assert_eq!(generator.stats().max_lead, Duration::from_millis(10));
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn lead(&self) -> Duration {
        let Some(bound) = self.borrow_ticks else {
            return Duration::ZERO;
        };
        // Relaxed: a snapshot for reporting, as `last_timestamp_ms`.
        let next = self.next.load(Ordering::Relaxed);
        let now = self.offset(At::Clock);
        if next == 0 || now > self.max_offset {
            return Duration::ZERO;
        }
        let last = (next - 1) >> self.sequence_bits;
        self.ticks_to_duration(last.saturating_sub(now).min(bound))
    }

    /// Records an ID issued `ticks` ahead of the clock.
    #[cold]
    #[inline(never)]
    fn note_lead(&self, ticks: u64) {
        self.max_lead_ticks.fetch_max(ticks, Ordering::Relaxed);
    }

    /// `ticks` of the layout's unit as a duration.
    fn ticks_to_duration(&self, ticks: u64) -> Duration {
        Duration::from_micros(ticks.saturating_mul(u64::from(self.layout.unit().as_micros())))
    }
}

#[cfg(test)]
mod tests;
