//! The coordinator's settings: its URL, the fleet, the slots, the claim
//! settings that go with them, and how the node gets into a secured
//! coordinator (TLS files and credentials), checked together; each value
//! read by `snowmint_fleet`'s one parser of its kind.

use std::collections::BTreeMap;

/// The coordinator and the claim settings, when a coordinator is given;
use snowmint::Layout;
use snowmint_fleet::{
    ClockCheck, CoordinatorAccess, CoordinatorConfig, CoordinatorTls, CoordinatorUrl, FleetName,
    HistoryRetention, Secret, SlotRange,
};

use super::super::layer::Layer;
use super::super::setting::Setting;
use super::super::{ConfigError, FleetAccess};
use super::{Lookup, parse_bool, parse_path};

/// the claim settings without one are a mistake.
pub(super) fn coordinator(
    l: &mut Lookup<'_>,
    layout: Layout,
) -> Result<Option<(CoordinatorUrl, CoordinatorConfig)>, ConfigError> {
    let url = l.fleet(Setting::Coordinator, str::parse::<CoordinatorUrl>)?;
    let fleet = l.fleet_required(Setting::Fleet, str::parse::<FleetName>)?;
    let slots = l.fleet(Setting::Slots, |s| {
        s.parse::<SlotRange>().and_then(|slots| slots.check(layout))
    })?;
    let ttl = l.fleet_required(Setting::ClaimTtl, snowmint_fleet::parse_claim_ttl)?;
    let clock_check = ClockCheck {
        max_skew: l.fleet_required(Setting::MaxClockSkew, snowmint_fleet::parse_max_clock_skew)?,
        every: l.fleet_required(
            Setting::ClockCheckEvery,
            snowmint_fleet::parse_clock_check_every,
        )?,
    };
    let history = HistoryRetention {
        keep: l.fleet_required(
            Setting::ClaimHistoryKeep,
            snowmint_fleet::parse_history_keep,
        )?,
        max_age: l.fleet_required(
            Setting::ClaimHistoryMaxAge,
            snowmint_fleet::parse_history_max_age,
        )?,
    };
    let Some(url) = url else {
        for setting in ACCESS {
            l.text(setting);
        }
        let mut stray = l.given(&[
            Setting::Fleet,
            Setting::Slots,
            Setting::ClaimTtl,
            Setting::MaxClockSkew,
            Setting::ClockCheckEvery,
            Setting::ClaimHistoryKeep,
            Setting::ClaimHistoryMaxAge,
        ]);
        stray.extend(l.given(&ACCESS));
        if !stray.is_empty() {
            return Err(ConfigError::Conflict(format!(
                "{} only applies with --coordinator",
                stray.join(" and ")
            )));
        }
        return Ok(None);
    };
    let config = CoordinatorConfig::new(
        fleet.as_str(),
        // Unset means every slot of the layout.
        slots.unwrap_or(SlotRange::all(layout)),
        ttl,
        // Named once the address is known (see `CoordinatorConfig::with_holder`).
        String::new(),
        layout,
    )
    // Every part was checked above, each naming where it came from.
    .map_err(|source| ConfigError::Fleet {
        origin: [Setting::Fleet, Setting::Slots, Setting::ClaimTtl]
            .map(|setting| format!("{} {}", setting.key(), l.named(setting)))
            .join(", "),
        source,
    })?
    // The front end names its reader of peers' clocks once it runs.
    .with_clock_check(clock_check, None)
    .with_history(history);
    let access = access(l)?;
    let world_read = l
        .get(Setting::CoordinatorWorldRead, |s| {
            parse_bool(Setting::CoordinatorWorldRead.key(), s)
        })?
        .unwrap_or(false);
    let access = fits(l, &url, access.with_world_read(world_read))?;
    Ok(Some((url, config.with_access(access))))
}

/// The coordinator a command that reads a fleet from outside it reaches
/// (see [`FleetAccess`]): the URL, the fleet, and the access settings a
/// node reads, but for world read, which only says how a node creates its
/// znodes.
pub(in crate::config) fn fleet_access(layers: &[Layer]) -> Result<FleetAccess, ConfigError> {
    let mut l = Lookup {
        layers,
        origins: BTreeMap::new(),
    };
    let url = l.fleet(Setting::Coordinator, str::parse::<CoordinatorUrl>)?;
    let fleet = l.fleet_required(Setting::Fleet, str::parse::<FleetName>)?;
    let access = access(&mut l)?;
    let Some(url) = url else {
        return Err(ConfigError::Conflict(format!(
            "no coordinator is given: {} URL (or {}) names the fleet's",
            Setting::Coordinator.flag(),
            Setting::Coordinator.env()
        )));
    };
    let access = fits(&l, &url, access)?;
    Ok(FleetAccess {
        url,
        fleet,
        access,
        origins: l.origins,
    })
}

