//! New IDs: `/v1/id` and `/v1/ids?count=N`.
//!
//! This is the hot path: the bodies ([`crate::body::NewId`] and the
//! others) write themselves into bytes without a JSON serializer.

use axum::extract::State;
use axum::response::{IntoResponse, Response};

use snowmint_fleet::{MAX_BATCH, Refusal};

use super::params::{Params, WantsText};
use crate::body::{IdText, IdsText, NewId, NewIds};
use crate::error::ApiError;
use crate::openapi::{BadRequest, Unavailable, UriTooLong};
use crate::state::AppState;

/// One new ID
///
/// Issues one new ID of this node, in the node's own layout. JSON by
/// default; the bare decimal number for `Accept: text/plain`. Takes no
/// parameters (unknown ones are a 400).
#[utoipa::path(
    get,
    path = "/v1/id",
    operation_id = "nextId",
    tag = "issue",
    responses(
        (status = 200, description = "A new ID.", content(
            (NewId = "application/json"),
            (IdText = "text/plain"),
        )),
        (status = 400, response = BadRequest),
        (status = 414, response = UriTooLong),
        (status = 503, response = Unavailable),
    ),
)]
pub async fn next_id(
    State(state): State<AppState>,
    WantsText(text): WantsText,
    params: Params,
) -> Result<Response, ApiError> {
    params.allow(&[])?;
    let id = state
        .issuer()
        .next_id()
        .await
        .map_err(|refusal| refused(&state, refusal))?;
    state.metrics().issued(1);
    Ok(if text {
        IdText(id).into_response()
    } else {
        NewId { id }.into_response()
    })
}

/// A batch of new IDs
///
/// Issues `count` new IDs (1..=4096, one millisecond's worth), strictly
/// increasing. JSON by default; one ID per line for `Accept: text/plain`.
#[utoipa::path(
    get,
    path = "/v1/ids",
    operation_id = "nextIds",
    tag = "issue",
    params(
        ("count" = u64, Query, description = "How many IDs, 1..=4096.", minimum = 1, maximum = 4096, example = 10),
    ),
    responses(
        (status = 200, description = "New IDs, in increasing order.", content(
            (NewIds = "application/json"),
            (IdsText = "text/plain"),
        )),
        (status = 400, response = BadRequest),
        (status = 414, response = UriTooLong),
        (status = 503, response = Unavailable),
    ),
)]
pub async fn next_ids(
    State(state): State<AppState>,
    WantsText(text): WantsText,
    params: Params,
) -> Result<Response, ApiError> {
    let count = params
        .allow(&["count"])?
        .bounded("count", 1, MAX_BATCH.into())? as usize;
    let mut ids = Vec::with_capacity(count);
    let turn = state.batch_turn(count).await;
    state
        .issuer()
        .next_ids(count, &mut ids)
        .await
        .map_err(|refusal| refused(&state, refusal))?;
    drop(turn);
    state.metrics().issued(count as u64);
    state.metrics().batch(count);
    Ok(if text {
        IdsText(&ids).into_response()
    } else {
        NewIds { ids: &ids }.into_response()
    })
}

fn refused(state: &AppState, refusal: Refusal) -> ApiError {
    // Per request at debug: the issuer logs each episode (regression,
    // fencing, unwritable mark) once at warn or error.
    tracing::debug!(code = refusal.code(), %refusal, "refused");
    state.metrics().refused(&refusal);
    refusal.into()
}
