//! `Layout` and `Parts`: which bits mean what, and the fields of one ID.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyRange, PyTuple};
use snowmint::Layout;

use crate::columns::{self, Columns};
use crate::errors::{OrRaise, to_py};
use crate::fields::{Extract, Fields};
use crate::values;

/// An ID format: which bits mean what, in what unit, from what epoch.
///
/// ``Layout.TWITTER`` (from the most significant bit down: a 0 bit, 41 bits
/// of milliseconds since 2010-11-04, 5 of datacenter, 5 of machine, 12 of
/// sequence) is the default everywhere; ``Layout.DISCORD`` is Discord's
/// (64 bits, epoch 2015-01-01); ``Layout.parse`` reads any preset by name
/// (``sonyflake``, ``instagram``, ``baidu``...) or layout text. IDs of
/// every layout decode into four numbers: the time, the node as
/// ``datacenter`` and ``machine`` (the node fields above the lowest one,
/// and the lowest) and the ``sequence``.
///
/// >>> from snowmint import Layout
/// >>> Layout.TWITTER.encode(1700000000000, 7, 13, 4095)
/// 1724551110457221119
/// >>> Layout.TWITTER.decode(1724551110457221119)
/// Parts(timestamp_ms=1700000000000, datacenter=7, machine=13, sequence=4095)
/// >>> Layout.DISCORD.decode(175928847299117063).time
/// datetime.datetime(2016, 4, 30, 11, 18, 25, 796000, tzinfo=datetime.timezone.utc)
#[pyclass(module = "snowmint", name = "Layout", frozen, eq, hash, from_py_object)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyLayout(pub Layout);

#[pymethods]
impl PyLayout {
    /// Twitter's layout: 41-bit timestamp, 5-bit datacenter, 5-bit machine,
    /// 12-bit sequence, epoch 1288834974657 (2010-11-04T01:42:54.657Z).
    #[classattr]
    const TWITTER: PyLayout = PyLayout(Layout::TWITTER);

    /// Discord's layout: all 64 bits, 42-bit timestamp, 5-bit worker,
    /// 5-bit process, 12-bit increment, epoch 1420070400000
    /// (2015-01-01T00:00:00Z).
    #[classattr]
    const DISCORD: PyLayout = PyLayout(Layout::DISCORD);

    /// Reads a layout: a preset name (``twitter``, ``sonyflake``... in any
    /// case), widths ``T/D/M/S`` adding up to 63, or named fields
    /// (``time:39/sequence:8/machine:16``), any of them optionally followed
    /// by ``@EPOCH`` (Unix milliseconds or RFC 3339) and ``,UNIT``
    /// (``10ms``). Raises ``InvalidValueError`` (field ``layout``) for
    /// anything else.
    ///
    /// >>> Layout.parse("discord") == Layout.DISCORD
    /// True
    /// >>> custom = Layout.parse("42/0/10/11@2020-09-13T12:26:40Z")
    /// >>> custom
    /// Layout.parse('42/0/10/11@1600000000000')
    /// >>> custom.ids_per_ms, custom.node_count
    /// (2048, 1024)
    /// >>> Layout.parse("41/5/5/13")
    /// Traceback (most recent call last):
    ///     ...
    /// snowmint.errors.InvalidValueError: invalid layout: widths 41+5+5+13 add up to 64 bits, not 63 (...)
    #[staticmethod]
    fn parse(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<PyLayout> {
        let spec: String = text.extract()?;
        spec.parse::<Layout>()
            .map(PyLayout)
            .or_raise(py, Some(text))
    }

    /// The names of the preset layouts.
    ///
    /// >>> Layout.preset_names()[:4]
    /// ['twitter', 'discord', 'instagram', 'mastodon']
    #[staticmethod]
    fn preset_names() -> Vec<&'static str> {
        Layout::preset_names().collect()
    }

