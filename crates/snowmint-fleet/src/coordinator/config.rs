//! What a coordinated node is told: where the coordinator is, which fleet it
//! joins, which slots it may take, how long a claim lives, and who it is.
//!
//! Each of these values has its one reading here ([`CoordinatorUrl`],
//! [`FleetName`], [`SlotRange`], [`parse_claim_ttl`]), used by the service's
//! flags, environment and configuration file alike. Like the core's
//! readers, they take text as it is (no trimming) and echo it, cut when
//! long, in their messages.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use snowmint::Layout;

/// The shortest claim TTL accepted: etcd leases count whole seconds.
pub const MIN_TTL: Duration = Duration::from_secs(1);
/// The longest claim TTL accepted: longer ones keep a crashed node's slot
/// (and its IDs) out of use for too long to be useful.
pub const MAX_TTL: Duration = Duration::from_secs(3600);

/// The longest fleet name accepted, in characters: a fleet name is part of
/// every key and znode path of the fleet.
pub const MAX_FLEET_NAME: usize = 64;

/// What the claim TTL is called in messages.
const TTL_NAME: &str = "claim TTL";

const URL_FORMS: &str = "etcd://HOST:PORT[,HOST:PORT...] or zk://HOST:PORT[,HOST:PORT...][/CHROOT]";

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
    /// The claim TTL is not a duration, or is outside
    /// [`MIN_TTL`]..=[`MAX_TTL`].
    #[error(transparent)]
    Ttl(snowmint::Error),
}

/// Where the coordination service is.
///
/// - `etcd://HOST:PORT[,HOST:PORT...]`
/// - `zk://HOST:PORT[,HOST:PORT...][/CHROOT]`
///
/// # Examples
///
/// ```
/// use snowmint_fleet::CoordinatorUrl;
///
/// let url: CoordinatorUrl = "zk://10.0.0.1:2181,10.0.0.2:2181/apps".parse()?;
/// assert_eq!(
///     url,
///     CoordinatorUrl::ZooKeeper {
///         hosts: vec!["10.0.0.1:2181".into(), "10.0.0.2:2181".into()],
///         chroot: Some("/apps".into()),
///     }
/// );
/// assert_eq!(url.to_string(), "zk://10.0.0.1:2181,10.0.0.2:2181/apps");
///
/// let err = "etcd://localhost:99999".parse::<CoordinatorUrl>().unwrap_err();
/// assert!(err.to_string().contains("port 99999 is out of range (1..=65535)"));
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoordinatorUrl {
    /// An etcd cluster, reached through any of its client endpoints.
    Etcd {
        /// `HOST:PORT` of each endpoint.
        endpoints: Vec<String>,
    },
    /// A ZooKeeper ensemble, with an optional root for every path.
    ZooKeeper {
        /// `HOST:PORT` of each server.
        hosts: Vec<String>,
        /// A path every znode of snowmint lives under, such as `/apps`.
        chroot: Option<String>,
    },
}

impl CoordinatorUrl {
    /// The scheme's service name: `etcd` or `zookeeper`.
    pub fn kind(&self) -> &'static str {
        match self {
            CoordinatorUrl::Etcd { .. } => "etcd",
            CoordinatorUrl::ZooKeeper { .. } => "zookeeper",
        }
    }
}

impl FromStr for CoordinatorUrl {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = |reason: String| ConfigError::Url {
            value: snowmint::echo(text),
            reason,
        };
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| invalid("it has no scheme".into()))?;
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], Some(&rest[at..])),
            None => (rest, None),
        };
        let hosts = authority
            .split(',')
            .map(|host| check_host_port(host).map(str::to_owned))
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        match scheme {
            "etcd" => match path {
                None | Some("/") => Ok(CoordinatorUrl::Etcd { endpoints: hosts }),
                Some(path) => Err(invalid(format!("etcd URLs take no path, found {path:?}"))),
            },
            "zk" | "zookeeper" => {
                let chroot = match path {
                    None | Some("/") => None,
                    Some(path) => Some(check_chroot(path).map_err(invalid)?.to_owned()),
                };
                Ok(CoordinatorUrl::ZooKeeper { hosts, chroot })
            }
            other => Err(invalid(format!("scheme {other:?} is neither etcd nor zk"))),
        }
    }
}

