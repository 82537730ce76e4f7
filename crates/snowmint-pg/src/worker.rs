//! The claim worker: the one process of a coordinated server that talks to
//! the fleet's coordinator (docs/ARCHITECTURE.md §5).
//!
//! It runs the fleet's claim engine ([`snowmint_fleet::connect`]) and
//! follows its claims through an [`Issuer`], as `snowmint serve` does: the
//! node's lock and state file (`snowmint/` in the data directory), a
//! reservation of the high-water mark per claim, a new claim's resume
//! point, the slot held before a restart tried first. What it adds is the
//! publication, into shared memory, of what the backends need to issue
//! (`claim_state.rs`):
//!
//! 1. A new claim gets the next serial; the shared word is raised past its
//!    resume point, then the record (slot, node, generation, resume point)
//!    is written.
//! 2. Once the claim's reservation has recorded a mark (on disk and on the
//!    coordinator), the covered word, then the claim word with its
//!    deadline: from then on backends issue.
//! 3. Renewals move the deadline in the claim word; the mark is moved a
//!    step past the clock whenever IDs come within half a step of it (the
//!    shared word tells), or a backend asks for more (`wanted`).
//! 4. A claim that ends, or runs out, is withdrawn (claim word 0) first,
//!    and the record says why: claiming, fenced since when, coordinator
//!    unreachable.
//! 5. On shutdown (SIGTERM), the claim is withdrawn, then the slot
//!    released.
//!
//! PostgreSQL's functions may be called from a process's main thread only,
//! and the worker's signal handlers run there too, so the engine runs on a
//! Tokio runtime of one thread, this one; the worker looks at the claim
//! every [`TICK`] and whenever the engine's state changes. Backends never
//! depend on that promptness for safety: they check the deadline
//! themselves.
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use pgrx::bgworkers::{
    BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime, SignalWakeFlags,
};
use snowmint::{Clock, Generator, Layout, SystemClock, format_time};
use snowmint_fleet::{
    ClaimInForce, ClaimState, CoordinatorConfig, Holder, Issuer, IssuerOptions, Refusal,
    create_state_dir, last_written_slot, system_hostname,
};

use crate::claim_state::{
    ClaimRecord, ClaimWord, CoveredWord, MAX_SERIAL, NONE, mono_ms, mono_ms_of, wall_ms_of,
};
use crate::fleet_settings::{self, FleetSettings};
use crate::settings::Settings;
use crate::shmem;

/// The worker's entry point, as `lib.rs` exports it.
pub const ENTRY: &str = "snowmint_claim_worker";

/// How often the worker looks at the claim, besides when it changes.
const TICK: Duration = Duration::from_millis(10);

/// The node's state directory, in the data directory.
const STATE_DIR: &str = "snowmint";

/// Registers the worker with the postmaster (from `_PG_init`, at server
/// start). It starts with the postmaster, before recovery ends (it needs no
/// database), so a standby holds a slot of its own too, ready for a
/// promotion; it is started again a second after it fails.
pub fn register() {
    BackgroundWorkerBuilder::new("snowmint claim worker")
        .set_type("snowmint claim worker")
        .set_library("snowmint")
        .set_function(ENTRY)
        .enable_shmem_access(None)
        .set_start_time(BgWorkerStartTime::PostmasterStart)
        .set_restart_time(Some(Duration::from_secs(1)))
        .load();
}

/// The worker's life: claims until SIGTERM, then releases the slot. An
/// error that stops it is raised as an SQL error, which ends the process
/// (the postmaster starts it again).
pub fn main() {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    let mut publisher = Publisher::new();
    let settings = match Settings::read() {
        Ok(settings) => settings,
        Err(error) => {
            publisher.not_ready(&format!("claiming: {}", error.message()));
            return;
        }
    };
    let (Some(fleet), Some(shown)) = (settings.fleet.clone(), fleet_settings::shown_coordinator())
    else {
        return;
    };
    publisher.layout = settings.layout;
    publisher.fleet = Some(fleet.clone());
    publisher.coordinator = shown;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let outcome = match runtime {
        Ok(runtime) => runtime.block_on(run(&settings, &fleet, &mut publisher)),
        Err(error) => Err(format!("cannot start the claim worker's runtime: {error}")),
    };
    if let Err(reason) = outcome {
        publisher.not_ready(&format!("claiming: {reason}"));
        pgrx::error!("snowmint claim worker: {reason}; starting again in a second");
    }
}