    /// The preset's name (``"twitter"``, ``"sonyflake"``), or ``None`` for a
    /// custom layout.
    #[getter]
    fn name(&self) -> Option<&'static str> {
        self.0.name()
    }

    /// The epoch, in Unix milliseconds.
    #[getter]
    fn epoch_ms(&self) -> i64 {
        self.0.epoch_ms()
    }

    /// Width of the timestamp field, in bits.
    #[getter]
    fn timestamp_bits(&self) -> u8 {
        self.0.time_field().width()
    }

    /// Width of the datacenter field (the node fields above the lowest), in
    /// bits.
    #[getter]
    fn datacenter_bits(&self) -> u8 {
        Extract::widths(&self.0)[1]
    }

    /// Width of the machine field (the lowest node field), in bits.
    #[getter]
    fn machine_bits(&self) -> u8 {
        Extract::widths(&self.0)[2]
    }

    /// Width of the sequence field, in bits.
    #[getter]
    fn sequence_bits(&self) -> u8 {
        Extract::widths(&self.0)[3]
    }

    /// How many IDs one node can make per millisecond, at most.
    #[getter]
    fn ids_per_ms(&self) -> u64 {
        self.0.ids_per_second() / 1000
    }

    /// How many nodes (slots) the layout has room for.
    #[getter]
    fn node_count(&self) -> u64 {
        self.0.node_count()
    }

    /// The last instant an ID can carry, in Unix milliseconds.
    ///
    /// >>> Layout.TWITTER.last_instant_ms
    /// 3487858230208
    #[getter]
    fn last_instant_ms(&self) -> i64 {
        self.0.last_instant_ms()
    }

    /// Encodes the fields into an ID.
    ///
    /// ``timestamp`` is Unix milliseconds (an int) or an aware ``datetime``
    /// (cut to the millisecond, then to the layout's unit). Fields are
    /// given by the family's names for them as keywords (Discord's
    /// ``worker``, ``process``, ``increment``; Sonyflake's ``machine``), or
    /// as ``datacenter`` (the node fields above the lowest), ``machine``
    /// (the lowest) and ``sequence``; a field not given is 0. A field out
    /// of range raises ``OutOfRangeError`` naming it, with the valid range
    /// in ``min`` and ``max``; a name the layout does not have, or one
    /// field given twice, ``InvalidValueError``.
    ///
    /// >>> from datetime import datetime, timezone
    /// >>> when = datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)
    /// >>> Layout.TWITTER.encode(when, datacenter=7, machine=13, sequence=4095)
    /// 1724551110457221119
    /// >>> Layout.DISCORD.encode(1462015105796, worker=1, process=0, increment=7)
    /// 175928847299117063
    /// >>> Layout.TWITTER.encode(when, datacenter=32, machine=0, sequence=0)
    /// Traceback (most recent call last):
    ///     ...
    /// snowmint.errors.OutOfRangeError: datacenter 32 is out of range (0..=31)
    #[pyo3(signature = (timestamp, datacenter = None, machine = None, sequence = None, **fields))]
    fn encode(
        &self,
        py: Python<'_>,
        timestamp: &Bound<'_, PyAny>,
        datacenter: Option<&Bound<'_, PyAny>>,
        machine: Option<&Bound<'_, PyAny>>,
        sequence: Option<&Bound<'_, PyAny>>,
        fields: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u64> {
        let layout = &self.0;
        let timestamp_ms = values::instant(py, layout, timestamp)?;
        let mut given: Vec<(String, u64)> = Vec::new();
        for (name, value) in [
            ("datacenter", datacenter),
            ("machine", machine),
            ("sequence", sequence),
        ] {
            if let Some(value) = value {
                let max = layout.max_of(name).or_raise(py, None)?;
                given.push((name.to_owned(), values::field(py, name, max, value)?));
            }
        }
        for (name, value) in fields.into_iter().flat_map(|fields| fields.iter()) {
            let name: String = name.extract()?;
            let number = match value.extract::<u64>() {
                Ok(number) => number,
                // An int outside 0..=2**64-1: the core's message, naming
                // the field and its range.
                Err(error) if value.is_instance_of::<PyInt>() => {
                    let text = value.str()?.to_string();
                    return Err(layout
                        .parse_named(&name, &text)
                        .err()
                        .map_or(error, |core| to_py(py, core, Some(&value))));
                }
                Err(error) => return Err(error),
            };
            given.push((name, number));
        }
        let named: Vec<(&str, u64)> = given
            .iter()
            .map(|(name, value)| (name.as_str(), *value))
            .collect();
        layout
            .encode_named(timestamp_ms.saturating_mul(1000), &named)
            .map(|id| id.as_u64())
            .or_raise(py, None)
    }

    /// Every field of ``id`` but the time, by the family's names for them,
    /// most significant first.
    ///
    /// >>> Layout.DISCORD.fields(175928847299117063)
    /// {'worker': 1, 'process': 0, 'increment': 7}
    /// >>> Layout.parse("sonyflake").fields(487328464240640513)
    /// {'sequence': 0, 'machine': 513}
    fn fields<'py>(&self, py: Python<'py>, id: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let id = values::id(py, &self.0, id)?;
        let parts = self.0.decode(id).or_raise(py, None)?;
        let dict = PyDict::new(py);
        for (field, value) in parts.values() {
            dict.set_item(field.name(), value)?;
        }
        Ok(dict)
    }

    /// The names of the layout's fields, most significant first, the time's
    /// included.
    ///
    /// >>> Layout.DISCORD.field_names
    /// ['time', 'worker', 'process', 'increment']
    #[getter]
    fn field_names(&self) -> Vec<String> {
        self.0
            .fields()
            .iter()
            .map(|field| field.name().to_owned())
            .collect()
    }

    /// The unit of the time field: ``'1ms'``, ``'10ms'`` (Sonyflake),
    /// ``'1s'`` (Baidu)...
    ///
    /// >>> Layout.parse("sonyflake").unit
    /// '10ms'
    #[getter]
    fn unit(&self) -> String {
        self.0.unit().to_string()
    }

    /// The largest ID of the layout: ``2**64 - 1`` for Discord's.
    ///
    /// >>> Layout.DISCORD.max_id == 2**64 - 1
    /// True
    #[getter]
    fn max_id(&self) -> u64 {
        self.0.max_id().as_u64()
    }

    /// Whether every ID of the layout is below ``2**53``, so that a
    /// JavaScript number holds it exactly.
    ///
    /// >>> Layout.parse("cosid-safe-js").js_safe, Layout.TWITTER.js_safe
    /// (True, False)
    #[getter]
    fn js_safe(&self) -> bool {
        self.0.is_js_safe()
    }

    /// Whether snowmint can mint IDs of the layout (a sequence field below
    /// the time, no opaque bits), or only read them.
    ///
    /// >>> Layout.parse("mastodon").mintable, Layout.DISCORD.mintable
    /// (False, True)
    #[getter]
    fn mintable(&self) -> bool {
        self.0.is_mintable()
    }

    /// Decodes an ID (an int in 0 ..= the layout's largest, 2**63 - 1 for
    /// Twitter) into its fields.
    ///
    /// >>> parts = Layout.TWITTER.decode(1724551110457221119)
    /// >>> parts.timestamp_ms, parts.datacenter, parts.machine, parts.sequence
    /// (1700000000000, 7, 13, 4095)
    /// >>> Layout.TWITTER.decode(-1)
    /// Traceback (most recent call last):
    ///     ...
    /// snowmint.errors.OutOfRangeError: ID -1 is out of range (0..=9223372036854775807)
    fn decode(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<PyParts> {
        let id = values::id(py, &self.0, id)?;
        let fields = Extract::new(&self.0).of(id.as_u64());
        // Checked just above: every ID up to the layout's largest decodes.
        Ok(PyParts(fields.unwrap_or(Fields {
            timestamp_ms: 0,
            datacenter: 0,
            machine: 0,
            sequence: 0,
        })))
    }

    /// Decodes a column of IDs at once; see ``snowmint.decode_many``.
    #[pyo3(signature = (ids, *, int64 = false, out = None))]
    fn decode_many(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        int64: bool,
        out: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Columns> {
        columns::decode_many_with(py, &self.0, ids, int64, out)
    }

    /// The IDs whose timestamp lies in ``start ..= end`` (both included;
    /// ints of Unix milliseconds or aware datetimes), as a ``range``:
    /// ``WHERE id BETWEEN r[0] AND r[-1]`` selects what was made then.
    ///
    /// >>> r = Layout.TWITTER.id_range(1700000000000, 1700000000999)
    /// >>> r[0], r[-1]
    /// (1724551110456246272, 1724551114650550271)
    /// >>> 1724551110457221119 in r
    /// True
    fn id_range<'py>(
        &self,
        py: Python<'py>,
        start: &Bound<'py, PyAny>,
        end: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let layout = &self.0;
        let from_ms = values::instant(py, layout, start)?;
        let to_ms = values::instant(py, layout, end)?;
        let range = layout.id_range(from_ms, to_ms).or_raise(py, None)?;
        // Built from Python ints: the stop can be 2**63, past any isize.
        let (first, last) = (range.start().as_u64(), range.end().as_u64());
        py.get_type::<PyRange>().call1((first, last + 1))
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        self.repr()
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let parse = slf.get_type().getattr("parse")?;
        Ok((parse, (slf.get().0.to_string(),)))
    }
}

