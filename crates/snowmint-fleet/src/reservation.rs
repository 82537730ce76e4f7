//! Reserving the high-water mark ahead of the clock, in steps.
//!
//! An ID may leave the node only once its timestamp is covered by a mark
//! that is on disk (and, with a coordinator, stored under the slot). Writing
//! per ID would be far too slow, so the mark is reserved a step ahead (about
//! a second): IDs up to the reserved mark go out at once, after one atomic
//! load. When IDs get close to the mark, a background task moves it on, so
//! that under steady load no request waits for a write; a request that finds
//! its ID past the mark waits for the write itself.
//!
//! [`NodeMark`] is the state file of one node, shared by every claim made on
//! that node, and the node's [`NodeLock`]; [`Reservation`] is what one
//! claim (one generation) has reserved.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, PoisonError};

use tokio::sync::Mutex;

use crate::{FleetError, MarkFile, NodeLock, SlotSource};

/// "Nothing recorded": below every real mark.
const NONE: i64 = i64::MIN;

/// Whether the reserved mark in `covered` covers an ID with timestamp
/// `ts_ms` ([`Reservation::covers`]).
#[inline]
fn covers(covered: &AtomicI64, ts_ms: i64) -> bool {
    // Acquire pairs with the Release store in `write`: seeing the new mark
    // means seeing that its write finished.
    ts_ms <= covered.load(Ordering::Acquire)
}

/// Whether IDs at `ts_ms` have come within half a step of the mark in
/// `covered` ([`Reservation::due_for_refresh`]).
#[inline]
fn due_for_refresh(covered: &AtomicI64, step_ms: i64, ts_ms: i64) -> bool {
    // Relaxed: a hint to start a write early, ordered by nothing.
    ts_ms > covered.load(Ordering::Relaxed).saturating_sub(step_ms / 2)
}

/// The durable mark of one node: its state file, what it holds, and the
/// lock that keeps other processes from issuing as the node meanwhile.
///
/// A node that holds several slots ([`open_block`](NodeMark::open_block))
/// has a state file and a lock per slot: it locks them all, resumes after
/// the highest mark among them, and writes every mark, so that a later
/// holder of any one slot of the block resumes after it.
///
/// - [`open`](NodeMark::open) locks the node, then reads its file.
/// - Every write of the mark first checks that the lock is still held
///   (and that its file was not deleted; see [`NodeLock::confirm`]).
/// - [`unlock`](NodeMark::unlock) gives the node up; no reservation on it
///   can write again.
/// - The last write that failed is remembered until one succeeds
///   ([`write_failure`](NodeMark::write_failure)), so that readiness can
///   say that IDs would be refused.
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, Node};
/// use snowmint_fleet::{FleetError, MarkFile, NodeMark};
///
/// let dir = std::env::temp_dir().join(format!("snowmint-doc-nodemark-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let file = MarkFile::for_node(&dir, Layout::TWITTER, Node::default());
/// file.write(1_700_000_000_000)?;
/// let mark = NodeMark::open(file.clone())?;
/// assert_eq!(mark.recorded_ms(), Some(1_700_000_000_000));
/// assert!(matches!(NodeMark::open(file), Err(FleetError::NodeLocked { .. })));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct NodeMark {
    /// The state file of the node's (first) slot.
    file: MarkFile,
    /// The state files of the block's other slots, lowest first (none for
    /// a node of one slot).
    others: Vec<MarkFile>,
    /// The node's locks, one per slot; `None` once given up. Taken (std
    /// mutex, never held across an await) under `recorded`, so that no
    /// write runs unlocked.
    lock: std::sync::Mutex<Option<Vec<NodeLock>>>,
    /// Serializes writers; holds what the file says. Reservations also take
    /// it to retire, so that a retired claim can never write again.
    recorded: Mutex<Option<i64>>,
    /// A copy of the recorded mark (or `NONE`) for lock-free reading by
    /// `/v1/node` and metrics.
    recorded_view: AtomicI64,
    /// Why the last write failed, until a write succeeds: a node whose mark
    /// cannot move is not ready.
    failure: std::sync::Mutex<Option<String>>,
}

