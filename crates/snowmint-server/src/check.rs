//! `snowmint serve --check`: what a node would do with a configuration,
//! found without claiming a slot or writing a file.
//!
//! [`check`] goes as far as a start can go offline: the settings are
//! resolved by [`Config`] as for a start; a hostname's ordinal is read and
//! checked against the layout; the state directory is looked at (not
//! made); a fixed node's recorded high-water mark is read and held against
//! the clock with the rule a start applies, so that a start that would
//! refuse (a clock set back) is refused here with the same message; the
//! TLS files and the token file are read as a start reads them, and
//! refused as a start refuses them. It names each listener with its
//! scheme, what guards it, and every one that serves IDs without a
//! credential.
//!
//! [`probe`] then tries, as a start would and claiming nothing, what
//! only the host and the network can say: whether another process holds
//! the node's lock, whether each listener's address can be bound (it is
//! let go at once), and whether the coordinator answers a read-only login
//! with the node's credentials (one short session that lists the fleet's
//! slot keys). `snowmint serve --check --offline` skips it.

use std::fmt;
use std::net::SocketAddr;

use std::time::Duration;

use snowmint::{Clock, Node};
use snowmint_fleet::{FleetError, FleetName, MarkFile, NodeLock, StaticSource, system_hostname};

use crate::auth::{AuthScope, Tokens};
use crate::config::{Config, Identity, Origin, Setting};
use crate::listener::{Guard, Listener};
use crate::net::Tls;
use crate::serve::{ServeError, naming_the_setting};

/// The longest [`probe`] waits for the coordinator's answer.
const COORDINATOR_PROBE: Duration = Duration::from_secs(10);

/// What a node would do with a configuration: one line per concern, for
/// people, and the identity's source for programs.
///
/// # Examples
///
/// ```
/// use snowmint_server::config::{Config, Layer, Setting};
///
/// let mut flags = Layer::flags();
/// flags.set(Setting::MachineFromHostname, "true").set(Setting::Hostname, "ids-12");
/// flags.set(Setting::StateDir, "/nonexistent/snowmint");
/// let config = Config::resolve(&[flags], |_| None)?;
/// let plan = snowmint_server::check(&config)?;
/// assert_eq!(plan.source(), "hostname");
/// assert!(plan.to_string().contains("slot 12 (datacenter 0, machine 12)"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    source: &'static str,
    lines: Vec<(&'static str, String)>,
    notes: Vec<String>,
    /// Whether [`probe`] tried the lock, the ports and the coordinator.
    probed: bool,
}

impl Plan {
    /// Where the node's identity comes from, as `/v1/node` names it:
    /// `static`, `hostname`, `etcd`, `zookeeper` or `postgres`.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// Things worth knowing that do not stop a start (a loopback-only
    /// listener, say).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, text) in &self.lines {
            writeln!(f, "{name:<12} {text}")?;
        }
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        if self.probed {
            writeln!(
                f,
                "ok: this configuration starts (the lock, the ports and the coordinator were tried; nothing was claimed or written)"
            )
        } else {
            writeln!(
                f,
                "ok: this configuration starts, as far as can be told offline (the lock, the ports and the coordinator were not tried; nothing was bound, claimed or written)"
            )
        }
    }
}

/// Checks `config` as a start would, without binding, claiming or
/// writing, and says what the node would do.
///
/// # Errors
///
/// The error a start would stop with, with the same message: a hostname
/// without an ordinal, or one past the layout's slots; a state directory
/// path that cannot be a directory; an unreadable state file; a fixed
/// node's high-water mark further ahead of the clock than
/// `mark_wait_max`.
pub fn check(config: &Config) -> Result<Plan, ServeError> {
    check_with_clock(config, crate::serve::clock(config).as_ref())
}

