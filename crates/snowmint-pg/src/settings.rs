//! The `snowmint.*` settings, and the node, layout and policies they name.
//!
//! | setting | default | meaning |
//! |---|---|---|
//! | `snowmint.datacenter` | unset | this server's datacenter (with `snowmint.machine`) |
//! | `snowmint.machine` | unset | this server's machine |
//! | `snowmint.slot` | unset | or both at once: `datacenter * 2^machine_bits + machine` |
//! | `snowmint.slots_per_node` | `1` | how many slots the server holds, from its node's (a power of two): K times the IDs per tick |
//! | `snowmint.layout` | `twitter` | `twitter`, `discord` or `T/D/M/S@EPOCH` |
//! | `snowmint.clock_policy` | `refuse` | clock behind: `refuse`, `wait` or `borrow` |
//! | `snowmint.clock_wait_max` | `1s` | the bound of `wait` and `borrow` |
//! | `snowmint.mark_step` | `1s` | how far ahead of the clock the high-water mark is reserved |
//! | `snowmint.mark_wait_max` | `2s` | longest gap to the mark waited out after a restart |
//!
//! All are read at server start only (context `postmaster`): the one
//! generator of the server cannot change node or layout under its IDs.
//! There is no default node: two servers on a default node would issue the
//! same IDs, so `next_id()` refuses until the node is set, here or by a
//! claim from the fleet's coordinator (`snowmint.coordinator`, see
//! `fleet_settings.rs`). Both at once is a mistake that stops the server
//! at start ([`startup_conflict`]).
#![forbid(unsafe_code)]

use std::ffi::CString;
use std::time::Duration;

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};
use snowmint::{ClockPolicy, Layout, Node};

use crate::errors;
use crate::fleet_settings::{self, FleetSettings};

/// "Not set" for the integer settings.
const UNSET: i32 = -1;

static DATACENTER: GucSetting<i32> = GucSetting::<i32>::new(UNSET);
static MACHINE: GucSetting<i32> = GucSetting::<i32>::new(UNSET);
static SLOT: GucSetting<i32> = GucSetting::<i32>::new(UNSET);
static SLOTS_PER_NODE: GucSetting<i32> = GucSetting::<i32>::new(1);
static LAYOUT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"twitter"));
static CLOCK_POLICY: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"refuse"));
static CLOCK_WAIT_MAX: GucSetting<i32> = GucSetting::<i32>::new(1000);
static MARK_STEP: GucSetting<i32> = GucSetting::<i32>::new(1000);
static MARK_WAIT_MAX: GucSetting<i32> = GucSetting::<i32>::new(2000);

/// The longest duration setting: a day, in milliseconds.
const DAY_MS: i32 = 86_400_000;

/// Registers the settings with PostgreSQL.
pub fn register() {
    let node = |name, short, setting| {
        GucRegistry::define_int_guc(
            name,
            short,
            c"-1 means not set. There is no default: two servers on one node would issue the same IDs.",
            setting,
            UNSET,
            i32::MAX,
            GucContext::Postmaster,
            GucFlags::default(),
        );
    };
    node(
        c"snowmint.datacenter",
        c"This server's datacenter id, for snowmint.next_id().",
        &DATACENTER,
    );
    node(
        c"snowmint.machine",
        c"This server's machine id, for snowmint.next_id().",
        &MACHINE,
    );
    node(
        c"snowmint.slot",
        c"This server's node as one number (datacenter * 2^machine_bits + machine), instead of snowmint.datacenter and snowmint.machine.",
        &SLOT,
    );
    GucRegistry::define_int_guc(
        c"snowmint.slots_per_node",
        c"How many slots this server holds, from its node's (or claims together from the fleet's coordinator): a power of two.",
        c"Each tick then holds every ID of all of them, still increasing: K times one slot's IDs per tick.",
        &SLOTS_PER_NODE,
        1,
        i32::MAX,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"snowmint.layout",
        c"The layout of the IDs snowmint.next_id() issues: twitter, discord or T/D/M/S@EPOCH.",
        c"",
        &LAYOUT,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"snowmint.clock_policy",
        c"What snowmint.next_id() does when the clock is behind its last ID: refuse, wait or borrow.",
        c"",
        &CLOCK_POLICY,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    let duration = |name, short, setting, min| {
        GucRegistry::define_int_guc(
            name,
            short,
            c"",
            setting,
            min,
            DAY_MS,
            GucContext::Postmaster,
            GucFlags::UNIT_MS,
        );
    };
    duration(
        c"snowmint.clock_wait_max",
        c"The bound of the wait and borrow clock policies.",
        &CLOCK_WAIT_MAX,
        0,
    );
    duration(
        c"snowmint.mark_step",
        c"How far ahead of the clock the high-water mark is reserved on disk.",
        &MARK_STEP,
        10,
    );
    duration(
        c"snowmint.mark_wait_max",
        c"The longest gap to the high-water mark that snowmint.next_id() waits out after a restart.",
        &MARK_WAIT_MAX,
        0,
    );
    fleet_settings::register();
}

/// Settings that contradict each other so plainly that the server should
/// not start with them: a node given and a coordinator to claim one from,
/// or claim settings without a coordinator. The message names them all.
pub fn startup_conflict() -> Option<String> {
    let node_given: Vec<&str> = [
        ("snowmint.datacenter", &DATACENTER),
        ("snowmint.machine", &MACHINE),
        ("snowmint.slot", &SLOT),
    ]
    .into_iter()
    .filter(|(_, setting)| setting.get() != UNSET)
    .map(|(name, _)| name)
    .collect();
    if fleet_settings::coordinated() && !node_given.is_empty() {
        return Some(format!(
            "snowmint.coordinator and {} are both set: a server either is given its node or claims one from the fleet's coordinator, not both; remove one of them from postgresql.conf",
            node_given.join(" and ")
        ));
    }
    let stray = fleet_settings::given_without_coordinator();
    if !stray.is_empty() {
        return Some(format!(
            "{} only applies with snowmint.coordinator, which is not set; set it, or remove {}",
            stray.join(" and "),
            if stray.len() == 1 { "it" } else { "them" }
        ));
    }
    None
}

/// What the settings say, checked.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The layout of issued IDs.
    pub layout: Layout,
    /// This server's node, if set (with several slots, the first).
    pub node: Option<Node>,
    /// How many slots the server holds (`snowmint.slots_per_node`).
    pub slots: u64,
    /// What to do when the clock is behind.
    pub policy: ClockPolicy,
    /// How far ahead the mark is reserved.
    pub mark_step: Duration,
    /// The longest gap to the mark waited out after a restart.
    pub mark_wait_max: Duration,
    /// The coordinator to claim the node from, if any (then `node` is
    /// `None`).
    pub fleet: Option<FleetSettings>,
}