impl NodeMark {
    /// Locks the node (see [`NodeLock`]) and reads its state file.
    ///
    /// # Errors
    ///
    /// [`FleetError::NodeLocked`] when another process (or another handle
    /// in this one) holds the node; the errors of [`NodeLock::acquire`] and
    /// [`MarkFile::read`].
    pub fn open(file: MarkFile) -> Result<Arc<NodeMark>, FleetError> {
        NodeMark::open_block(vec![file])
    }

    /// Locks every slot of a node that holds several (`files`: the state
    /// file of each, lowest slot first) and reads their marks: the node's
    /// mark is the highest. All are locked or none: a slot held by another
    /// process refuses the whole block, naming that slot's node and holder.
    ///
    /// # Errors
    ///
    /// As [`open`](NodeMark::open), for any of the files; no files at all
    /// is an [`FleetError::Io`].
    pub fn open_block(files: Vec<MarkFile>) -> Result<Arc<NodeMark>, FleetError> {
        let mut files = files.into_iter();
        let Some(file) = files.next() else {
            return Err(FleetError::Io {
                context: "a node's block of slots".to_owned(),
                error: std::io::Error::other("no state file given"),
            });
        };
        let others: Vec<MarkFile> = files.collect();
        // Locked first: the marks read must be ones no other holder moves.
        // A lock not taken drops those taken before it.
        let locks = std::iter::once(&file)
            .chain(&others)
            .map(NodeLock::acquire)
            .collect::<Result<Vec<_>, _>>()?;
        let mut recorded = file.read()?;
        for other in &others {
            recorded = recorded.max(other.read()?);
        }
        Ok(Arc::new(NodeMark {
            file,
            others,
            lock: std::sync::Mutex::new(Some(locks)),
            recorded: Mutex::new(recorded),
            recorded_view: AtomicI64::new(recorded.unwrap_or(NONE)),
            failure: std::sync::Mutex::new(None),
        }))
    }

    /// The state file (of the node's first slot).
    pub fn file(&self) -> &MarkFile {
        &self.file
    }

    /// The state files of every slot the node holds, lowest first.
    pub fn files(&self) -> impl Iterator<Item = &MarkFile> {
        std::iter::once(&self.file).chain(&self.others)
    }

    /// The mark on disk (Unix ms), if any.
    pub fn recorded_ms(&self) -> Option<i64> {
        // Relaxed: a snapshot for reports; nothing is ordered by it.
        let mark = self.recorded_view.load(Ordering::Relaxed);
        (mark != NONE).then_some(mark)
    }

    /// Whether the node's lock is still held by this mark.
    pub fn is_locked(&self) -> bool {
        self.lock_guard().is_some()
    }

    /// Gives the node's lock up, after any write in progress; from then on
    /// no reservation on this mark writes. Retire the reservations first,
    /// so that none of them lets an ID out above what is on disk.
    pub async fn unlock(&self) {
        let _writers = self.recorded.lock().await;
        self.lock_guard().take();
    }

    /// Why the last write of the mark (file or source) failed, if no write
    /// has succeeded since.
    pub fn write_failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn lock_guard(&self) -> std::sync::MutexGuard<'_, Option<Vec<NodeLock>>> {
        self.lock.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn remember(&self, outcome: &Result<(), FleetError>) {
        let failure = match outcome {
            Ok(()) => None,
            // A claim that ended is no trouble with the mark.
            Err(FleetError::Fenced { .. }) => return,
            Err(error) => Some(error.to_string()),
        };
        *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = failure;
    }

    /// Checks, before a write, that this mark still holds the node's lock.
    fn confirm_lock(&self) -> Result<(), FleetError> {
        match self.lock_guard().as_mut() {
            Some(locks) => locks.iter_mut().try_for_each(NodeLock::confirm),
            None => Err(FleetError::Fenced {
                reason: format!(
                    "the node's lock {} was given up",
                    self.file.lock_path().display()
                ),
            }),
        }
    }
}

