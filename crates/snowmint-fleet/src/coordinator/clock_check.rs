//! The clock check: before it claims a slot, and then every
//! [`ClockCheck::every`], a node compares its clock with the clocks of a
//! few nodes that hold slots of the fleet and, where the coordinator keeps
//! one, with the coordinator's (docs/ARCHITECTURE.md §3, "The clock
//! check").
//!
//! - Each reading is a round trip: this node's clock is read when the
//!   question leaves (`sent`) and when the answer arrives (`received`); the
//!   other clock was read at some instant in between, so this node is
//!   `(sent + received) / 2 - other` ahead of it, give or take half the
//!   round trip (and a millisecond for the whole milliseconds both clocks
//!   count in).
//! - Peers: up to [`PEERS`] holders of the fleet's slots, drawn at random,
//!   read through the front end's [`PeerClock`] (`snowmint serve` asks
//!   their `GET /v1/node` for `clock_ms`); a peer that does not answer
//!   within a second is left out. The coordinator: PostgreSQL's
//!   `clock_timestamp()`, the modification time ZooKeeper's leader gives a
//!   write; etcd keeps no clock a client can read.
//! - A source says the node is off when even the nearest end of its
//!   reading lies beyond the allowed skew (`|offset| - error > max`). The
//!   node is off when more than half of the sources say so: one wrong
//!   clock among the peers cannot stop a sound node, and a node joining a
//!   fleet whose nodes agree with each other is measured against them.
//!   With no source at all (the first node of an etcd fleet), nothing is
//!   known and the node claims.
//! - Rate: a node's claim deadline is timed on its monotonic clock, and
//!   its lease is counted on the coordinator's: a node clock that runs
//!   slow lets the deadline pass the lease's end, and the node would issue
//!   after its slot could have passed to another. So each reading of a
//!   source is also timed on the monotonic clock, and two readings of one
//!   source say how fast this clock ran against it: the source counted
//!   `other` ms while this clock counted `local` ms, give or take the two
//!   readings' error bars. A source says the clock is slow when even the
//!   largest `local` its bars allow is below [`MIN_CLOCK_RATE`] times
//!   `other`; more than half of the sources that have two readings decide,
//!   as for the skew. The first check after a claim comes sooner (a tenth
//!   of the TTL, within 100 ms..=1 s) when the node has no rate yet, so
//!   that a node started with a slow clock gives its slot up soon after it
//!   took it, not a whole interval later.
//! - Off at claim time (skewed or slow): the node claims nothing, fenced
//!   with a reason that names the offset or the rate and every source, and
//!   checks again with backoff. Off while holding a slot: the claim ends
//!   as a release (fenced first, the record ended, the slot freed), and
//!   the node claims again once its clock is back in range.
//!
//! Uniqueness never rests on this check (slots keep nodes apart, the
//! high-water mark keeps a slot's holders apart); the skew keeps IDs'
//! times honest across the fleet, and keeps a node from taking over a
//! slot whose mark its clock is far behind; the rate keeps the fencing
//! deadline honest, so that two holders of a slot never issue at once.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::Clock;
use snowmint::value::format_duration;
use tokio::task::JoinSet;

use super::engine::{Live, Shared};
use super::{Backend, ClaimError, ConfigError, Holder, Timing};
use crate::BoxFuture;

/// The most peers one check reads: enough that one wrong clock is
/// outvoted, few enough that a check costs the same whatever the fleet's
/// size.
pub const PEERS: usize = 5;

/// How long a peer may take to answer before it is left out of a check.
const PEER_LIMIT: Duration = Duration::from_secs(1);

/// The slowest rate a node's clock may run at against the clocks it is
/// compared with. The claim deadline keeps a tenth of the TTL before the
/// lease can end, which a clock running at 0.9 of the coordinator's uses
/// up over one TTL; the check fences at 0.95, leaving half the margin for
/// what the readings cannot see.
pub const MIN_CLOCK_RATE: f64 = 0.95;

