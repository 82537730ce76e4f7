//! Issuing IDs: which node am I, may I issue now, and is the ID covered by
//! the high-water mark.
//!
//! The [`Issuer`] follows its [`SlotSource`]: each new claim (a new
//! `generation`) gets a fresh generator that resumes after the node's
//! recorded mark and the claim's floor, and a fresh [`Reservation`]. (One
//! exception: a claim that takes the same slot back, with nobody else
//! having issued on it meanwhile, keeps the generator it had; see
//! [`Minting::continues`].) Handing out an ID then takes:
//!
//! 1. the fencing check: the source's current state must be a claim that is
//!    not past its deadline, of the generation the generator was built for;
//! 2. the generator's compare-and-swap;
//! 3. the mark check: an ID at or below the reserved mark goes out at once;
//!    one above it waits until the mark is written (file, then source).
//!
//! In the common case that is two uncontended read locks (the source's
//! watch channel, the current generator), one compare-and-swap and one
//! atomic load; nothing waits for a disk.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

use snowmint::{
    Clock, ClockPolicy, Error, Generator, GeneratorStats, Layout, SnowflakeId, format_time,
};
use snowmint_fleet::{
    Claim, CoordinatorStatus, FleetError, MarkFile, NodeMark, NodeState, Reservation, SlotSource,
};
use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::error::ApiError;

/// How an [`Issuer`] issues.
#[derive(Clone)]
pub struct IssuerOptions {
    /// The layout IDs are issued in.
    pub layout: Layout,
    /// What to do when the clock goes back.
    pub clock_policy: ClockPolicy,
    /// Where time comes from.
    pub clock: Arc<dyn Clock>,
    /// Directory of the nodes' state files.
    pub state_dir: PathBuf,
    /// How far ahead of the clock the high-water mark is reserved.
    pub mark_step: Duration,
}

impl std::fmt::Debug for IssuerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuerOptions")
            .field("layout", &self.layout)
            .field("clock_policy", &self.clock_policy)
            .field("state_dir", &self.state_dir)
            .field("mark_step", &self.mark_step)
            .finish_non_exhaustive()
    }
}

/// Why no ID was issued: each is a 503 with `Retry-After`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The node holds no valid claim.
    #[error("this node holds no slot and may not issue IDs: {reason}")]
    NoClaim {
        /// Why.
        reason: String,
    },
    /// The clock reads earlier than IDs already issued (or than the mark).
    #[error(
        "the clock is behind the IDs this slot may already have issued: it reads {} but IDs may have gone out up to {} ({} ms ahead; a clock step back, or the high-water mark left by this node or the slot's previous holder); refusing until it catches up",
        format_time(*now_ms), format_time(*last_ms), last_ms.saturating_sub(*now_ms)
    )]
    ClockBehind {
        /// The last timestamp used, Unix ms.
        last_ms: i64,
        /// The clock, Unix ms.
        now_ms: i64,
    },
    /// The high-water mark could not be recorded.
    #[error("the high-water mark could not be recorded, so no ID may go out: {reason}")]
    MarkUnwritable {
        /// Why.
        reason: String,
    },
    /// A claim is held but its generator is not (yet) usable.
    #[error("{reason}")]
    NotReady {
        /// Why.
        reason: String,
    },
    /// The clock is outside what the layout can hold.
    #[error("the clock is outside the layout's range: {reason}")]
    ClockOutOfRange {
        /// The core error's message.
        reason: String,
    },
}

impl Refusal {
    /// The error code of the answer.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::NoClaim { .. } => "no_claim",
            Refusal::ClockBehind { .. } => "clock_behind",
            Refusal::MarkUnwritable { .. } => "mark_unwritable",
            Refusal::NotReady { .. } => "not_ready",
            Refusal::ClockOutOfRange { .. } => "clock_out_of_range",
        }
    }

    /// How long the refusal is expected to last.
    pub fn retry_after(&self) -> Duration {
        match self {
            Refusal::ClockBehind { last_ms, now_ms } => {
                Duration::from_millis(last_ms.saturating_sub(*now_ms).max(0) as u64 + 1)
            }
            _ => Duration::from_secs(1),
        }
    }

    /// Every code, for metrics labels.
    pub const CODES: [&'static str; 5] = [
        "no_claim",
        "clock_behind",
        "mark_unwritable",
        "not_ready",
        "clock_out_of_range",
    ];
}

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> ApiError {
        ApiError::unavailable(refusal.code(), refusal.to_string(), refusal.retry_after())
    }
}

