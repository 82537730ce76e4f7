//! What a coordinated node is told: where the coordinator is, which fleet it
//! joins, which slots it may take, how long a claim lives, and who it is.
//!
//! Each of these values has its one reading, here ([`parse_claim_ttl`]) or
//! in its own module ([`CoordinatorUrl`] in `url.rs`, [`SlotRange`] in
//! `slots.rs`, [`FleetName`] in `fleet_name.rs`), used by the service's
//! flags, environment and configuration file alike. Like the core's
//! readers, they take text as it is (no trimming) and echo it, cut when
//! long, in their messages.

use super::access::CoordinatorAccess;
use super::clock_check::{ClockCheck, PeerClock, PeerClockHandle};
use super::fleet_name::FleetName;
use super::history::HistoryRetention;
use super::slots::SlotRange;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use snowmint::{Clock, Layout, SystemClock};

/// The shortest claim TTL accepted: etcd leases count whole seconds.
pub const MIN_TTL: Duration = Duration::from_secs(1);
/// The longest claim TTL accepted: longer ones keep a crashed node's slot
/// (and its IDs) out of use for too long to be useful.
pub const MAX_TTL: Duration = Duration::from_secs(3600);

/// The longest fleet name accepted, in characters: a fleet name is part of
/// every key and znode path of the fleet.
pub const MAX_FLEET_NAME: usize = 64;

/// What the claim TTL is called in messages.
const TTL_NAME: &str = "claim_ttl";

pub(super) const URL_FORMS: &str = "etcd://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT...], \
     zk://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT...][/CHROOT] or \
     postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=...]";

/// A configuration value that cannot be used; the message names the value
/// and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The coordinator URL cannot be read.
    #[error("coordinator URL {value:?} is invalid: {reason} (expected {URL_FORMS})")]
    Url {
        /// The URL as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The slot range cannot be read or does not fit the layout.
    #[error("slots {value:?} is invalid: {reason}")]
    Slots {
        /// The range as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The fleet name cannot be used in a key or znode path.
    #[error("fleet name {value:?} is invalid: {reason}")]
    Fleet {
        /// The name as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The number of slots per node is not a power of two, or the slot
    /// range holds no aligned block of that many.
    #[error("slots per node {value} is invalid: {reason}")]
    SlotsPerNode {
        /// The count as given.
        value: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// The claim TTL is not a duration, or is outside
    /// [`MIN_TTL`]..=[`MAX_TTL`].
    #[error(transparent)]
    Ttl(snowmint::Error),
    /// The coordinator's TLS files or credentials cannot be used (with
    /// this URL, or at all). The message never holds a password.
    #[error("{0}")]
    Access(String),
    /// Another setting of the claim engine (the clock check, the claim
    /// history) is not a value of its kind, or out of range.
    #[error(transparent)]
    Value(snowmint::Error),
}

/// Reads a claim TTL: a duration (`10s`, `1m`) in [`MIN_TTL`]..=[`MAX_TTL`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint_fleet::parse_claim_ttl;
///
/// assert_eq!(parse_claim_ttl("1m")?, Duration::from_secs(60));
/// assert_eq!(
///     parse_claim_ttl("500ms").unwrap_err().to_string(),
///     "claim_ttl 500ms is out of range (1s..=1h)"
/// );
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
pub fn parse_claim_ttl(text: &str) -> Result<Duration, ConfigError> {
    snowmint::value::parse_duration(TTL_NAME, text, MIN_TTL..=MAX_TTL).map_err(ConfigError::Ttl)
}

/// Who holds a slot, as written into the slot's key so that an operator can
/// tell which process has it.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::Holder;
///
/// let holder = Holder {
///     host: "web-1".into(),
///     pid: 4242,
///     listen: "127.0.0.1:8081".into(),
///     grpc: Some("127.0.0.1:9091".into()),
///     started_ms: 1_700_000_000_000,
/// };
/// let text = holder.to_string();
/// assert_eq!(
///     text,
///     "host=web-1 pid=4242 listen=127.0.0.1:8081 grpc=127.0.0.1:9091 started=2023-11-14T22:13:20.000Z"
/// );
/// // Clients read it back from the slot key to find the node.
/// assert_eq!(Holder::parse(&text), Some(holder));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The machine's host name.
    pub host: String,
    /// The process id.
    pub pid: u32,
    /// The address the service listens on.
    pub listen: String,
    /// The address its gRPC API listens on, if it serves one
    /// (`--grpc-listen`): what clients that discover the fleet connect to.
    pub grpc: Option<String>,
    /// When the process started (Unix ms).
    pub started_ms: i64,
}

impl Holder {
    /// Reads a holder value back, as [`Display`](fmt::Display) writes it
    /// (`grpc=` is optional; unknown `key=value` words are skipped, so
    /// that later additions do not break older readers). `None` when a
    /// field is missing or unreadable.
    pub fn parse(text: &str) -> Option<Holder> {
        let (mut host, mut pid, mut listen, mut grpc, mut started_ms) =
            (None, None, None, None, None);
        for word in text.split_ascii_whitespace() {
            let (key, value) = word.split_once('=')?;
            match key {
                "host" => host = Some(value.to_owned()),
                "pid" => pid = value.parse().ok(),
                "listen" => listen = Some(value.to_owned()),
                "grpc" => grpc = Some(value.to_owned()),
                "started" => {
                    started_ms =
                        snowmint::parse_instant("started", value, &snowmint::SystemClock).ok()
                }
                _ => {}
            }
        }
        Some(Holder {
            host: host?,
            pid: pid?,
            listen: listen?,
            grpc,
            started_ms: started_ms?,
        })
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "host={} pid={} listen={}",
            self.host, self.pid, self.listen
        )?;
        if let Some(grpc) = &self.grpc {
            write!(f, " grpc={grpc}")?;
        }
        write!(f, " started={}", snowmint::format_time(self.started_ms))
    }
}

/// Everything a coordinated node needs besides the coordinator itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorConfig {
    /// The fleet's name: nodes of one fleet share slots, keys live under
    /// `/snowmint/<fleet>/`.
    pub(crate) fleet: String,
    /// The slots this node may claim.
    pub(crate) slots: SlotRange,
    /// How many slots the node holds at once: an aligned block of them
    /// (a power of two; 1 by default).
    pub(crate) slots_per_node: u64,
    /// How long a claim outlives the node's last word (lease TTL, session
    /// timeout).
    pub(crate) ttl: Duration,
    /// Written into the slot key.
    pub(crate) holder: String,
    /// The layout IDs are made in, which maps slots to nodes.
    pub(crate) layout: Layout,
    /// The slot to try first, if free: the one the node held before.
    pub(crate) preferred_slot: Option<u64>,
    /// TLS and credentials for a secured coordinator (boxed: most nodes
    /// have none, and the settings travel in larger values).
    pub(crate) access: Box<CoordinatorAccess>,
    /// The clock, the claim history and the clock check (boxed: they are
    /// many, and a configuration travels inside others).
    pub(crate) ops: Box<Operations>,
}