/// The most sources whose last reading is kept for the next rate.
const RATE_SAMPLES: usize = 4 * PEERS;

/// The smallest and largest allowed skew.
const SKEW_RANGE: std::ops::RangeInclusive<Duration> =
    Duration::from_millis(10)..=Duration::from_secs(3600);
/// The shortest and longest interval between checks.
const EVERY_RANGE: std::ops::RangeInclusive<Duration> =
    Duration::from_secs(1)..=Duration::from_secs(86_400);

/// How the clock check runs.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint_fleet::{ClockCheck, parse_clock_check_every, parse_max_clock_skew};
///
/// let check = ClockCheck::default();
/// assert_eq!(check.max_skew, Some(Duration::from_secs(1)));
/// assert_eq!(check.every, Duration::from_secs(30));
/// assert_eq!(parse_max_clock_skew("off")?, None);
/// assert_eq!(parse_max_clock_skew("250ms")?, Some(Duration::from_millis(250)));
/// assert_eq!(
///     parse_max_clock_skew("5ms").unwrap_err().to_string(),
///     "max clock skew 5ms is out of range (10ms..=1h)"
/// );
/// assert_eq!(parse_clock_check_every("1m")?, Duration::from_secs(60));
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockCheck {
    /// How far this node's clock may be from the others; `None`: the
    /// check is off.
    pub max_skew: Option<Duration>,
    /// How often a node that holds a slot checks again.
    pub every: Duration,
}

impl Default for ClockCheck {
    fn default() -> Self {
        ClockCheck {
            max_skew: Some(Duration::from_secs(1)),
            every: Duration::from_secs(30),
        }
    }
}

/// Reads the largest skew allowed between this node's clock and the
/// others: a duration in `10ms..=1h`, or `off`.
pub fn parse_max_clock_skew(text: &str) -> Result<Option<Duration>, ConfigError> {
    if text == "off" {
        return Ok(None);
    }
    snowmint::value::parse_duration("max clock skew", text, SKEW_RANGE)
        .map(Some)
        .map_err(ConfigError::Value)
}

/// Reads how often the clock is checked: a duration in `1s..=24h`.
pub fn parse_clock_check_every(text: &str) -> Result<Duration, ConfigError> {
    snowmint::value::parse_duration("clock check interval", text, EVERY_RANGE)
        .map_err(ConfigError::Value)
}

/// One reading of another clock, in Unix ms: this node's clock when the
/// question left and when the answer came back, and what the other clock
/// said in between.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::ClockSample;
///
/// // Asked at 1000, answered at 1010; the other clock said 4005.
/// let sample = ClockSample { sent_ms: 1_000, other_ms: 4_005, received_ms: 1_010 };
/// assert_eq!(sample.offset_ms(), -3_000); // this clock is 3 s behind
/// assert_eq!(sample.error_ms(), 6); // half the round trip, and 1 ms
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockSample {
    /// This node's clock when the question was sent.
    pub sent_ms: i64,
    /// The other clock, as it answered.
    pub other_ms: i64,
    /// This node's clock when the answer arrived.
    pub received_ms: i64,
}

impl ClockSample {
    /// How far this clock is ahead of the other (negative: behind), taken
    /// at the middle of the round trip.
    pub fn offset_ms(&self) -> i64 {
        let middle = self.sent_ms + (self.received_ms - self.sent_ms) / 2;
        middle - self.other_ms
    }

    /// How far the true offset can be from [`offset_ms`](Self::offset_ms):
    /// half the round trip, rounded up, and one millisecond for the whole
    /// milliseconds both clocks count in.
    pub fn error_ms(&self) -> i64 {
        (self.received_ms - self.sent_ms).max(0).saturating_add(1) / 2 + 1
    }
}

