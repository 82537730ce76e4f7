//! [`FleetError`], the errors of this crate, and [`SettingError`], the
//! settings that cannot be used together.

use std::path::PathBuf;
use std::time::Duration;

use snowmint::value::format_duration;
use snowmint::{Layout, Node};

use crate::coordinator::{ClaimError, ConfigError};
use crate::{lock, reason};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FleetError {
    /// The node's identity is not valid for the layout.
    #[error(transparent)]
    Id(#[from] snowmint::Error),
    /// Reading or writing local state failed.
    ///
    /// The message says what was being done and the system's words for
    /// what went wrong ("cannot read the state file /x: permission
    /// denied"); the I/O error itself is in `error`, not repeated as a
    /// source.
    #[error("{context}: {}", reason::io_reason(error))]
    Io {
        /// What was being done, with the path: "cannot read the state
        /// file /x".
        context: String,
        /// The underlying error.
        error: std::io::Error,
    },
    /// The state directory cannot be used.
    #[error("state directory {} {problem}", path.display())]
    StateDir {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it: "is not a directory (it is a file)".
        problem: String,
    },
    /// The coordination service could not be used (this build lacks its
    /// backend, or there is no async runtime to run the claim engine in).
    #[error("coordinator {coordinator}: {message}")]
    Coordinator {
        /// Which coordinator (its URL).
        coordinator: String,
        /// What went wrong.
        message: String,
    },
    /// The claim engine failed (a mark could not be written).
    #[error(transparent)]
    Claim(#[from] ClaimError),
    /// The node holds no valid claim.
    #[error("no slot is held: {reason}")]
    Fenced {
        /// Why.
        reason: String,
    },
    /// A state file that exists but cannot be understood.
    #[error("state file {}: {reason}", path.display())]
    StateFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The recorded high-water mark lies further ahead of the clock than the
    /// node is willing to wait at start.
    #[error(
        "the state file {} says IDs may have been issued up to {} ({mark_ms} ms), but the clock reads {} ({now_ms} ms), {} ms earlier; that is more than the {} ms this node waits at start, so it refuses to start. Fix the clock, or wait until it passes the mark",
        path.display(),
        snowmint::format_time(*mark_ms),
        snowmint::format_time(*now_ms),
        mark_ms.saturating_sub(*now_ms),
        max_wait.as_millis()
    )]
    MarkAhead {
        /// The state file.
        path: PathBuf,
        /// The recorded mark, Unix ms.
        mark_ms: i64,
        /// The clock reading, Unix ms.
        now_ms: i64,
        /// The longest gap waited out.
        max_wait: Duration,
    },
    /// Another holder (another process on this host, or another handle in
    /// this one) has the node's lock: it issues as this node from this
    /// state directory.
    #[error("{}", lock::held_message(state_dir, node_text.as_deref(), lock_file, *pid))]
    NodeLocked {
        /// The state directory.
        state_dir: PathBuf,
        /// The node, when known.
        node: Option<Node>,
        /// The node as its layout names it (`datacenter 3 machine 7`),
        /// when known.
        node_text: Option<String>,
        /// The lock file.
        lock_file: PathBuf,
        /// The holder's pid, as it wrote it into the lock file (not yet
        /// written, or unreadable: `None`).
        pid: Option<u32>,
    },
    /// A hostname that yields no slot.
    #[error("hostname {:?}: {reason}", snowmint::value::echo(.hostname))]
    Hostname {
        /// The hostname.
        hostname: String,
        /// Why it yields no slot.
        reason: String,
    },
    /// A coordinator setting (URL, fleet, slots, claim TTL) that cannot be
    /// used; the message names the value and what is accepted.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Settings of an [`IssuerBuilder`](crate::IssuerBuilder) that cannot
    /// be used together, or a missing one.
    #[error(transparent)]
    Setting(#[from] SettingError),
}

/// Settings of an [`IssuerBuilder`](crate::IssuerBuilder) (or of a node's
/// source) that cannot be used together, or a missing one; each message
/// names the settings and the way out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingError {
    /// No node was given.
    #[error(
        "no node was given: call .node(datacenter, machine), .hostname_ordinal() or .coordinator(url, fleet)"
    )]
    NoNode,
    /// Slots or a claim TTL given to a node that claims no slot.
    #[error(
        "slots and claim_ttl apply to a coordinated node only: call .coordinator(url, fleet) too, or leave them out"
    )]
    ClaimSettingsWithoutCoordinator,
    /// Several slots per node for a node whose slot is a hostname's
    /// ordinal or a source given as it is.
    #[error(
        "slots_per_node applies to .node(datacenter, machine) (the node's slots from its own on) and .coordinator(url, fleet) only"
    )]
    SlotsPerNodeWithoutBlock,
    /// A mark step longer than the start-up wait.
    #[error(
        "mark_step {} is longer than mark_wait_max {}: a node killed and restarted at once would refuse to start",
        format_duration(*mark_step),
        format_duration(*mark_wait_max)
    )]
    MarkStepAboveWait {
        /// The mark step.
        mark_step: Duration,
        /// The longest wait at start.
        mark_wait_max: Duration,
    },
    /// A coordinator's settings made for another layout than the IDs'.
    #[error(
        "the coordinator's settings are for layout {coordinator}, but IDs are issued in layout {issued}"
    )]
    LayoutMismatch {
        /// The layout of the coordinator's settings (boxed: a layout is
        /// large, and errors travel by value).
        coordinator: Box<Layout>,
        /// The layout IDs are issued in.
        issued: Box<Layout>,
    },
}
