//! `Generator` and `ManualClock`: the core's generator, shared by Python
//! threads; with a state directory or a coordinator, snowmint's issuer
//! (`issued.rs`); in a forked child, refused or claimed anew (`fork.rs`).

use std::time::Duration;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use snowmint::{
    Clock, ClockPolicy, Error, ErrorKind, Generator, Layout, ManualClock, Node, SnowflakeId,
    SystemClock,
};
use snowmint_fleet::{EmbeddedIssuer, IssuerBuilder, MAX_TTL, MIN_TTL, SlotRange};

use crate::errors::{self, OrRaise, raise};
use crate::issued::Issued;
use crate::layout::PyLayout;
use crate::{fork, values};

/// The longest `max` a policy takes, as `snowmint serve --clock-max`.
const MAX_BOUND: Duration = Duration::from_secs(24 * 60 * 60);

/// The longest a start waits for its first claim.
const MAX_WAIT: Duration = Duration::from_secs(3600);

/// The most IDs one `next_ids` call makes: a million, a quarter of a
/// second of a node's ceiling.
const MAX_BATCH: u64 = 1_000_000;

/// A clock that moves only when told to, for tests: pass it to
/// ``Generator(clock=...)`` and set it back to see what a policy does.
///
/// >>> from snowmint import Generator, ManualClock
/// >>> clock = ManualClock(1700000000000)
/// >>> generator = Generator(datacenter=1, machine=2, clock=clock)
/// >>> generator.next_id() == generator.layout.encode(1700000000000, 1, 2, 0)
/// True
/// >>> clock.advance(-5)
/// >>> generator.next_id()
/// Traceback (most recent call last):
///     ...
/// snowmint.errors.ClockBehindError: clock moved backwards: it reads 1699999999995 but IDs were already issued at 1700000000000 (5 ms behind); refusing until it catches up
#[pyclass(module = "snowmint", name = "ManualClock", frozen)]
pub struct PyManualClock(ManualClock);

#[pymethods]
impl PyManualClock {
    /// A clock that reads ``now_ms`` (Unix milliseconds) until changed.
    #[new]
    fn new(now_ms: i64) -> PyManualClock {
        PyManualClock(ManualClock::new(now_ms))
    }

    /// What the clock reads, in Unix milliseconds.
    #[getter]
    fn now_ms(&self) -> i64 {
        self.0.now_ms()
    }

    /// Sets the time, forwards or backwards.
    fn set(&self, now_ms: i64) {
        self.0.set(now_ms);
    }

    /// Moves the time by ``delta_ms`` (negative moves it back).
    fn advance(&self, delta_ms: i64) {
        self.0.advance(delta_ms);
    }

    fn __repr__(&self) -> String {
        format!("ManualClock({})", self.0.now_ms())
    }
}

/// The core's generator on the clock it was given.
enum Inner {
    System(Generator<SystemClock>),
    Manual(Generator<ManualClock>),
}

/// Calls the same method on whichever generator `inner` holds.
macro_rules! on {
    ($inner:expr, $g:ident => $call:expr) => {
        match $inner {
            Inner::System($g) => $call,
            Inner::Manual($g) => $call,
        }
    };
}

/// How a generator issues.
// One per Python generator, never moved after it is made: both kinds hold
// a layout and a generator inline, and boxing would only add a pointer to
// follow on every ID.
#[allow(clippy::large_enum_variant)]
enum Mode {
    /// The core's generator alone: no lock, no mark. `epoch` is the fork
    /// epoch it was made in: in a forked child it refuses.
    Plain { epoch: u64, inner: Inner },
    /// Through snowmint's issuer: a state directory, a coordinator.
    Issued(Issued),
}

