//! `snowmint generate`.
//!
//! IDs are taken from the generator a millisecond's run at a time (one
//! compare-and-swap for up to 4096 IDs) and written out in big chunks, so
//! that the command runs at the format's ceiling of 4096 IDs per
//! millisecond: the time goes into waiting for the clock, not into output.

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use snowmint::{Clock, Encoding, Field, Generator, Node, SystemClock};

use crate::Global;
use crate::failure::Failure;
use crate::values::{self, EncodingParser};

/// Output chunk size.
const CHUNK: usize = 256 * 1024;

/// Most IDs taken from the generator at once: a millisecond's worth in the
/// default layout, and a bound on memory in layouts with wider sequences.
const RUN: usize = 4096;

/// From this many IDs on, a progress bar is worth showing (on a terminal).
const PROGRESS_FROM: u64 = 1_000_000;

/// Arguments of `snowmint generate`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  $ snowmint generate --datacenter 1 --machine 2
  2127421958474833920

  $ snowmint generate --datacenter 1 --machine 2 --count 3 --output base58
  5wTu3QQgMpb
  5wTu3QQgMpc
  5wTu3QQgMpd

  $ snowmint generate --datacenter 1 --machine 2 --count 1000000 > ids.txt
  $ wc -l < ids.txt
  1000000

IDs are strictly increasing. One node makes at most 4096 IDs per millisecond
(in the default layout), so a million IDs take about a quarter of a second.
Two processes generating at the same time need different --datacenter or
--machine values, or their IDs can collide.")]
pub struct GenerateArgs {
    /// The datacenter id of this node (0..=31 in the default layout).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    datacenter: String,
    /// The machine id of this node (0..=31 in the default layout).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    machine: String,
    /// How many IDs to make.
    #[arg(
        long,
        short = 'n',
        value_name = "N",
        default_value = "1",
        allow_negative_numbers = true
    )]
    count: String,
    /// How to write the IDs.
    #[arg(long, value_name = "ENCODING", default_value = "decimal", value_parser = EncodingParser)]
    output: Encoding,
}

/// Runs `snowmint generate`.
pub fn run(args: GenerateArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let layout = global.layout()?;
    let node = Node {
        datacenter: values::field_value(&layout, Field::Datacenter, &args.datacenter)?,
        machine: values::field_value(&layout, Field::Machine, &args.machine)?,
    };
    let count = values::count("count", &args.count, u64::MAX)?;
    let generator = Generator::new(layout, node).map_err(Failure::from)?;
    let encoding = args.output;

    let progress = progress_bar(count);
    let written = write_ids(&generator, count, encoding, progress.as_ref());
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    written?;
    Ok(ExitCode::SUCCESS)
}

/// Writes `count` new IDs to stdout, a line each.
fn write_ids(
    generator: &Generator,
    count: u64,
    encoding: Encoding,
    progress: Option<&ProgressBar>,
) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    let mut chunk = Vec::with_capacity(CHUNK + RUN * 32);
    let mut left = count;
    while left > 0 {
        let run = generator
            .next_run(left.min(RUN as u64) as usize)
            .map_err(clock_outside_layout)?;
        left -= run.len() as u64;
        for id in run {
            chunk.extend_from_slice(id.encode(encoding).as_str().as_bytes());
            chunk.push(b'\n');
        }
        if chunk.len() >= CHUNK {
            out.write_all(&chunk)?;
            chunk.clear();
            if let Some(bar) = progress {
                bar.set_position(count - left);
            }
        }
    }
    out.write_all(&chunk)?;
    out.flush()?;
    Ok(())
}

/// A generator error, with the clock's time when the clock is outside what
/// the layout (or `--epoch`) can hold: a matter of the arguments (exit code
/// 2), where a clock gone back is not (1); [`Failure::from`] says which.
fn clock_outside_layout(error: snowmint::Error) -> Failure {
    let about_the_time = error.subject() == Some("timestamp");
    let failure = Failure::from(error);
    if about_the_time {
        let now = snowmint::format_time(SystemClock.now_ms());
        failure.with_hint(format!("the clock reads {now}"))
    } else {
        failure
    }
}

/// A progress bar on stderr, when the run is long and someone is watching.
fn progress_bar(count: u64) -> Option<ProgressBar> {
    if count < PROGRESS_FROM || !io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(count);
    let style =
        ProgressStyle::with_template("{bar:40} {human_pos}/{human_len} IDs  {per_sec}  eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}