/// How a front end reads another node's clock: `snowmint serve` asks the
/// node's `GET /v1/node` for `clock_ms`. The engine picks the nodes and
/// judges the readings.
pub trait PeerClock: Send + Sync + 'static {
    /// Reads the clock of the node `holder` names, timing the exchange
    /// with `clock` (this node's clock); `Err` says why not, in a few
    /// words.
    fn read(
        &self,
        holder: Holder,
        clock: Arc<dyn Clock>,
    ) -> BoxFuture<'static, Result<ClockSample, String>>;
}

/// What a clock was compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClockSource {
    /// The node holding `slot`, named by its host and address.
    Peer {
        /// The slot it holds.
        slot: u64,
        /// `host (ADDRESS)`.
        name: String,
    },
    /// The coordinator's own clock.
    Coordinator {
        /// `postgres`, `zookeeper`.
        kind: &'static str,
    },
}

impl fmt::Display for ClockSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClockSource::Peer { slot, name } => write!(f, "node {name} (slot {slot})"),
            ClockSource::Coordinator { kind } => write!(f, "the coordinator ({kind})"),
        }
    }
}

/// One source's reading.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClockReading {
    /// What was read.
    pub source: ClockSource,
    /// How far this node's clock is ahead of it (negative: behind).
    pub offset_ms: i64,
    /// Give or take this much.
    pub error_ms: i64,
}

impl ClockReading {
    /// Whether even the nearest end of the reading is beyond `max`.
    fn beyond(&self, max: Duration) -> bool {
        let max_ms = i64::try_from(max.as_millis()).unwrap_or(i64::MAX);
        self.offset_ms
            .saturating_abs()
            .saturating_sub(self.error_ms)
            > max_ms
    }
}

impl fmt::Display for ClockReading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:+} ± {} ms",
            self.source, self.offset_ms, self.error_ms
        )
    }
}

/// How fast this node's clock ran against one source, from two readings
/// of it: the source's clock counted `other_ms` while this node's
/// monotonic clock (the one that times its claim deadline) counted
/// `local_ms`.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::{ClockSource, RateReading};
///
/// // The coordinator's clock ran 1000 ms while this one ran 200 ms.
/// let reading = RateReading::new(ClockSource::Coordinator { kind: "postgres" }, 200, 1_000, 4);
/// assert!(reading.slow());
/// assert_eq!(format!("{:.2}", reading.rate()), "0.20");
/// // 940 ms against 1000, give or take 20: it may be running at 0.96.
/// assert!(!RateReading::new(ClockSource::Coordinator { kind: "postgres" }, 940, 1_000, 20).slow());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateReading {
    /// What was read.
    pub source: ClockSource,
    /// How long this node's clock ran between the two readings, ms.
    pub local_ms: i64,
    /// How long the source's clock ran, ms.
    pub other_ms: i64,
    /// Give or take this much, in this clock's ms: the two readings' error
    /// bars and the whole milliseconds the other clock counts in.
    pub error_ms: i64,
}

impl RateReading {
    /// A rate reading of `source`: it counted `other_ms` while this clock
    /// counted `local_ms`, give or take `error_ms`.
    pub fn new(source: ClockSource, local_ms: i64, other_ms: i64, error_ms: i64) -> RateReading {
        RateReading {
            source,
            local_ms,
            other_ms,
            error_ms,
        }
    }

    /// This clock's rate against the source's (1.0: the same).
    pub fn rate(&self) -> f64 {
        self.local_ms as f64 / self.other_ms.max(1) as f64
    }

    /// Whether even the largest rate the error bars allow is below
    /// [`MIN_CLOCK_RATE`].
    pub fn slow(&self) -> bool {
        self.other_ms > 0
            && (self.local_ms.saturating_add(self.error_ms) as f64)
                < MIN_CLOCK_RATE * self.other_ms as f64
    }
}

impl fmt::Display for RateReading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ran {} ms while this clock ran {} ± {} ms (rate {:.2})",
            self.source,
            self.other_ms,
            self.local_ms,
            self.error_ms,
            self.rate()
        )
    }
}