/// Makes Snowflake IDs for one node (a datacenter and machine pair), by the
/// rules of snowmint's Rust generator, which it runs:
///
/// - IDs are strictly increasing across all threads sharing the generator;
/// - within a millisecond the sequence counts up from 0, and when it is used
///   up the call waits for the next millisecond;
/// - when the clock is behind the last timestamp used, ``policy`` decides:
///   ``"refuse"`` (the default) raises ``ClockBehindError`` until the clock
///   catches up; ``"wait"`` waits up to ``max`` for it, then refuses;
///   ``"borrow"`` goes on from the last timestamp while that is at most
///   ``max`` ahead of the clock, then refuses.
///
/// ``max`` is a ``timedelta`` or text such as ``"2s"`` or ``"500ms"`` (0 to
/// 24h, default 2s). While a call waits, it lets go of the interpreter
/// lock, so that other Python threads run. Every node generating at the
/// same time needs its own (datacenter, machine) pair.
///
/// ``slots_per_node=K`` (a power of two) makes the node hold its slot and
/// the ``K - 1`` after it (claimed: an aligned block of ``K``, claimed and
/// released together), for ``K`` times the IDs per millisecond; its IDs
/// still increase.
///
/// Three ways to run, by what keeps IDs unique beyond one process:
///
/// - ``Generator(datacenter=, machine=)``: nothing but the caller. Two
///   processes given the same node, or a restart with the clock set back,
///   can repeat IDs.
/// - ``Generator(datacenter=, machine=, state_dir=DIR)``: the rules of
///   ``snowmint serve``. The node is locked on this host (a second
///   process on the same node and ``state_dir`` gets ``NodeInUseError``,
///   naming the holder's pid and lock file; the lock goes when the
///   process dies, even by ``kill -9``), and a high-water mark is kept in
///   ``DIR`` ahead of the clock, so that a restart never issues at or
///   below it (a clock set back is refused by ``policy``).
/// - ``Generator.claim(coordinator=...)`` (or ``Generator(coordinator=...)``):
///   a slot leased from etcd, ZooKeeper or PostgreSQL, as a fleet of
///   ``snowmint serve`` nodes does, with fencing: ``next_id`` raises
///   ``FencedError`` before the claim could have been handed on.
///
/// After ``os.fork()`` (``gunicorn --preload``, uWSGI, ``multiprocessing``
/// with ``fork``), a generator made before the fork raises ``ForkError`` in
/// the child, since both processes would make the same IDs, except a
/// claimed one, which claims a slot of its own in the child on first use.
///
/// >>> from snowmint import Generator, Layout
/// >>> generator = Generator(datacenter=7, machine=13)
/// >>> a, b = generator.next_id(), generator.next_id()
/// >>> a < b
/// True
/// >>> Layout.TWITTER.decode(b).machine
/// 13
/// >>> len(set(generator.next_ids(10_000)))
/// 10000
/// >>> Generator(datacenter=32, machine=0)
/// Traceback (most recent call last):
///     ...
/// snowmint.errors.OutOfRangeError: datacenter 32 is out of range (0..=31)
#[pyclass(module = "snowmint", name = "Generator", frozen)]
pub struct PyGenerator {
    mode: Mode,
    /// The policy as asked for, to tell when a refusal by `try_next_id`
    /// should be waited out by `next_id` instead.
    policy: ClockPolicy,
}

/// A generator's settings, as read from its arguments.
struct Settings {
    layout: Layout,
    policy: ClockPolicy,
    clock: Option<ManualClock>,
    /// How many slots the node holds (`slots_per_node=`).
    slots: u64,
}

