//! Why the claim engine fenced the node, or could not raise the mark.
//!
//! Every message is one sentence for the people who read `/readyz`, 503
//! answers and logs: it names the coordinator once and says what went
//! wrong in plain words. The client library's own error, with every
//! detail, is kept apart ([`ClaimError::details`]) and written to the log
//! only.

use std::time::Duration;

use super::{BackendError, SlotRange};

/// An error of the claim engine.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::{BackendError, ClaimError};
///
/// let err = ClaimError::from_backend(
///     "etcd://127.0.0.1:2379",
///     "lease",
///     BackendError::unreachable("connection refused"),
/// );
/// assert_eq!(
///     err.to_string(),
///     "cannot reach the coordinator etcd://127.0.0.1:2379 (connection refused)"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClaimError {
    /// No connection to the coordinator could be made or kept.
    #[error("cannot reach the coordinator {coordinator} ({cause})")]
    Unreachable {
        /// The coordinator's URL.
        coordinator: String,
        /// What the backend saw.
        cause: BackendError,
    },
    /// The coordinator could not serve a request (it answered with an
    /// error, or the exchange broke off).
    #[error("the coordinator {coordinator} could not serve the request: {cause}")]
    Failed {
        /// The coordinator's URL.
        coordinator: String,
        /// What the backend saw.
        cause: BackendError,
    },
    /// The lease or session ended before a slot was held.
    #[error("the coordinator {coordinator} ended the {session}: {cause}")]
    SessionLost {
        /// The coordinator's URL.
        coordinator: String,
        /// What the coordinator calls a session: `lease`, `session`.
        session: &'static str,
        /// What the backend saw.
        cause: BackendError,
    },
    /// A request got no answer in time.
    #[error("the coordinator {coordinator} did not answer within {} ms", limit.as_millis())]
    NoAnswer {
        /// The coordinator's URL.
        coordinator: String,
        /// How long the engine waited.
        limit: Duration,
    },
    /// Every slot of the range is held by another node (with several
    /// slots per node: every aligned block of the range has a slot held).
    #[error("{}", all_taken(fleet, slots, *per_node))]
    AllTaken {
        /// The fleet's name.
        fleet: String,
        /// The slots this node may claim.
        slots: SlotRange,
        /// How many slots the node holds at once.
        per_node: u64,
    },
    /// A slot was won, but reading its mark took so long that the claim
    /// could not be used before its deadline.
    #[error("claiming slot {slot} took longer than the TTL of {} ms allows", ttl.as_millis())]
    SlowClaim {
        /// The slot won.
        slot: u64,
        /// The TTL granted.
        ttl: Duration,
    },
    /// A slot of the range maps to no node of the layout.
    #[error("slot {slot} does not fit the layout: {reason}")]
    OutsideLayout {
        /// The slot won.
        slot: u64,
        /// What the layout says.
        reason: snowmint::Error,
    },
    /// No keep-alive was confirmed before the claim's deadline.
    #[error(
        "the claim on {} could not be confirmed within its TTL of {} ms: {}",
        held(*slot, *slots),
        ttl.as_millis(),
        last.as_ref().map_or_else(|| "no keep-alive was answered".to_owned(), ToString::to_string)
    )]
    Unconfirmed {
        /// The slot held (the first of a block).
        slot: u64,
        /// How many slots the claim holds, from `slot` up.
        slots: u64,
        /// The TTL in force.
        ttl: Duration,
        /// Why the last keep-alive failed, if one was tried.
        last: Option<Box<ClaimError>>,
    },
    /// The coordinator says the claim is gone: the lease or session
    /// expired, or the slot key is no longer this node's.
    #[error("the claim on {} is lost: {cause}", held(*slot, *slots))]
    ClaimLost {
        /// The slot held (the first of a block).
        slot: u64,
        /// How many slots the claim holds, from `slot` up.
        slots: u64,
        /// What the backend saw.
        cause: BackendError,
    },
    /// The slot's stored mark is not a number.
    #[error(
        "the high-water mark at {path} is {text:?}, not a Unix millisecond count; fix or delete it"
    )]
    BadMark {
        /// The mark's key.
        path: String,
        /// What it holds.
        text: String,
    },
    /// Other writers kept moving the mark.
    #[error("the high-water mark at {path} kept changing under {attempts} attempts to raise it")]
    MarkContended {
        /// The mark's key.
        path: String,
        /// How many compare-and-set attempts were made.
        attempts: usize,
    },
    /// Other writers kept changing the slot's claim history.
    #[error("the claim history at {path} kept changing under {attempts} attempts to write it")]
    HistoryContended {
        /// The history's key.
        path: String,
        /// How many compare-and-set attempts were made.
        attempts: usize,
    },
    /// This node's clock is further from the clocks it was checked against
    /// than the node allows: it claims no slot (or gives its slot up)
    /// until the clock is back in range.
    #[error("{0}")]
    ClockSkew(super::ClockVerdict),
    /// The fleet was started in another layout than this node's: the same
    /// slot would make the same IDs in both.
    #[error(
        "fleet {fleet} is recorded with layout {recorded} at {path}, but this node uses {ours}; the nodes of a fleet must share one layout"
    )]
    LayoutMismatch {
        /// The fleet's name.
        fleet: String,
        /// The record's key.
        path: String,
        /// The layout recorded, as its text ([`Layout::spec`](snowmint::Layout::spec)).
        recorded: String,
        /// This node's layout, as its text.
        ours: String,
    },
    /// The slot held was given up because this process cannot issue as
    /// its node: another process on this host holds the node's lock.
    #[error("{} given up for another: {reason}", given_up(*slot, *slots))]
    PassedOver {
        /// The slot given up (the first of a block).
        slot: u64,
        /// How many slots were given up, from `slot` up.
        slots: u64,
        /// Why (the lock's message: the state directory, the holder's pid).
        reason: String,
    },
    /// Every slot of the range is either held by another node or passed
    /// over, because another process on this host holds its node.
    #[error(
        "every free slot of fleet {fleet} in {slots} is passed over: {}",
        passed_over.iter().map(|(slot, reason)| format!("slot {slot}: {reason}")).collect::<Vec<_>>().join("; ")
    )]
    OnlyPassedOver {
        /// The fleet's name.
        fleet: String,
        /// The slots this node may claim.
        slots: SlotRange,
        /// The slots passed over, with why.
        passed_over: Vec<(u64, String)>,
    },
    /// The fleet's layout record cannot be read as a layout.
    #[error("the layout record at {path} is {text:?}, which names no layout; fix or delete it")]
    BadLayoutRecord {
        /// The record's key.
        path: String,
        /// What it holds.
        text: String,
    },
}

