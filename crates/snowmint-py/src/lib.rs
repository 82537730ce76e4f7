//! The `snowmint` Python package: snowmint's layouts, encoding, decoding,
//! text encodings and generator, by the Rust core's own code.
//!
//! # Layout of the crate
//!
//! - `layout.rs`: `Layout` (encode, decode, `id_range`) and `Parts`.
//! - `columns.rs`: `decode_many` and the `Columns` it returns.
//! - `text.rs`: `to_text` and `from_text`.
//! - `generator.rs`: `Generator` and `ManualClock`.
//! - `values.rs`: reading Python arguments (ints, datetimes, durations)
//!   into the core's values.
//! - `errors.rs`: the core's errors as the Python exceptions of
//!   `python/snowmint/errors.py`.
//!
//! The Python side (`python/snowmint/`) re-exports all of it, defines the
//! exceptions and carries the type stubs.

use pyo3::prelude::*;
use snowmint::Layout;

mod columns;
mod errors;
mod generator;
mod layout;
mod text;
mod values;

use layout::PyLayout;

/// Decodes a column of IDs at once, in ``layout`` (Twitter's by default).
///
/// ``ids`` is a list (or any iterable) of ints, or any object with the
/// buffer protocol holding 64-bit integers: ``array('q')``, ``array('Q')``,
/// a NumPy ``int64``/``uint64`` array, an Arrow array's
/// ``to_numpy(zero_copy_only=True)``. Returns ``Columns``: one
/// ``memoryview`` of int64 per field, which NumPy and pandas take without
/// a copy. A value that is not an ID raises ``OutOfRangeError`` with its
/// ``index``. The interpreter lock is let go while the IDs are decoded.
///
/// >>> import snowmint
/// >>> from array import array
/// >>> ids = array("q", [1724551110457221119, 175928847299117063])
/// >>> columns = snowmint.decode_many(ids, snowmint.Layout.DISCORD)
/// >>> columns.timestamp_ms.tolist()
/// [1831235425343, 1462015105796]
/// >>> snowmint.decode_many([1, -1])
/// Traceback (most recent call last):
///     ...
/// snowmint.errors.OutOfRangeError: ID -1 is out of range (0..=9223372036854775807) (at index 1)
#[pyfunction]
#[pyo3(signature = (ids, layout = PyLayout(Layout::TWITTER)))]
fn decode_many(
    py: Python<'_>,
    ids: &Bound<'_, PyAny>,
    layout: PyLayout,
) -> PyResult<columns::Columns> {
    columns::decode_many(py, &layout.0, ids)
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
    m.add("MAX_ID", snowmint::SnowflakeId::MAX.as_u64())?;
    // The crate's version is the wheel's (maturin reads it from Cargo).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
