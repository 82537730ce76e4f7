//! The handle an application mints with: synchronous calls over an
//! [`Issuer`], on a runtime thread of its own or on the caller's runtime.
//!
//! # What a synchronous call does when it must wait
//!
//! The common case waits for nothing (see `fast.rs`). Two things can make
//! an ID wait: the high-water mark must be written before the ID leaves
//! (IDs outran the background write, or it failed), or the clock is
//! behind the last ID under the `wait` policy. The work is done on the
//! issuer's runtime; the calling thread waits for it, unless waiting could
//! stop the very runtime that does the work:
//!
//! - a thread outside any Tokio runtime waits;
//! - a worker of a multi-threaded runtime waits inside
//!   [`tokio::task::block_in_place`], so that its other tasks move to
//!   other workers;
//! - a thread that runs a current-thread runtime waits if the issuer has
//!   its own runtime thread (started with
//!   [`start_blocking`](IssuerBuilder::start_blocking)): the work does not
//!   need the caller's runtime;
//! - otherwise (the issuer's own runtime thread, or a current-thread
//!   runtime that may be the issuer's) the call does not wait: the work
//!   is started in the background and the call is refused with
//!   [`Refusal::WouldBlock`] (a mark to write) or
//!   [`Refusal::ClockBehind`] (the clock), each with a retry-after. Async
//!   code that would rather wait calls [`issuer`](EmbeddedIssuer::issuer)`().next_id().await`.
//!
//! # Fork
//!
//! A child process made by `fork` has a copy of the issuer but not its
//! runtime thread, and must not issue under the parent's claim, release
//! it, or touch anything the parent's threads may have held locked at the
//! fork. [`abandon`](EmbeddedIssuer::abandon) drops the copy doing none of
//! that; a child then starts an issuer of its own.

use std::future::Future;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use snowmint::{ClockPolicy, Error, ErrorKind, Layout, Node, SnowflakeId};
use tokio::runtime::RuntimeFlavor;
use tokio::sync::{oneshot, watch};

use super::builder::wait_until_ready;
use super::{Issuer, IssuerBuilder, NodeReport, Refusal, Slow, fast};
use crate::{FleetError, NodeState};

/// The longest a synchronous call waits for work on the issuer's runtime
/// beyond what the work itself bounds (a mark's write is bounded by the
/// coordinator's limits, a clock wait by the policy).
const WAIT_LIMIT: Duration = Duration::from_secs(60);

/// An issuer for a program that mints IDs in-process, with the rules of
/// `snowmint serve` (docs/ARCHITECTURE.md §3): one holder per node on a
/// host, a durable high-water mark reserved ahead of the clock, and, with
/// a coordinator, a slot leased with fencing.
///
/// Made by [`IssuerBuilder`] ([`EmbeddedIssuer::builder`]).
///
/// - [`next_id`](Self::next_id) and [`next_ids`](Self::next_ids) are
///   synchronous and, in the common case, wait for nothing: no lock, no
///   disk, no runtime. When they must wait, see the module docs (`What a
///   synchronous call does when it must wait`).
/// - A refusal is a [`Refusal`]: fenced (no slot held), the clock behind,
///   the mark unwritable, ...; each with [`Refusal::retry_after`].
/// - [`state`](Self::state) and [`watch`](Self::watch) follow the claim;
///   [`report`](Self::report) says everything.
/// - [`shutdown`](Self::shutdown) (or dropping it) releases the slot and
///   the node's lock; [`abandon`](Self::abandon) is for a forked child.
///
/// # Examples
///
/// ```
/// use snowmint::Layout;
/// use snowmint_fleet::{EmbeddedIssuer, FleetError};
///
/// let dir = tempfile::tempdir()?;
/// let issuer = EmbeddedIssuer::builder().node(1, 2).state_dir(dir.path()).start_blocking()?;
/// let first = issuer.next_id()?;
/// let batch = issuer.next_ids(1000)?;
/// assert!(batch.iter().all(|id| *id > first));
/// assert_eq!(Layout::TWITTER.node_of(first), snowmint::Node::from_slot(34));
///
/// // A second issuer of the node on this host and state directory is
/// // refused, and told which process holds it.
/// let second = EmbeddedIssuer::builder().node(1, 2).state_dir(dir.path()).start_blocking();
/// assert!(matches!(second, Err(FleetError::NodeLocked { .. })));
///
/// issuer.shutdown();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct EmbeddedIssuer {
    issuer: Issuer,
    /// The runtime thread, when the issuer has its own.
    own: Option<OwnRuntime>,
    /// Set once shut down (or abandoned), so that drop does nothing more.
    done: bool,
}

