//! The calculator: decode, encode, time windows and layouts, in the node's
//! layout or any other (`layout=`, `epoch=`). Nothing here issues IDs.

use axum::Json;
use axum::extract::State;

use snowmint::{Field, Role};

use super::params::{IdSegment, Params};
use crate::body::{DecodedId, IdRange, LayoutDescription};
use crate::error::ApiError;
use crate::inputs;
use crate::openapi::{BadRequest, EncodingParam, LayoutParams, NotFound, TimeParam, UriTooLong};
use crate::state::AppState;

/// Decode an ID
///
/// The fields of an ID of the given layout (any 64-bit value for
/// Discord's), each named as the family names it in `fields`, and as
/// datacenter, machine and sequence for the clients of the Twitter era.
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
/// The ID made of a time and fields, in the given layout. Each node and
/// sequence field is given by the family's name for it (`worker`,
/// `process`, `increment` for Discord) or by the Twitter-era names
/// (`datacenter`: the node fields above the lowest; `machine`: the lowest;
/// `sequence`); other fields are 0 unless given.
#[utoipa::path(
    get,
    path = "/v1/encode",
    operation_id = "encodeId",
    tag = "calculator",
    params(
        ("timestamp" = inline(TimeParam), Query, description = "The ID's time: `now`, Unix milliseconds (`1700000000000`) or RFC 3339 (`2023-11-14T22:13:20.000Z`); must lie within the layout (epoch ..= last instant)."),
        ("datacenter" = Option<u64>, Query, description = "The datacenter field, 0..=31 in the Twitter layout (the layout's width decides); in other layouts the node fields above the lowest.", example = 0),
        ("machine" = Option<u64>, Query, description = "The machine field, 0..=31 in the Twitter layout (the layout's width decides); in other layouts the lowest node field.", example = 0),
        ("sequence" = Option<u64>, Query, description = "The sequence field, 0..=4095 in the Twitter layout (the layout's width decides).", example = 0),
        LayoutParams,
    ),
    responses(
        (status = 200, description = "The ID and its fields.", body = DecodedId),
        (status = 400, response = BadRequest),
        (status = 414, response = UriTooLong),
    ),
)]
pub async fn encode(params: Params) -> Result<Json<DecodedId>, ApiError> {
    let layout = params.layout()?;
    // The layout's own names for its fields, and the three names of the
    // Twitter-era API (see `Layout::encode_named`).
    let mut names: Vec<&str> = layout
        .fields()
        .iter()
        .filter(|field| field.role() != Role::Time)
        .map(Field::name)
        .collect();
    for legacy in ["datacenter", "machine", "sequence"] {
        if !names.contains(&legacy) {
            names.push(legacy);
        }
    }
    let mut known = vec!["timestamp", "layout", "epoch"];
    known.extend(&names);
    params.allow(&known)?;
    let timestamp_ms = params.time("timestamp", &layout)?;
    let mut given: Vec<(&str, u64)> = Vec::new();
    for &name in &names {
        if let Some(text) = params.get(name)? {
            let value = layout
                .parse_named(name, text)
                .map_err(|e| ApiError::from_core(name, e))?;
            given.push((name, value));
        }
    }
    // Every node and sequence field is given, by its own name or by one
    // of the three Twitter-era names.
    let named: Vec<&str> = given.iter().map(|(name, _)| *name).collect();
    if let Some(field) = layout.first_unnamed(&named) {
        let expected = format!("an integer in 0..={}", field.max());
        params
            .required(field.name(), &expected)
            .map_err(|error| error.with_range(0, field.max()))?;
    }
    let core = |e| ApiError::from_core("parts", e);
    let id = layout
        .encode_named(timestamp_ms.saturating_mul(1000), &given)
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
