//! `inspect`: the IDs of any text, each token with its readings ranked, as
//! `snowmint inspect` and `/v1/inspect` read them (the core's inspector).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use snowmint::inspect::{Catalog, FieldValue, Inspector, Reading, Token};
use snowmint::{Clock, Layout, SystemClock};

use crate::errors::OrRaise;
use crate::layout::PyLayout;
use crate::values;

/// Reads the IDs out of any text: links (x.com, discord.com and Discord's
/// CDN, Mastodon, bsky.app and ``at://``, Instagram, Misskey), Discord's
/// markup (mentions, emoji, ``</command:id>``, and ``<t:unix:style>``, a
/// time), integers (decimal, hex, base32, base58), ULID, UUID, MongoDB
/// ObjectId, KSUID, Bluesky TID, Misskey aid and aidx, TSID.
///
/// Returns a ``Token`` per ID-like token, in the order they appear, each
/// with its readings (``Reading``), most plausible first: pinned where the
/// place it was found names its family (a link's host, Discord's markup),
/// implausible where its time falls before its family began or more than
/// a day after ``now`` (an int of Unix milliseconds or an aware
/// ``datetime``; the clock's time by default). Integers are read as every
/// preset layout, or as ``layout`` alone. ``text`` is a ``str`` or
/// ``bytes`` of at most 1 MiB, with at most 10,000 tokens; past either
/// bound ``OutOfRangeError`` names it. The interpreter lock is let go
/// while the text is read.
///
/// >>> import snowmint
/// >>> tokens = snowmint.inspect("see <@175928847299117063>", now=1750000000000)
/// >>> token = tokens[0]
/// >>> token.input, token.context
/// ('175928847299117063', 'user mention')
/// >>> best = token.candidates[0]
/// >>> best.family, best.time, best.plausibility
/// ('discord', '2016-04-30T11:18:25.796Z', 'pinned')
/// >>> best.fields["worker"], best.fields["increment"]
/// (1, 7)
/// >>> bare = snowmint.inspect("1724551110457221119", now=1750000000000)[0]
/// >>> [r.family for r in bare.candidates if r.plausibility == "plausible"]
/// ['twitter', 'instagram', 'baidu', 'leaf']
/// >>> snowmint.inspect("01ARZ3NDEKTSV4RRFFQ69G5FAV")[0].to_dict()["candidates"][0]["time"]
/// '2016-07-30T23:54:10.259Z'
#[pyfunction]
#[pyo3(signature = (text, *, now = None, layout = None))]
pub fn inspect(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    now: Option<&Bound<'_, PyAny>>,
    layout: Option<PyLayout>,
) -> PyResult<Vec<PyToken>> {
    let bytes: Vec<u8> = if let Ok(text) = text.cast::<PyString>() {
        text.to_cow()?.as_bytes().to_vec()
    } else if let Ok(bytes) = text.cast::<PyBytes>() {
        bytes.as_bytes().to_vec()
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "text must be str or bytes, not {}",
            text.get_type().name()?
        )));
    };
    let now_ms = match now {
        Some(value) => values::instant(py, &Layout::TWITTER, value)?,
        None => SystemClock.now_ms(),
    };
    let catalog = match layout {
        Some(PyLayout(layout)) => {
            Catalog::from_layouts([(layout.name().unwrap_or("custom"), layout)])
        }
        None => Catalog::presets(),
    };
    let inspector = Inspector::with_catalog(catalog, now_ms);
    let tokens = py
        .detach(|| inspector.inspect_all(&bytes))
        .or_raise(py, None)?;
    Ok(tokens.into_iter().map(PyToken).collect())
}

/// An ID-like token of a text, and its readings, most plausible first.
#[pyclass(name = "Token", module = "snowmint", frozen)]
pub struct PyToken(Token);

#[pymethods]
impl PyToken {
    /// The token as it appears in the text.
    #[getter]
    fn input(&self) -> &str {
        self.0.input()
    }

