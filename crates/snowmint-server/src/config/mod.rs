//! Configuration: flags > environment > TOML file > defaults.
//!
//! Every setting has one name in each place: the flag `--clock-max`, the
//! environment variable `SNOWMINT_CLOCK_MAX` and the file key `clock_max`.
//! Values arrive as text from all three [`Layer`]s and are read by the one
//! parser of their kind (the same that reads them in HTTP parameters and
//! in the libraries), so that a bad value gets the same message wherever it
//! came from, followed by where that was (`(from SNOWMINT_DATACENTER)`).
//! Values are taken as they are given: surrounding spaces are not trimmed.
//!
//! Each [`Setting`] is declared once, as a [`Spec`]: its names, help,
//! default and range (the declarations' docs say how to add one). The
//! text given as flags, environment or file arrives as [`Layer`]s, and
//! [`Config::resolve`] reads and checks each value, remembering its
//! [`Origin`] for messages.
//!
//! Durations are a number and a unit (`500ms`, `2s`, `1.5s`, `1m`, `1h`).

#[cfg(test)]
mod access_tests;
mod layer;
mod resolve;
mod setting;
mod spec;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use snowmint::{ClockPolicy, Layout, Node};
use snowmint_fleet::{CoordinatorAccess, CoordinatorUrl, FleetName};

use crate::auth::AuthScope;
use crate::listener::Listeners;
use crate::net::{Limits, TlsFiles};

pub use layer::Layer;
use setting::Named;
pub use setting::{DefaultValue, Form, Origin, Range, Setting, Spec};

/// Where the node's identity comes from: the fleet's [`NodeSource`], which
/// also turns it into a slot source for every front end alike.
///
/// [`NodeSource`]: snowmint_fleet::NodeSource
pub use snowmint_fleet::NodeSource as Identity;

/// Everything `snowmint serve` needs to know, resolved and checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where each listener listens (HTTP always; the others when their
    /// address is set), and how long each lets a connection idle.
    pub listeners: Listeners,
    /// Where the node's identity comes from.
    pub identity: Identity,
    /// Directory of the high-water mark files.
    pub state_dir: PathBuf,
    /// The layout IDs are issued in.
    pub layout: Layout,
    /// What to do when the clock goes back.
    pub clock_policy: ClockPolicy,
    /// Longest gap to the high-water mark waited out at start.
    pub mark_wait_max: Duration,
    /// How far ahead of the clock the mark is reserved.
    pub mark_step: Duration,
    /// What each client is allowed: the request timeout (the longest a
    /// request may take, and the deadline of every connection's waits),
    /// the connection cap, streams and calls in flight, connection age.
    pub limits: Limits,
    /// TLS on every listener whose protocol carries it, when on (the
    /// files are read at start).
    pub tls: Option<TlsFiles>,
    /// The token file and the endpoints it guards, when on (read at
    /// start).
    pub auth: Option<(PathBuf, AuthScope)>,
    /// Shift of this node's clock, in ms (tests and operations).
    pub clock_offset_ms: i64,
    /// What the binary logs, as a `tracing` filter (`info`, `debug`); the
    /// binary installs it, and checks it then.
    pub log: String,
    /// Where each setting's value came from.
    pub origins: BTreeMap<Setting, Origin>,
}

