//! Generators that issue through snowmint's issuer (the one `snowmint
//! serve` runs): a static node with a state directory (the node's lock on
//! this host, the durable high-water mark), or a node claimed from a
//! coordinator (a leased slot with fencing as well).
//!
//! The issuer runs its claim engine and mark writes on a runtime thread of
//! its own, so no Python code runs in the claim path; a call that must
//! wait for a start or a claim lets go of the interpreter lock.
//!
//! # Fork
//!
//! Each issuer is tagged with the fork epoch of the process that started it
//! (`fork.rs`). In a forked child the tag no longer matches:
//!
//! - a static node refuses with `ForkError` (its lock and mark belong to
//!   the parent);
//! - a claimed node starts an issuer of its own on first use, which claims
//!   its own slot, and drops the parent's copy without releasing the
//!   parent's slot or touching its runtime (`EmbeddedIssuer::abandon`).
//!
//! The issuer in force is behind an `ArcSwapOption`, so that the hot path
//! takes no lock (a lock a parent's thread held at the fork would stay
//! locked in the child forever) and `close()` can take it away while calls
//! are in flight: the last of them to finish releases the slot.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use arc_swap::ArcSwapOption;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use snowmint::{Layout, SnowflakeId};
use snowmint_fleet::{EmbeddedIssuer, IssuerBuilder, NodeState, Refusal};

use crate::errors::raise;
use crate::{fork, refusals};

/// An issuer started in this process (or in the one this is a fork of).
struct Owned {
    /// The fork epoch it was started in.
    epoch: u64,
    /// Taken on drop.
    issuer: Option<EmbeddedIssuer>,
}

impl Owned {
    fn issuer(&self) -> &EmbeddedIssuer {
        // Only `drop` takes it.
        self.issuer.as_ref().expect("an issuer until dropped")
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        if let Some(issuer) = self.issuer.take() {
            if self.epoch == fork::epoch() {
                // Ours: release the slot and the node's lock.
                issuer.shutdown();
            } else {
                // A copy made by fork: the parent's to release.
                issuer.abandon();
            }
        }
    }
}

/// What a generator issuing through the issuer holds.
pub struct Issued {
    /// The issuer in force; `None` once closed.
    current: ArcSwapOption<Owned>,
    /// The settings to claim with again in a forked child; `None` for a
    /// static node, which cannot follow a fork.
    reclaim: Option<IssuerBuilder>,
    /// Set by `close()`.
    closed: AtomicBool,
    /// The layout, which no claim changes.
    layout: Layout,
    /// What the node is, for messages: "datacenter 1, machine 2 with
    /// state_dir /x" or "claimed from etcd (fleet f)".
    what: String,
}

impl Issued {
    /// Starts `builder`'s issuer on a thread of its own, without the
    /// interpreter lock. `reclaim` says whether a forked child may start
    /// it again (a claimed node) or must refuse (a static one).
    pub fn start(
        py: Python<'_>,
        builder: IssuerBuilder,
        layout: Layout,
        reclaim: bool,
        what: String,
    ) -> PyResult<Issued> {
        let owned = Issued::start_owned(py, builder.clone())?;
        Ok(Issued {
            current: ArcSwapOption::from(Some(owned)),
            reclaim: reclaim.then_some(builder),
            closed: AtomicBool::new(false),
            layout,
            what,
        })
    }

    fn start_owned(py: Python<'_>, builder: IssuerBuilder) -> PyResult<Arc<Owned>> {
        let epoch = fork::epoch();
        let issuer = py
            .detach(|| builder.start_blocking())
            .map_err(|error| refusals::start(py, error))?;
        Ok(Arc::new(Owned {
            epoch,
            issuer: Some(issuer),
        }))
    }

