//! The ID generator: one packed atomic word, updated by compare-and-swap.
//!
//! # The state word
//!
//! The generator keeps a single `u64`, `next`: the first (timestamp,
//! sequence) pair that has *not* been handed out, packed as
//! `timestamp_offset << sequence_bits | sequence`. Packed this way the pairs
//! are ordered like the IDs they make, so "strictly increasing" is simply
//! "`next` only grows", and taking `n` IDs in one millisecond is replacing
//! `next` by `next + n` in one compare-and-swap.
//!
//! What a call does is decided by [`plan`], a pure function of the word, the
//! clock reading and the policy; the atomic loop around it only retries when
//! another thread got there first. Keeping the decision pure is what lets
//! the model-checking test (`tests/loom.rs`) and the unit tests below cover
//! it on its own. For one ID the common case — the clock at or past the
//! word's millisecond, with room left — is decided inline by [`plan_one`],
//! which a property test checks against [`plan`]; everything else goes to
//! [`plan`].

use std::hint;
use std::ops::Deref;
use std::thread;
use std::time::{Duration, Instant};

#[cfg(loom)]
use loom::sync::atomic::AtomicU64;
#[cfg(not(loom))]
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicU64 as StdAtomicU64, Ordering};

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Field};
use crate::id::SnowflakeId;
use crate::layout::{Layout, Node};

/// How long a short wait spins before it starts to sleep: longer than the
/// wait for the next millisecond on a clock that moves by itself, which so
/// never sleeps...
const SPIN_LIMIT: Duration = Duration::from_millis(2);

/// ... and the sleeps after that, for clocks that move only when told to
/// (or a clock stuck behind a `Wait` policy's target).
const WAIT_STEP: Duration = Duration::from_micros(50);

/// What the generator does when the clock reads earlier than the last
/// timestamp it used (an NTP step, a VM migration, a manual change).
///
/// - [`Refuse`](ClockPolicy::Refuse) (the default): return
///   [`Error::ClockBehind`] with both timestamps, until the clock catches up.
/// - [`Wait`](ClockPolicy::Wait): if the clock is at most `max` behind, wait
///   for it (sleeping, then spinning); past `max`, or if it does not catch up
///   within `max`, refuse.
/// - [`Borrow`](ClockPolicy::Borrow): keep issuing from the last timestamp,
///   as a logical clock, as long as that runs at most `max_ahead` in front of
///   the wall clock; past that, refuse.
///
/// Whatever the policy, IDs stay strictly increasing and are never reused.
/// Running out of sequence numbers within a millisecond is not a regression:
/// it always waits for the next millisecond.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint::{ClockPolicy, Generator, Layout, ManualClock, Node};
///
/// let clock = ManualClock::new(1_700_000_000_000);
/// let generator = Generator::builder(Layout::TWITTER, Node { datacenter: 1, machine: 2 })
///     .clock(clock.clone())
///     .policy(ClockPolicy::Borrow { max_ahead: Duration::from_millis(50) })
///     .build()?;
/// let first = generator.next_id()?;
/// clock.advance(-10); // the clock steps back 10 ms
/// assert!(generator.next_id()? > first); // borrowed: still increasing
/// # Ok::<(), snowmint::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ClockPolicy {
    /// Return an error while the clock is behind.
    #[default]
    Refuse,
    /// Wait up to `max` for the clock to catch up, then refuse.
    Wait {
        /// The longest regression waited out.
        max: Duration,
    },
    /// Issue from the last timestamp, at most `max_ahead` in front of the
    /// clock, then refuse.
    Borrow {
        /// How far the logical clock may run ahead of the wall clock.
        max_ahead: Duration,
    },
}

impl ClockPolicy {
    /// The names of the policies, as [`ClockPolicy::from_name`] reads them.
    pub const NAMES: [&'static str; 3] = ["refuse", "wait", "borrow"];

    /// The policy called `name` (`refuse`, `wait` or `borrow`, in any
    /// case), with `bound` as the limit of `wait` and `borrow`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use snowmint::ClockPolicy;
    ///
    /// let bound = Duration::from_secs(2);
    /// assert_eq!(ClockPolicy::from_name("wait", bound)?, ClockPolicy::Wait { max: bound });
    /// assert_eq!(ClockPolicy::from_name("Refuse", bound)?, ClockPolicy::Refuse);
    /// assert_eq!(
    ///     ClockPolicy::from_name("sometimes", bound).unwrap_err().to_string(),
    ///     "unknown clock policy \"sometimes\" (expected refuse, wait or borrow)"
    /// );
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn from_name(name: &str, bound: Duration) -> Result<ClockPolicy, Error> {
        if name.eq_ignore_ascii_case("refuse") {
            Ok(ClockPolicy::Refuse)
        } else if name.eq_ignore_ascii_case("wait") {
            Ok(ClockPolicy::Wait { max: bound })
        } else if name.eq_ignore_ascii_case("borrow") {
            Ok(ClockPolicy::Borrow { max_ahead: bound })
        } else {
            Err(Error::UnknownClockPolicy {
                name: crate::value::echo(name),
            })
        }
    }

    /// The policy's name: `refuse`, `wait` or `borrow`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(snowmint::ClockPolicy::Refuse.name(), "refuse");
    /// ```
    pub const fn name(&self) -> &'static str {
        match self {
            ClockPolicy::Refuse => "refuse",
            ClockPolicy::Wait { .. } => "wait",
            ClockPolicy::Borrow { .. } => "borrow",
        }
    }

