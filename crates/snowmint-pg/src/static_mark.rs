//! A static node's high-water mark: `snowmint.mark` in the data directory
//! (a [`MarkFile`], the same format as `snowmint serve`'s state file).
//!
//! - The first backend to need it reads the file, once per life of the
//!   shared memory; the others wait for that read in naps.
//! - Before an ID leaves, the mark on disk covers its timestamp: one
//!   atomic load. When IDs come within half a step of the mark, the first
//!   backend that sees it (and finds no other writing) moves the mark a
//!   step past the clock, so that under steady load no backend waits; one
//!   whose ID is past the mark waits for that write in naps.
//! - The writer is named by its pid in an atomic, not by a lightweight
//!   lock: nothing that others wait on is held across the file's flush to
//!   disk, so every wait stays cancellable. A writer that fails (an SQL
//!   error, a panic) gives the role up as it unwinds; one that dies takes
//!   the shared memory with it (the postmaster starts it afresh).
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use pgrx::pg_sys::panic::ErrorReport;
use snowmint::{Clock, Layout, SystemClock};
use snowmint_fleet::MarkFile;

use crate::errors;
use crate::shmem::{self, NONE, READ, READING, UNREAD};

/// The mark file's name, in the data directory (a backend's working
/// directory).
const MARK_FILE: &str = "snowmint.mark";

/// How long a backend naps while another reads or writes the mark.
const NAP: Duration = Duration::from_millis(1);

/// The mark file, in the data directory: the working directory of every
/// PostgreSQL process.
pub fn file() -> Result<MarkFile, ErrorReport> {
    let dir: PathBuf = std::env::current_dir()
        .map_err(|error| errors::not_ready(format!("cannot find the data directory: {error}")))?;
    Ok(MarkFile::at(dir.join(MARK_FILE)))
}

/// Reads the mark file once per server life (the first caller does);
/// returns the mark it held then.
pub fn load(file: &MarkFile) -> Result<Option<i64>, ErrorReport> {
    let state = shmem::mark_loaded();
    loop {
        // Acquire pairs with the Release below: a backend that sees READ
        // sees the marks stored before it.
        match state.load(Ordering::Acquire) {
            READ => return Ok(as_option(shmem::start_mark().load(Ordering::Relaxed))),
            UNREAD => {
                if state
                    .compare_exchange(UNREAD, READING, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
                {
                    continue;
                }
                // Unread again if the read fails or unwinds: the next
                // caller tries it anew.
                let reading = Role::new(|| state.store(UNREAD, Ordering::Release));
                let recorded = file
                    .read()
                    .map_err(|error| {
                        errors::not_ready(format!("cannot read the high-water mark: {error}"))
                    })?
                    .unwrap_or(NONE);
                shmem::start_mark().store(recorded, Ordering::Relaxed);
                shmem::covered().store(recorded, Ordering::Release);
                reading.keep();
                state.store(READ, Ordering::Release);
                return Ok(as_option(recorded));
            }
            _ => shmem::nap(NAP),
        }
    }
}

/// The mark on disk now (Unix ms), if any.
pub fn recorded() -> Option<i64> {
    as_option(shmem::covered().load(Ordering::Acquire))
}

/// Makes sure the mark on disk covers `ts_ms` before its ID leaves, a step
/// ahead; see the module's docs.
#[inline]
pub fn cover(file: &MarkFile, ts_ms: i64, step_ms: i64, layout: Layout) -> Result<(), ErrorReport> {
    // Acquire pairs with the Release after the file write: a mark seen
    // here is on disk.
    let covered = shmem::covered().load(Ordering::Acquire);
    if ts_ms <= covered.saturating_sub(step_ms / 2) {
        return Ok(());
    }
    loop {
        if let Some(writing) = Writer::take() {
            let result = write_ahead(file, ts_ms, step_ms, layout);
            drop(writing);
            return result;
        }
        if ts_ms <= shmem::covered().load(Ordering::Acquire) {
            // Due for a refresh, but covered: another backend writes it.
            return Ok(());
        }
        shmem::nap(NAP);
    }
}

/// Moves the mark a step past the later of `ts_ms` and the clock, unless
/// another writer did meanwhile. Only the writer calls it.
fn write_ahead(
    file: &MarkFile,
    ts_ms: i64,
    step_ms: i64,
    layout: Layout,
) -> Result<(), ErrorReport> {
    let covered = shmem::covered().load(Ordering::Acquire);
    if ts_ms <= covered.saturating_sub(step_ms / 2) {
        return Ok(());
    }
    let new_mark = ts_ms
        .max(SystemClock.now_ms())
        .saturating_add(step_ms)
        .min(layout.last_instant_ms());
    file.write(new_mark).map_err(|error| {
        errors::not_ready(format!("cannot record the high-water mark: {error}"))
    })?;
    // Release: the file is written before the hot path can see it.
    shmem::covered().fetch_max(new_mark, Ordering::Release);
    Ok(())
}

/// The role of the backend that writes the mark file: at most one holds it.
struct Writer(&'static AtomicI32);

impl Writer {
    /// The role, if no other backend holds it.
    fn take() -> Option<Writer> {
        let writer = shmem::mark_writer();
        let pid = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
        writer
            .compare_exchange(0, pid, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| Writer(writer))
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Also on unwinding from an SQL error or a panic.
        self.0.store(0, Ordering::Release);
    }
}

/// Runs `undo` when dropped, unless kept: a role given back on failure.
struct Role<F: FnMut()> {
    undo: Option<F>,
}

impl<F: FnMut()> Role<F> {
    fn new(undo: F) -> Role<F> {
        Role { undo: Some(undo) }
    }

    fn keep(mut self) {
        self.undo = None;
    }
}

impl<F: FnMut()> Drop for Role<F> {
    fn drop(&mut self) {
        if let Some(undo) = self.undo.as_mut() {
            undo();
        }
    }
}

fn as_option(mark: i64) -> Option<i64> {
    (mark != NONE).then_some(mark)
}
