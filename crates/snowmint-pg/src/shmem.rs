//! The server-wide state, in shared memory: one state word for the
//! generator, and the high-water mark's bookkeeping.
//!
//! Created by the postmaster at start (only when the library is in
//! `shared_preload_libraries`) and inherited by every backend. After a
//! backend crashes the postmaster creates it afresh, which is why the mark
//! is read from its file on first use rather than at start.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use pgrx::prelude::*;
use pgrx::{PgAtomic, PgLwLock, pg_shmem_init};

/// "No mark": below every real one.
pub const NONE: i64 = i64::MIN;

// SAFETY (all three): `new` only asks for a name that no other shared
// memory of the server uses; these are prefixed with the extension's name.

/// The generator's state word (see `snowmint::GeneratorBuilder::build_on`),
/// shared by every backend.
static WORD: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"snowmint.word") };

/// The highest timestamp (Unix ms) the mark on disk covers, for the hot
/// path's one load; `NONE` until the mark is read or when it covers nothing.
static COVERED: PgAtomic<AtomicI64> = unsafe { PgAtomic::new(c"snowmint.covered") };

/// Under this lock: (mark read from its file yet, the mark found there at
/// that first read or `NONE`, the mark on disk now or `NONE`). Writers of the
/// file hold it exclusively, so one backend writes at a time.
static MARK: PgLwLock<(bool, i64, i64)> = unsafe { PgLwLock::new(c"snowmint.mark") };

/// Whether this process has the shared memory: set in `_PG_init` when the
/// library is loaded at server start (and inherited by the backends).
static PRELOADED: AtomicBool = AtomicBool::new(false);

/// Whether the library is being loaded at server start
/// (`shared_preload_libraries`).
pub fn preloading() -> bool {
    // SAFETY: a plain read of a flag that PostgreSQL sets around loading
    // the preload libraries, in this single-threaded process.
    unsafe { pg_sys::process_shared_preload_libraries_in_progress }
}

/// Requests the shared memory; only while [`preloading`]. Without it there
/// is none, and [`available`] says so.
pub fn init() {
    pg_shmem_init!(WORD = AtomicU64::new(0));
    pg_shmem_init!(COVERED = AtomicI64::new(NONE));
    pg_shmem_init!(MARK = (false, NONE, NONE));
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

/// What the mark on disk covers (see [`COVERED`]).
pub fn covered() -> &'static AtomicI64 {
    COVERED.get()
}

/// The mark's bookkeeping, under its lock.
pub fn mark() -> &'static PgLwLock<(bool, i64, i64)> {
    &MARK
}
