//! `snowmint encode`.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use snowmint::Encoding;

use crate::Global;
use crate::values::{self, EncodingParser};

/// Arguments of `snowmint encode`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  $ snowmint encode --timestamp 1700000000000 --datacenter 7 --machine 13 \\
                    --sequence 4095
  1724551110457221119

  $ snowmint encode --timestamp 2023-11-14T23:13:20+01:00 \\
                    --datacenter 7 --machine 13 --sequence 4095 --output hex
  17eed6190fcedfff

  $ snowmint encode --timestamp now --datacenter 0 --machine 0 --sequence 0
  2127421958474694656

  $ snowmint encode --layout discord --timestamp 2016-04-30T11:18:25.796Z \\
                    --field worker=1 --field process=0 --field increment=7
  175928847299117063

  $ snowmint encode --layout sonyflake --timestamp 2023-11-14T22:13:20Z \\
                    --machine 513
  487328464240640513

Fields not given are 0. --field names any field by the layout's own name
(`snowmint layout --layout NAME` lists them); --datacenter, --machine and
--sequence name the fields of those names, else the lowest node field
(--machine), the node fields above it (--datacenter) and the sequence
field. The time is rounded down to the layout's unit (10 ms for
Sonyflake); RFC 3339 times keep microseconds for layouts that count them.")]
pub struct EncodeArgs {
    /// When: Unix milliseconds, an RFC 3339 time (any offset, optional
    /// fraction), or `now`.
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    timestamp: String,
    /// The datacenter id (0..=31 in the default layout).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    datacenter: Option<String>,
    /// The machine id (0..=31 in the default layout).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    machine: Option<String>,
    /// The sequence number within the tick (0..=4095 in the default
    /// layout).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    sequence: Option<String>,
    /// A field by the layout's name for it (repeatable): `worker=1`.
    #[arg(
        long = "field",
        value_name = "NAME=VALUE",
        allow_negative_numbers = true
    )]
    fields: Vec<String>,
    /// How to write the ID.
    #[arg(long, value_name = "ENCODING", default_value = "decimal", value_parser = EncodingParser)]
    output: Encoding,
    /// `--layout` and `--epoch`.
    #[command(flatten)]
    pub global: Global,
}

/// Runs `snowmint encode`.
pub fn run(args: EncodeArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let layout = global.layout()?;
    let time_us = values::instant_us("timestamp", &args.timestamp)?;
    let legacy = [
        ("datacenter", &args.datacenter),
        ("machine", &args.machine),
        ("sequence", &args.sequence),
    ];
    let given = values::given_fields(&legacy, &args.fields)?;
    let named = values::named_values(&layout, &given)?;
    let id = layout
        .encode_named(time_us, &values::as_pairs(&named))
        .map_err(crate::failure::Failure::from)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", id.encode(args.output))?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
