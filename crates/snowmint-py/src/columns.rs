//! `decode_many`: a column of IDs decoded at once, into columns that NumPy
//! and pandas take without a copy.
//!
//! The input is read without a copy when it is a list (each int is read
//! once), and with one copy of its bytes (`memoryview.tobytes()`) when it
//! is a buffer: the stable ABI this package is built for (CPython 3.9 on)
//! has no safe way to borrow another object's buffer before 3.11.
//!
//! The output is one `bytearray` holding the four columns one after the
//! other, written in place, and each column is a `memoryview` of its part
//! cast to signed 64-bit integers (format `q`), which `numpy.asarray`,
//! `numpy.frombuffer` and `memoryview.tolist` read as they are.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyMemoryView, PySlice};
use snowmint::{Layout, SnowflakeId};

use crate::errors;
use crate::values;

/// The decoded columns of ``decode_many``: ``timestamp_ms``,
/// ``datacenter``, ``machine`` and ``sequence``, each a ``memoryview`` of
/// signed 64-bit integers (format ``"q"``), one item per ID, in order.
///
/// ``numpy.asarray(column)`` is an ``int64`` array over the same memory
/// (no copy), and writable; ``pandas.Series(numpy.asarray(column),
/// copy=False)`` and ``pandas.DataFrame(columns.to_dict(), copy=False)``
/// keep it so. Without NumPy, ``column.tolist()`` and ``column[i]`` work
/// as for any ``memoryview``.
///
/// >>> import snowmint
/// >>> columns = snowmint.decode_many([1724551110457221118, 1724551110457221119])
/// >>> len(columns)
/// 2
/// >>> columns.timestamp_ms.tolist()
/// [1700000000000, 1700000000000]
/// >>> columns.sequence.tolist()
/// [4094, 4095]
#[pyclass(module = "snowmint", name = "Columns", frozen)]
pub struct Columns {
    len: usize,
    timestamp_ms: Py<PyAny>,
    datacenter: Py<PyAny>,
    machine: Py<PyAny>,
    sequence: Py<PyAny>,
}

#[pymethods]
impl Columns {
    /// When each ID was made, in Unix milliseconds.
    #[getter]
    fn timestamp_ms(&self, py: Python<'_>) -> Py<PyAny> {
        self.timestamp_ms.clone_ref(py)
    }

    /// The datacenter of each ID.
    #[getter]
    fn datacenter(&self, py: Python<'_>) -> Py<PyAny> {
        self.datacenter.clone_ref(py)
    }

    /// The machine of each ID.
    #[getter]
    fn machine(&self, py: Python<'_>) -> Py<PyAny> {
        self.machine.clone_ref(py)
    }

    /// The sequence number of each ID.
    #[getter]
    fn sequence(&self, py: Python<'_>) -> Py<PyAny> {
        self.sequence.clone_ref(py)
    }

    /// The four columns by name, in the order of ``Parts``.
    ///
    /// >>> import snowmint
    /// >>> list(snowmint.decode_many([1724551110457221119]).to_dict())
    /// ['timestamp_ms', 'datacenter', 'machine', 'sequence']
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let dict = pyo3::types::PyDict::new(py);
        dict.set_item("timestamp_ms", &self.timestamp_ms)?;
        dict.set_item("datacenter", &self.datacenter)?;
        dict.set_item("machine", &self.machine)?;
        dict.set_item("sequence", &self.sequence)?;
        Ok(dict)
    }

    /// The number of IDs.
    fn __len__(&self) -> usize {
        self.len
    }

    fn __repr__(&self) -> String {
        format!("<snowmint.Columns of {} IDs>", self.len)
    }
}

/// Byte order of a buffer's integers.
#[derive(Clone, Copy)]
enum Order {
    Native,
    Little,
    Big,
}

/// The IDs to decode, as read from the argument.
enum Ids<'a> {
    /// Ints from a list or another iterable, already checked.
    Values(Vec<u64>),
    /// The bytes of a buffer of 64-bit integers.
    Raw {
        bytes: &'a [u8],
        order: Order,
        signed: bool,
    },
}

impl Ids<'_> {
    fn len(&self) -> usize {
        match self {
            Ids::Values(values) => values.len(),
            Ids::Raw { bytes, .. } => bytes.len() / 8,
        }
    }
}

/// Decodes `ids` in `layout` (see `snowmint.decode_many`).
pub fn decode_many(py: Python<'_>, layout: &Layout, ids: &Bound<'_, PyAny>) -> PyResult<Columns> {
    let buffer = read_buffer(ids)?;
    let input = match &buffer {
        Some((bytes, order, signed)) => Ids::Raw {
            bytes: bytes.as_bytes(py),
            order: *order,
            signed: *signed,
        },
        None => Ids::Values(read_ints(py, ids)?),
    };
    let len = input.len();
    let size = len
        .checked_mul(4 * 8)
        .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err("too many IDs"))?;
    let mut failure = None;
    let array = PyByteArray::new_with(py, size, |out| {
        // Nothing else can see the new array yet, and the input is a list's
        // copy or an immutable `bytes`: the interpreter can go on meanwhile.
        failure = py.detach(|| decode_into(layout, &input, out)).err();
        Ok(())
    })?;
    if let Some((index, raw)) = failure {
        let error = match input {
            Ids::Raw { signed: true, .. } => SnowflakeId::from_i64(raw as i64),
            _ => SnowflakeId::from_u64(raw),
        };
        let error = error.err().map(|error| errors::to_py(py, error, None));
        return Err(errors::at_index(
            py,
            error.unwrap_or_else(|| PyTypeError::new_err("invalid ID")),
            index,
        ));
    }
    let view = PyMemoryView::from(array.as_any())?;
    let column = |k: usize| -> PyResult<Py<PyAny>> {
        let part = PySlice::new(py, (k * len * 8) as isize, ((k + 1) * len * 8) as isize, 1);
        Ok(view.get_item(part)?.call_method1("cast", ("q",))?.unbind())
    };
    Ok(Columns {
        len,
        timestamp_ms: column(0)?,
        datacenter: column(1)?,
        machine: column(2)?,
        sequence: column(3)?,
    })
}

