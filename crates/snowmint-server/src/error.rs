//! The one error type of the HTTP API, and its one mapping to responses.
//!
//! Every error answer has the same body, an [`ErrorBody`]:
//!
//! ```json
//! {"error":{"code":"out_of_range","message":"datacenter 32 is out of range (0..=31)","field":"datacenter","value":"32","min":"0","max":"31"}}
//! ```
//!
//! - Bad input is a 4xx (400 for parameters, 404 for unknown paths, 405 for
//!   other methods, 413/414 for oversized requests), never a 5xx.
//! - Refusing to issue (clock behind, no claim, the high-water mark cannot
//!   be written) is 503 with `Retry-After` in whole seconds, at least 1; the
//!   body repeats it as `retry_after_s`.
//! - `value`, `min` and `max`, when present, repeat the message's facts for
//!   programs: the offending value as given and the valid range.

use std::time::Duration;

use axum::Json;
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use snowmint::{Encoding, Error, ErrorKind, SnowflakeId};

use crate::body::{ErrorBody, ErrorDetails};

/// An error answer: status, machine-readable code, message for people, and
/// the parameter it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    field: Option<String>,
    facts: Option<Box<Facts>>,
    retry_after: Option<Duration>,
}

impl From<crate::inputs::Rejection> for ApiError {
    fn from(rejection: crate::inputs::Rejection) -> ApiError {
        match rejection {
            crate::inputs::Rejection::Missing { input, expected } => {
                ApiError::missing(input, expected)
            }
            crate::inputs::Rejection::Refused { input, error } => ApiError::from_core(input, error),
        }
    }
}

impl From<snowmint_fleet::Refusal> for ApiError {
    fn from(refusal: snowmint_fleet::Refusal) -> ApiError {
        ApiError::unavailable(refusal.code(), refusal.to_string(), refusal.retry_after())
    }
}

