//! The settings of a server that claims its node from the fleet's
//! coordinator, instead of being given one.
//!
//! | setting | default | meaning |
//! |---|---|---|
//! | `snowmint.coordinator` | unset | `etcd://HOST:PORT[,...]`, `zk://HOST:PORT[,...][/CHROOT]` or `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?...]` |
//! | `snowmint.fleet` | `default` | the fleet: servers (and `snowmint serve` nodes) of one fleet hold distinct slots |
//! | `snowmint.slots` | every slot of the layout | `A-B` or `N`: the slots this server may claim |
//! | `snowmint.claim_ttl` | `10s` | how long a claim outlives the server's last word, `1s..=1h` |
//!
//! Each value is read by the fleet's own reader, the one `snowmint serve`
//! uses, so a mistake reads the same in both. Read at server start only
//! (context `postmaster`). The coordinator is shown only to the roles that
//! may read its setting (`SUPERUSER_ONLY`: superusers and members of
//! `pg_read_all_settings`), in `SHOW` as in `node()` and in the reasons
//! `node()` and `next_id()` give, and everywhere with its password as
//! `***`.
#![forbid(unsafe_code)]

use std::ffi::CString;
use std::time::Duration;

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};
use snowmint::Layout;
use snowmint_fleet::{CoordinatorUrl, FleetName, SlotRange, parse_claim_ttl};

use crate::errors;
use crate::settings::text;

static COORDINATOR: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static FLEET: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static SLOTS: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static CLAIM_TTL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// The fleet of a server that names none, as for `snowmint serve`.
const DEFAULT_FLEET: &str = "default";
/// The claim TTL of a server that names none, as for `snowmint serve`.
const DEFAULT_TTL: Duration = Duration::from_secs(10);

/// Registers the settings with PostgreSQL.
pub fn register() {
    GucRegistry::define_string_guc(
        c"snowmint.coordinator",
        c"The coordinator this server claims its node from: etcd://HOST:PORT, zk://HOST:PORT[/CHROOT] or postgres://USER[:PASSWORD]@HOST[:PORT]/DB.",
        c"Instead of snowmint.datacenter/snowmint.machine or snowmint.slot. Shown to superusers only: a postgres:// URL may hold a password (or give it in a passfile=).",
        &COORDINATOR,
        GucContext::Postmaster,
        GucFlags::SUPERUSER_ONLY,
    );
    GucRegistry::define_string_guc(
        c"snowmint.fleet",
        c"The fleet whose slots this server claims from snowmint.coordinator (default: default).",
        c"",
        &FLEET,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"snowmint.slots",
        c"The slots this server may claim from snowmint.coordinator: A-B or N (default: every slot of the layout).",
        c"",
        &SLOTS,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"snowmint.claim_ttl",
        c"How long this server's claim outlives its last word to snowmint.coordinator, 1s..1h (default: 10s).",
        c"",
        &CLAIM_TTL,
        GucContext::Postmaster,
        GucFlags::default(),
    );
}

/// A coordinated node's settings, checked.
#[derive(Debug, Clone)]
pub struct FleetSettings {
    /// The coordinator.
    pub url: CoordinatorUrl,
    /// The fleet's name.
    pub fleet: FleetName,
    /// The slots this server may claim.
    pub slots: SlotRange,
    /// The claim TTL.
    pub ttl: Duration,
}

/// Whether `snowmint.coordinator` is set.
pub fn coordinated() -> bool {
    text(&COORDINATOR).is_some()
}

/// The claim settings given although no coordinator is, by name.
pub fn given_without_coordinator() -> Vec<&'static str> {
    if coordinated() {
        return Vec::new();
    }
    [
        ("snowmint.fleet", &FLEET),
        ("snowmint.slots", &SLOTS),
        ("snowmint.claim_ttl", &CLAIM_TTL),
    ]
    .into_iter()
    .filter(|(_, setting)| text(setting).is_some())
    .map(|(name, _)| name)
    .collect()
}