/// A runtime thread of the issuer's own.
struct OwnRuntime {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for EmbeddedIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedIssuer")
            .field("issuer", &self.issuer)
            .field("own_runtime", &self.own.is_some())
            .finish_non_exhaustive()
    }
}

/// Whether, and how, the calling thread may wait for the issuer's runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    Plain,
    InPlace,
    Not,
}

impl EmbeddedIssuer {
    /// The settings of an issuer, every one at its default (a node source
    /// must still be given).
    pub fn builder() -> IssuerBuilder {
        IssuerBuilder::new()
    }

    pub(super) fn on_callers_runtime(issuer: Issuer) -> EmbeddedIssuer {
        EmbeddedIssuer {
            issuer,
            own: None,
            done: false,
        }
    }

    pub(super) fn start_on_own_thread(
        builder: IssuerBuilder,
    ) -> Result<EmbeddedIssuer, FleetError> {
        let io = |what: &str| {
            let context = format!("cannot start the issuer's runtime thread ({what})");
            move |error| FleetError::Io { context, error }
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .thread_name("snowmint-issuer")
            .build()
            .map_err(io("a Tokio runtime"))?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("snowmint-issuer".to_owned())
            .spawn(move || {
                runtime.block_on(async {
                    // An error: the handle was dropped without a word, which
                    // stops the runtime just the same.
                    let _ = stopped.await;
                });
                // The mark's writes run on the blocking pool; they finish
                // in milliseconds.
                runtime.shutdown_timeout(Duration::from_secs(5));
            })
            .map_err(io("a thread"))?;
        let runtime_thread = thread.thread().id();
        let mut own = OwnRuntime {
            stop: Some(stop),
            thread: Some(thread),
        };
        let claim_wait = builder.claim_wait();
        let (started, start) = mpsc::sync_channel(1);
        handle.spawn(async move {
            let outcome = match builder.start_primed(true).await {
                Ok(issuer) => {
                    let _ = issuer.inner.runtime_thread.set(runtime_thread);
                    match wait_until_ready(&issuer, claim_wait).await {
                        Ok(()) => Ok(issuer),
                        Err(error) => {
                            issuer.release().await;
                            Err(error)
                        }
                    }
                }
                Err(error) => Err(error),
            };
            let _ = started.send(outcome);
        });
        match start.recv() {
            Ok(Ok(issuer)) => Ok(EmbeddedIssuer {
                issuer,
                own: Some(own),
                done: false,
            }),
            Ok(Err(error)) => {
                own.stop();
                Err(error)
            }
            Err(_) => {
                own.stop();
                Err(FleetError::Io {
                    context: "cannot start the issuer: its runtime thread stopped".to_owned(),
                    error: std::io::Error::other("the runtime thread stopped during the start"),
                })
            }
        }
    }

    /// One new ID.
    ///
    /// # Errors
    ///
    /// A [`Refusal`], with its reason and [`Refusal::retry_after`]: no slot
    /// held (fenced, or still claiming), the clock behind the last ID
    /// (under `refuse`, or longer than `wait` tolerates), the mark not
    /// writable, or a wait this thread cannot do (see the type's docs).
    ///
    /// # Examples
    ///
    /// A clock stepped back is refused rather than let an ID repeat:
    ///
    /// ```
    /// use snowmint::ManualClock;
    /// use snowmint_fleet::{EmbeddedIssuer, Refusal};
    /// use std::sync::Arc;
    ///
    /// let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    /// let dir = tempfile::tempdir()?;
    /// let issuer = EmbeddedIssuer::builder()
    ///     .node(1, 2)
    ///     .state_dir(dir.path())
    ///     .shared_clock(clock.clone())
    ///     .start_blocking()?;
    /// issuer.next_id()?;
    ///
    /// clock.set(1_699_999_995_000); // 5 s back
    /// let refusal = issuer.next_id().unwrap_err();
    /// assert!(matches!(refusal, Refusal::ClockBehind { .. }));
    /// assert_eq!(refusal.code(), "clock_behind");
    ///
    /// clock.set(1_700_000_000_001); // past the last ID again
    /// issuer.next_id()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn next_id(&self) -> Result<SnowflakeId, Refusal> {
        match self.issuer.inner.first_attempt::<false>() {
            Ok(id) => Ok(id),
            Err(slow) => self.next_id_slow(*slow),
        }
    }

