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
//! Our modules forbid `unsafe`. pgrx needs it in three places, all in this
//! file and `shmem.rs`: the code its macros generate (`pg_module_magic!`,
//! `pg_shmem_init!`, `#[pg_guard]`, `#[pg_extern]`), the `const unsafe`
//! constructors of shared-memory statics (`PgAtomic::new`, `PgLwLock::new`,
//! whose only condition is a unique name), and reading PostgreSQL's
//! `process_shared_preload_libraries_in_progress` flag.

use pgrx::prelude::*;

mod errors;
mod issue;
mod settings;
#[allow(unsafe_code)]
mod shmem;
#[allow(unsafe_code)]
mod sql;
mod time;

#[allow(unsafe_code)]
mod magic {
    ::pgrx::pg_module_magic!();
}

/// Called once per process that loads the library: registers the settings
/// and, when loaded at server start, the shared memory.
#[allow(unsafe_code, non_snake_case)]
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    settings::register();
    shmem::init();
}
