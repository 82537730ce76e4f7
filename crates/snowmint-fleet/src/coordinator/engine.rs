//! The claim loop: open a session, check the fleet's layout, claim a free
//! slot, keep it alive, fence the node when the claim cannot be confirmed
//! or is found lost, and start over after a loss. The rules are in the
//! [module docs](super).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, watch};

use super::mark::MarkCache;
use super::paths::Paths;
use super::pick::SlotPicker;
use super::timing::{Backoff, Timing};
use super::{Backend, BackendError, ClaimError, ClockVerdict, CoordinatorConfig};
use crate::{Claim, NodeState};

mod claim;
mod state;

use state::{Free, Unreleased};
pub(super) use state::{Held, Inner, Live};

/// How long a slot given up by [`SlotSource::pass_over`] is not claimed
/// again, at least: long enough that a node does not take it back at its
/// next claim, short enough that a slot whose node was held only for a
/// moment (a process moving to another slot) returns to use.
///
/// [`SlotSource::pass_over`]: crate::SlotSource::pass_over
const PASS_OVER_FOR: Duration = Duration::from_secs(60);

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
    /// Woken when a mark write found the slot key no longer ours, so that
    /// the engine gives the claim up at once instead of at its next
    /// keep-alive.
    pub(super) guard_lost: Notify,
    /// Woken when the issuer asks for the claim to be passed over
    /// (`Inner::pass_over` says which and why).
    pub(super) pass_over_wanted: Notify,
}