/// The slots a claim holds, for its errors: "slot 3" for one, "slots
/// 4-7" for a block.
fn held(first: u64, count: u64) -> String {
    if count > 1 {
        format!("slots {}", super::slots::block_text(first, count))
    } else {
        format!("slot {first}")
    }
}

/// "slot 3 was" or "slots 4-7 were".
fn given_up(first: u64, count: u64) -> String {
    let verb = if count > 1 { "were" } else { "was" };
    format!("{} {verb}", held(first, count))
}

impl ClaimError {
    /// The error for a failed backend call to `coordinator`, whose
    /// sessions are called `session`.
    pub fn from_backend(coordinator: &str, session: &'static str, cause: BackendError) -> Self {
        let coordinator = coordinator.to_owned();
        match cause {
            BackendError::Lost { .. } => ClaimError::SessionLost {
                coordinator,
                session,
                cause,
            },
            BackendError::Unreachable { .. } => ClaimError::Unreachable { coordinator, cause },
            BackendError::Unavailable { .. } => ClaimError::Failed { coordinator, cause },
        }
    }

    /// The client library's error behind this one, with every detail, for
    /// the log.
    pub fn details(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        match self {
            ClaimError::Unreachable { cause, .. }
            | ClaimError::Failed { cause, .. }
            | ClaimError::SessionLost { cause, .. }
            | ClaimError::ClaimLost { cause, .. } => {
                let (BackendError::Lost { source, .. }
                | BackendError::Unreachable { source, .. }
                | BackendError::Unavailable { source, .. }) = cause;
                source.as_deref()
            }
            ClaimError::Unconfirmed {
                last: Some(last), ..
            } => last.details(),
            _ => None,
        }
    }
}

