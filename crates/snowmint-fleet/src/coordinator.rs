//! The claim engine: one set of rules for every coordination service.
//!
//! A [`Coordinator`] claims a slot of the fleet, keeps it, fences the node
//! when it cannot prove it still holds it, claims anew after a loss, and
//! keeps the slot's high-water mark. What differs between etcd, ZooKeeper
//! and PostgreSQL is only how each primitive is spoken, behind [`Backend`].
//!
//! # Keys
//!
//! - `/snowmint/<fleet>/slots/<slot>`: who holds the slot; tied to the
//!   holder's session (an etcd lease, an ephemeral znode), so that it frees
//!   itself when the holder stops renewing.
//! - `/snowmint/<fleet>/hwm/<slot>`: the slot's high-water mark, a Unix
//!   millisecond count. Not tied to any session: it must survive holders.
//! - `/snowmint/<fleet>/claims/<slot>`: the slot's claim history, who held
//!   it when (see `history.rs`). Not tied to any session.
//! - `/snowmint/<fleet>/layout`: the layout the fleet's IDs are made in,
//!   as `T/D/M/S@EPOCH` (`41/5/5/12@1288834974657`), written by the first
//!   node that claims. Not tied to any session.
//!
//! # Rules
//!
//! - Layout: once a session is open, read the fleet's layout record; with
//!   none, create it (only if still absent). A node whose layout is not
//!   the recorded one claims nothing: fenced with a message that names
//!   both layouts, retried with backoff.
//! - Claim: list the taken slots and create the key of one free slot of
//!   the range, only if absent. The slot tried is the one the node held
//!   last (in this process, else [`CoordinatorConfig::with_preferred_slot`])
//!   if the listing shows it free, else one drawn pseudo-randomly from the
//!   free slots, seeded with the holder value; after a conflict, another
//!   from a fresh listing. So nodes starting together spread over the
//!   range, and a storm of n nodes costs a few attempts per node, not
//!   n²/2 in all. None left: fenced with "all N slots of fleet F in A-B
//!   are taken", retried with backoff.
//! - Several slots per node ([`CoordinatorConfig::with_slots_per_node`]):
//!   the same over aligned blocks of K slots (the first a multiple of K,
//!   all inside the range); a block with any slot taken or passed over is
//!   not free. The block's K slot keys are created in one atomic step
//!   ([`Backend::create_if_absent`] of them all) or not at all, and from
//!   then on the K slots are one claim: each keep-alive checks every key,
//!   one key lost (a keep-alive, a mark write) ends the claim, and the
//!   release frees them all. The mark is read, raised and (where the guard
//!   cannot prove ownership) written back on every slot, each guarded by
//!   its own key; the claim's floor is the highest. Each slot's history
//!   gets the claim's record, so `whois` of any of them names the node.
//!   None free: fenced with "all N blocks of K slots of fleet F in A-B have
//!   a slot taken".
//! - Deadline: the node may issue until `sent + TTL - margin`, where `sent`
//!   is when the last *confirmed* keep-alive was sent. The coordinator
//!   cannot have counted the TTL from any earlier instant, so the node stops
//!   before its key can expire and be handed to someone else. The margin is
//!   a tenth of the TTL (at least 50 ms). The deadline travels in
//!   [`Claim::valid_until`], so a reader stops even if this task is stuck.
//! - Keep-alive every third of the TTL; after a failed one, retry every
//!   tenth. Past the deadline, or on a definite loss (lease or session gone,
//!   key no longer ours, seen by a keep-alive or by a mark write): fenced,
//!   the old session released if it still answers, and a new claim,
//!   possibly of another slot, with a new `generation`.
//! - High-water mark: [`SlotSource::reserve`] raises the stored mark with a
//!   compare-and-set on its version, guarded by the slot key still belonging
//!   to this session, and never lowers it. A new claim reads the mark into
//!   [`Claim::floor_ms`]. Where the guard proves only that the slot key
//!   exists, not whose it is (ZooKeeper; see
//!   [`Backend::GUARD_PROVES_OWNER`]), the new holder first writes the mark
//!   back at the version it read, so that a slot key deleted by hand and
//!   created anew cannot let the old holder write on. A conflict counts the
//!   stored mark as cover only once the backend has seen the slot key
//!   still this session's; a write that finds the key gone or another's
//!   ends the claim at once, as a loss.
//! - Passing over ([`SlotSource::pass_over`]): a slot whose node this
//!   process cannot issue as (another process on its host holds the
//!   node's lock) is given up with its session, as a loss would be but
//!   not counted as one, and is not claimed again for a while
//!   ([`PassedOver`], in [`CoordinatorStatus::passed_over`]), so that the
//!   next claim takes another slot. With every free slot passed over, the
//!   node is fenced saying so, and retries.
//! - Clock: before a claim, and every [`ClockCheck::every`] while it is
//!   held, the node's clock is checked against a few holders' and the
//!   coordinator's, for its offset and for its rate (a clock that runs
//!   slow would time the claim's deadline past the lease's end); out of
//!   range, the node claims nothing, or gives its slot up (see
//!   `clock_check.rs`).
//! - History: a claim's record is written before the claim is published,
//!   ending the record it takes over; a clean release ends its own (see
//!   `history.rs`).
//! - Clean shutdown ([`SlotSource::release`]): fenced first, then the
//!   claim's record ended, then the session ends (lease revoked,
//!   ZooKeeper node deleted and session closed), so the slot frees at
//!   once.
//! - Reasons: every failure is a [`ClaimError`], one sentence that names
//!   the coordinator once ("cannot reach the coordinator etcd://10.0.0.1:2379
//!   (connection refused)"). Fenced by one, the node's reason adds
//!   "; retrying", and the log gets the client library's details
//!   ([`ClaimError::details`]), which no reason shows.
//!
//! # How the module is built
//!
//! [`connect`](crate::connect) opens a [`Coordinator`], the handle a
//! service holds; behind it, one task runs the claim loop (open a
//! session, claim, keep alive, fence, start over) and shares its state
//! with the handle. Which free slot to try, the fleet's layout record, the
//! slot's shared mark (one guarded compare-and-set loop, for the
//! write-back at claim time and for every reservation), the claim history
//! ([`ClaimEntry`], [`HistoryRetention`]) and the clock check
//! ([`ClockCheck`], [`PeerClock`], [`ClockVerdict`]) are each a part of
//! that loop; the intervals and backoffs all follow from the TTL. What it
//! reports is a [`CoordinatorStatus`] with its [`ClaimState`] and
//! [`ClaimRecord`]s, and every failure a [`ClaimError`].
//!
//! Below the engine, a [`Backend`] offers the primitives (with
//! [`BackendError`]). The engine knows backends only through that trait:
//! the crate's registry, above this module, turns a [`CoordinatorUrl`]
//! into its backend for [`connect`](crate::connect),
//! [`read_holders`](crate::read_holders) and [`whois`](crate::whois)
//! alike. How clients find the nodes (the fleet's slot keys read from
//! outside it), which claim covered an ID, and a whole fleet's history
//! at once ([`FleetHistory`], [`SlotClaims`], for `snowmint audit`) are
//! read here too.
//!
//! Settings are read once each: a [`CoordinatorUrl`], a [`SlotRange`], a
//! [`FleetName`], the claim TTL ([`parse_claim_ttl`]), gathered in a
//! [`CoordinatorConfig`] with its [`Holder`]; [`ConfigError`] when one
//! cannot be used. [`CoordinatorAccess`] says how a node gets into a
//! secured coordinator ([`CoordinatorTls`], read and checked from files
//! whenever a connection is made, and [`Credentials`]); a password is a
//! [`Secret`], and [`mask_user_part`] hides the user part of a URL that
//! cannot be read.

