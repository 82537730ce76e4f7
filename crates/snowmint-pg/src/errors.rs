//! The core's errors as SQL errors.
//!
//! - A value out of its range (an ID, a timestamp, a field): SQLSTATE 22003
//!   (`numeric_value_out_of_range`).
//! - Text that is no valid value (a layout, a setting): 22023
//!   (`invalid_parameter_value`).
//! - The server cannot issue now (settings missing, clock behind, the
//!   library not preloaded, the mark not writable): 55000
//!   (`object_not_in_prerequisite_state`).
//!
//! The message is the core's, which names the field, the value and the
//! valid range.
#![forbid(unsafe_code)]

use pgrx::PgSqlErrorCode;
use pgrx::pg_sys::panic::ErrorReport;

/// The error for a value out of range.
pub fn out_of_range(message: impl Into<String>) -> ErrorReport {
    report(PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, message)
}

/// The error for a text that is no valid value.
pub fn invalid(message: impl Into<String>) -> ErrorReport {
    report(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, message)
}

/// The error for "cannot issue now".
pub fn not_ready(message: impl Into<String>) -> ErrorReport {
    report(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        message,
    )
}

/// The SQL error for a core error.
pub fn from_core(error: snowmint::Error) -> ErrorReport {
    use snowmint::Error as E;
    match error {
        E::ClockBehind { .. } | E::SequenceExhausted { .. } => not_ready(error.to_string()),
        E::InvalidLayout { .. }
        | E::UnknownLayout { .. }
        | E::UnknownClockPolicy { .. }
        | E::InvalidDuration { .. }
        | E::NotANumber { .. }
        | E::EmptyWindow { .. } => invalid(error.to_string()),
        _ => out_of_range(error.to_string()),
    }
}

fn report(code: PgSqlErrorCode, message: impl Into<String>) -> ErrorReport {
    ErrorReport::new(code, message.into(), "snowmint")
}