/// Claims, and publishes, until asked to stop.
async fn run(
    settings: &Settings,
    fleet: &FleetSettings,
    publisher: &mut Publisher,
) -> Result<(), String> {
    let data_dir = std::env::current_dir()
        .map_err(|error| format!("cannot find the data directory: {error}"))?;
    let state_dir = data_dir.join(STATE_DIR);
    create_state_dir(&state_dir).map_err(|error| error.to_string())?;
    let config = CoordinatorConfig::new(
        fleet.fleet.as_str(),
        fleet.slots,
        fleet.ttl,
        holder().to_string(),
        settings.layout,
    )
    .map_err(|error| error.to_string())?
    // `snowmint.slots_per_node`: a block of that many, claimed together.
    .with_slots_per_node(settings.slots)
    .map_err(|error| format!("snowmint.slots_per_node: {error}"))?
    // A restarted server tries the slot it held first, so that it tends to
    // get it back.
    .with_preferred_slot(last_written_slot(&state_dir, settings.layout));
    let source = snowmint_fleet::connect(&fleet.url, config).map_err(|error| error.to_string())?;
    let options = IssuerOptions {
        layout: settings.layout,
        clock_policy: settings.policy,
        clock: Arc::new(SystemClock),
        state_dir,
        mark_step: settings.mark_step,
    };
    let issuer = Issuer::start(Arc::clone(&source), options)
        .await
        .map_err(|error| error.to_string())?;
    pgrx::log!(
        "snowmint claim worker: claiming a slot of fleet {} in {} from {}",
        fleet.fleet,
        fleet.slots,
        publisher.coordinator
    );
    let mut changes = source.state();
    // False on SIGTERM (a shutdown) or when the postmaster died.
    while BackgroundWorker::wait_latch(Some(Duration::ZERO)) {
        publisher.update(&issuer);
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    tokio::time::sleep(TICK).await;
                }
            }
            () = tokio::time::sleep(TICK) => {}
        }
    }
    publisher.shut_down(&issuer).await;
    Ok(())
}

/// Who this server is, as written into the slot key it claims: an
/// operator reading the coordinator finds the server from it.
fn holder() -> Holder {
    let host = system_hostname().unwrap_or_else(|_| "unknown".to_owned());
    Holder {
        listen: format!("postgresql://{host}:{}", shmem::server_port()),
        host,
        pid: std::process::id(),
        grpc: None,
        started_ms: SystemClock.now_ms(),
    }
}

/// What the worker has published, and what it publishes next.
struct Publisher {
    layout: Layout,
    fleet: Option<FleetSettings>,
    /// The coordinator, password masked.
    coordinator: String,
    /// The record as last written.
    record: ClaimRecord,
    /// The claim being published, if one is in force.
    current: Option<Current>,
    /// When the last claim ended (Unix ms), until a new one is in force.
    fenced_since: Option<i64>,
}

/// A claim in force, as published.
struct Current {
    serial: u64,
    view: ClaimInForce,
    /// A generator over the shared word, never used to issue: it reads
    /// the word's last timestamp.
    word: Generator<SystemClock, &'static AtomicU64>,
    /// Set while a task moves the mark.
    extending: Arc<AtomicBool>,
    /// Its deadline as last published (Unix ms), once backends may issue.
    published_until_ms: Option<i64>,
}

impl Publisher {
    /// Takes over the record of this life of the shared memory (a worker
    /// started again continues its serials).
    fn new() -> Publisher {
        let mut record = shmem::record();
        record.started = true;
        shmem::set_record(&record);
        Publisher {
            layout: Layout::TWITTER,
            fleet: None,
            coordinator: String::new(),
            record,
            current: None,
            fenced_since: None,
        }
    }

    /// Publishes the claim in force, or why there is none.
    fn update(&mut self, issuer: &Issuer) {
        let now_ms = SystemClock.now_ms();
        match issuer.claim_in_force() {
            Ok(view) => self.hold(view, now_ms),
            Err(refusal) => {
                self.withdraw(now_ms, &refusal.to_string());
                let state = issuer.report().coordinator.map(|status| status.state);
                let reason = self.refusal_text(&refusal, state);
                self.not_ready(&reason);
            }
        }
    }

