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
  2127421958474694656")]
pub struct EncodeArgs {
    /// When: Unix milliseconds, an RFC 3339 time (any offset, optional
    /// fraction), or `now`.
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    timestamp: String,
    /// The datacenter id (0..=31 in the default layout).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    datacenter: String,
    /// The machine id (0..=31 in the default layout).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    machine: String,
    /// The sequence number within the millisecond (0..=4095 in the default
    /// layout).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    sequence: String,
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
    let id = layout
        .encode_pair(
            values::instant("timestamp", &args.timestamp)?,
            values::field_value(&layout, "datacenter", &args.datacenter)?,
            values::field_value(&layout, "machine", &args.machine)?,
            values::field_value(&layout, "sequence", &args.sequence)?,
        )
        .map_err(crate::failure::Failure::from)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", id.encode(args.output))?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