    #[cold]
    fn next_id_slow(&self, slow: Slow) -> Result<SnowflakeId, Refusal> {
        let inner = &self.issuer.inner;
        match slow {
            Slow::Refused(refusal) => Err(refusal),
            Slow::Uncovered { minting, id } => {
                let ts_ms = self.layout().timestamp_ms(id);
                let inner = inner.clone();
                self.wait_for("the high-water mark must be written", async move {
                    inner.cover(&minting, ts_ms).await.map(|()| id)
                })
            }
            Slow::ClockBehind { minting, error } => {
                if !self.may_wait_for_clock(&error) {
                    return Err(inner.clock_behind(&error));
                }
                let issuer = self.issuer.clone();
                self.wait_for("the clock must catch up", async move {
                    let mut first = Some(Err(error));
                    let id = issuer
                        .inner
                        .generate(&minting, |generator| {
                            first.take().unwrap_or_else(|| generator.next_id())
                        })
                        .await?;
                    let ts_ms = issuer.layout().timestamp_ms(id);
                    issuer.inner.cover(&minting, ts_ms).await?;
                    Ok(id)
                })
            }
        }
    }

    /// `count` new IDs, strictly increasing.
    ///
    /// # Errors
    ///
    /// As [`next_id`](Self::next_id); no ID is returned then.
    pub fn next_ids(&self, count: usize) -> Result<Vec<SnowflakeId>, Refusal> {
        let mut ids = Vec::new();
        self.next_ids_into(count, &mut ids)?;
        Ok(ids)
    }