impl fmt::Display for CoordinatorUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoordinatorUrl::Etcd { endpoints } => write!(f, "etcd://{}", endpoints.join(",")),
            CoordinatorUrl::ZooKeeper { hosts, chroot } => {
                write!(
                    f,
                    "zk://{}{}",
                    hosts.join(","),
                    chroot.as_deref().unwrap_or("")
                )
            }
        }
    }
}

fn check_host_port(text: &str) -> Result<&str, String> {
    let (host, port) = text
        .rsplit_once(':')
        .ok_or_else(|| format!("endpoint {text:?} has no port (expected HOST:PORT)"))?;
    let bracketed = host.starts_with('[') && host.ends_with(']');
    if host.is_empty() || (host.contains(':') && !bracketed) {
        return Err(format!(
            "endpoint {text:?} has no valid host (expected HOST:PORT)"
        ));
    }
    snowmint::parse_bounded("port", port, 1..=65535)
        .map(|_| text)
        .map_err(|error| error.to_string())
}

fn check_chroot(path: &str) -> Result<&str, String> {
    let path = path.strip_suffix('/').unwrap_or(path);
    if path
        .split('/')
        .skip(1)
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return Err(format!(
            "chroot {path:?} has an empty, \".\" or \"..\" component"
        ));
    }
    Ok(path)
}

/// The slots a node may claim: `A-B` (both included) or a single `N`.
///
/// # Examples
///
/// ```
/// use snowmint::Layout;
/// use snowmint_fleet::SlotRange;
///
/// let range: SlotRange = "32-63".parse()?;
/// assert_eq!((range.first(), range.last(), range.len()), (32, 63, 32));
/// assert_eq!(range.to_string(), "32-63");
/// assert_eq!(SlotRange::all(Layout::TWITTER).to_string(), "0-1023");
/// assert!("9-3".parse::<SlotRange>().is_err());
/// assert_eq!(
///     "0-1024".parse::<SlotRange>()?.check(Layout::TWITTER).unwrap_err().to_string(),
///     "slots \"0-1024\" is invalid: slot 1024 is out of range (0..=1023)"
/// );
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotRange {
    first: u64,
    last: u64,
}

impl SlotRange {
    /// The range `first..=last`.
    ///
    /// # Errors
    ///
    /// When `first > last`.
    pub fn new(first: u64, last: u64) -> Result<SlotRange, ConfigError> {
        if first > last {
            return Err(ConfigError::Slots {
                value: format!("{first}-{last}"),
                reason: format!("the first slot {first} is after the last {last}"),
            });
        }
        Ok(SlotRange { first, last })
    }

    /// Every slot of `layout` (0-1023 for the Twitter layout).
    pub fn all(layout: Layout) -> SlotRange {
        SlotRange {
            first: 0,
            last: layout.node_count() - 1,
        }
    }

    /// The lowest slot of the range.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// The highest slot of the range.
    pub fn last(&self) -> u64 {
        self.last
    }

    /// How many slots the range holds.
    #[allow(clippy::len_without_is_empty)] // a range is never empty
    pub fn len(&self) -> u64 {
        self.last - self.first + 1
    }

    /// Whether `slot` is in the range.
    pub fn contains(&self, slot: u64) -> bool {
        (self.first..=self.last).contains(&slot)
    }

    /// Checks that every slot of the range names a node of `layout`.
    ///
    /// # Errors
    ///
    /// When the last slot is past the layout's node count.
    pub fn check(self, layout: Layout) -> Result<SlotRange, ConfigError> {
        match layout.node_from_slot(self.last) {
            Ok(_) => Ok(self),
            Err(err) => Err(ConfigError::Slots {
                value: self.to_string(),
                reason: err.to_string(),
            }),
        }
    }

    /// The slots of the range, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = u64> + use<> {
        self.first..=self.last
    }
}

impl FromStr for SlotRange {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = |reason: String| ConfigError::Slots {
            value: snowmint::echo(text),
            reason,
        };
        let number = |part: &str| {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid(format!(
                    "{:?} is not a slot number (expected A-B, e.g. 0-1023)",
                    snowmint::echo(part)
                )));
            }
            part.parse::<u64>().map_err(|_| {
                invalid(format!(
                    "slot {} is out of range (0..={})",
                    snowmint::echo(part),
                    u64::MAX
                ))
            })
        };
        let (first, last) = match text.split_once('-') {
            Some((first, last)) => (number(first)?, number(last)?),
            None => {
                let only = number(text)?;
                (only, only)
            }
        };
        SlotRange::new(first, last)
            .map_err(|_| invalid(format!("the first slot {first} is after the last {last}")))
    }
}

