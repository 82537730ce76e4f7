//! The calculator: decode, encode, time windows and layouts, in any layout
//! (`layout=`, `epoch=`). Nothing here issues IDs.

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};
use snowmint::{Encoding, Field, Layout, Parts, SnowflakeId, format_time};

use super::params::{IdSegment, Params};
use crate::error::ApiError;
use crate::state::AppState;

/// Average Gregorian year, for "years left".
const MS_PER_YEAR: f64 = 365.2425 * 86_400_000.0;

/// `GET /v1/ids/{id}`: the fields of an ID (decimal, or `encoding=`).
pub async fn decode(IdSegment(text): IdSegment, params: Params) -> Result<Json<Value>, ApiError> {
    params.allow(&["layout", "epoch", "encoding"])?;
    let layout = params.layout()?;
    let encoding = match params.get("encoding")? {
        Some(name) => name
            .parse::<Encoding>()
            .map_err(|e| ApiError::from_core("encoding", e))?,
        None => Encoding::Decimal,
    };
    let id = SnowflakeId::parse(encoding, &text).map_err(|e| ApiError::from_core("id", e))?;
    Ok(Json(describe(&layout, id)))
}

/// `GET /v1/encode`: the ID of the given fields.
pub async fn encode(params: Params) -> Result<Json<Value>, ApiError> {
    params.allow(&[
        "timestamp",
        "datacenter",
        "machine",
        "sequence",
        "layout",
        "epoch",
    ])?;
    let layout = params.layout()?;
    let parts = Parts {
        timestamp_ms: params.time("timestamp", &layout)?,
        datacenter: params.field(&layout, Field::Datacenter)?,
        machine: params.field(&layout, Field::Machine)?,
        sequence: params.field(&layout, Field::Sequence)?,
    };
    let id = layout
        .encode(parts)
        .map_err(|e| ApiError::from_core("parts", e))?;
    Ok(Json(describe(&layout, id)))
}

/// `GET /v1/range`: the smallest and largest ID of a time window.
pub async fn range(params: Params) -> Result<Json<Value>, ApiError> {
    params.allow(&["from", "to", "layout", "epoch"])?;
    let layout = params.layout()?;
    let from_ms = params.time("from", &layout)?;
    let to_ms = params.time("to", &layout)?;
    let range = layout
        .id_range(from_ms, to_ms)
        .map_err(|e| ApiError::from_core("from", e))?;
    Ok(Json(json!({
        "from_ms": from_ms,
        "from": format_time(from_ms).to_string(),
        "to_ms": to_ms,
        "to": format_time(to_ms).to_string(),
        "min": range.start().to_string(),
        "max": range.end().to_string(),
        "layout": layout_name(&layout),
        "epoch_ms": layout.epoch_ms(),
    })))
}

/// `GET /v1/layout`: widths, shifts, epoch, capacity and last instant.
pub async fn layout(
    State(state): State<AppState>,
    params: Params,
) -> Result<Json<Value>, ApiError> {
    params.allow(&["layout", "epoch"])?;
    let layout = params.layout()?;
    let now_ms = state.issuer().clock().now_ms();
    let last = layout.last_instant_ms();
    let years_left = ((last - now_ms) as f64 / MS_PER_YEAR * 100.0).round() / 100.0;
    Ok(Json(json!({
        "layout": layout_name(&layout),
        "spec": spec(&layout),
        "epoch_ms": layout.epoch_ms(),
        "epoch": format_time(layout.epoch_ms()).to_string(),
        "timestamp_bits": layout.timestamp_bits(),
        "datacenter_bits": layout.datacenter_bits(),
        "machine_bits": layout.machine_bits(),
        "sequence_bits": layout.sequence_bits(),
        "timestamp_shift": layout.timestamp_shift(),
        "datacenter_shift": layout.datacenter_shift(),
        "machine_shift": layout.machine_shift(),
        "max_datacenter": layout.max(Field::Datacenter),
        "max_machine": layout.max(Field::Machine),
        "max_sequence": layout.max(Field::Sequence),
        "ids_per_ms": layout.ids_per_ms(),
        "node_count": layout.node_count(),
        "last_instant_ms": last,
        "last_instant": format_time(last).to_string(),
        "years_left": years_left,
    })))
}

/// The decoded fields of an ID, as `/v1/ids/{id}` and `/v1/encode` answer.
pub(crate) fn describe(layout: &Layout, id: SnowflakeId) -> Value {
    let parts = layout.decode(id);
    json!({
        "id": id.to_string(),
        "timestamp_ms": parts.timestamp_ms,
        "time": format_time(parts.timestamp_ms).to_string(),
        "datacenter": parts.datacenter,
        "machine": parts.machine,
        "sequence": parts.sequence,
        "layout": layout_name(layout),
        "epoch_ms": layout.epoch_ms(),
        "encodings": {
            "hex": id.encode(Encoding::Hex).to_string(),
            "base32": id.encode(Encoding::Base32).to_string(),
            "base58": id.encode(Encoding::Base58).to_string(),
        },
    })
}

/// The preset name, or the custom specification.
pub(crate) fn layout_name(layout: &Layout) -> String {
    layout.to_string()
}

/// The full `T/D/M/S@EPOCH` specification, even for presets.
pub(crate) fn spec(layout: &Layout) -> String {
    format!(
        "{}/{}/{}/{}@{}",
        layout.timestamp_bits(),
        layout.datacenter_bits(),
        layout.machine_bits(),
        layout.sequence_bits(),
        layout.epoch_ms()
    )
}
