//! The SQL functions of schema `snowmint`.
//!
//! Each reads its arguments with the core's rules and turns the core's
//! errors into SQL errors (see `errors.rs`). Volatility says what each
//! depends on: the calculator functions depend on their arguments only
//! (IMMUTABLE; the layout is an argument, `twitter` unless given),
//! `next_id()` and `node()` on the server's state (VOLATILE).

#![forbid(unsafe_code)]

use pgrx::datum::TimestampWithTimeZone;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::{AnyNumeric, JsonB};
use snowmint::{Layout, SnowflakeId};

use crate::{errors, fleet_settings, issue, time};

/// A layout argument: a preset (`twitter`, `sonyflake`...), `T/D/M/S@EPOCH`
/// or a layout text.
fn layout_arg(text: &str) -> Result<Layout, ErrorReport> {
    text.trim()
        .parse::<Layout>()
        .map_err(|error| errors::from_core_about(Some("layout"), error))
}

/// An ID argument: 0 ..= 2^63-1, an ID of `layout`.
fn id_arg(layout: &Layout, value: i64) -> Result<SnowflakeId, ErrorReport> {
    match u64::try_from(value) {
        Ok(raw) => layout.check_id(SnowflakeId::from_u64(raw)),
        // A negative bigint: the message names the layout's range.
        Err(_) => layout.parse_id(snowmint::Encoding::Decimal, &value.to_string()),
    }
    .map_err(errors::from_core)
}

/// An ID as a `bigint` (an ID of a 64-bit layout may not fit one).
fn bigint(id: SnowflakeId) -> Result<i64, ErrorReport> {
    i64::try_from(id).map_err(errors::from_core)
}

/// A field argument, checked against its range: the node as two numbers
/// (`datacenter`, `machine`: see `Layout::node_from_pair`) and the
/// sequence.
fn field_arg(layout: &Layout, name: &'static str, value: i32) -> Result<u64, ErrorReport> {
    let (upper, lowest) = layout.pair_max();
    let max = match name {
        "datacenter" => upper,
        "machine" => lowest,
        _ => layout.sequence_field().map_or(0, |f| f.max()),
    };
    snowmint::value::check_bounded(name, value, 0..=max).map_err(errors::from_core)
}

/// A decoded field as an `int`.
fn int(field: &str, value: u64) -> Result<i32, ErrorReport> {
    i32::try_from(value).map_err(|_| {
        errors::out_of_range(format!(
            "{field} {value} does not fit an int (the layout's field is wider than 31 bits)"
        ))
    })
}

/// The next ID of this server's one generator: use it as a column default,
/// `id bigint PRIMARY KEY DEFAULT snowmint.next_id()`.
#[pg_extern(volatile)]
fn next_id() -> Result<i64, ErrorReport> {
    issue::next_id().and_then(bigint)
}

/// The fields of an ID.
#[allow(clippy::type_complexity)]
#[pg_extern(immutable, parallel_safe)]
fn decode(
    snowflake: i64,
    layout: default!(&str, "'twitter'"),
) -> Result<
    TableIterator<
        'static,
        (
            name!(id, i64),
            name!(time, TimestampWithTimeZone),
            name!(timestamp_ms, i64),
            name!(datacenter, i32),
            name!(machine, i32),
            name!(sequence, i32),
        ),
    >,
    ErrorReport,
> {
    let layout = layout_arg(layout)?;
    let id = id_arg(&layout, snowflake)?;
    let parts = layout.decode(id).map_err(errors::from_core)?;
    let (datacenter, machine) = layout.pair_of(parts.node());
    let sequence = layout
        .sequence_field()
        .map_or(0, |f| f.value_in(id.as_u64()));
    Ok(TableIterator::once((
        snowflake,
        time::from_unix_ms(parts.time_ms())?,
        parts.time_ms(),
        int("datacenter", datacenter)?,
        int("machine", machine)?,
        int("sequence", sequence)?,
    )))
}

