//! Issuing IDs: which node am I, may I issue now, and is the ID covered by
//! the high-water mark.
//!
//! The [`Issuer`] follows its [`SlotSource`]: each new claim (a new
//! `generation`) gets a fresh generator that resumes after the node's
//! recorded mark and the claim's floor, and a fresh
//! [`Reservation`](crate::Reservation). (One
//! exception: a claim that takes the same slot back, with nobody else
//! having issued on it meanwhile, keeps the generator it had; see
//! [`Minting::continues`](claims::Minting::continues).) Handing out an ID
//! then takes:
//!
//! 1. the fencing check: the source's current state must be a claim that is
//!    not past its deadline, of the generation the generator was built for;
//! 2. the generator's compare-and-swap;
//! 3. the mark check: an ID at or below the reserved mark goes out at once;
//!    one above it waits until the mark is written (file, then source).
//!
//! In the common case that is a few plain loads of a per-thread snapshot
//! of the claim (see `fast.rs`), one compare-and-swap and one atomic load;
//! nothing waits for a disk or takes a lock. A request that waits (for the
//! mark's write, or for the clock under `--clock-policy wait`) checks the
//! claim again after the wait: it may have ended or changed meanwhile.
//!
//! The issuer holds the lock of the node it issues as, so that a second
//! process on this host cannot issue as it from the same state directory;
//! a claim on a slot whose node another process holds is passed over.
//!
//! Around that hot path: a [`Refusal`] says why no ID was issued, and
//! [`NodeReport`] what the node says about itself (ready exactly when an
//! ID request would not be refused). An [`IssuerBuilder`] makes an issuer
//! from settings (the node's source, state directory, layout, clock
//! policy), as `snowmint serve`, `snowmint generate` and embedded programs
//! start one; [`EmbeddedIssuer`] is the synchronous handle an application
//! mints with, on its own runtime thread or the caller's; and
//! [`ClaimInForce`] gives the claim and its reservation to a front end
//! whose IDs come from generators of its own (the PostgreSQL extension's
//! backends).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use snowmint::{
    Clock, ClockPolicy, Error, Generator, GeneratorStats, Layout, Regression, SnowflakeId,
    format_time,
};
use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::{FleetError, MarkFile, NodeMark, NodeState, SlotSource};

mod builder;
mod claims;
mod embedded;
mod fast;
mod in_force;
mod refusal;
mod report;

pub use builder::IssuerBuilder;
use claims::{FollowError, Minting, add_stats, watch_claims};
pub use embedded::EmbeddedIssuer;
use fast::Slow;
pub use in_force::ClaimInForce;
pub use refusal::Refusal;
pub use report::NodeReport;

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

/// Issues IDs for whatever claim its [`SlotSource`] holds. Cheap to clone.
#[derive(Clone)]
pub struct Issuer {
    inner: Arc<Inner>,
}

struct Inner {
    /// Tells issuers apart in the per-thread snapshots (`fast.rs`): unique
    /// in the process, never reused.
    id: u64,
    /// Moves on (Release) after every change of `current` or `broken`,
    /// so that a snapshot taken before the change is not used after it.
    epoch: AtomicU64,
    /// The runtime the issuer's tasks run on (the claim watcher, the
    /// mark's background writes); synchronous calls hand their waits to it.
    runtime: tokio::runtime::Handle,
    /// The thread that runs `runtime`, when the issuer owns it
    /// ([`EmbeddedIssuer`] started blocking): the one thread a
    /// synchronous call must never wait on.
    runtime_thread: OnceLock<ThreadId>,
    /// Whether a new claim's mark is reserved as soon as the claim is
    /// taken, rather than by its first ID (embedded issuers: their first
    /// ID should not wait for a write).
    prime: bool,
    /// Until when a node locked by another process is waited for (tried
    /// again and again) rather than refused: a start told to wait for
    /// the lock (`snowmint generate`, run many times at once).
    lock_wait_until: Option<Instant>,
    source: Arc<dyn SlotSource>,
    state: watch::Receiver<NodeState>,
    options: IssuerOptions,
    /// The generator and reservation of the current claim.
    current: RwLock<Option<Arc<Minting>>>,
    /// Why the current claim has no minting (its state file is unreadable).
    broken: RwLock<Option<String>>,
    /// The state file of the node this process holds, with the node's
    /// lock; `None` while it holds none (see `claims.rs`).
    held: Mutex<Option<Arc<NodeMark>>>,
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
    /// watches for changes.
    ///
    /// # Errors
    ///
    /// When the current claim cannot be used: its state file is unreadable,
    /// or another process holds its node ([`FleetError::NodeLocked`], whose
    /// message names the state directory, the node and that process's pid).
    /// A claim that comes later is not an error but a node that is not
    /// ready, saying why.
    pub async fn start(
        source: Arc<dyn SlotSource>,
        options: IssuerOptions,
    ) -> Result<Issuer, FleetError> {
        Issuer::start_with(source, options, false, Duration::ZERO).await
    }