impl Settings {
    fn read(
        py: Python<'_>,
        layout: PyLayout,
        policy: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
        clock: Option<Bound<'_, PyManualClock>>,
        slots_per_node: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Settings> {
        // Any positive int here; the core says which the layout takes
        // (a power of two, as many as it has room for).
        let slots = match slots_per_node {
            Some(value) => values::field(py, "slots_per_node", u64::MAX, value)?,
            None => 1,
        };
        if slots_per_node.is_some() {
            layout
                .0
                .check_slot_block(0, slots)
                .or_raise(py, slots_per_node)?;
        }
        let bound = match max {
            Some(max) => values::duration(py, max, Duration::ZERO..=MAX_BOUND)?,
            None => Duration::from_secs(2),
        };
        let policy = match policy {
            Some(given) => {
                let name: String = given.extract()?;
                ClockPolicy::from_name(&name, bound).or_raise(py, Some(given))?
            }
            None => ClockPolicy::Refuse,
        };
        Ok(Settings {
            layout: layout.0,
            policy,
            clock: clock.map(|clock| clock.get().0.clone()),
            slots,
        })
    }

    /// An issuer's settings with these.
    fn builder(&self) -> IssuerBuilder {
        let builder = EmbeddedIssuer::builder()
            .layout(self.layout)
            .clock_policy(self.policy)
            .slots_per_node(self.slots);
        match &self.clock {
            Some(clock) => builder.clock(clock.clone()),
            None => builder,
        }
    }
}

/// A coordinator's settings, as read from `claim`'s arguments.
struct Fleet<'a, 'py> {
    coordinator: String,
    fleet: Option<String>,
    slots: Option<&'a Bound<'py, PyAny>>,
    claim_ttl: Option<&'a Bound<'py, PyAny>>,
}

impl PyGenerator {
    #[allow(clippy::too_many_arguments)]
    fn make(
        py: Python<'_>,
        node: Option<(&Bound<'_, PyAny>, &Bound<'_, PyAny>)>,
        settings: Settings,
        state_dir: Option<std::path::PathBuf>,
        fleet: Option<Fleet<'_, '_>>,
        wait: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyGenerator> {
        let layout = settings.layout;
        let policy = settings.policy;
        let mode = match (node, fleet) {
            (Some(_), Some(_)) => {
                return Err(PyTypeError::new_err(
                    "give either datacenter= and machine= (a fixed node) or coordinator= (a claimed one), not both",
                ));
            }
            (None, None) => {
                return Err(PyTypeError::new_err(
                    "Generator() needs datacenter= and machine=, or coordinator= (see Generator.claim)",
                ));
            }
            (Some((datacenter, machine)), None) => {
                // The node as two numbers (see `Layout::node_from_pair`):
                // datacenter and machine in Twitter's layout.
                let (upper, lowest) = layout.pair_max();
                let datacenter = values::field(py, "datacenter", upper, datacenter)?;
                let machine = values::field(py, "machine", lowest, machine)?;
                let node = layout
                    .node_from_pair(datacenter, machine)
                    .or_raise(py, None)?;
                if wait.is_some() {
                    return Err(PyTypeError::new_err(
                        "wait= applies to a claimed generator (coordinator=) only",
                    ));
                }
                match state_dir {
                    None => PyGenerator::plain(py, node, settings)?,
                    Some(dir) => {
                        let what = format!(
                            "datacenter {datacenter}, machine {machine} with state_dir {}",
                            dir.display()
                        );
                        let builder = settings.builder().node(datacenter, machine).state_dir(dir);
                        Mode::Issued(Issued::start(py, builder, layout, false, what)?)
                    }
                }
            }
            (None, Some(fleet)) => {
                let mut builder = settings.builder().coordinator(
                    fleet.coordinator.clone(),
                    fleet.fleet.clone().unwrap_or_default(),
                );
                if let Some(dir) = state_dir {
                    builder = builder.state_dir(dir);
                }
                if let Some(slots) = fleet.slots {
                    builder = builder.slots(slot_range(py, slots)?);
                }
                if let Some(ttl) = fleet.claim_ttl {
                    builder = builder.claim_ttl(values::named_duration(
                        py,
                        "claim_ttl",
                        ttl,
                        MIN_TTL..=MAX_TTL,
                    )?);
                }
                if let Some(wait) = wait {
                    builder = builder.wait_for_claim(values::named_duration(
                        py,
                        "wait",
                        wait,
                        Duration::ZERO..=MAX_WAIT,
                    )?);
                }
                // The URL's scheme only: the rest may hold a password.
                let scheme = fleet.coordinator.split("://").next().unwrap_or("?");
                let what = format!(
                    "claimed from {scheme} (fleet {:?})",
                    fleet.fleet.as_deref().unwrap_or("default")
                );
                Mode::Issued(Issued::start(py, builder, layout, true, what)?)
            }
        };
        Ok(PyGenerator { mode, policy })
    }

    fn plain(py: Python<'_>, node: Node, settings: Settings) -> PyResult<Mode> {
        let builder = Generator::builder(settings.layout, node)
            .policy(settings.policy)
            .slots(settings.slots);
        let inner = match settings.clock {
            Some(clock) => Inner::Manual(builder.clock(clock).build().or_raise(py, None)?),
            None => Inner::System(builder.build().or_raise(py, None)?),
        };
        Ok(Mode::Plain {
            epoch: fork::epoch(),
            inner,
        })
    }

    /// The plain generator, if this process may use it.
    #[inline]
    fn plain_here(&self, py: Python<'_>, epoch: u64, inner: &Inner) -> PyResult<()> {
        if epoch == fork::epoch() {
            Ok(())
        } else {
            let node = on!(inner, g => g.node());
            let (datacenter, machine) = on!(inner, g => g.layout()).pair_of(node);
            Err(raise(
                py,
                "ForkError",
                (fork::refusal(&format!(
                    "datacenter {datacenter}, machine {machine}"
                )),),
            ))
        }
    }

    /// The node of the IDs, or `FencedError` for a claimed generator that
    /// holds none now.
    fn current_node(&self, py: Python<'_>) -> PyResult<Node> {
        match &self.mode {
            Mode::Plain { inner, .. } => Ok(on!(inner, g => g.node())),
            Mode::Issued(issued) => issued.node().ok_or_else(|| {
                let reason = issued
                    .state(py)
                    .ok()
                    .and_then(|state| state.get_item("reason").ok().flatten())
                    .and_then(|reason| reason.extract::<String>().ok())
                    .unwrap_or_else(|| "no slot is held".to_owned());
                raise(
                    py,
                    "FencedError",
                    (
                        format!("this generator holds no node now: {reason}"),
                        "no_claim",
                        1.0,
                    ),
                )
            }),
        }
    }
}

/// A slot range: text as ``snowmint serve --slots`` takes it (``"0-31"``,
/// ``"7"``) or a Python ``range`` (``range(0, 32)``).
fn slot_range(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<std::ops::RangeInclusive<u64>> {
    if let Ok(text) = value.extract::<String>() {
        let range: SlotRange = text.parse().map_err(|error: snowmint_fleet::ConfigError| {
            raise(
                py,
                "InvalidValueError",
                (error.to_string(), "slots", value.clone()),
            )
        })?;
        return Ok(range.first()..=range.last());
    }
    if let Ok(range) = value.cast::<pyo3::types::PyRange>() {
        let (start, stop, step): (i64, i64, i64) = (
            range.getattr("start")?.extract()?,
            range.getattr("stop")?.extract()?,
            range.getattr("step")?.extract()?,
        );
        if step == 1 && 0 <= start && start < stop {
            return Ok(start as u64..=(stop - 1) as u64);
        }
        return Err(raise(
            py,
            "InvalidValueError",
            (
                format!(
                    "slots {} is not a range of slots: it needs a step of 1 and 0 <= start < stop",
                    value.repr()?
                ),
                "slots",
                value.clone(),
            ),
        ));
    }
    Err(PyTypeError::new_err(format!(
        "slots must be text such as \"0-31\" or a range such as range(0, 32), not {}",
        value.get_type().name()?
    )))
}

#[pymethods]
impl PyGenerator {
    #[new]
    #[pyo3(signature = (*, datacenter = None, machine = None, layout = PyLayout(Layout::TWITTER), policy = None, max = None, clock = None, state_dir = None, coordinator = None, fleet = None, slots = None, claim_ttl = None, wait = None, slots_per_node = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        datacenter: Option<&Bound<'_, PyAny>>,
        machine: Option<&Bound<'_, PyAny>>,
        layout: PyLayout,
        policy: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
        clock: Option<Bound<'_, PyManualClock>>,
        state_dir: Option<std::path::PathBuf>,
        coordinator: Option<String>,
        fleet: Option<String>,
        slots: Option<&Bound<'_, PyAny>>,
        claim_ttl: Option<&Bound<'_, PyAny>>,
        wait: Option<&Bound<'_, PyAny>>,
        slots_per_node: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyGenerator> {
        // In a layout with one node field (Sonyflake's machine), machine=
        // alone names the node: there is no datacenter part, only 0 fits.
        let zero = 0u8.into_pyobject(py)?.into_any();
        let one_node_field = layout.0.pair_max().0 == 0;
        let node = match (datacenter, machine) {
            (Some(datacenter), Some(machine)) => Some((datacenter, machine)),
            (None, Some(machine)) if one_node_field => Some((&zero, machine)),
            (None, None) => None,
            (Some(_), None) => {
                return Err(PyTypeError::new_err(
                    "machine= is missing: a fixed node needs datacenter= and machine=",
                ));
            }
            (None, Some(_)) => {
                return Err(PyTypeError::new_err(
                    "datacenter= is missing: a fixed node needs datacenter= and machine=",
                ));
            }
        };
        let fleet = match coordinator {
            Some(coordinator) => Some(Fleet {
                coordinator,
                fleet,
                slots,
                claim_ttl,
            }),
            None => {
                if fleet.is_some() || slots.is_some() || claim_ttl.is_some() {
                    return Err(PyTypeError::new_err(
                        "fleet=, slots= and claim_ttl= apply to a claimed generator: give coordinator= too",
                    ));
                }
                None
            }
        };
        let settings = Settings::read(py, layout, policy, max, clock, slots_per_node)?;
        PyGenerator::make(py, node, settings, state_dir, fleet, wait)
    }

    /// A generator whose node is a slot claimed from a coordinator, as the
    /// nodes of a ``snowmint serve`` fleet claim theirs:
    /// ``"etcd://HOST:PORT[,HOST:PORT...]"``, ``"zk://HOST:PORT[/CHROOT]"``
    /// or ``"postgres://USER@HOST/DB"``.
    ///
    /// - ``fleet`` names the fleet (``"default"``); ``slots`` the slots it
    ///   may take (``"0-31"`` or ``range(0, 32)``; every slot of the
    ///   layout by default); ``claim_ttl`` how long a claim outlives its
    ///   holder (``"10s"``); ``state_dir`` where the node's lock and mark
    ///   live (``$XDG_STATE_HOME/snowmint``, else
    ///   ``~/.local/state/snowmint``).
    /// - It returns once a slot is held, waiting at most ``wait``
    ///   (``"30s"``) without the interpreter lock; then ``FencedError``.
    /// - The claim is kept alive by a thread of the Rust engine; no Python
    ///   code runs for it. A claim that cannot be confirmed in time makes
    ///   ``next_id`` raise ``FencedError`` before the slot could be handed
    ///   to another node; issuing resumes once a slot is held again.
    /// - ``close()``, or leaving a ``with`` block, releases the slot at
    ///   once; otherwise it frees ``claim_ttl`` after the process ends.
    /// - After ``os.fork()`` the child claims a slot of its own on its first
    ///   call; the parent keeps its slot.
    #[staticmethod]
    #[pyo3(signature = (coordinator, *, fleet = None, slots = None, state_dir = None, claim_ttl = None, wait = None, layout = PyLayout(Layout::TWITTER), policy = None, max = None, slots_per_node = None))]
    #[allow(clippy::too_many_arguments)]
    fn claim(
        py: Python<'_>,
        coordinator: String,
        fleet: Option<String>,
        slots: Option<&Bound<'_, PyAny>>,
        state_dir: Option<std::path::PathBuf>,
        claim_ttl: Option<&Bound<'_, PyAny>>,
        wait: Option<&Bound<'_, PyAny>>,
        layout: PyLayout,
        policy: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
        slots_per_node: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyGenerator> {
        let settings = Settings::read(py, layout, policy, max, None, slots_per_node)?;
        let fleet = Fleet {
            coordinator,
            fleet,
            slots,
            claim_ttl,
        };
        PyGenerator::make(py, None, settings, state_dir, Some(fleet), wait)
    }

    /// The next ID (an int).
    ///
    /// Waits for the next millisecond when this one's sequence is used up,
    /// and follows the policy when the clock is behind: ``ClockBehindError``
    /// when it refuses. A claimed generator without a slot raises
    /// ``FencedError``; one made before ``os.fork()`` raises ``ForkError``
    /// in the child, unless claimed.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        let (epoch, inner) = match &self.mode {
            Mode::Plain { epoch, inner } => (*epoch, inner),
            Mode::Issued(issued) => return issued.next_id(py),
        };
        self.plain_here(py, epoch, inner)?;
        // The usual case holds on to the interpreter lock: letting go of it
        // and taking it back costs more than making the ID. Only a call that
        // has to wait lets go, and then waits in the core's `next_id`.
        let waits = |error: &Error| match error.kind() {
            ErrorKind::SequenceExhausted => true,
            ErrorKind::ClockBehind => matches!(self.policy, ClockPolicy::Wait { .. }),
            _ => false,
        };
        let id: Result<SnowflakeId, Error> = match on!(inner, g => g.try_next_id()) {
            Err(error) if waits(&error) => py.detach(|| on!(inner, g => g.next_id())),
            other => other,
        };
        id.map(SnowflakeId::as_u64).or_raise(py, None)
    }

    /// ``count`` new IDs (0 to 1,000,000), increasing, as a list.
    ///
    /// Lets go of the interpreter lock while it makes them, waiting for
    /// the next millisecond as often as needed (4,096 IDs per millisecond
    /// in the Twitter layout).
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        count: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let count = values::count(py, count, "count", MAX_BATCH)?;
        let ids = match &self.mode {
            Mode::Plain { epoch, inner } => {
                self.plain_here(py, *epoch, inner)?;
                let mut ids = Vec::new();
                py.detach(|| on!(inner, g => g.next_ids(count, &mut ids)))
                    .or_raise(py, None)?;
                ids
            }
            Mode::Issued(issued) => issued.next_ids(py, count)?,
        };
        PyList::new(py, ids.iter().map(|id| id.as_u64()))
    }

