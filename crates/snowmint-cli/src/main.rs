//! `snowmint`: the Snowflake ID calculator and service.
//!
//! Thin over the libraries: each subcommand is a module that parses its
//! arguments and calls `snowmint` (or `snowmint-server` for `serve`).
//! Arguments are read with the core's parsers, so a bad number, instant,
//! layout or encoding gets the message it gets everywhere; `serve`'s
//! flags (and the coordinator's, for `whois` and `audit`) are made from the service's
//! setting declarations rather than written twice. Decoded IDs go out
//! through one fast writer (text, JSON, TSV, CSV), and every failure ends
//! the same way: its message on stderr and exit code 2 for bad input, 1
//! for the rest, 0 for a closed pipe.

use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use snowmint::Layout;
use snowmint_server::config::Setting;

use crate::failure::Failure;

mod audit;
mod completions;
mod decode;
mod encode;
mod failure;
mod generate;
mod inspect;
mod layout;
mod lines;
mod manpages;
mod page;
mod probe;
mod range;
mod records;
mod serve;
mod settings;
mod values;
mod whois;

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
  $ snowmint decode 1724551110457221119
  id          1724551110457221119
  timestamp   1700000000000
  time        2023-11-14T22:13:20.000Z
  datacenter  7
  machine     13
  sequence    4095

  $ snowmint decode --layout discord 175928847299117063
  id          175928847299117063
  timestamp   1462015105796
  time        2016-04-30T11:18:25.796Z
  worker      1
  process     0
  increment   7

  $ snowmint encode --timestamp 2023-11-14T22:13:20Z \\
                    --datacenter 7 --machine 13 --sequence 4095
  1724551110457221119

  $ snowmint range --from 2024-01-01T00:00:00Z --to 2024-01-31T23:59:59.999Z
  from  2024-01-01T00:00:00.000Z
  to    2024-01-31T23:59:59.999Z
  min   1741610183685046272
  max   1752844207518646271

  $ snowmint generate --datacenter 1 --machine 2 --count 3
  2127421958474833920
  2127421958474833921
  2127421958474833922

  $ grep -o '[0-9]\\{19\\}' app.log | snowmint decode --format csv
  id,timestamp_ms,time,datacenter,machine,sequence
  1724551110457221119,1700000000000,2023-11-14T22:13:20.000Z,7,13,4095
  1724551114651521024,1700000001000,2023-11-14T22:13:21.000Z,7,13,0

Other families (Discord, Instagram, Sonyflake, Baidu, TSID...) are read
with --layout NAME, and their fields named as the family names them;
`snowmint layout --list` lists them.

Each command's --help has more examples."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Options of the commands that read or make IDs (not of `probe` and
/// `completions`, where they would mean nothing): the service's global
/// settings (see `snowmint_server::config::Setting`), declared there with
/// their help and default.
#[derive(Debug, Clone, Args)]
struct Global {
    #[arg(
        long = Setting::Layout.long(),
        default_value = Setting::Layout.spec().default.text(),
        env = Setting::Layout.env(),
        value_name = Setting::Layout.spec().form.value_name(),
        help = Setting::Layout.help_line(),
        hide_env = true,
        hide_default_value = true,
        help_heading = "Layout"
    )]
    layout: String,
    #[arg(
        long = Setting::Epoch.long(),
        env = Setting::Epoch.env(),
        value_name = Setting::Epoch.spec().form.value_name(),
        allow_negative_numbers = true,
        help = Setting::Epoch.help_line(),
        hide_env = true,
        help_heading = "Layout"
    )]
    epoch: Option<String>,
    /// Where `--layout` and `--epoch` came from: the command line, the
    /// environment or the default (set from the one parse of the command
    /// line in `main`).
    #[arg(skip)]
    sources: Sources,
}

/// Where the global options' values came from.
#[derive(Debug, Clone, Copy, Default)]
struct Sources {
    layout: Option<ValueSource>,
    epoch: Option<ValueSource>,
}

impl Sources {
    /// The sources in `matches`, read where the subcommand's own values
    /// are.
    fn of(matches: &ArgMatches) -> Sources {
        let matches = matches.subcommand().map_or(matches, |(_, sub)| sub);
        Sources {
            layout: matches.value_source("layout"),
            epoch: matches.value_source("epoch"),
        }
    }
}

impl Global {
    /// The layout these options name: the preset or custom widths, with
    /// `--epoch` on top when given.
    fn layout(&self) -> Result<Layout, Failure> {
        values::layout(
            (&self.layout, self.sources.layout),
            (self.epoch.as_deref(), self.sources.epoch),
        )
    }