    /// How far behind the clock may be without a refusal: the bound of
    /// `wait` and `borrow`, `None` for `refuse`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use snowmint::ClockPolicy;
    ///
    /// let policy = ClockPolicy::Borrow { max_ahead: Duration::from_millis(50) };
    /// assert_eq!(policy.bound(), Some(Duration::from_millis(50)));
    /// assert_eq!(ClockPolicy::Refuse.bound(), None);
    /// ```
    pub const fn bound(&self) -> Option<Duration> {
        match self {
            ClockPolicy::Refuse => None,
            ClockPolicy::Wait { max } => Some(*max),
            ClockPolicy::Borrow { max_ahead } => Some(*max_ahead),
        }
    }
}

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
    /// Times a caller waited for the next millisecond because the sequence
    /// of the current one was used up.
    pub exhaustion_waits: u64,
    /// Calls that found the clock behind the last timestamp used (refused,
    /// waited or borrowed, depending on the policy).
    pub clock_regressions: u64,
    /// Calls refused because of a regression.
    pub refusals: u64,
}

/// A run of consecutive IDs, all from one millisecond, taken with one
/// compare-and-swap by [`Generator::next_run`].
///
/// Within a millisecond the sequence is the lowest field, so the IDs of a run
/// are consecutive integers; the run iterates over them.
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
    next: u64,
    end: u64,
}

impl IdRun {
    /// The first ID of the run, if any are left.
    pub fn first(&self) -> Option<SnowflakeId> {
        (self.next < self.end).then(|| SnowflakeId::from_raw(self.next))
    }

    /// How many IDs are left in the run.
    pub fn len(&self) -> usize {
        (self.end - self.next) as usize
    }

    /// Whether no IDs are left.
    pub fn is_empty(&self) -> bool {
        self.next == self.end
    }
}

impl Iterator for IdRun {
    type Item = SnowflakeId;

    #[inline]
    fn next(&mut self) -> Option<SnowflakeId> {
        let id = self.first()?;
        self.next += 1;
        Some(id)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len(), Some(self.len()))
    }
}

impl ExactSizeIterator for IdRun {}

