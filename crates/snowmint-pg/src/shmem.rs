//! The server-wide state, in shared memory, and the few calls into
//! PostgreSQL that pgrx offers only as unsafe.
//!
//! Created by the postmaster at start (only when the library is in
//! `shared_preload_libraries`) and inherited by every backend and by the
//! claim worker. After a backend crashes the postmaster creates it afresh,
//! which is why the mark is read from its file on first use rather than at
//! start, and why the claim worker publishes everything again.
//!
//! What lives here (docs/ARCHITECTURE.md §5):
//!
//! - the generator's state word, shared by every backend;
//! - a static node's high-water mark: read from its file yet or not, the
//!   mark found then, the mark on disk, and which backend is writing it
//!   (atomics, so that no lightweight lock is ever held across the file's
//!   flush to disk);
//! - a coordinated node's claim, written by the claim worker: the claim
//!   word and the covered word that backends read before and after the
//!   generator's compare-and-swap, the highest timestamp a backend waits
//!   to see covered, whether the mark's writes fail, and the claim's
//!   record (under a lightweight lock, copied in and out, never held
//!   across a wait).
//!
//! And the unsafe calls: [`nap`] (the process latch and
//! `CHECK_FOR_INTERRUPTS`), [`preloading`] and [`server_port`] (reads of
//! PostgreSQL's globals).

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use pgrx::prelude::*;
use pgrx::{PGRXSharedMemory, PgAtomic, PgLwLock, pg_shmem_init};

use crate::claim_state::ClaimRecord;

/// "No mark": below every real one.
pub const NONE: i64 = i64::MIN;

// SAFETY (every `new` below): it only asks for a name that no other shared
// memory of the server uses; these are prefixed with the extension's name.

/// The generator's state word (see `snowmint::GeneratorBuilder::build_on`),
/// shared by every backend.
static WORD: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"snowmint.word") };

/// Whether a static node's mark file was read: `UNREAD`, `READING` (one
/// backend reads it), `READ`.
static MARK_LOADED: PgAtomic<AtomicU32> = unsafe { PgAtomic::new(c"snowmint.mark_loaded") };

/// The mark found in the file at that first read, or `NONE`.
static START_MARK: PgAtomic<AtomicI64> = unsafe { PgAtomic::new(c"snowmint.start_mark") };

/// The highest timestamp (Unix ms) the mark on disk covers, for the hot
/// path's one load; `NONE` until the mark is read or when it covers nothing.
static COVERED: PgAtomic<AtomicI64> = unsafe { PgAtomic::new(c"snowmint.covered") };

/// The pid of the backend writing the mark file, 0 while none is.
static MARK_WRITER: PgAtomic<AtomicI32> = unsafe { PgAtomic::new(c"snowmint.mark_writer") };

/// The claim in force, packed (see `claim_state::ClaimWord`); 0: none.
static CLAIM: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"snowmint.claim") };

/// What the claim's mark covers, packed (see `claim_state::CoveredWord`).
static CLAIM_COVERED: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"snowmint.claim_covered") };

/// The highest timestamp a backend waits to see covered (Unix ms).
static WANTED: PgAtomic<AtomicI64> = unsafe { PgAtomic::new(c"snowmint.wanted") };

/// Set while the claim's mark cannot be written.
static MARK_FAILING: PgAtomic<AtomicBool> = unsafe { PgAtomic::new(c"snowmint.mark_failing") };

/// The claim's record: what `node()` shows and refusals say.
static RECORD: PgLwLock<ClaimRecord> = unsafe { PgLwLock::new(c"snowmint.claim_record") };

// SAFETY: plain data (integers, a bool and a byte array), with no pointer
// that would mean something else in another process.
unsafe impl PGRXSharedMemory for ClaimRecord {}

/// Whether this process has the shared memory: set in `_PG_init` when the
/// library is loaded at server start (and inherited by the backends).
static PRELOADED: AtomicBool = AtomicBool::new(false);

/// `MARK_LOADED`'s states.
pub const UNREAD: u32 = 0;
/// One backend reads the file.
pub const READING: u32 = 1;
/// The file was read.
pub const READ: u32 = 2;