    /// The layout the IDs are made in.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout(match &self.mode {
            Mode::Plain { inner, .. } => on!(inner, g => g.layout()),
            Mode::Issued(issued) => issued.layout(),
        })
    }

    /// The datacenter in every ID (of the slot held now, when claimed:
    /// ``FencedError`` when none is).
    #[getter]
    fn datacenter(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.layout().0.pair_of(self.current_node(py)?).0)
    }

    /// The machine in every ID (of the slot held now, when claimed).
    #[getter]
    fn machine(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.layout().0.pair_of(self.current_node(py)?).1)
    }

    /// ``(datacenter, machine)`` of the IDs issued now; ``None`` for a
    /// claimed generator that holds no slot now.
    #[getter]
    fn node<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let node = match &self.mode {
            Mode::Plain { inner, .. } => Some(on!(inner, g => g.node())),
            Mode::Issued(issued) => issued.node(),
        };
        let layout = self.layout().0;
        node.map(|node| {
            let (datacenter, machine) = layout.pair_of(node);
            PyTuple::new(py, [datacenter, machine])
        })
        .transpose()
    }

    /// What the generator can do now, as a dict: ``state`` (``"active"``,
    /// ``"fenced"``, ``"closed"``, or ``"forked"`` for a claimed generator
    /// in a child that has not claimed yet), ``reason`` (why not active),
    /// ``source`` (``"plain"``, ``"static"``, ``"etcd"``, ``"zookeeper"``,
    /// ``"postgres"``), ``slot``, ``slots`` (how many the node holds, from
    /// ``slot``), ``datacenter``, ``machine``,
    /// ``generation`` (counts claims), ``valid_for_s`` (how long the claim
    /// is known to hold), ``state_file`` and ``high_water_mark_ms``.
    ///
    /// >>> from snowmint import Generator
    /// >>> Generator(datacenter=1, machine=2).state["state"]
    /// 'active'
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        match &self.mode {
            Mode::Issued(issued) => issued.state(py),
            Mode::Plain { epoch, inner } => {
                let dict = PyDict::new(py);
                let node = on!(inner, g => g.node());
                let here = *epoch == fork::epoch();
                dict.set_item("state", if here { "active" } else { "forked" })?;
                dict.set_item(
                    "reason",
                    (!here).then_some("this process is a fork of the one that made the generator"),
                )?;
                dict.set_item("source", "plain")?;
                dict.set_item("slot", on!(inner, g => g.layout()).slot_of(node).ok())?;
                dict.set_item("slots", on!(inner, g => g.slots()))?;
                let (datacenter, machine) = on!(inner, g => g.layout()).pair_of(node);
                dict.set_item("datacenter", datacenter)?;
                dict.set_item("machine", machine)?;
                for key in [
                    "generation",
                    "valid_for_s",
                    "state_file",
                    "high_water_mark_ms",
                ] {
                    dict.set_item(key, py.None())?;
                }
                Ok(dict)
            }
        }
    }

    /// Releases the node: a claimed slot at once (instead of when its TTL
    /// runs out), the node's lock and state file. Later calls raise
    /// ``FencedError``. A plain generator has nothing to release. Calling
    /// it twice does nothing.
    fn close(&self, py: Python<'_>) {
        if let Mode::Issued(issued) = &self.mode {
            issued.close(py);
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Leaving a ``with`` block closes the generator; an exception goes on.
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        exc_value: &Bound<'_, PyAny>,
        traceback: &Bound<'_, PyAny>,
    ) -> bool {
        let _ = (exc_type, exc_value, traceback);
        self.close(py);
        false
    }

    /// What happens when the clock is behind: ``"refuse"``, ``"wait"`` or
    /// ``"borrow"``.
    #[getter]
    fn policy(&self) -> &'static str {
        self.policy.name()
    }

    /// The bound of ``"wait"`` and ``"borrow"`` as a ``timedelta``; ``None``
    /// for ``"refuse"``.
    #[getter]
    fn max<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, pyo3::types::PyDelta>>> {
        self.policy
            .bound()
            .map(|bound| errors::timedelta(py, bound))
            .transpose()
    }

    fn __repr__(&self) -> String {
        let max = match self.policy.bound() {
            Some(bound) => format!(", max='{}'", snowmint::value::format_duration(bound)),
            None => String::new(),
        };
        match &self.mode {
            Mode::Plain { inner, .. } => {
                let node = on!(inner, g => g.node());
                let layout = on!(inner, g => g.layout());
                format!(
                    "Generator(datacenter={}, machine={}, layout={}, policy='{}'{max})",
                    layout.pair_of(node).0,
                    layout.pair_of(node).1,
                    PyLayout(layout).repr(),
                    self.policy.name()
                )
            }
            Mode::Issued(issued) => format!(
                "<snowmint.Generator {}, layout={}, policy='{}'{max}>",
                issued.what(),
                PyLayout(issued.layout()).repr(),
                self.policy.name()
            ),
        }
    }
}