impl fmt::Display for SlotRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.first, self.last)
    }
}

/// The name of a fleet: nodes of one fleet share its slots, and its keys
/// live under `/snowmint/<fleet>/`.
///
/// 1 to [`MAX_FLEET_NAME`] letters, digits, `-`, `_` and `.`, other than
/// `.` and `..` (which would name the wrong directory of keys). Case
/// matters: `ids` and `IDS` are two fleets.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::FleetName;
///
/// let name: FleetName = "ids-eu.1".parse()?;
/// assert_eq!(name.as_str(), "ids-eu.1");
/// assert_eq!(
///     "a/b".parse::<FleetName>().unwrap_err().to_string(),
///     "fleet name \"a/b\" is invalid: '/' is not allowed (expected 1 to 64 letters, digits, '-', '_' or '.', not \".\" or \"..\")"
/// );
/// assert!("x".repeat(65).parse::<FleetName>().is_err());
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FleetName(String);

impl FleetName {
    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for FleetName {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = |reason: String| ConfigError::Fleet {
            value: snowmint::echo(text),
            reason: format!(
                "{reason} (expected 1 to {MAX_FLEET_NAME} letters, digits, '-', '_' or '.', not \".\" or \"..\")"
            ),
        };
        if text.is_empty() {
            return Err(invalid("it is empty".into()));
        }
        if text == "." || text == ".." {
            return Err(invalid(format!("{text:?} names no fleet")));
        }
        if let Some(bad) = text
            .chars()
            .find(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        {
            return Err(invalid(format!("{bad:?} is not allowed")));
        }
        // Only ASCII is left: bytes are characters.
        if text.len() > MAX_FLEET_NAME {
            return Err(invalid(format!("it is {} characters long", text.len())));
        }
        Ok(FleetName(text.to_owned()))
    }
}

impl fmt::Display for FleetName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
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
///     "claim TTL 500ms is out of range (1s..=1h)"
/// );
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
pub fn parse_claim_ttl(text: &str) -> Result<Duration, ConfigError> {
    snowmint::parse_duration(TTL_NAME, text, MIN_TTL..=MAX_TTL).map_err(ConfigError::Ttl)
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
///     started_ms: 1_700_000_000_000,
/// };
/// assert_eq!(
///     holder.to_string(),
///     "host=web-1 pid=4242 listen=127.0.0.1:8081 started=2023-11-14T22:13:20.000Z"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The machine's host name.
    pub host: String,
    /// The process id.
    pub pid: u32,
    /// The address the service listens on.
    pub listen: String,
    /// When the process started (Unix ms).
    pub started_ms: i64,
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "host={} pid={} listen={} started={}",
            self.host,
            self.pid,
            self.listen,
            snowmint::format_time(self.started_ms)
        )
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
    /// How long a claim outlives the node's last word (lease TTL, session
    /// timeout).
    pub(crate) ttl: Duration,
    /// Written into the slot key.
    pub(crate) holder: String,
    /// The layout IDs are made in, which maps slots to nodes.
    pub(crate) layout: Layout,
    /// The slot to try first, if free: the one the node held before.
    pub(crate) preferred_slot: Option<u64>,
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
        let ttl =
            snowmint::check_duration(TTL_NAME, ttl, MIN_TTL..=MAX_TTL).map_err(ConfigError::Ttl)?;
        Ok(CoordinatorConfig {
            fleet: fleet.0,
            slots: slots.check(layout)?,
            ttl,
            holder,
            layout,
            preferred_slot: None,
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etcd_urls() {
        let url: CoordinatorUrl = "etcd://127.0.0.1:2379,[::1]:2380".parse().unwrap();
        assert_eq!(
            url,
            CoordinatorUrl::Etcd {
                endpoints: vec!["127.0.0.1:2379".into(), "[::1]:2380".into()]
            }
        );
        assert_eq!(url.to_string(), "etcd://127.0.0.1:2379,[::1]:2380");
    }

    #[test]
    fn bad_urls_say_what_is_wrong() {
        for (text, says) in [
            ("127.0.0.1:2379", "it has no scheme"),
            (
                "http://127.0.0.1:2379",
                "scheme \"http\" is neither etcd nor zk",
            ),
            ("etcd://127.0.0.1", "endpoint \"127.0.0.1\" has no port"),
            ("etcd://:2379", "endpoint \":2379\" has no valid host"),
            ("etcd://a:0", "port 0 is out of range (1..=65535)"),
            (
                "etcd://a:+1",
                "port \"+1\" is not a number (expected an integer in 1..=65535)",
            ),
            ("etcd://a:1,", "endpoint \"\" has no port"),
            ("etcd://a:1/x", "etcd URLs take no path"),
            ("zk://a:1//x", "chroot \"//x\" has an empty"),
        ] {
            let err = text.parse::<CoordinatorUrl>().unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("coordinator URL {text:?} is invalid: ")),
                "{err}"
            );
            assert!(err.contains(says), "{text}: {err}");
            assert!(err.ends_with(&format!("(expected {URL_FORMS})")), "{err}");
        }
    }

