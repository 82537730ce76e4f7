//! The `snowmint` Python package: snowmint's layouts, encoding, decoding,
//! text encodings and generator, by the Rust core's own code.
//!
//! # How it fits together
//!
//! `Layout` and `Parts` encode, decode and turn time windows into ID
//! ranges, one ID at a time; `decode_many` decodes whole columns into a
//! `Columns` of buffers NumPy can wrap; `to_text` and `from_text` spell IDs
//! in hex, base32 and base58; `inspect` reads the IDs out of any text into
//! `Token`s and their ranked `Reading`s. Python arguments (ints, datetimes,
//! durations) are read into the core's values by one set of converters,
//! and the core's errors come back as the package's exceptions.
//!
//! A `Generator` (and `ManualClock`, for tests) is the core's generator
//! when it is given a node and nothing else. Given a state directory, or
//! claimed from a coordinator, it issues through the fleet's
//! `EmbeddedIssuer` instead, and its refusals and start-up errors have
//! exceptions of their own. A fork epoch tells a forked child from the
//! process that made a generator, so that a child never issues with its
//! parent's node.
//!
//! The Python side (`python/snowmint/`) re-exports all of it, defines the
//! exceptions and carries the type stubs.

use pyo3::prelude::*;
use snowmint::Layout;

mod columns;
mod errors;
mod fields;
mod fork;
mod generator;
mod inspect;
mod issued;
mod layout;
mod refusals;
mod text;
mod values;

use layout::PyLayout;

/// Decodes a column of IDs at once, in ``layout`` (Twitter's by default).
///
/// ``ids`` is a list (or any iterable) of ints, or any object with the
/// buffer protocol holding 64-bit integers: ``array('q')``, ``array('Q')``,
/// a NumPy ``int64``/``uint64`` array, an Arrow array's
/// ``to_numpy(zero_copy_only=True)``. Returns ``Columns``: one
/// ``memoryview`` per field, which NumPy and pandas take without a copy.
/// The timestamp column is ``int64``; the others have the smallest
/// unsigned type their field fits (``uint8`` datacenter and machine,
/// ``uint16`` sequence in the Twitter layout), or ``int64`` with
/// ``int64=True``. With ``out=``, four writable buffers (a sequence in the
/// order timestamp_ms, datacenter, machine, sequence, or a dict by those
/// names) of at least ``len(ids)`` items each, of integer types that hold
/// their fields, are written instead, and the columns are views of them.
/// A value that is not an ID raises ``OutOfRangeError`` with its
/// ``index``. The interpreter lock is let go while the IDs are decoded.
///
/// >>> import snowmint
/// >>> from array import array
/// >>> ids = array("q", [1724551110457221119, 175928847299117063])
/// >>> columns = snowmint.decode_many(ids, snowmint.Layout.DISCORD)
/// >>> columns.timestamp_ms.tolist()
/// [1831235425343, 1462015105796]
/// >>> columns.sequence.format, columns.sequence.tolist()
/// ('H', [4095, 7])
/// >>> snowmint.decode_many(ids, int64=True).sequence.format
/// 'q'
/// >>> out = [array("q", [0, 0]), array("B", [0, 0]), array("B", [0, 0]), array("H", [0, 0])]
/// >>> _ = snowmint.decode_many(ids, out=out)
/// >>> out[1].tolist(), out[3].tolist()
/// ([7, 1], [4095, 7])
/// >>> snowmint.decode_many([1, -1])
/// Traceback (most recent call last):
///     ...
/// snowmint.errors.OutOfRangeError: ID -1 is out of range (0..=9223372036854775807) (at index 1)
#[pyfunction]
#[pyo3(signature = (ids, layout = PyLayout(Layout::TWITTER), *, int64 = false, out = None))]
fn decode_many(
    py: Python<'_>,
    ids: &Bound<'_, PyAny>,
    layout: PyLayout,
    int64: bool,
    out: Option<&Bound<'_, PyAny>>,
) -> PyResult<columns::Columns> {
    columns::decode_many_with(py, &layout.0, ids, int64, out)
}

/// The compiled part of the `snowmint` package; import `snowmint` instead.
#[pymodule]
fn _snowmint(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLayout>()?;
    m.add_class::<layout::PyParts>()?;
    m.add_class::<columns::Columns>()?;
    m.add_class::<generator::PyGenerator>()?;
    m.add_class::<generator::PyManualClock>()?;
    m.add_function(wrap_pyfunction!(decode_many, m)?)?;
    m.add_function(wrap_pyfunction!(text::to_text, m)?)?;
    m.add_function(wrap_pyfunction!(text::from_text, m)?)?;
    m.add_function(wrap_pyfunction!(inspect::inspect, m)?)?;
    m.add_class::<inspect::PyToken>()?;
    m.add_class::<inspect::PyReading>()?;
    // Twitter's largest ID, the default layout's.
    m.add("MAX_ID", snowmint::Layout::TWITTER.max_id().as_u64())?;
    // The crate's version is the wheel's (maturin reads it from Cargo).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    fork::register(m)?;
    Ok(())
}
