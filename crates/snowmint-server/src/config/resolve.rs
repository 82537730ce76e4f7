//! From layers of text to a checked [`Config`]: each setting is looked up
//! in precedence order and read by the one parser of its kind of value (in
//! `snowmint` for numbers, durations, layouts, epochs and clock policies, in
//! `snowmint_fleet` for coordinator URLs, fleet names, slot ranges and claim
//! TTLs), then the settings that depend on each other are checked together.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::time::Duration;

use snowmint::{ClockPolicy, Field, Layout, Node};
use snowmint_fleet::{CoordinatorConfig, CoordinatorUrl, FleetName, SlotRange};

use super::layer::Layer;
use super::setting::{Named, Origin, Setting};
use super::{Config, ConfigError, Identity, default_state_dir};
use crate::auth::AuthScope;
use crate::net::{Limits, TlsFiles};

/// Every duration setting is at most a day: far beyond any timeout or bound
/// here.
const DAY: Duration = Duration::from_secs(86_400);

/// The shift of the clock is at most a year either way: plenty for any test
/// or correction.
const YEAR_MS: i64 = 366 * 86_400_000;

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

    /// Reads the value of `setting` with `parse`, or returns `None` if
    /// unset; errors say where the value came from.
    fn get<T, E: fmt::Display>(
        &mut self,
        setting: Setting,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<Option<T>, ConfigError> {
        let Some((text, origin)) = self.text(setting) else {
            return Ok(None);
        };
        parse(&text)
            .map(Some)
            .map_err(|error| ConfigError::Invalid {
                setting,
                origin: Named(setting, &origin).to_string(),
                message: error.to_string(),
            })
    }

    /// A duration setting in `range`, or `default`.
    fn duration(
        &mut self,
        setting: Setting,
        range: RangeInclusive<Duration>,
        default: Duration,
    ) -> Result<Duration, ConfigError> {
        let value = self.get(setting, |s| {
            snowmint::parse_duration(setting.key(), s, range)
        })?;
        Ok(value.unwrap_or(default))
    }

    /// Where `setting` came from, for messages (looked up already).
    fn named(&self, setting: Setting) -> String {
        Named(setting, &self.origins[&setting]).to_string()
    }

    /// Whether `setting` was given anywhere (looked up already).
    fn is_set(&self, setting: Setting) -> bool {
        self.origins[&setting] != Origin::Default
    }

    /// The settings of `settings` that were given, named for messages.
    fn given(&self, settings: &[Setting]) -> Vec<String> {
        settings
            .iter()
            .filter(|s| self.is_set(**s))
            .map(|s| self.named(*s))
            .collect()
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
            .get(Setting::Listen, parse_listen)?
            .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 8080)));
        let grpc_listen = l.get(Setting::GrpcListen, |text| {
            parse_address("grpc_listen", text)
        })?;
        let layout = layout(&mut l)?;
        let identity = identity(&mut l, layout)?;
        let state_dir = l
            .get(Setting::StateDir, |s| {
                Ok::<_, std::convert::Infallible>(PathBuf::from(s))
            })?
            .unwrap_or_else(|| default_state_dir(&env));
        let clock_policy = clock_policy(&mut l)?;
        let (mark_wait_max, mark_step) = marks(&mut l)?;
        let limits = limits(&mut l)?;
        let tls = tls(&mut l)?;
        let auth = auth(&mut l)?;
        let clock_offset_ms = l
            .get(Setting::ClockOffsetMs, |s| {
                snowmint::parse_bounded_signed(Setting::ClockOffsetMs.key(), s, -YEAR_MS..=YEAR_MS)
            })?
            .unwrap_or(0);
        Ok(Config {
            listen,
            grpc_listen,
            identity,
            state_dir,
            layout,
            clock_policy,
            mark_wait_max,
            mark_step,
            limits,
            tls,
            auth,
            clock_offset_ms,
            origins: l.origins,
        })
    }
}

fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    parse_address("listen", text)
}

fn parse_address(name: &str, text: &str) -> Result<SocketAddr, String> {
    text.parse::<SocketAddr>().map_err(|_| {
        format!(
            "{name} {:?} is not an address (expected IP:PORT such as 127.0.0.1:8080)",
            snowmint::echo(text)
        )
    })
}