    /// Where it was found, when that says what it is (``"user mention"``,
    /// ``"message in a Discord link"``), else ``None``.
    #[getter]
    fn context(&self) -> Option<&'static str> {
        self.0.context()
    }

    /// Where it starts in the text, in bytes of its UTF-8.
    #[getter]
    fn start(&self) -> usize {
        self.0.span().start
    }

    /// Where it ends in the text (exclusive), in bytes of its UTF-8.
    #[getter]
    fn end(&self) -> usize {
        self.0.span().end
    }

    /// Its readings, most plausible first.
    #[getter]
    fn candidates(&self) -> Vec<PyReading> {
        self.0.candidates().iter().cloned().map(PyReading).collect()
    }

    /// The token as the HTTP API and ``snowmint inspect --format json``
    /// write it: ``input``, ``context``, ``start``, ``end`` and
    /// ``candidates``, each a dict with ``family``, ``time``, its fields,
    /// ``plausibility`` and ``why``.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("input", self.0.input())?;
        dict.set_item("context", self.0.context())?;
        dict.set_item("start", self.0.span().start)?;
        dict.set_item("end", self.0.span().end)?;
        let candidates = PyList::empty(py);
        for reading in self.0.candidates() {
            candidates.append(reading_dict(py, reading)?)?;
        }
        dict.set_item("candidates", candidates)?;
        Ok(dict)
    }

    fn __repr__(&self) -> String {
        let best = self
            .0
            .best()
            .map_or_else(String::new, |r| format!(", best={:?}", r.family()));
        format!(
            "Token(input={:?}, context={:?}, candidates={}{best})",
            self.0.input(),
            self.0.context(),
            self.0.candidates().len()
        )
    }
}

/// One reading of a token: a family, its time and fields, how plausible it
/// is and why.
#[pyclass(name = "Reading", module = "snowmint", frozen)]
pub struct PyReading(Reading);

#[pymethods]
impl PyReading {
    /// The family: a preset layout's name (``"twitter"``, ``"discord"``), a
    /// string family (``"ulid"``, ``"uuid-v7"``, ``"objectid"``,
    /// ``"ksuid"``, ``"tid"``, ``"misskey-aid"``, ``"misskey-aidx"``,
    /// ``"tsid"``), or ``"discord-timestamp"``.
    #[getter]
    fn family(&self) -> &str {
        self.0.family()
    }

    /// When the ID was made, as RFC 3339 in UTC at the family's precision;
    /// ``None`` for an ID that holds no time (a random UUID).
    #[getter]
    fn time(&self) -> Option<String> {
        self.0.time().map(|time| time.to_string())
    }

    /// The same instant in nanoseconds since the Unix epoch (exact), or
    /// ``None``.
    #[getter]
    fn unix_ns(&self) -> Option<i128> {
        self.0.time().map(|time| time.unix_ns())
    }

    /// The same instant as an aware ``datetime`` in UTC, cut to the
    /// millisecond; ``None`` without a time. Raises ``OverflowError`` past
    /// the year 9999.
    #[getter]
    fn datetime<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.0
            .time()
            .map(|time| values::datetime(py, time.unix_ms()))
            .transpose()
    }

    /// The family's fields by name: ints below 2^53, the rest (IDs in
    /// decimal, random bits in hex) as ``str``.
    #[getter]
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for field in self.0.fields() {
            set_field(&dict, &field.name, &field.value)?;
        }
        Ok(dict)
    }

    /// ``"pinned"``, ``"plausible"`` or ``"implausible"``.
    #[getter]
    fn plausibility(&self) -> &'static str {
        self.0.plausibility().name()
    }

    /// Why it ranks where it does, for people.
    #[getter]
    fn why(&self) -> &str {
        self.0.why()
    }

    /// The reading as the HTTP API writes it: ``family``, ``time``, the
    /// fields, ``plausibility`` and ``why`` in one dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        reading_dict(py, &self.0)
    }

    fn __repr__(&self) -> String {
        format!(
            "Reading(family={:?}, time={:?}, plausibility={:?})",
            self.0.family(),
            self.0.time().map(|t| t.to_string()),
            self.0.plausibility().name()
        )
    }
}

fn set_field(dict: &Bound<'_, PyDict>, name: &str, value: &FieldValue) -> PyResult<()> {
    match value {
        FieldValue::Number(n) => dict.set_item(name, n),
        FieldValue::Text(text) => dict.set_item(name, text),
    }
}

fn reading_dict<'py>(py: Python<'py>, reading: &Reading) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("family", reading.family())?;
    dict.set_item("time", reading.time().map(|t| t.to_string()))?;
    for field in reading.fields() {
        set_field(&dict, &field.name, &field.value)?;
    }
    dict.set_item("plausibility", reading.plausibility().name())?;
    dict.set_item("why", reading.why())?;
    Ok(dict)
}
