//! The claim loop: open a session, claim the lowest free slot, keep it
//! alive, fence the node when the claim cannot be confirmed, and start over
//! after a loss. The rules are in the [module docs](super).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use snowmint::Node;
use tokio::sync::watch;

use super::mark::MarkCache;
use super::paths::Paths;
use super::timing::{Backoff, Timing};
use super::{Backend, BackendError, ClaimError, ClaimRecord, CoordinatorConfig};
use crate::{Claim, NodeState};

/// How many ended claims [`Coordinator::claims`](super::Coordinator::claims)
/// remembers.
const HISTORY: usize = 32;

/// What the engine task and the [`Coordinator`](super::Coordinator) handle
/// share.
pub(super) struct Shared<B: Backend> {
    pub(super) backend: B,
    pub(super) config: CoordinatorConfig,
    /// The coordinator's URL, for messages.
    pub(super) url: String,
    pub(super) paths: Paths,
    pub(super) state: watch::Sender<NodeState>,
    pub(super) inner: Mutex<Inner<B::Session>>,
    /// The last mark stored for the current claim; a tokio mutex because it
    /// is held across the write, so that concurrent reservations queue and
    /// most find their mark already covered.
    pub(super) marks: tokio::sync::Mutex<MarkCache>,
}

/// A session with what the coordinator granted.
pub(super) struct Live<S> {
    pub(super) session: S,
    pub(super) ttl: Duration,
    pub(super) id: String,
}

/// What the engine holds, behind one lock.
pub(super) struct Inner<S> {
    /// The open session, kept here (not only in the task) so that
    /// `release` can end it whatever the task was doing.
    pub(super) session: Option<Arc<Live<S>>>,
    pub(super) claim: Option<Held>,
    /// Ended claims, oldest first, at most `HISTORY`.
    pub(super) history: VecDeque<ClaimRecord>,
    pub(super) generation: u64,
    pub(super) losses: u64,
    /// Set while the open session found every slot taken.
    pub(super) all_taken: bool,
    /// Set once the claim is given up for good.
    pub(super) released: bool,
}

impl<S> Inner<S> {
    /// Nothing held yet.
    pub(super) fn new() -> Inner<S> {
        Inner {
            session: None,
            claim: None,
            history: VecDeque::new(),
            generation: 0,
            losses: 0,
            all_taken: false,
            released: false,
        }
    }