/// A configuration that cannot be used: the one error of the settings,
/// which carries the fleet's own [`snowmint_fleet::ConfigError`] for a
/// coordinator setting it refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A value that does not parse or is out of range.
    #[error("{message} (from {origin})")]
    Invalid {
        /// The setting.
        setting: Setting,
        /// Where the value came from, for people.
        origin: String,
        /// What is wrong, as the value's parser says it.
        message: String,
    },
    /// A coordinator setting (its URL, the fleet, the slots, the claim
    /// TTL, the clock check, the history, how it is reached) that the
    /// fleet's own reader refused: its error, kept as the source, then
    /// where the value came from.
    #[error("{source} (from {origin})")]
    Fleet {
        /// Where the values came from, for people: one setting, or the
        /// settings that do not fit together.
        origin: String,
        /// The fleet's error.
        #[source]
        source: snowmint_fleet::ConfigError,
    },
    /// Settings that cannot be used together.
    #[error("{0}")]
    Conflict(String),
    /// No setting says which node this is (see [`Config::require_identity`]).
    #[error(
        "no node identity is set: a node must be told which one it is, or two nodes started \
         without one would issue the same IDs. Give this one --datacenter D --machine M (a pair \
         no other node uses; SNOWMINT_DATACENTER, SNOWMINT_MACHINE), --machine-from-hostname \
         (a StatefulSet's pods), or --coordinator URL (a slot claimed from etcd, ZooKeeper or \
         PostgreSQL)"
    )]
    NoIdentity,
    /// The file cannot be read or is not valid TOML.
    #[error("config file {}: {message}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl Config {
    /// Reads the configuration of a process: `flags`, then the process
    /// environment, then the TOML file named by `--config` (in `flags`) or
    /// `SNOWMINT_CONFIG`.
    pub fn load(flags: Layer) -> Result<Config, ConfigError> {
        Config::load_with(flags, |name| std::env::var(name).ok())
    }

    /// [`Config::load`] with an explicit environment.
    ///
    /// # Errors
    ///
    /// A value that cannot be used, named with its range and where it came
    /// from; settings that conflict; a file that cannot be read.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Node;
    /// use snowmint_server::config::{Config, Layer, Setting};
    ///
    /// // Flags win over the environment, which wins over the file.
    /// let mut flags = Layer::flags();
    /// flags.set(Setting::Machine, "7");
    /// let env = |name: &str| match name {
    ///     "SNOWMINT_DATACENTER" => Some("3".to_owned()),
    ///     "SNOWMINT_MACHINE" => Some("9".to_owned()),
    ///     _ => None,
    /// };
    /// let config = Config::load_with(flags, env)?;
    /// assert_eq!(config.node(), Some(Node::from_slot(3 * 32 + 7)));
    /// assert_eq!(config.origin_note(Setting::Datacenter), "(from SNOWMINT_DATACENTER)");
    ///
    /// // A bad value says what is wrong and where it came from.
    /// let env = |name: &str| (name == "SNOWMINT_DATACENTER").then(|| "32".to_owned());
    /// let error = Config::load_with(Layer::flags(), env).unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "datacenter 32 is out of range (0..=31) (from SNOWMINT_DATACENTER)"
    /// );
    /// # Ok::<(), snowmint_server::config::ConfigError>(())
    /// ```
    pub fn load_with(
        flags: Layer,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let env_layer = Layer::from_env(&env);
        let file = [&flags, &env_layer]
            .into_iter()
            .find_map(|layer| layer.values.get(&Setting::ConfigFile))
            .map(PathBuf::from);
        let mut layers = vec![flags, env_layer];
        if let Some(path) = file {
            layers.push(Layer::from_file(&path)?);
        }
        Config::resolve(&layers, env)
    }

    /// Refuses a configuration that gives the node no identity: neither
    /// `--datacenter` nor `--machine`, nor `--machine-from-hostname`, nor
    /// `--coordinator`. Such a node would issue as datacenter 0, machine 0,
    /// as would every other node started that way, and their IDs would
    /// collide without a word; so `snowmint serve` (its start and its
    /// `--check`) refuses it, as `snowmint generate`, the Python package,
    /// the embedded issuer and the PostgreSQL extension refuse a generator
    /// with no node. `--datacenter 0 --machine 0` is a choice, and allowed.
    ///
    /// # Errors
    ///
    /// [`ConfigError::NoIdentity`], which says how to give one.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint_server::config::{Config, ConfigError, Layer, Setting};
    ///
    /// let unset = Config::load_with(Layer::flags(), |_| None)?;
    /// assert_eq!(unset.require_identity(), Err(ConfigError::NoIdentity));
    ///
    /// let mut flags = Layer::flags();
    /// flags.set(Setting::Datacenter, "0").set(Setting::Machine, "0");
    /// let chosen = Config::load_with(flags, |_| None)?;
    /// assert_eq!(chosen.require_identity(), Ok(()));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn require_identity(&self) -> Result<(), ConfigError> {
        let given = |setting| !matches!(self.origin(setting), Origin::Default);
        match self.identity {
            Identity::Static(_) | Identity::StaticSlots { .. }
                if !given(Setting::Datacenter) && !given(Setting::Machine) =>
            {
                Err(ConfigError::NoIdentity)
            }
            _ => Ok(()),
        }
    }

    /// The nodes of every slot a fixed identity holds, lowest first: its
    /// own, and with `--slots-per-node K` the K - 1 after it; none when
    /// the slot is claimed or read from the hostname at start.
    ///
    /// # Examples
    ///
    /// ```
    /// use snowmint::Node;
    /// use snowmint_server::config::{Config, Layer, Setting};
    ///
    /// let mut flags = Layer::flags();
    /// flags.set(Setting::Machine, "6").set(Setting::SlotsPerNode, "2");
    /// let config = Config::load_with(flags, |_| None)?;
    /// assert_eq!(config.fixed_nodes(), [Node::from_slot(6), Node::from_slot(7)]);
    /// # Ok::<(), snowmint_server::config::ConfigError>(())
    /// ```
    pub fn fixed_nodes(&self) -> Vec<Node> {
        let (node, slots) = match self.identity {
            Identity::Static(node) => (node, 1),
            Identity::StaticSlots { node, slots } => (node, slots),
            _ => return Vec::new(),
        };
        (node.slot()..node.slot() + slots)
            .map(Node::from_slot)
            .collect()
    }

    /// The node, when it is given explicitly.
    pub fn node(&self) -> Option<Node> {
        match self.identity {
            Identity::Static(node) | Identity::StaticSlots { node, .. } => Some(node),
            _ => None,
        }
    }

    /// Where `setting` got its value.
    pub fn origin(&self, setting: Setting) -> &Origin {
        self.origins.get(&setting).unwrap_or(&Origin::Default)
    }

    /// Where `setting` got its value, for logs: `(default)`,
    /// `(from SNOWMINT_MACHINE)`.
    pub fn origin_note(&self, setting: Setting) -> String {
        match self.origin(setting) {
            Origin::Default => "(default)".to_owned(),
            origin => format!("(from {})", Named(setting, origin)),
        }
    }
}

