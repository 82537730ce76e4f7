//! snowmint IDs in PostgreSQL: `next_id()` as a column default, and the
//! calculator (decode, encode, times, ID ranges) in SQL, all in schema
//! `snowmint`.
//!
//! # Layout
//!
//! - `sql.rs`: the SQL functions, thin: they read their arguments with the
//!   core's rules and turn its errors into SQL errors.
//! - `issue.rs`: `next_id()`: this backend's generator over the server's
//!   shared state word, and the durable high-water mark.
//! - `settings.rs`: the `snowmint.*` settings and what they mean.
//! - `shmem.rs`: the server-wide state in shared memory.
//! - `errors.rs`: the core's errors as SQL errors (SQLSTATE 22003, 22023,
//!   55000) that name the field, the value and the range.
//! - `time.rs`: `timestamptz` to and from Unix milliseconds.
//!
//! # One generator per server
//!
//! Every connection is its own process. A generator per process would hand
//! two connections the same ID in the same millisecond, so the state word
//! lives in shared memory (which is why the library must be in
//! `shared_preload_libraries`), and each process runs the core's rules over
//! it ([`snowmint::GeneratorBuilder::build_on`]).
//!
//! # Unsafe code
//!
//! Every module but `shmem.rs` forbids `unsafe` (the code that
//! `#[pg_extern]`, `#[pg_guard]` and `pg_module_magic!` generate passes
//! that lint). `shmem.rs` allows it, for what pgrx offers only as unsafe:
//! the `const unsafe` constructors of shared-memory statics
//! (`PgAtomic::new`, `PgLwLock::new`, whose one condition is a name no other
//! shared memory uses), the `unsafe` blocks that `pg_shmem_init!` expands
//! to, and reading PostgreSQL's `process_shared_preload_libraries_in_progress`
//! flag.

#![deny(unsafe_code)]
// Errors are pgrx's `ErrorReport`, the type `#[pg_extern]` raises with its
// SQLSTATE. It is large, but errors are the cold path.
#![allow(clippy::result_large_err)]

use pgrx::prelude::*;

mod errors;
mod issue;
mod settings;
// The one module with unsafe code: see "Unsafe code" above.
#[allow(unsafe_code)]
mod shmem;
mod sql;
mod time;

mod magic {
    ::pgrx::pg_module_magic!();
}

/// Called once per process that loads the library. Loaded at server start,
/// it registers the settings and the shared memory. Loaded later (by
/// `CREATE EXTENSION` alone) it registers nothing: settings read at start
/// only cannot be made after it, and `next_id()` and `node()` then say that
/// the library must be preloaded.
#[allow(non_snake_case)]
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    if shmem::preloading() {
        settings::register();
        shmem::init();
    }
}
