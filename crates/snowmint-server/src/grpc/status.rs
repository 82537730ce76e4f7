//! Errors as gRPC statuses.
//!
//! - A core error gets its code from its kind, in the one `match` of
//!   [`from_core`]: bad input is `INVALID_ARGUMENT`, "not now" is
//!   `UNAVAILABLE`. Its message is the HTTP API's, which names the field,
//!   the value and the range; the metadata `snowmint-code` and
//!   `snowmint-field` repeat the HTTP API's error code and the field for
//!   programs.
//! - A missing input is `INVALID_ARGUMENT` too.
//! - A refusal is `UNAVAILABLE`, with `retry-after-ms` (milliseconds until
//!   asking this node again makes sense) and `snowmint-code` (`no_claim`,
//!   `clock_behind`, ...).
//!
//! Nothing here makes `INTERNAL`: no input of a client leads to one.

use tonic::metadata::MetadataValue;
use tonic::{Code, Status};

use snowmint::ErrorKind;
use snowmint_fleet::Refusal;

use crate::error::ApiError;
use crate::inputs::Rejection;
use crate::state::AppState;

/// The metadata key of a refusal's retry delay, in milliseconds.
pub const RETRY_AFTER_KEY: &str = "retry-after-ms";
/// The metadata key of the error code (the HTTP API's `error.code`).
pub const CODE_KEY: &str = "snowmint-code";
/// The metadata key of the request field a bad-input error is about.
pub const FIELD_KEY: &str = "snowmint-field";

/// The status of a core error about the request field `field`. A new kind
/// does not compile until it is given a code here (docs/ARCHITECTURE.md
/// §6).
pub(crate) fn from_core(field: &str, error: snowmint::Error) -> Status {
    let code = match error.kind() {
        ErrorKind::OutOfRange
        | ErrorKind::InvalidText
        | ErrorKind::UnknownName
        | ErrorKind::InvalidFields
        | ErrorKind::InvalidLayout
        | ErrorKind::EmptyWindow => Code::InvalidArgument,
        ErrorKind::ClockBehind | ErrorKind::SequenceExhausted => Code::Unavailable,
    };
    status(code, &ApiError::from_core(field, error))
}

/// The status of a calculator input that cannot be used.
pub(crate) fn rejected(rejection: Rejection) -> Status {
    match rejection {
        Rejection::Refused { input, error } => from_core(input, error),
        Rejection::Missing { .. } => status(Code::InvalidArgument, &ApiError::from(rejection)),
    }
}

/// A status with `error`'s message, and its code, field and retry delay
/// as metadata.
fn status(code: Code, error: &ApiError) -> Status {
    let mut status = Status::new(code, error.message());
    let metadata = status.metadata_mut();
    metadata.insert(CODE_KEY, MetadataValue::from_static(error.code()));
    if let Some(field) = error.field()
        && let Ok(value) = MetadataValue::try_from(field)
    {
        metadata.insert(FIELD_KEY, value);
    }
    if let Some(retry) = error.retry_after() {
        metadata.insert(RETRY_AFTER_KEY, MetadataValue::from(millis(retry)));
    }
    status
}

fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The status of an error answer of the HTTP API (the claim history's
/// look-up): a 404 is `NOT_FOUND`, a 503 `UNAVAILABLE` with its retry
/// delay, anything else `INVALID_ARGUMENT`; each with `snowmint-code`.
pub(crate) fn api_error(error: ApiError) -> Status {
    let code = match error.status_code().as_u16() {
        404 => Code::NotFound,
        429 => Code::ResourceExhausted,
        503 => Code::Unavailable,
        _ => Code::InvalidArgument,
    };
    status(code, &error)
}

/// `UNAVAILABLE` for a refusal, counted in the refusal metrics as HTTP's
/// 503 answers are.
pub(crate) fn refused(state: &AppState, refusal: Refusal) -> Status {
    tracing::debug!(code = refusal.code(), %refusal, "refused (gRPC)");
    state.metrics().refused(&refusal);
    let mut status = Status::new(Code::Unavailable, refusal.to_string());
    let metadata = status.metadata_mut();
    metadata.insert(CODE_KEY, MetadataValue::from_static(refusal.code()));
    metadata.insert(
        RETRY_AFTER_KEY,
        MetadataValue::from(millis(refusal.retry_after())),
    );
    status
}

/// A count-like field in `1..=max`, checked as the HTTP API's parameter
/// is read (so `count 0 is out of range (1..=4096)`).
pub(crate) fn bounded(name: &'static str, value: u32, max: u32) -> Result<u64, Status> {
    snowmint::value::check_bounded(name, value, 1..=u64::from(max))
        .map_err(|error| from_core(name, error))
}

/// `UNAVAILABLE` for a stream ended by the server's shutdown.
pub(crate) fn shutting_down() -> Status {
    let mut status = Status::unavailable("the node is shutting down; ask another");
    status
        .metadata_mut()
        .insert(CODE_KEY, MetadataValue::from_static("shutting_down"));
    status
}

#[cfg(test)]
mod tests {
    use snowmint::{Generator, Layout, Node};

    use super::*;

    /// The "not now" kinds, which no request meets as core errors (the
    /// issuer turns them into refusals), would be `UNAVAILABLE` with a
    /// retry delay, as refusals are.
    #[test]
    fn not_now_kinds_are_unavailable_with_a_retry_delay() {
        let t = 1_700_000_000_000;
        let generator = Generator::new(Layout::TWITTER, Node::default()).unwrap();
        let exhausted = (0..=4096)
            .try_for_each(|_| generator.next_id_at(t).map(drop))
            .unwrap_err();
        let behind = generator.next_id_at(t - 5).unwrap_err();
        for (error, kind, retry_ms) in [
            (exhausted, ErrorKind::SequenceExhausted, "1"),
            (behind, ErrorKind::ClockBehind, "6"),
        ] {
            assert_eq!(error.kind(), kind);
            let status = from_core("count", error);
            assert_eq!(status.code(), Code::Unavailable, "{kind:?}");
            assert_eq!(status.metadata().get(RETRY_AFTER_KEY).unwrap(), retry_ms);
        }
    }
}
