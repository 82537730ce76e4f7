//! Leaf's HTTP API (Meituan's ID service), so that its clients can move to
//! snowmint by changing an address: `GET /api/snowflake/get/{key}`
//! answers a new ID as bare decimal text, as Leaf's snowflake mode does.
//!
//! Leaf's snowflake mode takes a key and ignores it (its segment mode is
//! the one that keeps a sequence per key); so does this: every key gets
//! IDs from the node's one issuer. Leaf's snowflake layout is Twitter's
//! (41-bit milliseconds since 1288834974657, a 10-bit worker id, 12-bit
//! sequence), which is snowmint's default: a worker id is a slot.
//!
//! Where this differs from Leaf on purpose: a node that may not issue
//! answers 503 with `Retry-After` and the API's JSON error (Leaf answers
//! 500), and `/api/snowflake/decode?id=` answers what `/v1/ids/{id}`
//! answers (Leaf's monitor page decodes at another path, into its own
//! fields).

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};

use super::params::Params;
use crate::body::{DecodedId, IdText};
use crate::error::ApiError;
use crate::openapi::{BadRequest, EncodingParam, LayoutParams, NotFound, Unavailable, UriTooLong};
use crate::state::AppState;

/// A new ID, Leaf-style
///
/// Leaf's `GET /api/snowflake/get/{key}`: one new ID of this node as bare
/// decimal text. The key is accepted and ignored, as Leaf's snowflake mode
/// ignores it. Query parameters are ignored, as Leaf ignores them.
#[utoipa::path(
    get,
    path = "/api/snowflake/get/{key}",
    operation_id = "leafNextId",
    tag = "leaf",
    params(
        ("key" = String, Path, description = "Any key; ignored, as Leaf's snowflake mode ignores it.", example = "order"),
    ),
    responses(
        (status = 200, description = "A new ID, in decimal.", body = IdText, content_type = "text/plain"),
        (status = 404, response = NotFound),
        (status = 414, response = UriTooLong),
        (status = 503, response = Unavailable),
    ),
)]
pub async fn next_id(State(state): State<AppState>) -> Result<Response, ApiError> {
    // The key is not even read: whatever bytes it holds, it is ignored.
    let id = state.issuer().next_id().await.map_err(|refusal| {
        tracing::debug!(code = refusal.code(), %refusal, "refused (leaf)");
        state.metrics().refused(&refusal);
        ApiError::from(refusal)
    })?;
    state.metrics().issued(1);
    Ok(IdText(id).into_response())
}

/// Decode an ID, Leaf-style
///
/// The fields of an ID given as `id=`, as `GET /v1/ids/{id}` answers them.
#[utoipa::path(
    get,
    path = "/api/snowflake/decode",
    operation_id = "leafDecode",
    tag = "leaf",
    params(
        ("id" = String, Query, description = "The ID: decimal by default, or in `encoding`.", example = "1724551110457221119"),
        ("encoding" = inline(Option<EncodingParam>), Query, description = "How `id` is written."),
        LayoutParams,
    ),
    responses(
        (status = 200, description = "The ID's fields.", body = DecodedId),
        (status = 400, response = BadRequest),
        (status = 414, response = UriTooLong),
    ),
)]
pub async fn decode(params: Params) -> Result<Json<DecodedId>, ApiError> {
    params.allow(&["id", "layout", "epoch", "encoding"])?;
    let text = params.required("id", "an ID, decimal or in `encoding`")?;
    super::calc::decode_text(text, &params).map(Json)
}