/// One reading of a source on this node's monotonic clock, kept until the
/// next check to make a [`RateReading`].
#[derive(Debug, Clone)]
pub(super) struct RateSample {
    source: ClockSource,
    /// The middle of the round trip, on the monotonic clock.
    at: Instant,
    /// Half the round trip, and a millisecond.
    error_ms: i64,
    /// What the source's clock said.
    other_ms: i64,
}

impl RateSample {
    /// A reading of `source`, asked at `before` and answered at `after`.
    fn new(source: ClockSource, before: Instant, after: Instant, other_ms: i64) -> RateSample {
        let round_trip = after.saturating_duration_since(before);
        RateSample {
            source,
            at: before + round_trip / 2,
            error_ms: i64::try_from(round_trip.as_millis() / 2).unwrap_or(i64::MAX) + 1,
            other_ms,
        }
    }

    /// How fast this clock ran since `earlier`, a reading of the same
    /// source; `None` when the other clock did not move forward (it was
    /// set back, or no whole millisecond passed).
    fn rate_since(&self, earlier: &RateSample) -> Option<RateReading> {
        let other_ms = self.other_ms - earlier.other_ms;
        if other_ms <= 0 {
            return None;
        }
        let local = self.at.saturating_duration_since(earlier.at);
        Some(RateReading::new(
            self.source.clone(),
            i64::try_from(local.as_millis()).unwrap_or(i64::MAX),
            other_ms,
            // Each side of each reading: its own bar; the other clock's
            // whole milliseconds: one more at each reading.
            self.error_ms + earlier.error_ms + 2,
        ))
    }
}

/// The outcome of one clock check.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint_fleet::{ClockReading, ClockSource, ClockVerdict};
///
/// let peer = |slot, offset_ms| ClockReading::new(
///     ClockSource::Peer { slot, name: format!("web-{slot} (127.0.0.1:808{slot})") },
///     offset_ms,
///     1,
/// );
/// // Two peers agree that this clock is 3 s ahead: off.
/// let verdict = ClockVerdict::new(vec![peer(1, 3_001), peer(2, 3_003)], vec![], Duration::from_secs(1));
/// assert!(verdict.skewed);
/// assert_eq!(verdict.offset_ms, Some(3_002));
/// assert!(verdict.to_string().starts_with("this node's clock is 3002 ms ahead of 2 of the 2 clocks it was checked against"));
/// // One peer of two says so: that peer may be the wrong one.
/// let verdict = ClockVerdict::new(vec![peer(1, 2), peer(2, 3_003)], vec![], Duration::from_secs(1));
/// assert!(!verdict.skewed);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClockVerdict {
    /// The readings taken.
    pub readings: Vec<ClockReading>,
    /// The sources asked that did not answer, and why.
    pub unanswered: Vec<String>,
    /// The skew allowed.
    pub max_skew: Duration,
    /// The median of the readings' offsets; `None` without readings.
    pub offset_ms: Option<i64>,
    /// Whether more than half of the sources put this clock beyond the
    /// allowed skew.
    pub skewed: bool,
    /// How fast this clock ran against each source read twice, this check
    /// and the one before.
    pub rates: Vec<RateReading>,
    /// Whether more than half of those say this clock runs slow (below
    /// [`MIN_CLOCK_RATE`]).
    pub slow: bool,
}

impl ClockReading {
    /// A reading of `source`: this clock is `offset_ms` ahead of it, give
    /// or take `error_ms`.
    pub fn new(source: ClockSource, offset_ms: i64, error_ms: i64) -> ClockReading {
        ClockReading {
            source,
            offset_ms,
            error_ms,
        }
    }
}