mod access;
mod backend;
mod clock_check;
mod config;
mod directory;
mod engine;
mod error;
mod fleet_history;
mod fleet_name;
mod history;
mod layout;
mod mark;
mod paths;
mod pick;
pub(crate) mod secret;
mod slots;
mod status;
mod timing;
#[cfg(any(feature = "etcd", feature = "zookeeper"))]
mod tls_files;
mod url;
mod whois;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use access::{CoordinatorAccess, CoordinatorTls, Credentials};
pub use backend::{Backend, BackendError, Cause, GuardedWrite, Opened, Versioned};
pub use clock_check::{
    ClockCheck, ClockReading, ClockSample, ClockSource, ClockVerdict, MIN_CLOCK_RATE, PEERS,
    PeerClock, RateReading, parse_clock_check_every, parse_max_clock_skew,
};
pub use config::{
    ConfigError, CoordinatorConfig, Holder, MAX_FLEET_NAME, MAX_TTL, MIN_TTL, parse_claim_ttl,
};
pub(crate) use directory::read_with as read_holders_on;
pub use error::ClaimError;
pub(crate) use fleet_history::read_on as read_fleet_history_on;
pub use fleet_history::{FleetHistory, SlotClaims};
pub use fleet_name::FleetName;
pub use history::{
    ClaimEnd, ClaimEntry, HistoryRetention, MAX_HISTORY_AGE, MAX_HISTORY_KEEP, parse_history_keep,
    parse_history_max_age,
};
pub use secret::{HIDDEN, Secret, mask_user_part};
pub use slots::SlotRange;
pub(crate) use slots::block_text;
pub use status::{ClaimRecord, ClaimState, CoordinatorStatus, PassedOver};
#[cfg(any(feature = "etcd", feature = "zookeeper"))]
pub use tls_files::TlsFiles;
pub use url::{CoordinatorUrl, Login, PostgresUrl, SslMode};
pub(crate) use whois::whois_on;
pub use whois::{Whois, WhoisAnswer};

