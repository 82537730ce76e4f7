//! The claim engine: one set of rules for every coordination service.
//!
//! A [`Coordinator`] claims a slot of the fleet, keeps it, fences the node
//! when it cannot prove it still holds it, claims anew after a loss, and
//! keeps the slot's high-water mark. What differs between etcd and
//! ZooKeeper is only how each primitive is spoken, behind [`Backend`].
//!
//! # Keys
//!
//! - `/snowmint/<fleet>/slots/<slot>`: who holds the slot; tied to the
//!   holder's session (an etcd lease, an ephemeral znode), so that it frees
//!   itself when the holder stops renewing.
//! - `/snowmint/<fleet>/hwm/<slot>`: the slot's high-water mark, a Unix
//!   millisecond count. Not tied to any session: it must survive holders.
//!
//! # Rules
//!
//! - Claim: open a session, list the taken slots, try to create the key of
//!   each free slot of the range, lowest first, only if absent. None left:
//!   fenced with "all N slots of fleet F in A-B are taken", retried with
//!   backoff.
//! - Deadline: the node may issue until `sent + TTL - margin`, where `sent`
//!   is when the last *confirmed* keep-alive was sent. The coordinator
//!   cannot have counted the TTL from any earlier instant, so the node stops
//!   before its key can expire and be handed to someone else. The margin is
//!   a tenth of the TTL (at least 50 ms). The deadline travels in
//!   [`Claim::valid_until`], so a reader stops even if this task is stuck.
//! - Keep-alive every third of the TTL; after a failed one, retry every
//!   tenth. Past the deadline, or on a definite loss (lease or session gone,
//!   key no longer ours): fenced, the old session released if it still
//!   answers, and a new claim, possibly of another slot, with a new
//!   `generation`.
//! - High-water mark: [`SlotSource::reserve`] raises the stored mark with a
//!   compare-and-set on its version, guarded by the slot key still belonging
//!   to this session, and never lowers it. A new claim reads the mark into
//!   [`Claim::floor_ms`].
//! - Clean shutdown ([`SlotSource::release`]): fenced first, then the
//!   session ends (lease revoked, ZooKeeper node deleted and session
//!   closed), so the slot frees at once.

mod backend;
mod config;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use snowmint::Node;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use backend::{Backend, BackendError, GuardedWrite, Opened, Versioned};
pub use config::{
    ConfigError, CoordinatorConfig, CoordinatorUrl, FleetName, Holder, MAX_FLEET_NAME, MAX_TTL,
    MIN_TTL, SlotRange, parse_claim_ttl,
};

use crate::{BoxFuture, Claim, FleetError, NodeState, SlotSource};

/// The smallest safety margin kept before the TTL runs out.
const MIN_MARGIN: Duration = Duration::from_millis(50);
/// How many ended claims [`Coordinator::claims`] remembers.
const HISTORY: usize = 32;
/// Compare-and-set attempts on the high-water mark before giving up; each
/// conflict means another writer moved the mark, which a slot's single
/// holder should never see twice in a row.
const MARK_ATTEMPTS: usize = 4;

/// Starts a claim engine for `url`, returned as the [`SlotSource`] the
/// service reads.
///
/// Returns at once: the node starts fenced ("starting") and the claim is
/// made in the background; watch [`SlotSource::state`]. Must be called
/// inside a Tokio runtime.
///
/// # Errors
///
/// [`FleetError::Coordinator`] when this build lacks the backend (cargo
/// features `etcd`, `zookeeper`) or there is no Tokio runtime.
#[cfg_attr(
    not(any(feature = "etcd", feature = "zookeeper")),
    allow(unused_variables)
)]
pub fn connect(
    url: &CoordinatorUrl,
    config: CoordinatorConfig,
) -> Result<Arc<dyn SlotSource>, FleetError> {
    match url {
        #[cfg(feature = "etcd")]
        CoordinatorUrl::Etcd { endpoints } => {
            let backend = crate::etcd::EtcdBackend::new(endpoints.clone());
            Ok(Arc::new(Coordinator::start(backend, config)?))
        }
        #[cfg(feature = "zookeeper")]
        CoordinatorUrl::ZooKeeper { hosts, chroot } => {
            let backend = crate::zookeeper::ZooKeeperBackend::new(hosts.clone(), chroot.clone());
            Ok(Arc::new(Coordinator::start(backend, config)?))
        }
        #[allow(unreachable_patterns)] // with both backends built in, no URL lacks support
        other => Err(FleetError::Coordinator {
            coordinator: other.to_string(),
            message: format!(
                "this build has no {kind} support (build with the cargo feature `{kind}`)",
                kind = other.kind()
            ),
        }),
    }
}