fn parse_bool(text: &str) -> Result<bool, String> {
    const TRUE: [&str; 4] = ["true", "1", "yes", "on"];
    const FALSE: [&str; 4] = ["false", "0", "no", "off"];
    let is = |names: [&str; 4]| names.iter().any(|n| n.eq_ignore_ascii_case(text));
    if is(TRUE) {
        Ok(true)
    } else if is(FALSE) {
        Ok(false)
    } else {
        Err(format!(
            "machine_from_hostname {:?} is not a boolean (expected true or false)",
            snowmint::echo(text)
        ))
    }
}

/// The layout, with the epoch on top when one is given.
fn layout(l: &mut Lookup<'_>) -> Result<Layout, ConfigError> {
    let layout = l
        .get(Setting::Layout, str::parse::<Layout>)?
        .unwrap_or_default();
    let with_epoch = l.get(Setting::Epoch, |s| {
        snowmint::parse_epoch(s).and_then(|epoch| layout.with_epoch(epoch))
    })?;
    Ok(with_epoch.unwrap_or(layout))
}

/// Where the node's identity comes from: a coordinator, a hostname, or
/// explicit values; settings of one source conflict with the others'.
fn identity(l: &mut Lookup<'_>, layout: Layout) -> Result<Identity, ConfigError> {
    let datacenter = l.get(Setting::Datacenter, |s| {
        layout.parse_field(Field::Datacenter, s)
    })?;
    let machine = l.get(Setting::Machine, |s| layout.parse_field(Field::Machine, s))?;
    let from_hostname = l
        .get(Setting::MachineFromHostname, parse_bool)?
        .unwrap_or(false);
    let hostname = l.get(Setting::Hostname, |s| {
        Ok::<_, std::convert::Infallible>(s.to_owned())
    })?;
    let coordinated = coordinator(l, layout)?;

    let explicit = l.given(&[Setting::Datacenter, Setting::Machine]);
    let one_place = |first: String, others: &[String]| {
        ConfigError::Conflict(format!(
            "{first} conflicts with {}: a node takes its identity from one place",
            others.join(" and ")
        ))
    };
    if let Some((url, config)) = coordinated {
        let mut clash = explicit;
        clash.extend(l.given(&[Setting::MachineFromHostname]));
        if !clash.is_empty() {
            return Err(one_place(l.named(Setting::Coordinator), &clash));
        }
        return Ok(Identity::Coordinator { url, config });
    }
    if from_hostname {
        if !explicit.is_empty() {
            return Err(one_place(l.named(Setting::MachineFromHostname), &explicit));
        }
        return Ok(Identity::Hostname(hostname));
    }
    if hostname.is_some() {
        return Err(ConfigError::Conflict(format!(
            "{} only applies with --machine-from-hostname",
            l.named(Setting::Hostname)
        )));
    }
    Ok(Identity::Static(Node {
        datacenter: datacenter.unwrap_or(0),
        machine: machine.unwrap_or(0),
    }))
}

/// The coordinator and the claim settings, when a coordinator is given;
/// the claim settings without one are a mistake.
fn coordinator(
    l: &mut Lookup<'_>,
    layout: Layout,
) -> Result<Option<(CoordinatorUrl, CoordinatorConfig)>, ConfigError> {
    let url = l.get(Setting::Coordinator, str::parse::<CoordinatorUrl>)?;
    let fleet = l.get(Setting::Fleet, str::parse::<FleetName>)?;
    let slots = l.get(Setting::Slots, |s| {
        s.parse::<SlotRange>().and_then(|slots| slots.check(layout))
    })?;
    let ttl = l.get(Setting::ClaimTtl, snowmint_fleet::parse_claim_ttl)?;
    let Some(url) = url else {
        let stray = l.given(&[Setting::Fleet, Setting::Slots, Setting::ClaimTtl]);
        if !stray.is_empty() {
            return Err(ConfigError::Conflict(format!(
                "{} only applies with --coordinator",
                stray.join(" and ")
            )));
        }
        return Ok(None);
    };
    let config = CoordinatorConfig::new(
        fleet.as_ref().map_or("default", FleetName::as_str),
        slots.unwrap_or(SlotRange::all(layout)),
        ttl.unwrap_or(Duration::from_secs(10)),
        // Named once the address is known (see `CoordinatorConfig::with_holder`).
        String::new(),
        layout,
    )
    // Every part was checked above, each naming where it came from.
    .map_err(|error| ConfigError::Conflict(error.to_string()))?;
    Ok(Some((url, config)))
}

