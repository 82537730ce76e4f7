//! Identities that cannot be lost: explicit values and hostname ordinals.

use std::collections::BTreeMap;

use snowmint::{Layout, Node};
use tokio::sync::watch;

use crate::{BoxFuture, Claim, FleetError, NodeState, SlotSource, hostname};

/// A node identity fixed at start: from flags, environment or a config file
/// (`static`), or from the ordinal of the hostname (`hostname`).
///
/// It is active from the start, under generation 1, with no deadline and no
/// floor; `reserve` has nothing to store beyond the local state file;
/// `release` fences it (the process is shutting down).
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, Node};
/// use snowmint_fleet::{SlotSource, StaticSource};
///
/// let source = StaticSource::new(Layout::TWITTER, Node::from_slot(103))?;
/// let state = source.state().borrow().clone();
/// let claim = state.claim_at(std::time::Instant::now()).unwrap();
/// assert_eq!((claim.slot, claim.generation), (103, 1));
///
/// let source = StaticSource::from_hostname(Layout::TWITTER, "ids-45")?;
/// assert_eq!(source.kind(), "hostname");
/// let state = source.state().borrow().clone();
/// assert_eq!(state.claim_at(std::time::Instant::now()).unwrap().node, Node::from_slot(45));
/// # Ok::<(), snowmint_fleet::FleetError>(())
/// ```
#[derive(Debug)]
pub struct StaticSource {
    kind: &'static str,
    state: watch::Sender<NodeState>,
}

impl StaticSource {
    /// The node given explicitly; checked against the layout.
    pub fn new(layout: Layout, node: Node) -> Result<StaticSource, FleetError> {
        let slot = layout.slot_of(node)?;
        Ok(StaticSource::active(
            "static",
            (slot, 1),
            node,
            BTreeMap::new(),
        ))
    }

    /// A node given explicitly that holds `count` slots: from the slot of
    /// `node` on (`slot .. slot + count`), `count` a power of two. Like
    /// any fixed node, it is kept apart from the other processes on its
    /// host by the lock of each slot's state file: a range that overlaps
    /// another running node's is refused, naming the slot held.
    ///
    /// # Errors
    ///
    /// A node outside the layout, or a block the layout refuses
    /// ([`Layout::check_slot_block`]: a count that is 0 or not a power of
    /// two, a block past the layout's last slot, node fields not side by
    /// side).
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::{Layout, Node};
    /// use snowmint_fleet::{SlotSource, StaticSource};
    ///
    /// let source = StaticSource::with_slots(Layout::TWITTER, Node::from_slot(8), 4)?;
    /// let state = source.state().borrow().clone();
    /// let claim = state.claim_at(std::time::Instant::now()).unwrap();
    /// assert_eq!((claim.slot, claim.slots), (8, 4));
    /// assert_eq!(claim.details["slots_held"], "8-11");
    /// let err = StaticSource::with_slots(Layout::TWITTER, Node::from_slot(8), 3).unwrap_err();
    /// assert!(err.to_string().starts_with("slots per node 3 is not valid"), "{err}");
    /// assert!(StaticSource::with_slots(Layout::TWITTER, Node::from_slot(1022), 4).is_err());
    /// # Ok::<(), snowmint_fleet::FleetError>(())
    /// ```
    pub fn with_slots(layout: Layout, node: Node, count: u64) -> Result<StaticSource, FleetError> {
        let slot = layout.slot_of(node)?;
        layout.check_slot_block(slot, count)?;
        let mut details = BTreeMap::new();
        if count > 1 {
            details.insert(
                "slots_held".to_owned(),
                crate::coordinator::block_text(slot, count),
            );
        }
        Ok(StaticSource::active("static", (slot, count), node, details))
    }

    /// The node whose slot is the hostname's ordinal (`ids-12` -> slot 12),
    /// its node fields as the layout splits it.
    pub fn from_hostname(layout: Layout, hostname: &str) -> Result<StaticSource, FleetError> {
        let slot = hostname::ordinal(hostname)?;
        let node = layout
            .node_from_slot(slot)
            .map_err(|error| FleetError::Hostname {
                hostname: hostname.to_owned(),
                reason: error.to_string(),
            })?;
        let details = BTreeMap::from([("hostname".to_owned(), hostname.to_owned())]);
        Ok(StaticSource::active("hostname", (slot, 1), node, details))
    }

    fn active(
        kind: &'static str,
        (slot, slots): (u64, u64),
        node: Node,
        details: BTreeMap<String, String>,
    ) -> StaticSource {
        let claim = Claim {
            slot,
            slots,
            node,
            generation: 1,
            valid_until: None,
            floor_ms: None,
            details,
        };
        StaticSource {
            kind,
            state: watch::Sender::new(NodeState::Active(claim)),
        }
    }
}

impl SlotSource for StaticSource {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn state(&self) -> watch::Receiver<NodeState> {
        self.state.subscribe()
    }

    fn reserve(&self, _generation: u64, _mark_ms: i64) -> BoxFuture<'_, Result<(), FleetError>> {
        // Nothing is shared: the local state file is all there is.
        Box::pin(async { Ok(()) })
    }

    fn release(&self) -> BoxFuture<'_, ()> {
        self.state.send_replace(NodeState::Fenced {
            reason: "released at shutdown".to_owned(),
        });
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_nodes_are_checked_against_the_layout() {
        let err = StaticSource::new(Layout::TWITTER, Node::from_slot(1024)).unwrap_err();
        assert_eq!(err.to_string(), "slot 1024 is out of range (0..=1023)");
    }

    #[test]
    fn hostname_slots_beyond_the_layout_name_the_hostname() {
        let err = StaticSource::from_hostname(Layout::TWITTER, "ids-1024").unwrap_err();
        assert_eq!(
            err.to_string(),
            "hostname \"ids-1024\": slot 1024 is out of range (0..=1023)"
        );
    }

    #[tokio::test]
    async fn release_fences_the_node() {
        let source = StaticSource::new(Layout::TWITTER, Node::default()).unwrap();
        let mut state = source.state();
        source.release().await;
        assert!(state.has_changed().unwrap());
        assert!(matches!(
            &*state.borrow_and_update(),
            NodeState::Fenced { .. }
        ));
    }
}
