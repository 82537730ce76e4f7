//! From layers of text to a checked [`Config`]: each setting is looked up
//! in precedence order, falling back to its declared default (see
//! `setting.rs`), and read by the one parser of its kind of value (in
//! `snowmint` for numbers, durations, layouts, epochs and clock policies, in
//! `snowmint_fleet` for coordinator URLs, fleet names, slot ranges and claim
//! TTLs), then the settings that depend on each other are checked together.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use snowmint::{ClockPolicy, Layout};

use super::layer::Layer;
use super::setting::{DefaultValue, Named, Origin, Setting};
use super::{Config, ConfigError, Identity, default_state_dir};
use crate::auth::AuthScope;
use crate::listener::{Guard, Listener, Listeners};
use crate::net::{Limits, TlsFiles};

mod coordinator;

use coordinator::coordinator;
pub(super) use coordinator::fleet_access;

/// The merged layers, looked up with precedence.
struct Lookup<'a> {
    layers: &'a [Layer],
    origins: BTreeMap<Setting, Origin>,
}

impl Lookup<'_> {
    /// The highest-precedence text for `setting`, else its declared
    /// default value, recording its origin.
    fn text(&mut self, setting: Setting) -> Option<(String, Origin)> {
        let given = self.layers.iter().find_map(|layer| {
            layer
                .values
                .get(&setting)
                .map(|v| (v.clone(), layer.origin.clone()))
        });
        let origin = given.as_ref().map_or(Origin::Default, |(_, o)| o.clone());
        self.origins.insert(setting, origin);
        given.or_else(|| match setting.spec().default {
            DefaultValue::Value(text) => Some((text.to_owned(), Origin::Default)),
            DefaultValue::Unset(_) => None,
        })
    }

    /// Reads the value of `setting` with `parse` (its declared default when
    /// no layer gives one), or returns `None` if it has neither; errors say
    /// where the value came from.
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

    /// [`Lookup::get`] with one of the fleet's readers, whose refusal is
    /// kept as it is ([`ConfigError::Fleet`]).
    fn fleet<T>(
        &mut self,
        setting: Setting,
        parse: impl FnOnce(&str) -> Result<T, snowmint_fleet::ConfigError>,
    ) -> Result<Option<T>, ConfigError> {
        let Some((text, origin)) = self.text(setting) else {
            return Ok(None);
        };
        parse(&text).map(Some).map_err(|source| ConfigError::Fleet {
            origin: Named(setting, &origin).to_string(),
            source,
        })
    }

    /// [`Lookup::fleet`] for a setting declared with a default value.
    fn fleet_required<T>(
        &mut self,
        setting: Setting,
        parse: impl FnOnce(&str) -> Result<T, snowmint_fleet::ConfigError>,
    ) -> Result<T, ConfigError> {
        self.fleet(setting, parse)?
            .ok_or_else(|| unreachable!("{} is declared without a default value", setting.key()))
    }

    /// A duration setting, in its declared range, with a declared default.
    fn duration(&mut self, setting: Setting) -> Result<Duration, ConfigError> {
        let range = setting.spec().duration_range().unwrap_or_else(|| {
            unreachable!("{} is declared without a duration range", setting.key())
        });
        self.required(setting, |s| {
            snowmint::value::parse_duration(setting.key(), s, range)
        })
    }

    /// A whole-number setting, in its declared range, with a declared
    /// default.
    fn integer(&mut self, setting: Setting) -> Result<i64, ConfigError> {
        let range = setting.spec().integer_range().unwrap_or_else(|| {
            unreachable!("{} is declared without an integer range", setting.key())
        });
        self.required(setting, |s| {
            snowmint::value::parse_bounded_signed(setting.key(), s, range)
        })
    }

    /// A setting declared with a default value, so that it always has one.
    fn required<T, E: fmt::Display>(
        &mut self,
        setting: Setting,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, ConfigError> {
        self.get(setting, parse)?
            .ok_or_else(|| unreachable!("{} is declared without a default value", setting.key()))
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
        let mut listeners = listeners(&mut l)?;
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
        unguarded(&mut l, &mut listeners, tls.is_some(), auth.is_some())?;
        let clock_offset_ms = l.integer(Setting::ClockOffsetMs)?;
        let log = l.required(Setting::Log, |s| {
            Ok::<_, std::convert::Infallible>(s.to_owned())
        })?;
        Ok(Config {
            listeners,
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
            log,
            origins: l.origins,
        })
    }
}

