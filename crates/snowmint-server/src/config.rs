//! Configuration: flags > environment > TOML file > defaults.
//!
//! Every setting has one name in each place: the flag `--clock-max`, the
//! environment variable `SNOWMINT_CLOCK_MAX` and the file key `clock_max`.
//! Values arrive as text from all three [`Layer`]s and are parsed in one
//! place, so that a bad value gets the same message wherever it came from,
//! followed by where that was (`(from SNOWMINT_DATACENTER)`).
//!
//! | setting | default | meaning |
//! |---|---|---|
//! | `listen` | `127.0.0.1:8080` | address to listen on (`IP:PORT`) |
//! | `datacenter`, `machine` | `0`, `0` | the node, given explicitly |
//! | `machine_from_hostname` | `false` | take the slot from the hostname's ordinal (`ids-12` -> 12) |
//! | `hostname` | the system's | the hostname to read the ordinal from |
//! | `state_dir` | see [`default_state_dir`] | where the high-water mark file lives |
//! | `layout`, `epoch` | `twitter` | the ID layout issued |
//! | `clock_policy` | `refuse` | `refuse`, `wait` or `borrow` when the clock goes back |
//! | `clock_max` | `2s` | the bound of `wait` and `borrow` |
//! | `mark_wait_max` | `2s` | longest gap to the high-water mark waited out at start |
//! | `mark_step` | `1s` | how far ahead of the clock the mark is reserved |
//! | `request_timeout` | `10s` | longest time a request may take; also the longest a connection may take to send a request head, or sit idle |
//! | `coordinator`, `fleet`, `slots`, `claim_ttl` | none, `default`, all, `10s` | coordinated claims (etcd, ZooKeeper) |
//! | `clock_offset_ms` | `0` | test and operations knob: shifts this node's clock |

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Duration;

use snowmint::{Field, Layout, Node};
use snowmint_fleet::{CoordinatorUrl, MAX_TTL, MIN_TTL};

/// One configurable setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// Address to listen on.
    Listen,
    /// Datacenter id of the node.
    Datacenter,
    /// Machine id of the node.
    Machine,
    /// Take the slot from the hostname's ordinal.
    MachineFromHostname,
    /// Hostname to read the ordinal from.
    Hostname,
    /// Directory of the state file.
    StateDir,
    /// ID layout.
    Layout,
    /// Epoch on top of the layout.
    Epoch,
    /// Clock-regression policy.
    ClockPolicy,
    /// Bound of the wait and borrow policies.
    ClockMax,
    /// Longest gap to the high-water mark waited out at start.
    MarkWaitMax,
    /// How far ahead the mark is reserved.
    MarkStep,
    /// Longest time a request may take.
    RequestTimeout,
    /// Shift of this node's clock (tests, operations).
    ClockOffsetMs,
    /// Coordination service URL.
    Coordinator,
    /// Fleet name under the coordinator.
    Fleet,
    /// Slots the node may claim.
    Slots,
    /// Lifetime of a coordinated claim.
    ClaimTtl,
}

impl Setting {
    /// Every setting.
    pub const ALL: [Setting; 18] = [
        Setting::Listen,
        Setting::Datacenter,
        Setting::Machine,
        Setting::MachineFromHostname,
        Setting::Hostname,
        Setting::StateDir,
        Setting::Layout,
        Setting::Epoch,
        Setting::ClockPolicy,
        Setting::ClockMax,
        Setting::MarkWaitMax,
        Setting::MarkStep,
        Setting::RequestTimeout,
        Setting::ClockOffsetMs,
        Setting::Coordinator,
        Setting::Fleet,
        Setting::Slots,
        Setting::ClaimTtl,
    ];

