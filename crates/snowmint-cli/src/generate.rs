//! `snowmint generate`.
//!
//! IDs are minted through the fleet's issuer, as `snowmint serve` mints
//! them (docs/ARCHITECTURE.md §3): the node's lock in the state directory
//! (so that invocations on one node take turns instead of repeating each
//! other's IDs), and the durable high-water mark (so that a run after a
//! clock set back refuses instead of repeating an earlier run's IDs).
//! `--no-state` mints with a bare generator, for scratch use.
//!
//! IDs are taken a millisecond's run at a time (one compare-and-swap for
//! up to 4096 IDs) and written out in big chunks, so that the command runs
//! at the format's ceiling of 4096 IDs per millisecond: the time goes into
//! waiting for the clock, not into output.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use snowmint::{Clock, Encoding, ErrorKind, Generator, Layout, Node, SnowflakeId, SystemClock};
use snowmint_fleet::EmbeddedIssuer;

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

/// How far ahead of the clock the mark is reserved: short, so that the
/// next invocation on the node (which resumes after the mark) waits at
/// most this long; each step is one write of the state file.
const MARK_STEP: Duration = Duration::from_millis(10);

/// The longest `--lock-wait`.
const MAX_LOCK_WAIT: Duration = Duration::from_secs(3600);

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

  $ snowmint generate --layout sonyflake --machine 513
  649022593302528513

  $ snowmint generate --layout discord --field worker=1 --field process=0
  1460234009722925056

The node is given by its fields: --datacenter and --machine in the default
layout; in another layout, --field by the layout's own names for its node
fields (`snowmint layout --layout NAME` lists them), or --machine for the
lowest node field and --datacenter for those above it. Every node field
must be given.

IDs are strictly increasing. One node makes at most one sequence's worth of
IDs per tick: 4096 per millisecond in the default layout, so a million IDs
take about a quarter of a second; 256 per 10 ms in Sonyflake's, so a
million take about 39 seconds. --slots-per-node K makes the node hold its
slot and the K - 1 after it, for K times as many: each tick holds every ID
of all K slots, still in increasing order.

Each run holds the node's lock in the state directory while it mints, and
records there a high-water mark that the next run resumes after, as
`snowmint serve` does: runs on one node at the same time take turns (each
waits up to --lock-wait, then is refused with the holder's pid), and a run
whose clock was set back below the mark is refused instead of repeating
IDs. A `snowmint serve` on the same node and state directory holds the
lock for as long as it runs. Processes on other machines, or with other
state directories, still need other --datacenter or --machine values.")]
pub struct GenerateArgs {
    /// The datacenter id of this node (0..=31 in the default layout; in
    /// another layout, the node fields above the lowest).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    datacenter: Option<String>,
    /// The machine id of this node (0..=31 in the default layout; in
    /// another layout, the lowest node field).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    machine: Option<String>,
    /// A node field by the layout's name for it (repeatable): `worker=1`.
    #[arg(
        long = "field",
        value_name = "NAME=VALUE",
        allow_negative_numbers = true
    )]
    fields: Vec<String>,
    /// How many slots this node holds, from its own (a power of two): 2
    /// makes it the node given and the next one, with twice the ceiling.
    #[arg(
        long,
        value_name = "K",
        default_value = "1",
        allow_negative_numbers = true
    )]
    slots_per_node: String,
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
    /// Where the node's lock and high-water mark live [default:
    /// $XDG_STATE_HOME/snowmint, else ~/.local/state/snowmint, as for
    /// `snowmint serve`].
    #[arg(long, value_name = "DIR", env = "SNOWMINT_STATE_DIR")]
    state_dir: Option<PathBuf>,
    /// How long to wait for the node's lock while another process holds
    /// it (0s: refuse at once).
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    lock_wait: String,
    /// Mint without the lock and the mark: nothing keeps two runs on one
    /// node, or a run after the clock was set back, from repeating IDs.
    /// For scratch use only.
    #[arg(long, conflicts_with = "state_dir")]
    no_state: bool,
    /// `--layout` and `--epoch`.
    #[command(flatten)]
    pub global: Global,
}

