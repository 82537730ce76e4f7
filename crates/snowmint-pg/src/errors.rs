//! The core's errors as SQL errors.
//!
//! A core error gets its SQLSTATE from its kind, in the one `match` of
//! [`from_core_about`] (a new kind does not compile until it has one; see
//! docs/ARCHITECTURE.md §6):
//!
//! - a value out of its range (an ID, a timestamp, a field): 22003
//!   (`numeric_value_out_of_range`);
//! - text that does not read as the value (an ID's digits): 22P02
//!   (`invalid_text_representation`);
//! - a name, a layout or a window that cannot be used: 22023
//!   (`invalid_parameter_value`);
//! - the server cannot issue now (the clock behind): 55000
//!   (`object_not_in_prerequisite_state`).
//!
//! The extension's own errors (settings missing, the library not
//! preloaded, the mark not writable, a time PostgreSQL cannot hold) pick
//! one of the same codes with [`out_of_range`], [`invalid`] and
//! [`not_ready`]. The message is the core's, which names the field, the
//! value and the valid range.
#![forbid(unsafe_code)]

use pgrx::PgSqlErrorCode;
use pgrx::pg_sys::panic::ErrorReport;
use snowmint::ErrorKind;

/// The error for a value out of range.
pub fn out_of_range(message: impl Into<String>) -> ErrorReport {
    report(PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, message)
}

/// The error for a value that cannot be used.
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
    from_core_about(None, error)
}

/// The SQL error for a core error about `about` (an argument or a
/// setting, such as `snowmint.layout`), which the message starts with.
pub fn from_core_about(about: Option<&str>, error: snowmint::Error) -> ErrorReport {
    let code = match error.kind() {
        ErrorKind::OutOfRange => PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
        ErrorKind::InvalidText => PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        ErrorKind::UnknownName
        | ErrorKind::InvalidFields
        | ErrorKind::InvalidLayout
        | ErrorKind::EmptyWindow => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        ErrorKind::ClockBehind | ErrorKind::SequenceExhausted => {
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE
        }
    };
    let message = match about {
        Some(about) => format!("{about}: {error}"),
        None => error.to_string(),
    };
    report(code, message)
}

fn report(code: PgSqlErrorCode, message: impl Into<String>) -> ErrorReport {
    ErrorReport::new(code, message.into(), "snowmint")
}