/// What each client is allowed (see [`Limits`]).
fn limits(l: &mut Lookup<'_>) -> Result<Limits, ConfigError> {
    let request_timeout = l.duration(
        Setting::RequestTimeout,
        Duration::from_millis(1)..=DAY,
        Duration::from_secs(10),
    )?;
    let defaults = Limits::new(request_timeout);
    let mut count = |setting: Setting, max: u64| {
        l.get(setting, |s| {
            snowmint::parse_bounded(setting.key(), s, 1..=max)
        })
    };
    let max_connections = count(Setting::MaxConnections, 1 << 20)?;
    let max_streams = count(Setting::MaxStreams, 1 << 16)?;
    let max_calls = count(Setting::MaxCalls, 1 << 20)?;
    let max_connection_age = l.duration(
        Setting::MaxConnectionAge,
        Duration::from_secs(1)..=DAY,
        defaults.max_connection_age,
    )?;
    Ok(Limits {
        max_connections: max_connections.unwrap_or(defaults.max_connections),
        max_streams: max_streams.map_or(defaults.max_streams, |n| n as u32),
        max_calls: max_calls.unwrap_or(defaults.max_calls),
        max_connection_age,
        request_timeout,
    })
}

fn path(text: &str) -> Result<PathBuf, std::convert::Infallible> {
    Ok(PathBuf::from(text))
}

/// The TLS files, when TLS is on: a certificate and its key together, and
/// a client CA only with them. (The files are read at start, not here.)
fn tls(l: &mut Lookup<'_>) -> Result<Option<TlsFiles>, ConfigError> {
    let cert = l.get(Setting::TlsCert, path)?;
    let key = l.get(Setting::TlsKey, path)?;
    let client_ca = l.get(Setting::TlsClientCa, path)?;
    match (cert, key) {
        (Some(cert), Some(key)) => Ok(Some(TlsFiles {
            cert,
            key,
            client_ca,
        })),
        (None, None) if client_ca.is_none() => Ok(None),
        (None, None) => Err(ConfigError::Conflict(format!(
            "{} only applies with --tls-cert and --tls-key (clients are checked only over TLS)",
            l.named(Setting::TlsClientCa)
        ))),
        (Some(_), None) => Err(ConfigError::Conflict(format!(
            "{} needs --tls-key too: the certificate's private key",
            l.named(Setting::TlsCert)
        ))),
        (None, Some(_)) => Err(ConfigError::Conflict(format!(
            "{} needs --tls-cert too: the key's certificate",
            l.named(Setting::TlsKey)
        ))),
    }
}

/// The token file and the scope it guards.
fn auth(l: &mut Lookup<'_>) -> Result<Option<(PathBuf, AuthScope)>, ConfigError> {
    let file = l.get(Setting::AuthTokenFile, path)?;
    let scope = l.get(Setting::AuthScope, str::parse::<AuthScope>)?;
    match (file, scope) {
        (Some(file), scope) => Ok(Some((file, scope.unwrap_or_default()))),
        (None, None) => Ok(None),
        (None, Some(_)) => Err(ConfigError::Conflict(format!(
            "{} only applies with --auth-token-file",
            l.named(Setting::AuthScope)
        ))),
    }
}

/// The clock policy, with `clock_max` as its bound.
fn clock_policy(l: &mut Lookup<'_>) -> Result<ClockPolicy, ConfigError> {
    let clock_max = l.duration(
        Setting::ClockMax,
        Duration::ZERO..=DAY,
        Duration::from_secs(2),
    )?;
    let policy = l.get(Setting::ClockPolicy, |s| {
        ClockPolicy::from_name(s, clock_max)
    })?;
    Ok(policy.unwrap_or(ClockPolicy::Refuse))
}

/// The start-up wait for the high-water mark and the step it is reserved
/// in: a step longer than the wait would make a node killed and restarted
/// at once refuse to start.
fn marks(l: &mut Lookup<'_>) -> Result<(Duration, Duration), ConfigError> {
    let wait_max = l.duration(
        Setting::MarkWaitMax,
        Duration::ZERO..=DAY,
        Duration::from_secs(2),
    )?;
    // Each step is a disk write.
    let step = l.duration(
        Setting::MarkStep,
        Duration::from_millis(10)..=DAY,
        Duration::from_secs(1),
    )?;
    if step > wait_max {
        return Err(ConfigError::Conflict(format!(
            "mark_step {} ({}) is longer than mark_wait_max {} ({}): a node killed and restarted at once would refuse to start",
            snowmint::format_duration(step),
            l.named(Setting::MarkStep),
            snowmint::format_duration(wait_max),
            l.named(Setting::MarkWaitMax)
        )));
    }
    Ok((wait_max, step))
}