    /// The layout IDs are issued in.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// One new ID. The common case is one atomic load for the fork check,
    /// one for the issuer in force, and the issuer's own fast path.
    #[inline]
    pub fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        {
            let current = self.current.load();
            if let Some(owned) = current.as_ref()
                && owned.epoch == fork::epoch()
            {
                return match owned.issuer().next_id() {
                    Ok(id) => Ok(id.as_u64()),
                    Err(refusal) => Err(refusals::refusal(py, refusal)),
                };
            }
        }
        let owned = self.in_force(py)?;
        owned
            .issuer()
            .next_id()
            .map(SnowflakeId::as_u64)
            .map_err(|refusal| refusals::refusal(py, refusal))
    }

    /// `count` new IDs, made without the interpreter lock.
    pub fn next_ids(&self, py: Python<'_>, count: usize) -> PyResult<Vec<SnowflakeId>> {
        let owned = self.in_force(py)?;
        py.detach(|| owned.issuer().next_ids(count))
            .map_err(|refusal: Refusal| refusals::refusal(py, refusal))
    }

    /// The issuer this process issues with: the one in force, or, in a
    /// forked child of a claimed node, one of its own, started now.
    #[cold]
    fn in_force(&self, py: Python<'_>) -> PyResult<Arc<Owned>> {
        let epoch = fork::epoch();
        let current = self.current.load_full();
        match &current {
            Some(owned) if owned.epoch == epoch => return Ok(Arc::clone(owned)),
            None if self.closed.load(Ordering::Relaxed) => return Err(self.closed_error(py)),
            _ => {}
        }
        let Some(builder) = &self.reclaim else {
            return Err(raise(py, "ForkError", (fork::refusal(&self.what),)));
        };
        let started = Issued::start_owned(py, builder.clone())?;
        // Every store happens with the interpreter lock held; another
        // thread of this child may have started one while this one had
        // let go of it: keep the first, release this one.
        let now = self.current.load_full();
        if let Some(owned) = &now
            && owned.epoch == epoch
        {
            let owned = Arc::clone(owned);
            py.detach(|| drop(started));
            return Ok(owned);
        }
        if self.closed.load(Ordering::Relaxed) {
            py.detach(|| drop(started));
            return Err(self.closed_error(py));
        }
        // The parent's copy goes (abandoned: see `Owned::drop`).
        self.current.store(Some(Arc::clone(&started)));
        Ok(started)
    }

    fn closed_error(&self, py: Python<'_>) -> PyErr {
        raise(
            py,
            "FencedError",
            (
                format!(
                    "this generator ({}) was closed: it holds no node and issues no IDs",
                    self.what
                ),
                "closed",
                0.0,
            ),
        )
    }

    /// Releases the slot and the node's lock (or, in a forked child, drops
    /// the parent's copy without releasing it). Later calls raise
    /// `FencedError`. Calling it again does nothing.
    pub fn close(&self, py: Python<'_>) {
        self.closed.store(true, Ordering::Relaxed);
        let old = self.current.swap(None);
        py.detach(|| drop(old));
    }

    /// The issuer of this process, if any, without starting one.
    fn mine(&self) -> Option<Arc<Owned>> {
        self.current
            .load_full()
            .filter(|owned| owned.epoch == fork::epoch())
    }

    /// The node of the claim in force, if any.
    pub fn node(&self) -> Option<snowmint::Node> {
        let owned = self.mine()?;
        match owned.issuer().state() {
            NodeState::Active(claim) => Some(claim.node),
            NodeState::Fenced { .. } => None,
        }
    }

    /// The node's state as a dict: `state` ("active", "fenced", "closed"
    /// or "forked": this process has not claimed yet), `reason`, `slot`,
    /// `slots` (how many the node holds, from `slot`), `datacenter`, `machine`, `generation`, `valid_for_s`, `source`,
    /// `state_file`, `high_water_mark_ms`.
    pub fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for key in [
            "reason",
            "slot",
            "slots",
            "datacenter",
            "machine",
            "generation",
            "valid_for_s",
            "source",
            "state_file",
            "high_water_mark_ms",
        ] {
            dict.set_item(key, py.None())?;
        }
        let Some(owned) = self.mine() else {
            let (state, reason) = if self.closed.load(Ordering::Relaxed) {
                ("closed", "the generator was closed")
            } else {
                (
                    "forked",
                    "this process is a fork of the one that made the generator and has not issued yet",
                )
            };
            dict.set_item("state", state)?;
            dict.set_item("reason", reason)?;
            return Ok(dict);
        };
        let report = owned.issuer().report();
        dict.set_item("source", report.source)?;
        match &report.claim {
            Some(claim) if report.readiness.is_ok() => {
                dict.set_item("state", "active")?;
                dict.set_item("slot", claim.slot)?;
                dict.set_item("slots", claim.slots)?;
                let (datacenter, machine) = self.layout.pair_of(claim.node);
                dict.set_item("datacenter", datacenter)?;
                dict.set_item("machine", machine)?;
                dict.set_item("generation", claim.generation)?;
                dict.set_item("valid_for_s", report.valid_for.map(|d| d.as_secs_f64()))?;
            }
            _ => {
                dict.set_item("state", "fenced")?;
                let reason = match (&report.readiness, &report.fenced_reason) {
                    (Err(refusal), _) => refusal.to_string(),
                    (Ok(()), Some(reason)) => reason.clone(),
                    (Ok(()), None) => "no slot is held".to_owned(),
                };
                dict.set_item("reason", reason)?;
            }
        }
        dict.set_item(
            "state_file",
            report.state_file.map(|p| p.display().to_string()),
        )?;
        dict.set_item("high_water_mark_ms", report.high_water_mark_ms)?;
        Ok(dict)
    }

    /// What the node is, for `repr`.
    pub fn what(&self) -> &str {
        &self.what
    }
}