/// What a coordinated node needs to be operated: its clock, its claim
/// history and its clock check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Operations {
    /// The node's clock: the one its IDs carry, written into the claim
    /// history and checked against the others.
    pub(crate) clock: EngineClock,
    /// How much of the claim history is kept.
    pub(crate) history: HistoryRetention,
    /// How the node's clock is checked.
    pub(crate) clock_check: ClockCheck,
    /// How other nodes' clocks are read; without one, only the
    /// coordinator's clock is consulted.
    pub(crate) peer_clock: Option<PeerClockHandle>,
}

/// The node's clock, compared by identity so that a configuration holding
/// one stays comparable.
#[derive(Clone)]
pub(crate) struct EngineClock(pub(crate) Arc<dyn Clock>);

impl PartialEq for EngineClock {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for EngineClock {}

impl fmt::Debug for EngineClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Clock")
    }
}

impl EngineClock {
    pub(crate) fn now_ms(&self) -> i64 {
        self.0.now_ms()
    }
}

impl CoordinatorConfig {
    /// Checks and gathers a node's settings.
    ///
    /// # Errors
    ///
    /// A fleet name that [`FleetName`] does not accept; a slot range past
    /// the layout; a TTL outside [`MIN_TTL`]..=[`MAX_TTL`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use snowmint::Layout;
    /// use snowmint_fleet::{CoordinatorConfig, SlotRange};
    ///
    /// let slots = SlotRange::all(Layout::TWITTER);
    /// let ttl = Duration::from_secs(10);
    /// assert!(CoordinatorConfig::new("ids", slots, ttl, "web-1".into(), Layout::TWITTER).is_ok());
    /// let err = CoordinatorConfig::new("a/b", slots, ttl, "web-1".into(), Layout::TWITTER).unwrap_err();
    /// assert!(err.to_string().starts_with("fleet name \"a/b\" is invalid"));
    /// ```
    pub fn new(
        fleet: &str,
        slots: SlotRange,
        ttl: Duration,
        holder: String,
        layout: Layout,
    ) -> Result<CoordinatorConfig, ConfigError> {
        let fleet: FleetName = fleet.parse()?;
        let ttl = snowmint::value::check_duration(TTL_NAME, ttl, MIN_TTL..=MAX_TTL)
            .map_err(ConfigError::Ttl)?;
        Ok(CoordinatorConfig {
            fleet: fleet.into_string(),
            slots: slots.check(layout)?,
            slots_per_node: 1,
            ttl,
            holder,
            layout,
            preferred_slot: None,
            access: Box::default(),
            ops: Box::new(Operations {
                clock: EngineClock(Arc::new(SystemClock)),
                history: HistoryRetention::default(),
                clock_check: ClockCheck::default(),
                peer_clock: None,
            }),
        })
    }