/// `access` once it is known to fit `url` (credentials given once and with
/// a user, TLS files only for etcd and ZooKeeper) and its TLS files can be
/// used, the error naming the settings at fault.
fn fits(
    l: &Lookup<'_>,
    url: &CoordinatorUrl,
    access: CoordinatorAccess,
) -> Result<CoordinatorAccess, ConfigError> {
    access.check(url).map_err(|source| {
        // A reader of the fleet does not look world read up.
        let looked_up: Vec<Setting> = [
            Setting::Coordinator,
            Setting::CoordinatorCa,
            Setting::CoordinatorPasswordFile,
            Setting::CoordinatorPassword,
            Setting::CoordinatorWorldRead,
        ]
        .into_iter()
        .filter(|setting| l.origins.contains_key(setting))
        .collect();
        ConfigError::Fleet {
            origin: l.given(&looked_up).join(" and "),
            source,
        }
    })?;
    if let Some(tls) = access.tls() {
        check_tls(l, tls)?;
    }
    Ok(access)
}

/// The settings of how a node reaches a secured coordinator.
const ACCESS: [Setting; 6] = [
    Setting::CoordinatorCa,
    Setting::CoordinatorCert,
    Setting::CoordinatorKey,
    Setting::CoordinatorPasswordFile,
    Setting::CoordinatorPassword,
    Setting::CoordinatorWorldRead,
];

/// How a node, or a reader of its fleet, reaches a secured coordinator:
/// TLS files (checked by `fits` once they are known to fit the URL), and
/// the password from a file (only its owner may read it) or the
/// environment. (A node reads ZooKeeper's world read beside it.)
fn access(l: &mut Lookup<'_>) -> Result<CoordinatorAccess, ConfigError> {
    let ca = l.get(Setting::CoordinatorCa, parse_path)?;
    let cert = l.get(Setting::CoordinatorCert, parse_path)?;
    let key = l.get(Setting::CoordinatorKey, parse_path)?;
    let from_file = l.get(Setting::CoordinatorPasswordFile, |s| {
        Secret::from_file(&parse_path(s)?)
    })?;
    // Taken as it is: a password is never echoed, so never refused.
    let from_env = l.get(Setting::CoordinatorPassword, |s| {
        Ok::<_, std::convert::Infallible>(Secret::new(s))
    })?;
    let mut access = CoordinatorAccess::default();
    match (from_file, from_env) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::Conflict(format!(
                "the coordinator password is given twice, by {} and by {}; give it once",
                l.named(Setting::CoordinatorPasswordFile),
                l.named(Setting::CoordinatorPassword)
            )));
        }
        (Some(password), None) | (None, Some(password)) => {
            access = access.with_password(password);
        }
        (None, None) => {}
    }
    match (ca, cert, key) {
        (None, None, None) => {}
        (None, _, _) => {
            return Err(ConfigError::Conflict(format!(
                "{} needs {}: TLS to the coordinator is on when a CA is given, and its certificate is checked against it",
                l.given(&[Setting::CoordinatorCert, Setting::CoordinatorKey])
                    .join(" and "),
                Setting::CoordinatorCa.flag()
            )));
        }
        (Some(_), Some(_), None) | (Some(_), None, Some(_)) => {
            return Err(ConfigError::Conflict(format!(
                "{} needs {} too: mutual TLS takes the node's certificate and its private key",
                l.given(&[Setting::CoordinatorCert, Setting::CoordinatorKey])
                    .join(" and "),
                match l.is_set(Setting::CoordinatorCert) {
                    true => Setting::CoordinatorKey.flag(),
                    false => Setting::CoordinatorCert.flag(),
                }
            )));
        }
        (Some(ca), cert, key) => {
            let mut tls = CoordinatorTls::new(ca);
            if let (Some(cert), Some(key)) = (cert, key) {
                tls = tls.with_identity(cert, key);
            }
            access = access.with_tls(tls);
        }
    }
    Ok(access)
}

/// Refuses TLS files that cannot be used at all (but for their validity
/// period, which each new session checks: a rotation may renew them),
/// naming the setting that gave the file at fault.
#[cfg(any(feature = "etcd", feature = "zookeeper"))]
fn check_tls(l: &Lookup<'_>, tls: &CoordinatorTls) -> Result<(), ConfigError> {
    tls.check().map_err(|message| {
        let setting = if message.contains(" client key ") {
            Setting::CoordinatorKey
        } else if message.contains(" client certificate ") {
            Setting::CoordinatorCert
        } else {
            Setting::CoordinatorCa
        };
        ConfigError::Invalid {
            setting,
            origin: l.named(setting),
            message,
        }
    })
}

/// Without etcd and ZooKeeper, no coordinator takes TLS files: the URL
/// check says so.
#[cfg(not(any(feature = "etcd", feature = "zookeeper")))]
fn check_tls(_: &Lookup<'_>, _: &CoordinatorTls) -> Result<(), ConfigError> {
    Ok(())
}