/// What one claim (one generation) has reserved: IDs with a timestamp at or
/// below [`covered_ms`](Reservation::covered_ms) may be handed out.
///
/// - [`covers`](Reservation::covers) is the hot-path check: one atomic load.
/// - [`extend`](Reservation::extend) writes a new mark (the later of the
///   ID's timestamp and the clock, plus the step) to the state file, then
///   has the [`SlotSource`] record it, then publishes it. One task at a time.
/// - [`refresh_in_background`](Reservation::refresh_in_background) does the
///   same ahead of need, when IDs are within half a step of the mark.
/// - [`retire`](Reservation::retire) stops a replaced claim from extending;
///   what it reserved stays on disk for the next claim to resume after.
///
/// A new reservation covers nothing, so that its first ID always goes
/// through `extend` and the source records the mark under the new claim.
pub struct Reservation {
    mark: Arc<NodeMark>,
    source: Arc<dyn SlotSource>,
    generation: u64,
    step_ms: i64,
    /// The reserved mark published for the hot path (or `NONE`); shared
    /// with the issuer's per-thread snapshots, which read it without
    /// keeping the reservation (and its source and lock) alive.
    covered: Arc<AtomicI64>,
    /// The runtime the reservation was made on, which runs its
    /// background refreshes (they may be started from threads outside
    /// any runtime: embedded issuers' callers).
    runtime: Option<tokio::runtime::Handle>,
    /// Set while a background refresh runs, so that only one is started.
    refreshing: AtomicBool,
    /// Set (under the node's lock) when the claim is replaced.
    retired: AtomicBool,
}

impl std::fmt::Debug for Reservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reservation")
            .field("file", &self.mark.file.path())
            .field("source", &self.source.kind())
            .field("generation", &self.generation)
            .field("step_ms", &self.step_ms)
            .field("covered_ms", &self.covered_ms())
            .finish_non_exhaustive()
    }
}

impl Reservation {
    /// A reservation for the claim of `generation` from `source` on the node
    /// whose mark is `mark`, moving `step_ms` ahead at each write.
    pub fn new(
        mark: Arc<NodeMark>,
        source: Arc<dyn SlotSource>,
        generation: u64,
        step_ms: i64,
    ) -> Reservation {
        Reservation {
            mark,
            source,
            generation,
            step_ms: step_ms.max(1),
            covered: Arc::new(AtomicI64::new(NONE)),
            runtime: tokio::runtime::Handle::try_current().ok(),
            refreshing: AtomicBool::new(false),
            retired: AtomicBool::new(false),
        }
    }

    /// The node's mark.
    pub fn node_mark(&self) -> &Arc<NodeMark> {
        &self.mark
    }

    /// The claim generation this reservation belongs to.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The reserved mark, if anything was reserved under this claim.
    pub fn covered_ms(&self) -> Option<i64> {
        let covered = self.covered.load(Ordering::Relaxed);
        (covered != NONE).then_some(covered)
    }

    /// Whether an ID with timestamp `ts_ms` may be handed out now.
    #[inline]
    pub fn covers(&self, ts_ms: i64) -> bool {
        covers(&self.covered, ts_ms)
    }

    /// Whether IDs have come within half a step of the reserved mark, so
    /// that it is time to move it on.
    #[inline]
    pub fn due_for_refresh(&self, ts_ms: i64) -> bool {
        due_for_refresh(&self.covered, self.step_ms, ts_ms)
    }

    /// The cell [`covers`](Reservation::covers) reads, for a reader that
    /// must not keep the reservation alive.
    pub(crate) fn covered_cell(&self) -> &Arc<AtomicI64> {
        &self.covered
    }

    /// How far ahead each write reserves.
    pub(crate) fn step_ms(&self) -> i64 {
        self.step_ms
    }

    /// Reserves up to `max(ts_ms, now_ms) + step` unless `ts_ms` is covered
    /// already; returns when the mark is on disk and recorded by the source.
    pub async fn extend(&self, ts_ms: i64, now_ms: i64) -> Result<(), FleetError> {
        let target = ts_ms.max(now_ms).saturating_add(self.step_ms);
        self.raise(target, Some(ts_ms)).await
    }

    /// Moves the reserved mark on once a write failed, whether or not an ID
    /// needs it: to a step past the later of the clock and the reserved
    /// mark, so that the write is tried for real. Nothing is written when
    /// no failure is remembered.
    ///
    /// A node whose mark cannot be written is sent no traffic (it is not
    /// ready), so without this no request would find out that the disk has
    /// room again.
    pub async fn retry_failed_write(&self, now_ms: i64) -> Result<(), FleetError> {
        if self.mark.write_failure().is_none() {
            return Ok(());
        }
        let from = self.covered.load(Ordering::Relaxed).max(now_ms);
        self.raise(from.saturating_add(self.step_ms), None).await
    }