    /// The key in the TOML file, such as `clock_max`.
    pub const fn key(self) -> &'static str {
        match self {
            Setting::Listen => "listen",
            Setting::Datacenter => "datacenter",
            Setting::Machine => "machine",
            Setting::MachineFromHostname => "machine_from_hostname",
            Setting::Hostname => "hostname",
            Setting::StateDir => "state_dir",
            Setting::Layout => "layout",
            Setting::Epoch => "epoch",
            Setting::ClockPolicy => "clock_policy",
            Setting::ClockMax => "clock_max",
            Setting::MarkWaitMax => "mark_wait_max",
            Setting::MarkStep => "mark_step",
            Setting::RequestTimeout => "request_timeout",
            Setting::ClockOffsetMs => "clock_offset_ms",
            Setting::Coordinator => "coordinator",
            Setting::Fleet => "fleet",
            Setting::Slots => "slots",
            Setting::ClaimTtl => "claim_ttl",
        }
    }

    /// The command-line flag, such as `--clock-max`.
    pub fn flag(self) -> String {
        format!("--{}", self.key().replace('_', "-"))
    }

    /// The environment variable, such as `SNOWMINT_CLOCK_MAX`.
    pub fn env(self) -> String {
        format!("SNOWMINT_{}", self.key().to_ascii_uppercase())
    }
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A command-line flag.
    Flag,
    /// An environment variable.
    Env,
    /// The TOML file at this path.
    File(PathBuf),
    /// Nothing set it.
    Default,
}

/// A setting's origin, written for messages: `--datacenter`,
/// `SNOWMINT_DATACENTER`, `datacenter in /etc/snowmint.toml`, `default`.
struct Named<'a>(Setting, &'a Origin);

impl fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Origin::Flag => f.write_str(&self.0.flag()),
            Origin::Env => f.write_str(&self.0.env()),
            Origin::File(path) => write!(f, "{} in {}", self.0.key(), path.display()),
            Origin::Default => f.write_str("default"),
        }
    }
}

/// The settings given in one place, as text.
///
/// # Examples
///
/// ```
/// use snowmint_server::config::{Config, Layer, Setting};
///
/// let mut flags = Layer::flags();
/// flags.set(Setting::Machine, "5");
/// let env = Layer::from_env(|name| (name == "SNOWMINT_MACHINE").then(|| "4".to_owned()));
/// let config = Config::resolve(&[flags, env], |_| None)?;
/// assert_eq!(config.node(), Some(snowmint::Node { datacenter: 0, machine: 5 }));
/// # Ok::<(), snowmint_server::config::ConfigError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Layer {
    origin: Origin,
    values: BTreeMap<Setting, String>,
}

impl Layer {
    /// An empty layer of command-line flags.
    pub fn flags() -> Layer {
        Layer {
            origin: Origin::Flag,
            values: BTreeMap::new(),
        }
    }

    /// Sets a value.
    pub fn set(&mut self, setting: Setting, value: impl Into<String>) -> &mut Layer {
        self.values.insert(setting, value.into());
        self
    }

    /// The `SNOWMINT_*` variables that `lookup` knows (pass
    /// `|name| std::env::var(name).ok()` for the process environment).
    /// Empty values count as unset.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Layer {
        let values = Setting::ALL
            .iter()
            .filter_map(|&setting| {
                lookup(&setting.env())
                    .filter(|v| !v.is_empty())
                    .map(|v| (setting, v))
            })
            .collect();
        Layer {
            origin: Origin::Env,
            values,
        }
    }

    /// Reads a TOML file of `key = value` lines (see the module docs).
    pub fn from_file(path: &Path) -> Result<Layer, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::File {
            path: path.to_owned(),
            message: error.to_string(),
        })?;
        Layer::from_toml(path, &text)
    }

    /// Reads TOML text as if from the file `path`.
    pub fn from_toml(path: &Path, text: &str) -> Result<Layer, ConfigError> {
        let file_error = |message: String| ConfigError::File {
            path: path.to_owned(),
            message,
        };
        let table: toml::Table = toml::from_str(text).map_err(|e| file_error(e.to_string()))?;
        let mut values = BTreeMap::new();
        for (key, value) in table {
            let setting = Setting::ALL
                .into_iter()
                .find(|s| s.key() == key)
                .ok_or_else(|| {
                    let known: Vec<_> = Setting::ALL
                        .iter()
                        .filter(|s| **s != Setting::ClockOffsetMs)
                        .map(|s| s.key())
                        .collect();
                    file_error(format!(
                        "unknown key {key:?} (known keys: {})",
                        known.join(", ")
                    ))
                })?;
            let text = match value {
                toml::Value::String(s) => s,
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                other => {
                    return Err(file_error(format!(
                        "{key} must be a string, an integer or a boolean, not {}",
                        other.type_str()
                    )));
                }
            };
            values.insert(setting, text);
        }
        Ok(Layer {
            origin: Origin::File(path.to_owned()),
            values,
        })
    }
}