use crate::{BoxFuture, FleetError, NodeState, SlotSource};
use engine::Shared;
use timing::Timing;

/// A node's claim on a slot of a fleet, kept through a coordination service.
///
/// Dropping it stops the engine without releasing anything (like a crash:
/// the slot frees when the TTL runs out); call [`SlotSource::release`] for a
/// clean shutdown.
pub struct Coordinator<B: Backend> {
    shared: Arc<Shared<B>>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl<B: Backend> Coordinator<B> {
    /// Starts claiming a slot through `backend`; see [`connect`](crate::connect).
    ///
    /// # Errors
    ///
    /// [`FleetError::Coordinator`] when called outside a Tokio runtime.
    pub fn start(backend: B, config: CoordinatorConfig) -> Result<Coordinator<B>, FleetError> {
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| FleetError::Coordinator {
                coordinator: backend.url(),
                message: "the claim engine must be started inside a Tokio runtime".into(),
            })?;
        let shared = Arc::new(Shared::new(backend, config));
        let task = runtime.spawn(shared.clone().run());
        Ok(Coordinator {
            shared,
            task: Mutex::new(Some(task)),
        })
    }

    /// What the engine holds now.
    pub fn status(&self) -> CoordinatorStatus {
        let shared = &self.shared;
        let mut inner = shared.lock();
        let state = if inner.released {
            ClaimState::Released
        } else if inner.claim.is_some() {
            ClaimState::Held
        } else if inner.session.is_none() {
            ClaimState::Connecting
        } else if inner.clock_skewed {
            ClaimState::ClockSkew
        } else if inner.all_taken {
            ClaimState::AllTaken
        } else {
            ClaimState::Claiming
        };
        CoordinatorStatus {
            url: shared.url.clone(),
            fleet: shared.config.fleet().to_owned(),
            slots: shared.config.slots(),
            state,
            slot: inner.claim.map(|held| held.slot),
            slots_per_node: shared.config.slots_per_node(),
            session_kind: B::SESSION_NAME,
            session_id: inner.session.as_ref().map(|live| live.id.clone()),
            ttl: inner
                .session
                .as_ref()
                .map_or(shared.config.ttl(), |live| live.ttl),
            holder: shared.config.holder.clone(),
            claims: inner.generation,
            losses: inner.losses,
            claimed_at: inner.claim.map(|held| held.claimed_at),
            deadline: inner.claim.map(|held| held.deadline),
            passed_over: inner.passed_over_now(Instant::now()),
            clock: inner.clock.clone(),
            max_clock_skew: shared.config.ops.clock_check.max_skew,
        }
    }