/// Writes the four columns of `input` into `out`, or says where the first
/// value that is not an ID is (its index, and its bits as read).
fn decode_into(layout: &Layout, input: &Ids<'_>, out: &mut [u8]) -> Result<(), (usize, u64)> {
    match input {
        Ids::Values(values) => decode_all(layout, values.iter().copied(), out),
        Ids::Raw { bytes, order, .. } => {
            let read = bytes.chunks_exact(8).map(|item| {
                let mut word = [0u8; 8];
                word.copy_from_slice(item);
                match order {
                    Order::Native => u64::from_ne_bytes(word),
                    Order::Little => u64::from_le_bytes(word),
                    Order::Big => u64::from_be_bytes(word),
                }
            });
            decode_all(layout, read, out)
        }
    }
}

/// Decodes each of `raws` into its place in the four columns of `out`.
#[inline]
fn decode_all(
    layout: &Layout,
    raws: impl ExactSizeIterator<Item = u64>,
    out: &mut [u8],
) -> Result<(), (usize, u64)> {
    let len = raws.len();
    let (timestamps, rest) = out.split_at_mut(len * 8);
    let (datacenters, rest) = rest.split_at_mut(len * 8);
    let (machines, sequences) = rest.split_at_mut(len * 8);
    let rows = timestamps
        .chunks_exact_mut(8)
        .zip(datacenters.chunks_exact_mut(8))
        .zip(machines.chunks_exact_mut(8))
        .zip(sequences.chunks_exact_mut(8));
    for (index, (raw, (((timestamp, datacenter), machine), sequence))) in raws.zip(rows).enumerate()
    {
        let id = SnowflakeId::from_u64_checked(raw).ok_or((index, raw))?;
        let parts = layout.decode(id);
        // Every field of an ID fits 62 bits, so each fits an i64.
        timestamp.copy_from_slice(&parts.timestamp_ms.to_ne_bytes());
        datacenter.copy_from_slice(&(parts.datacenter as i64).to_ne_bytes());
        machine.copy_from_slice(&(parts.machine as i64).to_ne_bytes());
        sequence.copy_from_slice(&(parts.sequence as i64).to_ne_bytes());
    }
    Ok(())
}

/// The bytes of `ids` if it has the buffer protocol, with their byte order
/// and whether they are signed; `None` if it has no buffer.
fn read_buffer<'py>(ids: &Bound<'py, PyAny>) -> PyResult<Option<(Py<PyBytes>, Order, bool)>> {
    if ids.is_instance_of::<PyList>() {
        return Ok(None);
    }
    let view = match PyMemoryView::from(ids) {
        Ok(view) => view,
        Err(error) if error.is_instance_of::<PyTypeError>(ids.py()) => return Ok(None),
        Err(error) => return Err(error),
    };
    let format: String = view.getattr("format")?.extract()?;
    let itemsize: usize = view.getattr("itemsize")?.extract()?;
    let ndim: usize = view.getattr("ndim")?.extract()?;
    let (order, code) = match format.as_bytes() {
        [b'<', code] => (Order::Little, *code),
        [b'>' | b'!', code] => (Order::Big, *code),
        [b'@' | b'=', code] | [code] => (Order::Native, *code),
        _ => (Order::Native, 0),
    };
    let signed = match code {
        b'q' | b'l' | b'n' => true,
        b'Q' | b'L' | b'N' => false,
        _ => return Err(not_ids(&format, itemsize)),
    };
    if itemsize != 8 {
        return Err(not_ids(&format, itemsize));
    }
    if ndim != 1 {
        return Err(PyTypeError::new_err(format!(
            "decode_many needs a one-dimensional column of IDs; this buffer has {ndim} dimensions"
        )));
    }
    let bytes = view.call_method0("tobytes")?.cast_into::<PyBytes>()?;
    Ok(Some((bytes.unbind(), order, signed)))
}

fn not_ids(format: &str, itemsize: usize) -> PyErr {
    PyTypeError::new_err(format!(
        "decode_many needs 64-bit integers (buffer format q, l, Q or L, as array('q') or a NumPy int64 or uint64 array); this buffer has format {format:?} of {itemsize} bytes (for raw bytes, pass memoryview(data).cast('q'))"
    ))
}

/// The ints of a list or any other iterable, each checked to be an ID.
fn read_ints(py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    let mut out = Vec::with_capacity(ids.len().unwrap_or(0));
    let mut read = |index: usize, item: Bound<'_, PyAny>| -> PyResult<()> {
        let id = values::id(py, &item).map_err(|error| errors::at_index(py, error, index))?;
        out.push(id.as_u64());
        Ok(())
    };
    if let Ok(list) = ids.cast::<PyList>() {
        for (index, item) in list.iter().enumerate() {
            read(index, item)?;
        }
    } else {
        let items = ids.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "decode_many needs a list or iterable of ints, or a buffer of 64-bit integers, not {}",
                ids.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            ))
        })?;
        for (index, item) in items.enumerate() {
            read(index, item?)?;
        }
    }
    Ok(out)
}
