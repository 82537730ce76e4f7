//! `decode_many`: a column of IDs decoded at once, into columns that NumPy
//! and pandas take without a copy.
//!
//! The IDs are read and decoded in steps of [`STEP`], from a list item by
//! item, from a buffer a slice of its bytes at a time. The output is one
//! block of memory holding the four columns one after the other (widest
//! first, so that each column is aligned to its item size): a NumPy
//! `uint8` array when the program has imported NumPy (huge pages: see
//! [`numpy_bytes`]), else a `bytearray`. Each column is a `memoryview` of its part cast to its format, which
//! `numpy.asarray`, `numpy.frombuffer` and `memoryview.tolist` read as they
//! are; or, with `out=`, the caller's own buffers.
//!
//! # Column widths
//!
//! By default each column has the smallest type its field fits: the
//! timestamp is `int64` (`q`); a field of up to 8 bits `uint8` (`B`), 16
//! bits `uint16` (`H`), 32 bits `uint32` (`I`). In the Twitter layout that
//! is 12 bytes per ID instead of 32: most of the time of a wide decode
//! went to filling fresh memory, not to decoding. `int64=True` gives four
//! `int64` columns, as before.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyMemoryView, PySlice};
use snowmint::Layout;

use crate::errors;
use crate::fields::Extract;
use crate::values;

