//! `snowmint.inspect(text)`: the IDs of any text, a row per reading of each
//! token, most plausible first, as `snowmint inspect` and `/v1/inspect`
//! read them (the core's inspector).

#![forbid(unsafe_code)]

use pgrx::JsonB;
use pgrx::datum::TimestampWithTimeZone;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use snowmint::inspect::{Catalog, FieldValue, Inspector, Reading};

use crate::{errors, time};

/// A row: the token (its number from 1, where it is in bytes, its text and
/// context) and one of its readings (its rank from 1, family, time as
/// `timestamptz` and as exact text, plausibility, why, and the family's
/// fields as `jsonb`).
type Row = (
    i32,
    i32,
    i32,
    String,
    Option<String>,
    i32,
    String,
    Option<TimestampWithTimeZone>,
    Option<String>,
    String,
    String,
    JsonB,
);

/// The IDs of `text`, a row per reading of each ID-like token: pinned
/// first, where the place it was found names its family; implausible last,
/// where its time falls before its family began or more than a day after
/// `now`. Integers are read as every preset, or as `layout` alone.
#[allow(clippy::type_complexity)]
#[pg_extern(immutable, parallel_safe)]
fn inspect(
    text: &str,
    now: default!(TimestampWithTimeZone, "now()"),
    layout: default!(Option<&str>, "NULL"),
) -> Result<
    TableIterator<
        'static,
        (
            name!(token, i32),
            name!(token_start, i32),
            name!(token_end, i32),
            name!(input, String),
            name!(context, Option<String>),
            name!(rank, i32),
            name!(family, String),
            name!(time, Option<TimestampWithTimeZone>),
            name!(time_text, Option<String>),
            name!(plausibility, String),
            name!(why, String),
            name!(fields, JsonB),
        ),
    >,
    ErrorReport,
> {
    let now_ms = time::to_unix_ms("now", now)?;
    let catalog = match layout {
        Some(text) => {
            let layout = text
                .trim()
                .parse::<snowmint::Layout>()
                .map_err(|error| errors::from_core_about(Some("layout"), error))?;
            Catalog::from_layouts([(layout.name().unwrap_or("custom"), layout)])
        }
        None => Catalog::presets(),
    };
    let tokens = Inspector::with_catalog(catalog, now_ms)
        .inspect_all(text)
        .map_err(errors::from_core)?;
    let mut rows: Vec<Row> = Vec::new();
    for (number, token) in tokens.iter().enumerate() {
        let span = token.span();
        for (rank, reading) in token.candidates().iter().enumerate() {
            rows.push((
                count(number + 1),
                count(span.start),
                count(span.end),
                token.input().to_owned(),
                token.context().map(str::to_owned),
                count(rank + 1),
                reading.family().to_owned(),
                reading.time().and_then(|t| time::from_unix_us(t.unix_us())),
                reading.time().map(|t| t.to_string()),
                reading.plausibility().name().to_owned(),
                reading.why().to_owned(),
                JsonB(fields(reading)),
            ));
        }
    }
    Ok(TableIterator::new(rows))
}

/// A count or offset within a text of at most 1 MiB.
fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// The family's fields as a JSON object, by name, in the family's order.
fn fields(reading: &Reading) -> serde_json::Value {
    let mut object = serde_json::Map::new();
    for field in reading.fields() {
        let value = match &field.value {
            FieldValue::Number(n) => serde_json::Value::from(*n),
            FieldValue::Text(text) => serde_json::Value::from(text.as_str()),
        };
        object.insert(field.name.to_string(), value);
    }
    serde_json::Value::Object(object)
}