    /// [`Issuer::start`], reserving each claim's mark when it is taken if
    /// `prime`, and waiting up to `lock_wait` for a node that another
    /// process holds.
    pub(crate) async fn start_with(
        source: Arc<dyn SlotSource>,
        options: IssuerOptions,
        prime: bool,
        lock_wait: Duration,
    ) -> Result<Issuer, FleetError> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let mut state = source.state();
        let initial = state.borrow_and_update().clone();
        let inner = Arc::new(Inner {
            // Relaxed: only uniqueness matters.
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            epoch: AtomicU64::new(0),
            runtime: tokio::runtime::Handle::current(),
            runtime_thread: OnceLock::new(),
            prime,
            lock_wait_until: (!lock_wait.is_zero()).then(|| Instant::now() + lock_wait),
            state: source.state(),
            source,
            options,
            current: RwLock::new(None),
            broken: RwLock::new(None),
            held: Mutex::new(None),
            retired_stats: Mutex::new(GeneratorStats::default()),
            in_regression: AtomicBool::new(false),
            mark_failing: AtomicBool::new(false),
            releasing: AtomicBool::new(false),
            switching: tokio::sync::Mutex::new(()),
            watcher: Mutex::new(None),
        });
        match inner.follow(initial).await {
            // A claim passed over is followed by another: not a failure.
            Ok(()) | Err(FollowError::PassedOver) => {}
            Err(FollowError::Failed(error)) => return Err(error),
        }
        let watcher = tokio::spawn(watch_claims(Arc::downgrade(&inner), state));
        *inner.watcher.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(watcher.abort_handle());
        Ok(Issuer { inner })
    }

    /// The start-up rule of the high-water mark (docs/ARCHITECTURE.md §3,
    /// invariant 4): when the node's recorded mark is ahead of the clock
    /// (a restart right after the last ID, or a clock set back), waits the
    /// gap out if it is at most `max_wait`, and refuses otherwise.
    ///
    /// Call it once, after [`start`](Issuer::start); with no claim yet (a
    /// coordinated node still claiming) there is nothing to wait for, and
    /// a later claim's floor is handled by its generator instead.
    ///
    /// # Errors
    ///
    /// [`FleetError::MarkAhead`], naming the state file, both times and
    /// `max_wait`.
    pub async fn wait_out_mark(&self, max_wait: Duration) -> Result<(), FleetError> {
        let Some((file, Some(mark_ms))) = self.resume_point() else {
            return Ok(());
        };
        let now_ms = self.inner.options.clock.now_ms();
        let wait = file.startup_wait(mark_ms, now_ms, max_wait)?;
        if !wait.is_zero() {
            tracing::info!(
                mark = %format_time(mark_ms),
                clock = %format_time(now_ms),
                wait_ms = wait.as_millis() as u64,
                state_file = %file.path().display(),
                "the high-water mark is ahead of the clock (a restart right after the last ID?); waiting it out"
            );
            tokio::time::sleep(wait).await;
        }
        Ok(())
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
                m.recorded_at_claim,
            )
        })
    }

    /// One new ID, waiting (asynchronously) for the mark's write or, under
    /// the `wait` policy, for the clock when it must.
    ///
    /// # Errors
    ///
    /// A [`Refusal`] when no ID may be issued now: no claim in force, the
    /// clock behind beyond what the policy waits, the mark not writable.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use snowmint_fleet::IssuerBuilder;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let issuer = IssuerBuilder::new()
    ///     .node(1, 2)
    ///     .state_dir(dir.path())
    ///     .start_issuer()
    ///     .await?;
    /// let first = issuer.next_id().await?;
    /// let mut batch = Vec::new();
    /// issuer.next_ids(100, &mut batch).await?;
    /// assert!(batch.iter().all(|id| *id > first));
    /// issuer.release().await;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn next_id(&self) -> Result<SnowflakeId, Refusal> {
        let slow = match self.inner.first_attempt::<true>() {
            Ok(id) => return Ok(id),
            Err(slow) => *slow,
        };
        match slow {
            Slow::Refused(refusal) => Err(refusal),
            Slow::Uncovered { minting, id } => {
                let ts = self.layout().timestamp_ms(id);
                self.inner.cover(&minting, ts).await?;
                Ok(id)
            }
            Slow::ClockBehind { minting, error } => {
                let mut first = Some(Err(error));
                let id = self
                    .inner
                    .generate(&minting, |generator| {
                        first.take().unwrap_or_else(|| generator.next_id())
                    })
                    .await?;
                let ts = self.layout().timestamp_ms(id);
                self.inner.cover(&minting, ts).await?;
                Ok(id)
            }
        }
    }

    /// `count` new IDs, appended to `out` (left as it was on error).
    pub async fn next_ids(&self, count: usize, out: &mut Vec<SnowflakeId>) -> Result<(), Refusal> {
        let minting = self.inner.acquire()?;
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

    /// How far the timestamp of an ID issued now would run ahead of the
    /// node's clock, at least: the lead of the current claim's generator
    /// ([`Generator::lead`]), zero without a claim. Only the `borrow` clock
    /// policy makes a lead, at most its bound; the largest one taken so far
    /// is [`GeneratorStats::max_lead`] in [`stats`](Issuer::stats).
    pub fn lead(&self) -> Duration {
        self.inner
            .current()
            .map_or(Duration::ZERO, |minting| minting.generator.lead())
    }

    /// Gives the claim up (clean shutdown), then the node's lock, once
    /// the mark covering every ID issued is on disk.
    pub async fn release(&self) {
        self.inner.releasing.store(true, Ordering::Relaxed);
        self.inner.source.release().await;
        // The claim watcher does the same when it sees the fence; done
        // here too so that the node is free when this returns.
        let _switching = self.inner.switching.lock().await;
        self.inner.let_go().await;
    }
}