/// Each listener's address (HTTP's has a default, the others are off
/// when unset) and idle timeout, by [`Listener`]'s settings.
fn listeners(l: &mut Lookup<'_>) -> Result<Listeners, ConfigError> {
    let http = Listener::Http.address_setting();
    let mut listeners = Listeners::new(l.required(http, |text| parse_address(http.key(), text))?);
    for listener in Listener::ALL {
        let setting = listener.address_setting();
        if listener != Listener::Http
            && let Some(address) = l.get(setting, |text| parse_address(setting.key(), text))?
        {
            listeners.set(listener, address);
        }
        if let Some(idle) = listener.idle_setting() {
            listeners.set_idle_timeout(listener, l.duration(idle)?);
        }
    }
    Ok(listeners)
}

/// Reads `IP:PORT`, or `localhost:PORT` as `127.0.0.1:PORT`.
///
/// `localhost` is loopback by definition (RFC 6761), so it needs no
/// lookup. Other host names are refused rather than looked up: what a name
/// resolves to can change between starts, and a node should listen where
/// its configuration says.
fn parse_address(name: &str, text: &str) -> Result<SocketAddr, String> {
    if let Ok(address) = text.parse::<SocketAddr>() {
        return Ok(address);
    }
    let (host, port) = text.rsplit_once(':').unwrap_or((text, ""));
    let is_localhost = host.eq_ignore_ascii_case("localhost");
    if is_localhost && let Ok(port) = port.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let other_name = text.contains(':')
        && !is_localhost
        && !host.is_empty()
        && !host.starts_with('[')
        && host.parse::<std::net::IpAddr>().is_err();
    let why = if other_name {
        "; host names other than localhost are not looked up, so that where a node listens cannot change with DNS"
    } else {
        ""
    };
    Err(format!(
        "{name} {:?} is not an address (expected IP:PORT such as 127.0.0.1:8080, or localhost:PORT){why}",
        snowmint::value::echo(text)
    ))
}

fn parse_bool(name: &str, text: &str) -> Result<bool, String> {
    const TRUE: [&str; 4] = ["true", "1", "yes", "on"];
    const FALSE: [&str; 4] = ["false", "0", "no", "off"];
    let is = |names: [&str; 4]| names.iter().any(|n| n.eq_ignore_ascii_case(text));
    if is(TRUE) {
        Ok(true)
    } else if is(FALSE) {
        Ok(false)
    } else {
        Err(format!(
            "{name} {:?} is not a boolean (expected true or false)",
            snowmint::value::echo(text)
        ))
    }
}

fn parse_path(text: &str) -> Result<PathBuf, String> {
    if text.is_empty() {
        return Err("the file name is empty".into());
    }
    Ok(PathBuf::from(text))
}

/// The layout, with the epoch on top when one is given.
fn layout(l: &mut Lookup<'_>) -> Result<Layout, ConfigError> {
    let layout = l.required(Setting::Layout, str::parse::<Layout>)?;
    let with_epoch = l.get(Setting::Epoch, |s| {
        snowmint::parse_epoch(s).and_then(|epoch| layout.with_epoch(epoch))
    })?;
    Ok(with_epoch.unwrap_or(layout))
}

/// Where the node's identity comes from: a coordinator, a hostname, or
/// explicit values; settings of one source conflict with the others'.
fn identity(l: &mut Lookup<'_>, layout: Layout) -> Result<Identity, ConfigError> {
    // The node as two numbers (see `Layout::node_from_pair`): datacenter
    // and machine in Twitter's layout.
    let (upper, lowest) = layout.pair_max();
    let datacenter = l.required(Setting::Datacenter, |s| {
        snowmint::value::parse_bounded("datacenter", s, 0..=upper)
    })?;
    let machine = l.required(Setting::Machine, |s| {
        snowmint::value::parse_bounded("machine", s, 0..=lowest)
    })?;
    let from_hostname = l.required(Setting::MachineFromHostname, |s| {
        parse_bool(Setting::MachineFromHostname.key(), s)
    })?;
    let hostname = l.get(Setting::Hostname, |s| {
        Ok::<_, std::convert::Infallible>(s.to_owned())
    })?;
    let coordinated = coordinator(l, layout)?;
    // Both were read within their ranges.
    let node = layout
        .node_from_pair(datacenter, machine)
        .unwrap_or_default();
    // A fixed node's block starts at its own slot; a claimed one's is
    // wherever the claim lands, checked here for its size only.
    let first = if coordinated.is_none() && !from_hostname {
        node.slot()
    } else {
        0
    };
    let slots = l.required(Setting::SlotsPerNode, |s| {
        let count = snowmint::value::parse_bounded("slots_per_node", s, 1..=1 << 30)?;
        layout.check_slot_block(first, count).map(|()| count)
    })?;

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
        let config = config
            .with_slots_per_node(slots)
            .map_err(|source| ConfigError::Fleet {
                origin: [Setting::Slots, Setting::SlotsPerNode]
                    .map(|setting| format!("{} {}", setting.key(), l.named(setting)))
                    .join(", "),
                source,
            })?;
        return Ok(Identity::Coordinator { url, config });
    }
    if from_hostname {
        if !explicit.is_empty() {
            return Err(one_place(l.named(Setting::MachineFromHostname), &explicit));
        }
        if slots > 1 {
            return Err(ConfigError::Conflict(format!(
                "{} does not apply with {}: a pod's ordinal names one slot. Give the pods \
                 --coordinator to claim blocks of {slots}, or fixed nodes --datacenter and \
                 --machine, each the first slot of its own block",
                l.named(Setting::SlotsPerNode),
                l.named(Setting::MachineFromHostname)
            )));
        }
        return Ok(Identity::Hostname(hostname));
    }
    if hostname.is_some() {
        return Err(ConfigError::Conflict(format!(
            "{} only applies with --machine-from-hostname",
            l.named(Setting::Hostname)
        )));
    }
    Ok(if slots == 1 {
        Identity::Static(node)
    } else {
        Identity::StaticSlots { node, slots }
    })
}