    /// Ends the current claim, if any, at `now`.
    pub(super) fn end_claim(&mut self, now: Instant) -> Option<Held> {
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

/// The claim held now.
#[derive(Debug, Clone, Copy)]
pub(super) struct Held {
    pub(super) slot: u64,
    pub(super) node: Node,
    pub(super) generation: u64,
    pub(super) claimed_at: Instant,
    pub(super) deadline: Instant,
    pub(super) floor_ms: Option<i64>,
}

impl Held {
    pub(super) fn record(&self) -> ClaimRecord {
        ClaimRecord {
            slot: self.slot,
            generation: self.generation,
            claimed_at: self.claimed_at,
            valid_until: self.deadline,
            ended_at: None,
        }
    }
}

impl<B: Backend> Shared<B> {
    pub(super) fn lock(&self) -> MutexGuard<'_, Inner<B::Session>> {
        // A panic elsewhere cannot leave Inner half-updated: every change is
        // a plain field assignment.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The engine task: claims, keeps, and claims again, until aborted.
    pub(super) async fn run(self: Arc<Self>) {
        let mut backoff = Backoff::new(self.config.ttl());
        loop {
            if let Some((live, opened_at)) = self.open_session().await {
                let reason = self.serve(&live, opened_at, &mut backoff).await;
                self.end_session(&live, &reason).await;
            }
            tokio::time::sleep(backoff.next()).await;
        }
    }

    async fn open_session(&self) -> Option<(Arc<Live<B::Session>>, Instant)> {
        let dirs = [self.paths.slots_dir(), self.paths.marks_dir()];
        let sent = Instant::now();
        let ttl = self.config.ttl();
        let opened = self.step(ttl, self.backend.open_session(ttl, &dirs)).await;
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
            Err(error) => {
                self.lose(&error);
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
    ) -> ClaimError {
        let timing = Timing { ttl: live.ttl };
        let mut confirmed = (opened_at, live.ttl);
        loop {
            match self.claim_lowest_free(live, timing).await {
                Err(reason) => return reason,
                Ok(None) => {
                    self.lock().all_taken = true;
                    self.fence(self.all_taken().to_string());
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
    ) -> Result<Option<(u64, Instant)>, ClaimError> {
        let names = self
            .step(
                timing.step_limit(),
                self.backend.list(&live.session, &self.paths.slots_dir()),
            )
            .await?;
        let taken: BTreeSet<u64> = names.iter().filter_map(|name| name.parse().ok()).collect();
        for slot in self
            .config
            .slots()
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
    ) -> Result<(), ClaimError> {
        let stored = self.read_mark(live, slot, timing.step_limit()).await?;
        if Instant::now() >= deadline {
            return Err(ClaimError::SlowClaim {
                slot,
                ttl: live.ttl,
            });
        }
        let node = self
            .config
            .layout
            .node_from_slot(slot)
            .map_err(|reason| ClaimError::OutsideLayout { slot, reason })?;
        // The mark cache must be set before the claim is published, or a
        // first reservation could miss the floor's version.
        let mut marks = self.marks.lock().await;
        let mut inner = self.lock();
        inner.generation += 1;
        inner.all_taken = false;
        *marks = MarkCache::read(inner.generation, stored);
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
    ) -> ClaimError {
        let key = self.paths.slot(slot);
        let mut next = confirmed.0 + timing.renew_every();
        // Why the latest keep-alive failed, if it did.
        let mut trouble: Option<ClaimError> = None;
        loop {
            let deadline = timing.deadline(confirmed.0, confirmed.1);
            tokio::time::sleep_until(next.min(deadline).into()).await;
            let now = Instant::now();
            if now >= deadline {
                let error = ClaimError::Unconfirmed {
                    slot,
                    ttl: confirmed.1,
                    last: trouble.map(Box::new),
                };
                self.lose(&error);
                return error;
            }
            let limit = (deadline - now).min(timing.renew_every());
            match tokio::time::timeout(limit, self.backend.keep_alive(&live.session, Some(&key)))
                .await
            {
                Ok(Ok(ttl)) => {
                    confirmed = (now, ttl);
                    next = now + timing.renew_every();
                    trouble = None;
                    self.renew(live, timing.deadline(now, ttl));
                }
                Ok(Err(cause @ BackendError::Lost { .. })) => {
                    let error = ClaimError::ClaimLost { slot, cause };
                    self.lose(&error);
                    return error;
                }
                Ok(Err(cause)) => {
                    trouble = Some(ClaimError::from_backend(&self.url, B::SESSION_NAME, cause));
                    next = now + timing.retry_every();
                }
                Err(_) => {
                    trouble = Some(ClaimError::NoAnswer {
                        coordinator: self.url.clone(),
                        limit,
                    });
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

    /// Fences the node for `error` and drops the claim, if any. The reason
    /// says that the engine tries again; the log also gets the client
    /// library's details, which the reason leaves out.
    fn lose(&self, error: &ClaimError) {
        let reason = format!("{error}; retrying");
        if self.fence(reason.clone()) {
            match error.details() {
                Some(details) => {
                    tracing::warn!(coordinator = %self.url, %reason, ?details, "fenced");
                }
                None => tracing::warn!(coordinator = %self.url, %reason, "fenced"),
            }
        }
        // Ended only once fenced, so that the record's end is an instant
        // after which no reader saw the claim as active.
        let mut inner = self.lock();
        if inner.end_claim(Instant::now()).is_some() {
            inner.losses += 1;
        }
    }

    /// Gives a session up: fenced, then released if the coordinator still
    /// answers (a lease that outlived the deadline would otherwise keep the
    /// slot from everyone until it expires).
    async fn end_session(&self, live: &Arc<Live<B::Session>>, reason: &ClaimError) {
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

    /// Publishes a fenced state; `false` if the node was already fenced
    /// for that very reason.
    pub(super) fn fence(&self, reason: String) -> bool {
        self.state.send_if_modified(|state| match state {
            NodeState::Fenced { reason: current } if *current == reason => false,
            _ => {
                *state = NodeState::Fenced { reason };
                true
            }
        })
    }

    fn all_taken(&self) -> ClaimError {
        ClaimError::AllTaken {
            fleet: self.config.fleet().to_owned(),
            slots: self.config.slots(),
        }
    }

    fn claim_view(&self, inner: &Inner<B::Session>, live: &Live<B::Session>, held: Held) -> Claim {
        let details = BTreeMap::from([
            ("coordinator".to_owned(), self.url.clone()),
            ("fleet".to_owned(), self.config.fleet().to_owned()),
            ("slots".to_owned(), self.config.slots().to_string()),
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

    /// Runs one backend step with a time limit, turning a failure into the
    /// error that says which coordinator failed and how.
    pub(super) async fn step<T>(
        &self,
        limit: Duration,
        call: impl Future<Output = Result<T, BackendError>>,
    ) -> Result<T, ClaimError> {
        match tokio::time::timeout(limit, call).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(cause)) => Err(ClaimError::from_backend(&self.url, B::SESSION_NAME, cause)),
            Err(_) => Err(ClaimError::NoAnswer {
                coordinator: self.url.clone(),
                limit,
            }),
        }
    }
}
