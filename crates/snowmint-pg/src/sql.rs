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
use snowmint::{Field, Layout, Parts, SnowflakeId};

use crate::{errors, fleet_settings, issue, time};

/// A layout argument: `twitter`, `discord` or `T/D/M/S@EPOCH`.
fn layout_arg(text: &str) -> Result<Layout, ErrorReport> {
    text.trim()
        .parse::<Layout>()
        .map_err(|error| errors::from_core_about(Some("layout"), error))
}

/// An ID argument: 0 ..= 2^63-1.
fn id_arg(value: i64) -> Result<SnowflakeId, ErrorReport> {
    SnowflakeId::from_i64(value).map_err(errors::from_core)
}

/// A field argument, checked against the layout.
fn field_arg(layout: Layout, field: Field, value: i32) -> Result<u64, ErrorReport> {
    snowmint::value::check_bounded(field.name(), value, 0..=layout.max(field))
        .map_err(errors::from_core)
}

/// A decoded field as an `int`.
fn int(field: Field, value: u64) -> Result<i32, ErrorReport> {
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
    issue::next_id().map(SnowflakeId::as_i64)
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
    let id = id_arg(snowflake)?;
    let parts = layout.decode(id);
    Ok(TableIterator::once((
        snowflake,
        time::from_unix_ms(parts.timestamp_ms)?,
        parts.timestamp_ms,
        int(Field::Datacenter, parts.datacenter)?,
        int(Field::Machine, parts.machine)?,
        int(Field::Sequence, parts.sequence)?,
    )))
}

/// When an ID was made.
#[pg_extern(immutable, parallel_safe)]
fn to_timestamp(
    id: i64,
    layout: default!(&str, "'twitter'"),
) -> Result<TimestampWithTimeZone, ErrorReport> {
    let layout = layout_arg(layout)?;
    time::from_unix_ms(layout.timestamp_ms(id_arg(id)?))
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
    Ok(range.start().as_i64())
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
        range.start().as_i64(),
        range.end().as_i64(),
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
    let parts = Parts {
        timestamp_ms: time::to_unix_ms("time", time)?,
        datacenter: field_arg(layout, Field::Datacenter, datacenter)?,
        machine: field_arg(layout, Field::Machine, machine)?,
        sequence: field_arg(layout, Field::Sequence, sequence)?,
    };
    layout
        .encode(parts)
        .map(SnowflakeId::as_i64)
        .map_err(errors::from_core)
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
            Some(int(Field::Datacenter, node.datacenter)?),
            Some(int(Field::Machine, node.machine)?),
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