/// The generation and deadline of the claim in `state`, if it is in force
/// at `now`: the fencing check (docs/ARCHITECTURE.md §3, invariant 3).
fn claim_in_force(state: &NodeState, now: Instant) -> Result<(u64, Option<Instant>), Refusal> {
    match state.claim_at(now) {
        Some(claim) => Ok((claim.generation, claim.valid_until)),
        None => Err(Refusal::NoClaim {
            reason: match state {
                NodeState::Fenced { reason } => reason.clone(),
                NodeState::Active(_) => past_deadline(),
            },
        }),
    }
}

/// Why a claim that is still published may not be used.
fn past_deadline() -> String {
    "the claim could not be confirmed before its deadline".to_owned()
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
        let (generation, _) = claim_in_force(&self.state.borrow(), Instant::now())?;
        self.minting_of(generation)
    }

    /// The minting of the claim of `generation`, if it is the current one.
    fn minting_of(&self, generation: u64) -> Result<Arc<Minting>, Refusal> {
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

    /// Checks that `minting` is still the one in force, after a wait:
    /// `changed` is the reason when another claim has replaced it.
    fn still_held(&self, minting: &Arc<Minting>, changed: &str) -> Result<(), Refusal> {
        match self.minting() {
            Ok(now) if Arc::ptr_eq(&now, minting) => Ok(()),
            Ok(_) => Err(Refusal::NotReady {
                reason: changed.to_owned(),
            }),
            Err(refusal) => Err(refusal),
        }
    }

    /// Runs `take` on the generator, applying the `wait` policy without
    /// blocking the runtime: the generator itself refuses, and this waits
    /// (asynchronously) for the clock to catch up, up to the bound.
    ///
    /// After each nap the claim is checked again before the next `take`:
    /// the wait can outlast the claim's deadline, or see the claim replaced.
    /// A request that does not wait pays nothing for this.
    async fn generate<T>(
        &self,
        minting: &Arc<Minting>,
        mut take: impl FnMut(&Generator<Arc<dyn Clock>>) -> Result<T, Error>,
    ) -> Result<T, Refusal> {
        let mut deadline = None;
        loop {
            match take(&minting.generator) {
                Ok(value) => {
                    if self.in_regression.load(Ordering::Relaxed) {
                        self.clock_caught_up();
                    }
                    return Ok(value);
                }
                Err(error) if let Some(regression) = error.regression() => {
                    let Regression {
                        last_ms, now_ms, ..
                    } = regression;
                    if let ClockPolicy::Wait { max } = self.options.clock_policy {
                        self.note_clock_behind(last_ms, now_ms);
                        let behind = Duration::from_millis((last_ms - now_ms).max(0) as u64);
                        let deadline = *deadline.get_or_insert_with(|| Instant::now() + max);
                        let left = deadline.saturating_duration_since(Instant::now());
                        if behind <= max && !left.is_zero() {
                            // Short naps: the clock may jump forward too.
                            let nap = behind.min(left).min(Duration::from_millis(50));
                            tokio::time::sleep(nap.max(Duration::from_millis(1))).await;
                            self.still_held(
                                minting,
                                "the claim changed while the request waited for the clock",
                            )?;
                            continue;
                        }
                    }
                    return Err(self.clock_behind(&error));
                }
                Err(other) => {
                    return Err(Refusal::ClockOutOfRange {
                        reason: other.to_string(),
                    });
                }
            }
        }
    }

    /// The refusal for the generator's `error` (the clock behind the last
    /// ID), logged once while the clock stays behind.
    fn clock_behind(&self, error: &Error) -> Refusal {
        let Some(Regression {
            last_ms, now_ms, ..
        }) = error.regression()
        else {
            return Refusal::ClockOutOfRange {
                reason: error.to_string(),
            };
        };
        self.note_clock_behind(last_ms, now_ms);
        let refusal = Refusal::ClockBehind { last_ms, now_ms };
        tracing::debug!(%refusal, "refused");
        refusal
    }

    /// Logs, once while it lasts, that the clock is behind.
    fn note_clock_behind(&self, last_ms: i64, now_ms: i64) {
        if !self.in_regression.swap(true, Ordering::Relaxed) {
            // The per-thread snapshots are taken again, where the clock
            // catching up is noticed (`fast.rs`).
            self.changed();
            tracing::warn!(
                last = %format_time(last_ms),
                now = %format_time(now_ms),
                behind_ms = last_ms - now_ms,
                policy = self.options.clock_policy.name(),
                "clock behind: the clock reads earlier than IDs this slot may already have issued (a step back, or a previous holder's mark)"
            );
        }
    }

    /// Makes sure an ID with timestamp `ts_ms` is covered by a recorded
    /// mark before it leaves.
    #[inline]
    async fn cover(&self, minting: &Arc<Minting>, ts_ms: i64) -> Result<(), Refusal> {
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
            .map_err(|error| self.mark_refusal(error))?;
        self.mark_recorded();
        // The write took time: the claim must still hold.
        self.still_held(minting, "the claim changed while the ID was made")
    }

    /// The refusal for a mark that could not be recorded; logged once while
    /// writes keep failing.
    fn mark_refusal(&self, error: FleetError) -> Refusal {
        match error {
            FleetError::Fenced { reason } => Refusal::NoClaim { reason },
            other => {
                if !self.mark_failing.swap(true, Ordering::Relaxed) {
                    tracing::error!(error = %other, "cannot record the high-water mark; refusing to issue IDs");
                }
                Refusal::MarkUnwritable {
                    reason: other.to_string(),
                }
            }
        }
    }

    /// A mark was recorded: logs the recovery, if writes had failed.
    fn mark_recorded(&self) {
        if self.mark_failing.swap(false, Ordering::Relaxed) {
            tracing::info!("the high-water mark is recorded again; issuing IDs");
        }
    }
}
