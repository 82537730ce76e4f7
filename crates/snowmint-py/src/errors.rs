//! The core's errors as Python exceptions.
//!
//! The exception classes are written in Python (`python/snowmint/errors.py`),
//! where they get ordinary constructors, attributes and pickling; this module
//! looks them up and fills them from the core's [`Error`], whose message it
//! keeps as it is.

use std::time::Duration;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDelta, PyModule};
use snowmint::{Error, ErrorKind, Limit};

/// The module that defines the exception classes.
static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// Builds an instance of the exception class `name` of `snowmint.errors`.
pub(crate) fn raise<'py, A>(py: Python<'py>, name: &str, args: A) -> PyErr
where
    A: pyo3::call::PyCallArgs<'py>,
{
    let built = ERRORS
        .get_or_try_init(py, || {
            PyModule::import(py, "snowmint.errors").map(Bound::unbind)
        })
        .and_then(|module| module.bind(py).getattr(name))
        .and_then(|class| class.call1(args));
    match built {
        Ok(instance) => PyErr::from_value(instance),
        Err(error) => error,
    }
}

/// What the caller gave, when the core's error cannot hold it as it was
/// (a Python int beyond 64 bits, a `timedelta`, an ID text).
pub type Given<'a, 'py> = Option<&'a Bound<'py, PyAny>>;

/// Turns a core error into the matching Python exception, by its kind (one
/// arm per [`ErrorKind`], no wildcard: a new kind stops the build until it
/// is mapped here, as in every front end):
///
/// - a value outside its range: `OutOfRangeError` (`field`, `value`, `min`,
///   `max`); ID text that is out of range stays an `InvalidIdError`;
/// - ID text that does not read: `InvalidIdError` (the same attributes);
/// - any other value that cannot be taken (text, a name, a layout):
///   `InvalidValueError` (`min` and `max` are `None`);
/// - a time window whose start is after its end: `OutOfRangeError` on
///   `end`, its `min` the start;
/// - the clock behind the last timestamp used: `ClockBehindError`
///   (`last_ms`, `now_ms`);
/// - a tick's sequence used up (only from calls that never wait):
///   `SnowmintError`.
///
/// `given`, when set, is reported as the `value` instead of the core's copy.
pub fn to_py<'py>(py: Python<'py>, error: Error, given: Given<'_, 'py>) -> PyErr {
    let message = error.to_string();
    let built: PyResult<PyErr> = (|| {
        let int = |n: i128| -> PyResult<Bound<'py, PyAny>> { Ok(n.into_pyobject(py)?.into_any()) };
        let text = |s: &str| pyo3::types::PyString::new(py, s).into_any();
        // The value as Python would give it: an int when it reads as one.
        let number_or_text = |value: &str| match value.parse::<i128>() {
            Ok(n) => int(n),
            Err(_) => Ok(text(value)),
        };
        let limit = |limit: Option<Limit>| -> PyResult<Bound<'py, PyAny>> {
            match limit {
                None => Ok(py.None().into_bound(py)),
                Some(Limit::Integer(n)) => int(n),
                Some(Limit::Duration(d)) => Ok(timedelta(py, d)?.into_any()),
                Some(Limit::Id(id, _)) => int(i128::from(id.as_u64())),
            }
        };
        let field = error.subject().unwrap_or("value");
        let value = error.value().unwrap_or_default();
        let given_or = |fallback: Bound<'py, PyAny>| given.cloned().unwrap_or(fallback);
        let with = |class: &str, value: Bound<'py, PyAny>, min, max| {
            raise(py, class, (message.as_str(), field, value, min, max))
        };
        Ok(match error.kind() {
            ErrorKind::OutOfRange => {
                // ID text read in an encoding stays an ID text error; an int
                // (or an ID from a column) out of range is out of range.
                let id_text = error.invalid_id().is_some()
                    && given.is_some_and(|g| !g.is_instance_of::<pyo3::types::PyInt>());
                let class = if id_text {
                    "InvalidIdError"
                } else {
                    "OutOfRangeError"
                };
                let shown = if id_text {
                    text(&value)
                } else {
                    number_or_text(&value)?
                };
                with(
                    class,
                    given_or(shown),
                    limit(error.min())?,
                    limit(error.max())?,
                )
            }
            ErrorKind::InvalidText if error.invalid_id().is_some() => with(
                "InvalidIdError",
                given_or(text(&value)),
                limit(error.min())?,
                limit(error.max())?,
            ),
            ErrorKind::InvalidText
            | ErrorKind::UnknownName
            | ErrorKind::InvalidFields
            | ErrorKind::InvalidLayout => with(
                "InvalidValueError",
                given_or(text(&value)),
                py.None().into_bound(py),
                py.None().into_bound(py),
            ),
            // Said of the window's end, which may not come before its start.
            ErrorKind::EmptyWindow => raise(
                py,
                "OutOfRangeError",
                (
                    message.as_str(),
                    "end",
                    limit(error.max())?,
                    number_or_text(&value)?,
                    py.None(),
                ),
            ),
            ErrorKind::ClockBehind => {
                let (last_ms, now_ms) =
                    error.regression().map_or((0, 0), |r| (r.last_ms, r.now_ms));
                raise(py, "ClockBehindError", (message.as_str(), last_ms, now_ms))
            }
            ErrorKind::SequenceExhausted => raise(py, "SnowmintError", (message.as_str(),)),
        })
    })();
    built.unwrap_or_else(|error| error)
}

/// A `Duration` as a `datetime.timedelta`.
pub fn timedelta(py: Python<'_>, duration: Duration) -> PyResult<Bound<'_, PyDelta>> {
    let days = duration.as_secs() / 86_400;
    let seconds = duration.as_secs() % 86_400;
    PyDelta::new(
        py,
        i32::try_from(days).unwrap_or(i32::MAX),
        seconds as i32,
        duration.subsec_micros() as i32,
        true,
    )
}

/// A `Result` of the core, with its error raised as a Python exception.
pub trait OrRaise<T> {
    /// Raises the error, reporting `given` as its value when set.
    fn or_raise<'py>(self, py: Python<'py>, given: Given<'_, 'py>) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, Error> {
    #[inline]
    fn or_raise<'py>(self, py: Python<'py>, given: Given<'_, 'py>) -> PyResult<T> {
        self.map_err(|error| to_py(py, error, given))
    }
}

/// An `InvalidValueError` for a value the core has no error for (such as a
/// `datetime` without a time zone).
pub fn invalid_value(
    py: Python<'_>,
    message: &str,
    field: &str,
    value: &Bound<'_, PyAny>,
) -> PyErr {
    raise(
        py,
        "InvalidValueError",
        (message, field, value, py.None(), py.None()),
    )
}

/// Says where in a column the bad value was: appends "(at index N)" to the
/// message and sets the exception's `index` attribute.
pub fn at_index(py: Python<'_>, error: PyErr, index: usize) -> PyErr {
    let value = error.value(py);
    let rewritten: PyResult<()> = (|| {
        let message = format!("{} (at index {index})", value.str()?);
        value.setattr("args", (message,))?;
        value.setattr("index", index)
    })();
    rewritten.err().unwrap_or(error)
}
