//! `snowmint layout`.

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use snowmint::{Clock, SystemClock};
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

  $ snowmint layout --layout discord --format json
  {\"layout\":\"discord\",\"spec\":\"time:42/worker:5:node/process:5:node/increment:12:sequence@1420070400000\",\"epoch_ms\":1420070400000,\"epoch\":\"2015-01-01T00:00:00.000Z\",\"timestamp_bits\":42,\"datacenter_bits\":5,\"machine_bits\":5,\"sequence_bits\":12,\"timestamp_shift\":22,\"datacenter_shift\":17,\"machine_shift\":12,\"max_datacenter\":31,\"max_machine\":31,\"max_sequence\":4095,\"ids_per_ms\":4096,\"node_count\":1024,\"last_instant_ms\":5818116911103,\"last_instant\":\"2154-05-15T07:35:11.103Z\",\"years_left\":127.45,\"fields\":[{\"name\":\"timestamp\",\"bits\":42,\"shift\":22,\"max\":4398046511103},{\"name\":\"worker\",\"bits\":5,\"shift\":17,\"max\":31},{\"name\":\"process\",\"bits\":5,\"shift\":12,\"max\":31},{\"name\":\"increment\",\"bits\":12,\"shift\":0,\"max\":4095}]}

A layout is a preset (twitter, discord, instagram, sonyflake, baidu,
tsid...), the four widths timestamp/datacenter/machine/sequence adding up
to 63, or named fields most significant first
(time:39/sequence:8/machine:16), any of them optionally with @EPOCH and
,UNIT (1us to 1s, such as 10ms); --epoch replaces the epoch of any of
them. An epoch is Unix milliseconds or an RFC 3339 time.")]
pub struct LayoutArgs {
    /// Text for people, or JSON.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// `--layout` and `--epoch`.
    #[command(flatten)]
    pub global: Global,
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
        if field.name == "timestamp" {
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