    #[test]
    fn zookeeper_chroot_is_optional() {
        let url: CoordinatorUrl = "zk://a:2181/".parse().unwrap();
        assert_eq!(
            url,
            CoordinatorUrl::ZooKeeper {
                hosts: vec!["a:2181".into()],
                chroot: None
            }
        );
        let url: CoordinatorUrl = "zk://a:2181/x/y/".parse().unwrap();
        assert_eq!(url.to_string(), "zk://a:2181/x/y");
    }

    #[test]
    fn slot_ranges() {
        assert_eq!(
            "7".parse::<SlotRange>().unwrap(),
            SlotRange::new(7, 7).unwrap()
        );
        assert_eq!("1-3".parse::<SlotRange>().unwrap().len(), 3);
        // Text is taken as it is, as every value's reader does.
        for bad in [" 1-3", "1 - 3", "+1-3", "1-", "-3", ""] {
            assert!(bad.parse::<SlotRange>().is_err(), "{bad:?}");
        }
        let err = "a-3".parse::<SlotRange>().unwrap_err().to_string();
        assert_eq!(
            err,
            "slots \"a-3\" is invalid: \"a\" is not a slot number (expected A-B, e.g. 0-1023)"
        );
        let err = "5-3".parse::<SlotRange>().unwrap_err().to_string();
        assert_eq!(
            err,
            "slots \"5-3\" is invalid: the first slot 5 is after the last 3"
        );
    }

    #[test]
    fn ttl_bounds() {
        let slots = SlotRange::all(Layout::TWITTER);
        let config =
            |ttl| CoordinatorConfig::new("ids", slots, ttl, String::new(), Layout::TWITTER);
        assert!(config(MIN_TTL).is_ok());
        assert!(config(MAX_TTL).is_ok());
        let err = config(Duration::from_millis(500)).unwrap_err().to_string();
        assert_eq!(err, "claim TTL 500ms is out of range (1s..=1h)");
        // The value and the text of the value are refused alike.
        assert_eq!(parse_claim_ttl("500ms").unwrap_err().to_string(), err);
        assert_eq!(parse_claim_ttl("1h"), Ok(MAX_TTL));
        assert!(parse_claim_ttl("61m").is_err());
    }

    #[test]
    fn fleet_names() {
        let longest = "f".repeat(MAX_FLEET_NAME);
        assert_eq!(longest.parse::<FleetName>().unwrap().as_str(), longest);
        for (bad, says) in [
            ("", "it is empty"),
            (".", "\".\" names no fleet"),
            ("..", "\"..\" names no fleet"),
            ("a b", "' ' is not allowed"),
            ("é", "'é' is not allowed"),
        ] {
            let err = bad.parse::<FleetName>().unwrap_err().to_string();
            assert!(
                err.starts_with(&format!(
                    "fleet name {bad:?} is invalid: {says} (expected 1 to 64"
                )),
                "{err}"
            );
        }
        let long = "f".repeat(MAX_FLEET_NAME + 1);
        let err = long.parse::<FleetName>().unwrap_err().to_string();
        assert!(err.contains("it is 65 characters long"), "{err}");
        assert!(
            err.contains(&format!("{}...", "f".repeat(40))),
            "the value is cut: {err}"
        );
        // The claim engine's settings take the same names.
        let slots = SlotRange::all(Layout::TWITTER);
        let ttl = Duration::from_secs(10);
        let err =
            CoordinatorConfig::new(&long, slots, ttl, String::new(), Layout::TWITTER).unwrap_err();
        assert_eq!(err, long.parse::<FleetName>().unwrap_err());
    }
}