    /// Moves the reserved mark to `target` (if that is further), writing the
    /// file first and then telling the source; `needed` is the timestamp
    /// the caller waits for: if another task covered it meanwhile, done.
    async fn raise(&self, target: i64, needed: Option<i64>) -> Result<(), FleetError> {
        let mut recorded = self.mark.recorded.lock().await;
        if self.retired.load(Ordering::Acquire) {
            return Err(FleetError::Fenced {
                reason: format!("the claim of generation {} was replaced", self.generation),
            });
        }
        if needed.is_some_and(|ts| self.covers(ts)) || self.covers(target) {
            return Ok(());
        }
        let outcome = self.write(&mut recorded, target).await;
        self.mark.remember(&outcome);
        outcome
    }

    /// The write of `raise`, under the node's writer lock.
    async fn write(&self, recorded: &mut Option<i64>, target: i64) -> Result<(), FleetError> {
        self.mark.confirm_lock()?;
        if recorded.is_none_or(|r| target > r) {
            // Every slot's file: a later holder of any of them resumes
            // after this mark.
            let files: Vec<MarkFile> = self.mark.files().cloned().collect();
            tokio::task::spawn_blocking(move || {
                files.iter().try_for_each(|file| file.write(target))
            })
            .await
            .map_err(|join| FleetError::Io {
                context: format!(
                    "cannot write the state file {}",
                    self.mark.file.path().display()
                ),
                error: std::io::Error::other(join.to_string()),
            })??;
            *recorded = Some(target);
            self.mark.recorded_view.store(target, Ordering::Relaxed);
        }
        // Never publish less than what is on disk: a mark recorded by an
        // earlier claim on this node is known durable too.
        let target = recorded.map_or(target, |r| r.max(target));
        self.source.reserve(self.generation, target).await?;
        // Release: see `covers`. Under the lock nothing else writes it, but
        // fetch_max keeps "only grows" obvious.
        self.covered.fetch_max(target, Ordering::Release);
        Ok(())
    }

    /// Starts moving the mark to `now_ms + step` on a background task,
    /// unless one is running already. Errors are left for the next request
    /// that needs the mark to meet.
    pub fn refresh_in_background(self: &Arc<Self>, now_ms: i64) {
        if self.refreshing.swap(true, Ordering::AcqRel) {
            return;
        }
        let reservation = Arc::clone(self);
        let refresh = async move {
            let target = now_ms.saturating_add(reservation.step_ms);
            if let Err(error) = reservation.raise(target, None).await {
                tracing::warn!(%error, "could not move the high-water mark ahead");
            }
            reservation.refreshing.store(false, Ordering::Release);
        };
        match &self.runtime {
            Some(runtime) => drop(runtime.spawn(refresh)),
            None => drop(tokio::spawn(refresh)),
        }
    }

    /// Stops this reservation from extending (its claim was replaced) and
    /// returns the node's recorded mark: no ID this reservation let out is
    /// above it, so a new claim on the node resumes after it.
    pub async fn retire(&self) -> Option<i64> {
        let recorded = self.mark.recorded.lock().await;
        self.retired.store(true, Ordering::Release);
        *recorded
    }
}

#[cfg(test)]
mod tests {
    use snowmint::{Layout, Node};

    use super::*;
    use crate::StaticSource;
    use crate::testing::TempDir;

    fn reservation(dir: &TempDir, step_ms: i64) -> Arc<Reservation> {
        let node = Node::from_slot(34);
        let source = Arc::new(StaticSource::new(Layout::TWITTER, node).unwrap());
        let mark = NodeMark::open(MarkFile::for_node(dir.path(), Layout::TWITTER, node)).unwrap();
        Arc::new(Reservation::new(mark, source, 1, step_ms))
    }

    /// A new reservation covers nothing; extending writes the step ahead to
    /// disk before covering, and covered IDs need no further write.
    #[tokio::test]
    async fn extend_writes_the_file_before_covering() {
        let dir = TempDir::new("extend");
        let r = reservation(&dir, 1000);
        assert!(!r.covers(5_000));
        r.extend(5_000, 4_000).await.unwrap();
        assert!(r.covers(6_000) && !r.covers(6_001));
        let file = r.node_mark().file().clone();
        assert_eq!(file.read().unwrap(), Some(6_000));
        // Covered: no write, the file keeps its mark.
        std::fs::remove_file(file.path()).unwrap();
        r.extend(5_500, 5_500).await.unwrap();
        assert_eq!(file.read().unwrap(), None);
    }