/// The fields of an ID of any layout, by the family's names for them, as
/// `jsonb` (`{"worker": 1, "process": 0, "increment": 7}` for Discord),
/// with its time at the layout's unit. The ID is a `numeric`: a Discord ID
/// at or above 2^63 does not fit a `bigint`, and any `bigint` casts to
/// `numeric` by itself.
#[allow(clippy::type_complexity)]
#[pg_extern(immutable, parallel_safe)]
fn decode_fields(
    snowflake: AnyNumeric,
    layout: default!(&str, "'twitter'"),
) -> Result<
    TableIterator<
        'static,
        (
            name!(id, AnyNumeric),
            name!(time, TimestampWithTimeZone),
            name!(timestamp_ms, i64),
            name!(fields, JsonB),
        ),
    >,
    ErrorReport,
> {
    let layout = layout_arg(layout)?;
    // The core reads the decimal text, with its messages: a fraction or a
    // value past the layout's largest ID names the layout's range.
    let id = layout
        .parse_id(snowmint::Encoding::Decimal, &snowflake.to_string())
        .map_err(errors::from_core)?;
    let parts = layout.decode(id).map_err(errors::from_core)?;
    let fields: serde_json::Map<String, serde_json::Value> = parts
        .values()
        .map(|(field, value)| (field.name().to_owned(), value.into()))
        .collect();
    Ok(TableIterator::once((
        AnyNumeric::from(id.as_u64()),
        time::from_unix_ms(parts.time_ms())?,
        parts.time_ms(),
        JsonB(serde_json::Value::Object(fields)),
    )))
}

/// The ID of any layout made of a time and fields given by the family's
/// names for them in a `jsonb` object (`'{"worker": 1, "increment": 7}'`
/// for Discord; `datacenter`, `machine` and `sequence` name the node and
/// sequence of every layout), as a `numeric` (a Discord ID may not fit a
/// `bigint`). A field not given is 0.
#[pg_extern(immutable, parallel_safe)]
fn encode_fields(
    time: TimestampWithTimeZone,
    fields: JsonB,
    layout: default!(&str, "'twitter'"),
) -> Result<AnyNumeric, ErrorReport> {
    let layout = layout_arg(layout)?;
    let unix_ms = time::to_unix_ms("time", time)?;
    let serde_json::Value::Object(object) = fields.0 else {
        return Err(errors::invalid(format!(
            "fields {} is not a JSON object of field names and values",
            fields.0
        )));
    };
    let mut given = Vec::with_capacity(object.len());
    for (name, value) in &object {
        // The core reads the number's text, with its messages (`worker 32
        // is out of range (0..=31)`, `worker -1 ...`, `worker "x" is not a
        // number ...`).
        let text = match value {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        given.push((
            name.as_str(),
            layout.parse_named(name, &text).map_err(errors::from_core)?,
        ));
    }
    let id = layout
        .encode_named(unix_ms.saturating_mul(1000), &given)
        .map_err(errors::from_core)?;
    Ok(AnyNumeric::from(id.as_u64()))
}

/// When an ID was made.
#[pg_extern(immutable, parallel_safe)]
fn to_timestamp(
    id: i64,
    layout: default!(&str, "'twitter'"),
) -> Result<TimestampWithTimeZone, ErrorReport> {
    let layout = layout_arg(layout)?;
    time::from_unix_ms(layout.timestamp_ms(id_arg(&layout, id)?))
}

/// The smallest ID of the millisecond of `time`.
#[pg_extern(immutable, parallel_safe)]
fn from_timestamp(
    time: TimestampWithTimeZone,
    layout: default!(&str, "'twitter'"),
) -> Result<i64, ErrorReport> {
    let layout = layout_arg(layout)?;
    let unix_ms = time::to_unix_ms("time", time)?;
    let range = layout
        .id_range(unix_ms, unix_ms)
        .map_err(errors::from_core)?;
    bigint(*range.start())
}

/// The smallest and the largest ID of the window `from_time ..= to_time`
/// (whole milliseconds), for `WHERE id BETWEEN min AND max`.
#[pg_extern(immutable, parallel_safe)]
fn id_range(
    from_time: TimestampWithTimeZone,
    to_time: TimestampWithTimeZone,
    layout: default!(&str, "'twitter'"),
) -> Result<TableIterator<'static, (name!(min, i64), name!(max, i64))>, ErrorReport> {
    let layout = layout_arg(layout)?;
    let from_ms = time::to_unix_ms("from_time", from_time)?;
    let to_ms = time::to_unix_ms("to_time", to_time)?;
    let range = layout.id_range(from_ms, to_ms).map_err(errors::from_core)?;
    Ok(TableIterator::once((
        bigint(*range.start())?,
        bigint(*range.end())?,
    )))
}