/// [`check`] against `clock`.
pub fn check_with_clock(config: &Config, clock: &dyn Clock) -> Result<Plan, ServeError> {
    let layout = config.layout;
    let from = |setting| from(config, setting);
    let mut notes = Vec::new();
    let (source, identity, node) = identity(config)?;
    let exists = snowmint_fleet::state_dir_exists(&config.state_dir)?;
    let mut state = format!(
        "{}{}: {}",
        config.state_dir.display(),
        from(Setting::StateDir),
        if exists {
            "exists"
        } else {
            "not there yet, a start creates it"
        }
    );
    if node.is_some() {
        state.push_str(&format!("; {}", mark_status(config, clock)?));
    } else if let Some(slot) = snowmint_fleet::last_written_slot(&config.state_dir, layout) {
        state.push_str(&format!("; slot {slot} was held last, and is tried first"));
    }
    let coordinator = match &config.identity {
        Identity::Coordinator {
            url,
            config: claims,
        } => format!(
            "{url}{}, fleet {}{}, slots {}-{}{} ({} of them), claim_ttl {}{}",
            from(Setting::Coordinator),
            claims.fleet(),
            from(Setting::Fleet),
            claims.slots().first(),
            claims.slots().last(),
            from(Setting::Slots),
            claims.slots().len(),
            snowmint::value::format_duration(claims.ttl()),
            from(Setting::ClaimTtl),
        ),
        _ => "none".to_owned(),
    };
    let layout_from = match from(Setting::Layout) {
        text if text.is_empty() => from(Setting::Epoch),
        text => text,
    };
    let mut lines = vec![
        ("identity", identity),
        ("layout", format!("{layout} {}{layout_from}", layout.spec())),
        ("state dir", state),
        ("coordinator", coordinator),
    ];
    for listener in Listener::ALL {
        let setting = listener.address_setting();
        let label = match listener {
            // The setting's own name, as an operator types it.
            Listener::Http => setting.key(),
            other => other.name(),
        };
        let text = match config.listeners.address(listener) {
            Some(address) => {
                if address.ip().is_loopback() {
                    notes.push(format!(
                        "{} {address} is loopback: only this host (or container) reaches it",
                        setting.key()
                    ));
                }
                let scheme = listener.scheme(config.tls.is_some());
                let mut text = format!("{scheme}{address}{}", from(setting));
                if let (Some(idle), Some(idle_setting)) = (
                    config.listeners.idle_timeout(listener),
                    listener.idle_setting(),
                ) {
                    text.push_str(&format!(
                        ", silent connections closed after {}{}",
                        snowmint::value::format_duration(idle),
                        from(idle_setting)
                    ));
                }
                text
            }
            None => "off".to_owned(),
        };
        lines.push((label, text));
    }
    lines.extend(gate(config)?);
    let policy = match config.clock_policy.bound() {
        Some(bound) => format!(
            "{}{} up to {}{}",
            config.clock_policy.name(),
            from(Setting::ClockPolicy),
            snowmint::value::format_duration(bound),
            from(Setting::ClockMax)
        ),
        None => format!(
            "{}{}",
            config.clock_policy.name(),
            from(Setting::ClockPolicy)
        ),
    };
    lines.push((
        "clock",
        format!(
            "clock_policy {policy}, mark_step {}{}, mark_wait_max {}{}",
            snowmint::value::format_duration(config.mark_step),
            from(Setting::MarkStep),
            snowmint::value::format_duration(config.mark_wait_max),
            from(Setting::MarkWaitMax),
        ),
    ));
    lines.push((
        "requests",
        format!(
            "request_timeout {}{}",
            snowmint::value::format_duration(config.limits.request_timeout),
            from(Setting::RequestTimeout)
        ),
    ));
    if ports_clash(config) {
        notes.push("two listeners share an address: a start fails to bind the second".to_owned());
    }
    Ok(Plan {
        source,
        lines,
        notes,
        probed: false,
    })
}