/// Runs `snowmint generate`.
pub fn run(args: GenerateArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let layout = global.layout()?;
    // A layout that reads only (no sequence field, or opaque bits) is a
    // matter of the arguments, said before anything else.
    layout.check_mintable().map_err(Failure::from)?;
    let node = node(&layout, &args)?;
    let slots = values::count("slots-per-node", &args.slots_per_node, u64::MAX)?;
    layout
        .check_slot_block(node.slot(), slots)
        .map_err(Failure::from)?;
    let count = values::count("count", &args.count, u64::MAX)?;
    let lock_wait = snowmint::value::parse_duration(
        "lock-wait",
        &args.lock_wait,
        Duration::ZERO..=MAX_LOCK_WAIT,
    )
    .map_err(Failure::from)?;
    // The layout must hold the clock's time: a matter of the arguments
    // (`--epoch` in the future, say), said before anything is locked.
    if let Err(error) = layout.timestamp_offset(SystemClock.now_ms()) {
        return Err(clock_outside_layout(error).into());
    }
    let source = if args.no_state {
        eprintln!(
            "warning: --no-state: minting without the node's lock and high-water mark, so another process on {}, or a later run with the clock set back, can issue these same IDs; for scratch use only",
            layout.describe(node)
        );
        Source::Bare(Box::new(
            Generator::builder(layout, node)
                .slots(slots)
                .build()
                .map_err(Failure::from)?,
        ))
    } else {
        // The issuer takes the node as two numbers (see
        // `Layout::node_from_pair`).
        let (upper, lowest) = layout.pair_of(node);
        let mut builder = EmbeddedIssuer::builder()
            .node(upper, lowest)
            .slots_per_node(slots)
            .layout(layout)
            .mark_step(MARK_STEP)
            .lock_wait(lock_wait);
        if let Some(dir) = args.state_dir {
            builder = builder.state_dir(dir);
        }
        Source::Issuer(builder.start_blocking()?)
    };
    let encoding = args.output;

    let progress = progress_bar(count);
    let written = write_ids(&source, count, encoding, progress.as_ref());
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    // Released whether or not the writing went well: the mark covers
    // every ID made, and the next run may start at once.
    if let Source::Issuer(issuer) = source {
        issuer.shutdown();
    }
    written?;
    Ok(ExitCode::SUCCESS)
}

/// The node, from its fields given by name: `--datacenter` and
/// `--machine` (see `Layout::node_from_pair`), and `--field` by the
/// layout's own names. Every node field must be given.
fn node(layout: &Layout, args: &GenerateArgs) -> Result<Node, Failure> {
    let legacy = [("datacenter", &args.datacenter), ("machine", &args.machine)];
    let given = values::given_fields(&legacy, &args.fields)?;
    let named = values::named_values(layout, &given)?;
    layout
        .node_named(&values::as_pairs(&named))
        .map_err(|error| {
            if error.kind() != ErrorKind::InvalidFields {
                return Failure::from(error);
            }
            let names: Vec<String> = layout
                .node_fields()
                .map(|field| format!("{}=N", field.name()))
                .collect();
            let hint = if layout.same_ids_as(&Layout::TWITTER) {
                "give --datacenter N --machine N".to_owned()
            } else {
                format!("give --field {}", names.join(" --field "))
            };
            Failure::from(error).with_hint(hint)
        })
}

/// Where the IDs come from.
enum Source {
    /// The fleet's issuer: the lock and the mark.
    Issuer(EmbeddedIssuer),
    /// `--no-state`: a generator alone.
    Bare(Box<Generator>),
}

impl Source {
    /// The next run of at most `max` IDs, appended to `out`.
    fn next_run(&self, max: usize, out: &mut Vec<SnowflakeId>) -> anyhow::Result<()> {
        match self {
            Source::Issuer(issuer) => Ok(issuer.next_ids_into(max, out)?),
            Source::Bare(generator) => {
                out.extend(generator.next_run(max).map_err(clock_outside_layout)?);
                Ok(())
            }
        }
    }
}

/// Writes `count` new IDs to stdout, a line each.
fn write_ids(
    source: &Source,
    count: u64,
    encoding: Encoding,
    progress: Option<&ProgressBar>,
) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    let mut chunk = Vec::with_capacity(CHUNK + RUN * 32);
    let mut run = Vec::with_capacity(RUN);
    let mut left = count;
    while left > 0 {
        run.clear();
        source.next_run(left.min(RUN as u64) as usize, &mut run)?;
        left -= run.len() as u64;
        for id in &run {
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
