//! `Generator` and `ManualClock`: the core's generator, shared by Python
//! threads.

use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyList;
use snowmint::{
    Clock, ClockPolicy, Error, Generator, Layout, ManualClock, Node, SnowflakeId, SystemClock,
};

use crate::errors::{self, OrRaise};
use crate::layout::PyLayout;
use crate::values;

/// The longest `max` a policy takes, as `snowmint serve --clock-max`.
const MAX_BOUND: Duration = Duration::from_secs(24 * 60 * 60);

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
    inner: Inner,
    /// The policy as asked for, to tell when a refusal by `try_next_id`
    /// should be waited out by `next_id` instead.
    policy: ClockPolicy,
}

#[pymethods]
impl PyGenerator {
    #[new]
    #[pyo3(signature = (*, datacenter, machine, layout = PyLayout(Layout::TWITTER), policy = None, max = None, clock = None))]
    fn new(
        py: Python<'_>,
        datacenter: &Bound<'_, PyAny>,
        machine: &Bound<'_, PyAny>,
        layout: PyLayout,
        policy: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
        clock: Option<Bound<'_, PyManualClock>>,
    ) -> PyResult<PyGenerator> {
        let layout = layout.0;
        let node = Node {
            datacenter: values::field(py, &layout, snowmint::Field::Datacenter, datacenter)?,
            machine: values::field(py, &layout, snowmint::Field::Machine, machine)?,
        };
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
        let builder = Generator::builder(layout, node).policy(policy);
        let inner = match clock {
            Some(clock) => Inner::Manual(
                builder
                    .clock(clock.get().0.clone())
                    .build()
                    .or_raise(py, None)?,
            ),
            None => Inner::System(builder.build().or_raise(py, None)?),
        };
        Ok(PyGenerator { inner, policy })
    }

    /// The next ID (an int).
    ///
    /// Waits for the next millisecond when this one's sequence is used up,
    /// and follows the policy when the clock is behind: ``ClockBehindError``
    /// when it refuses.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        // The usual case holds on to the interpreter lock: letting go of it
        // and taking it back costs more than making the ID. Only a call that
        // has to wait lets go, and then waits in the core's `next_id`.
        let waits = |error: &Error| match error {
            Error::SequenceExhausted { .. } => true,
            Error::ClockBehind { .. } => matches!(self.policy, ClockPolicy::Wait { .. }),
            _ => false,
        };
        let id: Result<SnowflakeId, Error> = match on!(&self.inner, g => g.try_next_id()) {
            Err(error) if waits(&error) => py.detach(|| on!(&self.inner, g => g.next_id())),
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
        let mut ids = Vec::new();
        py.detach(|| on!(&self.inner, g => g.next_ids(count, &mut ids)))
            .or_raise(py, None)?;
        PyList::new(py, ids.iter().map(|id| id.as_u64()))
    }

    /// The layout the IDs are made in.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout(on!(&self.inner, g => g.layout()))
    }

    /// The datacenter in every ID.
    #[getter]
    fn datacenter(&self) -> u64 {
        on!(&self.inner, g => g.node()).datacenter
    }

    /// The machine in every ID.
    #[getter]
    fn machine(&self) -> u64 {
        on!(&self.inner, g => g.node()).machine
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
        let node = on!(&self.inner, g => g.node());
        let layout = on!(&self.inner, g => g.layout());
        let max = match self.policy.bound() {
            Some(bound) => format!(", max='{}'", snowmint::value::format_duration(bound)),
            None => String::new(),
        };
        format!(
            "Generator(datacenter={}, machine={}, layout={}, policy='{}'{max})",
            node.datacenter,
            node.machine,
            PyLayout(layout).repr(),
            self.policy.name()
        )
    }
}
