//! Reading Python arguments into the core's values, and back.
//!
//! Every check is the core's: an int that fits 64 bits goes to the core as
//! it is, which then says whether its field can hold it. An int that does
//! not fit (negative, or of any size) is handed to the core's reader of
//! whole numbers as its decimal text, so that the message is the one the
//! command line and the HTTP service give for the same value.

use std::time::Duration;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDateTime, PyDelta, PyInt, PyTzInfo};
use snowmint::{Encoding, Layout, SnowflakeId};

use crate::errors::{OrRaise, to_py};

/// An ID of `layout` from a Python int: 0 ..= its largest (2^63-1 for
/// Twitter's).
#[inline]
pub fn id(py: Python<'_>, layout: &Layout, value: &Bound<'_, PyAny>) -> PyResult<SnowflakeId> {
    match value.extract::<u64>() {
        Ok(raw) if raw <= layout.max_id().as_u64() => Ok(SnowflakeId::from_u64(raw)),
        Ok(_) => Err(id_out_of_range(py, layout, value)
            .unwrap_or_else(|| PyTypeError::new_err("an ID out of range"))),
        Err(error) => Err(id_out_of_range(py, layout, value).unwrap_or(error)),
    }
}

/// The core's error for an int outside the layout's IDs, if `value` is an
/// int: the one its decimal text gets, with the layout's range.
pub fn id_out_of_range(py: Python<'_>, layout: &Layout, value: &Bound<'_, PyAny>) -> Option<PyErr> {
    if !value.is_instance_of::<PyInt>() {
        return None;
    }
    let text = value.str().ok()?.to_string();
    let error = layout.parse_id(Encoding::Decimal, &text).err()?;
    Some(to_py(py, error, Some(value)))
}

/// A field's value (`datacenter`, `machine`, `sequence`) from a Python
/// int, which must be in `0..=max`; the layout checks it again when it
/// encodes.
#[inline]
pub fn field(
    py: Python<'_>,
    name: &'static str,
    max: u64,
    value: &Bound<'_, PyAny>,
) -> PyResult<u64> {
    value
        .extract::<u64>()
        .map_err(|error| number_out_of_range(py, value, max, name).unwrap_or(error))
}

/// A count, such as how many IDs to make, in `0..=max`.
pub fn count(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    name: &'static str,
    max: u64,
) -> PyResult<usize> {
    match value.extract::<u64>() {
        Ok(n) if n <= max => Ok(n as usize),
        Ok(_) => Err(number_out_of_range(py, value, max, name)
            .unwrap_or_else(|| PyTypeError::new_err(format!("{name} must be an int")))),
        Err(error) => Err(number_out_of_range(py, value, max, name).unwrap_or(error)),
    }
}

/// The core's error for an int outside `0..=max`, read as its text.
fn number_out_of_range(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    max: u64,
    name: &'static str,
) -> Option<PyErr> {
    if !value.is_instance_of::<PyInt>() {
        return None;
    }
    let text = value.str().ok()?.to_string();
    let error = snowmint::value::parse_bounded(name, &text, 0..=max).err()?;
    Some(to_py(py, error, Some(value)))
}

/// An instant, as Unix milliseconds, from an int (milliseconds) or an aware
/// `datetime`.
///
/// A `datetime` is written in RFC 3339 in UTC and read by the core's
/// [`snowmint::parse_time`], which cuts microseconds to the millisecond
/// towards the past, as the command line does with fractional seconds.
/// Whether the layout holds the instant is the layout's to say.
pub fn instant(py: Python<'_>, layout: &Layout, value: &Bound<'_, PyAny>) -> PyResult<i64> {
    if let Ok(ms) = value.extract::<i64>() {
        return Ok(ms);
    }
    if value.is_instance_of::<PyInt>() {
        // Beyond 64 bits: the core's reader says it is out of the layout's range.
        let text = value.str()?.to_string();
        let range = layout.epoch_ms()..=layout.last_instant_ms();
        return snowmint::value::parse_bounded_signed("timestamp", &text, range)
            .or_raise(py, Some(value));
    }
    if value.is_instance_of::<PyDateTime>() {
        if value.call_method0("utcoffset")?.is_none() {
            let message = format!(
                "timestamp {} has no time zone (expected Unix milliseconds or an aware datetime, such as one with tzinfo=timezone.utc)",
                value.str()?
            );
            return Err(crate::errors::invalid_value(
                py,
                &message,
                "timestamp",
                value,
            ));
        }
        let utc = PyTzInfo::utc(py)?;
        let text = value
            .call_method1("astimezone", (utc,))?
            .call_method0("isoformat")?
            .extract::<String>()?;
        return snowmint::parse_time(&text).or_raise(py, Some(value));
    }
    Err(PyTypeError::new_err(format!(
        "timestamp must be an int (Unix milliseconds) or an aware datetime, not {}",
        value.get_type().name()?
    )))
}

/// 1970-01-01T00:00:00Z as a `datetime`.
static UNIX_EPOCH: PyOnceLock<Py<PyDateTime>> = PyOnceLock::new();

/// Unix milliseconds as an aware `datetime` in UTC (Python's `datetime`
/// reaches the year 9999; later instants raise `OverflowError`).
pub fn datetime(py: Python<'_>, unix_ms: i64) -> PyResult<Bound<'_, PyAny>> {
    let epoch = UNIX_EPOCH.get_or_try_init(py, || {
        let utc = PyTzInfo::utc(py)?;
        PyDateTime::new(py, 1970, 1, 1, 0, 0, 0, 0, Some(&utc)).map(Bound::unbind)
    })?;
    const MS_PER_DAY: i64 = 86_400_000;
    let days = i32::try_from(unix_ms.div_euclid(MS_PER_DAY)).map_err(|_| {
        pyo3::exceptions::PyOverflowError::new_err(format!(
            "timestamp {unix_ms} is outside the range of datetime"
        ))
    })?;
    let ms_of_day = unix_ms.rem_euclid(MS_PER_DAY) as i32;
    let delta = PyDelta::new(py, days, ms_of_day / 1000, ms_of_day % 1000 * 1000, true)?;
    epoch.bind(py).add(delta)
}

/// The bound of a `wait` or `borrow` policy: a `timedelta`, or text that
/// the core's [`snowmint::value::parse_duration`] reads (`"2s"`, `"500ms"`).
pub fn duration(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    range: std::ops::RangeInclusive<Duration>,
) -> PyResult<Duration> {
    named_duration(py, "max", value, range)
}

/// A duration argument called `name` (`claim_ttl`, `wait`), read as
/// [`duration`] reads `max`.
pub fn named_duration(
    py: Python<'_>,
    name: &'static str,
    value: &Bound<'_, PyAny>,
    range: std::ops::RangeInclusive<Duration>,
) -> PyResult<Duration> {
    if let Ok(text) = value.extract::<String>() {
        return snowmint::value::parse_duration(name, &text, range).or_raise(py, Some(value));
    }
    if value.is_instance_of::<PyDelta>() {
        let one_micro = PyDelta::new(py, 0, 0, 1, true)?;
        let micros: i128 = value.floor_div(one_micro)?.extract()?;
        return snowmint::value::check_duration_micros(name, micros, range)
            .or_raise(py, Some(value));
    }
    Err(PyTypeError::new_err(format!(
        "{name} must be a timedelta or a duration such as \"2s\" or \"500ms\", not {}",
        value.get_type().name()?
    )))
}