/// The decoded columns of ``decode_many``: ``timestamp_ms``,
/// ``datacenter``, ``machine`` and ``sequence``, each a ``memoryview``,
/// one item per ID, in order. The timestamp is ``int64`` (format ``"q"``);
/// the other fields have the smallest unsigned type they fit (``uint8``
/// ``"B"`` for the Twitter layout's datacenter and machine, ``uint16``
/// ``"H"`` for its sequence), or ``int64`` with ``int64=True``; with
/// ``out=``, they are views of the caller's buffers.
///
/// ``numpy.asarray(column)`` is an array over the same memory
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
    /// A list, read item by item (each checked against the layout).
    List(Bound<'py, PyList>, Layout),
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
    fn new(py: Python<'py>, layout: &Layout, ids: &Bound<'py, PyAny>) -> PyResult<Source<'py>> {
        if let Ok(list) = ids.cast::<PyList>() {
            return Ok(Source::List(list.clone(), *layout));
        }
        match read_buffer(ids)? {
            Some((view, order, signed)) => Ok(Source::Buffer {
                len: view.len()?,
                view,
                order,
                signed,
            }),
            None => read_ints(py, layout, ids).map(Source::Values),
        }
    }

    fn len(&self) -> usize {
        match self {
            Source::List(list, _) => list.len(),
            Source::Values(values) => values.len(),
            Source::Buffer { len, .. } => *len,
        }
    }

    /// Calls `decode(start, count, input)` for each step of [`STEP`] IDs,
    /// in order, until one fails.
    fn steps(
        &self,
        py: Python<'py>,
        mut decode: impl FnMut(usize, usize, Input<'_>) -> PyResult<()>,
    ) -> PyResult<()> {
        let len = self.len();
        let mut raw = Vec::with_capacity(len.min(STEP));
        let mut start = 0;
        while start < len {
            let count = STEP.min(len - start);
            let bytes = self.read(py, start, count, &mut raw)?;
            let input = match &bytes {
                Some(bytes) => Input::Bytes(bytes.as_bytes()),
                None => Input::Words(&raw),
            };
            decode(start, count, input)?;
            start += count;
        }
        Ok(())
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
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        raw.clear();
        match self {
            Source::List(list, layout) => {
                for index in start..start + count {
                    let item = list.get_item(index)?;
                    let id = values::id(py, layout, &item)
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
                let bytes = bytes.cast_into::<PyBytes>()?;
                if let Order::Native = order {
                    // Decoded from the bytes as they are: no second pass.
                    return Ok(Some(bytes));
                }
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
        Ok(None)
    }

    /// The error for the bits `raw` found at `index`, which are no ID of
    /// `layout`.
    fn not_an_id(&self, py: Python<'_>, layout: &Layout, index: usize, raw: u64) -> PyErr {
        // The message the value's decimal text gets, with the layout's
        // range.
        let text = match self {
            Source::Buffer { signed: true, .. } => (raw as i64).to_string(),
            _ => raw.to_string(),
        };
        let error = layout.parse_id(snowmint::Encoding::Decimal, &text);
        let error = match error {
            Err(error) => errors::to_py(py, error, None),
            Ok(_) => PyTypeError::new_err("invalid ID"),
        };
        errors::at_index(py, error, index)
    }
}

/// The item size and buffer format of one output column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Width {
    bytes: usize,
    format: &'static str,
}

const INT64: Width = Width {
    bytes: 8,
    format: "q",
};

impl Width {
    /// The smallest unsigned type that holds `bits` bits.
    fn narrowest(bits: u8) -> Width {
        match bits {
            0..=8 => Width {
                bytes: 1,
                format: "B",
            },
            9..=16 => Width {
                bytes: 2,
                format: "H",
            },
            17..=32 => Width {
                bytes: 4,
                format: "I",
            },
            _ => Width {
                bytes: 8,
                format: "Q",
            },
        }
    }

    /// The width of a caller's buffer format, if it is an integer type
    /// that holds every value of `bits` bits.
    fn of_format(format: &str, itemsize: usize, bits: u8) -> Option<Width> {
        let code = format.trim_start_matches(['@', '=']);
        let (signed, format) = match code {
            "b" => (true, "b"),
            "B" => (false, "B"),
            "h" => (true, "h"),
            "H" => (false, "H"),
            "i" => (true, "i"),
            "I" => (false, "I"),
            "l" => (true, "l"),
            "L" => (false, "L"),
            "q" => (true, "q"),
            "Q" => (false, "Q"),
            "n" => (true, "n"),
            "N" => (false, "N"),
            _ => return None,
        };
        let usable = itemsize * 8 - usize::from(signed);
        (matches!(itemsize, 1 | 2 | 4 | 8) && usize::from(bits) <= usable).then_some(Width {
            bytes: itemsize,
            format,
        })
    }
}

/// The widths of the four columns, in the order of `Parts`.
type Widths = [Width; 4];

/// How `decode_many` writes its columns.
pub enum Output<'py> {
    /// New columns, narrow or all `int64`.
    New { int64: bool },
    /// Into the caller's four buffers, in the order of `Parts`.
    Into([Bound<'py, PyMemoryView>; 4]),
}

/// The names of the columns, in the order of `Parts`.
const NAMES: [&str; 4] = ["timestamp_ms", "datacenter", "machine", "sequence"];

/// Reads `out=`: four writable, one-dimensional, C-contiguous integer
/// buffers of at least `len` items, each of a type that holds its field,
/// given as a sequence in the order of `Parts` or as a mapping by name.
pub fn read_out<'py>(
    layout: &Layout,
    out: &Bound<'py, PyAny>,
) -> PyResult<[Bound<'py, PyMemoryView>; 4]> {
    let item = |k: usize| -> PyResult<Bound<'py, PyAny>> {
        if out.cast::<pyo3::types::PyDict>().is_ok() {
            out.get_item(NAMES[k])
                .map_err(|_| PyTypeError::new_err(format!("out has no {:?} buffer", NAMES[k])))
        } else {
            out.get_item(k).map_err(|_| {
                PyTypeError::new_err(
                    "out must hold four buffers (timestamp_ms, datacenter, machine, sequence), as a sequence or a dict",
                )
            })
        }
    };
    let bits = field_bits(layout);
    let mut views = Vec::with_capacity(4);
    for (k, bits) in bits.into_iter().enumerate() {
        let buffer = item(k)?;
        let view = PyMemoryView::from(&buffer).map_err(|_| {
            PyTypeError::new_err(format!(
                "out[{:?}] has no buffer: give an array('q'), a NumPy array or a bytearray cast with memoryview(...).cast(...)",
                NAMES[k]
            ))
        })?;
        let readonly: bool = view.getattr("readonly")?.extract()?;
        let ndim: usize = view.getattr("ndim")?.extract()?;
        let contiguous: bool = view.getattr("c_contiguous")?.extract()?;
        let format: String = view.getattr("format")?.extract()?;
        let itemsize: usize = view.getattr("itemsize")?.extract()?;
        if readonly || ndim != 1 || !contiguous {
            return Err(PyTypeError::new_err(format!(
                "out[{:?}] must be a writable, one-dimensional, contiguous buffer",
                NAMES[k]
            )));
        }
        if Width::of_format(&format, itemsize, bits).is_none() {
            return Err(PyTypeError::new_err(format!(
                "out[{:?}] has items of format {format:?} ({itemsize} bytes), which cannot hold every {}-bit value of the field: use int64 ('q') or an unsigned type at least that wide",
                NAMES[k], bits
            )));
        }
        views.push(view);
    }
    let [a, b, c, d]: [Bound<'py, PyMemoryView>; 4] = views
        .try_into()
        .unwrap_or_else(|_| unreachable!("four views"));
    Ok([a, b, c, d])
}

/// The bits of each column, in the order of `Parts`; the timestamp is
/// written as a signed 64-bit Unix millisecond count, so it counts as 63.
fn field_bits(layout: &Layout) -> [u8; 4] {
    Extract::widths(layout)
}

/// `decode_many` as Python calls it: new columns, narrow or `int64`, or
/// the caller's `out` buffers.
pub fn decode_many_with(
    py: Python<'_>,
    layout: &Layout,
    ids: &Bound<'_, PyAny>,
    int64: bool,
    out: Option<&Bound<'_, PyAny>>,
) -> PyResult<Columns> {
    let output = match out {
        Some(_) if int64 => {
            return Err(PyTypeError::new_err(
                "give int64=True or out=, not both: with out=, the buffers' types decide",
            ));
        }
        Some(out) => Output::Into(read_out(layout, out)?),
        None => Output::New { int64 },
    };
    decode_many(py, layout, ids, output)
}

/// Decodes `ids` in `layout` (see `snowmint.decode_many`).
///
/// New columns go one after the other into one new block of memory. A
/// step at a time, the IDs are read (with the interpreter lock) and
/// decoded (without it) into memory no other thread sees yet: the block
/// itself when it is a new `bytearray`, or a new `bytes` of the step's
/// items, copied into the columns by slice assignment, when the block is
/// NumPy's or the caller's (`out=`), which this stable-ABI build cannot
/// borrow as Rust memory.
pub fn decode_many(
    py: Python<'_>,
    layout: &Layout,
    ids: &Bound<'_, PyAny>,
    output: Output<'_>,
) -> PyResult<Columns> {
    let source = Source::new(py, layout, ids)?;
    let len = source.len();
    match output {
        Output::New { int64 } => {
            let widths: Widths = if int64 {
                [INT64; 4]
            } else {
                let [_, d, m, s] = field_bits(layout);
                [
                    INT64,
                    Width::narrowest(d),
                    Width::narrowest(m),
                    Width::narrowest(s),
                ]
            };
            decode_new(py, layout, &source, len, widths)
        }
        Output::Into(views) => decode_into(py, layout, &source, len, views),
    }
}

fn decode_new(
    py: Python<'_>,
    layout: &Layout,
    source: &Source<'_>,
    len: usize,
    widths: Widths,
) -> PyResult<Columns> {
    let row: usize = widths.iter().map(|w| w.bytes).sum();
    let size = len
        .checked_mul(row)
        .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err("too many IDs"))?;
    // Widest first, so that every column starts aligned to its items.
    let mut order = [0usize, 1, 2, 3];
    order.sort_by_key(|&k| std::cmp::Reverse(widths[k].bytes));
    let mut offsets = [0usize; 4];
    let mut at = 0;
    for &k in &order {
        offsets[k] = at;
        at += len * widths[k].bytes;
    }
    let view = match numpy_bytes(py, size)? {
        Some(memory) => {
            let view = PyMemoryView::from(&memory)?;
            let target = |k: usize| Target {
                view: view.clone(),
                offset: offsets[k],
            };
            decode_steps(
                py,
                layout,
                source,
                widths,
                [target(0), target(1), target(2), target(3)],
            )?;
            view
        }
        None => {
            let memory = PyByteArray::new_with(py, size, |out| {
                source.steps(py, |start, count, input| {
                    let columns = split_columns(out, &offsets, &widths, start, count);
                    py.detach(|| decode_all(layout, input, columns, widths))
                        .map_err(|(index, bits)| source.not_an_id(py, layout, start + index, bits))
                })
            })?;
            PyMemoryView::from(memory.as_any())?
        }
    };
    let column = |k: usize| -> PyResult<Py<PyAny>> {
        let end = offsets[k] + len * widths[k].bytes;
        let part = PySlice::new(py, offsets[k] as isize, end as isize, 1);
        Ok(view
            .get_item(part)?
            .call_method1("cast", (widths[k].format,))?
            .unbind())
    };
    Ok(Columns {
        len,
        timestamp_ms: column(0)?,
        datacenter: column(1)?,
        machine: column(2)?,
        sequence: column(3)?,
    })
}

/// `size` bytes of new memory from NumPy, if the program has imported it
/// (it is never imported here): a `uint8` array, uninitialised.
///
/// Most of the time of a large decode is the kernel handing out fresh
/// memory, a page fault per 4 KiB page. NumPy asks the kernel for
/// transparent huge pages for its large arrays, which takes 512 times
/// fewer faults; a `bytearray` cannot ask, and this build cannot ask
/// without `unsafe`. With NumPy loaded, a caller of `decode_many` most
/// likely hands the columns to it anyway.
fn numpy_bytes<'py>(py: Python<'py>, size: usize) -> PyResult<Option<Bound<'py, PyAny>>> {
    let modules = py.import("sys")?.getattr("modules")?;
    // `sys.modules["numpy"] = None` is how a program blocks the import.
    let Some(numpy) = modules.get_item("numpy").ok().filter(|m| !m.is_none()) else {
        return Ok(None);
    };
    let Ok(empty) = numpy.getattr("empty") else {
        return Ok(None);
    };
    Ok(Some(empty.call1((size, "uint8"))?))
}

