//! `snowmint`: the Snowflake ID calculator and service.
//!
//! Thin over the libraries: each subcommand is a module that parses its
//! arguments and calls `snowmint` (or `snowmint-server` for `serve`).
//!
//! - `failure.rs`: how errors become messages and exit codes (2 for bad
//!   input, 1 for the rest, 0 for a closed pipe).
//! - `values.rs`: reading numbers, instants and encodings from arguments.
//! - `records.rs`: the fast writer of decoded IDs (text, JSON, TSV, CSV).

use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};
use snowmint::Layout;

use crate::failure::BadInput;

mod completions;
mod decode;
mod encode;
mod failure;
mod generate;
mod layout;
mod range;
mod records;
mod serve;
mod values;

/// Read, build and generate Twitter-style Snowflake IDs.
///
/// An ID is a 63-bit integer: a millisecond timestamp since the layout's
/// epoch, a datacenter, a machine and a per-millisecond sequence. The
/// default layout is Twitter's (41/5/5/12 bits, epoch 1288834974657).
#[derive(Debug, Parser)]
#[command(
    name = "snowmint",
    version,
    propagate_version = true,
    after_help = "\
Examples:
  snowmint decode 1724551110457221119
  snowmint encode --timestamp 2023-11-14T22:13:20Z \\
                  --datacenter 7 --machine 13 --sequence 4095
  snowmint range --from 2024-01-01T00:00:00Z --to 2024-01-31T23:59:59.999Z
  snowmint generate --datacenter 1 --machine 2 --count 5
  grep -o '[0-9]\\{19\\}' app.log | snowmint decode --format tsv"
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Options every command takes.
#[derive(Debug, Clone, Args)]
struct Global {
    /// The ID layout: twitter, discord, or widths T/D/M/S, each optionally with @EPOCH.
    #[arg(
        long,
        global = true,
        default_value = "twitter",
        env = "SNOWMINT_LAYOUT",
        help_heading = "Layout",
        value_parser = values::layout_name
    )]
    layout: String,
    /// A custom epoch on top of the layout: Unix milliseconds or RFC 3339.
    #[arg(
        long,
        global = true,
        env = "SNOWMINT_EPOCH",
        value_name = "MS",
        allow_negative_numbers = true,
        help_heading = "Layout",
        value_parser = values::epoch_ms
    )]
    epoch: Option<i64>,
}

impl Global {
    /// The layout these options name: the preset or custom widths, with
    /// `--epoch` on top when given.
    fn layout(&self) -> Result<Layout, BadInput> {
        let layout: Layout = self.layout.parse()?;
        Ok(match self.epoch {
            Some(epoch_ms) => layout.with_epoch(epoch_ms)?,
            None => layout,
        })
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build an ID from its parts.
    Encode(encode::EncodeArgs),
    /// Explain IDs: time, datacenter, machine, sequence.
    Decode(decode::DecodeArgs),
    /// Make new IDs with the real generator.
    Generate(generate::GenerateArgs),
    /// The smallest and largest ID of a time window.
    Range(range::RangeArgs),
    /// Describe the layout: widths, epoch, capacity, last instant.
    Layout(layout::LayoutArgs),
    /// Run the HTTP ID service.
    Serve(serve::ServeArgs),
    /// Print a shell completion script.
    Completions(completions::CompletionsArgs),
}

impl Command {
    /// The subcommand's name, as typed.
    fn name(&self) -> &'static str {
        match self {
            Command::Encode(_) => "encode",
            Command::Decode(_) => "decode",
            Command::Generate(_) => "generate",
            Command::Range(_) => "range",
            Command::Layout(_) => "layout",
            Command::Serve(_) => "serve",
            Command::Completions(_) => "completions",
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let name = cli.command.name();
    let result = match cli.command {
        Command::Encode(args) => encode::run(args, &cli.global),
        Command::Decode(args) => decode::run(args, &cli.global),
        Command::Generate(args) => generate::run(args, &cli.global),
        Command::Range(args) => range::run(args, &cli.global),
        Command::Layout(args) => layout::run(args, &cli.global),
        Command::Serve(args) => serve::run(args, &cli.global),
        Command::Completions(args) => completions::run(args, Cli::command()),
    };
    match result {
        Ok(code) => code,
        Err(error) => failure::report(&error, &usage_of(name)),
    }
}

/// The usage line of a subcommand, as clap writes it under its own errors.
fn usage_of(name: &str) -> String {
    let mut command = Cli::command();
    command.build();
    command
        .find_subcommand_mut(name)
        .map(|sub| sub.render_usage().to_string())
        .unwrap_or_default()
}