/// The lines on what guards the front ends: TLS and the token file, read
/// as a start reads them (a file a start would refuse is refused here
/// with the start's message), and the listeners that serve IDs to a
/// client with no credential.
fn gate(config: &Config) -> Result<Vec<(&'static str, String)>, ServeError> {
    let from = |setting| from(config, setting);
    let tls = match &config.tls {
        Some(files) => {
            Tls::load(files.clone())?;
            let guarded: Vec<&str> = Listener::ALL
                .iter()
                .filter(|listener| listener.is_guarded())
                .map(|listener| listener.title())
                .collect();
            format!(
                "on for {}: certificate {}{}, key {}{}{}",
                guarded.join(" and "),
                files.cert.display(),
                from(Setting::TlsCert),
                files.key.display(),
                from(Setting::TlsKey),
                match &files.client_ca {
                    Some(ca) => format!(
                        ", client certificates of {}{} required",
                        ca.display(),
                        from(Setting::TlsClientCa)
                    ),
                    None => String::new(),
                }
            )
        }
        None => "off: every listener is cleartext".to_owned(),
    };
    let tokens = match &config.auth {
        Some((file, scope)) => {
            let tokens = Tokens::load(file)?;
            let guarded = match scope {
                AuthScope::Issue => {
                    "issuing and whois (/v1/id, /v1/ids, /api/snowflake/get/{key}, /v1/node, /v1/whois/{id}; gRPC NextIds, StreamIds, GetNode, Whois)"
                }
                AuthScope::All => "every endpoint but /healthz, /readyz and gRPC health",
            };
            format!(
                "{} of {}{} guard scope {scope}{}: {guarded}",
                match tokens.count() {
                    1 => "1 token".to_owned(),
                    n => format!("{n} tokens"),
                },
                file.display(),
                from(Setting::AuthTokenFile),
                from(Setting::AuthScope),
            )
        }
        None => "off: no endpoint needs a token".to_owned(),
    };
    let mut open = Vec::new();
    let secured = config.auth.is_some() || config.tls.is_some();
    for (listener, address) in config.listeners.on() {
        let title = listener.title();
        match listener.guard() {
            Guard::TokensAndTls { .. } if config.auth.is_none() => {
                open.push(format!("{title} {address}"));
            }
            Guard::TokensAndTls { .. } => {}
            Guard::Nothing { .. } if !secured => open.push(format!("{title} {address}")),
            Guard::Nothing { open: switch } => {
                let why = if config.listeners.served_open(listener) {
                    format!("served open by {}", switch.flag())
                } else {
                    "loopback only".to_owned()
                };
                open.push(format!(
                    "{title} {address} (its protocol carries no token and no TLS; {why})"
                ));
            }
        }
    }
    let open = if open.is_empty() {
        "none: every listener that issues needs a token".to_owned()
    } else {
        format!("issuing with no credential: {}", open.join(", "))
    };
    Ok(vec![("tls", tls), ("tokens", tokens), ("open", open)])
}

/// Tries what only the host and the network can say, as a start would
/// and claiming nothing, and adds what it found to `plan`: the node's lock
/// (a fixed node's), each listener's address (bound and let go at once),
/// and a read-only login to the coordinator with the node's credentials.
///
/// # Errors
///
/// What a start would stop at: [`FleetError::NodeLocked`] naming the
/// holder's pid; an address that cannot be bound
/// ([`ServeError::Io`], naming it); a coordinator that cannot be reached
/// in 10 s, or that refuses the login ([`FleetError::Coordinator`]).
pub async fn probe(config: &Config, plan: &mut Plan) -> Result<(), ServeError> {
    identity(config)?;
    let mut free = Vec::new();
    // Every slot of a fixed block, as a start locks them all.
    for node in config.fixed_nodes() {
        let mark = MarkFile::for_node(&config.state_dir, config.layout, node);
        NodeLock::probe(&mark)?;
        free.push(mark.lock_path().display().to_string());
    }
    let lock = if free.is_empty() {
        "taken per slot once one is claimed".to_owned()
    } else {
        format!("{}: free", free.join(", "))
    };
    plan.lines.push(("lock", lock));
    let mut bound = Vec::new();
    for (listener, address) in config.listeners.on() {
        // Held until all are bound, so that two listeners on one address
        // are found out as a start would find them.
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|source| ServeError::Io {
                context: format!("cannot listen for {} on {address}", listener.title()),
                source,
            })?;
        bound.push(listener);
    }
    drop(bound);
    plan.lines.push((
        "ports",
        "every listener's address can be bound (let go again)".to_owned(),
    ));
    if let Identity::Coordinator {
        url,
        config: claims,
    } = &config.identity
    {
        let fleet: FleetName = claims.fleet().parse().map_err(FleetError::from)?;
        let read = snowmint_fleet::read_holders_with(url, claims.access(), &fleet);
        let holders = match tokio::time::timeout(COORDINATOR_PROBE, read).await {
            Ok(read) => read?,
            Err(_) => {
                return Err(FleetError::Coordinator {
                    coordinator: url.to_string(),
                    message: format!(
                        "no answer within {} s (is it running, and is this its address?)",
                        COORDINATOR_PROBE.as_secs()
                    ),
                }
                .into());
            }
        };
        let held = holders
            .keys()
            .filter(|slot| claims.slots().contains(**slot))
            .count() as u64;
        let free = claims.slots().len() - held;
        plan.lines.push((
            "login",
            format!(
                "{url} answered a read-only login: fleet {fleet} has {free} of {} slots free",
                claims.slots().len()
            ),
        ));
    }
    plan.probed = true;
    Ok(())
}

