//! `snowmint layout`.

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use snowmint::{Clock, Layout, SystemClock};
use snowmint_server::body::{LayoutDescription, MS_PER_YEAR};

use crate::Global;
use crate::values::Format;

/// Arguments of `snowmint layout`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  $ snowmint layout
  layout        twitter
  epoch         1288834974657 (2010-11-04T01:42:54.657Z)
  last instant  3487858230208 (2080-07-10T17:30:30.208Z)
  years left    53.61

  field       bits  shift  max
  timestamp     41     22  2199023255551 ms (69.7 years)
  datacenter     5     17  31
  machine        5     12  31
  sequence      12      0  4095

  nodes         1024 (datacenter x machine)
  IDs per ms    4096 per node (4096000 per second)

  $ snowmint layout --layout 42/0/10/11@2024-01-01T00:00:00Z
  layout        42/0/10/11@1704067200000
  epoch         1704067200000 (2024-01-01T00:00:00.000Z)
  last instant  6102113711103 (2163-05-15T07:35:11.103Z)
  years left    136.45

  field       bits  shift  max
  timestamp     42     21  4398046511103 ms (139.4 years)
  datacenter     0     21  0
  machine       10     11  1023
  sequence      11      0  2047

  nodes         1024 (datacenter x machine)
  IDs per ms    2048 per node (2048000 per second)

  $ snowmint layout --list | head -6
  twitter: Twitter Snowflake (the default)
    time:41 datacenter:5 machine:5 sequence:12
    1ms since 2010-11-04T01:42:54.657Z until 2080; mints; not JS-safe
  discord: Discord snowflakes
    time:42 worker:5 process:5 increment:12
    1ms since 2015-01-01T00:00:00.000Z until 2154; mints; not JS-safe

--list describes every preset: its fields (most significant first, with
their widths), the unit and epoch of its time, the year its IDs run out,
whether every ID is below 2^53 (a JavaScript number holds it exactly), and
whether snowmint can mint it or only read it. With --format json, an
array of the descriptions --format json gives of one layout (the service's
GET /v1/layout), with each field's role, the unit, max_id, js_safe and
mintable.

A layout is a preset (twitter, discord, instagram, sonyflake, baidu,
tsid...), the four widths timestamp/datacenter/machine/sequence adding up
to 63, or named fields most significant first
(time:39/sequence:8/machine:16), any of them optionally with @EPOCH and
,UNIT (1us to 1s, such as 10ms); --epoch replaces the epoch of any of
them. An epoch is Unix milliseconds or an RFC 3339 time.")]
pub struct LayoutArgs {
    /// Describe every preset instead, one per line (JSON: an array).
    #[arg(long, conflicts_with_all = ["layout", "epoch"])]
    list: bool,
    /// Text for people, or JSON.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// `--layout` and `--epoch`.
    #[command(flatten)]
    pub global: Global,
}

/// Runs `snowmint layout`.
pub fn run(args: LayoutArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let now_ms = SystemClock.now_ms();
    let text = if args.list {
        let presets: Vec<LayoutDescription> = Layout::presets()
            .iter()
            .map(|preset| LayoutDescription::new(&preset.layout, now_ms))
            .collect();
        match args.format {
            Format::Text => list_as_text(&presets),
            Format::Json => format!("{}\n", serde_json::to_string(&presets)?),
        }
    } else {
        let layout = global.layout()?;
        // The same description as the service's `GET /v1/layout`.
        let description = LayoutDescription::new(&layout, now_ms);
        match args.format {
            Format::Text => as_text(&description),
            Format::Json => format!("{}\n", serde_json::to_string(&description)?),
        }
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Three lines per preset: its name and family; its fields, most
/// significant first, with their widths; its unit, epoch, the year of its
/// last instant, whether snowmint mints it and whether it is
/// JavaScript-safe.
fn list_as_text(presets: &[LayoutDescription]) -> String {
    let mut text = String::new();
    for d in presets {
        let _ = writeln!(
            text,
            "{}: {}",
            d.layout,
            d.family.as_deref().unwrap_or("custom")
        );
        let fields: Vec<String> = d
            .fields
            .iter()
            .map(|field| {
                // The time field is `timestamp` in the JSON, for the
                // clients of the four-field layouts.
                let name = if field.role == "time" {
                    "time"
                } else {
                    &field.name
                };
                format!("{name}:{}", field.bits)
            })
            .collect();
        let _ = writeln!(text, "  {}", fields.join(" "));
        // The year of the last instant: the RFC 3339 text before the `-`
        // that follows it (a year past 9999 has a sign and six digits).
        let digits = d.last_instant.trim_start_matches(['+', '0']);
        let year = digits.split('-').next().unwrap_or(digits);
        let _ = writeln!(
            text,
            "  {} since {} until {year}; {}; {}",
            d.unit,
            d.epoch,
            if d.mintable { "mints" } else { "reads only" },
            if d.js_safe { "JS-safe" } else { "not JS-safe" },
        );
    }
    text
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
        if field.role == "time" {
            if d.unit == "1ms" {
                let _ = write!(text, " ms ({span_years:.1} years)");
            } else {
                let _ = write!(text, " x {} ({span_years:.1} years)", d.unit);
            }
        }
        let _ = writeln!(text);
    }
    let _ = writeln!(text);
    let nodes: Vec<&str> = d
        .fields
        .iter()
        .filter(|field| field.role == "node")
        .map(|field| field.name.as_str())
        .collect();
    let nodes = if nodes.is_empty() {
        "no node field".to_owned()
    } else {
        nodes.join(" x ")
    };
    let _ = writeln!(text, "nodes         {} ({nodes})", d.node_count);
    let _ = writeln!(
        text,
        "IDs per ms    {} per node ({} per second)",
        d.ids_per_ms, d.ids_per_second
    );
    text
}
