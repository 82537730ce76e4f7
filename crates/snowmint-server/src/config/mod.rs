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
//! - `setting.rs`: [`Setting`], its names, and [`Origin`].
//! - `layer.rs`: [`Layer`], the text given as flags, environment or file.
//! - `resolve.rs`: [`Config::resolve`], reading and checking the values.
//!
//! | setting | default | meaning |
//! |---|---|---|
//! | `listen` | `127.0.0.1:8080` | address to listen on (`IP:PORT`) |
//! | `grpc_listen` | none (off) | address to serve the gRPC API on (`IP:PORT`), beside HTTP |
//! | `datacenter`, `machine` | `0`, `0` | the node, given explicitly |
//! | `machine_from_hostname` | `false` | take the slot from the hostname's ordinal (`ids-12` -> 12) |
//! | `hostname` | the system's | the hostname to read the ordinal from |
//! | `state_dir` | see [`default_state_dir`] | where the high-water mark file lives |
//! | `layout`, `epoch` | `twitter` | the ID layout issued; the epoch in Unix ms or RFC 3339 |
//! | `clock_policy` | `refuse` | `refuse`, `wait` or `borrow` when the clock goes back |
//! | `clock_max` | `2s` | the bound of `wait` and `borrow` |
//! | `mark_wait_max` | `2s` | longest gap to the high-water mark waited out at start |
//! | `mark_step` | `1s` | how far ahead of the clock the mark is reserved (at least `10ms`) |
//! | `request_timeout` | `10s` | longest time a request may take; also the longest a connection may take to send its first request or a request head, sit idle, leave an answer unread, or leave a ping unanswered |
//! | `max_connections` | `1024` | client connections open at once, HTTP and gRPC together (fewer if the descriptor limit is lower) |
//! | `max_streams` | `100` | calls in flight on one HTTP/2 connection |
//! | `max_calls` | `1024` | gRPC calls in flight in the node, streams included |
//! | `max_connection_age` | `1h` | how long a client connection may live, `1s..=24h` |
//! | `tls_cert`, `tls_key` | none (cleartext) | TLS on both listeners: the certificate chain and its key, PEM files |
//! | `tls_client_ca` | none | require client certificates signed by these CAs (mTLS), a PEM file |
//! | `auth_token_file` | none (open) | bearer tokens, one per line, required by the endpoints of `auth_scope` |
//! | `auth_scope` | `issue` | `issue` (the endpoints that issue IDs or describe the node) or `all` (all but `/healthz`, `/readyz`, gRPC health) |
//! | `coordinator`, `fleet`, `slots`, `claim_ttl` | none, `default`, all, `10s` | coordinated claims (etcd, ZooKeeper, PostgreSQL); the TTL in `1s..=1h` |
//! | `clock_offset_ms` | `0` | test and operations knob: shifts this node's clock |

//!
//! Durations are a number and a unit (`500ms`, `2s`, `1.5s`, `1m`, `1h`),
//! at most `24h`.

mod layer;
mod resolve;
mod setting;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use snowmint::{ClockPolicy, Layout, Node};
use snowmint_fleet::{CoordinatorConfig, CoordinatorUrl};

use crate::auth::AuthScope;
use crate::net::{Limits, TlsFiles};

pub use layer::Layer;
use setting::Named;
pub use setting::{Origin, Setting};

/// Where the node's identity comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// Given explicitly (or the default node 0/0).
    Static(Node),
    /// The ordinal of a hostname; `None` reads the system's.
    Hostname(Option<String>),
    /// Claimed from a coordination service (etcd, ZooKeeper, PostgreSQL).
    Coordinator {
        /// `etcd://HOST:PORT[,HOST:PORT...]`, `zk://HOST:PORT[,...][/CHROOT]`
        /// or `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?...]`.
        url: CoordinatorUrl,
        /// The fleet, the slots this node may claim and the claim TTL
        /// (its holder is named once the address is known).
        config: CoordinatorConfig,
    },
}

/// Everything `snowmint serve` needs to know, resolved and checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Address to serve the gRPC API on; `None`: no gRPC.
    pub grpc_listen: Option<SocketAddr>,
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
    /// TLS on both listeners, when on (the files are read at start).
    pub tls: Option<TlsFiles>,
    /// The token file and the endpoints it guards, when on (read at
    /// start).
    pub auth: Option<(PathBuf, AuthScope)>,
    /// Shift of this node's clock, in ms (tests and operations).
    pub clock_offset_ms: i64,
    /// Where each setting's value came from.
    pub origins: BTreeMap<Setting, Origin>,
}

/// A configuration that cannot be used.
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
    /// Settings that cannot be used together.
    #[error("{0}")]
    Conflict(String),
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
    pub fn load(flags: Layer, config_file: Option<PathBuf>) -> Result<Config, ConfigError> {
        Config::load_with(flags, config_file, |name| std::env::var(name).ok())
    }

    /// [`Config::load`] with an explicit environment.
    pub fn load_with(
        flags: Layer,
        config_file: Option<PathBuf>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let file = config_file.or_else(|| {
            env("SNOWMINT_CONFIG")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        });
        let mut layers = vec![flags, Layer::from_env(&env)];
        if let Some(path) = file {
            layers.push(Layer::from_file(&path)?);
        }
        Config::resolve(&layers, env)
    }

    /// The node, when it is given explicitly.
    pub fn node(&self) -> Option<Node> {
        match self.identity {
            Identity::Static(node) => Some(node),
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

/// The state directory used when none is configured:
/// `$XDG_STATE_HOME/snowmint`, else `$HOME/.local/state/snowmint`, else
/// `./snowmint-state`.
///
/// # Examples
///
/// ```
/// use std::path::PathBuf;
/// use snowmint_server::config::default_state_dir;
///
/// let env = |name: &str| (name == "HOME").then(|| "/home/ana".to_owned());
/// assert_eq!(default_state_dir(env), PathBuf::from("/home/ana/.local/state/snowmint"));
/// assert_eq!(default_state_dir(|_| None), PathBuf::from("snowmint-state"));
/// ```
pub fn default_state_dir(env: impl Fn(&str) -> Option<String>) -> PathBuf {
    let set = |name| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(xdg) = set("XDG_STATE_HOME") {
        xdg.join("snowmint")
    } else if let Some(home) = set("HOME") {
        home.join(".local/state/snowmint")
    } else {
        PathBuf::from("snowmint-state")
    }
}