    /// Publishes `view`: a new claim, or a renewal of the current one.
    fn hold(&mut self, view: ClaimInForce, now_ms: i64) {
        let is_new = self
            .current
            .as_ref()
            .is_none_or(|current| !Arc::ptr_eq(&current.view.reservation, &view.reservation));
        if is_new && !self.start_claim(view.clone(), now_ms) {
            return;
        }
        let Some(current) = self.current.as_mut() else {
            return;
        };
        current.view = view;
        let reservation = &current.view.reservation;
        // Move the mark ahead of need: first when the claim starts; then
        // when IDs come within half a step of it (the shared word holds
        // the last one's timestamp), so that under steady load no backend
        // waits, while an idle server writes nothing; and at once when a
        // backend waits for more.
        let wanted = shmem::wanted().load(Ordering::Relaxed);
        let issued = current.word.last_timestamp_ms().unwrap_or(NONE);
        if (reservation.covered_ms().is_none()
            || !reservation.covers(wanted)
            || reservation.due_for_refresh(issued))
            && !current.extending.swap(true, Ordering::AcqRel)
        {
            let reservation = Arc::clone(reservation);
            let extending = Arc::clone(&current.extending);
            // Never below the clock: a timestamp the reservation already
            // covers (its "nothing yet" included) writes nothing.
            let needed = wanted.max(issued).max(now_ms);
            tokio::spawn(async move {
                // A failure is remembered by the node's mark, and read below.
                let _ = reservation.extend(needed, now_ms).await;
                extending.store(false, Ordering::Release);
            });
        }
        let failure = reservation.node_mark().write_failure();
        shmem::mark_failing().store(failure.is_some(), Ordering::Relaxed);
        let slot = current.view.claim.slot;
        let mut record = self.record;
        record.mark_ms = reservation.node_mark().recorded_ms().unwrap_or(NONE);
        let Some(covered_ms) = reservation.covered_ms() else {
            // Not yet: no ID may leave before a mark is recorded.
            let reason = match &failure {
                Some(failure) => format!(
                    "claiming: slot {slot} is held, but its high-water mark cannot be recorded: {failure}"
                ),
                None => format!("claiming: slot {slot} is held; recording its high-water mark"),
            };
            record.set_reason(Some(&reason));
            write_record(&mut self.record, record);
            return;
        };
        // Release (both): a backend that sees the claim sees the record,
        // the raised word and the covered mark written before it.
        shmem::claim_covered().store(
            CoveredWord {
                serial: current.serial,
                covered_ms,
            }
            .pack(),
            Ordering::Release,
        );
        record.serial = current.serial;
        let trouble = failure.as_ref().map(|failure| {
            format!("slot {slot} is held, but its high-water mark cannot be moved: {failure}")
        });
        record.set_reason(trouble.as_deref());
        write_record(&mut self.record, record);
        let deadline_mono_ms = current.view.claim.valid_until.map_or(u64::MAX, mono_ms_of);
        shmem::claim().store(
            ClaimWord {
                serial: current.serial,
                deadline_mono_ms,
            }
            .pack(),
            Ordering::Release,
        );
        if current.published_until_ms.is_none() {
            pgrx::log!(
                "snowmint claim worker: issuing IDs as slot {slot} ({}), claim {} from {}",
                self.layout.describe(current.view.claim.node),
                current.view.claim.generation,
                self.coordinator
            );
            self.fenced_since = None;
        }
        current.published_until_ms = Some(wall_ms_of(deadline_mono_ms, mono_ms(), now_ms));
    }