/// A node's claim on a slot of a fleet, kept through a coordination service.
///
/// Dropping it stops the engine without releasing anything (like a crash:
/// the slot frees when the TTL runs out); call [`SlotSource::release`] for a
/// clean shutdown.
pub struct Coordinator<B: Backend> {
    shared: Arc<Shared<B>>,
    task: Mutex<Option<JoinHandle<()>>>,
}

/// What the engine is doing, for `/v1/node` and metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoordinatorStatus {
    /// The coordinator's URL.
    pub url: String,
    /// The fleet's name.
    pub fleet: String,
    /// The slots this node may claim.
    pub slots: SlotRange,
    /// What the engine is doing now.
    pub state: ClaimState,
    /// The slot held, if any.
    pub slot: Option<u64>,
    /// What the coordinator calls a session: `lease` (etcd), `session`
    /// (ZooKeeper).
    pub session_kind: &'static str,
    /// The open lease or session, if any, as the coordinator names it.
    pub session_id: Option<String>,
    /// The TTL granted to the open session, else the one asked for.
    pub ttl: Duration,
    /// Written into the slot key: who this node is.
    pub holder: String,
    /// Claims made so far (the generation of the latest claim).
    pub claims: u64,
    /// Claims lost so far (not counting a clean release).
    pub losses: u64,
    /// When the request that won the current claim was sent: the slot
    /// cannot have become this node's before then.
    pub claimed_at: Option<Instant>,
    /// Until when the current claim may be used.
    pub deadline: Option<Instant>,
}

/// What a claim engine is doing.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::ClaimState;
///
/// assert_eq!(ClaimState::AllTaken.name(), "all_taken");
/// assert!(ClaimState::ALL.iter().all(|state| !state.name().is_empty()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClaimState {
    /// Opening a lease or session (at start, and after a loss).
    Connecting,
    /// A session is open; looking for a free slot.
    Claiming,
    /// A session is open, but every slot of the range is taken; retrying.
    AllTaken,
    /// A slot is held.
    Held,
    /// The claim was given up for good (clean shutdown).
    Released,
}

impl ClaimState {
    /// Every state, for metric labels.
    pub const ALL: [ClaimState; 5] = [
        ClaimState::Connecting,
        ClaimState::Claiming,
        ClaimState::AllTaken,
        ClaimState::Held,
        ClaimState::Released,
    ];

    /// Its name in `/v1/node` and metrics: `connecting`, `claiming`,
    /// `all_taken`, `held`, `released`.
    pub fn name(self) -> &'static str {
        match self {
            ClaimState::Connecting => "connecting",
            ClaimState::Claiming => "claiming",
            ClaimState::AllTaken => "all_taken",
            ClaimState::Held => "held",
            ClaimState::Released => "released",
        }
    }
}

/// One claim the engine made: when it was won and until when it could be
/// used. Kept for the last few claims, for `/v1/node` and to check that a
/// node always stopped before the next holder of its slot started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClaimRecord {
    /// The slot claimed.
    pub slot: u64,
    /// The claim's generation.
    pub generation: u64,
    /// When the request that won the slot was sent: the slot cannot have
    /// become this node's before then.
    pub claimed_at: Instant,
    /// The last instant at which IDs could be issued under the claim: its
    /// deadline, or when it was given up if that came first.
    pub valid_until: Instant,
    /// When the engine gave the claim up (lost or released); `None` while
    /// it is held.
    pub ended_at: Option<Instant>,
}