/// What to do when the clock goes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockPolicySetting {
    /// Answer 503 until the clock catches up.
    Refuse,
    /// Hold requests while the clock is at most `max` behind (and for at
    /// most `max`), then refuse.
    Wait {
        /// The bound.
        max: Duration,
    },
    /// Keep issuing from the last timestamp, at most `max_ahead` in front
    /// of the clock, then refuse.
    Borrow {
        /// The bound.
        max_ahead: Duration,
    },
}

impl ClockPolicySetting {
    /// `refuse`, `wait` or `borrow`.
    pub fn name(self) -> &'static str {
        match self {
            ClockPolicySetting::Refuse => "refuse",
            ClockPolicySetting::Wait { .. } => "wait",
            ClockPolicySetting::Borrow { .. } => "borrow",
        }
    }

    /// The bound, for `wait` and `borrow`.
    pub fn bound(self) -> Option<Duration> {
        match self {
            ClockPolicySetting::Refuse => None,
            ClockPolicySetting::Wait { max } => Some(max),
            ClockPolicySetting::Borrow { max_ahead } => Some(max_ahead),
        }
    }
}

/// A coordination service to claim slots from (etcd, ZooKeeper).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorConfig {
    /// `etcd://HOST:PORT[,HOST:PORT...]` or `zk://HOST:PORT[,...][/CHROOT]`.
    pub url: CoordinatorUrl,
    /// The fleet name: slots live under `/snowmint/<fleet>/slots/<slot>`.
    pub fleet: String,
    /// The slots this node may claim.
    pub slots: RangeInclusive<u64>,
    /// How long a claim lives without renewal.
    pub claim_ttl: Duration,
}

/// Where the node's identity comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// Given explicitly (or the default node 0/0).
    Static(Node),
    /// The ordinal of a hostname; `None` reads the system's.
    Hostname(Option<String>),
    /// Claimed from a coordination service.
    Coordinator(CoordinatorConfig),
}

/// Everything `snowmint serve` needs to know, resolved and checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Where the node's identity comes from.
    pub identity: Identity,
    /// Directory of the high-water mark files.
    pub state_dir: PathBuf,
    /// The layout IDs are issued in.
    pub layout: Layout,
    /// What to do when the clock goes back.
    pub clock_policy: ClockPolicySetting,
    /// Longest gap to the high-water mark waited out at start.
    pub mark_wait_max: Duration,
    /// How far ahead of the clock the mark is reserved.
    pub mark_step: Duration,
    /// Longest time a request may take; also the longest a connection may
    /// take to send a request head, or sit idle between requests.
    pub request_timeout: Duration,
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
        /// What is wrong.
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

/// The merged layers, looked up with precedence.
struct Lookup<'a> {
    layers: &'a [Layer],
    origins: BTreeMap<Setting, Origin>,
}

impl Lookup<'_> {
    /// The highest-precedence text for `setting`, recording its origin.
    fn text(&mut self, setting: Setting) -> Option<(String, Origin)> {
        let found = self.layers.iter().find_map(|layer| {
            layer
                .values
                .get(&setting)
                .map(|v| (v.clone(), layer.origin.clone()))
        });
        let origin = found.as_ref().map_or(Origin::Default, |(_, o)| o.clone());
        self.origins.insert(setting, origin);
        found
    }

    /// Parses the value of `setting` with `parse`, or returns `None` if
    /// unset; errors name the origin.
    fn get<T>(
        &mut self,
        setting: Setting,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<Option<T>, ConfigError> {
        let Some((text, origin)) = self.text(setting) else {
            return Ok(None);
        };
        parse(text.trim())
            .map(Some)
            .map_err(|message| ConfigError::Invalid {
                setting,
                origin: Named(setting, &origin).to_string(),
                message,
            })
    }

    fn named(&self, setting: Setting) -> String {
        Named(setting, &self.origins[&setting]).to_string()
    }

    fn is_set(&self, setting: Setting) -> bool {
        self.origins[&setting] != Origin::Default
    }
}