/// What one claim issues with.
struct Minting {
    claim: Claim,
    /// Shared with the previous claim's minting when the claim continues
    /// it (see [`Minting::continues`]).
    generator: Arc<Generator<Arc<dyn Clock>>>,
    reservation: Arc<Reservation>,
    /// The point the generator resumed after, if any (Unix ms).
    resumed_after: Option<i64>,
}

impl Minting {
    /// Whether `claim`, which follows this (retired) minting, may keep its
    /// generator: it takes the same slot back, and the slot's floor is not
    /// above the mark this minting recorded.
    ///
    /// A node that held the slot in between and handed out any ID first
    /// raised the slot's mark above that ID, which is above ours; so a floor
    /// no higher than our own mark means nobody else issued on the slot
    /// since. Keeping the generator then keeps every ID of the slot in one
    /// strictly increasing sequence, even for a request of the old claim
    /// still in flight; a fresh generator would have to resume after the
    /// mark, reserved a step ahead of the clock, and refuse (under
    /// `refuse`) until the clock passed it.
    fn continues(&self, claim: &Claim) -> bool {
        // `None` sorts first: no floor is below any mark, and a floor is
        // above no recorded mark at all.
        self.claim.node == claim.node && claim.floor_ms <= self.reservation.covered_ms()
    }
}

/// A report on the node for `/v1/node` and metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeReport {
    /// `static`, `hostname`, `etcd`, `zookeeper`.
    pub source: &'static str,
    /// The claim, if one is active (and not past its deadline).
    pub claim: Option<Claim>,
    /// Why not, when no claim is active.
    pub fenced_reason: Option<String>,
    /// How long the claim is still known to be held, if it can expire.
    pub valid_for: Option<Duration>,
    /// The node's state file.
    pub state_file: Option<PathBuf>,
    /// The mark recorded in it (Unix ms).
    pub high_water_mark_ms: Option<i64>,
    /// The last timestamp an ID may have been issued at (Unix ms).
    pub last_timestamp_ms: Option<i64>,
    /// Whether IDs can be issued now, and if not why.
    pub readiness: Result<(), Refusal>,
    /// What the claim engine is doing, for coordinated sources.
    pub coordinator: Option<CoordinatorStatus>,
}

/// Issues IDs for whatever claim its [`SlotSource`] holds. Cheap to clone.
#[derive(Clone)]
pub struct Issuer {
    inner: Arc<Inner>,
}

struct Inner {
    source: Arc<dyn SlotSource>,
    state: watch::Receiver<NodeState>,
    options: IssuerOptions,
    /// The generator and reservation of the current claim.
    current: RwLock<Option<Arc<Minting>>>,
    /// Why the current claim has no minting (its state file is unreadable).
    broken: RwLock<Option<String>>,
    /// Opened state files, one per node this process has held.
    marks: Mutex<Vec<Arc<NodeMark>>>,
    /// Stats of generators of earlier claims, so that counters only grow.
    retired_stats: Mutex<GeneratorStats>,
    /// Set while requests meet the clock behind, so that a regression is
    /// logged once, not once per request.
    in_regression: AtomicBool,
    /// Set while the high-water mark cannot be written, for the same reason.
    mark_failing: AtomicBool,
    /// Set once the claim is being given up (shutdown), for the log.
    releasing: AtomicBool,
    /// Serializes claim changes.
    switching: tokio::sync::Mutex<()>,
    watcher: Mutex<Option<AbortHandle>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(watcher) = self
            .watcher
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            watcher.abort();
        }
    }
}

impl std::fmt::Debug for Issuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issuer")
            .field("source", &self.inner.source.kind())
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

impl Issuer {
    /// Starts following `source`: sets up the current claim, if any, and
    /// watches for changes. Fails if the claim's state file is unreadable.
    pub async fn start(
        source: Arc<dyn SlotSource>,
        options: IssuerOptions,
    ) -> Result<Issuer, FleetError> {
        let mut state = source.state();
        let initial = state.borrow_and_update().clone();
        let inner = Arc::new(Inner {
            state: source.state(),
            source,
            options,
            current: RwLock::new(None),
            broken: RwLock::new(None),
            marks: Mutex::new(Vec::new()),
            retired_stats: Mutex::new(GeneratorStats::default()),
            in_regression: AtomicBool::new(false),
            mark_failing: AtomicBool::new(false),
            releasing: AtomicBool::new(false),
            switching: tokio::sync::Mutex::new(()),
            watcher: Mutex::new(None),
        });
        inner.follow(initial).await?;
        let watcher = tokio::spawn(watch_claims(Arc::downgrade(&inner), state));
        *inner.watcher.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(watcher.abort_handle());
        Ok(Issuer { inner })
    }