impl CoordinatorStatus {
    /// How long the current claim may still be used; `None` when fenced.
    pub fn time_to_deadline(&self, now: Instant) -> Option<Duration> {
        self.deadline
            .map(|deadline| deadline.saturating_duration_since(now))
    }
}

struct Shared<B: Backend> {
    backend: B,
    config: CoordinatorConfig,
    /// The coordinator's URL, for messages.
    url: String,
    paths: Paths,
    state: watch::Sender<NodeState>,
    inner: Mutex<Inner<B::Session>>,
    /// The last mark stored for the current claim; a tokio mutex because it
    /// is held across the write, so that concurrent reservations queue and
    /// most find their mark already covered.
    marks: tokio::sync::Mutex<MarkCache>,
}

/// A claim that may still be used, with the session that holds it.
type UsableClaim<S> = (Arc<Live<S>>, Held);

/// A session with what the coordinator granted.
struct Live<S> {
    session: S,
    ttl: Duration,
    id: String,
}

struct Inner<S> {
    /// The open session, kept here (not only in the task) so that
    /// `release` can end it whatever the task was doing.
    session: Option<Arc<Live<S>>>,
    claim: Option<Held>,
    /// Ended claims, oldest first, at most `HISTORY`.
    history: VecDeque<ClaimRecord>,
    generation: u64,
    losses: u64,
    /// Set while the open session found every slot taken.
    all_taken: bool,
    /// Set once the claim is given up for good.
    released: bool,
}

impl<S> Inner<S> {
    /// Ends the current claim, if any, at `now`.
    fn end_claim(&mut self, now: Instant) -> Option<Held> {
        let held = self.claim.take()?;
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(ClaimRecord {
            valid_until: held.deadline.min(now),
            ended_at: Some(now),
            ..held.record()
        });
        Some(held)
    }
}

#[derive(Debug, Clone, Copy)]
struct Held {
    slot: u64,
    node: Node,
    generation: u64,
    claimed_at: Instant,
    deadline: Instant,
    floor_ms: Option<i64>,
}

impl Held {
    fn record(&self) -> ClaimRecord {
        ClaimRecord {
            slot: self.slot,
            generation: self.generation,
            claimed_at: self.claimed_at,
            valid_until: self.deadline,
            ended_at: None,
        }
    }
}

#[derive(Debug, Default)]
struct MarkCache {
    generation: u64,
    mark_ms: Option<i64>,
    version: Option<i64>,
}

/// The fleet's key names, built in one place.
struct Paths {
    root: String,
}

impl Paths {
    fn slots_dir(&self) -> String {
        format!("{}/slots", self.root)
    }

    fn marks_dir(&self) -> String {
        format!("{}/hwm", self.root)
    }

    fn slot(&self, slot: u64) -> String {
        format!("{}/slots/{slot}", self.root)
    }

    fn mark(&self, slot: u64) -> String {
        format!("{}/hwm/{slot}", self.root)
    }
}

/// The intervals that follow from a TTL.
#[derive(Debug, Clone, Copy)]
struct Timing {
    ttl: Duration,
}

impl Timing {
    fn margin(self) -> Duration {
        (self.ttl / 10).max(MIN_MARGIN)
    }

    /// The last instant a claim confirmed by a request sent at `sent` may
    /// be used, when the coordinator counts `ttl` from that request.
    fn deadline(self, sent: Instant, ttl: Duration) -> Instant {
        sent + ttl.saturating_sub(self.margin())
    }

    fn renew_every(self) -> Duration {
        self.ttl / 3
    }

    fn retry_every(self) -> Duration {
        self.ttl / 10
    }

    /// The longest one claiming step (list, create, read) may take.
    fn step_limit(self) -> Duration {
        self.ttl / 2
    }
}

