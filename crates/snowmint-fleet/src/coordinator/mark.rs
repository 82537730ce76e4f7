//! The slot's shared high-water mark: read when a slot is claimed, raised
//! by [`SlotSource::reserve`](crate::SlotSource::reserve) with a
//! compare-and-set on its version, guarded by the slot key still
//! belonging to this session, and never lowered.
//!
//! - Where the guard proves only that the slot key exists (ZooKeeper), a
//!   new holder writes the mark back at the version it read before it
//!   publishes its claim, so that the old holder's cached version is stale
//!   and its next write conflicts.
//! - A conflict counts the stored mark as cover only when the backend has
//!   found the slot key still this session's; otherwise the guard is lost.
//! - A lost guard ends the claim at once: fenced, counted as a loss, and
//!   the engine claims anew.
//!
//! (The node's own state file is [`MarkFile`](crate::MarkFile); this is
//! the copy under `/snowmint/<fleet>/hwm/<slot>` that outlives holders.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::engine::{Held, Live, Shared};
use super::{Backend, ClaimError, GuardedWrite};
use crate::{FleetError, NodeState};

/// Compare-and-set attempts on the high-water mark before giving up; each
/// conflict means another writer moved the mark, which a slot's single
/// holder should never see twice in a row.
const MARK_ATTEMPTS: usize = 4;

/// A claim that may still be used, with the session that holds it.
type UsableClaim<S> = (Arc<Live<S>>, Held);

/// The last mark stored for a claim, and the version a compare-and-set
/// must name to replace it.
#[derive(Debug, Default)]
pub(super) struct MarkCache {
    generation: u64,
    mark_ms: Option<i64>,
    version: Option<i64>,
}

impl MarkCache {
    /// What `stored` (mark, version), as read for the claim of
    /// `generation`, says.
    pub(super) fn read(generation: u64, stored: Option<(i64, i64)>) -> MarkCache {
        MarkCache {
            generation,
            mark_ms: stored.map(|(mark, _)| mark),
            version: stored.map(|(_, version)| version),
        }
    }

    /// The last mark stored (or read) for the claim of `generation`.
    pub(super) fn stored_ms(&self, generation: u64) -> Option<i64> {
        self.mark_ms.filter(|_| self.generation == generation)
    }

    /// Whether the claim of `generation` has stored `mark_ms` or more.
    fn covers(&self, generation: u64, mark_ms: i64) -> bool {
        self.generation == generation && self.mark_ms.is_some_and(|stored| stored >= mark_ms)
    }
}

impl<B: Backend> Shared<B> {
    /// The slot's stored mark and its version; `None` when there is none.
    pub(super) async fn read_mark(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        limit: Duration,
    ) -> Result<Option<(i64, i64)>, ClaimError> {
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
            Err(_) => Err(ClaimError::BadMark {
                path,
                text: text.into_owned(),
            }),
        }
    }

    /// Makes the mark that a new claim read its own, before the claim is
    /// published: writes `stored` back at the version read (or, with no
    /// mark yet, creates one of 0, which covers nothing), so that a write
    /// by the slot's previous holder, made with the version it cached,
    /// conflicts from now on. A write of the previous holder that lands
    /// first makes this one conflict: read again, and write that back.
    ///
    /// Returns the floor (the mark read last, `None` if there was none)
    /// and the (mark, version) now stored.
    pub(super) async fn write_mark_back(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        mut stored: Option<(i64, i64)>,
        limit: Duration,
    ) -> Result<(Option<i64>, Option<(i64, i64)>), ClaimError> {
        let guard = self.paths.slot(slot);
        let path = self.paths.mark(slot);
        for _ in 0..MARK_ATTEMPTS {
            let (mark, expected) = match stored {
                Some((mark, version)) => (mark, Some(version)),
                None => (0, None),
            };
            let value = mark.to_string();
            let write = self.backend.write_guarded(
                &live.session,
                &guard,
                &path,
                value.as_bytes(),
                expected,
            );
            match self.step(limit, write).await? {
                GuardedWrite::Written { version } => {
                    return Ok((stored.map(|(mark, _)| mark), Some((mark, version))));
                }
                GuardedWrite::GuardLost => return Err(self.guard_lost_error(slot)),
                GuardedWrite::Conflict => stored = self.read_mark(live, slot, limit).await?,
            }
        }
        Err(ClaimError::MarkContended {
            path,
            attempts: MARK_ATTEMPTS,
        })
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

    /// Raises the slot's mark to `mark_ms` under the claim of
    /// `generation`, unless it is there already.
    pub(super) async fn reserve(&self, generation: u64, mark_ms: i64) -> Result<(), FleetError> {
        let mut marks = self.marks.lock().await;
        let (live, held) = self.usable(generation)?;
        if marks.covers(generation, mark_ms) {
            return Ok(());
        }
        let guard = self.paths.slot(held.slot);
        let path = self.paths.mark(held.slot);
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
            match self.step(left, write).await? {
                GuardedWrite::Written { version } => {
                    *marks = MarkCache::read(generation, Some((mark_ms, version)));
                    return Ok(());
                }
                GuardedWrite::GuardLost => {
                    // The claim ends now, not at the next keep-alive: no
                    // other request may pass the claim check meanwhile.
                    // Holding `marks`, no new claim can be published in
                    // between, so this ends the claim of `generation`.
                    let error = self.guard_lost_error(held.slot);
                    if self
                        .lock()
                        .claim
                        .is_some_and(|current| current.generation == generation)
                    {
                        self.lose(&error);
                    }
                    self.guard_lost.notify_one();
                    return Err(FleetError::Fenced {
                        reason: format!("{error}; retrying"),
                    });
                }
                GuardedWrite::Conflict => {
                    let left = held.deadline.saturating_duration_since(Instant::now());
                    let stored = self.read_mark(&live, held.slot, left).await?;
                    *marks = MarkCache::read(generation, stored);
                    if marks.covers(generation, mark_ms) {
                        return Ok(());
                    }
                    expected = marks.version;
                }
            }
        }
        Err(ClaimError::MarkContended {
            path,
            attempts: MARK_ATTEMPTS,
        }
        .into())
    }
}