impl Settings {
    /// Reads and checks the settings; the node may be unset.
    pub fn read() -> Result<Settings, ErrorReport> {
        let layout = layout()?;
        let policy_name = text(&CLOCK_POLICY).unwrap_or_else(|| "refuse".to_owned());
        let policy = ClockPolicy::from_name(&policy_name, millis(&CLOCK_WAIT_MAX))
            .map_err(|error| errors::from_core_about(Some("snowmint.clock_policy"), error))?;
        let mark_step = millis(&MARK_STEP);
        let mark_wait_max = millis(&MARK_WAIT_MAX);
        if mark_step > mark_wait_max {
            return Err(errors::invalid(format!(
                "snowmint.mark_step {} ms is longer than snowmint.mark_wait_max {} ms: a server killed and restarted at once would refuse to issue",
                mark_step.as_millis(),
                mark_wait_max.as_millis()
            )));
        }
        let node = node(layout)?;
        let slots = u64::try_from(SLOTS_PER_NODE.get()).unwrap_or(1);
        layout
            .check_slot_block(node.map_or(0, Node::slot), slots)
            .map_err(|error| errors::from_core_about(Some("snowmint.slots_per_node"), error))?;
        Ok(Settings {
            layout,
            node,
            slots,
            policy,
            mark_step,
            mark_wait_max,
            fleet: fleet_settings::read(layout)?,
        })
    }

    /// The node, or the error that says how to set it.
    pub fn require_node(&self) -> Result<Node, ErrorReport> {
        self.node.ok_or_else(|| {
            errors::not_ready(
                "snowmint.datacenter and snowmint.machine (or snowmint.slot) are not set: set them in postgresql.conf, or set snowmint.coordinator to claim a node from the fleet's coordinator, and restart the server; every server that issues IDs needs its own node",
            )
        })
    }
}

/// The server's layout (`snowmint.layout`).
pub fn layout() -> Result<Layout, ErrorReport> {
    let text = text(&LAYOUT).unwrap_or_else(|| "twitter".to_owned());
    text.parse::<Layout>()
        .map_err(|error| errors::from_core_about(Some("snowmint.layout"), error))
}

fn node(layout: Layout) -> Result<Option<Node>, ErrorReport> {
    let (datacenter, machine, slot) = (DATACENTER.get(), MACHINE.get(), SLOT.get());
    let bad = |error: snowmint::Error, name: &str| {
        errors::from_core_about(Some(&format!("snowmint.{name}")), error)
    };
    if slot != UNSET {
        if datacenter != UNSET || machine != UNSET {
            return Err(errors::invalid(format!(
                "snowmint.slot {slot} and snowmint.datacenter/snowmint.machine are both set: set one or the other"
            )));
        }
        let node = layout
            .node_from_slot(slot as u64)
            .map_err(|error| bad(error, "slot"))?;
        return Ok(Some(node));
    }
    match (datacenter, machine) {
        (UNSET, UNSET) => Ok(None),
        (UNSET, _) | (_, UNSET) => Err(errors::not_ready(format!(
            "only one of snowmint.datacenter ({}) and snowmint.machine ({}) is set: set both, or snowmint.slot",
            shown(datacenter),
            shown(machine)
        ))),
        (datacenter, machine) => {
            // The node as two numbers (see `Layout::node_from_pair`):
            // datacenter and machine in Twitter's layout. Each is checked
            // against its range, and named when it is out of it.
            let (upper, lowest) = layout.pair_max();
            let datacenter = snowmint::value::check_bounded("datacenter", datacenter, 0..=upper)
                .map_err(|error| bad(error, "datacenter"))?;
            let machine = snowmint::value::check_bounded("machine", machine, 0..=lowest)
                .map_err(|error| bad(error, "machine"))?;
            let node = layout
                .node_from_pair(datacenter, machine)
                .map_err(|error| bad(error, "datacenter"))?;
            Ok(Some(node))
        }
    }
}

fn shown(value: i32) -> String {
    if value == UNSET {
        "not set".to_owned()
    } else {
        value.to_string()
    }
}

/// A text setting, trimmed; `None` when unset or blank.
pub(crate) fn text(setting: &GucSetting<Option<CString>>) -> Option<String> {
    setting
        .get()
        .map(|value| value.to_string_lossy().trim().to_owned())
        .filter(|value| !value.is_empty())
}

fn millis(setting: &GucSetting<i32>) -> Duration {
    Duration::from_millis(u64::try_from(setting.get()).unwrap_or(0))
}