/// The ID made of these fields.
#[pg_extern(immutable, parallel_safe)]
fn encode(
    time: TimestampWithTimeZone,
    datacenter: i32,
    machine: i32,
    sequence: i32,
    layout: default!(&str, "'twitter'"),
) -> Result<i64, ErrorReport> {
    let layout = layout_arg(layout)?;
    let id = layout
        .encode_pair(
            time::to_unix_ms("time", time)?,
            field_arg(&layout, "datacenter", datacenter)?,
            field_arg(&layout, "machine", machine)?,
            field_arg(&layout, "sequence", sequence)?,
        )
        .map_err(errors::from_core)?;
    bigint(id)
}

/// This server's node and how it has it: the node (NULL while none is
/// held), layout, clock policy and high-water mark (NULL before the first
/// ID); where the node comes from (`static`, or the coordinator's kind:
/// `etcd`, `zookeeper`, `postgres`), whether `next_id()` may issue now and
/// if not why; for a claimed node the claim's generation and deadline, the
/// coordinator (its password as `***`; NULL, and hidden in the reason, for
/// a role that may not read `snowmint.coordinator`) and the fleet.
#[allow(clippy::type_complexity)]
#[pg_extern(volatile)]
fn node() -> Result<
    TableIterator<
        'static,
        (
            name!(datacenter, Option<i32>),
            name!(machine, Option<i32>),
            name!(slot, Option<i64>),
            name!(layout, String),
            name!(clock_policy, String),
            name!(high_water_ms, Option<i64>),
            name!(high_water, Option<TimestampWithTimeZone>),
            name!(source, String),
            name!(ready, bool),
            name!(reason, Option<String>),
            name!(generation, Option<i64>),
            name!(valid_until, Option<TimestampWithTimeZone>),
            name!(coordinator, Option<String>),
            name!(fleet, Option<String>),
        ),
    >,
    ErrorReport,
> {
    let view = issue::node_view()?;
    let settings = view.settings;
    let layout = settings.layout;
    let (datacenter, machine, slot) = match view.node {
        Some(node) => (
            Some(int("datacenter", layout.pair_of(node).0)?),
            Some(int("machine", layout.pair_of(node).1)?),
            layout
                .slot_of(node)
                .ok()
                .and_then(|slot| i64::try_from(slot).ok()),
        ),
        None => (None, None, None),
    };
    let high_water = view.mark_ms.map(time::from_unix_ms).transpose()?;
    let valid_until = view.valid_until_ms.map(time::from_unix_ms).transpose()?;
    let source = settings
        .fleet
        .as_ref()
        .map_or("static", |fleet| fleet.url.kind());
    Ok(TableIterator::once((
        datacenter,
        machine,
        slot,
        layout.name().map_or_else(|| layout.spec(), str::to_owned),
        settings.policy.name().to_owned(),
        view.mark_ms,
        high_water,
        source.to_owned(),
        view.reason.is_none(),
        view.reason.as_deref().map(fleet_settings::for_caller),
        view.generation.and_then(|g| i64::try_from(g).ok()),
        valid_until,
        fleet_settings::coordinator_for_caller(),
        settings.fleet.as_ref().map(|fleet| fleet.fleet.to_string()),
    )))
}
