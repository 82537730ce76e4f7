//! `next_id()`: this backend's generator over the server's shared word,
//! and the durable high-water mark.
//!
//! A server either is given its node (`snowmint.datacenter`/`machine` or
//! `snowmint.slot`: a static node, here) or claims one from the fleet's
//! coordinator (`snowmint.coordinator`: `claimed.rs`, with the claim
//! worker of `worker.rs`). For a static node:
//!
//! - The first call of a backend reads the settings and builds its
//!   generator over the shared word ([`snowmint::GeneratorBuilder::build_on`]),
//!   resuming after the mark found on disk when the server started. Every
//!   backend's generator takes from the same word, so the server issues as
//!   one generator.
//! - Before an ID leaves, a mark at or past its timestamp is on disk
//!   (`static_mark.rs`). The mark is reserved `snowmint.mark_step` ahead, so
//!   that only about one call per step writes it; the rest cost one atomic
//!   load.
//! - After a restart the word starts after the mark on disk. A short gap
//!   (an immediate restart: at most `snowmint.mark_wait_max`) is waited out
//!   once per backend; a longer one (a clock set back) leaves the generator
//!   to refuse under the clock policy, with an error naming both times.
//!
//! Every wait is made of naps that a cancel or `statement_timeout` ends
//! (`wait.rs`).
#![forbid(unsafe_code)]

use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;

use pgrx::pg_sys::panic::ErrorReport;
use snowmint::{Clock, Generator, Node, SnowflakeId, SystemClock};
use snowmint_fleet::MarkFile;

use crate::settings::Settings;
use crate::{claimed, errors, shmem, static_mark, wait};

/// This backend's generator over the shared word, for a static node;
/// built on first use.
struct StaticIssuer {
    generator: Generator<SystemClock, &'static AtomicU64>,
    file: MarkFile,
    step_ms: i64,
}

/// This backend's settings, read on first use (they change only with a
/// restart of the server).
static SETTINGS: OnceLock<Settings> = OnceLock::new();
static STATIC: OnceLock<StaticIssuer> = OnceLock::new();

/// The next ID of this server.
pub fn next_id() -> Result<SnowflakeId, ErrorReport> {
    let settings = settings()?;
    if settings.fleet.is_some() {
        return claimed::next_id(settings);
    }
    let issuer = static_issuer(settings)?;
    let id = wait::generate(&issuer.generator, settings.policy, || Ok(()))?;
    let ts_ms = settings.layout.timestamp_ms(id);
    static_mark::cover(&issuer.file, ts_ms, issuer.step_ms, settings.layout)?;
    Ok(id)
}

/// This server's settings, checked once per backend.
pub fn settings() -> Result<&'static Settings, ErrorReport> {
    if let Some(settings) = SETTINGS.get() {
        return Ok(settings);
    }
    require_preloaded()?;
    let settings = Settings::read()?;
    Ok(SETTINGS.get_or_init(|| settings))
}

/// What `node()` reports.
pub struct NodeView {
    /// The checked settings.
    pub settings: &'static Settings,
    /// The node: a static one, or the claim's.
    pub node: Option<Node>,
    /// The mark on disk (Unix ms), if any: read from the file if no backend
    /// has yet.
    pub mark_ms: Option<i64>,
    /// Why `next_id()` would refuse now, if it would for want of a node.
    pub reason: Option<String>,
    /// The claim's generation, for a coordinated node holding one.
    pub generation: Option<u64>,
    /// Until when the claim may be used (Unix ms).
    pub valid_until_ms: Option<i64>,
}

/// What `node()` reports.
pub fn node_view() -> Result<NodeView, ErrorReport> {
    let settings = settings()?;
    if settings.fleet.is_some() {
        let view = claimed::view();
        let record = view.record;
        let held = view.valid_until_ms.is_some() && record.serial != 0;
        return Ok(NodeView {
            settings,
            node: held.then(|| record.node()),
            mark_ms: crate::claim_state::ClaimRecord::ms(record.mark_ms),
            reason: view.reason,
            generation: held.then_some(record.generation),
            valid_until_ms: view.valid_until_ms,
        });
    }
    static_mark::load(&static_mark::file()?)?;
    let reason = settings.require_node().err().map(|_| {
        "snowmint.datacenter and snowmint.machine (or snowmint.slot) are not set".to_owned()
    });
    Ok(NodeView {
        settings,
        node: settings.node,
        mark_ms: static_mark::recorded(),
        reason,
        generation: None,
        valid_until_ms: None,
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

fn static_issuer(settings: &Settings) -> Result<&'static StaticIssuer, ErrorReport> {
    if let Some(issuer) = STATIC.get() {
        return Ok(issuer);
    }
    let node = settings.require_node()?;
    let file = static_mark::file()?;
    let start_mark = static_mark::load(&file)?;
    if let Some(mark_ms) = start_mark
        && file
            .startup_wait(mark_ms, SystemClock.now_ms(), settings.mark_wait_max)
            .is_ok()
    {
        // A short gap to the mark: an immediate restart. A longer one is
        // left to the generator, which refuses with both times.
        wait::clock_past(mark_ms, || Ok(()))?;
    }
    let mut builder =
        Generator::builder(settings.layout, node)
            .slots(settings.slots)
            .policy(wait::plain_policy(settings.policy));
    if let Some(mark_ms) = start_mark {
        builder = builder.resume_after(mark_ms);
    }
    let generator = builder.build_on(shmem::word()).map_err(errors::from_core)?;
    let step_ms = i64::try_from(settings.mark_step.as_millis()).unwrap_or(i64::MAX);
    Ok(STATIC.get_or_init(|| StaticIssuer {
        generator,
        file,
        step_ms,
    }))
}