/// How a command that reads a fleet from outside it (`snowmint whois`)
/// reaches the fleet's coordinator: the settings a node of the fleet is
/// given for it (`--coordinator`, `--fleet`, the coordinator's TLS files
/// and password), read by the same parsers and checked by the same rules,
/// so that a reader is set up as the nodes are, and told the same when a
/// setting cannot be used. World read is not among them: it says how a
/// node creates its znodes, and a reader creates none.
///
/// # Examples
///
/// ```
/// use snowmint_server::config::{FleetAccess, Layer, Setting};
///
/// let mut flags = Layer::flags();
/// flags.set(Setting::Coordinator, "etcd://ids@10.0.0.1:2379");
/// let env = |name: &str| (name == "SNOWMINT_COORDINATOR_PASSWORD").then(|| "s3cret".to_owned());
/// let fleet = FleetAccess::load_with(flags, env)?;
/// assert_eq!(fleet.fleet.as_str(), "default");
/// let credentials = fleet.access.credentials(&fleet.url)?.unwrap();
/// assert_eq!(credentials.password.expose(), "s3cret");
/// assert!(!format!("{fleet:?}").contains("s3cret"));
///
/// // A certificate with no CA to check the servers' against: refused, as a
/// // node refuses it.
/// let mut flags = Layer::flags();
/// flags.set(Setting::Coordinator, "etcd://10.0.0.1:2379");
/// flags.set(Setting::CoordinatorCert, "/etc/snowmint/reader.pem");
/// let error = FleetAccess::load_with(flags, |_| None).unwrap_err();
/// assert!(error.to_string().starts_with("--coordinator-cert needs --coordinator-ca"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FleetAccess {
    /// The coordinator.
    pub url: CoordinatorUrl,
    /// The fleet.
    pub fleet: FleetName,
    /// TLS and the password, as a node of the fleet is given them.
    pub access: CoordinatorAccess,
    /// Where each setting's value came from.
    pub origins: BTreeMap<Setting, Origin>,
}

impl FleetAccess {
    /// The settings it reads, in the order `--help` shows them: a command
    /// takes the flags of those that are flags (the password is given by
    /// the environment or a file only).
    pub const SETTINGS: &'static [Setting] = &[
        Setting::Coordinator,
        Setting::Fleet,
        Setting::CoordinatorCa,
        Setting::CoordinatorCert,
        Setting::CoordinatorKey,
        Setting::CoordinatorPasswordFile,
        Setting::CoordinatorPassword,
    ];

    /// Reads `flags`, then the process environment (no configuration
    /// file: a command that reads a fleet takes no `--config`).
    pub fn load(flags: Layer) -> Result<FleetAccess, ConfigError> {
        FleetAccess::load_with(flags, |name| std::env::var(name).ok())
    }

    /// [`FleetAccess::load`] with an explicit environment.
    pub fn load_with(
        flags: Layer,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<FleetAccess, ConfigError> {
        FleetAccess::resolve(&[flags, Layer::from_env(env)])
    }

    /// Resolves `layers` (highest precedence first) as
    /// [`Config::resolve`] resolves a node's coordinator settings.
    ///
    /// # Errors
    ///
    /// A value that does not parse, settings that do not go together or
    /// do not fit the coordinator, TLS files that cannot be used, a
    /// password file others may read, and no coordinator at all; each
    /// names where its value came from, and none shows a password.
    pub fn resolve(layers: &[Layer]) -> Result<FleetAccess, ConfigError> {
        resolve::fleet_access(layers)
    }

    /// The warning for a coordinator URL that holds a password and was
    /// given as a flag, the one a node logs at start.
    pub fn password_on_command_line(&self) -> Option<String> {
        let given_as_flag = self.origins.get(&Setting::Coordinator) == Some(&Origin::Flag);
        (given_as_flag && self.url.has_password()).then(|| password_warning(&self.url))
    }
}

/// What a process whose command line holds the coordinator URL's password
/// is told: every local user can read a process's command line
/// (`/proc/PID/cmdline`, `ps`).
pub(crate) fn password_warning(url: &CoordinatorUrl) -> String {
    let postgres = match url {
        CoordinatorUrl::Postgres(_) => ", PGPASSWORD or a libpq password file",
        _ => "",
    };
    format!(
        "the --coordinator URL holds a password, which every local user can read in this process's command line \
         (ps, /proc/{}/cmdline); give it through SNOWMINT_COORDINATOR_PASSWORD or --coordinator-password-file{postgres} instead",
        std::process::id()
    )
}

/// The state directory used when none is configured (the fleet's, shared
/// by every process of the host that issues IDs).
pub use snowmint_fleet::default_state_dir;
