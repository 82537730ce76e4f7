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
//! A node of several slots keeps a mark on each: a reservation raises
//! every one of them (each guarded by its own slot key), and is covered
//! only once all are.
//!
//! (The node's own state file is [`MarkFile`](crate::MarkFile); this is
//! the copy under `/snowmint/<fleet>/hwm/<slot>` that outlives holders.)

use std::convert::Infallible;
use std::ops::ControlFlow;
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

/// How a guarded write of the mark ended, when the coordinator answered.
enum MarkWrite<T> {
    /// Written: `mark` is stored, at `version`.
    Written { mark: i64, version: i64 },
    /// Not written: after a conflict, the writer stopped with this.
    Stopped(T),
    /// Not written: the slot key is no longer this session's.
    GuardLost,
}

/// The last mark stored for a claim on each slot of its block, and the
/// version a compare-and-set must name to replace it.
#[derive(Debug, Default)]
pub(super) struct MarkCache {
    generation: u64,
    /// Per slot of the block, lowest first: (mark, version) stored or
    /// read; `None` while the slot has none.
    slots: Vec<Option<(i64, i64)>>,
}

impl MarkCache {
    /// What `stored` (per slot of the block: mark, version), as read for
    /// the claim of `generation`, says.
    pub(super) fn read(generation: u64, stored: Vec<Option<(i64, i64)>>) -> MarkCache {
        MarkCache {
            generation,
            slots: stored,
        }
    }

    /// The last mark stored (or read) for the claim of `generation`: the
    /// highest of its block, which bounds every ID of the claim.
    pub(super) fn stored_ms(&self, generation: u64) -> Option<i64> {
        if self.generation != generation {
            return None;
        }
        self.slots.iter().flatten().map(|(mark, _)| *mark).max()
    }

    /// Whether the claim of `generation` has stored `mark_ms` or more on
    /// the block's slot at `index`.
    fn covers_slot(&self, generation: u64, index: usize, mark_ms: i64) -> bool {
        self.generation == generation
            && self
                .slots
                .get(index)
                .copied()
                .flatten()
                .is_some_and(|(stored, _)| stored >= mark_ms)
    }

    /// Whether the claim of `generation` has stored `mark_ms` or more on
    /// every slot of its block.
    fn covers(&self, generation: u64, mark_ms: i64) -> bool {
        !self.slots.is_empty()
            && (0..self.slots.len()).all(|index| self.covers_slot(generation, index, mark_ms))
    }

    /// The version of the mark on the block's slot at `index`.
    fn version(&self, index: usize) -> Option<i64> {
        self.slots
            .get(index)
            .copied()
            .flatten()
            .map(|(_, version)| version)
    }