/// Builds a [`Generator`]: layout and node are required; the clock, the
/// clock-regression policy and a resume point are optional.
///
/// # Examples
///
/// ```
/// use snowmint::{ClockPolicy, Generator, Layout, ManualClock, Node};
///
/// let generator = Generator::builder(Layout::DISCORD, Node { datacenter: 0, machine: 9 })
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
            clock,
            policy: self.policy,
            resume_after_ms: self.resume_after_ms,
        }
    }

    /// What to do when the clock goes backwards.
    pub fn policy(mut self, policy: ClockPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Treats every timestamp up to and including `last_ms` as already used:
    /// the first ID will be from a later millisecond. Services pass the high-
    /// water mark they recorded before a restart.
    pub fn resume_after(mut self, last_ms: i64) -> Self {
        self.resume_after_ms = Some(last_ms);
        self
    }

    /// Checks the node against the layout and builds the generator.
    pub fn build(self) -> Result<Generator<C>, Error> {
        let floor = self.floor()?;
        self.assemble(OwnWord(CachePadded(AtomicU64::new(floor))))
    }

    /// Checks the node against the layout and builds a generator over a
    /// state word that the caller owns, such as a word in memory shared
    /// between processes.
    ///
    /// Every generator built over one word takes its IDs from that word by
    /// compare-and-swap, so together they keep the rules of one generator:
    /// each ID, from any of them, is greater than every ID any of them
    /// handed out before, and no (timestamp, sequence) pair is used twice.
    ///
    /// - A fresh word is `0`: nothing used yet.
    /// - The word is only ever raised: a
    ///   [`resume_after`](GeneratorBuilder::resume_after) point moves it up
    ///   to just after that millisecond if it is lower, and leaves it alone
    ///   otherwise, so building another generator over a word in use never
    ///   takes back what was handed out.
    /// - The generators over one word must share its layout (the word counts
    ///   milliseconds from the layout's epoch in units of its sequence
    ///   width) and should share the node; the caller keeps to that.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::AtomicU64;
    /// use snowmint::{Generator, Layout, ManualClock, Node};
    ///
    /// let word = AtomicU64::new(0);
    /// let node = Node { datacenter: 1, machine: 2 };
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

    /// The lowest state word the resume point allows: the first pair after
    /// it, or `0` without one.
    fn floor(&self) -> Result<u64, Error> {
        let layout = self.layout;
        layout.node_bits(self.node)?;
        Ok(match self.resume_after_ms {
            Some(last_ms) if last_ms >= layout.last_instant_ms() => {
                return Err(Error::TimestampPastEnd {
                    timestamp_ms: last_ms.saturating_add(1),
                    epoch_ms: layout.epoch_ms(),
                    last_ms: layout.last_instant_ms(),
                });
            }
            Some(last_ms) if last_ms >= layout.epoch_ms() => {
                let offset = layout.timestamp_offset(last_ms)?;
                (offset + 1) << layout.sequence_bits()
            }
            _ => 0,
        })
    }

    /// The generator over `next`, already at or above the floor.
    fn assemble<W>(self, next: W) -> Result<Generator<C, W>, Error> {
        let layout = self.layout;
        let node_bits = layout.node_bits(self.node)?;
        let bound_ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Ok(Generator {
            next,
            node_bits,
            epoch_ms: layout.epoch_ms(),
            sequence_bits: layout.sequence_bits(),
            timestamp_shift: layout.timestamp_shift(),
            max_offset: layout.max(Field::Timestamp),
            layout,
            node: self.node,
            clock: self.clock,
            policy: self.policy,
            borrow_ms: match self.policy {
                ClockPolicy::Borrow { max_ahead } => Some(bound_ms(max_ahead)),
                _ => None,
            },
            exhaustion_waits: StdAtomicU64::new(0),
            clock_regressions: StdAtomicU64::new(0),
            refusals: StdAtomicU64::new(0),
        })
    }
}

/// A thread-safe Snowflake ID generator for one node.
///
/// - IDs are strictly increasing: each ID handed out, by any thread, is
///   greater than every ID handed out before it.
/// - Within a millisecond the sequence counts up from 0; when it is used up,
///   callers wait for the next millisecond (sleeping until just before it
///   when the clock can say when it comes, then spinning). No sequence
///   number is used twice and none is skipped.
/// - When the clock is behind the last timestamp used, the [`ClockPolicy`]
///   decides (by default: refuse with [`Error::ClockBehind`]).
/// - Past the layout's last instant it returns [`Error::TimestampPastEnd`];
///   it never wraps.
///
/// The hot path is one atomic load, one clock read and one compare-and-swap;
/// there is no lock.
///
/// # Examples
///
/// ```
/// use snowmint::{Generator, Layout, Node};
///
/// let generator = Generator::new(Layout::TWITTER, Node { datacenter: 7, machine: 13 })?;
/// let a = generator.next_id()?;
/// let b = generator.next_id()?;
/// assert!(b > a);
/// assert_eq!(Layout::TWITTER.decode(b).machine, 13);
/// # Ok::<(), snowmint::Error>(())
/// ```
///
/// A generator owns its state word by default; one built with
/// [`GeneratorBuilder::build_on`] works over a word that the caller owns
/// (`W` is then, for example, `&AtomicU64`), so that several generators, in
/// one process or in processes that share memory, issue as one.
#[derive(Debug)]
pub struct Generator<C = SystemClock, W = OwnWord> {
    /// The first unused (timestamp offset, sequence) pair, packed. Owned,
    /// it sits alone on its cache line because every call writes it.
    next: W,
    /// Datacenter and machine, already shifted into place.
    node_bits: u64,
    // The layout's numbers the hot path needs, copied out of it once.
    epoch_ms: i64,
    sequence_bits: u8,
    timestamp_shift: u8,
    max_offset: u64,
    layout: Layout,
    node: Node,
    clock: C,
    policy: ClockPolicy,
    /// The borrow bound in milliseconds, when the policy borrows.
    borrow_ms: Option<u64>,
    // Slow-path counters. Relaxed: they order nothing, they only count.
    exhaustion_waits: StdAtomicU64,
    clock_regressions: StdAtomicU64,
    refusals: StdAtomicU64,
}