impl Config {
    /// Resolves `layers` (highest precedence first: flags, environment,
    /// file) into a checked configuration. `env` is consulted only for the
    /// default state directory (`XDG_STATE_HOME`, `HOME`).
    pub fn resolve(
        layers: &[Layer],
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let mut l = Lookup {
            layers,
            origins: BTreeMap::new(),
        };
        let listen = l
            .get(Setting::Listen, |s| {
                s.parse::<SocketAddr>().map_err(|_| {
                    format!(
                        "listen {s:?} is not an address (expected IP:PORT such as 127.0.0.1:8080)"
                    )
                })
            })?
            .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 8080)));

        let layout = l
            .get(Setting::Layout, |s| {
                s.parse::<Layout>().map_err(|e| e.to_string())
            })?
            .unwrap_or_default();
        let layout = match l.get(Setting::Epoch, |s| {
            let epoch = s
                .parse::<i64>()
                .map_err(|_| format!("epoch {s:?} is not a number of Unix milliseconds"))?;
            layout.with_epoch(epoch).map_err(|e| e.to_string())
        })? {
            Some(with_epoch) => with_epoch,
            None => layout,
        };

        let field = |field: Field| {
            let max = layout.max(field);
            move |s: &str| parse_bounded(field.name(), s, 0, max).map_err(|e| e.to_string())
        };
        let datacenter = l.get(Setting::Datacenter, field(Field::Datacenter))?;
        let machine = l.get(Setting::Machine, field(Field::Machine))?;
        let from_hostname = l
            .get(Setting::MachineFromHostname, |s| {
                parse_bool("machine_from_hostname", s)
            })?
            .unwrap_or(false);
        let hostname = l.get(Setting::Hostname, |s| Ok(s.to_owned()))?;

        let coordinator = l.get(Setting::Coordinator, |s| {
            s.parse::<CoordinatorUrl>().map_err(|e| e.to_string())
        })?;
        let fleet = l.get(Setting::Fleet, parse_fleet)?;
        let last_slot = layout.node_count() - 1;
        let slots = l.get(Setting::Slots, |s| parse_slots(s, last_slot))?;
        let claim_ttl = l.get(Setting::ClaimTtl, |s| {
            let ttl = parse_duration("claim_ttl", s)?;
            if !(MIN_TTL..=MAX_TTL).contains(&ttl) {
                return Err(format!(
                    "claim_ttl {s:?} is out of range ({}s..={}s)",
                    MIN_TTL.as_secs(),
                    MAX_TTL.as_secs()
                ));
            }
            Ok(ttl)
        })?;

        let explicit = [Setting::Datacenter, Setting::Machine]
            .into_iter()
            .filter(|s| l.is_set(*s))
            .map(|s| l.named(s))
            .collect::<Vec<_>>();
        let identity = if let Some(url) = coordinator {
            let clash: Vec<_> = explicit
                .iter()
                .cloned()
                .chain(from_hostname.then(|| l.named(Setting::MachineFromHostname)))
                .collect();
            if !clash.is_empty() {
                return Err(ConfigError::Conflict(format!(
                    "{} conflicts with {}: a node takes its identity from one place",
                    l.named(Setting::Coordinator),
                    clash.join(" and ")
                )));
            }
            Identity::Coordinator(CoordinatorConfig {
                url,
                fleet: fleet.unwrap_or_else(|| "default".to_owned()),
                slots: slots.unwrap_or(0..=last_slot),
                claim_ttl: claim_ttl.unwrap_or(Duration::from_secs(10)),
            })
        } else {
            let stray: Vec<_> = [Setting::Fleet, Setting::Slots, Setting::ClaimTtl]
                .into_iter()
                .filter(|s| l.is_set(*s))
                .map(|s| l.named(s))
                .collect();
            if !stray.is_empty() {
                return Err(ConfigError::Conflict(format!(
                    "{} only applies with --coordinator",
                    stray.join(" and ")
                )));
            }
            if from_hostname {
                if !explicit.is_empty() {
                    return Err(ConfigError::Conflict(format!(
                        "{} conflicts with {}: a node takes its identity from one place",
                        l.named(Setting::MachineFromHostname),
                        explicit.join(" and ")
                    )));
                }
                Identity::Hostname(hostname)
            } else {
                if hostname.is_some() {
                    return Err(ConfigError::Conflict(format!(
                        "{} only applies with --machine-from-hostname",
                        l.named(Setting::Hostname)
                    )));
                }
                Identity::Static(Node {
                    datacenter: datacenter.unwrap_or(0),
                    machine: machine.unwrap_or(0),
                })
            }
        };

        let state_dir = l
            .get(Setting::StateDir, |s| Ok(PathBuf::from(s)))?
            .unwrap_or_else(|| default_state_dir(&env));

        let clock_max = l
            .get(Setting::ClockMax, |s| parse_duration("clock_max", s))?
            .unwrap_or(Duration::from_secs(2));
        let clock_policy = l
            .get(Setting::ClockPolicy, |s| match s {
                "refuse" => Ok(ClockPolicySetting::Refuse),
                "wait" => Ok(ClockPolicySetting::Wait { max: clock_max }),
                "borrow" => Ok(ClockPolicySetting::Borrow {
                    max_ahead: clock_max,
                }),
                _ => Err(format!(
                    "clock_policy {s:?} is not a policy (expected refuse, wait or borrow)"
                )),
            })?
            .unwrap_or(ClockPolicySetting::Refuse);

        let mark_wait_max = l
            .get(Setting::MarkWaitMax, |s| parse_duration("mark_wait_max", s))?
            .unwrap_or(Duration::from_secs(2));
        let mark_step = l
            .get(Setting::MarkStep, |s| {
                let step = parse_duration("mark_step", s)?;
                if step < Duration::from_millis(10) {
                    return Err(format!(
                        "mark_step {s:?} is too small (at least 10ms: each step is a disk write)"
                    ));
                }
                Ok(step)
            })?
            .unwrap_or(Duration::from_secs(1));
        if mark_step > mark_wait_max {
            return Err(ConfigError::Conflict(format!(
                "mark_step {} ms ({}) is longer than mark_wait_max {} ms ({}): a node killed and restarted at once would refuse to start",
                mark_step.as_millis(),
                l.named(Setting::MarkStep),
                mark_wait_max.as_millis(),
                l.named(Setting::MarkWaitMax)
            )));
        }
        let request_timeout = l
            .get(Setting::RequestTimeout, |s| {
                let timeout = parse_duration("request_timeout", s)?;
                if timeout.is_zero() {
                    return Err(format!("request_timeout {s:?} must be more than 0"));
                }
                Ok(timeout)
            })?
            .unwrap_or(Duration::from_secs(10));
        let clock_offset_ms = l
            .get(Setting::ClockOffsetMs, |s| {
                // A year either way is plenty for any test or correction.
                const YEAR_MS: i64 = 366 * 86_400_000;
                s.parse::<i64>()
                    .ok()
                    .filter(|v| v.abs() <= YEAR_MS)
                    .ok_or_else(|| {
                        format!(
                            "clock_offset_ms {s:?} is not a number of milliseconds in -{YEAR_MS}..={YEAR_MS}"
                        )
                    })
            })?
            .unwrap_or(0);

        Ok(Config {
            listen,
            identity,
            state_dir,
            layout,
            clock_policy,
            mark_wait_max,
            mark_step,
            request_timeout,
            clock_offset_ms,
            origins: l.origins,
        })
    }

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
        let file = config_file.or_else(|| env("SNOWMINT_CONFIG").map(PathBuf::from));
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

