//! `decode_many`: a column of IDs decoded at once, into columns that NumPy
//! and pandas take without a copy.
//!
//! The IDs are read and decoded in steps of [`STEP`], from a list item by
//! item, from a buffer a slice of its bytes at a time. The output is one
//! block of memory holding the four columns one after the other, and each
//! column is a `memoryview` of its part cast to signed 64-bit integers
//! (format `q`), which `numpy.asarray`, `numpy.frombuffer` and
//! `memoryview.tolist` read as they are.

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
/// copy=False)`` and ``pandas.DataFrame({k: numpy.asarray(v) for k, v in
/// columns.to_dict().items()}, copy=False)`` keep it so. Without NumPy,
/// ``column.tolist()`` and ``column[i]`` work as for any ``memoryview``.
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

/// How many IDs are read and decoded at a time: small enough that a step's
/// input stays in cache and its memory is reused from one step to the
/// next, large enough that the per-step calls cost nothing.
const STEP: usize = 1 << 15;

/// Where the IDs come from.
enum Source<'py> {
    /// A list, read item by item.
    List(Bound<'py, PyList>),
    /// Ints from another iterable, read (and checked) up front.
    Values(Vec<u64>),
    /// A one-dimensional buffer of 64-bit integers.
    Buffer {
        view: Bound<'py, PyMemoryView>,
        len: usize,
        order: Order,
        signed: bool,
    },
}

impl<'py> Source<'py> {
    fn new(py: Python<'py>, ids: &Bound<'py, PyAny>) -> PyResult<Source<'py>> {
        if let Ok(list) = ids.cast::<PyList>() {
            return Ok(Source::List(list.clone()));
        }
        match read_buffer(ids)? {
            Some((view, order, signed)) => Ok(Source::Buffer {
                len: view.len()?,
                view,
                order,
                signed,
            }),
            None => read_ints(py, ids).map(Source::Values),
        }
    }

    fn len(&self) -> usize {
        match self {
            Source::List(list) => list.len(),
            Source::Values(values) => values.len(),
            Source::Buffer { len, .. } => *len,
        }
    }

    /// Puts the IDs `start..start + count` into `raw`, checking the ints
    /// of a list as it goes (the bits of a buffer are checked by
    /// [`decode_all`]).
    fn read(
        &self,
        py: Python<'py>,
        start: usize,
        count: usize,
        raw: &mut Vec<u64>,
    ) -> PyResult<()> {
        raw.clear();
        match self {
            Source::List(list) => {
                for index in start..start + count {
                    let item = list.get_item(index)?;
                    let id = values::id(py, &item)
                        .map_err(|error| errors::at_index(py, error, index))?;
                    raw.push(id.as_u64());
                }
            }
            Source::Values(values) => raw.extend_from_slice(&values[start..start + count]),
            Source::Buffer { view, order, .. } => {
                // The stable ABI this package is built for (CPython 3.9 on)
                // has no safe way to borrow another object's buffer before
                // 3.11: the step's bytes are copied out, then read.
                let part = PySlice::new(py, start as isize, (start + count) as isize, 1);
                let bytes = view.get_item(part)?.call_method0("tobytes")?;
                let bytes = bytes.cast::<PyBytes>()?;
                raw.extend(bytes.as_bytes().chunks_exact(8).map(|item| {
                    let mut word = [0u8; 8];
                    word.copy_from_slice(item);
                    match order {
                        Order::Native => u64::from_ne_bytes(word),
                        Order::Little => u64::from_le_bytes(word),
                        Order::Big => u64::from_be_bytes(word),
                    }
                }));
            }
        }
        Ok(())
    }

    /// The error for the bits `raw` found at `index`, which are no ID.
    fn not_an_id(&self, py: Python<'_>, index: usize, raw: u64) -> PyErr {
        let error = match self {
            Source::Buffer { signed: true, .. } => SnowflakeId::from_i64(raw as i64),
            _ => SnowflakeId::from_u64(raw),
        };
        let error = match error {
            Err(error) => errors::to_py(py, error, None),
            Ok(_) => PyTypeError::new_err("invalid ID"),
        };
        errors::at_index(py, error, index)
    }
}

/// Decodes `ids` in `layout` (see `snowmint.decode_many`).
///
/// The four columns go one after the other into one new `bytearray`,
/// written in place: a step at a time, the IDs are read (with the
/// interpreter lock) and decoded (without it: the array is not yet seen by
/// any other thread).
pub fn decode_many(py: Python<'_>, layout: &Layout, ids: &Bound<'_, PyAny>) -> PyResult<Columns> {
    let source = Source::new(py, ids)?;
    let len = source.len();
    let size = len
        .checked_mul(4 * 8)
        .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err("too many IDs"))?;
    let memory = PyByteArray::new_with(py, size, |out| {
        let (timestamps, rest) = out.split_at_mut(len * 8);
        let (datacenters, rest) = rest.split_at_mut(len * 8);
        let (machines, sequences) = rest.split_at_mut(len * 8);
        let columns = timestamps
            .chunks_mut(STEP * 8)
            .zip(datacenters.chunks_mut(STEP * 8))
            .zip(machines.chunks_mut(STEP * 8))
            .zip(sequences.chunks_mut(STEP * 8));
        let mut raw = Vec::with_capacity(len.min(STEP));
        for (step, (((timestamps, datacenters), machines), sequences)) in columns.enumerate() {
            let start = step * STEP;
            source.read(py, start, timestamps.len() / 8, &mut raw)?;
            let out = [timestamps, datacenters, machines, sequences];
            py.detach(|| decode_all(layout, &raw, out))
                .map_err(|(index, bits)| source.not_an_id(py, start + index, bits))?;
        }
        Ok(())
    })?;
    let view = PyMemoryView::from(memory.as_any())?;
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

/// Decodes each of `raws` into its place in the four columns `out`, or says
/// where the first value that is not an ID is (its index, and its bits as
/// read).
#[inline]
fn decode_all(layout: &Layout, raws: &[u64], out: [&mut [u8]; 4]) -> Result<(), (usize, u64)> {
    let [timestamps, datacenters, machines, sequences] = out;
    let rows = timestamps
        .chunks_exact_mut(8)
        .zip(datacenters.chunks_exact_mut(8))
        .zip(machines.chunks_exact_mut(8))
        .zip(sequences.chunks_exact_mut(8));
    for (index, (&raw, (((timestamp, datacenter), machine), sequence))) in
        raws.iter().zip(rows).enumerate()
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

/// A view of `ids` if it has the buffer protocol, with the byte order of its
/// integers and whether they are signed; `None` if it has no buffer.
fn read_buffer<'py>(
    ids: &Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyMemoryView>, Order, bool)>> {
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
    Ok(Some((view, order, signed)))
}

fn not_ids(format: &str, itemsize: usize) -> PyErr {
    PyTypeError::new_err(format!(
        "decode_many needs 64-bit integers (buffer format q, l, Q or L, as array('q') or a NumPy int64 or uint64 array); this buffer has format {format:?} of {itemsize} bytes (for raw bytes, pass memoryview(data).cast('q'))"
    ))
}

/// The ints of an iterable, each checked to be an ID.
fn read_ints(py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    let items = ids.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "decode_many needs a list or iterable of ints, or a buffer of 64-bit integers, not {}",
            ids.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let mut out = Vec::with_capacity(ids.len().unwrap_or(0));
    for (index, item) in items.enumerate() {
        let id = values::id(py, &item?).map_err(|error| errors::at_index(py, error, index))?;
        out.push(id.as_u64());
    }
    Ok(out)
}