impl Generator<SystemClock> {
    /// A generator on the system clock with the default `Refuse` policy.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Generator, Layout, Node};
    ///
    /// assert!(Generator::new(Layout::TWITTER, Node { datacenter: 31, machine: 31 }).is_ok());
    /// assert!(Generator::new(Layout::TWITTER, Node { datacenter: 32, machine: 0 }).is_err());
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

/// What one attempt should do, given the state word and the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Replace `next` by `end`; the pairs `start..end` are the new IDs.
    Take { start: u64, end: u64 },
    /// The sequence of the clock's millisecond is used up: wait for the
    /// clock to reach offset `until`.
    Exhausted { until: u64 },
    /// The clock is behind: it must reach offset `until` before the next ID
    /// can be made (unless the policy borrows).
    Behind { until: u64 },
    /// The next ID would be past the layout's last instant.
    PastEnd,
}

/// The common case of [`plan`] for one ID, decided with a comparison: the
/// pair to take when the clock's millisecond `now` (already checked to be in
/// `0..=max_offset`) is at or past the state word's and has room left.
/// `None` leaves the decision to [`plan`] (used up, behind, borrowing).
///
/// The larger of `next` and the first pair of `now` is the pair [`plan`]
/// would start at; it belongs to `now` exactly when `next` is not ahead of
/// the clock.
#[inline(always)]
pub(crate) fn plan_one(next: u64, now: u64, sequence_bits: u8) -> Option<u64> {
    let start = next.max(now << sequence_bits);
    (start >> sequence_bits == now).then_some(start)
}

/// Decides one attempt: pure, so that it can be tested and model-checked on
/// its own. Inlined: it is the hot path's only logic.
///
/// `next` is the state word, `now` the clock as an offset from the epoch
/// (already checked to be in `0..=max_offset`), `want` the most IDs wanted
/// (at least 1), `borrow_ms` the borrow bound if the policy borrows.
#[inline]
pub(crate) fn plan(
    next: u64,
    now: u64,
    want: u64,
    sequence_bits: u8,
    max_offset: u64,
    borrow_ms: Option<u64>,
) -> Plan {
    let sequence_mask = (1u64 << sequence_bits) - 1;
    let next_offset = next >> sequence_bits;
    let start = if now > next_offset {
        // A new millisecond: its sequence starts at 0.
        now << sequence_bits
    } else if now == next_offset {
        next
    } else if next & sequence_mask == 0 && next_offset == now + 1 {
        // The whole of `now` is used and nothing later: plain exhaustion.
        return Plan::Exhausted { until: next_offset };
    } else if borrow_ms.is_some_and(|bound| next_offset - now <= bound) {
        next
    } else {
        return Plan::Behind { until: next_offset };
    };
    if start >> sequence_bits > max_offset {
        return Plan::PastEnd;
    }
    let room = sequence_mask + 1 - (start & sequence_mask);
    Plan::Take {
        start,
        end: start + want.min(room),
    }
}