impl PyLayout {
    /// How the layout is written in Python: `Layout.TWITTER`, or
    /// `Layout.parse('...')` with the text that reads it back.
    pub fn repr(&self) -> String {
        match self.0.name() {
            Some(name) => format!("Layout.{}", name.to_uppercase()),
            None => format!("Layout.parse('{}')", self.0),
        }
    }
}

/// The arguments `Parts(...)` takes, in order.
type PartsArgs = (i64, u64, u64, u64);

/// The fields of one ID, as ``Layout.decode`` gives them: a frozen value
/// that compares and hashes by its fields.
///
/// ``timestamp_ms`` is Unix milliseconds (not counted from the layout's
/// epoch); ``time`` is the same instant as an aware ``datetime`` in UTC.
///
/// >>> from snowmint import Layout, Parts
/// >>> parts = Layout.TWITTER.decode(1724551110457221119)
/// >>> parts.time
/// datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.timezone.utc)
/// >>> parts == Parts(1700000000000, 7, 13, 4095)
/// True
/// >>> parts.machine = 3
/// Traceback (most recent call last):
///     ...
/// AttributeError: ...
#[pyclass(
    module = "snowmint",
    name = "Parts",
    frozen,
    eq,
    hash,
    skip_from_py_object
)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyParts(pub Fields);