    /// The layout IDs are issued in.
    pub fn layout(&self) -> Layout {
        self.inner.options.layout
    }

    /// The clock-regression policy.
    pub fn clock_policy(&self) -> ClockPolicy {
        self.inner.options.clock_policy
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.options.clock
    }

    /// The slot source.
    pub fn source(&self) -> &Arc<dyn SlotSource> {
        &self.inner.source
    }

    /// The state file of the current claim and the mark it held when the
    /// claim's generator was built (what the node resumed after).
    pub fn resume_point(&self) -> Option<(MarkFile, Option<i64>)> {
        let current = self.inner.current();
        current.map(|m| {
            (
                m.reservation.node_mark().file().clone(),
                m.reservation.node_mark().recorded_ms(),
            )
        })
    }

    /// One new ID.
    pub async fn next_id(&self) -> Result<SnowflakeId, Refusal> {
        let minting = self.inner.minting()?;
        let id = self.inner.generate(&minting, Generator::next_id).await?;
        let ts = self.layout().timestamp_ms(id);
        self.inner.cover(&minting, ts).await?;
        Ok(id)
    }

    /// `count` new IDs, appended to `out` (left as it was on error).
    pub async fn next_ids(&self, count: usize, out: &mut Vec<SnowflakeId>) -> Result<(), Refusal> {
        let minting = self.inner.minting()?;
        let before = out.len();
        let generated = self
            .inner
            .generate(&minting, |generator| generator.next_ids(count, out))
            .await;
        let covered = match (generated, out.last()) {
            (Ok(()), Some(&last)) => {
                let ts = self.layout().timestamp_ms(last);
                self.inner.cover(&minting, ts).await
            }
            (Ok(()), None) => Ok(()),
            (Err(refusal), _) => Err(refusal),
        };
        if covered.is_err() {
            out.truncate(before);
        }
        covered
    }

    /// Whether IDs can be issued now; if not, why.
    pub fn readiness(&self) -> Result<(), Refusal> {
        let minting = self.inner.minting()?;
        let Some(last_ms) = minting.generator.last_timestamp_ms() else {
            return Ok(());
        };
        let now_ms = self.inner.options.clock.now_ms();
        let behind = Duration::from_millis(last_ms.saturating_sub(now_ms).max(0) as u64);
        let tolerated = self.clock_policy().bound().unwrap_or(Duration::ZERO);
        if behind > tolerated {
            Err(Refusal::ClockBehind { last_ms, now_ms })
        } else {
            Ok(())
        }
    }

    /// The node, for `/v1/node` and metrics.
    pub fn report(&self) -> NodeReport {
        let now = Instant::now();
        let (claim, fenced_reason) = match &*self.inner.state.borrow() {
            state @ NodeState::Active(claim) => match state.claim_at(now) {
                Some(_) => (Some(claim.clone()), None),
                None => (None, Some("the claim is past its deadline".to_owned())),
            },
            NodeState::Fenced { reason } => (None, Some(reason.clone())),
        };
        let minting = self.inner.current();
        let valid_for = claim
            .as_ref()
            .and_then(|c| c.valid_until)
            .map(|d| d.saturating_duration_since(now));
        NodeReport {
            source: self.inner.source.kind(),
            claim,
            fenced_reason,
            valid_for,
            state_file: minting
                .as_ref()
                .map(|m| m.reservation.node_mark().file().path().to_owned()),
            high_water_mark_ms: minting
                .as_ref()
                .and_then(|m| m.reservation.node_mark().recorded_ms()),
            last_timestamp_ms: minting
                .as_ref()
                .and_then(|m| m.generator.last_timestamp_ms().or(m.resumed_after)),
            readiness: self.readiness(),
            coordinator: self.inner.source.coordinator_status(),
        }
    }

    /// Counts of the generators' slow paths, over every claim so far.
    pub fn stats(&self) -> GeneratorStats {
        let mut total = *self
            .inner
            .retired_stats
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(minting) = self.inner.current() {
            add_stats(&mut total, minting.generator.stats());
        }
        total
    }

    /// Gives the claim up (clean shutdown).
    pub async fn release(&self) {
        self.inner.releasing.store(true, Ordering::Relaxed);
        self.inner.source.release().await;
    }
}

/// Applies every change of the source's state, until the issuer is gone.
async fn watch_claims(inner: Weak<Inner>, mut state: watch::Receiver<NodeState>) {
    while state.changed().await.is_ok() {
        let latest = state.borrow_and_update().clone();
        let Some(inner) = inner.upgrade() else {
            return;
        };
        if let Err(error) = inner.follow(latest).await {
            tracing::error!(%error, "cannot issue IDs under the new claim");
        }
    }
}