impl<C: Clock, W: Deref<Target = AtomicU64>> Generator<C, W> {
    /// The next ID. Waits for the next millisecond when this one's sequence
    /// is used up; follows the policy when the clock is behind.
    ///
    /// # Errors
    ///
    /// [`Error::ClockBehind`] when the policy refuses,
    /// [`Error::TimestampBeforeEpoch`] / [`Error::TimestampPastEnd`] when the
    /// clock is outside the layout.
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
        self.take_one(true, None)
    }

    /// The next ID if it can be had without waiting, read from the clock
    /// as [`next_id`](Generator::next_id) does.
    ///
    /// Where `next_id` would wait it returns at once instead:
    ///
    /// - this millisecond's sequence is used up: [`Error::SequenceExhausted`];
    /// - the clock is behind under a `Wait` policy: [`Error::ClockBehind`],
    ///   as `Refuse` would (and counted as a refusal in
    ///   [`stats`](Generator::stats)).
    ///
    /// Otherwise it is `next_id`. It is for callers that must not block
    /// while they hold something others wait for (a Python binding holding
    /// the interpreter's lock): they try this first, and only on those two
    /// errors let go and call `next_id`.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Error, Generator, Layout, ManualClock, Node};
    ///
    /// let clock = ManualClock::new(1_700_000_000_000);
    /// let generator = Generator::builder(Layout::TWITTER, Node::default())
    ///     .clock(clock.clone())
    ///     .build()?;
    /// generator.next_ids(4096, &mut Vec::new())?; // all of this millisecond
    /// assert!(matches!(generator.try_next_id(), Err(Error::SequenceExhausted { .. })));
    /// clock.advance(1);
    /// assert_eq!(Layout::TWITTER.timestamp_ms(generator.try_next_id()?), 1_700_000_000_001);
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    #[inline]
    pub fn try_next_id(&self) -> Result<SnowflakeId, Error> {
        self.take_one(false, None)
    }

    /// The next ID for an explicit clock reading `now_ms`; never waits.
    ///
    /// The twin of [`next_id`](Generator::next_id) for callers that own the
    /// time. When the millisecond is used up it returns
    /// [`Error::SequenceExhausted`]; a `Wait` policy acts as `Refuse`.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Error, Generator, Layout, Node};
    ///
    /// let generator = Generator::new(Layout::TWITTER, Node::default())?;
    /// let t = 1_700_000_000_000;
    /// for _ in 0..4096 {
    ///     generator.next_id_at(t)?;
    /// }
    /// assert!(matches!(generator.next_id_at(t), Err(Error::SequenceExhausted { .. })));
    /// assert!(matches!(generator.next_id_at(t - 1), Err(Error::ClockBehind { .. })));
    /// assert!(generator.next_id_at(t + 1).is_ok());
    /// # Ok::<(), snowmint::Error>(())
    /// ```
    pub fn next_id_at(&self, now_ms: i64) -> Result<SnowflakeId, Error> {
        self.take_one(false, Some(now_ms))
    }

    /// Up to `max` IDs from one millisecond, taken with one compare-and-swap
    /// (fewer if the millisecond has less room left; at least one).
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
        let (start, end) = self.take(max.max(1) as u64, true, None)?;
        Ok(IdRun {
            next: self.id_of(start).as_u64(),
            end: self.id_of(end - 1).as_u64() + 1,
        })
    }

    /// Appends `count` new IDs to `out`, one compare-and-swap per
    /// millisecond used (one or two for up to 4096 IDs), waiting for the next
    /// millisecond as needed. On error `out` is left as it was; the IDs
    /// reserved so far are not reused.
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

    /// One ID: the common case inline, everything else out of line.
    ///
    /// The common case is one load, one clock reading and one
    /// compare-and-swap: the clock is inside the layout, at or past the
    /// state word's millisecond, and that millisecond has room
    /// ([`plan_one`]). Anything else — another thread won the exchange, the
    /// millisecond is used up, the clock is behind or outside the layout —
    /// starts over in [`take_one_slow`](Generator::take_one_slow), which
    /// decides with the full [`plan`]. Kept this small so that it inlines
    /// into callers whatever the build profile: a call, a stack frame and a
    /// `Result` written through memory cost as much as the rest of it.
    #[inline(always)]
    fn take_one(&self, wait: bool, fixed_now: Option<i64>) -> Result<SnowflakeId, Error> {
        // Acquire, and the clock read after it: see `take`.
        let next = self.next.load(Ordering::Acquire);
        let now_ms = match fixed_now {
            Some(now_ms) => now_ms,
            None => self.clock.now_ms(),
        };
        // One comparison checks both ends of the layout: a reading before
        // the epoch wraps to at least 2^63 as a `u64`, past `max_offset`
        // (the epoch plus `max_offset` fits an `i64`, so no reading wraps
        // back into range).
        let now = now_ms.wrapping_sub(self.epoch_ms) as u64;
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
        self.take_one_slow(wait, fixed_now)
    }

    /// [`take_one`](Generator::take_one) when its common case did not apply:
    /// a fresh attempt through the full loop.
    #[cold]
    #[inline(never)]
    fn take_one_slow(&self, wait: bool, fixed_now: Option<i64>) -> Result<SnowflakeId, Error> {
        let (start, _) = self.take(1, wait, fixed_now)?;
        Ok(self.id_of(start))
    }

    /// The core loop: takes up to `want` pairs; returns `(start, end)`.
    ///
    /// `wait` says whether to wait on exhaustion (and under `Wait`);
    /// `fixed_now` replaces the clock for the explicit-time calls. Only
    /// taking IDs is inlined into callers; everything else is in
    /// [`slow_path`](Generator::slow_path).
    #[inline]
    fn take(&self, want: u64, wait: bool, fixed_now: Option<i64>) -> Result<(u64, u64), Error> {
        let mut waited_since: Option<Instant> = None;
        // Acquire pairs with the Release of the successful exchange below:
        // the clock is read after this load, so it is read after the clock
        // reading of whoever wrote the value seen. A regression is then only
        // reported when the clock really went back, not because another
        // thread read a newer millisecond a moment before this one.
        let mut next = self.next.load(Ordering::Acquire);
        loop {
            let now_ms = fixed_now.unwrap_or_else(|| self.clock.now_ms());
            let now = self.layout.timestamp_offset(now_ms)?;
            match plan(
                next,
                now,
                want,
                self.sequence_bits,
                self.max_offset,
                self.borrow_ms,
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
                        Ok(_) => return Ok((start, end)),
                        Err(seen) => next = seen,
                    }
                }
                other => {
                    next = self.slow_path(other, next, now, now_ms, wait, &mut waited_since)?;
                }
            }
        }
    }

    /// Everything but taking IDs: waits out exhaustion or a regression when
    /// allowed (then returns the state word to retry with), or returns the
    /// error to give the caller.
    #[cold]
    #[inline(never)]
    fn slow_path(
        &self,
        plan: Plan,
        next: u64,
        now: u64,
        now_ms: i64,
        wait: bool,
        waited_since: &mut Option<Instant>,
    ) -> Result<u64, Error> {
        let sequence_bits = self.sequence_bits;
        match plan {
            // Not sent here; retrying with a fresh word would be harmless.
            Plan::Take { .. } => {}
            Plan::Exhausted { until } => {
                if !wait {
                    return Err(Error::SequenceExhausted {
                        timestamp_ms: now_ms,
                        ids_per_ms: self.layout.ids_per_ms(),
                    });
                }
                self.exhaustion_waits.fetch_add(1, Ordering::Relaxed);
                // Ends when the clock arrives, or goes back: the next plan
                // then sees it behind.
                let _ = self.wait_for(until, None);
            }
            Plan::Behind { until } => {
                self.clock_regressions.fetch_add(1, Ordering::Relaxed);
                let behind_ms = until - now;
                let deadline = match (self.policy, wait) {
                    (ClockPolicy::Wait { max }, true)
                        if Duration::from_millis(behind_ms) <= max =>
                    {
                        let since = *waited_since.get_or_insert_with(Instant::now);
                        Some(since + max)
                    }
                    _ => None,
                };
                let waited = match deadline {
                    Some(deadline) => self.wait_for(until, Some(deadline)),
                    None => Err(now_ms),
                };
                let last_ms = self.layout.epoch_ms() + ((next - 1) >> sequence_bits) as i64;
                // A wait that ran out with the clock back at the last
                // millisecond used is no longer behind, only out of IDs for
                // that millisecond: the next plan waits that out.
                if let Err(now_ms) = waited
                    && now_ms < last_ms
                {
                    self.refusals.fetch_add(1, Ordering::Relaxed);
                    return Err(Error::ClockBehind { last_ms, now_ms });
                }
            }
            Plan::PastEnd => {
                return Err(Error::TimestampPastEnd {
                    timestamp_ms: self.layout.epoch_ms() + (next >> sequence_bits) as i64,
                    epoch_ms: self.layout.epoch_ms(),
                    last_ms: self.layout.last_instant_ms(),
                });
            }
        }
        Ok(self.next.load(Ordering::Acquire))
    }

    /// Waits until the clock reaches offset `until`; if `deadline` passes
    /// first, or (without a deadline) the clock goes back, returns the last
    /// reading instead.
    ///
    /// A gap of more than a couple of milliseconds is slept off in one go.
    /// The last millisecond or two are spun, reading the clock, so that the
    /// first IDs of the new millisecond come right at its start: a thread
    /// that sleeps or yields there can wake a whole millisecond late and
    /// lose that millisecond's IDs (BENCHMARKS.md compares the two). A clock
    /// that has not moved after [`SPIN_LIMIT`] of spinning is a hand-driven
    /// one: it is then polled in short sleeps.
    fn wait_for(&self, until: u64, deadline: Option<Instant>) -> Result<(), i64> {
        let target_ms = self.layout.epoch_ms() + until as i64;
        let mut spinning_since: Option<Instant> = None;
        loop {
            let now_ms = self.clock.now_ms();
            let gap = target_ms - now_ms;
            if gap <= 0 {
                return Ok(());
            }
            // Exhaustion (no deadline) waits for the next millisecond only:
            // a larger gap means the clock went back meanwhile, which is
            // the caller's policy to decide (refuse, wait within its bound,
            // borrow), not a gap to sleep off, however long.
            if deadline.is_none() && gap > 1 {
                return Err(now_ms);
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|left| left.is_zero()) {
                return Err(now_ms);
            }
            if gap > 2 {
                let nap = Duration::from_millis(gap as u64 - 1);
                thread::sleep(left.map_or(nap, |left| left.min(nap)));
            } else if spinning_since.get_or_insert_with(Instant::now).elapsed() < SPIN_LIMIT {
                hint::spin_loop();
            } else {
                thread::sleep(WAIT_STEP);
            }
        }
    }

    /// The ID for a packed (offset, sequence) pair.
    #[inline]
    fn id_of(&self, packed: u64) -> SnowflakeId {
        let offset = packed >> self.sequence_bits;
        let sequence = packed & ((1u64 << self.sequence_bits) - 1);
        SnowflakeId::from_raw(offset << self.timestamp_shift | self.node_bits | sequence)
    }

    /// The last timestamp an ID may have been issued at (Unix ms), or `None`
    /// if none has been and no resume point was given.
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
        (next > 0)
            .then(|| self.layout.epoch_ms() + ((next - 1) >> self.layout.sequence_bits()) as i64)
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The node.
    pub fn node(&self) -> Node {
        self.node
    }

    /// The clock-regression policy.
    pub fn policy(&self) -> ClockPolicy {
        self.policy
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Counts of waits, regressions and refusals so far.
    pub fn stats(&self) -> GeneratorStats {
        GeneratorStats {
            exhaustion_waits: self.exhaustion_waits.load(Ordering::Relaxed),
            clock_regressions: self.clock_regressions.load(Ordering::Relaxed),
            refusals: self.refusals.load(Ordering::Relaxed),
        }
    }
}