/// The parts of the four columns, laid out at `offsets` in `out`, that
/// hold the items `start..start + count`.
fn split_columns<'a>(
    out: &'a mut [u8],
    offsets: &[usize; 4],
    widths: &Widths,
    start: usize,
    count: usize,
) -> [&'a mut [u8]; 4] {
    // The columns do not overlap: take them apart in memory order.
    let mut order = [0usize, 1, 2, 3];
    order.sort_by_key(|&k| offsets[k]);
    let mut parts: [&'a mut [u8]; 4] = Default::default();
    let mut rest = out;
    let mut consumed = 0;
    for &k in &order {
        let from = offsets[k] + start * widths[k].bytes - consumed;
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(from);
        let (part, tail) = tail.split_at_mut(count * widths[k].bytes);
        parts[k] = part;
        rest = tail;
        consumed = offsets[k] + (start + count) * widths[k].bytes;
    }
    parts
}

/// Where one column goes: a byte view (format `B`) of memory this module
/// can only write by slice assignment, and the column's first byte in it.
struct Target<'py> {
    view: Bound<'py, PyMemoryView>,
    offset: usize,
}

fn decode_into(
    py: Python<'_>,
    layout: &Layout,
    source: &Source<'_>,
    len: usize,
    views: [Bound<'_, PyMemoryView>; 4],
) -> PyResult<Columns> {
    let bits = field_bits(layout);
    let mut widths = [INT64; 4];
    for (k, view) in views.iter().enumerate() {
        let format: String = view.getattr("format")?.extract()?;
        let itemsize: usize = view.getattr("itemsize")?.extract()?;
        widths[k] = Width::of_format(&format, itemsize, bits[k])
            .ok_or_else(|| PyTypeError::new_err("out buffer of a type too narrow"))?;
        let have = view.len()?;
        if have < len {
            return Err(PyTypeError::new_err(format!(
                "out[{:?}] holds {have} items; {len} IDs need {len}",
                NAMES[k]
            )));
        }
    }
    // `read_out` took contiguous buffers only, which cast to bytes.
    let target = |k: usize| -> PyResult<Target<'_>> {
        Ok(Target {
            view: views[k].call_method1("cast", ("B",))?.cast_into()?,
            offset: 0,
        })
    };
    decode_steps(
        py,
        layout,
        source,
        widths,
        [target(0)?, target(1)?, target(2)?, target(3)?],
    )?;
    let column = |k: usize| -> PyResult<Py<PyAny>> {
        let part = PySlice::new(py, 0, len as isize, 1);
        Ok(views[k].get_item(part)?.unbind())
    };
    Ok(Columns {
        len,
        timestamp_ms: column(0)?,
        datacenter: column(1)?,
        machine: column(2)?,
        sequence: column(3)?,
    })
}

