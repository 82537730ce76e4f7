//! `snowmint`: the Snowflake ID calculator and service.
//!
//! Thin over the libraries: each subcommand is a module that parses its
//! arguments and calls `snowmint` (or `snowmint-server` for `serve`).

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod decode;
mod encode;
mod generate;
mod layout;
mod range;
mod serve;

/// Read, build and generate Twitter-style Snowflake IDs.
#[derive(Debug, Parser)]
#[command(name = "snowmint", version, propagate_version = true)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Options every command takes.
#[derive(Debug, Clone, Args)]
struct Global {
    /// The ID layout: twitter, discord, or widths T/D/M/S[@EPOCH].
    #[arg(
        long,
        global = true,
        default_value = "twitter",
        env = "SNOWMINT_LAYOUT"
    )]
    layout: String,
    /// A custom epoch in Unix milliseconds, on top of the layout.
    #[arg(long, global = true, env = "SNOWMINT_EPOCH")]
    epoch: Option<i64>,
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Encode(args) => encode::run(args, &cli.global),
        Command::Decode(args) => decode::run(args, &cli.global),
        Command::Generate(args) => generate::run(args, &cli.global),
        Command::Range(args) => range::run(args, &cli.global),
        Command::Layout(args) => layout::run(args, &cli.global),
        Command::Serve(args) => serve::run(args, &cli.global),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