/// Exponential backoff with jitter, so that refused nodes do not retry in
/// lockstep.
struct Backoff {
    first: Duration,
    most: Duration,
    next: Duration,
}

impl Backoff {
    fn new(ttl: Duration) -> Backoff {
        let first = (ttl / 10).max(MIN_MARGIN);
        Backoff {
            first,
            most: ttl / 2,
            next: first,
        }
    }

    fn next(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(self.most);
        // Half fixed, half random: RandomState is seeded per instance, which
        // is all the randomness jitter needs.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        pause / 2 + pause.mul_f64((random % 1000) as f64 / 2000.0)
    }

    fn reset(&mut self) {
        self.next = self.first;
    }
}

impl<B: Backend> Coordinator<B> {
    /// Starts claiming a slot through `backend`; see [`connect`].
    ///
    /// # Errors
    ///
    /// [`FleetError::Coordinator`] when called outside a Tokio runtime.
    pub fn start(backend: B, config: CoordinatorConfig) -> Result<Coordinator<B>, FleetError> {
        let url = backend.url();
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| FleetError::Coordinator {
                coordinator: url.clone(),
                message: "the claim engine must be started inside a Tokio runtime".into(),
            })?;
        let (state, _) = watch::channel(NodeState::Fenced {
            reason: format!("starting: claiming a slot from {url}"),
        });
        let shared = Arc::new(Shared {
            paths: Paths {
                root: format!("/snowmint/{}", config.fleet),
            },
            backend,
            config,
            url,
            state,
            inner: Mutex::new(Inner {
                session: None,
                claim: None,
                history: VecDeque::new(),
                generation: 0,
                losses: 0,
                all_taken: false,
                released: false,
            }),
            marks: tokio::sync::Mutex::new(MarkCache::default()),
        });
        let task = runtime.spawn(shared.clone().run());
        Ok(Coordinator {
            shared,
            task: Mutex::new(Some(task)),
        })
    }

    /// What the engine holds now.
    pub fn status(&self) -> CoordinatorStatus {
        let shared = &self.shared;
        let inner = shared.lock();
        let state = if inner.released {
            ClaimState::Released
        } else if inner.claim.is_some() {
            ClaimState::Held
        } else if inner.session.is_none() {
            ClaimState::Connecting
        } else if inner.all_taken {
            ClaimState::AllTaken
        } else {
            ClaimState::Claiming
        };
        CoordinatorStatus {
            url: shared.url.clone(),
            fleet: shared.config.fleet.clone(),
            slots: shared.config.slots,
            state,
            slot: inner.claim.map(|held| held.slot),
            session_kind: B::SESSION_NAME,
            session_id: inner.session.as_ref().map(|live| live.id.clone()),
            ttl: inner
                .session
                .as_ref()
                .map_or(shared.config.ttl, |live| live.ttl),
            holder: shared.config.holder.clone(),
            claims: inner.generation,
            losses: inner.losses,
            claimed_at: inner.claim.map(|held| held.claimed_at),
            deadline: inner.claim.map(|held| held.deadline),
        }
    }

    /// The last claims made, oldest first: the ended ones the engine
    /// remembers, then the current one.
    pub fn claims(&self) -> Vec<ClaimRecord> {
        let inner = self.shared.lock();
        inner
            .history
            .iter()
            .copied()
            .chain(inner.claim.map(|held| held.record()))
            .collect()
    }

    /// The settings the engine runs with.
    pub fn config(&self) -> &CoordinatorConfig {
        &self.shared.config
    }
}

impl<B: Backend> Drop for Coordinator<B> {
    fn drop(&mut self) {
        if let Some(task) = self
            .task
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            task.abort();
        }
    }
}

