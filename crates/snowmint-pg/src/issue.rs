//! `next_id()`: this backend's generator over the server's shared word,
//! and the durable high-water mark.
//!
//! - The first call of a backend reads the settings and builds its
//!   generator over the shared word ([`snowmint::GeneratorBuilder::build_on`]),
//!   resuming after the mark found on disk when the server started. Every
//!   backend's generator takes from the same word, so the server issues as
//!   one generator.
//! - Before an ID leaves, a mark at or past its timestamp is on disk
//!   (`snowmint.mark` in the data directory, the same file format as
//!   `snowmint serve`'s). The mark is reserved `snowmint.mark_step` ahead, so
//!   that only about one call per step writes it; the rest cost one atomic
//!   load.
//! - After a restart the word starts after the mark on disk. A short gap
//!   (an immediate restart: at most `snowmint.mark_wait_max`) is waited out
//!   once per backend; a longer one (a clock set back) leaves the generator
//!   to refuse under the clock policy, with an error naming both times.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use pgrx::pg_sys::panic::ErrorReport;
use snowmint::{Clock, Generator, SnowflakeId, SystemClock};
use snowmint_fleet::MarkFile;

use crate::errors;
use crate::settings::Settings;
use crate::shmem::{self, NONE};

/// The mark file's name, in the data directory (a backend's working
/// directory).
const MARK_FILE: &str = "snowmint.mark";

/// This backend's generator over the shared word, built on first use.
struct Issuer {
    generator: Generator<SystemClock, &'static AtomicU64>,
    settings: Settings,
    file: MarkFile,
}

static ISSUER: OnceLock<Issuer> = OnceLock::new();

/// The next ID of this server.
pub fn next_id() -> Result<SnowflakeId, ErrorReport> {
    let issuer = issuer()?;
    let id = issuer.generator.next_id().map_err(errors::from_core)?;
    let timestamp_ms = issuer.settings.layout.timestamp_ms(id);
    // Acquire pairs with the Release after the file write: a mark seen
    // here is on disk.
    if timestamp_ms > shmem::covered().load(Ordering::Acquire) {
        issuer.reserve(timestamp_ms)?;
    }
    Ok(id)
}

/// This server's node and mark, as `node()` shows them.
pub struct NodeView {
    /// The checked settings.
    pub settings: Settings,
    /// The mark on disk (Unix ms), if any: read from the file if no backend
    /// has yet.
    pub mark_ms: Option<i64>,
}

/// What `node()` reports.
pub fn node_view() -> Result<NodeView, ErrorReport> {
    require_preloaded()?;
    let settings = Settings::read()?;
    load(&mark_file()?)?;
    let recorded = shmem::mark().share().2;
    Ok(NodeView {
        settings,
        mark_ms: (recorded != NONE).then_some(recorded),
    })
}

/// The error for a library loaded by `CREATE EXTENSION` alone: without
/// shared memory there is no server-wide generator, and the settings were
/// not registered.
fn require_preloaded() -> Result<(), ErrorReport> {
    if shmem::available() {
        return Ok(());
    }
    Err(errors::not_ready(
        "snowmint is not loaded at server start: add 'snowmint' to shared_preload_libraries in postgresql.conf and restart the server (the one generator of a server lives in shared memory)",
    ))
}

fn issuer() -> Result<&'static Issuer, ErrorReport> {
    if let Some(issuer) = ISSUER.get() {
        return Ok(issuer);
    }
    require_preloaded()?;
    let settings = Settings::read()?;
    let node = settings.require_node()?;
    let file = mark_file()?;
    let start_mark = load(&file)?;
    if let Some(mark_ms) = start_mark
        && let Ok(wait) = file.startup_wait(mark_ms, SystemClock.now_ms(), settings.mark_wait_max)
    {
        // A short gap to the mark: an immediate restart. A longer one is
        // left to the generator, which refuses with both times.
        std::thread::sleep(wait);
    }
    let mut builder = Generator::builder(settings.layout, node).policy(settings.policy);
    if let Some(mark_ms) = start_mark {
        builder = builder.resume_after(mark_ms);
    }
    let generator = builder.build_on(shmem::word()).map_err(errors::from_core)?;
    Ok(ISSUER.get_or_init(|| Issuer {
        generator,
        settings,
        file,
    }))
}

impl Issuer {
    /// Moves the mark on disk to cover `timestamp_ms`, a step ahead.
    fn reserve(&self, timestamp_ms: i64) -> Result<(), ErrorReport> {
        let mut mark = shmem::mark().exclusive();
        if mark.2 >= timestamp_ms {
            // Another backend moved it meanwhile.
            return Ok(());
        }
        let step_ms = i64::try_from(self.settings.mark_step.as_millis()).unwrap_or(i64::MAX);
        let new_mark = timestamp_ms
            .max(SystemClock.now_ms())
            .saturating_add(step_ms)
            .min(self.settings.layout.last_instant_ms());
        self.file.write(new_mark).map_err(|error| {
            errors::not_ready(format!("cannot record the high-water mark: {error}"))
        })?;
        mark.2 = new_mark;
        // Release: the file is written before the hot path can see it.
        shmem::covered().store(new_mark, Ordering::Release);
        Ok(())
    }
}

/// Reads the mark file once per server life (the first caller does);
/// returns the mark it held then.
fn load(file: &MarkFile) -> Result<Option<i64>, ErrorReport> {
    let as_option = |mark: i64| (mark != NONE).then_some(mark);
    {
        let mark = shmem::mark().share();
        if mark.0 {
            return Ok(as_option(mark.1));
        }
    }
    let mut mark = shmem::mark().exclusive();
    if !mark.0 {
        let recorded = file
            .read()
            .map_err(|error| {
                errors::not_ready(format!("cannot read the high-water mark: {error}"))
            })?
            .unwrap_or(NONE);
        *mark = (true, recorded, recorded);
        // Release: pairs with the Acquire in `next_id`.
        shmem::covered().store(recorded, Ordering::Release);
    }
    Ok(as_option(mark.1))
}

/// The mark file, in the data directory: the working directory of every
/// PostgreSQL process.
fn mark_file() -> Result<MarkFile, ErrorReport> {
    let dir: PathBuf = std::env::current_dir()
        .map_err(|error| errors::not_ready(format!("cannot find the data directory: {error}")))?;
    Ok(MarkFile::at(dir.join(MARK_FILE)))
}
