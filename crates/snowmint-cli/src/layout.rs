//! `snowmint layout`.

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;
use snowmint::{Clock, Field, Layout, SystemClock, format_time};

use crate::Global;
use crate::values::Format;

/// Milliseconds in a mean Gregorian year (365.2425 days).
const MS_PER_YEAR: f64 = 365.2425 * 86_400_000.0;

/// Arguments of `snowmint layout`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  $ snowmint layout
  $ snowmint layout --layout discord --format json
  $ snowmint layout --layout 42/0/10/11@2024-01-01T00:00:00Z

A layout is a preset (twitter, discord) or the four widths
timestamp/datacenter/machine/sequence adding up to 63, optionally with
@EPOCH; --epoch replaces the epoch of any of them. An epoch is Unix
milliseconds or an RFC 3339 time.")]
pub struct LayoutArgs {
    /// Text for people, or JSON.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// The JSON form of a layout.
#[derive(Serialize)]
struct LayoutJson {
    /// The preset's name, or the custom specification.
    layout: String,
    epoch_ms: i64,
    epoch: String,
    last_instant_ms: i64,
    last_instant: String,
    /// Mean Gregorian years from now until the last instant (negative once
    /// it has passed).
    years_left: f64,
    node_count: u64,
    ids_per_ms: u64,
    fields: Vec<FieldJson>,
}

#[derive(Serialize)]
struct FieldJson {
    name: &'static str,
    bits: u8,
    shift: u8,
    max: u64,
}

/// Runs `snowmint layout`.
pub fn run(args: LayoutArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let layout = global.layout()?;
    let description = describe(&layout, SystemClock.now_ms());
    let text = match args.format {
        Format::Text => as_text(&description),
        Format::Json => format!("{}\n", serde_json::to_string(&description)?),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn describe(layout: &Layout, now_ms: i64) -> LayoutJson {
    let field = |name: Field, bits: u8, shift: u8| FieldJson {
        name: name.name(),
        bits,
        shift,
        max: layout.max(name),
    };
    let years_left = (layout.last_instant_ms() - now_ms) as f64 / MS_PER_YEAR;
    LayoutJson {
        layout: layout.to_string(),
        epoch_ms: layout.epoch_ms(),
        epoch: format_time(layout.epoch_ms()).to_string(),
        last_instant_ms: layout.last_instant_ms(),
        last_instant: format_time(layout.last_instant_ms()).to_string(),
        years_left: (years_left * 100.0).round() / 100.0,
        node_count: layout.node_count(),
        ids_per_ms: layout.ids_per_ms(),
        fields: vec![
            field(
                Field::Timestamp,
                layout.timestamp_bits(),
                layout.timestamp_shift(),
            ),
            field(
                Field::Datacenter,
                layout.datacenter_bits(),
                layout.datacenter_shift(),
            ),
            field(
                Field::Machine,
                layout.machine_bits(),
                layout.machine_shift(),
            ),
            field(Field::Sequence, layout.sequence_bits(), 0),
        ],
    }
}

fn as_text(d: &LayoutJson) -> String {
    let span_years = (d.last_instant_ms - d.epoch_ms) as f64 / MS_PER_YEAR;
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(text, "layout        {}", d.layout);
    let _ = writeln!(text, "epoch         {} ({})", d.epoch_ms, d.epoch);
    let _ = writeln!(
        text,
        "last instant  {} ({})",
        d.last_instant_ms, d.last_instant
    );
    let _ = writeln!(text, "years left    {:.2}", d.years_left);
    let _ = writeln!(text);
    let _ = writeln!(text, "field       bits  shift  max");
    for field in &d.fields {
        let _ = write!(
            text,
            "{:<10}  {:>4}  {:>5}  {}",
            field.name, field.bits, field.shift, field.max
        );
        if field.name == Field::Timestamp.name() {
            let _ = write!(text, " ms ({span_years:.1} years)");
        }
        let _ = writeln!(text);
    }
    let _ = writeln!(text);
    let _ = writeln!(
        text,
        "nodes         {} (datacenter x machine)",
        d.node_count
    );
    let _ = writeln!(
        text,
        "IDs per ms    {} per node ({} per second)",
        d.ids_per_ms,
        d.ids_per_ms * 1000
    );
    text
}