/// Reads a duration: a number with a unit, `ms`, `s`, `m` or `h` (`500ms`,
/// `2s`, `1.5s`, `1m`), or a bare `0`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint_server::config::parse_duration;
///
/// assert_eq!(parse_duration("clock_max", "1.5s"), Ok(Duration::from_millis(1500)));
/// assert_eq!(parse_duration("clock_max", "250ms"), Ok(Duration::from_millis(250)));
/// assert_eq!(
///     parse_duration("clock_max", "2").unwrap_err(),
///     "clock_max \"2\" is not a duration (expected a number and a unit: 500ms, 2s, 1.5s, 1m, 1h)"
/// );
/// ```
pub fn parse_duration(name: &str, text: &str) -> Result<Duration, String> {
    let bad = || {
        format!(
            "{name} {text:?} is not a duration (expected a number and a unit: 500ms, 2s, 1.5s, 1m, 1h)"
        )
    };
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let scale_ms = match unit {
        "ms" => 1.0,
        "s" => 1_000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return Err(bad()),
    };
    if number.is_empty() || number.starts_with('.') || number.ends_with('.') {
        return Err(bad());
    }
    let value: f64 = number.parse().map_err(|_| bad())?;
    let ms = value * scale_ms;
    // A day is far beyond any timeout or bound here; refusing more keeps
    // the conversion exact.
    if ms > 86_400_000.0 {
        return Err(format!("{name} {text:?} is too long (at most 24h)"));
    }
    Ok(Duration::from_micros((ms * 1000.0).round() as u64))
}