/// Whether the library is being loaded at server start
/// (`shared_preload_libraries`).
pub fn preloading() -> bool {
    // SAFETY: a plain read of a flag that PostgreSQL sets around loading
    // the preload libraries, in this single-threaded process.
    unsafe { pg_sys::process_shared_preload_libraries_in_progress }
}

/// The port the server listens on (`port`), for the holder written into
/// the slot key.
pub fn server_port() -> i32 {
    // SAFETY: a plain read of a setting's variable, set at start and never
    // changed after, in the process's main thread.
    unsafe { pg_sys::PostPortNumber }
}

/// Requests the shared memory; only while [`preloading`]. Without it there
/// is none, and [`available`] says so.
pub fn init() {
    pg_shmem_init!(WORD = AtomicU64::new(0));
    pg_shmem_init!(MARK_LOADED = AtomicU32::new(UNREAD));
    pg_shmem_init!(START_MARK = AtomicI64::new(NONE));
    pg_shmem_init!(COVERED = AtomicI64::new(NONE));
    pg_shmem_init!(MARK_WRITER = AtomicI32::new(0));
    pg_shmem_init!(CLAIM = AtomicU64::new(0));
    pg_shmem_init!(CLAIM_COVERED = AtomicU64::new(0));
    pg_shmem_init!(WANTED = AtomicI64::new(NONE));
    pg_shmem_init!(MARK_FAILING = AtomicBool::new(false));
    pg_shmem_init!(RECORD = ClaimRecord::EMPTY);
    // Relaxed: read later in this process and its children only.
    PRELOADED.store(true, Ordering::Relaxed);
}

/// Whether the shared state exists (the library was preloaded).
pub fn available() -> bool {
    PRELOADED.load(Ordering::Relaxed)
}

/// The shared state word.
pub fn word() -> &'static AtomicU64 {
    WORD.get()
}

/// Whether the static node's mark file was read (see [`MARK_LOADED`]).
pub fn mark_loaded() -> &'static AtomicU32 {
    MARK_LOADED.get()
}

/// The mark found in the file at the first read.
pub fn start_mark() -> &'static AtomicI64 {
    START_MARK.get()
}

/// What the static node's mark on disk covers (see [`COVERED`]).
pub fn covered() -> &'static AtomicI64 {
    COVERED.get()
}

/// Who writes the static node's mark file (see [`MARK_WRITER`]).
pub fn mark_writer() -> &'static AtomicI32 {
    MARK_WRITER.get()
}

/// The claim word.
pub fn claim() -> &'static AtomicU64 {
    CLAIM.get()
}

/// The claim's covered word.
pub fn claim_covered() -> &'static AtomicU64 {
    CLAIM_COVERED.get()
}

/// The highest timestamp a backend waits to see covered.
pub fn wanted() -> &'static AtomicI64 {
    WANTED.get()
}

/// Whether the claim's mark cannot be written.
pub fn mark_failing() -> &'static AtomicBool {
    MARK_FAILING.get()
}

/// A copy of the claim's record.
pub fn record() -> ClaimRecord {
    *RECORD.share()
}

/// Replaces the claim's record (the claim worker's, only).
pub fn set_record(record: &ClaimRecord) {
    *RECORD.exclusive() = *record;
}

/// Sleeps up to `timeout` on this process's latch, then lets PostgreSQL
/// handle what arrived meanwhile: a cancel request or `statement_timeout`
/// ends the statement with its usual error (an SQL error raised from here,
/// unwinding through the caller), and a dying postmaster ends the process.
///
/// Every wait of a backend is a loop of these, so that none outlasts a
/// cancel by more than one nap.
pub fn nap(timeout: Duration) {
    pgrx::check_for_interrupts!();
    let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as std::ffi::c_long;
    let events = (pg_sys::WL_LATCH_SET | pg_sys::WL_TIMEOUT | pg_sys::WL_EXIT_ON_PM_DEATH) as i32;
    // SAFETY: MyLatch is this process's own latch, set up before any SQL
    // function runs; waiting on it and resetting it is what every backend
    // does in its main thread, which this is.
    unsafe {
        let woke = pg_sys::WaitLatch(pg_sys::MyLatch, events, ms, pg_sys::PG_WAIT_EXTENSION);
        if woke & pg_sys::WL_LATCH_SET as i32 != 0 {
            pg_sys::ResetLatch(pg_sys::MyLatch);
        }
    }
    pgrx::check_for_interrupts!();
}