    /// The last claims made, oldest first: the ended ones the engine
    /// remembers, then the current one.
    pub fn claims(&self) -> Vec<ClaimRecord> {
        let inner = self.shared.lock();
        inner
            .history
            .iter()
            .copied()
            .chain(inner.claim.map(|held| held.record()))
            .collect()
    }

    /// The settings the engine runs with.
    pub fn config(&self) -> &CoordinatorConfig {
        &self.shared.config
    }

    /// Which claim of this node's fleet covered the slot of `id` at its
    /// millisecond (see [`whois`](crate::whois)), read in the engine's own session when
    /// one is open.
    ///
    /// # Errors
    ///
    /// [`FleetError::Coordinator`] when the coordinator cannot be read.
    pub async fn whois(&self, id: snowmint::SnowflakeId) -> Result<Whois, FleetError> {
        self.shared.whois(id).await
    }
}

impl<B: Backend> Drop for Coordinator<B> {
    fn drop(&mut self) {
        if let Some(task) = self
            .task
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            task.abort();
        }
    }
}

impl<B: Backend> SlotSource for Coordinator<B> {
    fn kind(&self) -> &'static str {
        B::KIND
    }

    fn state(&self) -> watch::Receiver<NodeState> {
        self.shared.state.subscribe()
    }

    fn reserve(&self, generation: u64, mark_ms: i64) -> BoxFuture<'_, Result<(), FleetError>> {
        Box::pin(self.shared.reserve(generation, mark_ms))
    }

    fn coordinator_status(&self) -> Option<CoordinatorStatus> {
        Some(self.status())
    }

    fn pass_over(&self, generation: u64, reason: String) -> bool {
        let mut inner = self.shared.lock();
        if inner
            .claim
            .is_some_and(|held| held.generation == generation)
        {
            inner.pass_over = Some((generation, reason));
            drop(inner);
            self.shared.pass_over_wanted.notify_one();
        }
        // A claim already ended is given up already; a new one follows.
        true
    }

    fn whois(&self, id: snowmint::SnowflakeId) -> BoxFuture<'_, Option<Result<Whois, FleetError>>> {
        Box::pin(async move { Some(Coordinator::whois(self, id).await) })
    }

    fn release(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // Stop the engine first, so that it cannot claim again.
            let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(task) = task {
                task.abort();
                let _ = task.await;
            }
            // Fenced before the slot frees: no ID may follow the release.
            self.shared
                .fence("released: the node is shutting down".into());
            let (live, held) = {
                let mut inner = self.shared.lock();
                inner.released = true;
                (inner.session.take(), inner.end_claim(Instant::now()))
            };
            if let Some(live) = live {
                let keys = held.map_or_else(Vec::new, |held| self.shared.block_keys(held.slot));
                let limit = Timing { ttl: live.ttl }.step_limit();
                if let Some(held) = held {
                    // Taken after the claim ended: a reservation in flight
                    // finishes first, and none starts after.
                    let last_ms = self.shared.marks.lock().await.stored_ms(held.generation);
                    self.shared
                        .record_release(&live, held, last_ms, limit)
                        .await;
                }
                let released =
                    tokio::time::timeout(limit, self.shared.backend.release(&live.session, &keys))
                        .await;
                let failure = match released {
                    Ok(Ok(())) => None,
                    Ok(Err(cause)) => Some(ClaimError::from_backend(
                        &self.shared.url,
                        B::SESSION_NAME,
                        cause,
                    )),
                    Err(_) => Some(ClaimError::NoAnswer {
                        coordinator: self.shared.url.clone(),
                        limit,
                    }),
                };
                if let Some(error) = failure {
                    tracing::warn!(%error, details = ?error.details(), "could not release the claim; it frees when its TTL runs out");
                }
            }
        })
    }
}