fn parse_bool(name: &str, text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(format!(
            "{name} {text:?} is not a boolean (expected true or false)"
        )),
    }
}

/// Why a number was rejected; the message is the same for flags and HTTP
/// parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NumberError {
    /// Not an integer at all.
    NotANumber(String),
    /// An integer outside the range.
    OutOfRange(String),
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumberError::NotANumber(m) | NumberError::OutOfRange(m) => f.write_str(m),
        }
    }
}

/// An integer in `min..=max`: `count "abc" is not a number (expected an
/// integer in 1..=4096)`, `count 4097 is out of range (1..=4096)`.
pub(crate) fn parse_bounded(
    name: &str,
    text: &str,
    min: u64,
    max: u64,
) -> Result<u64, NumberError> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(NumberError::NotANumber(format!(
            "{name} {:?} is not a number (expected an integer in {min}..={max})",
            snip(text)
        )));
    }
    match text.parse::<u64>() {
        Ok(value) if (min..=max).contains(&value) => Ok(value),
        _ => Err(NumberError::OutOfRange(format!(
            "{name} {} is out of range ({min}..={max})",
            snip(text)
        ))),
    }
}

/// Cuts long input so that messages stay readable.
pub(crate) fn snip(text: &str) -> String {
    const LIMIT: usize = 40;
    match text.char_indices().nth(LIMIT) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}...", &text[..at]),
    }
}

fn parse_fleet(text: &str) -> Result<String, String> {
    // "." and ".." would name the wrong directory of znodes.
    let ok = !text.is_empty()
        && text != "."
        && text != ".."
        && text.len() <= 64
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if ok {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "fleet {:?} is not a fleet name (1 to 64 of a-z A-Z 0-9 - _ ., not . or ..)",
            snip(text)
        ))
    }
}

