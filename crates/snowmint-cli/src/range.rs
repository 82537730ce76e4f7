//! `snowmint range`.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use snowmint::{Encoding, format_time};

use crate::Global;
use crate::failure::Failure;
use crate::values::{self, EncodingParser, Format};

/// Arguments of `snowmint range`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  $ snowmint range --from 2023-11-14T22:13:20Z --to 2023-11-14T22:13:20.999Z
  from  2023-11-14T22:13:20.000Z
  to    2023-11-14T22:13:20.999Z
  min   1724551110456246272
  max   1724551114650550271

  $ snowmint range --format json \\
                   --from 2024-01-01T00:00:00Z --to 2024-01-31T23:59:59.999Z
  {\"from\":\"2024-01-01T00:00:00.000Z\",\"from_ms\":1704067200000,\"to\":\"2024-01-31T23:59:59.999Z\",\"to_ms\":1706745599999,\"min\":\"1741610183685046272\",\"max\":\"1752844207518646271\"}

  $ snowmint range --from 1700000000000 --to now
  from  2023-11-14T22:13:20.000Z
  to    2024-06-01T12:00:00.000Z
  min   1724551110456246272
  max   1796874333193240575

Both ends are included, to the millisecond: every ID made in the window is
in min..=max, so `WHERE id BETWEEN min AND max` selects the rows created in
it. For a half-open window [a, b), give --to one millisecond before b.")]
pub struct RangeArgs {
    /// Start of the window: Unix milliseconds, RFC 3339, or `now`.
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    from: String,
    /// End of the window, included: Unix milliseconds, RFC 3339, or `now`.
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    to: String,
    /// Text for people, or JSON (IDs as strings).
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// How to write the IDs.
    #[arg(long, value_name = "ENCODING", default_value = "decimal", value_parser = EncodingParser)]
    output: Encoding,
    /// `--layout` and `--epoch`.
    #[command(flatten)]
    pub global: Global,
}

/// The JSON form of a range.
#[derive(serde::Serialize)]
struct RangeJson<'a> {
    from: String,
    from_ms: i64,
    to: String,
    to_ms: i64,
    /// The smallest ID of the window, as a string like every ID in JSON.
    min: &'a str,
    /// The largest.
    max: &'a str,
}

/// Runs `snowmint range`.
pub fn run(args: RangeArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let layout = global.layout()?;
    let from_ms = values::instant("from", &args.from)?;
    let to_ms = values::instant("to", &args.to)?;
    let range = layout.id_range(from_ms, to_ms).map_err(Failure::from)?;
    let encoding = args.output;
    let (min, max) = (range.start().encode(encoding), range.end().encode(encoding));
    let text = match args.format {
        Format::Text => format!(
            "from  {}\nto    {}\nmin   {min}\nmax   {max}\n",
            format_time(from_ms),
            format_time(to_ms)
        ),
        Format::Json => {
            let json = RangeJson {
                from: format_time(from_ms).to_string(),
                from_ms,
                to: format_time(to_ms).to_string(),
                to_ms,
                min: min.as_str(),
                max: max.as_str(),
            };
            format!("{}\n", serde_json::to_string(&json)?)
        }
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
