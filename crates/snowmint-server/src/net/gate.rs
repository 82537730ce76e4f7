//! The connection cap, shared by every listener.
//!
//! All listeners draw on one budget of file descriptors, which the
//! process also needs for its state files and its coordinator. So:
//!
//! - at most `max_connections` client connections are open at once, and
//!   never more than the descriptor limit minus
//!   [`DESCRIPTOR_RESERVE`](super::limits::DESCRIPTOR_RESERVE), read
//!   afresh at each accept (an operator or `prlimit` may change it while
//!   the node runs);
//! - with more than one listener, each may hold at most three quarters
//!   of the cap, so a flood on one leaves room for clients of the others;
//! - at the cap a listener stops accepting (backpressure): new
//!   connections wait in the kernel's queue, costing the process nothing;
//! - but a new client is not left waiting behind clients that hold their
//!   connections: when one is waiting, a connection still in its TLS
//!   handshake half a second after its accept is closed to make room, the
//!   oldest first (a handshake takes a round trip or two; a client still
//!   at it has not even finished saying hello); failing that, the
//!   oldest connection older than the request timeout, an idle one first
//!   (gently) and a busy one otherwise (at once). So every connection that
//!   got through its handshake gets at least a request timeout, and a new
//!   client gets in within about one, however many connections others
//!   hold (sooner, when some are stuck handshaking).

use std::collections::BTreeMap;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::activity::Activity;
use super::limits::{DESCRIPTOR_RESERVE, Limit};
use crate::listener::Listener;
use crate::metrics::Metrics;

/// How often a listener waiting at the cap looks at the descriptor limit
/// again (it may have been raised) and, with a client waiting, whether a
/// connection has become old enough to make room.
const RECHECK: Duration = Duration::from_millis(100);

/// How long a connection may be in its TLS handshake before it may be
/// closed to make room: long enough for a client a few round trips away,
/// so that a flood of half-sent handshakes, which makes room for itself
/// at the cap, does not close a real client's before it can finish.
const HANDSHAKE_GRACE: Duration = Duration::from_millis(500);

/// The shared budget of connections.
#[derive(Debug)]
pub(crate) struct Gate {
    configured: u64,
    /// Whether more than one listener shares the budget.
    shared: bool,
    /// The youngest a connection may be and still be closed to make room.
    min_age: Duration,
    registry: Mutex<Registry>,
    freed: Notify,
    metrics: Metrics,
}

/// The open connections, per listener (index: `Listener as usize`).
#[derive(Debug, Default)]
struct Registry {
    next: u64,
    /// By admission order: the first is the oldest.
    open: [BTreeMap<u64, Arc<Activity>>; Listener::COUNT],
    /// Connections asked to close to make room that have not closed yet.
    evicting: [u64; Listener::COUNT],
}

/// One admitted connection; gives its place back when dropped.
#[derive(Debug)]
pub(crate) struct Permit {
    gate: Arc<Gate>,
    listener: Listener,
    id: u64,
    activity: Arc<Activity>,
}

impl Permit {
    /// The connection's activity.
    pub(crate) fn activity(&self) -> &Arc<Activity> {
        &self.activity
    }
}

impl Gate {
    /// A budget of `configured` connections, for one listener or more;
    /// connections younger than `min_age` are never closed to make room.
    pub(crate) fn new(
        configured: u64,
        shared: bool,
        min_age: Duration,
        metrics: Metrics,
    ) -> Arc<Gate> {
        Arc::new(Gate {
            configured,
            shared,
            min_age,
            registry: Mutex::new(Registry::default()),
            freed: Notify::new(),
            metrics,
        })
    }

    /// The cap now: the configured one, or fewer if the descriptor limit
    /// leaves less room.
    pub(crate) fn cap(&self) -> u64 {
        let room = descriptor_limit().saturating_sub(DESCRIPTOR_RESERVE).max(1);
        self.configured.min(room)
    }

    fn share(&self, cap: u64) -> u64 {
        if self.shared { cap - cap / 4 } else { cap }
    }

