//! `next_id()` on a server that claims its node from the fleet's
//! coordinator: the backend's side of what the claim worker publishes
//! (`worker.rs`, `claim_state.rs`; docs/ARCHITECTURE.md §5).
//!
//! 1. The fencing check: one load of the claim word and one read of the
//!    monotonic clock. No claim, or past its deadline: refused (SQLSTATE
//!    55000), saying why.
//! 2. The backend's generator for that claim (built once per claim, over
//!    the server's shared word, which the worker has already raised past
//!    the claim's resume point; a short gap to that point is waited out
//!    here, once), then its compare-and-swap.
//! 3. The mark check: one load of the covered word. An ID leaves only when
//!    the mark of the claim it was made under covers it; otherwise the
//!    backend asks the worker for it and waits in naps, never past the
//!    claim's deadline, and gives the ID up if the claim ends or changes
//!    meanwhile.
#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pgrx::pg_sys::panic::ErrorReport;
use snowmint::{Clock, Generator, SnowflakeId, SystemClock, format_time};

use crate::claim_state::{ClaimRecord, ClaimWord, CoveredWord, mono_ms, wall_ms_of};
use crate::errors;
use crate::settings::Settings;
use crate::{shmem, wait};

/// How long a backend naps while the worker moves the mark.
const NAP: Duration = Duration::from_millis(1);

/// This backend's generator for one claim.
struct Minting {
    serial: u64,
    generator: Generator<SystemClock, &'static AtomicU64>,
}

thread_local! {
    /// The generator of the last claim this backend issued under.
    static MINTING: RefCell<Option<Rc<Minting>>> = const { RefCell::new(None) };
}

/// The next ID, under the claim in force.
pub fn next_id(settings: &Settings) -> Result<SnowflakeId, ErrorReport> {
    let claim = in_force()?;
    let minting = minting(claim, settings)?;
    let still = || still_in_force(claim.serial);
    let id = wait::generate(&minting.generator, settings.policy, still)?;
    let ts_ms = settings.layout.timestamp_ms(id);
    // Acquire pairs with the worker's Release: a mark seen here is
    // recorded on disk and on the coordinator.
    if CoveredWord::covers(
        shmem::claim_covered().load(Ordering::Acquire),
        claim.serial,
        ts_ms,
    ) {
        return Ok(id);
    }
    wait_for_mark(claim.serial, ts_ms)?;
    Ok(id)
}

/// The claim in force: the fencing check.
#[inline]
fn in_force() -> Result<ClaimWord, ErrorReport> {
    // Acquire pairs with the worker's Release: a claim seen here was
    // published after its record and its raise of the shared word.
    match ClaimWord::unpack(shmem::claim().load(Ordering::Acquire)) {
        Some(claim) if mono_ms() < claim.deadline_mono_ms => Ok(claim),
        Some(claim) => Err(refusal(&past_deadline(claim, &shmem::record()))),
        None => Err(refusal(&not_held(&shmem::record()))),
    }
}

/// Whether the claim `serial` is still the one in force, after a wait.
fn still_in_force(serial: u64) -> Result<(), ErrorReport> {
    let claim = in_force()?;
    if claim.serial == serial {
        Ok(())
    } else {
        Err(refusal(
            "the claim changed while the ID was made (the server claimed its node anew); try again",
        ))
    }
}