    /// The same settings, with `clock` as the node's clock (the one its
    /// IDs carry; the system clock by default): the claim history records
    /// times on it, and the clock check judges it.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> CoordinatorConfig {
        self.ops.clock = EngineClock(clock);
        self
    }

    /// The same settings, keeping the claim history as `retention` says
    /// (by default [`HistoryRetention::default`]; `keep` 0 writes none).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use snowmint::Layout;
    /// use snowmint_fleet::{CoordinatorConfig, HistoryRetention, SlotRange};
    ///
    /// let slots = SlotRange::all(Layout::TWITTER);
    /// let retention = HistoryRetention { keep: 4, max_age: Duration::from_secs(86_400) };
    /// let config = CoordinatorConfig::new("ids", slots, Duration::from_secs(10), "web-1".into(), Layout::TWITTER)?
    ///     .with_history(retention);
    /// assert_eq!(config.history(), retention);
    /// # Ok::<(), snowmint_fleet::ConfigError>(())
    /// ```
    pub fn with_history(mut self, retention: HistoryRetention) -> CoordinatorConfig {
        self.ops.history = retention;
        self
    }

    /// The same settings, checking the node's clock as `check` says (by
    /// default [`ClockCheck::default`]), reading other nodes' clocks with
    /// `peers` (without one, only the coordinator's clock is consulted).
    pub fn with_clock_check(
        mut self,
        check: ClockCheck,
        peers: Option<Arc<dyn PeerClock>>,
    ) -> CoordinatorConfig {
        self.ops.clock_check = check;
        self.ops.peer_clock = peers.map(PeerClockHandle);
        self
    }

    /// How much of the claim history is kept.
    pub fn history(&self) -> HistoryRetention {
        self.ops.history
    }

    /// How the node's clock is checked.
    pub fn clock_check(&self) -> ClockCheck {
        self.ops.clock_check
    }

    /// The same settings, reaching the coordinator as `access` says (TLS,
    /// the password of the URL's user, ZooKeeper's world read).
    pub fn with_access(self, access: CoordinatorAccess) -> CoordinatorConfig {
        CoordinatorConfig {
            access: Box::new(access),
            ..self
        }
    }

    /// How the coordinator is reached besides its URL.
    pub fn access(&self) -> &CoordinatorAccess {
        &self.access
    }

    /// The same settings, with `holder` written into the slot key: a
    /// service checks its settings before it knows the address it listens
    /// on, and names the holder once it does.
    pub fn with_holder(self, holder: String) -> CoordinatorConfig {
        CoordinatorConfig { holder, ..self }
    }

    /// The fleet's name.
    pub fn fleet(&self) -> &str {
        &self.fleet
    }

    /// The same settings, with `slot` tried first whenever the node claims
    /// and finds it free: a service that knows which slot it held before a
    /// restart passes it here, so that it tends to get it back. A slot
    /// outside the range, or taken, is passed over. (After a loss, the
    /// engine prefers the slot it held last anyway.)
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use snowmint::Layout;
    /// use snowmint_fleet::{CoordinatorConfig, SlotRange};
    ///
    /// let slots = SlotRange::all(Layout::TWITTER);
    /// let config = CoordinatorConfig::new("ids", slots, Duration::from_secs(10), "web-1".into(), Layout::TWITTER)?
    ///     .with_preferred_slot(Some(7));
    /// assert_eq!(config.preferred_slot(), Some(7));
    /// # Ok::<(), snowmint_fleet::ConfigError>(())
    /// ```
    pub fn with_preferred_slot(self, slot: Option<u64>) -> CoordinatorConfig {
        CoordinatorConfig {
            preferred_slot: slot,
            ..self
        }
    }

    /// The slot tried first, if free.
    pub fn preferred_slot(&self) -> Option<u64> {
        self.preferred_slot
    }

    /// The slots this node may claim.
    pub fn slots(&self) -> SlotRange {
        self.slots
    }

    /// The same settings, with the node holding `count` slots at once:
    /// an aligned block of `count` free slots of the range (its first slot
    /// a multiple of `count`), claimed, kept, fenced and released as one,
    /// its high-water mark raised on every slot of it. The node issues
    /// from all of them (the core's `GeneratorBuilder::slots`).
    ///
    /// # Errors
    ///
    /// A count the layout refuses ([`snowmint::Layout::check_slot_block`]:
    /// 0, not a power of two, more than the layout's slots, node fields
    /// not side by side), or a range that holds no aligned block of
    /// `count` slots.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use snowmint::Layout;
    /// use snowmint_fleet::{CoordinatorConfig, SlotRange};
    ///
    /// let config = |range: &str| {
    ///     let slots: SlotRange = range.parse().unwrap();
    ///     CoordinatorConfig::new("ids", slots, Duration::from_secs(10), "web-1".into(), Layout::TWITTER).unwrap()
    /// };
    /// assert_eq!(config("0-1023").with_slots_per_node(4)?.slots_per_node(), 4);
    /// assert_eq!(
    ///     config("0-1023").with_slots_per_node(3).unwrap_err().to_string(),
    ///     "slots per node 3 is not valid: a node holds a power of two of slots, \
    ///      1 to 1024 in this layout (1, 2, 4, 8, ...)"
    /// );
    /// assert_eq!(
    ///     config("5-10").with_slots_per_node(4).unwrap_err().to_string(),
    ///     "slots per node 4 is invalid: the slots 5-10 hold no aligned block of 4 \
    ///      (a block's first slot is a multiple of 4)"
    /// );
    /// # Ok::<(), snowmint_fleet::ConfigError>(())
    /// ```
    pub fn with_slots_per_node(self, count: u64) -> Result<CoordinatorConfig, ConfigError> {
        check_block_size(self.slots, count, self.layout)?;
        Ok(CoordinatorConfig {
            slots_per_node: count,
            ..self
        })
    }

    /// How many slots the node holds at once (1 unless set).
    pub fn slots_per_node(&self) -> u64 {
        self.slots_per_node
    }

    /// The requested claim TTL (the coordinator may grant a longer one).
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// What is written into the slot key.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// The layout, which maps slots to nodes.
    pub fn layout(&self) -> Layout {
        self.layout
    }
}

