//! The issuer's refusals and start-up errors as Python exceptions.
//!
//! A refusal (`snowmint_fleet::Refusal`) is "not now": the exception
//! carries the reason's code and `retry_after`. A start-up error
//! (`snowmint_fleet::FleetError`) is "not like this": another process on
//! the node, a mark ahead of the clock, a setting that cannot be used.

use pyo3::prelude::*;
use snowmint_fleet::{FleetError, Refusal};

use crate::errors::{self, raise};

/// The exception for a refusal to issue:
///
/// - no slot held, or a claim whose generator is not set up:
///   `FencedError`;
/// - the clock behind the last ID: `ClockBehindError`;
/// - anything else (the mark unwritable, the clock out of the layout's
///   range, a wait this thread cannot make): `RefusedError`.
pub fn refusal(py: Python<'_>, refusal: Refusal) -> PyErr {
    let message = refusal.to_string();
    let code = refusal.code();
    let retry_after = refusal.retry_after().as_secs_f64();
    match refusal {
        Refusal::ClockBehind { last_ms, now_ms } => {
            raise(py, "ClockBehindError", (message, last_ms, now_ms))
        }
        Refusal::NoClaim { .. } | Refusal::NotReady { .. } => {
            raise(py, "FencedError", (message, code, retry_after))
        }
        _ => raise(py, "RefusedError", (message, code, retry_after)),
    }
}

/// The exception for an issuer that could not start.
pub fn start(py: Python<'_>, error: FleetError) -> PyErr {
    let message = error.to_string();
    match error {
        FleetError::Id(core) => errors::to_py(py, core, None),
        FleetError::NodeLocked { lock_file, pid, .. } => raise(
            py,
            "NodeInUseError",
            (message, pid, lock_file.display().to_string()),
        ),
        FleetError::MarkAhead {
            mark_ms, now_ms, ..
        } => raise(py, "ClockBehindError", (message, mark_ms, now_ms)),
        FleetError::Fenced { .. } => raise(py, "FencedError", (message, "no_claim", 1.0)),
        FleetError::Io { .. } | FleetError::StateDir { .. } | FleetError::StateFile { .. } => {
            raise(py, "StateError", (message,))
        }
        // A coordinator URL, a fleet name, a slot range, a TTL or a
        // combination of settings that cannot be used. The value is not
        // repeated: a URL may hold a password (the message masks it).
        FleetError::Config(_) | FleetError::Setting(_) | FleetError::Hostname { .. } => {
            raise(py, "InvalidValueError", (message, "settings", py.None()))
        }
        _ => raise(py, "SnowmintError", (message,)),
    }
}
