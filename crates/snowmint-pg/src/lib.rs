//! snowmint IDs in PostgreSQL: `next_id()` as a column default, and the
//! calculator (decode, encode, times, ID ranges) in SQL, all in schema
//! `snowmint`.
//!
//! # How it fits together
//!
//! The SQL functions are thin: they read their arguments with the core's
//! rules (times go between `timestamptz` and Unix milliseconds) and turn
//! its errors into SQL errors that name the field, the value and the range
//! (SQLSTATE 22003, 22023, 55000). `snowmint.inspect(text)` reads a text's
//! ID-like tokens into a row per reading, with the core's inspector. The `snowmint.*` settings, read at
//! server start, decide what kind of node the server is.
//!
//! A server given its node (a *static* node) issues from every backend
//! over one state word in shared memory, and keeps its durable high-water
//! mark in the data directory. A server that claims its node from the
//! fleet's coordinator runs a background process, the claim worker, which
//! runs the fleet's claim engine and publishes the claim into shared
//! memory; the backends read it there before each ID. Every wait a backend
//! makes (for the clock, for the mark) is cancellable.
//!
//! # One generator per server
//!
//! Every connection is its own process. A generator per process would hand
//! two connections the same ID in the same millisecond, so the state word
//! lives in shared memory (which is why the library must be in
//! `shared_preload_libraries`), and each process runs the core's rules over
//! it ([`snowmint::GeneratorBuilder::build_on`]). How a coordinated node's
//! worker and backends share the claim: docs/ARCHITECTURE.md §5.
//!
//! # Unsafe code
//!
//! Every module but `shmem.rs` forbids `unsafe` (the code that
//! `#[pg_extern]`, `#[pg_guard]` and `pg_module_magic!` generate passes
//! that lint). `shmem.rs` allows it, for what pgrx offers only as unsafe:
//! the `const unsafe` constructors of shared-memory statics
//! (`PgAtomic::new`, `PgLwLock::new`, whose one condition is a name no other
//! shared memory uses), the `unsafe` blocks that `pg_shmem_init!` expands
//! to, reading two of PostgreSQL's globals, and waiting on the process's
//! latch. The crate root exports the claim worker's entry point by name
//! (`no_mangle`, which the lint counts as unsafe), as `#[pg_guard]` does
//! for `_PG_init`.

#![deny(unsafe_code)]
// Errors are pgrx's `ErrorReport`, the type `#[pg_extern]` raises with its
// SQLSTATE. It is large, but errors are the cold path.
#![allow(clippy::result_large_err)]

use pgrx::prelude::*;

mod claim_state;
mod claimed;
mod errors;
mod fleet_settings;
mod inspect;
mod issue;
mod settings;
// The one module with unsafe code: see "Unsafe code" above.
#[allow(unsafe_code)]
mod shmem;
mod sql;
mod static_mark;
mod time;
mod wait;
mod worker;

mod magic {
    ::pgrx::pg_module_magic!();
}

/// Called once per process that loads the library. Loaded at server start,
/// it registers the settings and the shared memory, stops the server if
/// the settings contradict each other, and registers the claim worker of a
/// server that claims its node. Loaded later (by `CREATE EXTENSION` alone)
/// it registers nothing: settings read at start only cannot be made after
/// it, and `next_id()` and `node()` then say that the library must be
/// preloaded.
#[allow(non_snake_case)]
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    if !shmem::preloading() {
        return;
    }
    settings::register();
    shmem::init();
    if let Some(conflict) = settings::startup_conflict() {
        // In the postmaster, FATAL: the server does not start, and the log
        // says why.
        errors::invalid(format!("snowmint: {conflict}")).report(PgLogLevel::FATAL);
    }
    if fleet_settings::coordinated() {
        // Settings that cannot be read start no worker; next_id() and
        // node() raise their error (22023) in every backend.
        match settings::Settings::read() {
            Ok(_) => worker::register(),
            Err(error) => {
                errors::invalid(format!(
                    "snowmint: no claim worker is started: {}",
                    error.message()
                ))
                .report(PgLogLevel::WARNING);
            }
        }
    }
}

/// The claim worker's entry point, which the postmaster finds by its name
/// (`worker::ENTRY`) in this library.
#[allow(unsafe_code)]
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn snowmint_claim_worker(_argument: pg_sys::Datum) {
    worker::main();
}
