//! `/v1/inspect`: the IDs of any text (links, mentions, every family),
//! each token with its readings ranked, as `snowmint inspect` reads them.
//! `GET` takes the text as `text=`; `POST` takes it as the body (any
//! content type; a JSON body `{"text": "..."}` is read as its `text`), up
//! to [`MAX_TEXT`] bytes.

use axum::Json;
use axum::body::{Body, to_bytes};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use snowmint::inspect::MAX_TEXT;

use super::params::Params;
use crate::body::Inspected;
use crate::error::ApiError;
use crate::openapi::{BadRequest, InspectParams, UriTooLong};

/// The route's path.
pub const PATH: &str = "/v1/inspect";

/// The largest body `POST /v1/inspect` reads: the text, or a JSON object
/// around it (escapes make it longer).
pub const MAX_BODY_BYTES: u64 = 2 * MAX_TEXT as u64;

/// Read the IDs of a text
///
/// Every ID-like token of `text` (links, Discord's markup, integers in any
/// encoding, ULID, UUID, ObjectId, KSUID, Bluesky TID, Misskey aid, TSID),
/// each with its readings, most plausible first, and why. A link's host or
/// Discord's markup pins a token's family; a time before the family began
/// or more than a day after `now` is implausible.
#[utoipa::path(
    get,
    path = "/v1/inspect",
    operation_id = "inspectText",
    tag = "calculator",
    params(
        ("text" = String, Query, description = "The text, up to 1 MiB (the request target, up to 8 KiB; POST takes longer texts).", example = "<@175928847299117063> and https://x.com/jack/status/1724551110457221119"),
        InspectParams,
    ),
    responses(
        (status = 200, description = "The text's tokens and their readings.", body = Inspected),
        (status = 400, response = BadRequest),
        (status = 414, response = UriTooLong),
    ),
)]
pub async fn get(params: Params) -> Result<Json<Inspected>, ApiError> {
    params.allow(&["text", "now", "layout", "epoch", "top"])?;
    let text = params.required("text", "any text, up to 1 MiB")?;
    answer(text.as_bytes(), &params)
}

/// Read the IDs of a text sent as the body
///
/// As `GET /v1/inspect`, with the text as the request body: as it is, or,
/// with `Content-Type: application/json`, the `text` of a JSON object.
#[utoipa::path(
    post,
    path = "/v1/inspect",
    operation_id = "inspectBody",
    tag = "calculator",
    params(InspectParams),
    request_body(
        description = "The text (up to 1 MiB), or a JSON object {\"text\": \"...\"} with Content-Type: application/json.",
        content(
            (String = "text/plain", example = "https://discord.com/channels/@me/381887113391505410/382016263479541760"),
            (crate::body::InspectRequest = "application/json"),
        ),
    ),
    responses(
        (status = 200, description = "The text's tokens and their readings.", body = Inspected),
        (status = 400, response = BadRequest),
        (status = 413, description = "The body is larger than 2 MiB, or its text than 1 MiB.", body = crate::body::ErrorBody),
        (status = 414, response = UriTooLong),
    ),
)]
pub async fn post(
    params: Params,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Inspected>, ApiError> {
    params.allow(&["now", "layout", "epoch", "top"])?;
    let too_large = || {
        ApiError::status(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!(
                "the request body is larger than {MAX_BODY_BYTES} bytes; send at most {MAX_TEXT} bytes of text"
            ),
        )
    };
    let bytes = to_bytes(body, MAX_BODY_BYTES as usize)
        .await
        .map_err(|_| too_large())?;
    if bytes.is_empty() {
        return Err(ApiError::bad_input(
            "text",
            "missing_body",
            "POST /v1/inspect reads the text to inspect from its body, which is empty: send the text as the body, or ask GET /v1/inspect?text=...",
        ));
    }
    let json = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    if !json {
        return answer(&bytes, &params);
    }
    let request: crate::body::InspectRequest = serde_json::from_slice(&bytes).map_err(|error| {
        ApiError::bad_input(
            "text",
            "invalid_body",
            format!("the body is not a JSON object {{\"text\": \"...\"}}: {error}"),
        )
    })?;
    answer(request.text.as_bytes(), &params)
}

fn answer(text: &[u8], params: &Params) -> Result<Json<Inspected>, ApiError> {
    let inspection = params.inspect(text)?;
    Ok(Json(Inspected::new(inspection.now_ms, inspection.tokens)))
}