impl ClockVerdict {
    /// Judges `readings` against `max_skew`.
    pub fn new(
        readings: Vec<ClockReading>,
        unanswered: Vec<String>,
        max_skew: Duration,
    ) -> ClockVerdict {
        let beyond = readings.iter().filter(|r| r.beyond(max_skew)).count();
        let mut offsets: Vec<i64> = readings.iter().map(|r| r.offset_ms).collect();
        offsets.sort_unstable();
        let offset_ms = match offsets.len() {
            0 => None,
            n if n % 2 == 1 => Some(offsets[n / 2]),
            n => Some(offsets[n / 2 - 1] + (offsets[n / 2] - offsets[n / 2 - 1]) / 2),
        };
        ClockVerdict {
            skewed: beyond * 2 > readings.len(),
            readings,
            unanswered,
            max_skew,
            offset_ms,
            rates: Vec::new(),
            slow: false,
        }
    }

    /// This verdict with `rates` judged too: slow when more than half of
    /// them say so.
    pub fn with_rates(mut self, rates: Vec<RateReading>) -> ClockVerdict {
        let slow = rates.iter().filter(|rate| rate.slow()).count();
        self.slow = slow * 2 > rates.len();
        self.rates = rates;
        self
    }

    /// Whether the node may not hold a slot with this clock: skewed, or
    /// slow.
    pub fn out_of_range(&self) -> bool {
        self.skewed || self.slow
    }

    /// The median rate of the rate readings; `None` without any.
    pub fn rate(&self) -> Option<f64> {
        let mut rates: Vec<f64> = self.rates.iter().map(RateReading::rate).collect();
        rates.sort_by(f64::total_cmp);
        match rates.len() {
            0 => None,
            n if n % 2 == 1 => Some(rates[n / 2]),
            n => Some((rates[n / 2 - 1] + rates[n / 2]) / 2.0),
        }
    }

    /// How many sources put this clock beyond the allowed skew.
    pub fn beyond(&self) -> usize {
        self.readings
            .iter()
            .filter(|r| r.beyond(self.max_skew))
            .count()
    }

    /// The largest error of the readings, for metrics.
    pub fn error_ms(&self) -> Option<i64> {
        self.readings.iter().map(|r| r.error_ms).max()
    }
}

impl fmt::Display for ClockVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.slow {
            let slow = self.rates.iter().filter(|rate| rate.slow()).count();
            let rates: Vec<String> = self.rates.iter().map(ToString::to_string).collect();
            let rate = self.rate().unwrap_or(0.0);
            write!(
                f,
                "this node's clock runs slow: at {rate:.2} of the rate of {slow} of the {} clocks it was timed against, below the {MIN_CLOCK_RATE} allowed: {}; its claim's deadline, timed by this clock, could outlast the coordinator's lease, so it claims no slot until its clock runs at the right rate (fix the clock)",
                self.rates.len(),
                rates.join(", ")
            )?;
            if !self.skewed {
                return Ok(());
            }
            f.write_str("; also, ")?;
        }
        let readings: Vec<String> = self.readings.iter().map(ToString::to_string).collect();
        let unanswered = if self.unanswered.is_empty() {
            String::new()
        } else {
            format!("; no answer from {}", self.unanswered.join(", "))
        };
        let Some(offset) = self.offset_ms else {
            return write!(
                f,
                "this node's clock was checked against no other clock{unanswered}"
            );
        };
        let direction = if offset >= 0 { "ahead of" } else { "behind" };
        let allowed = format_duration(self.max_skew);
        if self.skewed {
            write!(
                f,
                "this node's clock is {} ms {direction} {} of the {} clocks it was checked against, more than the {allowed} allowed (max clock skew): {}{unanswered}; it claims no slot until its clock is back in range (fix the clock: NTP)",
                offset.unsigned_abs(),
                self.beyond(),
                self.readings.len(),
                readings.join(", ")
            )
        } else {
            write!(
                f,
                "this node's clock is {} ms {direction} the median of {} clocks, within the {allowed} allowed: {}{unanswered}",
                offset.unsigned_abs(),
                self.readings.len(),
                readings.join(", ")
            )
        }
    }
}