    /// The clock ahead of the ID decides the mark: it stays ahead of time.
    #[tokio::test]
    async fn the_mark_runs_a_step_ahead_of_the_later_of_id_and_clock() {
        let dir = TempDir::new("later");
        let r = reservation(&dir, 1000);
        r.extend(5_000, 9_000).await.unwrap();
        assert_eq!(r.covered_ms(), Some(10_000));
        assert!(!r.due_for_refresh(9_500) && r.due_for_refresh(9_501));
    }

    /// A retired reservation refuses to extend, and reports the mark on disk.
    #[tokio::test]
    async fn retired_reservations_cannot_write() {
        let dir = TempDir::new("retire");
        let r = reservation(&dir, 1000);
        r.extend(5_000, 5_000).await.unwrap();
        assert_eq!(r.retire().await, Some(6_000));
        let err = r.extend(7_000, 7_000).await.unwrap_err();
        assert!(err.to_string().contains("replaced"), "{err}");
        assert_eq!(r.node_mark().file().read().unwrap(), Some(6_000));
    }

    /// A background refresh moves the mark to a step past the clock.
    #[tokio::test]
    async fn background_refresh_moves_the_mark() {
        let dir = TempDir::new("refresh");
        let r = reservation(&dir, 1000);
        r.extend(5_000, 5_000).await.unwrap();
        r.refresh_in_background(5_600);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while r.refreshing.load(Ordering::Acquire) || r.covered_ms() == Some(6_000) {
            assert!(
                std::time::Instant::now() < deadline,
                "the background refresh did not finish within 30 s"
            );
            tokio::task::yield_now().await;
        }
        assert_eq!(r.covered_ms(), Some(6_600));
        assert_eq!(r.node_mark().file().read().unwrap(), Some(6_600));
    }

    /// A failed write is remembered until one succeeds; retrying writes
    /// only while a failure is remembered.
    #[tokio::test]
    async fn a_failed_write_is_remembered_until_a_write_succeeds() {
        let dir = TempDir::new("failure");
        let r = reservation(&dir, 1000);
        r.extend(5_000, 5_000).await.unwrap();
        let file = r.node_mark().file().clone();
        // Nothing failed: a retry writes nothing.
        std::fs::remove_file(file.path()).unwrap();
        r.retry_failed_write(9_000).await.unwrap();
        assert_eq!(file.read().unwrap(), None);
        // The mark's path is a directory: every write fails.
        std::fs::create_dir(file.path()).unwrap();
        std::fs::write(file.path().join("in-the-way"), "").unwrap();
        let error = r.extend(7_000, 7_000).await.unwrap_err().to_string();
        assert_eq!(r.node_mark().write_failure(), Some(error));
        assert!(r.retry_failed_write(9_000).await.is_err());
        assert!(r.node_mark().write_failure().is_some());
        // Room again: the retry writes a step past the clock, and the
        // failure is forgotten.
        std::fs::remove_dir_all(file.path()).unwrap();
        r.retry_failed_write(9_000).await.unwrap();
        assert_eq!(r.node_mark().write_failure(), None);
        assert_eq!(file.read().unwrap(), Some(10_000));
        assert!(r.covers(10_000));
    }

    /// An unlocked node writes no more, and its lock is free for the next
    /// holder.
    #[tokio::test]
    async fn an_unlocked_node_writes_no_more() {
        let dir = TempDir::new("unlock");
        let r = reservation(&dir, 1000);
        r.extend(5_000, 5_000).await.unwrap();
        let file = r.node_mark().file().clone();
        assert!(matches!(
            NodeMark::open(file.clone()),
            Err(FleetError::NodeLocked { .. })
        ));
        r.node_mark().unlock().await;
        assert!(!r.node_mark().is_locked());
        let err = r.extend(7_000, 7_000).await.unwrap_err();
        assert!(matches!(err, FleetError::Fenced { .. }), "{err}");
        assert_eq!(r.node_mark().write_failure(), None);
        let next = NodeMark::open(file).expect("the lock is free");
        assert_eq!(next.recorded_ms(), Some(6_000));
    }
}