    /// `--layout` as typed on the command line, if it was.
    fn layout_flag(&self) -> Option<&str> {
        (self.sources.layout == Some(ValueSource::CommandLine)).then_some(self.layout.as_str())
    }

    /// `--epoch` as typed on the command line, if it was.
    fn epoch_flag(&self) -> Option<&str> {
        self.epoch
            .as_deref()
            .filter(|_| self.sources.epoch == Some(ValueSource::CommandLine))
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build an ID from its parts.
    Encode(encode::EncodeArgs),
    /// Explain IDs: time, datacenter, machine, sequence.
    Decode(decode::DecodeArgs),
    /// Read IDs out of any text (links, mentions, every family), ranked.
    Inspect(inspect::InspectArgs),
    /// Make new IDs with the real generator.
    Generate(generate::GenerateArgs),
    /// The smallest and largest ID of a time window.
    Range(range::RangeArgs),
    /// Describe the layout: widths, epoch, capacity, last instant.
    Layout(layout::LayoutArgs),
    /// Run the HTTP ID service.
    Serve(serve::ServeArgs),
    /// Which process of a fleet issued an ID (from the claim history).
    Whois(whois::WhoisArgs),
    /// Check a column of IDs for duplicates and IDs no node issued.
    Audit(audit::AuditArgs),
    /// Ask a running service whether it is ready (for health checks).
    Probe(probe::ProbeArgs),
    /// Write the calculator page as files that work from disk, no node.
    Page(page::PageArgs),
    /// Print a shell completion script.
    Completions(completions::CompletionsArgs),
    /// Write the manual pages of snowmint and its commands (for packagers).
    #[command(hide = true)]
    Manpages(manpages::ManpagesArgs),
}

impl Command {
    /// The subcommand's name, as typed.
    fn name(&self) -> &'static str {
        match self {
            Command::Encode(_) => "encode",
            Command::Decode(_) => "decode",
            Command::Inspect(_) => "inspect",
            Command::Generate(_) => "generate",
            Command::Range(_) => "range",
            Command::Layout(_) => "layout",
            Command::Serve(_) => "serve",
            Command::Whois(_) => "whois",
            Command::Audit(_) => "audit",
            Command::Probe(_) => "probe",
            Command::Page(_) => "page",
            Command::Completions(_) => "completions",
            Command::Manpages(_) => "manpages",
        }
    }

    /// The command's `--layout` and `--epoch`, if it takes them.
    fn global_mut(&mut self) -> Option<&mut Global> {
        match self {
            Command::Encode(args) => Some(&mut args.global),
            Command::Decode(args) => Some(&mut args.global),
            Command::Inspect(args) => Some(&mut args.global),
            Command::Generate(args) => Some(&mut args.global),
            Command::Range(args) => Some(&mut args.global),
            Command::Layout(args) => Some(&mut args.global),
            Command::Serve(args) => Some(&mut args.global),
            Command::Whois(args) => Some(&mut args.global),
            Command::Audit(args) => Some(&mut args.global),
            Command::Probe(_)
            | Command::Page(_)
            | Command::Completions(_)
            | Command::Manpages(_) => None,
        }
    }
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
    if let Some(global) = cli.command.global_mut() {
        global.sources = Sources::of(&matches);
    }
    let name = cli.command.name();
    let result = match cli.command {
        Command::Encode(args) => {
            let global = args.global.clone();
            encode::run(args, &global)
        }
        Command::Decode(args) => {
            let global = args.global.clone();
            decode::run(args, &global)
        }
        Command::Inspect(args) => {
            let global = args.global.clone();
            inspect::run(args, &global)
        }
        Command::Generate(args) => {
            let global = args.global.clone();
            generate::run(args, &global)
        }
        Command::Range(args) => {
            let global = args.global.clone();
            range::run(args, &global)
        }
        Command::Layout(args) => {
            let global = args.global.clone();
            layout::run(args, &global)
        }
        Command::Serve(args) => {
            let global = args.global.clone();
            serve::run(args, &global)
        }
        Command::Whois(args) => {
            let global = args.global.clone();
            whois::run(args, &global)
        }
        Command::Audit(args) => {
            let global = args.global.clone();
            audit::run(args, &global)
        }
        Command::Probe(args) => probe::run(args),
        Command::Page(args) => page::run(args),
        Command::Completions(args) => completions::run(args, Cli::command()),
        Command::Manpages(args) => manpages::run(args, Cli::command()),
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