/// A [`PeerClock`], compared by identity so that a configuration holding
/// one stays comparable.
#[derive(Clone)]
pub(crate) struct PeerClockHandle(pub(crate) Arc<dyn PeerClock>);

impl PartialEq for PeerClockHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for PeerClockHandle {}

impl fmt::Debug for PeerClockHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PeerClock")
    }
}

/// A sort key that orders slots pseudo-randomly, differently per check.
fn shuffled(slots: &mut [u64]) {
    let seed = std::collections::hash_map::RandomState::new();
    slots.sort_by_key(|slot| {
        let mut hasher = seed.build_hasher();
        hasher.write_u64(*slot);
        hasher.finish()
    });
}

impl<B: Backend> Shared<B> {
    /// Runs one clock check in `live`; `None` when the check is off.
    pub(super) async fn check_clock(
        &self,
        live: &Live<B::Session>,
        timing: Timing,
    ) -> Result<Option<ClockVerdict>, ClaimError> {
        let Some(max_skew) = self.config.ops.clock_check.max_skew else {
            return Ok(None);
        };
        let clock = Arc::clone(&self.config.ops.clock.0);
        let limit = timing.step_limit();
        let mut readings = Vec::new();
        let mut unanswered = Vec::new();
        // The peers' answers come in on tasks of their own, so that their
        // round trips are timed as they happen, whatever the engine does.
        let mut asked = JoinSet::new();
        if let Some(peers) = &self.config.ops.peer_clock {
            let own = self.lock().claim.map(|held| held.slot);
            let names = self
                .step(
                    limit,
                    self.backend.list(&live.session, &self.paths.slots_dir()),
                )
                .await?;
            let mut slots: Vec<u64> = names
                .iter()
                .filter_map(|name| name.parse().ok())
                .filter(|slot| Some(*slot) != own)
                .collect();
            shuffled(&mut slots);
            // The peers read before come first, so that each is read a
            // second time and gives a rate.
            let read_before: Vec<u64> = self
                .lock()
                .rate_samples
                .iter()
                .filter_map(|sample| match sample.source {
                    ClockSource::Peer { slot, .. } => Some(slot),
                    ClockSource::Coordinator { .. } => None,
                })
                .collect();
            slots.sort_by_key(|slot| !read_before.contains(slot));
            let mut found = 0;
            for slot in slots {
                if found == PEERS {
                    break;
                }
                let key = self.paths.slot(slot);
                let read = self.backend.read(&live.session, &key);
                let Some(value) = self.step(limit, read).await? else {
                    continue;
                };
                let text = String::from_utf8_lossy(&value.value);
                if text == self.config.holder {
                    continue;
                }
                let Some(holder) = Holder::parse(&text) else {
                    continue;
                };
                found += 1;
                let name = format!("{} ({})", holder.host, holder.listen);
                let (peers, clock) = (Arc::clone(&peers.0), Arc::clone(&clock));
                let peer_limit = PEER_LIMIT.min(timing.ttl / 4);
                asked.spawn(async move {
                    // Timed on the monotonic clock too, for the rate: the
                    // connection is made in between, so the bar is wider
                    // than the wall clock's.
                    let before = Instant::now();
                    let answer = tokio::time::timeout(peer_limit, peers.read(holder, clock)).await;
                    let after = Instant::now();
                    let answer = answer.unwrap_or_else(|_| {
                        Err(format!("no answer within {} ms", peer_limit.as_millis()))
                    });
                    (ClockSource::Peer { slot, name }, answer, before, after)
                });
            }
        }
        let mut samples = Vec::new();
        let before = Instant::now();
        let sent_ms = clock.now_ms();
        let coordinator = self
            .step(
                limit,
                self.backend.clock(&live.session, &self.paths.clock()),
            )
            .await;
        let received_ms = clock.now_ms();
        let after = Instant::now();
        let source = ClockSource::Coordinator { kind: B::KIND };
        match coordinator {
            Ok(Some(other_ms)) => {
                let sample = ClockSample {
                    sent_ms,
                    other_ms,
                    received_ms,
                };
                samples.push(RateSample::new(source.clone(), before, after, other_ms));
                readings.push(ClockReading::new(
                    source,
                    sample.offset_ms(),
                    sample.error_ms(),
                ));
            }
            Ok(None) => {}
            Err(error) => unanswered.push(format!("{source} ({error})")),
        }
        while let Some(joined) = asked.join_next().await {
            let Ok((source, answer, before, after)) = joined else {
                continue;
            };
            match answer {
                Ok(sample) => {
                    samples.push(RateSample::new(
                        source.clone(),
                        before,
                        after,
                        sample.other_ms,
                    ));
                    readings.push(ClockReading::new(
                        source,
                        sample.offset_ms(),
                        sample.error_ms(),
                    ));
                }
                Err(reason) => unanswered.push(format!("{source} ({reason})")),
            }
        }
        let mut inner = self.lock();
        let rates = samples
            .iter()
            .filter_map(|sample| {
                let earlier = inner
                    .rate_samples
                    .iter()
                    .find(|earlier| earlier.source == sample.source)?;
                sample.rate_since(earlier)
            })
            .collect();
        let verdict = ClockVerdict::new(readings, unanswered, max_skew).with_rates(rates);
        tracing::debug!(%verdict, "clock checked");
        // A source that did not answer this time keeps its older reading:
        // the rate against it is then taken over a longer span.
        for sample in samples {
            inner
                .rate_samples
                .retain(|earlier| earlier.source != sample.source);
            inner.rate_samples.push(sample);
        }
        if inner.rate_samples.len() > RATE_SAMPLES {
            inner.rate_samples.sort_by_key(|sample| sample.at);
            let excess = inner.rate_samples.len() - RATE_SAMPLES;
            inner.rate_samples.drain(..excess);
        }
        inner.clock = Some((verdict.clone(), Instant::now()));
        inner.clock_skewed = verdict.out_of_range();
        Ok(Some(verdict))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(offset_ms: i64, error_ms: i64) -> ClockReading {
        ClockReading::new(
            ClockSource::Peer {
                slot: 1,
                name: "web-1 (127.0.0.1:8081)".into(),
            },
            offset_ms,
            error_ms,
        )
    }

    /// The error bar counts in the node's favour: a reading is beyond the
    /// bound only when its nearest end is.
    #[test]
    fn the_error_bar_decides_near_the_bound() {
        let second = Duration::from_secs(1);
        assert!(!reading(1_050, 60).beyond(second));
        assert!(reading(1_050, 40).beyond(second));
        assert!(reading(-1_050, 40).beyond(second));
        assert!(!reading(-990, 0).beyond(second));
    }

    /// A majority decides; no source decides nothing.
    #[test]
    fn a_majority_of_sources_decides() {
        let second = Duration::from_secs(1);
        let verdict = ClockVerdict::new(vec![], vec!["node x (refused)".into()], second);
        assert!(!verdict.skewed);
        assert_eq!(verdict.offset_ms, None);
        assert_eq!(
            verdict.to_string(),
            "this node's clock was checked against no other clock; no answer from node x (refused)"
        );
        let three = vec![reading(-3_000, 1), reading(-3_004, 2), reading(0, 1)];
        let verdict = ClockVerdict::new(three, vec![], second);
        assert!(verdict.skewed);
        assert_eq!(verdict.offset_ms, Some(-3_000));
        assert!(
            verdict.to_string().starts_with(
                "this node's clock is 3000 ms behind 2 of the 3 clocks it was checked against, more than the 1s allowed"
            ),
            "{verdict}"
        );
        assert!(
            verdict
                .to_string()
                .contains("node web-1 (127.0.0.1:8081) (slot 1) -3004 ± 2 ms")
        );
    }

    fn coordinator() -> ClockSource {
        ClockSource::Coordinator { kind: "postgres" }
    }

    /// Two readings of a source give the rate, timed from the middles of
    /// their round trips, with both bars and the other clock's whole
    /// milliseconds in the error; a source set back gives none.
    #[test]
    fn two_readings_of_a_source_give_its_rate() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let first = RateSample::new(coordinator(), start, start + ms(4), 10_000);
        let second = RateSample::new(coordinator(), start + ms(200), start + ms(202), 11_000);
        let rate = second.rate_since(&first).unwrap();
        // From 2 ms to 201 ms: 199 ms (the Instant's sub-millisecond part
        // is cut).
        assert_eq!((rate.local_ms, rate.other_ms), (199, 1_000));
        assert_eq!(rate.error_ms, (2 + 1) + (1 + 1) + 2);
        assert!(rate.slow());
        assert_eq!(
            rate.to_string(),
            "the coordinator (postgres) ran 1000 ms while this clock ran 199 ± 7 ms (rate 0.20)"
        );
        let set_back = RateSample::new(coordinator(), start + ms(300), start + ms(301), 9_000);
        assert_eq!(set_back.rate_since(&second), None);
    }

