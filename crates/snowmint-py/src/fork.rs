//! Telling a forked child from the process that made a generator.
//!
//! `os.fork()` copies a generator into the child with everything in it:
//! the core's state word, the node's lock, a claimed slot's lease. Two
//! processes issuing from one copy issue the same IDs (282,690 duplicates
//! out of 800,000 were seen with four children). So every generator
//! records the fork epoch it was made in, and every call compares it with
//! the process's current epoch, which `os.register_at_fork` bumps in each
//! child. A mismatch means "this generator belongs to another process":
//! a static node refuses (`ForkError`), a claimed one claims a slot of its
//! own (see `issued.rs`).
//!
//! Why an epoch and not the pid: comparing a counter costs one atomic load
//! on the hot path, where `getpid()` is a system call on every call (glibc
//! no longer caches it); BENCHMARKS.md has both figures. A child made by
//! something other than `os.fork()` that then runs Python code (a C
//! extension calling `fork()` directly) bypasses the hook; uWSGI, gunicorn
//! and multiprocessing all go through `os.fork()` or call
//! `PyOS_AfterFork_Child`, which runs the hook.

use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;

/// Bumped in each child right after a fork.
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// The fork epoch of this process.
#[inline]
pub fn epoch() -> u64 {
    // Relaxed: the hook runs in the child before any other thread exists
    // there (fork leaves one), so every later load on any thread of the
    // child is ordered after it by the thread's creation.
    EPOCH.load(Ordering::Relaxed)
}

/// The hook `os.register_at_fork(after_in_child=...)` runs.
#[pyfunction]
fn _after_fork_in_child() {
    EPOCH.fetch_add(1, Ordering::Relaxed);
}

/// Registers the hook; called once, when the module is imported.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let hook = wrap_pyfunction!(_after_fork_in_child, m)?;
    m.add_function(hook.clone())?;
    let os = PyModule::import(m.py(), "os")?;
    // Windows has no fork, and no register_at_fork.
    if let Ok(register) = os.getattr("register_at_fork") {
        let kwargs = pyo3::types::PyDict::new(m.py());
        kwargs.set_item("after_in_child", hook)?;
        register.call((), Some(&kwargs))?;
    }
    Ok(())
}

/// The message of `ForkError` for a generator that cannot follow a fork.
pub fn refusal(what: &str) -> String {
    format!(
        "this generator was made in another process ({what}) and this process is a fork of it: IDs from both would collide. Give each worker its own node (make the Generator after the fork, with its own datacenter and machine, or its own state_dir), or use Generator.claim(coordinator=...), whose forked copies each claim a slot of their own"
    )
}