/// ` (from --flag)` after a value that was given; nothing after a default.
fn from(config: &Config, setting: Setting) -> String {
    match config.origin(setting) {
        Origin::Default => String::new(),
        _ => format!(" {}", config.origin_note(setting)),
    }
}

/// The identity's source, its line, and the node when it is fixed now.
fn identity(config: &Config) -> Result<(&'static str, String, Option<Node>), ServeError> {
    let layout = config.layout;
    Ok(match &config.identity {
        Identity::Static(node) | Identity::StaticSlots { node, .. } => {
            let count = match &config.identity {
                Identity::StaticSlots { slots, .. } => *slots,
                _ => 1,
            };
            // The same check a start makes first.
            StaticSource::with_slots(layout, *node, count)?;
            let slot = layout.slot_of(*node).map_err(FleetError::from)?;
            let slots = match count {
                1 => format!("slot {slot}"),
                _ => format!("slots {slot}-{}", slot + count - 1),
            };
            (
                "static",
                format!(
                    "static: {slots} (datacenter {}{}, machine {}{})",
                    layout.pair_of(*node).0,
                    from(config, Setting::Datacenter),
                    layout.pair_of(*node).1,
                    from(config, Setting::Machine),
                ),
                Some(*node),
            )
        }
        Identity::Hostname(name) => {
            let (hostname, whose) = match name {
                Some(name) => (name.clone(), from(config, Setting::Hostname)),
                None => (system_hostname()?, " (this machine's)".to_owned()),
            };
            let ordinal = snowmint_fleet::hostname_ordinal(&hostname)?;
            // Past the layout's slots: the same error as a start's.
            StaticSource::from_hostname(layout, &hostname)?;
            let node = layout.node_from_slot(ordinal).map_err(FleetError::from)?;
            (
                "hostname",
                format!(
                    "hostname: slot {ordinal} (datacenter {}, machine {}) of {hostname:?}{whose}",
                    layout.pair_of(node).0,
                    layout.pair_of(node).1
                ),
                Some(node),
            )
        }
        Identity::Coordinator { url, .. } => {
            let kind = url.kind();
            (
                kind,
                format!("{kind}: a free slot, claimed once started (see coordinator)"),
                None,
            )
        }
    })
}

/// What a fixed node's state file says, with the start-up rule applied.
fn mark_status(config: &Config, clock: &dyn Clock) -> Result<String, ServeError> {
    // A fixed block resumes after the highest mark of its slots.
    let mut highest: Option<(i64, MarkFile)> = None;
    for node in config.fixed_nodes() {
        let file = MarkFile::for_node(&config.state_dir, config.layout, node);
        if let Some(mark_ms) = file.read()?
            && highest.as_ref().is_none_or(|(ms, _)| mark_ms > *ms)
        {
            highest = Some((mark_ms, file));
        }
    }
    let Some((mark_ms, file)) = highest else {
        return Ok("no state file for this node yet".to_owned());
    };
    let now_ms = clock.now_ms();
    let wait = file
        .startup_wait(mark_ms, now_ms, config.mark_wait_max)
        .map_err(|error| naming_the_setting(config, error))?;
    Ok(if wait.is_zero() {
        format!(
            "its high-water mark, {}, is behind the clock",
            snowmint::format_time(mark_ms)
        )
    } else {
        format!(
            "its high-water mark, {}, is {} ms ahead of the clock: a start waits that out",
            snowmint::format_time(mark_ms),
            wait.as_millis()
        )
    })
}

