//! `snowmint range`.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use snowmint::{Encoding, SnowflakeId, decimal_prefixes, format_time};

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

  $ snowmint range --from 2023-11-14T22:13:20Z --to 2023-11-14T22:13:20.999Z \\
                   --cursor
  from    2023-11-14T22:13:20.000Z
  to      2023-11-14T22:13:20.999Z
  min     1724551110456246272
  max     1724551114650550271
  after   1724551110456246271
  before  1724551114650550272

  $ snowmint range --from 2023-11-14T22:13:20Z --to 2023-11-14T22:13:20.999Z \\
                   --prefixes | grep -c prefix
  79

Both ends are included, to the millisecond: every ID made in the window is
in min..=max, so `WHERE id BETWEEN min AND max` selects the rows created in
it. For a half-open window [a, b), give --to one millisecond before b.

--cursor adds the IDs just outside the window, for paginated APIs that take
an exclusive bound: `after` is the largest ID before it (Discord's `after=`,
X/Twitter's `since_id=`), `before` the smallest after it (Discord's
`before=`, X/Twitter's `until_id=`); either is left out where the layout has
no such ID.

--prefixes adds the shortest list of decimal prefixes whose IDs are exactly
the window's, one `prefix` line each with the number of digits its IDs have
(in JSON: {\"prefix\", \"digits\"}): a search for IDs that start with any of
them finds the window's IDs and no others. Prefixes are decimal whatever
--output says.")]
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
    /// Also the IDs just outside the window (`after`, `before`), for
    /// paginated APIs.
    #[arg(long)]
    cursor: bool,
    /// Also the shortest decimal prefixes whose IDs are exactly the
    /// window's, for searching text.
    #[arg(long)]
    prefixes: bool,
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
    /// With --cursor: the largest ID before the window (null: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    after: Option<Option<String>>,
    /// With --cursor: the smallest ID after the window (null: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    before: Option<Option<String>>,
    /// With --prefixes: the window's decimal prefixes.
    #[serde(skip_serializing_if = "Option::is_none")]
    prefixes: Option<Vec<PrefixJson>>,
}

/// A decimal prefix and how many digits its IDs have.
#[derive(serde::Serialize)]
struct PrefixJson {
    prefix: String,
    digits: u8,
}

/// Runs `snowmint range`.
pub fn run(args: RangeArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let layout = global.layout()?;
    let from_ms = values::instant("from", &args.from)?;
    let to_ms = values::instant("to", &args.to)?;
    let range = layout.id_range(from_ms, to_ms).map_err(Failure::from)?;
    let encoding = args.output;
    let (min, max) = (range.start().encode(encoding), range.end().encode(encoding));
    // The IDs just outside the window, where the layout has them.
    let (first, last) = (range.start().as_u64(), range.end().as_u64());
    let largest = layout.max_id().as_u64();
    let after = first.checked_sub(1).map(|id| encoded(id, encoding));
    let before = (last < largest).then(|| encoded(last + 1, encoding));
    let prefixes = args.prefixes.then(|| decimal_prefixes(first, last));
    let text = match args.format {
        Format::Text => {
            // Keys and values in two columns, as wide as the longest key.
            let mut lines = vec![
                ("from", format_time(from_ms).to_string()),
                ("to", format_time(to_ms).to_string()),
                ("min", min.to_string()),
                ("max", max.to_string()),
            ];
            if args.cursor {
                lines.extend(after.clone().map(|after| ("after", after)));
                lines.extend(before.clone().map(|before| ("before", before)));
            }
            for prefix in prefixes.iter().flatten() {
                lines.push(("prefix", format!("{prefix} ({} digits)", prefix.digits())));
            }
            let width = lines.iter().map(|(key, _)| key.len()).max().unwrap_or(0) + 2;
            lines
                .iter()
                .map(|(key, value)| format!("{key:width$}{value}\n"))
                .collect::<String>()
        }
        Format::Json => {
            let json = RangeJson {
                from: format_time(from_ms).to_string(),
                from_ms,
                to: format_time(to_ms).to_string(),
                to_ms,
                min: min.as_str(),
                max: max.as_str(),
                after: args.cursor.then(|| after.clone()),
                before: args.cursor.then(|| before.clone()),
                prefixes: prefixes.map(|prefixes| {
                    prefixes
                        .iter()
                        .map(|p| PrefixJson {
                            prefix: p.to_string(),
                            digits: p.digits(),
                        })
                        .collect()
                }),
            };
            format!("{}\n", serde_json::to_string(&json)?)
        }
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `id` in `encoding`.
fn encoded(id: u64, encoding: Encoding) -> String {
    SnowflakeId::from_u64(id).encode(encoding).to_string()
}
