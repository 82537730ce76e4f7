//! `timestamptz` to and from Unix milliseconds.
//!
//! PostgreSQL counts microseconds from 2000-01-01T00:00:00Z; IDs count
//! milliseconds from 1970. A time is cut down to its millisecond (towards
//! the past), as the ID of that time would be.
#![forbid(unsafe_code)]

use pgrx::datum::TimestampWithTimeZone;
use pgrx::pg_sys::panic::ErrorReport;

use crate::errors;

/// 2000-01-01T00:00:00Z in Unix milliseconds.
const POSTGRES_EPOCH_MS: i64 = 946_684_800_000;

/// The Unix milliseconds of `time`; `name` says which argument it is.
pub fn to_unix_ms(name: &str, time: TimestampWithTimeZone) -> Result<i64, ErrorReport> {
    if !time.is_finite() {
        let which = if time.is_infinity() {
            "infinity"
        } else {
            "-infinity"
        };
        return Err(errors::out_of_range(format!(
            "{name} {which} is out of range (expected a finite time)"
        )));
    }
    let micros: i64 = time.into();
    Ok(micros.div_euclid(1000) + POSTGRES_EPOCH_MS)
}

/// The `timestamptz` of `unix_ms`, if PostgreSQL can hold it.
pub fn from_unix_ms(unix_ms: i64) -> Result<TimestampWithTimeZone, ErrorReport> {
    let beyond = || {
        errors::out_of_range(format!(
            "timestamp {unix_ms} is beyond what timestamptz holds (4713 BC ..= 294276 AD)"
        ))
    };
    let micros = unix_ms
        .checked_sub(POSTGRES_EPOCH_MS)
        .and_then(|ms| ms.checked_mul(1000))
        .ok_or_else(beyond)?;
    match TimestampWithTimeZone::try_from(micros) {
        // The two infinities are representable, but they are no time.
        Ok(time) if time.is_finite() => Ok(time),
        _ => Err(beyond()),
    }
}

/// The `timestamptz` of `unix_us`, or `None` where PostgreSQL cannot hold
/// it (a reading's time may lie anywhere: a ULID's reaches the year 10889).
pub fn from_unix_us(unix_us: i64) -> Option<TimestampWithTimeZone> {
    let micros = unix_us.checked_sub(POSTGRES_EPOCH_MS.checked_mul(1000)?)?;
    TimestampWithTimeZone::try_from(micros)
        .ok()
        .filter(|time| time.is_finite())
}