impl ApiError {
    /// A 400 about the parameter `field`, with an explicit code.
    pub fn bad_input(field: &str, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            code,
            message: message.into(),
            field: Some(field.to_owned()),
            facts: None,
            retry_after: None,
        }
    }

    /// The same error, also carrying the offending value as given.
    pub fn with_value(mut self, value: impl ToString) -> Self {
        self.facts.get_or_insert_default().value = Some(value.to_string());
        self
    }

    /// The same error, also carrying the valid range, `min..=max`.
    pub fn with_range(mut self, min: impl ToString, max: impl ToString) -> Self {
        self.facts.get_or_insert_default().min = Some(min.to_string());
        self.with_max(max)
    }

    /// The same error, also carrying the largest valid value.
    pub fn with_max(mut self, max: impl ToString) -> Self {
        self.facts.get_or_insert_default().max = Some(max.to_string());
        self
    }

    /// The same error about ID text that did not read in `tried`, naming
    /// the other encodings it is a valid ID in, if any, in the message
    /// and as `readable_as`.
    pub fn with_readings(mut self, text: &str, tried: Encoding) -> Self {
        let names: Vec<&'static str> = SnowflakeId::readings(text)
            .filter(|(encoding, _)| *encoding != tried)
            .map(|(encoding, _)| encoding.name())
            .collect();
        match names.as_slice() {
            [] => return self,
            [one] => {
                self.message
                    .push_str(&format!("; it reads as {one}: encoding={one}"));
            }
            [first @ .., last] => self.message.push_str(&format!(
                "; it reads as {} or {last}: say which with encoding=",
                first.join(", ")
            )),
        }
        self.facts.get_or_insert_default().readable_as = Some(names);
        self
    }

    /// A 400 for a required parameter that is missing.
    pub fn missing(field: &str, expected: &str) -> Self {
        ApiError::bad_input(
            field,
            "missing_parameter",
            format!("parameter {field} is missing ({expected})"),
        )
    }

    /// The answer to a core error about the parameter `field` (`parts`
    /// for an encode error, which names its own field).
    ///
    /// The status and code come from the error's [`ErrorKind`] in the one
    /// `match` below; the value and the range from the error's facts. A new
    /// kind does not compile until it is given a status here (and in every
    /// other front end: docs/ARCHITECTURE.md §6).
    pub fn from_core(field: &str, error: Error) -> Self {
        let (status, code) = match error.kind() {
            ErrorKind::OutOfRange => (StatusCode::BAD_REQUEST, "out_of_range"),
            ErrorKind::InvalidText => (StatusCode::BAD_REQUEST, "invalid_parameter"),
            ErrorKind::UnknownName => (StatusCode::BAD_REQUEST, "invalid_parameter"),
            ErrorKind::InvalidFields => (StatusCode::BAD_REQUEST, "invalid_fields"),
            ErrorKind::InvalidLayout => (StatusCode::BAD_REQUEST, "invalid_layout"),
            ErrorKind::EmptyWindow => (StatusCode::BAD_REQUEST, "empty_window"),
            // Not the request's fault: the same call may succeed later.
            ErrorKind::ClockBehind => (StatusCode::SERVICE_UNAVAILABLE, "clock_behind"),
            ErrorKind::SequenceExhausted => (StatusCode::SERVICE_UNAVAILABLE, "sequence_exhausted"),
        };
        // An encode error names the ID field it is about (datacenter,
        // machine...), which is also the parameter's name.
        let field = match error.field() {
            Some(f) if field == "parts" => f,
            _ => field,
        };
        let facts = Facts {
            value: error.value(),
            min: error.min().map(|limit| limit.to_string()),
            max: error.max().map(|limit| limit.to_string()),
            readable_as: None,
        };
        ApiError {
            status,
            code,
            message: error.to_string(),
            field: Some(field.to_owned()),
            facts: (facts != Facts::default()).then(|| Box::new(facts)),
            retry_after: error.retry_after(),
        }
    }

    /// A 503: the service may not issue IDs now; try again after
    /// `retry_after` (rounded up to whole seconds, at least 1).
    pub fn unavailable(
        code: &'static str,
        message: impl Into<String>,
        retry_after: Duration,
    ) -> Self {
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code,
            message: message.into(),
            field: None,
            facts: None,
            retry_after: Some(retry_after),
        }
    }

    /// A 429: the client asks more than a bound allows; try again after
    /// `retry_after` (rounded up to whole seconds, at least 1).
    pub fn too_many(code: &'static str, message: impl Into<String>, retry_after: Duration) -> Self {
        ApiError {
            status: StatusCode::TOO_MANY_REQUESTS,
            code,
            message: message.into(),
            field: None,
            facts: None,
            retry_after: Some(retry_after),
        }
    }

    /// Any other status, with no field.
    pub fn status(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            field: None,
            facts: None,
            retry_after: None,
        }
    }

    /// The HTTP status.
    pub fn status_code(&self) -> StatusCode {
        self.status
    }

    /// The machine-readable code.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The parameter the error is about.
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// How long until asking again makes sense, for 503 answers.
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// `Retry-After` in whole seconds, for 503 answers.
    pub fn retry_after_s(&self) -> Option<u64> {
        self.retry_after
            .map(|d| d.as_millis().div_ceil(1000).max(1) as u64)
    }
}

/// The offending value and the valid range behind a bad-input message
/// (boxed: most errors have none, and errors travel in every `Result`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Facts {
    value: Option<String>,
    min: Option<String>,
    max: Option<String>,
    readable_as: Option<Vec<&'static str>>,
}

impl ApiError {
    /// The body of the answer.
    pub fn body(&self) -> ErrorBody {
        let facts = self.facts.as_deref().cloned().unwrap_or_default();
        ErrorBody {
            error: ErrorDetails {
                code: self.code,
                message: self.message.clone(),
                field: self.field.clone(),
                value: facts.value,
                min: facts.min,
                max: facts.max,
                readable_as: facts.readable_as,
                retry_after_s: self.retry_after_s(),
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = self.body();
        let mut response = (self.status, Json(&body)).into_response();
        if let Some(seconds) = body.error.retry_after_s {
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        let after = |ms| {
            ApiError::unavailable("x", "y", Duration::from_millis(ms))
                .retry_after_s()
                .unwrap()
        };
        assert_eq!((after(0), after(1), after(1000), after(1001)), (1, 1, 1, 2));
    }

    #[test]
    fn encode_errors_point_at_the_field_they_name() {
        let error = snowmint::Layout::TWITTER
            .encode_pair(1_700_000_000_000, 0, 32, 0)
            .unwrap_err();
        let api = ApiError::from_core("parts", error);
        assert_eq!(api.field.as_deref(), Some("machine"));
        assert_eq!(api.code, "out_of_range");
    }
}