    /// Sets a new claim up: its serial, the shared word raised past its
    /// resume point, its record. `false` when it cannot be used.
    fn start_claim(&mut self, view: ClaimInForce, now_ms: i64) -> bool {
        self.withdraw(now_ms, "a new claim replaces it");
        let claim = &view.claim;
        let serial = self.record.last_serial + 1;
        if serial > MAX_SERIAL {
            self.not_ready(&format!(
                "claiming: slot {} is held, but this server has published {MAX_SERIAL} claims since it started, all it can tell apart; restart the server",
                claim.slot
            ));
            return false;
        }
        let mut builder = Generator::builder(self.layout, claim.node).slots(claim.slots);
        if let Some(resume) = view.resumed_after {
            builder = builder.resume_after(resume);
        }
        // Raises the shared word (it only ever rises), so that no backend
        // issues at or below the resume point under this claim; kept to
        // read the last ID's timestamp from the word.
        let word = match builder.build_on(shmem::word()) {
            Ok(word) => word,
            Err(error) => {
                self.not_ready(&format!(
                    "claiming: slot {} is held, but cannot be issued under: {error}",
                    claim.slot
                ));
                return false;
            }
        };
        let mut record = self.record;
        record.serial = 0;
        record.last_serial = serial;
        record.generation = claim.generation;
        record.slot = claim.slot;
        (record.datacenter, record.machine) = self.layout.pair_of(claim.node);
        record.resumed_after_ms = view.resumed_after.unwrap_or(NONE);
        self.write(record);
        pgrx::log!(
            "snowmint claim worker: claimed slot {} ({}), claim {}{}",
            claim.slot,
            self.layout.describe(claim.node),
            claim.generation,
            view.resumed_after
                .map(|ms| format!(", resuming after {}", format_time(ms)))
                .unwrap_or_default()
        );
        self.current = Some(Current {
            serial,
            view,
            word,
            extending: Arc::new(AtomicBool::new(false)),
            published_until_ms: None,
        });
        true
    }

    /// Withdraws the claim in force, if any: backends stop issuing under it.
    /// `why` goes to the log.
    fn withdraw(&mut self, now_ms: i64, why: &str) {
        // Release: pairs with the backends' Acquire.
        shmem::claim().store(0, Ordering::Release);
        if let Some(current) = self.current.take()
            && let Some(until_ms) = current.published_until_ms
        {
            let since = until_ms.min(now_ms);
            self.fenced_since = Some(since);
            pgrx::log!(
                "snowmint claim worker: stopped issuing IDs as slot {} at {}: {why}",
                current.view.claim.slot,
                format_time(since)
            );
        }
    }

    /// Why a refusal: claiming, fenced since when, coordinator unreachable.
    fn refusal_text(&self, refusal: &Refusal, state: Option<ClaimState>) -> String {
        let mut detail = match refusal {
            Refusal::NoClaim { reason } | Refusal::NotReady { reason } => reason.clone(),
            other => other.to_string(),
        };
        if detail.starts_with("starting") {
            detail = match &self.fleet {
                Some(fleet) => format!(
                    "asking {} for a slot of fleet {} in {}",
                    self.coordinator, fleet.fleet, fleet.slots
                ),
                None => format!("asking {} for a slot", self.coordinator),
            };
        } else if state == Some(ClaimState::Connecting) {
            detail = format!("coordinator unreachable: {detail}");
        }
        match self.fenced_since {
            Some(since) => format!("fenced since {}: {detail}", format_time(since)),
            None if state == Some(ClaimState::Connecting) && !detail.starts_with("asking") => {
                detail
            }
            None => format!("claiming: {detail}"),
        }
    }

    /// Publishes that no claim is in force, and why.
    fn not_ready(&mut self, reason: &str) {
        let mut record = self.record;
        record.serial = 0;
        record.set_reason(Some(reason));
        self.write(record);
    }

    /// Writes the record, if it changed.
    fn write(&mut self, record: ClaimRecord) {
        write_record(&mut self.record, record);
    }

    /// The end: withdrawn first, so that no ID follows the release.
    async fn shut_down(&mut self, issuer: &Issuer) {
        let slot = self.current.as_ref().map(|current| current.view.claim.slot);
        self.withdraw(SystemClock.now_ms(), "the server is shutting down");
        self.fenced_since = None;
        self.not_ready("the server is shutting down: its slot is being released");
        issuer.release().await;
        self.not_ready("the server is shutting down: its slot was released");
        match slot {
            Some(slot) => pgrx::log!("snowmint claim worker: released slot {slot}"),
            None => pgrx::log!("snowmint claim worker: stopped; no slot was held"),
        }
    }
}

/// Writes `record` into shared memory if it differs from `last`, the
/// record as last written.
fn write_record(last: &mut ClaimRecord, record: ClaimRecord) {
    if record != *last {
        shmem::set_record(&record);
        *last = record;
    }
}