/// This backend's generator for `claim`, built on first use.
fn minting(claim: ClaimWord, settings: &Settings) -> Result<Rc<Minting>, ErrorReport> {
    if let Some(minting) = MINTING.with_borrow(|m| m.clone())
        && minting.serial == claim.serial
    {
        return Ok(minting);
    }
    let record = shmem::record();
    if record.serial != claim.serial {
        // The worker is publishing another claim right now.
        return Err(refusal(
            "the claim changed while the ID was made (the server claimed its node anew); try again",
        ));
    }
    let mut builder = Generator::builder(settings.layout, record.node())
        .slots(settings.slots)
        .policy(wait::plain_policy(settings.policy));
    if let Some(resume) = ClaimRecord::ms(record.resumed_after_ms) {
        // The worker raised the word already; this only makes the
        // generator's own view of its start the same.
        builder = builder.resume_after(resume);
        let now_ms = SystemClock.now_ms();
        let gap = Duration::from_millis(resume.saturating_sub(now_ms).max(0) as u64);
        if resume >= now_ms && gap <= settings.mark_wait_max {
            // A short gap to the mark: a restart right after the last ID,
            // or a slot taken over from a holder that just stopped. A
            // longer one is left to the generator, which refuses with
            // both times.
            wait::clock_past(resume, || still_in_force(claim.serial))?;
        }
    }
    let generator = builder.build_on(shmem::word()).map_err(errors::from_core)?;
    let minting = Rc::new(Minting {
        serial: claim.serial,
        generator,
    });
    MINTING.set(Some(Rc::clone(&minting)));
    Ok(minting)
}

/// Asks the worker to record a mark covering `ts_ms`, and waits until it
/// has, the claim still in force.
fn wait_for_mark(serial: u64, ts_ms: i64) -> Result<(), ErrorReport> {
    shmem::wanted().fetch_max(ts_ms, Ordering::Relaxed);
    loop {
        shmem::nap(NAP);
        if CoveredWord::covers(
            shmem::claim_covered().load(Ordering::Acquire),
            serial,
            ts_ms,
        ) {
            return Ok(());
        }
        still_in_force(serial)?;
        if shmem::mark_failing().load(Ordering::Relaxed) {
            let record = shmem::record();
            return Err(refusal(&format!(
                "the high-water mark could not be recorded, so no ID may go out: {}",
                record.reason().unwrap_or("the last write failed")
            )));
        }
    }
}

/// Why no claim is in force, from the worker's record.
pub fn not_held(record: &ClaimRecord) -> String {
    match record.reason() {
        Some(reason) => reason.to_owned(),
        None if !record.started => {
            "claiming: the claim worker has not started yet (if this lasts, see the server's log)"
                .to_owned()
        }
        None => "claiming: the claim is being set up".to_owned(),
    }
}

/// Why a claim past its deadline may not be used.
pub fn past_deadline(claim: ClaimWord, record: &ClaimRecord) -> String {
    let since = wall_ms_of(claim.deadline_mono_ms, mono_ms(), SystemClock.now_ms());
    let slot = if record.serial == claim.serial {
        format!("slot {}", record.slot)
    } else {
        "its slot".to_owned()
    };
    format!(
        "fenced since {}: the claim on {slot} was not confirmed by the coordinator before its deadline (the coordinator is unreachable or slow, or the claim worker is stuck)",
        format_time(since)
    )
}

/// The SQL error of a refusal.
fn refusal(reason: &str) -> ErrorReport {
    let reason = crate::fleet_settings::for_caller(reason);
    errors::not_ready(format!("snowmint cannot issue IDs now: {reason}"))
}

/// What `node()` shows of the claim: the claim word (if in force) and the
/// record, or why not.
pub struct ClaimView {
    /// The record.
    pub record: ClaimRecord,
    /// The claim's deadline (Unix ms), when one is in force.
    pub valid_until_ms: Option<i64>,
    /// Why IDs would be refused now, if they would.
    pub reason: Option<String>,
}

/// The claim as it stands, for `node()`.
pub fn view() -> ClaimView {
    let word = ClaimWord::unpack(shmem::claim().load(Ordering::Acquire));
    let record = shmem::record();
    let now_mono = mono_ms();
    match word {
        Some(claim) if now_mono < claim.deadline_mono_ms => ClaimView {
            valid_until_ms: Some(wall_ms_of(
                claim.deadline_mono_ms,
                now_mono,
                SystemClock.now_ms(),
            )),
            // In force, but its mark cannot be moved: IDs stop once the
            // mark recorded so far is used up.
            reason: record.reason().map(str::to_owned),
            record,
        },
        Some(claim) => ClaimView {
            reason: Some(past_deadline(claim, &record)),
            record,
            valid_until_ms: None,
        },
        None => ClaimView {
            reason: Some(not_held(&record)),
            record,
            valid_until_ms: None,
        },
    }
}