/// Checks that `layout` lets a node hold `count` slots (a power of two,
/// node fields side by side below the time) and that `range` holds an
/// aligned block of them.
fn check_block_size(range: SlotRange, count: u64, layout: Layout) -> Result<(), ConfigError> {
    layout
        .check_slot_block(0, count)
        .map_err(ConfigError::Value)?;
    if range.blocks(count).next().is_none() {
        return Err(ConfigError::SlotsPerNode {
            value: count,
            reason: format!(
                "the slots {range} hold no aligned block of {count} \
                 (a block's first slot is a multiple of {count})"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ttl_bounds() {
        let slots = SlotRange::all(Layout::TWITTER);
        let config =
            |ttl| CoordinatorConfig::new("ids", slots, ttl, String::new(), Layout::TWITTER);
        assert!(config(MIN_TTL).is_ok());
        assert!(config(MAX_TTL).is_ok());
        let err = config(Duration::from_millis(500)).unwrap_err().to_string();
        assert_eq!(err, "claim_ttl 500ms is out of range (1s..=1h)");
        // The value and the text of the value are refused alike.
        assert_eq!(parse_claim_ttl("500ms").unwrap_err().to_string(), err);
        assert_eq!(parse_claim_ttl("1h"), Ok(MAX_TTL));
        assert!(parse_claim_ttl("61m").is_err());
    }
}