/// The state word a [`Generator`] owns, the default: an `AtomicU64` alone
/// on its cache line. See [`GeneratorBuilder::build_on`] for a generator
/// over a word of the caller's.
#[derive(Debug)]
pub struct OwnWord(CachePadded<AtomicU64>);

impl Deref for OwnWord {
    type Target = AtomicU64;

    fn deref(&self) -> &AtomicU64 {
        &self.0
    }
}

/// Keeps a value on its own cache line (128 bytes covers the adjacent-line
/// prefetch of x86 and the line size of recent ARM cores).
#[derive(Debug, Default)]
#[repr(align(128))]
struct CachePadded<T>(T);

impl<T> Deref for CachePadded<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u8 = 12;
    const MAX: u64 = (1 << 41) - 1;

    fn pack(offset: u64, sequence: u64) -> u64 {
        offset << S | sequence
    }

    #[test]
    fn fresh_state_takes_the_clock_millisecond() {
        assert_eq!(
            plan(0, 100, 1, S, MAX, None),
            Plan::Take {
                start: pack(100, 0),
                end: pack(100, 1)
            }
        );
    }

    #[test]
    fn same_millisecond_continues_the_sequence() {
        assert_eq!(
            plan(pack(100, 7), 100, 1, S, MAX, None),
            Plan::Take {
                start: pack(100, 7),
                end: pack(100, 8)
            }
        );
    }

    #[test]
    fn a_batch_stops_at_the_end_of_the_millisecond() {
        assert_eq!(
            plan(pack(100, 4000), 100, 4096, S, MAX, None),
            Plan::Take {
                start: pack(100, 4000),
                end: pack(101, 0)
            }
        );
    }

    #[test]
    fn used_up_millisecond_is_exhaustion_not_regression() {
        assert_eq!(
            plan(pack(101, 0), 100, 1, S, MAX, None),
            Plan::Exhausted { until: 101 }
        );
        assert_eq!(
            plan(pack(101, 0), 100, 1, S, MAX, Some(50)),
            Plan::Exhausted { until: 101 }
        );
    }

    #[test]
    fn regression_is_behind_unless_borrowed_within_bound() {
        assert_eq!(
            plan(pack(101, 1), 100, 1, S, MAX, None),
            Plan::Behind { until: 101 }
        );
        assert_eq!(
            plan(pack(110, 0), 100, 1, S, MAX, None),
            Plan::Behind { until: 110 }
        );
        assert_eq!(
            plan(pack(110, 3), 100, 1, S, MAX, Some(10)),
            Plan::Take {
                start: pack(110, 3),
                end: pack(110, 4)
            }
        );
        assert_eq!(
            plan(pack(111, 3), 100, 1, S, MAX, Some(10)),
            Plan::Behind { until: 111 }
        );
    }

    #[test]
    fn never_past_the_last_instant() {
        assert_eq!(
            plan(pack(MAX + 1, 0), MAX, 1, S, MAX, None),
            Plan::Exhausted { until: MAX + 1 }
        );
        assert_eq!(
            plan(pack(MAX + 1, 0), MAX - 1, 1, S, MAX, Some(5)),
            Plan::PastEnd
        );
        assert_eq!(
            plan(pack(MAX, 4095), MAX, 1, S, MAX, None),
            Plan::Take {
                start: pack(MAX, 4095),
                end: pack(MAX + 1, 0)
            }
        );
    }

    proptest::proptest! {
        /// The inline common case takes exactly what `plan` takes for one ID
        /// at the clock's millisecond, and leaves every other case to it, for
        /// any sequence width, near the start and near the end of the layout.
        #[test]
        fn plan_one_is_the_common_case_of_plan(
            sequence_bits in 1u8..=21,
            now in proptest::prop_oneof![0u64..6, (MAX - 5)..=MAX],
            ahead in -3i64..=3,
            sequence in 0u64..(1 << 21),
            borrow_ms in proptest::option::of(0u64..4),
        ) {
            let sequence = sequence & ((1 << sequence_bits) - 1);
            let next_offset = now.saturating_add_signed(ahead).min(MAX + 1);
            let next = if next_offset == MAX + 1 {
                // Past the last instant only the first pair can be the state.
                next_offset << sequence_bits
            } else {
                next_offset << sequence_bits | sequence
            };
            let full = plan(next, now, 1, sequence_bits, MAX, borrow_ms);
            match plan_one(next, now, sequence_bits) {
                Some(start) => proptest::prop_assert_eq!(
                    full,
                    Plan::Take { start, end: start + 1 }
                ),
                None => proptest::prop_assert!(
                    !matches!(full, Plan::Take { start, .. } if start >> sequence_bits == now),
                    "plan took at the clock's millisecond: {full:?}"
                ),
            }
        }
    }

    #[test]
    fn readings_outside_the_layout_are_refused_at_both_ends() {
        // The common case checks the range with one wrapping comparison; the
        // readings that could fool it are the extremes of `i64`, with the
        // epoch at either end of what a 41-bit layout allows.
        let widest = i64::MAX - MAX as i64;
        for epoch_ms in [0, Layout::TWITTER.epoch_ms(), widest] {
            let layout = Layout::TWITTER.with_epoch(epoch_ms).expect("valid epoch");
            let last = layout.last_instant_ms();
            let generator = Generator::builder(layout, Node::default())
                .clock(crate::ManualClock::new(0))
                .build()
                .expect("valid generator");
            for before in [i64::MIN, i64::MIN + 1, epoch_ms - 1] {
                if before < epoch_ms {
                    let result = generator.next_id_at(before);
                    assert!(
                        matches!(result, Err(Error::TimestampBeforeEpoch { .. })),
                        "epoch {epoch_ms}, reading {before}: {result:?}"
                    );
                }
            }
            if last < i64::MAX {
                for after in [last + 1, i64::MAX] {
                    let result = generator.next_id_at(after);
                    assert!(
                        matches!(result, Err(Error::TimestampPastEnd { .. })),
                        "epoch {epoch_ms}, reading {after}: {result:?}"
                    );
                }
            }
            for inside in [epoch_ms, last] {
                let id = generator
                    .next_id_at(inside)
                    .expect("a reading inside the layout");
                assert_eq!(layout.timestamp_ms(id), inside);
            }
            assert_eq!(generator.stats(), GeneratorStats::default());
        }
    }

    #[test]
    fn exhaustion_waits_for_a_clock_that_cannot_say_when_it_ticks() {
        // A hand-driven clock does not move while the wait spins: after the
        // spin limit it is polled in short sleeps until another thread
        // moves it.
        let clock = crate::ManualClock::new(1_700_000_000_000);
        let generator = Generator::builder(Layout::TWITTER, Node::default())
            .clock(clock.clone())
            .build()
            .expect("valid generator");
        let mut ids = Vec::new();
        generator
            .next_ids(4096, &mut ids)
            .expect("one millisecond's worth");
        let ticker = thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            clock.advance(1);
        });
        let next = generator.next_id().expect("an ID once the clock moves");
        ticker.join().expect("ticker thread");
        assert_eq!(Layout::TWITTER.timestamp_ms(next), 1_700_000_000_001);
        assert_eq!(Layout::TWITTER.decode(next).sequence, 0);
        assert_eq!(generator.stats().exhaustion_waits, 1);
    }

    #[test]
    fn exhaustion_on_the_system_clock_moves_to_a_later_millisecond() {
        let generator = Generator::new(Layout::TWITTER, Node::default()).expect("valid");
        let mut ids = Vec::new();
        // Three milliseconds' worth: at least two waits for the next one.
        generator.next_ids(3 * 4096, &mut ids).expect("IDs");
        assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
        let last = Layout::TWITTER.timestamp_ms(ids[ids.len() - 1]);
        let first = Layout::TWITTER.timestamp_ms(ids[0]);
        assert!(last >= first + 2, "{first} .. {last}");
        assert!(last <= SystemClock.now_ms(), "no ID from the future");
    }
}