/// Whether two listeners ask for the same port on overlapping addresses
/// (port 0 picks a free one each time, so it never clashes).
fn ports_clash(config: &Config) -> bool {
    let bound: Vec<SocketAddr> = config
        .listeners
        .on()
        .map(|(_, address)| address)
        .filter(|address| address.port() != 0)
        .collect();
    let overlap = |a: &SocketAddr, b: &SocketAddr| {
        a.port() == b.port()
            && (a.ip() == b.ip() || a.ip().is_unspecified() || b.ip().is_unspecified())
    };
    bound
        .iter()
        .enumerate()
        .any(|(i, a)| bound[i + 1..].iter().any(|b| overlap(a, b)))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use snowmint::{Layout, ManualClock};

    use super::*;
    use crate::config::Layer;

    fn config(pairs: &[(Setting, &str)]) -> Config {
        let mut flags = Layer::flags();
        for (setting, value) in pairs {
            flags.set(*setting, *value);
        }
        Config::resolve(&[flags], |_| None).unwrap()
    }

    /// Each source of identity is named as `/v1/node` names it, with the
    /// node it gives; a coordinator's password is not shown.
    #[test]
    fn the_identity_source_is_named() {
        let dir = std::env::temp_dir().join("snowmint-check-none");
        let dir = dir.to_str().unwrap();
        let fixed = check(&config(&[
            (Setting::Datacenter, "3"),
            (Setting::Machine, "7"),
            (Setting::StateDir, dir),
        ]))
        .unwrap();
        assert_eq!(fixed.source(), "static");
        assert!(
            fixed.to_string().contains(
                "static: slot 103 (datacenter 3 (from --datacenter), machine 7 (from --machine))\n"
            ),
            "{fixed}"
        );
        let coordinated = check(&config(&[
            (
                Setting::Coordinator,
                "postgres://ids:hunter2@db.internal/app",
            ),
            (Setting::Slots, "0-9"),
            (Setting::StateDir, dir),
        ]))
        .unwrap();
        assert_eq!(coordinated.source(), "postgres");
        let text = coordinated.to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(
            text.contains("slots 0-9 (from --slots) (10 of them)"),
            "{text}"
        );
        let etcd = check(&config(&[
            (Setting::Coordinator, "etcd://10.0.0.1:2379"),
            (Setting::StateDir, dir),
        ]))
        .unwrap();
        assert_eq!(etcd.source(), "etcd");
    }

    /// A hostname without an ordinal, or one past the layout's slots, is
    /// refused with the start's own message.
    #[test]
    fn a_hostname_without_a_usable_ordinal_is_refused_as_a_start_refuses_it() {
        for hostname in ["ids", "ids-1024"] {
            let config = config(&[
                (Setting::MachineFromHostname, "true"),
                (Setting::Hostname, hostname),
            ]);
            let checked = check(&config).unwrap_err().to_string();
            let started = crate::slot_source(&config).err().unwrap().to_string();
            assert_eq!(checked, started);
            assert!(
                checked.contains(&format!("hostname {hostname:?}")),
                "{checked}"
            );
        }
    }

    /// A fixed node's mark too far ahead is refused with the start's
    /// message, which names the setting that would let it wait; a small
    /// gap is reported as a wait.
    #[test]
    fn a_mark_too_far_ahead_is_refused_naming_mark_wait_max() {
        let dir = std::env::temp_dir().join(format!("snowmint-check-mark-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        MarkFile::for_node(&dir, Layout::TWITTER, Node::default())
            .write(1_700_000_010_000)
            .unwrap();
        let config = config(&[(Setting::StateDir, dir.to_str().unwrap())]);
        let far = check_with_clock(&config, &ManualClock::new(1_700_000_000_000))
            .unwrap_err()
            .to_string();
        assert!(far.contains("refuses to start"), "{far}");
        assert!(
            far.ends_with("or raise --mark-wait-max (2s by default) above the gap"),
            "{far}"
        );
        let near = check_with_clock(&config, &ManualClock::new(1_700_000_009_000))
            .unwrap()
            .to_string();
        assert!(
            near.contains("1001 ms ahead of the clock: a start waits that out"),
            "{near}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(!Path::new(&dir).exists());
    }

    /// A loopback listener is pointed out; two listeners on one port too.
    #[test]
    fn loopback_and_clashing_listeners_are_noted() {
        let plan = check(&config(&[
            (Setting::Listen, "0.0.0.0:8080"),
            (Setting::GrpcListen, "127.0.0.1:8080"),
            (Setting::StateDir, "/nonexistent/snowmint"),
        ]))
        .unwrap();
        let notes = plan.notes().join("\n");
        assert!(
            notes.contains("grpc_listen 127.0.0.1:8080 is loopback"),
            "{notes}"
        );
        assert!(notes.contains("two listeners share an address"), "{notes}");
        assert!(!notes.contains("listen 0.0.0.0"), "{notes}");
    }
}
