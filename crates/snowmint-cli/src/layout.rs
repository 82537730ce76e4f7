//! `snowmint layout`.

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use snowmint::{Clock, Field, SystemClock};
use snowmint_server::body::{LayoutDescription, MS_PER_YEAR};

use crate::Global;
use crate::values::Format;

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

/// Runs `snowmint layout`.
pub fn run(args: LayoutArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let layout = global.layout()?;
    // The same description as the service's `GET /v1/layout`.
    let description = LayoutDescription::new(&layout, SystemClock.now_ms());
    let text = match args.format {
        Format::Text => as_text(&description),
        Format::Json => format!("{}\n", serde_json::to_string(&description)?),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn as_text(d: &LayoutDescription) -> String {
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