    /// Records (mark, version) as stored on the block's slot at `index`.
    fn set(&mut self, index: usize, stored: Option<(i64, i64)>) {
        if let Some(slot) = self.slots.get_mut(index) {
            *slot = stored;
        }
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

    /// Writes `mark` as the mark of `slot`, only if it is still at
    /// version `expected` (`None`: absent) and the slot key is still this
    /// session's. On a conflict (another writer moved the mark, and the
    /// backend found the slot key still this session's) it reads the mark
    /// again and asks `on_conflict`: `Continue` with the next (mark,
    /// version) to write, or `Break` to stop, the mark read being enough.
    /// Each step (write or read) waits at most `limit()`, asked anew
    /// before it.
    ///
    /// Every write of the slot's mark goes through here, so that each
    /// writer differs only in what it writes, how long it waits and what
    /// a conflict means to it.
    async fn write_mark<T>(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        limit: impl Fn() -> Duration,
        (mut mark, mut expected): (i64, Option<i64>),
        mut on_conflict: impl FnMut(Option<(i64, i64)>) -> ControlFlow<T, (i64, Option<i64>)>,
    ) -> Result<MarkWrite<T>, ClaimError> {
        let guard = self.paths.slot(slot);
        let path = self.paths.mark(slot);
        for _ in 0..MARK_ATTEMPTS {
            let value = mark.to_string();
            let write = self.backend.write_guarded(
                &live.session,
                &guard,
                &path,
                value.as_bytes(),
                expected,
            );
            match self.step(limit(), write).await? {
                GuardedWrite::Written { version } => {
                    return Ok(MarkWrite::Written { mark, version });
                }
                GuardedWrite::GuardLost => return Ok(MarkWrite::GuardLost),
                GuardedWrite::Conflict => {
                    let stored = self.read_mark(live, slot, limit()).await?;
                    match on_conflict(stored) {
                        ControlFlow::Continue(next) => (mark, expected) = next,
                        ControlFlow::Break(stopped) => return Ok(MarkWrite::Stopped(stopped)),
                    }
                }
            }
        }
        Err(ClaimError::MarkContended {
            path,
            attempts: MARK_ATTEMPTS,
        })
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
        /// What writing `stored` back writes, at which version.
        fn back(stored: Option<(i64, i64)>) -> (i64, Option<i64>) {
            match stored {
                Some((mark, version)) => (mark, Some(version)),
                None => (0, None),
            }
        }
        let written = self
            .write_mark(
                live,
                slot,
                || limit,
                back(stored),
                |read| {
                    stored = read;
                    ControlFlow::<Infallible, _>::Continue(back(read))
                },
            )
            .await?;
        match written {
            MarkWrite::Written { mark, version } => {
                Ok((stored.map(|(mark, _)| mark), Some((mark, version))))
            }
            MarkWrite::GuardLost => Err(self.guard_lost_error(slot)),
            MarkWrite::Stopped(never) => match never {},
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

    /// Raises the mark of every slot of the block to `mark_ms` under the
    /// claim of `generation`, unless it is there already.
    pub(super) async fn reserve(&self, generation: u64, mark_ms: i64) -> Result<(), FleetError> {
        let mut marks = self.marks.lock().await;
        let (live, held) = self.usable(generation)?;
        if marks.covers(generation, mark_ms) {
            return Ok(());
        }
        // No step may outlast the claim.
        let left = || held.deadline.saturating_duration_since(Instant::now());
        for (index, slot) in self.block(held.slot).enumerate() {
            if marks.covers_slot(generation, index, mark_ms) {
                continue;
            }
            let written = self
                .write_mark(
                    &live,
                    slot,
                    left,
                    (mark_ms, marks.version(index)),
                    |stored| {
                        // The slot key was found still this session's, so the
                        // mark read may count as cover.
                        marks.set(index, stored);
                        if marks.covers_slot(generation, index, mark_ms) {
                            ControlFlow::Break(())
                        } else {
                            ControlFlow::Continue((mark_ms, marks.version(index)))
                        }
                    },
                )
                .await?;
            match written {
                MarkWrite::Written { mark, version } => marks.set(index, Some((mark, version))),
                MarkWrite::Stopped(()) => {}
                MarkWrite::GuardLost => {
                    // The claim ends now, not at the next keep-alive: no
                    // other request may pass the claim check meanwhile.
                    // Holding `marks`, no new claim can be published in
                    // between, so this ends the claim of `generation`
                    // (every slot of its block: one lost is all lost).
                    let error = self.guard_lost_error(slot);
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
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use snowmint::Layout;

    use super::super::engine::{Held, Live, Shared};
    use super::super::{ClaimError, CoordinatorConfig, SlotRange};
    use super::{MARK_ATTEMPTS, MarkCache};
    use crate::testing::{MemoryBackend, Store};
    use crate::{Backend, FleetError, NodeState};

    /// The slot every test claims, and the mark path and slot key it has.
    const SLOT: u64 = 3;
    const MARK: &str = "/snowmint/marks/hwm/3";
    const KEY: &str = "/snowmint/marks/slots/3";
    /// The time limit of one step, where a test gives one.
    const LIMIT: Duration = Duration::from_secs(5);

    /// An engine's shared state over `backend`, with a session open and
    /// the slot key created in it; no task runs, so nothing but the test
    /// calls the backend.
    async fn engine<const P: bool>(
        backend: MemoryBackend<P>,
    ) -> (Shared<MemoryBackend<P>>, Live<u64>) {
        let config = CoordinatorConfig::new(
            "marks",
            SlotRange::new(0, 7).unwrap(),
            Duration::from_secs(10),
            "node-a".into(),
            Layout::TWITTER,
        )
        .unwrap();
        let shared = Shared::new(backend, config);
        let opened = shared
            .backend
            .open_session(Duration::from_secs(10), &[])
            .await
            .unwrap();
        let created = shared
            .backend
            .create_if_absent(&opened.session, &[KEY.to_owned()], b"node-a")
            .await
            .unwrap();
        assert!(created);
        let live = Live {
            session: opened.session,
            ttl: opened.ttl,
            id: opened.id,
        };
        (shared, live)
    }

    /// `shared` as after a claim of [`SLOT`] (generation 1) that read
    /// `stored` and may issue until `deadline`.
    fn claimed<const P: bool>(
        shared: &Shared<MemoryBackend<P>>,
        live: Live<u64>,
        stored: Option<(i64, i64)>,
        deadline: Instant,
    ) {
        let held = Held {
            slot: SLOT,
            slots: 1,
            node: Layout::TWITTER.node_from_slot(SLOT).unwrap(),
            generation: 1,
            claimed_at: Instant::now(),
            start_ms: 0,
            deadline,
            floor_ms: stored.map(|(mark, _)| mark),
            history_generation: None,
        };
        let mut inner = shared.lock();
        inner.session = Some(std::sync::Arc::new(live));
        inner.generation = 1;
        inner.claim = Some(held);
        *shared.marks.try_lock().unwrap() = MarkCache::read(1, vec![stored]);
    }

    /// The mark as another writer stores it, with its version.
    fn put<const P: bool>(shared: &Shared<MemoryBackend<P>>, mark: i64) -> (i64, i64) {
        (mark, shared.backend.store().put(MARK, &mark.to_string()))
    }

    fn stored<const P: bool>(shared: &Shared<MemoryBackend<P>>) -> Option<(String, i64)> {
        shared.backend.store().get(MARK)
    }

    fn writes<const P: bool>(shared: &Shared<MemoryBackend<P>>) -> usize {
        shared.backend.store().writes
    }

    /// A new holder writes the mark it read back at the version it read,
    /// and with none, creates one of 0 (which covers nothing).
    #[tokio::test]
    async fn a_write_back_writes_the_mark_read_at_its_version() {
        let (shared, live) = engine(MemoryBackend::<false>::new()).await;
        let (floor, now) = shared
            .write_mark_back(&live, SLOT, None, LIMIT)
            .await
            .unwrap();
        let version = stored(&shared).unwrap().1;
        assert_eq!((floor, now), (None, Some((0, version))));
        assert_eq!(stored(&shared), Some(("0".into(), version)));

        let read = put(&shared, 100);
        let (floor, now) = shared
            .write_mark_back(&live, SLOT, Some(read), LIMIT)
            .await
            .unwrap();
        let version = stored(&shared).unwrap().1;
        assert!(version > read.1, "written at the version read: {version}");
        assert_eq!((floor, now), (Some(100), Some((100, version))));
        assert_eq!(writes(&shared), 2);
    }

    /// The old holder's write lands between the new holder's read and its
    /// write back: the write back conflicts, reads again and writes back
    /// what the old holder stored, which becomes the floor.
    #[tokio::test]
    async fn a_write_back_that_conflicts_writes_back_the_mark_read_again() {
        let (shared, live) = engine(MemoryBackend::<false>::new()).await;
        let read = put(&shared, 100);
        shared.backend.before_write(|store| {
            store.put(MARK, "150");
        });
        let (floor, now) = shared
            .write_mark_back(&live, SLOT, Some(read), LIMIT)
            .await
            .unwrap();
        let (text, version) = stored(&shared).unwrap();
        assert_eq!(text, "150");
        assert_eq!((floor, now), (Some(150), Some((150, version))));
        assert_eq!(writes(&shared), 2);

        // With no mark read, the old holder's first mark is the floor.
        let (shared, live) = engine(MemoryBackend::<false>::new()).await;
        shared.backend.before_write(|store| {
            store.put(MARK, "70");
        });
        let (floor, now) = shared
            .write_mark_back(&live, SLOT, None, LIMIT)
            .await
            .unwrap();
        let (text, version) = stored(&shared).unwrap();
        assert_eq!(text, "70");
        assert_eq!((floor, now), (Some(70), Some((70, version))));
    }

    /// A write back that finds the slot key gone loses the claim before it
    /// is published, and writes nothing.
    #[tokio::test]
    async fn a_write_back_that_finds_the_key_gone_loses_the_claim() {
        let (shared, live) = engine(MemoryBackend::<false>::new()).await;
        let read = put(&shared, 100);
        shared.backend.before_write(|store| store.delete(KEY));
        let lost = shared
            .write_mark_back(&live, SLOT, Some(read), LIMIT)
            .await
            .unwrap_err();
        assert!(matches!(lost, ClaimError::ClaimLost { slot: SLOT, .. }));
        assert_eq!(
            lost.to_string(),
            "the claim on slot 3 is lost: a high-water mark write found key \
             /snowmint/marks/slots/3 no longer held by this session"
        );
        assert_eq!(stored(&shared), Some(("100".into(), read.1)));
        assert_eq!(writes(&shared), 1);
    }

    /// A mark that moves before every write back is given up on after
    /// [`MARK_ATTEMPTS`] writes, each conflict read again.
    #[tokio::test]
    async fn a_write_back_that_keeps_conflicting_gives_up() {
        let (shared, live) = engine(MemoryBackend::<false>::new()).await;
        let read = put(&shared, 100);
        for moved in 0..MARK_ATTEMPTS {
            shared.backend.before_write(move |store| {
                store.put(MARK, &(200 + moved).to_string());
            });
        }
        let reads = shared.backend.store().reads;
        let contended = shared
            .write_mark_back(&live, SLOT, Some(read), LIMIT)
            .await
            .unwrap_err();
        assert!(
            matches!(
                &contended,
                ClaimError::MarkContended { path, attempts: MARK_ATTEMPTS } if path == MARK
            ),
            "{contended:?}"
        );
        assert_eq!(writes(&shared), MARK_ATTEMPTS);
        assert_eq!(shared.backend.store().reads - reads, MARK_ATTEMPTS);
    }

    /// A write back that gets no answer gives up after the limit it was
    /// given.
    #[tokio::test]
    async fn a_write_back_waits_no_longer_than_its_limit() {
        let (shared, live) = engine(MemoryBackend::<false>::new()).await;
        shared.backend.store().stall(true);
        let limit = Duration::from_millis(200);
        let late = shared
            .write_mark_back(&live, SLOT, None, limit)
            .await
            .unwrap_err();
        assert!(
            matches!(late, ClaimError::NoAnswer { limit: waited, .. } if waited == limit),
            "{late:?}"
        );
    }

    /// A reservation raises the stored mark at the cached version, and
    /// one the cache covers writes nothing.
    #[tokio::test]
    async fn a_reservation_raises_the_mark_once() {
        let (shared, live) = engine(MemoryBackend::<true>::new()).await;
        let read = put(&shared, 100);
        claimed(&shared, live, Some(read), Instant::now() + LIMIT);
        shared.reserve(1, 300).await.unwrap();
        assert_eq!(stored(&shared).unwrap().0, "300");
        shared.reserve(1, 250).await.unwrap();
        assert_eq!(stored(&shared).unwrap().0, "300");
        assert_eq!(writes(&shared), 1);
    }

    /// Someone else raised the mark past the reservation since it was
    /// cached: the conflict reads it, counts it as cover (the slot key is
    /// still this session's) and writes nothing more; the next
    /// reservation it covers writes nothing at all.
    #[tokio::test]
    async fn a_reservation_that_conflicts_with_a_higher_mark_counts_it_as_cover() {
        let (shared, live) = engine(MemoryBackend::<true>::new()).await;
        let read = put(&shared, 100);
        claimed(&shared, live, Some(read), Instant::now() + LIMIT);
        shared.backend.before_write(|store| {
            store.put(MARK, "500");
        });
        shared.reserve(1, 300).await.unwrap();
        assert_eq!(
            stored(&shared).unwrap().0,
            "500",
            "a newer mark was lowered"
        );
        assert_eq!(writes(&shared), 1);
        shared.reserve(1, 400).await.unwrap();
        assert_eq!(writes(&shared), 1);
        assert_eq!(shared.marks.lock().await.stored_ms(1), Some(500));
    }

    /// Someone else moved the mark, but not past the reservation: the
    /// conflict reads it and writes again at the version read.
    #[tokio::test]
    async fn a_reservation_that_conflicts_with_a_lower_mark_writes_again() {
        let (shared, live) = engine(MemoryBackend::<true>::new()).await;
        let read = put(&shared, 100);
        claimed(&shared, live, Some(read), Instant::now() + LIMIT);
        shared.backend.before_write(|store| {
            store.put(MARK, "200");
        });
        shared.reserve(1, 300).await.unwrap();
        let (text, version) = stored(&shared).unwrap();
        assert_eq!(text, "300");
        assert_eq!(writes(&shared), 2);
        assert_eq!(shared.marks.lock().await.version(0), Some(version));
        // The version cached is the one written: no conflict next time.
        shared.reserve(1, 350).await.unwrap();
        assert_eq!(stored(&shared).unwrap().0, "350");
        assert_eq!(writes(&shared), 3);
    }

    /// A reservation that finds the slot key gone, or made anew by someone
    /// else, ends the claim before it returns: fenced for that reason, the
    /// loss counted, the engine woken; nothing is written.
    #[tokio::test]
    async fn a_reservation_that_finds_the_key_lost_ends_the_claim() {
        let gone = |store: &mut Store| store.delete(KEY);
        let taken = |store: &mut Store| {
            store.delete(KEY);
            store.put(KEY, "node-b");
        };
        for change in [gone as fn(&mut Store), taken] {
            let (shared, live) = engine(MemoryBackend::<true>::new()).await;
            let read = put(&shared, 100);
            claimed(&shared, live, Some(read), Instant::now() + LIMIT);
            shared.backend.before_write(change);
            let refused = shared.reserve(1, 300).await;
            let expected = "the claim on slot 3 is lost: a high-water mark write found key \
                            /snowmint/marks/slots/3 no longer held by this session; retrying";
            match refused {
                Err(FleetError::Fenced { reason }) => assert_eq!(reason, expected),
                other => panic!("a reservation passed a lost guard: {other:?}"),
            }
            assert_eq!(
                *shared.state.borrow(),
                NodeState::Fenced {
                    reason: expected.into()
                }
            );
            {
                let inner = shared.lock();
                assert!(inner.claim.is_none(), "the claim was not ended");
                assert_eq!(inner.losses, 1);
            }
            tokio::time::timeout(Duration::from_secs(1), shared.guard_lost.notified())
                .await
                .expect("the engine was not told");
            assert_eq!(stored(&shared), Some(("100".into(), read.1)));
            assert_eq!(writes(&shared), 1);
        }
    }

    /// A mark that moves before every write, never past the reservation,
    /// is given up on after [`MARK_ATTEMPTS`] writes.
    #[tokio::test]
    async fn a_reservation_that_keeps_conflicting_gives_up() {
        let (shared, live) = engine(MemoryBackend::<true>::new()).await;
        let read = put(&shared, 100);
        claimed(&shared, live, Some(read), Instant::now() + LIMIT);
        for moved in 0..MARK_ATTEMPTS {
            shared.backend.before_write(move |store| {
                store.put(MARK, &(200 + moved).to_string());
            });
        }
        let contended = shared.reserve(1, 300).await.unwrap_err();
        assert_eq!(
            contended.to_string(),
            "the high-water mark at /snowmint/marks/hwm/3 kept changing under 4 attempts to raise it"
        );
        assert!(matches!(
            contended,
            FleetError::Claim(ClaimError::MarkContended { .. })
        ));
        assert_eq!(writes(&shared), MARK_ATTEMPTS);
        // The claim stands: a contended mark is no loss.
        assert!(shared.lock().claim.is_some());
    }

    /// A reservation waits for its write no longer than the claim lasts.
    #[tokio::test]
    async fn a_reservation_waits_no_longer_than_the_claim_lasts() {
        let (shared, live) = engine(MemoryBackend::<true>::new()).await;
        let read = put(&shared, 100);
        let lasts = Duration::from_millis(300);
        claimed(&shared, live, Some(read), Instant::now() + lasts);
        shared.backend.store().stall(true);
        let started = Instant::now();
        let late = shared.reserve(1, 300).await.unwrap_err();
        match late {
            FleetError::Claim(ClaimError::NoAnswer { limit, .. }) => {
                assert!(limit <= lasts, "{limit:?}");
            }
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