impl Inner {
    fn current(&self) -> Option<Arc<Minting>> {
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The minting of the claim in force, after the fencing check.
    #[inline]
    fn minting(&self) -> Result<Arc<Minting>, Refusal> {
        let generation = {
            let state = self.state.borrow();
            match state.claim_at(Instant::now()) {
                Some(claim) => claim.generation,
                None => {
                    return Err(Refusal::NoClaim {
                        reason: match &*state {
                            NodeState::Fenced { reason } => reason.clone(),
                            NodeState::Active(_) => {
                                "the claim could not be confirmed before its deadline".to_owned()
                            }
                        },
                    });
                }
            }
        };
        match self.current() {
            Some(minting) if minting.claim.generation == generation => Ok(minting),
            _ => Err(Refusal::NotReady {
                reason: self
                    .broken
                    .read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone()
                    .unwrap_or_else(|| "the new claim is being set up".to_owned()),
            }),
        }
    }

    /// Runs `take` on the generator, applying the `wait` policy without
    /// blocking the runtime: the generator itself refuses, and this waits
    /// (asynchronously) for the clock to catch up, up to the bound.
    async fn generate<T>(
        &self,
        minting: &Minting,
        mut take: impl FnMut(&Generator<Arc<dyn Clock>>) -> Result<T, Error>,
    ) -> Result<T, Refusal> {
        let mut deadline = None;
        loop {
            match take(&minting.generator) {
                Ok(value) => {
                    if self.in_regression.load(Ordering::Relaxed) {
                        self.in_regression.store(false, Ordering::Relaxed);
                        tracing::info!("clock caught up; issuing IDs again");
                    }
                    return Ok(value);
                }
                Err(Error::ClockBehind { last_ms, now_ms }) => {
                    if !self.in_regression.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            last = %format_time(last_ms),
                            now = %format_time(now_ms),
                            behind_ms = last_ms - now_ms,
                            policy = self.options.clock_policy.name(),
                            "clock behind: the clock reads earlier than IDs this slot may already have issued (a step back, or a previous holder's mark)"
                        );
                    }
                    if let ClockPolicy::Wait { max } = self.options.clock_policy {
                        let behind = Duration::from_millis((last_ms - now_ms).max(0) as u64);
                        let deadline = *deadline.get_or_insert_with(|| Instant::now() + max);
                        let left = deadline.saturating_duration_since(Instant::now());
                        if behind <= max && !left.is_zero() {
                            // Short naps: the clock may jump forward too.
                            let nap = behind.min(left).min(Duration::from_millis(50));
                            tokio::time::sleep(nap.max(Duration::from_millis(1))).await;
                            continue;
                        }
                    }
                    let refusal = Refusal::ClockBehind { last_ms, now_ms };
                    tracing::debug!(%refusal, "refused");
                    return Err(refusal);
                }
                Err(other) => {
                    return Err(Refusal::ClockOutOfRange {
                        reason: other.to_string(),
                    });
                }
            }
        }
    }

    /// Makes sure an ID with timestamp `ts_ms` is covered by a recorded
    /// mark before it leaves.
    #[inline]
    async fn cover(&self, minting: &Minting, ts_ms: i64) -> Result<(), Refusal> {
        let reservation = &minting.reservation;
        if reservation.covers(ts_ms) {
            if reservation.due_for_refresh(ts_ms) {
                reservation.refresh_in_background(self.options.clock.now_ms());
            }
            return Ok(());
        }
        let now_ms = self.options.clock.now_ms();
        reservation
            .extend(ts_ms, now_ms)
            .await
            .map_err(|error| match error {
                FleetError::Fenced { reason } => Refusal::NoClaim { reason },
                other => {
                    if !self.mark_failing.swap(true, Ordering::Relaxed) {
                        tracing::error!(error = %other, "cannot record the high-water mark; refusing to issue IDs");
                    }
                    Refusal::MarkUnwritable {
                        reason: other.to_string(),
                    }
                }
            })?;
        if self.mark_failing.swap(false, Ordering::Relaxed) {
            tracing::info!("the high-water mark is recorded again; issuing IDs");
        }
        // The write took time: the claim must still hold.
        match self.minting() {
            Ok(now) if Arc::ptr_eq(&now.reservation, reservation) => Ok(()),
            Ok(_) => Err(Refusal::NotReady {
                reason: "the claim changed while the ID was made".to_owned(),
            }),
            Err(refusal) => Err(refusal),
        }
    }

    /// Applies a state of the source: a new claim gets a new generator.
    async fn follow(&self, state: NodeState) -> Result<(), FleetError> {
        let _switching = self.switching.lock().await;
        let claim = match state {
            NodeState::Active(claim) => claim,
            NodeState::Fenced { reason } => {
                // Not holding a claim yet (a coordinated node starting), or
                // giving it up on shutdown, is no trouble.
                if self.current().is_none() || self.releasing.load(Ordering::Relaxed) {
                    tracing::info!(%reason, "not issuing IDs");
                } else {
                    tracing::warn!(%reason, "fenced: this node may not issue IDs");
                }
                return Ok(());
            }
        };
        let previous = self.current();
        if previous
            .as_ref()
            .is_some_and(|m| m.claim.generation == claim.generation)
        {
            tracing::debug!(generation = claim.generation, "claim renewed");
            return Ok(());
        }
        match self.mint(&claim, previous.as_deref()).await {
            Ok(minting) => {
                tracing::info!(
                    source = self.source.kind(),
                    generation = claim.generation,
                    resume_after = ?minting.resumed_after.map(|ms| format_time(ms).to_string()),
                    state_file = %minting.reservation.node_mark().file().path().display(),
                    "claimed slot {} (datacenter {} machine {})",
                    claim.slot,
                    claim.node.datacenter,
                    claim.node.machine
                );
                if let Some(previous) = previous
                    && !Arc::ptr_eq(&previous.generator, &minting.generator)
                {
                    let stats = previous.generator.stats();
                    add_stats(
                        &mut self
                            .retired_stats
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner),
                        stats,
                    );
                }
                *self.broken.write().unwrap_or_else(PoisonError::into_inner) = None;
                *self.current.write().unwrap_or_else(PoisonError::into_inner) =
                    Some(Arc::new(minting));
                Ok(())
            }
            Err(error) => {
                *self.broken.write().unwrap_or_else(PoisonError::into_inner) = Some(format!(
                    "the node cannot issue IDs under its claim: {error}"
                ));
                Err(error)
            }
        }
    }

    /// A generator and a reservation for `claim`. The previous claim's
    /// reservation is retired first, so that nothing it let out can be
    /// above the point the new generator resumes after (or, when the claim
    /// continues the previous one, so that its recorded mark is final).
    async fn mint(&self, claim: &Claim, previous: Option<&Minting>) -> Result<Minting, FleetError> {
        let options = &self.options;
        let node_mark = self.node_mark(claim)?;
        if let Some(previous) = previous {
            previous.reservation.retire().await;
        }
        let step_ms = i64::try_from(options.mark_step.as_millis()).unwrap_or(i64::MAX);
        let reservation = Arc::new(Reservation::new(
            node_mark.clone(),
            Arc::clone(&self.source),
            claim.generation,
            step_ms,
        ));
        if let Some(previous) = previous.filter(|previous| previous.continues(claim)) {
            return Ok(Minting {
                claim: claim.clone(),
                generator: Arc::clone(&previous.generator),
                reservation,
                resumed_after: previous.resumed_after,
            });
        }
        let resumed_after = node_mark.recorded_ms().max(claim.floor_ms);
        let policy = match options.clock_policy {
            // Waiting happens in `generate`, asynchronously: the generator
            // itself refuses.
            ClockPolicy::Wait { .. } => ClockPolicy::Refuse,
            other => other,
        };
        let mut builder = Generator::builder(options.layout, claim.node)
            .clock(Arc::clone(&options.clock))
            .policy(policy);
        if let Some(mark) = resumed_after {
            builder = builder.resume_after(mark);
        }
        Ok(Minting {
            claim: claim.clone(),
            generator: Arc::new(builder.build()?),
            reservation,
            resumed_after,
        })
    }

    /// The state file of the claim's node, opened once per process.
    fn node_mark(&self, claim: &Claim) -> Result<Arc<NodeMark>, FleetError> {
        let file = MarkFile::for_node(&self.options.state_dir, claim.node);
        let mut marks = self.marks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(mark) = marks.iter().find(|m| *m.file() == file) {
            return Ok(Arc::clone(mark));
        }
        let mark = NodeMark::open(file)?;
        marks.push(Arc::clone(&mark));
        Ok(mark)
    }
}

fn add_stats(total: &mut GeneratorStats, more: GeneratorStats) {
    total.exhaustion_waits += more.exhaustion_waits;
    total.clock_regressions += more.clock_regressions;
    total.refusals += more.refusals;
}
