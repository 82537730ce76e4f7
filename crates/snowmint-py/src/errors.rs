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
use snowmint::{Error, InvalidIdKind, SnowflakeId};

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

/// The largest ID, 2^63 - 1.
const MAX_ID: u64 = SnowflakeId::MAX.as_u64();

/// Turns a core error into the matching Python exception:
///
/// - a value outside its range: `OutOfRangeError` (`field`, `value`, `min`,
///   `max`);
/// - ID text that does not read: `InvalidIdError` (the same attributes);
/// - any other value that cannot be taken: `InvalidValueError` (`min` and
///   `max` are `None`);
/// - the clock behind the last timestamp used: `ClockBehindError`
///   (`last_ms`, `now_ms`).
///
/// `given`, when set, is reported as the `value` instead of the core's copy.
pub fn to_py<'py>(py: Python<'py>, error: Error, given: Given<'_, 'py>) -> PyErr {
    let message = error.to_string();
    let value = |fallback: Bound<'py, PyAny>| given.cloned().unwrap_or(fallback);
    let int = |n: i128| n.into_pyobject(py).map(Bound::into_any);
    let text = |s: &str| pyo3::types::PyString::new(py, s).into_any();
    let out_of_range = |field: &str, fallback, min, max| {
        raise(
            py,
            "OutOfRangeError",
            (message.as_str(), field, value(fallback), min, max),
        )
    };
    let built: PyResult<PyErr> = (|| {
        Ok(match &error {
            Error::FieldOutOfRange { field, value, max } => out_of_range(
                field.name(),
                int(i128::from(*value))?,
                int(0)?,
                int(i128::from(*max))?,
            ),
            Error::TimestampBeforeEpoch {
                timestamp_ms,
                epoch_ms,
                last_ms,
            }
            | Error::TimestampPastEnd {
                timestamp_ms,
                epoch_ms,
                last_ms,
            } => out_of_range(
                "timestamp",
                int(i128::from(*timestamp_ms))?,
                int(i128::from(*epoch_ms))?,
                int(i128::from(*last_ms))?,
            ),
            Error::InvalidId { input, kind, .. } => {
                let range = (int(0)?, int(i128::from(MAX_ID))?);
                let is_int = given.is_some_and(|g| g.is_instance_of::<pyo3::types::PyInt>());
                if *kind == InvalidIdKind::OutOfRange && (is_int || given.is_none()) {
                    let fallback = match input.parse::<i128>() {
                        Ok(n) => int(n)?,
                        Err(_) => text(input),
                    };
                    out_of_range("id", fallback, range.0, range.1)
                } else {
                    raise(
                        py,
                        "InvalidIdError",
                        (message.as_str(), "id", value(text(input)), range.0, range.1),
                    )
                }
            }
            Error::NumberOutOfRange {
                name,
                input,
                min,
                max,
            } => {
                let fallback = match input.parse::<i128>() {
                    Ok(n) => int(n)?,
                    Err(_) => text(input),
                };
                out_of_range(name, fallback, int(*min)?, int(*max)?)
            }
            Error::DurationOutOfRange {
                name,
                input,
                min,
                max,
            } => out_of_range(
                name,
                text(input),
                timedelta(py, *min)?.into_any(),
                timedelta(py, *max)?.into_any(),
            ),
            Error::EmptyWindow { from_ms, to_ms } => out_of_range(
                "end",
                int(i128::from(*to_ms))?,
                int(i128::from(*from_ms))?,
                py.None().into_bound(py),
            ),
            Error::ClockBehind { last_ms, now_ms } => raise(
                py,
                "ClockBehindError",
                (message.as_str(), *last_ms, *now_ms),
            ),
            other => {
                let (field, input): (&str, &str) = match other {
                    Error::InvalidDuration { name, input } => (name, input),
                    Error::InvalidTime { name, input, .. } => (name, input),
                    Error::UnknownClockPolicy { name } => ("policy", name),
                    Error::UnknownEncoding { name } => ("encoding", name),
                    Error::UnknownLayout { name } => ("layout", name),
                    Error::InvalidLayout { .. } => ("layout", ""),
                    _ => return Ok(raise(py, "SnowmintError", (message.as_str(),))),
                };
                raise(
                    py,
                    "InvalidValueError",
                    (
                        message.as_str(),
                        field,
                        value(text(input)),
                        py.None(),
                        py.None(),
                    ),
                )
            }
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