fn parse_slots(text: &str, last: u64) -> Result<RangeInclusive<u64>, String> {
    let (a, b) = text.split_once('-').unwrap_or((text, text));
    let first = parse_bounded("slots", a, 0, last).map_err(|e| e.to_string())?;
    let end = parse_bounded("slots", b, 0, last).map_err(|e| e.to_string())?;
    if first > end {
        return Err(format!(
            "slots {text:?} is an empty range (expected A-B with A <= B in 0..={last})"
        ));
    }
    Ok(first..=end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(pairs: &[(Setting, &str)]) -> Layer {
        let mut layer = Layer::flags();
        for (setting, value) in pairs {
            layer.set(*setting, *value);
        }
        layer
    }

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn file(text: &str) -> Layer {
        Layer::from_toml(Path::new("/etc/snowmint.toml"), text).unwrap()
    }

    #[test]
    fn defaults() {
        let config = Config::resolve(&[], env(&[("HOME", "/home/ana")])).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(config.identity, Identity::Static(Node::default()));
        assert_eq!(
            config.state_dir,
            PathBuf::from("/home/ana/.local/state/snowmint")
        );
        assert_eq!(config.layout, Layout::TWITTER);
        assert_eq!(config.clock_policy, ClockPolicySetting::Refuse);
        assert_eq!(config.mark_step, Duration::from_secs(1));
        assert_eq!(config.origin_note(Setting::Machine), "(default)");
    }

    #[test]
    fn flags_beat_env_beat_file() {
        let f = file("machine = 3\ndatacenter = 9\nlisten = \"127.0.0.1:9000\"\n");
        let e = Layer::from_env(env(&[
            ("SNOWMINT_MACHINE", "4"),
            ("SNOWMINT_LISTEN", "127.0.0.1:9001"),
        ]));
        let all = [flags(&[(Setting::Machine, "5")]), e.clone(), f.clone()];
        let config = Config::resolve(&all, |_| None).unwrap();
        assert_eq!(
            config.node(),
            Some(Node {
                datacenter: 9,
                machine: 5
            })
        );
        assert_eq!(config.listen.port(), 9001);
        assert_eq!(config.origin_note(Setting::Machine), "(from --machine)");
        assert_eq!(
            config.origin_note(Setting::Datacenter),
            "(from datacenter in /etc/snowmint.toml)"
        );

        let config = Config::resolve(&[Layer::flags(), e, f.clone()], |_| None).unwrap();
        assert_eq!(config.node().unwrap().machine, 4);
        let config = Config::resolve(&[Layer::flags(), f], |_| None).unwrap();
        assert_eq!(config.node().unwrap().machine, 3);
        assert_eq!(config.listen.port(), 9000);
    }

    #[test]
    fn bad_values_name_the_value_the_range_and_the_origin() {
        let check = |layer: Layer, expected: &str| {
            let err = Config::resolve(&[layer], |_| None).unwrap_err();
            assert_eq!(err.to_string(), expected);
        };
        check(
            flags(&[(Setting::Datacenter, "32")]),
            "datacenter 32 is out of range (0..=31) (from --datacenter)",
        );
        check(
            Layer::from_env(env(&[("SNOWMINT_MACHINE", "-1")])),
            "machine -1 is out of range (0..=31) (from SNOWMINT_MACHINE)",
        );
        check(
            file("machine = \"seven\""),
            "machine \"seven\" is not a number (expected an integer in 0..=31) (from machine in /etc/snowmint.toml)",
        );
        check(
            flags(&[(Setting::ClockPolicy, "sometimes")]),
            "clock_policy \"sometimes\" is not a policy (expected refuse, wait or borrow) (from --clock-policy)",
        );
        check(
            flags(&[(Setting::Listen, "localhost")]),
            "listen \"localhost\" is not an address (expected IP:PORT such as 127.0.0.1:8080) (from --listen)",
        );
        check(
            flags(&[(Setting::Layout, "twitter"), (Setting::Epoch, "-5")]),
            "invalid layout: epoch -5 is before 1970-01-01 (0..) (from --epoch)",
        );
    }

    #[test]
    fn machine_range_follows_the_layout() {
        let layer = flags(&[(Setting::Layout, "41/0/10/12"), (Setting::Machine, "1000")]);
        let config = Config::resolve(&[layer], |_| None).unwrap();
        assert_eq!(config.node().unwrap().machine, 1000);
    }

    #[test]
    fn identity_sources_conflict() {
        let err = Config::resolve(
            &[
                flags(&[(Setting::MachineFromHostname, "true")]),
                file("datacenter = 1"),
            ],
            |_| None,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--machine-from-hostname conflicts with datacenter in /etc/snowmint.toml: a node takes its identity from one place"
        );
        let err = Config::resolve(&[flags(&[(Setting::Slots, "0-9")])], |_| None).unwrap_err();
        assert_eq!(err.to_string(), "--slots only applies with --coordinator");
        let err = Config::resolve(&[flags(&[(Setting::Hostname, "ids-3")])], |_| None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--hostname only applies with --machine-from-hostname"
        );
    }

    #[test]
    fn hostname_and_coordinator_identities() {
        let layer = flags(&[
            (Setting::MachineFromHostname, "yes"),
            (Setting::Hostname, "ids-12"),
        ]);
        let config = Config::resolve(&[layer], |_| None).unwrap();
        assert_eq!(config.identity, Identity::Hostname(Some("ids-12".into())));

        let layer = flags(&[
            (Setting::Coordinator, "etcd://127.0.0.1:2379,127.0.0.1:2380"),
            (Setting::Slots, "3-9"),
            (Setting::ClaimTtl, "5s"),
        ]);
        let config = Config::resolve(&[layer], |_| None).unwrap();
        let Identity::Coordinator(c) = config.identity else {
            panic!("not coordinated")
        };
        assert_eq!((c.slots, c.claim_ttl), (3..=9, Duration::from_secs(5)));
        assert_eq!(c.fleet, "default");

        for (value, why) in [
            (
                "http://x:1",
                "coordinator URL \"http://x:1\" is invalid: scheme \"http\" is neither etcd nor zk",
            ),
            ("etcd://x", "endpoint \"x\" has no port"),
            (
                "zk://x:99999/app",
                "port \"99999\" is not a number in 1..=65535",
            ),
        ] {
            let err = Config::resolve(&[flags(&[(Setting::Coordinator, value)])], |_| None)
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{err}");
        }
        let err = Config::resolve(
            &[flags(&[
                (Setting::Coordinator, "zk://127.0.0.1:2181/app"),
                (Setting::Slots, "9-3"),
            ])],
            |_| None,
        )
        .unwrap_err();
        assert!(err.to_string().contains("empty range"), "{err}");

        let coordinated = |pairs: &[(Setting, &str)]| {
            let mut layer = flags(&[(Setting::Coordinator, "etcd://127.0.0.1:2379")]);
            for (setting, value) in pairs {
                layer.set(*setting, *value);
            }
            Config::resolve(&[layer], |_| None)
        };
        assert_eq!(
            coordinated(&[(Setting::ClaimTtl, "500ms")])
                .unwrap_err()
                .to_string(),
            "claim_ttl \"500ms\" is out of range (1s..=3600s) (from --claim-ttl)"
        );
        assert!(coordinated(&[(Setting::ClaimTtl, "1s")]).is_ok());
        assert!(coordinated(&[(Setting::ClaimTtl, "2h")]).is_err());
        assert!(
            coordinated(&[(Setting::Fleet, "..")])
                .unwrap_err()
                .to_string()
                .starts_with("fleet \"..\" is not a fleet name")
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("x", "0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("x", "1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("x", "2h"), Ok(Duration::from_secs(7200)));
        for bad in ["", "s", "1", "1.s", ".5s", "1sec", "-1s", "1e3ms"] {
            assert!(parse_duration("x", bad).is_err(), "{bad:?}");
        }
        assert!(
            parse_duration("x", "25h")
                .unwrap_err()
                .contains("at most 24h")
        );
    }

    #[test]
    fn the_step_must_fit_the_start_wait() {
        let err = Config::resolve(&[flags(&[(Setting::MarkStep, "3s")])], |_| None).unwrap_err();
        assert!(err.to_string().contains("would refuse to start"), "{err}");
    }

    #[test]
    fn file_errors_name_the_file() {
        let err = Layer::from_toml(Path::new("/x.toml"), "machin = 3").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("config file /x.toml: unknown key \"machin\""),
            "{err}"
        );
        let err = Layer::from_toml(Path::new("/x.toml"), "machine = [1]").unwrap_err();
        assert_eq!(
            err.to_string(),
            "config file /x.toml: machine must be a string, an integer or a boolean, not array"
        );
        assert!(Layer::from_toml(Path::new("/x.toml"), "machine = ").is_err());
        let err = Layer::from_file(Path::new("/nonexistent/snowmint.toml")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("config file /nonexistent/snowmint.toml: ")
        );
    }

    #[test]
    fn empty_env_values_count_as_unset() {
        let e = Layer::from_env(env(&[("SNOWMINT_MACHINE", "")]));
        let config = Config::resolve(&[e], |_| None).unwrap();
        assert_eq!(config.origin(Setting::Machine), &Origin::Default);
    }
}