/// Reads and checks the settings; `None` without a coordinator. An error
/// names the setting and says what it accepts.
pub fn read(layout: Layout) -> Result<Option<FleetSettings>, ErrorReport> {
    let Some(url) = text(&COORDINATOR) else {
        return Ok(None);
    };
    let bad = |name: &str, error: snowmint_fleet::ConfigError| {
        errors::invalid(format!("snowmint.{name}: {error}"))
    };
    let url = url
        .parse::<CoordinatorUrl>()
        .map_err(|error| bad("coordinator", error))?;
    let fleet = text(&FLEET)
        .unwrap_or_else(|| DEFAULT_FLEET.to_owned())
        .parse::<FleetName>()
        .map_err(|error| bad("fleet", error))?;
    let slots = match text(&SLOTS) {
        Some(slots) => slots
            .parse::<SlotRange>()
            .and_then(|slots| slots.check(layout))
            .map_err(|error| bad("slots", error))?,
        None => SlotRange::all(layout),
    };
    let ttl = match text(&CLAIM_TTL) {
        Some(ttl) => parse_claim_ttl(&ttl).map_err(|error| bad("claim_ttl", error))?,
        None => DEFAULT_TTL,
    };
    Ok(Some(FleetSettings {
        url,
        fleet,
        slots,
        ttl,
    }))
}

/// What a role that may not read `snowmint.coordinator` sees in its place.
const HIDDEN: &str = "(hidden: see snowmint.coordinator)";

/// Whether the calling role may read `snowmint.coordinator`, as
/// PostgreSQL decides for `SHOW` of a `SUPERUSER_ONLY` setting: a
/// superuser, or a role with the privileges of `pg_read_all_settings`
/// (`pg_has_role` is true for superusers).
///
/// A read-only query (`select`, not `Spi::get_one`, which marks the
/// transaction as writing and so asks for a transaction ID): `node()` is
/// called on hot standbys, where none can be assigned.
fn caller_may_read_coordinator() -> bool {
    pgrx::Spi::connect(|client| {
        client
            .select(
                "SELECT pg_catalog.pg_has_role('pg_read_all_settings', 'USAGE')",
                Some(1),
                &[],
            )?
            .first()
            .get_one::<bool>()
    })
    .ok()
    .flatten()
    .unwrap_or(false)
}

/// The coordinator as `node()` shows it to the calling role: `None`
/// without a coordinator, or for a role that may not read the setting.
pub fn coordinator_for_caller() -> Option<String> {
    let shown = shown_coordinator()?;
    caller_may_read_coordinator().then_some(shown)
}

/// `text` (a reason that may name the coordinator) as the calling role may
/// see it: the coordinator's URL and each of its hosts hidden from a role
/// that may not read the setting.
pub fn for_caller(text: &str) -> String {
    let Some(shown) = shown_coordinator() else {
        return text.to_owned();
    };
    let mut secrets = vec![shown.clone()];
    secrets.extend(hosts(&shown).map(str::to_owned));
    secrets.retain(|secret| !secret.is_empty());
    if !secrets.iter().any(|secret| text.contains(secret.as_str())) || caller_may_read_coordinator()
    {
        return text.to_owned();
    }
    // Longest first: the URL before the hosts it holds.
    secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    secrets.iter().fold(text.to_owned(), |text, secret| {
        text.replace(secret.as_str(), HIDDEN)
    })
}

/// The hosts of a coordinator URL as shown: between `://` (and a user
/// before `@`) and the path or the query, split at commas.
fn hosts(url: &str) -> impl Iterator<Item = &str> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let hosts = authority
        .rsplit_once('@')
        .map_or(authority, |(_, hosts)| hosts);
    hosts.split(',')
}

/// The coordinator as messages show it: the password, if the URL holds
/// one, as `***`; `None` without a coordinator. A URL that cannot be read
/// is shown as its reader echoes it (also masked). Not for a role that
/// may not read the setting: see [`coordinator_for_caller`].
pub fn shown_coordinator() -> Option<String> {
    let text = text(&COORDINATOR)?;
    Some(match text.parse::<CoordinatorUrl>() {
        Ok(url) => url.to_string(),
        Err(snowmint_fleet::ConfigError::Url { value, .. }) => value,
        Err(_) => "(unreadable)".to_owned(),
    })
}