#[pymethods]
impl PyParts {
    #[new]
    fn new(timestamp_ms: i64, datacenter: u64, machine: u64, sequence: u64) -> PyParts {
        PyParts(Fields {
            timestamp_ms,
            datacenter,
            machine,
            sequence,
        })
    }

    /// For ``match`` statements: ``case Parts(ms, dc, machine, seq)``.
    #[classattr]
    fn __match_args__(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
        PyTuple::new(py, ["timestamp_ms", "datacenter", "machine", "sequence"])
    }

    /// When the ID was made, in milliseconds since 1970-01-01T00:00:00Z.
    #[getter]
    fn timestamp_ms(&self) -> i64 {
        self.0.timestamp_ms
    }

    /// The same instant as an aware ``datetime`` in UTC.
    #[getter]
    fn time<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        values::datetime(py, self.0.timestamp_ms)
    }

    /// The datacenter id.
    #[getter]
    fn datacenter(&self) -> u64 {
        self.0.datacenter
    }

    /// The machine id within the datacenter.
    #[getter]
    fn machine(&self) -> u64 {
        self.0.machine
    }

    /// The sequence number within the millisecond.
    #[getter]
    fn sequence(&self) -> u64 {
        self.0.sequence
    }

    fn __repr__(&self) -> String {
        let Fields {
            timestamp_ms,
            datacenter,
            machine,
            sequence,
        } = self.0;
        format!(
            "Parts(timestamp_ms={timestamp_ms}, datacenter={datacenter}, machine={machine}, sequence={sequence})"
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, PartsArgs)> {
        let p = slf.get().0;
        Ok((
            slf.get_type().into_any(),
            (p.timestamp_ms, p.datacenter, p.machine, p.sequence),
        ))
    }
}