impl<B: Backend> SlotSource for Coordinator<B> {
    fn kind(&self) -> &'static str {
        B::KIND
    }

    fn state(&self) -> watch::Receiver<NodeState> {
        self.shared.state.subscribe()
    }

    fn reserve(&self, generation: u64, mark_ms: i64) -> BoxFuture<'_, Result<(), FleetError>> {
        Box::pin(self.shared.reserve(generation, mark_ms))
    }

    fn coordinator_status(&self) -> Option<CoordinatorStatus> {
        Some(self.status())
    }

    fn release(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // Stop the engine first, so that it cannot claim again.
            let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(task) = task {
                task.abort();
                let _ = task.await;
            }
            // Fenced before the slot frees: no ID may follow the release.
            self.shared
                .fence("released: the node is shutting down".into());
            let (live, held) = {
                let mut inner = self.shared.lock();
                inner.released = true;
                (inner.session.take(), inner.end_claim(Instant::now()))
            };
            if let Some(live) = live {
                let key = held.map(|held| self.shared.paths.slot(held.slot));
                let limit = Timing { ttl: live.ttl }.step_limit();
                let released = tokio::time::timeout(
                    limit,
                    self.shared.backend.release(&live.session, key.as_deref()),
                )
                .await;
                if !matches!(released, Ok(Ok(()))) {
                    tracing::warn!(coordinator = %self.shared.url, "could not release the claim; it frees when its TTL runs out");
                }
            }
        })
    }
}