    /// A majority of the sources with a rate decides that the clock is
    /// slow, and the reason says by how much and against what; the error
    /// bar counts in the node's favour.
    #[test]
    fn a_majority_of_rates_decides_that_the_clock_is_slow() {
        let second = Duration::from_secs(1);
        let rate = |local, error| RateReading::new(coordinator(), local, 1_000, error);
        // At 0.94 with a bar of 5: at most 0.945, slow; with a bar of 15,
        // possibly 0.955: not.
        assert!(rate(940, 5).slow());
        assert!(!rate(940, 15).slow());
        assert!(!rate(1_000, 0).slow());
        let fast = rate(5_000, 2);
        assert!(!fast.slow(), "a fast clock fences early: no harm");

        let verdict = ClockVerdict::new(vec![reading(3, 1)], vec![], second).with_rates(vec![
            rate(200, 4),
            rate(500, 4),
            rate(1_000, 4),
        ]);
        assert!(verdict.slow && !verdict.skewed && verdict.out_of_range());
        assert_eq!(verdict.rate(), Some(0.5));
        let text = verdict.to_string();
        assert!(
            text.starts_with("this node's clock runs slow: at 0.50 of the rate of 2 of the 3 clocks it was timed against, below the 0.95 allowed: the coordinator (postgres) ran 1000 ms while this clock ran 200 ± 4 ms (rate 0.20)"),
            "{text}"
        );
        assert!(
            text.ends_with(
                "so it claims no slot until its clock runs at the right rate (fix the clock)"
            ),
            "{text}"
        );

        // One of two is no majority; no rate at all decides nothing.
        let verdict = ClockVerdict::new(vec![], vec![], second)
            .with_rates(vec![rate(200, 4), rate(1_000, 4)]);
        assert!(!verdict.out_of_range());
        let verdict = ClockVerdict::new(vec![reading(3, 1)], vec![], second).with_rates(vec![]);
        assert!(!verdict.out_of_range() && verdict.rate().is_none());

        // Slow and skewed: both are said.
        let verdict = ClockVerdict::new(vec![reading(-3_000, 1)], vec![], second)
            .with_rates(vec![rate(200, 4)]);
        let text = verdict.to_string();
        assert!(
            text.contains("; also, this node's clock is 3000 ms behind"),
            "{text}"
        );
    }

    #[test]
    fn samples_take_the_middle_of_the_round_trip() {
        let sample = ClockSample {
            sent_ms: 10,
            other_ms: 10,
            received_ms: 13,
        };
        assert_eq!((sample.offset_ms(), sample.error_ms()), (1, 3));
    }
}