/// "all N slots of fleet F in A-B are taken", or, for a range of one slot,
/// "the only slot of fleet F (A-A) is taken".
fn all_taken(fleet: &str, slots: &SlotRange, per_node: u64) -> String {
    if per_node > 1 {
        return match slots.blocks(per_node).count() {
            1 => format!(
                "the only block of {per_node} slots of fleet {fleet} in {slots} has a slot taken"
            ),
            n => format!(
                "all {n} blocks of {per_node} slots of fleet {fleet} in {slots} have a slot taken"
            ),
        };
    }
    match slots.len() {
        1 => format!("the only slot of fleet {fleet} ({slots}) is taken"),
        n => format!("all {n} slots of fleet {fleet} in {slots} are taken"),
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error;

    use super::*;

    const URL: &str = "etcd://127.0.0.1:2379";

    /// No word group of three appears twice: the sign of a context added
    /// at two levels.
    fn assert_no_repetition(message: &str) {
        let words: Vec<&str> = message.split_whitespace().collect();
        let mut seen = std::collections::HashSet::new();
        for group in words.windows(3) {
            assert!(seen.insert(group), "{group:?} repeats in {message:?}");
        }
    }

    fn refused() -> BackendError {
        BackendError::unreachable("connection refused")
            .with_source(std::io::Error::other("tcp connect error"))
    }

    #[test]
    fn backend_errors_name_the_coordinator_once() {
        let cases = [
            (
                ClaimError::from_backend(URL, "lease", refused()),
                "cannot reach the coordinator etcd://127.0.0.1:2379 (connection refused)",
            ),
            (
                ClaimError::from_backend(
                    URL,
                    "lease",
                    BackendError::unavailable("etcdserver: too many requests"),
                ),
                "the coordinator etcd://127.0.0.1:2379 could not serve the request: etcdserver: too many requests",
            ),
            (
                ClaimError::from_backend(URL, "lease", BackendError::lost("lease 7f expired")),
                "the coordinator etcd://127.0.0.1:2379 ended the lease: lease 7f expired",
            ),
            (
                ClaimError::NoAnswer {
                    coordinator: URL.into(),
                    limit: Duration::from_millis(1500),
                },
                "the coordinator etcd://127.0.0.1:2379 did not answer within 1500 ms",
            ),
        ];
        for (error, expected) in cases {
            let message = error.to_string();
            assert_eq!(message, expected);
            assert_no_repetition(&message);
            assert_eq!(message.matches(URL).count(), 1, "{message}");
        }
    }

    /// A keep-alive failure inside an unconfirmed claim reads as one
    /// sentence, and its details stay reachable for the log.
    #[test]
    fn unconfirmed_claims_say_why_the_last_keep_alive_failed() {
        let unconfirmed = ClaimError::Unconfirmed {
            slot: 3,
            slots: 1,
            ttl: Duration::from_secs(2),
            last: Some(Box::new(ClaimError::from_backend(URL, "lease", refused()))),
        };
        let message = unconfirmed.to_string();
        assert_eq!(
            message,
            "the claim on slot 3 could not be confirmed within its TTL of 2000 ms: \
             cannot reach the coordinator etcd://127.0.0.1:2379 (connection refused)"
        );
        assert_no_repetition(&message);
        let details = unconfirmed.details().expect("the client's error is kept");
        assert_eq!(details.to_string(), "tcp connect error");
        let none = ClaimError::Unconfirmed {
            slot: 3,
            slots: 1,
            ttl: Duration::from_secs(2),
            last: None,
        };
        assert_eq!(
            none.to_string(),
            "the claim on slot 3 could not be confirmed within its TTL of 2000 ms: no keep-alive was answered"
        );
    }

    /// The errors of a claim on a block of slots name the whole block:
    /// every slot of it stops at once.
    #[test]
    fn errors_of_a_block_name_every_slot() {
        let unconfirmed = ClaimError::Unconfirmed {
            slot: 4,
            slots: 4,
            ttl: Duration::from_secs(2),
            last: None,
        };
        assert_eq!(
            unconfirmed.to_string(),
            "the claim on slots 4-7 could not be confirmed within its TTL of 2000 ms: no keep-alive was answered"
        );
        let lost = ClaimError::ClaimLost {
            slot: 6,
            slots: 2,
            cause: BackendError::lost(
                "key /snowmint/ids/slots/7 is no longer attached to lease 7f",
            ),
        };
        assert_eq!(
            lost.to_string(),
            "the claim on slots 6-7 is lost: key /snowmint/ids/slots/7 is no longer attached to lease 7f"
        );
        let passed = |slots| ClaimError::PassedOver {
            slot: 8,
            slots,
            reason: "node 0/8 is locked by process 41".into(),
        };
        assert_eq!(
            passed(1).to_string(),
            "slot 8 was given up for another: node 0/8 is locked by process 41"
        );
        assert_eq!(
            passed(8).to_string(),
            "slots 8-15 were given up for another: node 0/8 is locked by process 41"
        );
    }

    /// The message never carries the client library's text: that is what
    /// `details` is for.
    #[test]
    fn details_stay_out_of_the_message() {
        let error = ClaimError::from_backend(URL, "lease", refused());
        assert!(!error.to_string().contains("tcp connect error"));
        assert!(error.source().is_none(), "the cause is in the message");
        let lost = ClaimError::ClaimLost {
            slot: 0,
            slots: 1,
            cause: BackendError::lost(
                "key /snowmint/ids/slots/0 is no longer attached to lease 7f",
            ),
        };
        assert_eq!(
            lost.to_string(),
            "the claim on slot 0 is lost: key /snowmint/ids/slots/0 is no longer attached to lease 7f"
        );
        assert!(lost.details().is_none());
    }

    #[test]
    fn mark_errors_name_the_key() {
        let bad = ClaimError::BadMark {
            path: "/snowmint/ids/hwm/3".into(),
            text: "soon".into(),
        };
        assert_eq!(
            bad.to_string(),
            "the high-water mark at /snowmint/ids/hwm/3 is \"soon\", not a Unix millisecond count; fix or delete it"
        );
        let contended = ClaimError::MarkContended {
            path: "/snowmint/ids/hwm/3".into(),
            attempts: 4,
        };
        assert_eq!(
            contended.to_string(),
            "the high-water mark at /snowmint/ids/hwm/3 kept changing under 4 attempts to raise it"
        );
    }

    #[test]
    fn layout_errors_name_both_layouts_and_the_key() {
        let mismatch = ClaimError::LayoutMismatch {
            fleet: "ids".into(),
            path: "/snowmint/ids/layout".into(),
            recorded: "41/5/5/12@1288834974657".into(),
            ours: "41/5/7/10@1288834974657".into(),
        };
        let message = mismatch.to_string();
        assert_eq!(
            message,
            "fleet ids is recorded with layout 41/5/5/12@1288834974657 at /snowmint/ids/layout, \
             but this node uses 41/5/7/10@1288834974657; the nodes of a fleet must share one layout"
        );
        assert_no_repetition(&message);
        let bad = ClaimError::BadLayoutRecord {
            path: "/snowmint/ids/layout".into(),
            text: "twitter?".into(),
        };
        assert_eq!(
            bad.to_string(),
            "the layout record at /snowmint/ids/layout is \"twitter?\", which names no layout; fix or delete it"
        );
    }
}