impl<B: Backend> Shared<B> {
    /// Nothing claimed yet: fenced ("starting"), no session open.
    pub(super) fn new(backend: B, config: CoordinatorConfig) -> Shared<B> {
        let url = backend.url();
        let (state, _) = watch::channel(NodeState::Fenced {
            reason: format!("starting: claiming a slot from {url}"),
        });
        Shared {
            paths: Paths::new(config.fleet()),
            backend,
            config,
            url,
            state,
            inner: Mutex::new(Inner::new()),
            marks: tokio::sync::Mutex::new(MarkCache::default()),
            guard_lost: Notify::new(),
            pass_over_wanted: Notify::new(),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Inner<B::Session>> {
        // A panic elsewhere cannot leave Inner half-updated: every change is
        // a plain field assignment.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The engine task: claims, keeps, and claims again, until aborted.
    pub(super) async fn run(self: Arc<Self>) {
        let mut backoff = Backoff::new(self.config.ttl());
        let mut picker = SlotPicker::new(&self.config.holder);
        // A session that could not be released when it ended (no quorum,
        // no connection), with the key it held.
        let mut unreleased: Option<Unreleased<B::Session>> = None;
        loop {
            if let Some((live, opened_at)) = self.open_session().await {
                if let Some(old) = unreleased.take() {
                    self.release_late(&old).await;
                }
                let reason = self
                    .serve(&live, opened_at, &mut backoff, &mut picker)
                    .await;
                unreleased = self.end_session(&live, &reason).await;
            }
            tokio::time::sleep(backoff.next()).await;
        }
    }

    /// Releases a session that ended while the coordinator could not be
    /// told, now that it answers again: otherwise its key would keep the
    /// slot from everyone (this node included) until the lease or session
    /// expires, and an etcd leader elected meanwhile renews every lease for
    /// a whole TTL. The claim itself ended long before (fenced); releasing
    /// only deletes a key that is still the old session's.
    async fn release_late(&self, old: &Unreleased<B::Session>) {
        let Unreleased { live, keys } = old;
        let limit = Timing { ttl: live.ttl }.step_limit();
        let release = self.backend.release(&live.session, keys);
        // Otherwise it expires by itself in the end.
        if let Ok(Ok(())) = tokio::time::timeout(limit, release).await {
            tracing::info!(
                coordinator = %self.url,
                session = %live.id,
                "released the previous {}, which could not be released when it ended",
                B::SESSION_NAME
            );
        }
    }

    async fn open_session(&self) -> Option<(Arc<Live<B::Session>>, Instant)> {
        let dirs = [
            self.paths.slots_dir(),
            self.paths.marks_dir(),
            self.paths.claims_dir(),
        ];
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
        picker: &mut SlotPicker,
    ) -> ClaimError {
        let timing = Timing { ttl: live.ttl };
        let mut confirmed = (opened_at, live.ttl);
        if let Err(reason) = self.check_layout(live, timing).await {
            return reason;
        }
        // When the clock was last found in range: it is checked again
        // before a claim once this is older than the check's interval.
        let mut clock_checked: Option<Instant> = None;
        loop {
            let every = self.config.ops.clock_check.every;
            if clock_checked.is_none_or(|at| at.elapsed() >= every) {
                match self.check_clock(live, timing).await {
                    Err(reason) => return reason,
                    Ok(Some(verdict)) if verdict.out_of_range() => {
                        self.fence(format!("{verdict}; retrying"));
                        tokio::time::sleep(backoff.next().min(every)).await;
                        if let Err(reason) = self
                            .confirm_if_stale(live, timing, &mut confirmed, &[])
                            .await
                        {
                            return reason;
                        }
                        continue;
                    }
                    Ok(_) => clock_checked = Some(Instant::now()),
                }
            }
            match self.claim_free(live, timing, picker, &mut confirmed).await {
                Err(reason) => return reason,
                Ok(Free::None(reason)) => {
                    self.lock().all_taken = true;
                    self.fence(reason.to_string());
                    tokio::time::sleep(backoff.next().min(timing.renew_every())).await;
                    let sent = Instant::now();
                    match self
                        .step(
                            timing.step_limit(),
                            self.backend.keep_alive(&live.session, &[]),
                        )
                        .await
                    {
                        Ok(ttl) => confirmed = (sent, ttl),
                        Err(reason) => return reason,
                    }
                }
                Ok(Free::Won(slot, claimed_at, start_ms)) => {
                    // A claim that took a while starts with a fresh TTL,
                    // not with what is left of the session's first one.
                    let keys = self.block_keys(slot);
                    if let Err(reason) = self
                        .confirm_if_stale(live, timing, &mut confirmed, &keys)
                        .await
                    {
                        return reason;
                    }
                    let deadline = timing.deadline(confirmed.0, confirmed.1);
                    let generation = match self
                        .activate(live, slot, (claimed_at, start_ms), deadline, timing)
                        .await
                    {
                        Ok(generation) => generation,
                        Err(reason) => return reason,
                    };
                    backoff.reset();
                    return self
                        .keep_claim(live, slot, generation, confirmed, timing)
                        .await;
                }
            }
        }
    }

    /// Renews the claim of `generation` until it is lost; returns why.
    async fn keep_claim(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        generation: u64,
        mut confirmed: (Instant, Duration),
        timing: Timing,
    ) -> ClaimError {
        let keys = self.block_keys(slot);
        let mut next = confirmed.0 + timing.renew_every();
        // Why the latest keep-alive failed, if it did.
        let mut trouble: Option<ClaimError> = None;
        // The next clock check, polled beside the keep-alives: while a
        // keep-alive is awaited it waits, so it never delays one.
        let mut clock_check =
            Box::pin(self.clock_round(live, timing, self.first_check_after(timing)));
        loop {
            let deadline = timing.deadline(confirmed.0, confirmed.1);
            tokio::select! {
                () = tokio::time::sleep_until(next.min(deadline).into()) => {}
                checked = &mut clock_check => {
                    match checked {
                        Ok(Some(verdict)) if verdict.out_of_range() => {
                            return self.give_up_for_clock(live, slot, generation, verdict, timing).await;
                        }
                        Ok(_) => {}
                        // The keep-alives see to the coordinator's trouble.
                        Err(error) => tracing::debug!(%error, "the clock check could not read the fleet"),
                    }
                    let every = self.config.ops.clock_check.every;
                    clock_check = Box::pin(self.clock_round(live, timing, every));
                    continue;
                }
                () = self.guard_lost.notified() => {
                    // A mark write found the key gone and ended the claim
                    // already (a wake-up left over from an earlier claim
                    // finds this one still held, and is ignored).
                    if self.lock().claim.is_none_or(|held| held.generation != generation) {
                        return self.guard_lost_error(slot);
                    }
                    continue;
                }
                () = self.pass_over_wanted.notified() => {
                    let mut inner = self.lock();
                    match inner.pass_over.take() {
                        Some((wanted, reason)) if wanted == generation => {
                            let until = Instant::now() + PASS_OVER_FOR.max(confirmed.1 * 6);
                            for passed in self.block(slot) {
                                inner.passed_over.insert(passed, (reason.clone(), until));
                            }
                            drop(inner);
                            tracing::warn!(coordinator = %self.url, slot, %reason, "giving the slot up, for another: this process cannot issue as its node");
                            return ClaimError::PassedOver {
                                slot,
                                slots: self.config.slots_per_node(),
                                reason,
                            };
                        }
                        // For an earlier claim: nothing to do.
                        _ => continue,
                    }
                }
            }
            let now = Instant::now();
            if now >= deadline {
                let error = ClaimError::Unconfirmed {
                    slot,
                    slots: self.config.slots_per_node(),
                    ttl: confirmed.1,
                    last: trouble.map(Box::new),
                };
                self.lose(&error);
                return error;
            }
            let limit = (deadline - now).min(timing.renew_every());
            match tokio::time::timeout(limit, self.backend.keep_alive(&live.session, &keys)).await {
                Ok(Ok(ttl)) => {
                    confirmed = (now, ttl);
                    next = now + timing.renew_every();
                    trouble = None;
                    self.renew(live, timing.deadline(now, ttl));
                }
                Ok(Err(cause @ BackendError::Lost { .. })) => {
                    let error = ClaimError::ClaimLost {
                        slot,
                        slots: self.config.slots_per_node(),
                        cause,
                    };
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

    /// Waits `after`, then checks the clock.
    async fn clock_round(
        &self,
        live: &Live<B::Session>,
        timing: Timing,
        after: Duration,
    ) -> Result<Option<ClockVerdict>, ClaimError> {
        tokio::time::sleep(after).await;
        self.check_clock(live, timing).await
    }

    /// When the first clock check of a claim comes: soon when the check
    /// before the claim read a source but could time no rate against it
    /// (the first reading of a source), so that a clock that runs slow is
    /// found while the claim is young; else after the usual interval.
    fn first_check_after(&self, timing: Timing) -> Duration {
        let every = self.config.ops.clock_check.every;
        match &self.lock().clock {
            Some((verdict, _)) if !verdict.readings.is_empty() && verdict.rates.is_empty() => {
                timing.rate_span().min(every)
            }
            _ => every,
        }
    }

    /// Ends the claim of `generation` because the clock is out of range:
    /// fenced first, then its record ended as released (with the last mark
    /// it stored), and the session given up, so that the slot frees and
    /// the node claims again once its clock is back in range.
    async fn give_up_for_clock(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        generation: u64,
        verdict: ClockVerdict,
        timing: Timing,
    ) -> ClaimError {
        let error = ClaimError::ClockSkew(verdict);
        let held = self
            .lock()
            .claim
            .filter(|held| held.generation == generation);
        self.lose(&error);
        // Taken after the claim ended: a reservation in flight finishes
        // first, and none starts after.
        let last_ms = self.marks.lock().await.stored_ms(generation);
        if let Some(held) = held {
            self.record_release(live, held, last_ms, timing.step_limit())
                .await;
        }
        tracing::warn!(coordinator = %self.url, slot, "gave the slot up: the clock is out of range");
        error
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
    pub(super) fn lose(&self, error: &ClaimError) {
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
        // after which no reader saw the claim as active. A slot given up
        // for another was not lost.
        let mut inner = self.lock();
        if inner.end_claim(Instant::now()).is_some()
            && !matches!(error, ClaimError::PassedOver { .. })
        {
            inner.losses += 1;
        }
    }

    /// Gives a session up: fenced, then released if the coordinator still
    /// answers (a lease that outlived the deadline would otherwise keep the
    /// slot from everyone until it expires). Returns the session and its
    /// key when the release failed, to be tried again once a new session
    /// is open.
    async fn end_session(
        &self,
        live: &Arc<Live<B::Session>>,
        reason: &ClaimError,
    ) -> Option<Unreleased<B::Session>> {
        let slot = {
            let mut inner = self.lock();
            inner.session = None;
            inner.all_taken = false;
            // A claim that ended already (a lost guard, the clock out of
            // range) still names its key: the release deletes it only if
            // it is still this session's.
            inner.claim.map(|held| held.slot).or(inner.last_slot)
        };
        self.lose(reason);
        let keys = slot.map_or_else(Vec::new, |slot| self.block_keys(slot));
        let limit = Timing { ttl: live.ttl }.step_limit();
        match tokio::time::timeout(limit, self.backend.release(&live.session, &keys)).await {
            Ok(Ok(())) => None,
            Ok(Err(_)) | Err(_) => Some(Unreleased {
                live: Arc::clone(live),
                keys,
            }),
        }
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

    /// Why a claim ends when a mark write finds the key of `slot` no
    /// longer held by this session: the claim on the whole block (aligned,
    /// so the block of `slot` starts at a multiple of its size) ends.
    pub(super) fn guard_lost_error(&self, slot: u64) -> ClaimError {
        let slots = self.config.slots_per_node();
        ClaimError::ClaimLost {
            slot: slot - slot % slots,
            slots,
            cause: BackendError::lost(format!(
                "a high-water mark write found key {} no longer held by this {}",
                self.paths.slot(slot),
                B::SESSION_NAME
            )),
        }
    }

    fn all_taken(&self) -> ClaimError {
        ClaimError::AllTaken {
            fleet: self.config.fleet().to_owned(),
            slots: self.config.slots(),
            per_node: self.config.slots_per_node(),
        }
    }

    /// The slots of the block that starts at `first`: as many as the node
    /// holds at once.
    pub(super) fn block(&self, first: u64) -> std::ops::Range<u64> {
        first..first + self.config.slots_per_node()
    }

    /// The slot keys of the block that starts at `first`, lowest first.
    pub(super) fn block_keys(&self, first: u64) -> Vec<String> {
        self.block(first)
            .map(|slot| self.paths.slot(slot))
            .collect()
    }

    fn claim_view(&self, inner: &Inner<B::Session>, live: &Live<B::Session>, held: Held) -> Claim {
        let mut details = BTreeMap::from([
            ("coordinator".to_owned(), self.url.clone()),
            ("fleet".to_owned(), self.config.fleet().to_owned()),
            ("slots".to_owned(), self.config.slots().to_string()),
            ("slot".to_owned(), held.slot.to_string()),
            (B::SESSION_NAME.to_owned(), live.id.clone()),
            ("ttl_ms".to_owned(), live.ttl.as_millis().to_string()),
            ("holder".to_owned(), self.config.holder.clone()),
            (
                "slot_generation".to_owned(),
                held.history_generation
                    .map_or_else(|| "none".to_owned(), |generation| generation.to_string()),
            ),
            ("claims".to_owned(), inner.generation.to_string()),
            ("losses".to_owned(), inner.losses.to_string()),
        ]);
        if held.slots > 1 {
            // The block held; `slot` stays its first.
            details.insert(
                "slots_held".to_owned(),
                super::slots::block_text(held.slot, held.slots),
            );
        }
        Claim {
            slot: held.slot,
            slots: held.slots,
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
