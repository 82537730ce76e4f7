//! Errors as gRPC statuses.
//!
//! - Bad input (every 4xx of the HTTP API) is `INVALID_ARGUMENT`, with the
//!   HTTP API's message, which names the field, the value and the range;
//!   the metadata `snowmint-code` and `snowmint-field` repeat the error code
//!   and the field for programs.
//! - A refusal is `UNAVAILABLE`, with `retry-after-ms` (milliseconds until
//!   asking this node again makes sense) and `snowmint-code` (`no_claim`,
//!   `clock_behind`, ...).
//!
//! Nothing here makes `INTERNAL`: no input of a client leads to one.

use tonic::metadata::MetadataValue;
use tonic::{Code, Status};

use snowmint_fleet::Refusal;

use crate::error::ApiError;
use crate::state::AppState;

/// The metadata key of a refusal's retry delay, in milliseconds.
pub const RETRY_AFTER_KEY: &str = "retry-after-ms";
/// The metadata key of the error code (the HTTP API's `error.code`).
pub const CODE_KEY: &str = "snowmint-code";
/// The metadata key of the request field a bad-input error is about.
pub const FIELD_KEY: &str = "snowmint-field";

/// `INVALID_ARGUMENT` for a bad-input error of the HTTP API's kind.
pub(crate) fn invalid(error: ApiError) -> Status {
    let mut status = Status::new(Code::InvalidArgument, error.message());
    let metadata = status.metadata_mut();
    metadata.insert(CODE_KEY, MetadataValue::from_static(error.code()));
    if let Some(field) = error.field()
        && let Ok(value) = MetadataValue::try_from(field)
    {
        metadata.insert(FIELD_KEY, value);
    }
    status
}

/// The status for any error answer of the HTTP API: bad input is
/// `INVALID_ARGUMENT`, a 404 `NOT_FOUND`, a 503 `UNAVAILABLE` with its
/// retry delay; each with `snowmint-code`.
pub(crate) fn api_error(error: ApiError) -> Status {
    let code = match error.status_code().as_u16() {
        404 => Code::NotFound,
        503 => Code::Unavailable,
        _ => return invalid(error),
    };
    let mut status = Status::new(code, error.message());
    let metadata = status.metadata_mut();
    metadata.insert(CODE_KEY, MetadataValue::from_static(error.code()));
    if let Some(seconds) = error.retry_after_s() {
        metadata.insert(RETRY_AFTER_KEY, MetadataValue::from(seconds * 1000));
    }
    status
}

/// `UNAVAILABLE` for a refusal, counted in the refusal metrics as HTTP's
/// 503 answers are.
pub(crate) fn refused(state: &AppState, refusal: Refusal) -> Status {
    tracing::debug!(code = refusal.code(), %refusal, "refused (gRPC)");
    state.metrics().refused(&refusal);
    let mut status = Status::new(Code::Unavailable, refusal.to_string());
    let metadata = status.metadata_mut();
    metadata.insert(CODE_KEY, MetadataValue::from_static(refusal.code()));
    let retry_ms = u64::try_from(refusal.retry_after().as_millis()).unwrap_or(u64::MAX);
    metadata.insert(RETRY_AFTER_KEY, MetadataValue::from(retry_ms));
    status
}

/// A count-like field in `min..=max`, read by the same reader as the HTTP
/// API's parameters (so `count 0 is out of range (1..=4096)`).
pub(crate) fn bounded(name: &'static str, value: u64, min: u64, max: u64) -> Result<u64, Status> {
    snowmint::parse_bounded(name, &value.to_string(), min..=max)
        .map_err(|error| invalid(crate::api::params::rejected(name, error)))
}

/// `UNAVAILABLE` for a stream ended by the server's shutdown.
pub(crate) fn shutting_down() -> Status {
    let mut status = Status::unavailable("the node is shutting down; ask another");
    status
        .metadata_mut()
        .insert(CODE_KEY, MetadataValue::from_static("shutting_down"));
    status
}