    fn registry(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the cap allows `listener` one more connection, given
    /// `registry` and the `cap`.
    fn room(&self, registry: &Registry, listener: Listener, cap: u64) -> bool {
        let mine = registry.open[listener as usize].len() as u64;
        let total: usize = registry.open.iter().map(BTreeMap::len).sum();
        mine < self.share(cap) && (total as u64) < cap
    }

    /// Whether the cap allows `listener` one more connection now.
    pub(crate) fn has_room(&self, listener: Listener) -> bool {
        let cap = self.cap();
        self.room(&self.registry(), listener, cap)
    }

    /// Waits until [`Gate::has_room`] (the place is not taken: take it with
    /// [`Gate::try_admit`] once the connection is accepted).
    pub(crate) async fn room_for(&self, listener: Listener) {
        let mut counted = false;
        loop {
            let mut freed = pin!(self.freed.notified());
            freed.as_mut().enable();
            if self.has_room(listener) {
                return;
            }
            if !counted {
                counted = true;
                self.paused(listener);
            }
            tokio::select! {
                () = freed => {}
                () = tokio::time::sleep(RECHECK) => {}
            }
        }
    }

    fn paused(&self, listener: Listener) {
        self.metrics.limit_reached(Limit::Connections);
        tracing::debug!(
            listener = listener.name(),
            cap = self.cap(),
            "at the connection cap: accepting paused"
        );
    }

    /// A place for one more connection of `listener`, if the cap allows;
    /// the connection's deadlines count from now.
    pub(crate) fn try_admit(self: &Arc<Gate>, listener: Listener) -> Option<Permit> {
        let cap = self.cap();
        let mut registry = self.registry();
        if !self.room(&registry, listener, cap) {
            return None;
        }
        let mine = registry.open[listener as usize].len() as u64;
        let id = registry.next;
        registry.next += 1;
        let activity = Activity::new(self.metrics.clone());
        registry.open[listener as usize].insert(id, Arc::clone(&activity));
        drop(registry);
        self.metrics.connections(listener, mine + 1, cap);
        Some(Permit {
            gate: Arc::clone(self),
            listener,
            id,
            activity,
        })
    }

    /// A place for a connection of `listener` that was accepted at the
    /// cap and waits: makes room for it (see the module docs), and returns
    /// once there is.
    pub(crate) async fn admit_waiting(self: &Arc<Gate>, listener: Listener) -> Permit {
        let mut counted = false;
        loop {
            let mut freed = pin!(self.freed.notified());
            // Registered before the check, so that a connection closing
            // between the check and the wait still wakes it.
            freed.as_mut().enable();
            if let Some(permit) = self.try_admit(listener) {
                return permit;
            }
            if !counted {
                counted = true;
                self.paused(listener);
            }
            self.make_room(listener);
            tokio::select! {
                () = freed => {}
                () = tokio::time::sleep(RECHECK) => {}
            }
        }
    }

    /// Asks one connection to close for a client of `listener` that waits:
    /// the oldest still in its TLS handshake after [`HANDSHAKE_GRACE`], of
    /// any listener; else, unless
    /// one was asked already and has not closed yet, the oldest connection
    /// old enough, an idle one first, of `listener` if it holds its share,
    /// else of the listener that holds the most.
    fn make_room(&self, listener: Listener) {
        let cap = self.cap();
        let mut registry = self.registry();
        // Ids are given in admission order: the smallest is the oldest.
        let now = Instant::now();
        let handshaking = registry
            .open
            .iter()
            .enumerate()
            .flat_map(|(index, open)| {
                open.iter()
                    .map(move |(id, activity)| (*id, index, activity))
            })
            .filter(|(_, _, activity)| {
                activity.is_handshaking()
                    && !activity.is_evicted()
                    && now.duration_since(activity.origin) >= HANDSHAKE_GRACE
            })
            .min_by_key(|(id, _, _)| *id)
            .map(|(_, index, activity)| (index, Arc::clone(activity)));
        if let Some((index, victim)) = handshaking {
            registry.evicting[index] += 1;
            drop(registry);
            victim.evict();
            self.metrics.limit_reached(Limit::Evicted);
            return;
        }
        let own = registry.open[listener as usize].len() as u64;
        let from = if own >= self.share(cap) || !self.shared {
            listener as usize
        } else {
            (0..Listener::COUNT)
                .max_by_key(|&index| registry.open[index].len())
                .unwrap_or(listener as usize)
        };
        if registry.evicting[from] > 0 {
            return;
        }
        let old_enough = |activity: &&Arc<Activity>| {
            !activity.is_evicted() && now.duration_since(activity.origin) >= self.min_age
        };
        let open = &registry.open[from];
        let victim = open
            .values()
            .filter(old_enough)
            .find(|activity| activity.in_flight() == 0)
            .or_else(|| open.values().find(old_enough))
            .cloned();
        if let Some(victim) = victim {
            registry.evicting[from] += 1;
            drop(registry);
            victim.evict();
            self.metrics.limit_reached(Limit::Evicted);
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let gate = &self.gate;
        let mut registry = gate.registry();
        let index = self.listener as usize;
        registry.open[index].remove(&self.id);
        if self.activity.is_evicted() {
            registry.evicting[index] = registry.evicting[index].saturating_sub(1);
        }
        let mine = registry.open[index].len() as u64;
        drop(registry);
        gate.metrics.connections(self.listener, mine, gate.cap());
        gate.freed.notify_waiters();
    }
}

/// The process's soft limit on open descriptors (`u64::MAX` when it
/// cannot be read or is unlimited).
fn descriptor_limit() -> u64 {
    #[cfg(unix)]
    {
        rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(u64::MAX)
    }
    #[cfg(not(unix))]
    {
        u64::MAX
    }
}