    /// `count` new IDs appended to `out` (left as it was on error).
    ///
    /// # Errors
    ///
    /// As [`next_ids`](Self::next_ids).
    pub fn next_ids_into(&self, count: usize, out: &mut Vec<SnowflakeId>) -> Result<(), Refusal> {
        let inner = &self.issuer.inner;
        let minting = inner.acquire()?;
        let before = out.len();
        match minting.generator.next_ids(count, out) {
            Ok(()) => {}
            Err(error)
                if error.kind() == ErrorKind::ClockBehind && self.may_wait_for_clock(&error) =>
            {
                let issuer = self.issuer.clone();
                let more = self.wait_for("the clock must catch up", async move {
                    let mut ids = Vec::with_capacity(count);
                    issuer.next_ids(count, &mut ids).await.map(|()| ids)
                })?;
                out.extend(more);
                return Ok(());
            }
            Err(error) if error.kind() == ErrorKind::ClockBehind => {
                return Err(inner.clock_behind(&error));
            }
            Err(other) => {
                return Err(Refusal::ClockOutOfRange {
                    reason: other.to_string(),
                });
            }
        }
        if self
            .issuer
            .inner
            .in_regression
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            inner.clock_caught_up();
        }
        let Some(&last) = out.last().filter(|_| out.len() > before) else {
            return Ok(());
        };
        let ts_ms = self.layout().timestamp_ms(last);
        let reservation = &minting.reservation;
        if reservation.covers(ts_ms) {
            if reservation.due_for_refresh(ts_ms) {
                reservation.refresh_in_background(inner.options.clock.now_ms());
            }
            return Ok(());
        }
        let inner = inner.clone();
        let covered = self.wait_for("the high-water mark must be written", async move {
            inner.cover(&minting, ts_ms).await
        });
        if covered.is_err() {
            out.truncate(before);
        }
        covered
    }

    /// The layout IDs are issued in.
    pub fn layout(&self) -> Layout {
        self.issuer.layout()
    }

    /// The node IDs are issued as now, if a claim is in force.
    pub fn node(&self) -> Option<Node> {
        self.report().claim.map(|claim| claim.node)
    }

    /// The state of the node's claim as its source publishes it: a claim
    /// ([`NodeState::Active`], with its slot, node and deadline) or why
    /// there is none ([`NodeState::Fenced`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint_fleet::{EmbeddedIssuer, NodeState};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let issuer = EmbeddedIssuer::builder().node(1, 2).state_dir(dir.path()).start_blocking()?;
    /// match issuer.state() {
    ///     NodeState::Active(claim) => assert_eq!(claim.slot, 34), // 1 * 32 + 2
    ///     NodeState::Fenced { reason } => panic!("not issuing: {reason}"),
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn state(&self) -> NodeState {
        self.issuer.source().state().borrow().clone()
    }

    /// Every change of [`state`](Self::state), as it happens: a new claim
    /// (another slot after a loss), a renewal, a fence. `has_changed` and
    /// `borrow_and_update` serve synchronous code; `changed().await` async
    /// code.
    pub fn watch(&self) -> watch::Receiver<NodeState> {
        self.issuer.source().state()
    }

    /// Whether an ID would be issued now and, if not, the refusal it would
    /// get; tries no write.
    pub fn readiness(&self) -> Result<(), Refusal> {
        self.issuer.readiness_now()
    }

    /// Everything the node says about itself (the report behind
    /// `snowmint serve`'s `/v1/node`).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint_fleet::EmbeddedIssuer;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let issuer = EmbeddedIssuer::builder().node(1, 2).state_dir(dir.path()).start_blocking()?;
    /// let id = issuer.next_id()?;
    /// let report = issuer.report();
    /// assert_eq!(report.source, "static");
    /// assert!(report.readiness.is_ok());
    /// // The mark on disk covers every ID issued.
    /// let mark = report.high_water_mark_ms.expect("a mark once an ID left");
    /// assert!(mark >= snowmint::Layout::TWITTER.timestamp_ms(id));
    /// assert!(report.state_file.unwrap().starts_with(dir.path()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn report(&self) -> NodeReport {
        self.issuer.report()
    }

    /// The asynchronous issuer underneath, for async code that would
    /// rather wait than be refused ([`Issuer::next_id`]). It stops issuing
    /// when this handle is shut down or dropped.
    pub fn issuer(&self) -> &Issuer {
        &self.issuer
    }

    /// Releases the slot (a coordinated node's key is deleted at once, so
    /// that another node may take it) and the node's lock, after the mark
    /// covering every ID issued is on disk; stops the runtime thread, if
    /// the issuer has its own. Dropping the issuer does the same.
    ///
    /// Waits for the release, except on a thread where waiting could stop
    /// the runtime that does it (see the type's docs): there it goes on in
    /// the background; async code that wants to wait calls
    /// [`shutdown_async`](Self::shutdown_async).
    pub fn shutdown(mut self) {
        self.shut_down();
    }

    /// [`shutdown`](Self::shutdown), waiting asynchronously for the
    /// release.
    pub async fn shutdown_async(mut self) {
        self.done = true;
        self.issuer.release().await;
        if let Some(own) = self.own.as_mut() {
            // Joining the thread would block; it ends by itself once told.
            if let Some(stop) = own.stop.take() {
                let _ = stop.send(());
            }
            own.thread.take();
        }
    }

    /// Drops this handle without releasing anything and without touching
    /// its runtime: for a child process made by `fork` that holds a copy
    /// of its parent's issuer. The parent keeps its slot, lock and runtime
    /// thread; the child leaks the copy (its memory and open files), which
    /// the child's exit frees.
    ///
    /// Never call it in the process that started the issuer: the slot
    /// would stay claimed until the process ends (the claim's TTL after
    /// that), and the node locked until then.
    pub fn abandon(self) {
        fast::forget_snapshot_of(self.issuer.inner.id);
        std::mem::forget(self);
    }

    fn shut_down(&mut self) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let issuer = self.issuer.clone();
        let release = async move {
            issuer.release().await;
            Ok::<(), Refusal>(())
        };
        match self.waiting() {
            Waiting::Not => {
                drop(self.issuer.inner.runtime.spawn(release));
            }
            _ => {
                let _ = self.wait_for("the release", release);
            }
        }
        if let Some(own) = self.own.as_mut() {
            own.stop();
        }
    }

    /// Whether the calling thread may wait for the clock under the `wait`
    /// policy, for a refusal of the generator.
    fn may_wait_for_clock(&self, error: &Error) -> bool {
        let ClockPolicy::Wait { max } = self.issuer.clock_policy() else {
            return false;
        };
        let Some(regression) = error.regression() else {
            return false;
        };
        let behind = regression.behind();
        behind <= max && self.waiting() != Waiting::Not
    }

    /// How the calling thread may wait for the issuer's runtime (see the
    /// type's docs).
    fn waiting(&self) -> Waiting {
        let own = self.issuer.inner.runtime_thread.get();
        if own.is_some_and(|thread| *thread == std::thread::current().id()) {
            return Waiting::Not;
        }
        match tokio::runtime::Handle::try_current() {
            Err(_) => Waiting::Plain,
            Ok(current) => match current.runtime_flavor() {
                RuntimeFlavor::MultiThread => Waiting::InPlace,
                _ if own.is_some() => Waiting::Plain,
                _ => Waiting::Not,
            },
        }
    }

    /// Runs `work` on the issuer's runtime and waits for it, or, when this
    /// thread may not wait, starts it and refuses with
    /// [`Refusal::WouldBlock`], naming `what`.
    fn wait_for<T: Send + 'static>(
        &self,
        what: &str,
        work: impl Future<Output = Result<T, Refusal>> + Send + 'static,
    ) -> Result<T, Refusal> {
        let runtime = &self.issuer.inner.runtime;
        let waiting = self.waiting();
        if waiting == Waiting::Not {
            drop(runtime.spawn(work));
            return Err(Refusal::WouldBlock {
                reason: format!(
                    "{what} before this ID may leave, and this thread runs the runtime that does it, so it cannot wait; it goes on in the background: try again shortly, or await issuer().next_id() in async code"
                ),
            });
        }
        let (done, result) = mpsc::sync_channel(1);
        drop(runtime.spawn(async move {
            let _ = done.send(work.await);
        }));
        let limit = WAIT_LIMIT + self.issuer.clock_policy().bound().unwrap_or_default();
        let wait = move || result.recv_timeout(limit);
        let outcome = match waiting {
            Waiting::InPlace => tokio::task::block_in_place(wait),
            _ => wait(),
        };
        match outcome {
            Ok(outcome) => outcome,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(Refusal::MarkUnwritable {
                reason: format!(
                    "{what}, and that did not finish within {} s",
                    limit.as_secs()
                ),
            }),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Refusal::NoClaim {
                reason: "the issuer's runtime has stopped (the issuer was shut down)".to_owned(),
            }),
        }
    }
}

impl Drop for EmbeddedIssuer {
    fn drop(&mut self) {
        self.shut_down();
    }
}

impl OwnRuntime {
    /// Stops the runtime thread and waits for it (unless this is that
    /// thread).
    fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take()
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}