/// Decodes the IDs of `source` a step at a time into a new `bytes` of the
/// step's four column parts, and copies each part into its `targets`.
fn decode_steps(
    py: Python<'_>,
    layout: &Layout,
    source: &Source<'_>,
    widths: Widths,
    targets: [Target<'_>; 4],
) -> PyResult<()> {
    let row: usize = widths.iter().map(|w| w.bytes).sum();
    source.steps(py, |start, count, input| {
        let mut offsets = [0usize; 4];
        let mut at = 0;
        for k in 0..4 {
            offsets[k] = at;
            at += count * widths[k].bytes;
        }
        let mut failed = None;
        let step = PyBytes::new_with(py, count * row, |out| {
            let columns = split_columns(out, &offsets, &widths, 0, count);
            // The new `bytes` is not seen by any other thread yet.
            failed = py
                .detach(|| decode_all(layout, input, columns, widths))
                .err();
            Ok(())
        })?;
        if let Some((index, bits)) = failed {
            return Err(source.not_an_id(py, layout, start + index, bits));
        }
        let step = PyMemoryView::from(step.as_any())?;
        for (k, target) in targets.iter().enumerate() {
            let size = count * widths[k].bytes;
            let from = PySlice::new(py, offsets[k] as isize, (offsets[k] + size) as isize, 1);
            let to = target.offset + start * widths[k].bytes;
            let to = PySlice::new(py, to as isize, (to + size) as isize, 1);
            target.view.set_item(to, step.get_item(from)?)?;
        }
        Ok(())
    })
}

/// One step's IDs: words read and converted, or the native-order bytes of
/// a buffer, decoded as they are.
#[derive(Clone, Copy)]
enum Input<'a> {
    Words(&'a [u64]),
    Bytes(&'a [u8]),
}

impl Input<'_> {
    fn words(self) -> impl Iterator<Item = u64> {
        let (words, bytes) = match self {
            Input::Words(words) => (words, &[][..]),
            Input::Bytes(bytes) => (&[][..], bytes),
        };
        words.iter().copied().chain(
            bytes
                .chunks_exact(8)
                .map(|item| u64::from_ne_bytes(item.try_into().unwrap_or_default())),
        )
    }
}

/// Writes the low `W` bytes of `value` in native order into `out` at
/// item `index`.
#[inline(always)]
fn put<const W: usize>(out: &mut [u8], index: usize, value: u64) {
    let at = index * W;
    match W {
        1 => out[at] = value as u8,
        2 => out[at..at + 2].copy_from_slice(&(value as u16).to_ne_bytes()),
        4 => out[at..at + 4].copy_from_slice(&(value as u32).to_ne_bytes()),
        _ => out[at..at + 8].copy_from_slice(&value.to_ne_bytes()),
    }
}

/// Decodes each of `raws` into its place in the four columns `out`, or says
/// where the first value that is not an ID is (its index, and its bits as
/// read).
fn decode_all(
    layout: &Layout,
    input: Input<'_>,
    out: [&mut [u8]; 4],
    widths: Widths,
) -> Result<(), (usize, u64)> {
    let extract = Extract::new(layout);
    match ([widths[1].bytes, widths[2].bytes, widths[3].bytes], input) {
        // The Twitter and Discord layouts, narrow and wide, from a buffer
        // or converted words: the common cases get code of their own.
        ([1, 1, 2], Input::Bytes(_)) => decode_as::<1, 1, 2>(&extract, input.words(), out),
        ([1, 1, 2], Input::Words(words)) => {
            decode_as::<1, 1, 2>(&extract, words.iter().copied(), out)
        }
        ([8, 8, 8], _) => decode_as::<8, 8, 8>(&extract, input.words(), out),
        // The other families' narrow columns (Instagram's and TSID's
        // 1/2/2, Sonyflake's 1/2/1, Hazelcast's...): code of their own too,
        // so that no family decodes slower for its widths.
        ([1, 1, 1], _) => decode_as::<1, 1, 1>(&extract, input.words(), out),
        ([1, 2, 1], _) => decode_as::<1, 2, 1>(&extract, input.words(), out),
        ([1, 2, 2], _) => decode_as::<1, 2, 2>(&extract, input.words(), out),
        ([2, 1, 2], _) => decode_as::<2, 1, 2>(&extract, input.words(), out),
        ([1, 4, 2], _) => decode_as::<1, 4, 2>(&extract, input.words(), out),
        ([d, m, s], _) => {
            // Other layouts: one width check per item and field.
            let [timestamps, datacenters, machines, sequences] = out;
            for (index, raw) in input.words().enumerate() {
                let fields = extract.of(raw).ok_or((index, raw))?;
                put::<8>(timestamps, index, fields.timestamp_ms as u64);
                put_dyn(datacenters, d, index, fields.datacenter);
                put_dyn(machines, m, index, fields.machine);
                put_dyn(sequences, s, index, fields.sequence);
            }
            Ok(())
        }
    }
}

fn put_dyn(out: &mut [u8], width: usize, index: usize, value: u64) {
    match width {
        1 => put::<1>(out, index, value),
        2 => put::<2>(out, index, value),
        4 => put::<4>(out, index, value),
        _ => put::<8>(out, index, value),
    }
}

#[inline]
fn decode_as<const D: usize, const M: usize, const S: usize>(
    extract: &Extract,
    raws: impl Iterator<Item = u64>,
    out: [&mut [u8]; 4],
) -> Result<(), (usize, u64)> {
    let [timestamps, datacenters, machines, sequences] = out;
    for (index, raw) in raws.enumerate() {
        let fields = extract.of(raw).ok_or((index, raw))?;
        // Each value fits its column: the widths were chosen for them.
        put::<8>(timestamps, index, fields.timestamp_ms as u64);
        put::<D>(datacenters, index, fields.datacenter);
        put::<M>(machines, index, fields.machine);
        put::<S>(sequences, index, fields.sequence);
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
fn read_ints(py: Python<'_>, layout: &Layout, ids: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
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
        let id =
            values::id(py, layout, &item?).map_err(|error| errors::at_index(py, error, index))?;
        out.push(id.as_u64());
    }
    Ok(out)
}
