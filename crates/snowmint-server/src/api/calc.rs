//! The calculator: decode, encode, time windows and layouts, in the node's
//! layout or any other (`layout=`, `epoch=`). Nothing here issues IDs.

use axum::Json;
use axum::extract::State;

use super::params::{IdSegment, Params};
use crate::body::{DecodedId, IdRange, LayoutDescription};
use crate::error::ApiError;
use crate::inputs;
use crate::openapi::{BadRequest, EncodingParam, LayoutParams, NotFound, TimeParam, UriTooLong};
use crate::state::AppState;

/// Decode an ID
///
/// The fields of any ID in 0..=2^63-1: time, datacenter, machine,
/// sequence, read with the given layout.
#[utoipa::path(
    get,
    path = "/v1/ids/{id}",
    operation_id = "decodeId",
    tag = "calculator",
    params(
        ("id" = String, Path, description = "The ID: decimal by default, or in `encoding`.", example = "1724551110457221119"),
        ("encoding" = inline(Option<EncodingParam>), Query, description = "How `id` is written."),
        LayoutParams,
    ),
    responses(
        (status = 200, description = "The ID's fields.", body = DecodedId),
        (status = 400, response = BadRequest),
        (status = 404, response = NotFound),
        (status = 414, response = UriTooLong),
    ),
)]
pub async fn decode(
    IdSegment(text): IdSegment,
    params: Params,
) -> Result<Json<DecodedId>, ApiError> {
    params.allow(&["layout", "epoch", "encoding"])?;
    decode_text(&text, &params).map(Json)
}

/// Decodes `text` with the `layout`, `epoch` and `encoding` of `params`
/// (also for Leaf's `/api/snowflake/decode`). Text that is no ID in the
/// encoding asked for, but is one in others, names them.
pub(crate) fn decode_text(text: &str, params: &Params) -> Result<DecodedId, ApiError> {
    let layout = params.layout()?;
    let encoding = params.encoding()?;
    let id = inputs::id(&layout, text, encoding)
        .map_err(|rejection| ApiError::from(rejection).with_readings(text, encoding))?;
    DecodedId::new(&layout, id).map_err(|e| ApiError::from_core("id", e))
}

/// Build an ID from its fields
///
/// The ID made of a time, datacenter, machine and sequence, in the given
/// layout.
#[utoipa::path(
    get,
    path = "/v1/encode",
    operation_id = "encodeId",
    tag = "calculator",
    params(
        ("timestamp" = inline(TimeParam), Query, description = "The ID's time: `now`, Unix milliseconds (`1700000000000`) or RFC 3339 (`2023-11-14T22:13:20.000Z`); must lie within the layout (epoch ..= last instant)."),
        ("datacenter" = u64, Query, description = "The datacenter field, 0..=31 in the Twitter layout (the layout's width decides).", example = 0),
        ("machine" = u64, Query, description = "The machine field, 0..=31 in the Twitter layout (the layout's width decides).", example = 0),
        ("sequence" = u64, Query, description = "The sequence field, 0..=4095 in the Twitter layout (the layout's width decides).", example = 0),
        LayoutParams,
    ),
    responses(
        (status = 200, description = "The ID and its fields.", body = DecodedId),
        (status = 400, response = BadRequest),
        (status = 414, response = UriTooLong),
    ),
)]
pub async fn encode(params: Params) -> Result<Json<DecodedId>, ApiError> {
    params.allow(&[
        "timestamp",
        "datacenter",
        "machine",
        "sequence",
        "layout",
        "epoch",
    ])?;
    let layout = params.layout()?;
    let timestamp_ms = params.time("timestamp", &layout)?;
    // The node as two numbers (see `Layout::node_from_pair`): datacenter
    // and machine in Twitter's layout.
    let (upper, lowest) = layout.pair_max();
    let datacenter = params.bounded("datacenter", 0, upper)?;
    let machine = params.bounded("machine", 0, lowest)?;
    let max_sequence = layout.sequence_field().map_or(0, |f| f.max());
    let sequence = params.bounded("sequence", 0, max_sequence)?;
    let core = |e| ApiError::from_core("parts", e);
    // The node as two numbers (see `Layout::node_from_pair`): datacenter
    // and machine in Twitter's layout.
    let id = layout
        .encode_pair(timestamp_ms, datacenter, machine, sequence)
        .map_err(core)?;
    Ok(Json(DecodedId::new(&layout, id).map_err(core)?))
}

/// The IDs of a time window
///
/// The smallest and the largest ID whose time lies in `from ..= to`, for
/// `WHERE id BETWEEN min AND max`.
#[utoipa::path(
    get,
    path = "/v1/range",
    operation_id = "idRange",
    tag = "calculator",
    params(
        ("from" = inline(TimeParam), Query, description = "Start of the window (inclusive): `now`, Unix milliseconds (`1700000000000`) or RFC 3339 (`2023-11-14T22:13:20.000Z`); must lie within the layout (epoch ..= last instant)."),
        ("to" = inline(TimeParam), Query, description = "End of the window (inclusive), not before `from`: `now`, Unix milliseconds (`1700000000000`) or RFC 3339 (`2023-11-14T22:13:20.000Z`); must lie within the layout (epoch ..= last instant)."),
        LayoutParams,
    ),
    responses(
        (status = 200, description = "The window and its ID bounds.", body = IdRange),
        (status = 400, response = BadRequest),
        (status = 414, response = UriTooLong),
    ),
)]
pub async fn range(params: Params) -> Result<Json<IdRange>, ApiError> {
    params.allow(&["from", "to", "layout", "epoch"])?;
    let layout = params.layout()?;
    let from_ms = params.time("from", &layout)?;
    let to_ms = params.time("to", &layout)?;
    let ids = layout
        .id_range(from_ms, to_ms)
        .map_err(|e| ApiError::from_core("from", e))?;
    Ok(Json(IdRange::new(&layout, from_ms, to_ms, ids)))
}

/// Describe a layout
///
/// Field widths and shifts, epoch, capacity, last representable instant
/// and the years left until it.
#[utoipa::path(
    get,
    path = "/v1/layout",
    operation_id = "describeLayout",
    tag = "calculator",
    params(LayoutParams),
    responses(
        (status = 200, description = "The layout.", body = LayoutDescription),
        (status = 400, response = BadRequest),
        (status = 414, response = UriTooLong),
    ),
)]
pub async fn layout(
    State(state): State<AppState>,
    params: Params,
) -> Result<Json<LayoutDescription>, ApiError> {
    params.allow(&["layout", "epoch"])?;
    let layout = params.layout()?;
    let now_ms = state.issuer().clock().now_ms();
    Ok(Json(LayoutDescription::new(&layout, now_ms)))
}
