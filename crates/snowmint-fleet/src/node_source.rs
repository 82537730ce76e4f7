//! Where a node's identity comes from, and the one mapping from that to a
//! running [`SlotSource`]: `snowmint serve`, `snowmint generate` and
//! embedded issuers ([`IssuerBuilder`](crate::IssuerBuilder)) all go through
//! [`NodeSource::slot_source`].

use std::path::Path;
use std::sync::Arc;

use snowmint::{Layout, Node};

use crate::{
    CoordinatorConfig, CoordinatorUrl, FleetError, SettingError, SlotSource, StaticSource,
    last_written_slot, system_hostname,
};

/// Where a node's (datacenter, machine) comes from (docs/ARCHITECTURE.md
/// §3, invariant 2).
///
/// # Examples
///
/// ```
/// use snowmint::{Layout, Node};
/// use snowmint_fleet::NodeSource;
///
/// let dir = std::env::temp_dir();
/// let source = NodeSource::Static(Node::from_slot(34))
///     .slot_source(Layout::TWITTER, &dir, None)?;
/// assert_eq!(source.kind(), "static");
/// let source = NodeSource::Hostname(Some("ids-12".into())).slot_source(Layout::TWITTER, &dir, None)?;
/// assert_eq!(source.kind(), "hostname");
/// let Err(err) = NodeSource::Static(Node::from_slot(1024))
///     .slot_source(Layout::TWITTER, &dir, None)
/// else {
///     panic!("slot 1024 is outside the Twitter layout");
/// };
/// assert_eq!(err.to_string(), "slot 1024 is out of range (0..=1023)");
/// # Ok::<(), snowmint_fleet::FleetError>(())
/// ```
// Made once per node: a coordinator's settings (with their layout) are
// large, and boxing them would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeSource {
    /// Given explicitly (flags, environment, configuration).
    Static(Node),
    /// Given explicitly, holding `slots` slots from the node's own on (a
    /// power of two): see [`StaticSource::with_slots`].
    StaticSlots {
        /// The node of the block's first slot.
        node: Node,
        /// How many slots it holds.
        slots: u64,
    },
    /// The ordinal of a hostname (`ids-12` -> slot 12); `None` reads the
    /// system's.
    Hostname(Option<String>),
    /// Claimed from a coordination service (etcd, ZooKeeper, PostgreSQL).
    Coordinator {
        /// `etcd://HOST:PORT[,HOST:PORT...]`, `zk://HOST:PORT[,...][/CHROOT]`
        /// or `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?...]`.
        url: CoordinatorUrl,
        /// The fleet, the slots this node may claim, the claim TTL and
        /// the layout (its holder is named by
        /// [`slot_source`](NodeSource::slot_source)).
        config: CoordinatorConfig,
    },
}

impl NodeSource {
    /// Starts the slot source: a [`StaticSource`] for a given node or a
    /// hostname's ordinal, checked against `layout`; a claim engine for a
    /// coordinator ([`connect`](crate::connect)), which starts claiming at
    /// once in the background (so call it inside a Tokio runtime), tries
    /// first the slot whose state file in `state_dir` was written last
    /// (the slot a restarted node most likely held), and writes `holder`
    /// (when given) into the slot key it claims.
    ///
    /// # Errors
    ///
    /// A node or hostname ordinal outside `layout`; an unreadable system
    /// hostname; a coordinator whose layout is not `layout`
    /// ([`FleetError::Setting`]); a coordinator this build leaves out, or
    /// no Tokio runtime ([`FleetError::Coordinator`]).
    pub fn slot_source(
        &self,
        layout: Layout,
        state_dir: &Path,
        holder: Option<String>,
    ) -> Result<Arc<dyn SlotSource>, FleetError> {
        match self {
            NodeSource::Static(node) => Ok(Arc::new(StaticSource::new(layout, *node)?)),
            NodeSource::StaticSlots { node, slots } => {
                Ok(Arc::new(StaticSource::with_slots(layout, *node, *slots)?))
            }
            NodeSource::Hostname(name) => {
                let hostname = match name {
                    Some(name) => name.clone(),
                    None => system_hostname()?,
                };
                Ok(Arc::new(StaticSource::from_hostname(layout, &hostname)?))
            }
            NodeSource::Coordinator { url, config } => {
                if config.layout() != layout {
                    return Err(SettingError::LayoutMismatch {
                        coordinator: Box::new(config.layout()),
                        issued: Box::new(layout),
                    }
                    .into());
                }
                let mut config = config
                    .clone()
                    // A restarted node tries the slot it held first, so
                    // that it tends to get it back.
                    .with_preferred_slot(last_written_slot(state_dir, layout));
                if let Some(holder) = holder {
                    config = config.with_holder(holder);
                }
                crate::connect(url, config)
            }
        }
    }

    /// The node, when it is given explicitly.
    pub fn node(&self) -> Option<Node> {
        match self {
            NodeSource::Static(node) | NodeSource::StaticSlots { node, .. } => Some(*node),
            _ => None,
        }
    }
}
