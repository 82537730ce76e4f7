//! The one error answer: `{"error":{"code","message",...}}`, built by
//! [`ApiError`](crate::ApiError).

use serde::Serialize;
use utoipa::ToSchema;

/// Every error answer, whatever the status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Error)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetails,
}

/// What went wrong: a code for programs, a message for people, and on bad
/// input the parameter, the value and the valid range.
///
/// `value`, `min` and `max` repeat the message's facts for programs (the
/// calculator page builds its Spanish messages from them). They are
/// strings, as IDs are, because an ID's bounds do not fit a JavaScript
/// number. Keys that do not apply are left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorDetails {
    /// Machine-readable: invalid_parameter, out_of_range, missing_parameter, unknown_parameter, invalid_query, invalid_layout, empty_window, not_found, method_not_allowed, uri_too_long, payload_too_large, no_claim, clock_behind, mark_unwritable, not_ready, clock_out_of_range, timeout, no_coordinator, coordinator_unavailable, busy, unauthenticated; would_block only from an embedded issuer, never from the service.
    #[schema(examples("out_of_range"))]
    pub code: &'static str,
    /// For people: what was wrong, and what is valid.
    #[schema(examples("datacenter 32 is out of range (0..=31)"))]
    pub message: String,
    /// The parameter the error is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, examples("datacenter"))]
    pub field: Option<String>,
    /// On bad input, when known: the offending value as given (long input
    /// is cut).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, examples("32"))]
    pub value: Option<String>,
    /// On bad input, when known: the smallest valid value.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, examples("0"))]
    pub min: Option<String>,
    /// On bad input, when known: the largest valid value (for an empty
    /// time window, the `to` instant that `from` may not pass).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, examples("31"))]
    pub max: Option<String>,
    /// When an ID is not valid in the encoding it was read in: the
    /// encodings in which it is one (`encoding=` reads it there).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, examples(json!(["hex"])))]
    pub readable_as: Option<Vec<&'static str>>,
    /// On 503: the `Retry-After` value, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, minimum = 1)]
    pub retry_after_s: Option<u64>,
}