/// What each client is allowed (see [`Limits`]).
fn limits(l: &mut Lookup<'_>) -> Result<Limits, ConfigError> {
    let request_timeout = l.duration(Setting::RequestTimeout)?;
    let count = |l: &mut Lookup<'_>, setting: Setting| -> Result<u64, ConfigError> {
        // Declared with a range of positive counts.
        Ok(l.integer(setting)?.unsigned_abs())
    };
    Ok(Limits {
        max_connections: count(l, Setting::MaxConnections)?,
        max_streams: count(l, Setting::MaxStreams)? as u32,
        max_calls: count(l, Setting::MaxCalls)?,
        max_connection_age: l.duration(Setting::MaxConnectionAge)?,
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
    let scope = l.required(Setting::AuthScope, str::parse::<AuthScope>)?;
    match file {
        Some(file) => Ok(Some((file, scope))),
        None if l.is_set(Setting::AuthScope) => Err(ConfigError::Conflict(format!(
            "{} only applies with --auth-token-file",
            l.named(Setting::AuthScope)
        ))),
        None => Ok(None),
    }
}

/// A listener whose protocol carries no credential and no TLS
/// ([`Guard::Nothing`]) is served by a node whose other listeners are
/// secured only on loopback, or when the operator says it may be open (its
/// switch): it would otherwise hand IDs to anyone the tokens and TLS keep
/// out. Records which are served open by their switch.
fn unguarded(
    l: &mut Lookup<'_>,
    listeners: &mut Listeners,
    tls: bool,
    tokens: bool,
) -> Result<(), ConfigError> {
    for listener in Listener::ALL {
        let Guard::Nothing { open: switch } = listener.guard() else {
            continue;
        };
        let open = l.required(switch, |s| parse_bool(switch.key(), s))?;
        let address_setting = listener.address_setting();
        let Some(address) = listeners.address(listener) else {
            if open {
                return Err(ConfigError::Conflict(format!(
                    "{} only applies with {}",
                    l.named(switch),
                    address_setting.flag()
                )));
            }
            continue;
        };
        listeners.set_served_open(listener, open);
        if open || address.ip().is_loopback() || !(tls || tokens) {
            continue;
        }
        let secured = match (tls, tokens) {
            (true, true) => "TLS and bearer tokens",
            (true, false) => "TLS",
            _ => "bearer tokens",
        };
        return Err(ConfigError::Conflict(format!(
            "{} {address} would serve IDs to any client that reaches it, with no token and in cleartext \
             ({}'s protocol carries neither), while the node's other front ends need {secured}: \
             listen on loopback (127.0.0.1:{}) behind a proxy that authenticates, or say \
             {} to serve it open",
            l.named(address_setting),
            listener.title(),
            address.port(),
            switch.flag(),
        )));
    }
    Ok(())
}

/// The clock policy, with `clock_max` as its bound.
fn clock_policy(l: &mut Lookup<'_>) -> Result<ClockPolicy, ConfigError> {
    let clock_max = l.duration(Setting::ClockMax)?;
    l.required(Setting::ClockPolicy, |s| {
        ClockPolicy::from_name(s, clock_max)
    })
}

/// The start-up wait for the high-water mark and the step it is reserved
/// in: a step longer than the wait would make a node killed and restarted
/// at once refuse to start.
fn marks(l: &mut Lookup<'_>) -> Result<(Duration, Duration), ConfigError> {
    let wait_max = l.duration(Setting::MarkWaitMax)?;
    let step = l.duration(Setting::MarkStep)?;
    if step > wait_max {
        return Err(ConfigError::Conflict(format!(
            "mark_step {} ({}) is longer than mark_wait_max {} ({}): a node killed and restarted at once would refuse to start",
            snowmint::value::format_duration(step),
            l.named(Setting::MarkStep),
            snowmint::value::format_duration(wait_max),
            l.named(Setting::MarkWaitMax)
        )));
    }
    Ok((wait_max, step))
}