impl<B: Backend> Shared<B> {
    fn lock(&self) -> MutexGuard<'_, Inner<B::Session>> {
        // A panic elsewhere cannot leave Inner half-updated: every change is
        // a plain field assignment.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn run(self: Arc<Self>) {
        let mut backoff = Backoff::new(self.config.ttl);
        loop {
            if let Some((live, opened_at)) = self.open_session().await {
                let reason = self.serve(&live, opened_at, &mut backoff).await;
                self.end_session(&live, reason).await;
            }
            tokio::time::sleep(backoff.next()).await;
        }
    }

    async fn open_session(&self) -> Option<(Arc<Live<B::Session>>, Instant)> {
        let dirs = [self.paths.slots_dir(), self.paths.marks_dir()];
        let sent = Instant::now();
        let opened = self
            .step(
                self.config.ttl,
                self.backend.open_session(self.config.ttl, &dirs),
            )
            .await;
        match opened {
            Ok(opened) => {
                let live = Arc::new(Live {
                    session: opened.session,
                    ttl: opened.ttl,
                    id: opened.id,
                });
                self.lock().session = Some(live.clone());
                Some((live, sent))
            }
            Err(reason) => {
                self.fence(reason);
                None
            }
        }
    }

    /// Claims a slot in this session and keeps it; returns why the session
    /// had to be given up.
    async fn serve(
        &self,
        live: &Live<B::Session>,
        opened_at: Instant,
        backoff: &mut Backoff,
    ) -> String {
        let timing = Timing { ttl: live.ttl };
        let mut confirmed = (opened_at, live.ttl);
        loop {
            match self.claim_lowest_free(live, timing).await {
                Err(reason) => return reason,
                Ok(None) => {
                    self.lock().all_taken = true;
                    self.fence(self.all_taken());
                    tokio::time::sleep(backoff.next().min(timing.renew_every())).await;
                    let sent = Instant::now();
                    match self
                        .step(
                            timing.step_limit(),
                            self.backend.keep_alive(&live.session, None),
                        )
                        .await
                    {
                        Ok(ttl) => confirmed = (sent, ttl),
                        Err(reason) => return reason,
                    }
                }
                Ok(Some((slot, claimed_at))) => {
                    let deadline = timing.deadline(confirmed.0, confirmed.1);
                    if let Err(reason) = self
                        .activate(live, slot, claimed_at, deadline, timing)
                        .await
                    {
                        return reason;
                    }
                    backoff.reset();
                    return self.keep_claim(live, slot, confirmed, timing).await;
                }
            }
        }
    }

    /// Tries the free slots of the range, lowest first.
    async fn claim_lowest_free(
        &self,
        live: &Live<B::Session>,
        timing: Timing,
    ) -> Result<Option<(u64, Instant)>, String> {
        let names = self
            .step(
                timing.step_limit(),
                self.backend.list(&live.session, &self.paths.slots_dir()),
            )
            .await?;
        let taken: BTreeSet<u64> = names.iter().filter_map(|name| name.parse().ok()).collect();
        for slot in self
            .config
            .slots
            .iter()
            .filter(|slot| !taken.contains(slot))
        {
            let sent = Instant::now();
            let key = self.paths.slot(slot);
            let create =
                self.backend
                    .create_if_absent(&live.session, &key, self.config.holder.as_bytes());
            if self.step(timing.step_limit(), create).await? {
                return Ok(Some((slot, sent)));
            }
        }
        Ok(None)
    }

    /// Reads the slot's mark and publishes the claim.
    async fn activate(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        claimed_at: Instant,
        deadline: Instant,
        timing: Timing,
    ) -> Result<(), String> {
        let stored = self.read_mark(live, slot, timing.step_limit()).await?;
        if Instant::now() >= deadline {
            return Err(format!(
                "claiming slot {slot} took longer than the TTL of {:?} allows",
                live.ttl
            ));
        }
        let node = self
            .config
            .layout
            .node_from_slot(slot)
            .map_err(|err| format!("slot {slot} does not fit the layout: {err}"))?;
        // The mark cache must be set before the claim is published, or a
        // first reservation could miss the floor's version.
        let mut marks = self.marks.lock().await;
        let mut inner = self.lock();
        inner.generation += 1;
        inner.all_taken = false;
        *marks = MarkCache {
            generation: inner.generation,
            mark_ms: stored.map(|(mark, _)| mark),
            version: stored.map(|(_, version)| version),
        };
        let held = Held {
            slot,
            node,
            generation: inner.generation,
            claimed_at,
            deadline,
            floor_ms: stored.map(|(mark, _)| mark),
        };
        inner.claim = Some(held);
        let claim = self.claim_view(&inner, live, held);
        drop(inner);
        tracing::info!(coordinator = %self.url, slot, generation = held.generation, floor_ms = ?held.floor_ms, "claimed a slot");
        self.state.send_replace(NodeState::Active(claim));
        Ok(())
    }

    /// Renews the claim until it is lost; returns why.
    async fn keep_claim(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        mut confirmed: (Instant, Duration),
        timing: Timing,
    ) -> String {
        let key = self.paths.slot(slot);
        let mut next = confirmed.0 + timing.renew_every();
        let mut trouble = String::from("no keep-alive answered");
        loop {
            let deadline = timing.deadline(confirmed.0, confirmed.1);
            tokio::time::sleep_until(next.min(deadline).into()).await;
            let now = Instant::now();
            if now >= deadline {
                return self.lose(format!(
                    "claim on slot {slot} could not be confirmed within its TTL of {:?} (coordinator {}: {trouble})",
                    confirmed.1, self.url
                ));
            }
            let limit = (deadline - now).min(timing.renew_every());
            match tokio::time::timeout(limit, self.backend.keep_alive(&live.session, Some(&key)))
                .await
            {
                Ok(Ok(ttl)) => {
                    confirmed = (now, ttl);
                    next = now + timing.renew_every();
                    self.renew(live, timing.deadline(now, ttl));
                }
                Ok(Err(BackendError::Lost(message))) => {
                    return self.lose(format!("claim on slot {slot} lost: {message}"));
                }
                Ok(Err(BackendError::Unavailable(message))) => {
                    trouble = message;
                    next = now + timing.retry_every();
                }
                Err(_) => {
                    trouble = format!("keep-alive unanswered after {limit:?}");
                    next = Instant::now();
                }
            }
        }
    }

    /// Moves the current claim's deadline and republishes it.
    fn renew(&self, live: &Live<B::Session>, deadline: Instant) {
        let mut inner = self.lock();
        let Some(held) = inner.claim.as_mut() else {
            return;
        };
        held.deadline = held.deadline.max(deadline);
        let held = *held;
        let claim = self.claim_view(&inner, live, held);
        drop(inner);
        self.state.send_replace(NodeState::Active(claim));
    }

    /// Fences the node and drops the claim after a loss.
    fn lose(&self, reason: String) -> String {
        tracing::warn!(coordinator = %self.url, %reason, "fenced");
        self.fence(reason.clone());
        // Ended only once fenced, so that the record's end is an instant
        // after which no reader saw the claim as active.
        let mut inner = self.lock();
        if inner.end_claim(Instant::now()).is_some() {
            inner.losses += 1;
        }
        reason
    }

    /// Gives a session up: fenced, then released if the coordinator still
    /// answers (a lease that outlived the deadline would otherwise keep the
    /// slot from everyone until it expires).
    async fn end_session(&self, live: &Arc<Live<B::Session>>, reason: String) {
        let held = {
            let mut inner = self.lock();
            inner.session = None;
            inner.all_taken = false;
            inner.claim
        };
        self.lose(reason);
        let key = held.map(|held| self.paths.slot(held.slot));
        let limit = Timing { ttl: live.ttl }.step_limit();
        let _ =
            tokio::time::timeout(limit, self.backend.release(&live.session, key.as_deref())).await;
    }

    fn fence(&self, reason: String) {
        self.state.send_if_modified(|state| match state {
            NodeState::Fenced { reason: current } if *current == reason => false,
            _ => {
                *state = NodeState::Fenced { reason };
                true
            }
        });
    }

    fn all_taken(&self) -> String {
        let slots = self.config.slots;
        format!(
            "all {} slots of fleet {} in {slots} are taken",
            slots.len(),
            self.config.fleet
        )
    }

    fn claim_view(&self, inner: &Inner<B::Session>, live: &Live<B::Session>, held: Held) -> Claim {
        let details = BTreeMap::from([
            ("coordinator".to_owned(), self.url.clone()),
            ("fleet".to_owned(), self.config.fleet.clone()),
            ("slots".to_owned(), self.config.slots.to_string()),
            ("slot".to_owned(), held.slot.to_string()),
            (B::SESSION_NAME.to_owned(), live.id.clone()),
            ("ttl_ms".to_owned(), live.ttl.as_millis().to_string()),
            ("holder".to_owned(), self.config.holder.clone()),
            ("claims".to_owned(), inner.generation.to_string()),
            ("losses".to_owned(), inner.losses.to_string()),
        ]);
        Claim {
            slot: held.slot,
            node: held.node,
            generation: held.generation,
            valid_until: Some(held.deadline),
            floor_ms: held.floor_ms,
            details,
        }
    }

    /// Runs one backend step with a time limit, turning failures into the
    /// reason the node is fenced.
    async fn step<T>(
        &self,
        limit: Duration,
        call: impl Future<Output = Result<T, BackendError>>,
    ) -> Result<T, String> {
        match tokio::time::timeout(limit, call).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) => Err(format!("coordinator {} failed: {err}", self.url)),
            Err(_) => Err(format!(
                "coordinator {} did not answer within {limit:?}",
                self.url
            )),
        }
    }

    async fn read_mark(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        limit: Duration,
    ) -> Result<Option<(i64, i64)>, String> {
        let path = self.paths.mark(slot);
        let Some(stored) = self
            .step(limit, self.backend.read(&live.session, &path))
            .await?
        else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&stored.value);
        match text.trim().parse::<i64>() {
            Ok(mark) => Ok(Some((mark, stored.version))),
            Err(_) => Err(format!(
                "the high-water mark at {path} is {text:?}, not a Unix millisecond count; fix or delete it"
            )),
        }
    }

    /// The session and claim of `generation`, if it may still be used.
    fn usable(&self, generation: u64) -> Result<UsableClaim<B::Session>, FleetError> {
        let inner = self.lock();
        let claim = inner.claim.filter(|held| held.generation == generation);
        match (&inner.session, claim) {
            (Some(live), Some(held)) if Instant::now() < held.deadline => Ok((live.clone(), held)),
            _ => Err(FleetError::Fenced {
                reason: match &*self.state.borrow() {
                    NodeState::Fenced { reason } => reason.clone(),
                    NodeState::Active(_) => {
                        format!("the claim of generation {generation} is no longer held")
                    }
                },
            }),
        }
    }

    async fn reserve(&self, generation: u64, mark_ms: i64) -> Result<(), FleetError> {
        let mut marks = self.marks.lock().await;
        let (live, held) = self.usable(generation)?;
        if marks.generation == generation && marks.mark_ms.is_some_and(|stored| stored >= mark_ms) {
            return Ok(());
        }
        let guard = self.paths.slot(held.slot);
        let path = self.paths.mark(held.slot);
        let coordinator_error = |message: String| FleetError::Coordinator {
            coordinator: self.url.clone(),
            message,
        };
        let value = mark_ms.to_string();
        let mut expected = marks.version;
        for _ in 0..MARK_ATTEMPTS {
            let left = held.deadline.saturating_duration_since(Instant::now());
            let write = self.backend.write_guarded(
                &live.session,
                &guard,
                &path,
                value.as_bytes(),
                expected,
            );
            match self.step(left, write).await.map_err(coordinator_error)? {
                GuardedWrite::Written { version } => {
                    *marks = MarkCache {
                        generation,
                        mark_ms: Some(mark_ms),
                        version: Some(version),
                    };
                    return Ok(());
                }
                GuardedWrite::GuardLost => {
                    return Err(FleetError::Fenced {
                        reason: format!("slot {} is no longer held by this node", held.slot),
                    });
                }
                GuardedWrite::Conflict => {
                    let left = held.deadline.saturating_duration_since(Instant::now());
                    let stored = self
                        .read_mark(&live, held.slot, left)
                        .await
                        .map_err(coordinator_error)?;
                    *marks = MarkCache {
                        generation,
                        mark_ms: stored.map(|(mark, _)| mark),
                        version: stored.map(|(_, version)| version),
                    };
                    if marks.mark_ms.is_some_and(|stored| stored >= mark_ms) {
                        return Ok(());
                    }
                    expected = marks.version;
                }
            }
        }
        Err(coordinator_error(format!(
            "the high-water mark at {path} kept changing under {MARK_ATTEMPTS} attempts to raise it"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_keeps_a_margin_inside_the_ttl() {
        let timing = Timing {
            ttl: Duration::from_secs(2),
        };
        let sent = Instant::now();
        assert_eq!(
            timing.deadline(sent, Duration::from_secs(2)),
            sent + Duration::from_millis(1800)
        );
        let short = Timing {
            ttl: Duration::from_millis(300),
        };
        assert_eq!(short.margin(), MIN_MARGIN);
    }

    #[test]
    fn backoff_grows_to_half_the_ttl_and_resets() {
        let mut backoff = Backoff::new(Duration::from_secs(2));
        let pauses: Vec<_> = (0..6).map(|_| backoff.next()).collect();
        for (pause, nominal) in pauses.iter().zip([200, 400, 800, 1000, 1000, 1000]) {
            let nominal = Duration::from_millis(nominal);
            assert!(
                *pause >= nominal / 2 && *pause <= nominal,
                "{pause:?} vs {nominal:?}"
            );
        }
        backoff.reset();
        assert!(backoff.next() <= Duration::from_millis(200));
    }

    #[test]
    fn paths_follow_the_design() {
        let paths = Paths {
            root: "/snowmint/ids".into(),
        };
        assert_eq!(paths.slot(7), "/snowmint/ids/slots/7");
        assert_eq!(paths.mark(7), "/snowmint/ids/hwm/7");
        assert_eq!(paths.slots_dir(), "/snowmint/ids/slots");
    }
}
