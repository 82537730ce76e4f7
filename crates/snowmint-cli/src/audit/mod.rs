//! `snowmint audit`: a column of IDs checked for what must never happen,
//! and, with the fleet's coordinator, against who held each slot when.
//!
//! The IDs come from files, standard input, a CSV column or a PostgreSQL
//! query, each value read by the core's parser. Duplicates are found in
//! bounded memory: past `--memory-limit` the IDs are sorted in chunks on
//! disk and merged. Each ID is judged (in the future, before the epoch,
//! covered by no claim of its slot or by two), and the findings are
//! reported as text or JSON.
//!
//! Exit codes: 0 when nothing was found, 3 when something was (a
//! duplicate, an ID in the future or before the epoch, an ID no claim
//! covered or two did, two claims of a slot at once); 2 for bad input (a
//! line that holds no ID, without `--skip-bad`; a bad flag); 1 when a
//! source or the coordinator cannot be read.

mod findings;
mod input;
mod sort;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use snowmint::Layout;
use snowmint_fleet::FleetHistory;
use snowmint_server::config::FleetAccess;

use self::findings::{Checker, Describe, FleetBody, Report, Section};
use self::input::{BadLine, Column, Shape, Sink, Source, Stop, Value};
use self::sort::Sorter;
use crate::Global;
use crate::failure::Failure;
use crate::values::{Format, instant, size};
use crate::whois::{CoordinatorFlags, fleet_layout_only};

/// Exit code: something was found.
const FOUND: u8 = 3;

/// The smallest and largest memory limit.
const MEMORY_RANGE: std::ops::RangeInclusive<u64> = (1 << 20)..=(64 << 30);

/// Arguments of `snowmint audit`.
#[derive(Debug, Args)]
#[command(after_help = "\
Reads a column of IDs, such as the primary key of a table that nodes
filled, and reports what must never happen:

  - duplicates, with every row they were read at;
  - IDs dated in the future, or before the layout's epoch (negative);
  - with the fleet's coordinator (--coordinator, --fleet): IDs whose slot
    no claim covered at their time (issued by no known holder), IDs two
    claims covered, and slots that had two holders at once; each finding
    names the holder the claim history gives (as snowmint whois does).

Examples:

  $ printf '1724551110457221119\\n1724551110457221119\\n' | snowmint audit
  ? 3
  audited 2 IDs from stdin in layout twitter

  DUPLICATES: 1 IDs appear more than once (2 rows)
    1724551110457221119  2023-11-14T22:13:20.000Z  slot 237
        rows stdin:1, stdin:2

  found: see above

Other inputs:

  snowmint audit ids.txt
  psql -Atc 'SELECT id FROM orders' | snowmint audit
  snowmint audit orders.csv --column id --skip-bad
  snowmint audit --postgres postgres://app@db:5432/shop \\
      --query 'SELECT id FROM orders' \\
      --coordinator etcd://10.0.0.5:2379 --fleet ids --format json

Exit code 0: nothing found; 3: something found; 2: bad input (a line that
holds no ID stops the audit unless --skip-bad); 1: a source or the
coordinator could not be read.

Memory stays bounded: past --memory-limit, the IDs are sorted in chunks
written to --temp-dir (16 bytes per ID) and merged.")]
pub struct AuditArgs {
    /// Files of IDs, one per line (or a CSV column, with --column); none,
    /// or -, for standard input.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Read the IDs from this CSV column: its header's name, or its
    /// number (1 is the first).
    #[arg(long, value_name = "NAME|N")]
    column: Option<String>,
    /// With --column N: the first line is a header, not a row.
    #[arg(long, requires = "column")]
    header: bool,
    /// The CSV field separator: one character, or \t for a tab.
    #[arg(long, value_name = "CHAR", default_value = ",", requires = "column")]
    delimiter: String,
    /// Skip lines that hold no ID (counted and listed) instead of stopping
    /// at the first.
    #[arg(long)]
    skip_bad: bool,
    /// Read the IDs from a PostgreSQL query instead of files:
    /// postgres://USER@HOST:PORT/DB (the password in the URL, PGPASSWORD,
    /// or a password file; TLS as sslmode= says).
    #[arg(long, value_name = "URL", requires = "query", conflicts_with_all = ["files", "column"])]
    postgres: Option<String>,
    /// The query whose first column holds the IDs, run as
    /// COPY (QUERY) TO STDOUT: a SELECT, say.
    #[arg(long, value_name = "SQL", requires = "postgres")]
    query: Option<String>,
    /// IDs more than this after now are in the future.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    future_grace: String,
    /// Now, for the IDs in the future: Unix ms or RFC 3339 (default: the
    /// clock's).
    #[arg(long, value_name = "TIME", default_value = "now")]
    now: String,
    /// The most memory the search for duplicates keeps; past it, sorted
    /// chunks go to disk (B, KiB, MiB, GiB).
    #[arg(long, value_name = "SIZE", default_value = "64MiB")]
    memory_limit: String,
    /// Where the sorted chunks go (default: the system's temporary
    /// directory).
    #[arg(long, value_name = "DIR")]
    temp_dir: Option<PathBuf>,
    /// How many of each kind of finding are listed (0: all): IDs, lines,
    /// slots (with ten of their IDs each); every one is counted.
    #[arg(long, value_name = "N", default_value_t = 100)]
    limit: usize,
    /// Text for people, or JSON.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    #[command(flatten)]
    coordinator: CoordinatorFlags<false>,
    /// `--layout` and `--epoch`.
    #[command(flatten)]
    pub global: Global,
}

/// What reading does with each row: judge it, keep it for the sort, note
/// a bad line or stop at it.
struct Audit<'a> {
    checker: Checker<'a>,
    sorter: Sorter,
    skip_bad: bool,
    skipped: Vec<BadLine>,
    skipped_count: u64,
    limit: usize,
    sources: &'a [Source],
}

impl Sink for Audit<'_> {
    fn value(&mut self, row: u64, value: Value) -> std::io::Result<()> {
        self.checker.check(row, value);
        if let Value::Id(id) = value {
            self.sorter.push(id.as_u64(), row)?;
        }
        Ok(())
    }

    fn bad(&mut self, line: BadLine) -> Result<(), String> {
        if !self.skip_bad {
            let (index, number) = input::split_row(line.row);
            let name = self.sources[index].row_name(number);
            let hint =
                if number == 1 && matches!(self.sources[index], Source::File(_) | Source::Stdin) {
                    " (a header? give --column NAME, or --header)"
                } else {
                    ""
                };
            return Err(format!(
                "{name}: {:?} holds no ID: {}{hint}; --skip-bad skips such lines",
                line.text, line.reason
            ));
        }
        self.skipped_count += 1;
        if self.skipped.len() < self.limit {
            self.skipped.push(line);
        }
        Ok(())
    }
}

/// Runs `snowmint audit`.
pub fn run(args: AuditArgs, global: &Global) -> anyhow::Result<ExitCode> {
    let limit = if args.limit == 0 {
        usize::MAX
    } else {
        args.limit
    };
    let grace = snowmint::value::parse_duration(
        "future grace",
        &args.future_grace,
        Duration::ZERO..=Duration::from_secs(366 * 86_400),
    )?;
    let now_ms = instant("now", &args.now)?;
    let memory_limit = size("memory limit", &args.memory_limit, MEMORY_RANGE)?;
    let shape = shape(&args)?;
    let sources = sources(&args)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;

    // The fleet's history, and its layout, when a coordinator is given.
    let fleet = if args.coordinator.given {
        let fleet = FleetAccess::load(args.coordinator.flags).map_err(Failure::bad_input)?;
        if let Some(warning) = fleet.password_on_command_line() {
            eprintln!("warning: {warning}");
        }
        let history = runtime.block_on(snowmint_fleet::read_fleet_history(
            &fleet.url,
            &fleet.access,
            &fleet.fleet,
        ))?;
        fleet_layout_only(global, &fleet, &history.layout, "audit")?;
        for (slot, reason) in &history.unreadable {
            eprintln!(
                "warning: the claim history of slot {slot} cannot be read ({reason}); its IDs count as issued by no known holder"
            );
        }
        Some((fleet, history))
    } else {
        None
    };
    let history: Option<&FleetHistory> = fleet.as_ref().map(|(_, history)| history);
    let layout: Layout = match history {
        Some(history) => history.layout,
        None => global.layout()?,
    };
    let grace_ms = i64::try_from(grace.as_millis()).unwrap_or(i64::MAX);
    let mut audit = Audit {
        checker: Checker::new(layout, now_ms.saturating_add(grace_ms), history, limit),
        sorter: Sorter::new(memory_limit, args.temp_dir.clone()),
        skip_bad: args.skip_bad,
        skipped: Vec::new(),
        skipped_count: 0,
        limit,
        sources: &sources,
    };
    for (index, source) in sources.iter().enumerate() {
        let read = match source {
            Source::Postgres { url, query } => read_query(index, url, query, &runtime, &mut audit)?,
            _ => input::open(source)
                .and_then(|reader| input::read_text(index, source, reader, &shape, &mut audit)),
        };
        match read {
            Ok(()) => {}
            Err(Stop::Bad(message)) => return Err(Failure::bad_input(message).into()),
            Err(Stop::Io(message)) => anyhow::bail!(message),
        }
    }

    let describe = Describe {
        layout,
        sources: &sources,
        history,
    };
    let Audit {
        checker,
        sorter,
        skipped,
        skipped_count,
        ..
    } = audit;
    let spilled_runs = sorter.runs();
    let mut duplicates = Section {
        count: 0,
        listed: Vec::new(),
    };
    let mut duplicate_rows = 0;
    sorter
        .duplicates(|id, rows, total| {
            duplicates.count += 1;
            duplicate_rows += total;
            if duplicates.listed.len() < limit {
                let id = snowmint::SnowflakeId::from_u64(id);
                duplicates.listed.push(describe.id(id, rows, total));
            }
        })
        .context("merging the sorted chunks")?;
    let no_known_holder = describe.slots(&checker.no_holder, limit);
    let conflicts = describe.slots(&checker.conflicts, limit);
    let two_holders = describe.two_holders(limit);
    let found = duplicates.count > 0
        || checker.future.count > 0
        || checker.before_epoch.count > 0
        || no_known_holder.count > 0
        || conflicts.count > 0
        || two_holders.count > 0;
    let report = Report {
        found,
        ids: checker.ids,
        sources: sources.iter().map(Source::name).collect(),
        layout: layout.name().map_or_else(|| layout.spec(), str::to_owned),
        future_after: snowmint::format_time(now_ms.saturating_add(grace_ms)).to_string(),
        fleet: fleet.as_ref().map(|(access, history)| FleetBody {
            fleet: access.fleet.to_string(),
            coordinator: access.url.to_string(),
            slots: history.slots.len() as u64,
            claims: history
                .slots
                .values()
                .map(|claims| claims.records().len() as u64)
                .sum(),
        }),
        skipped: Section {
            count: skipped_count,
            listed: skipped.iter().map(|line| describe.bad_line(line)).collect(),
        },
        duplicates,
        duplicate_rows,
        future: Section {
            count: checker.future.count,
            listed: checker
                .future
                .examples
                .iter()
                .map(|(id, row)| describe.id(*id, &[*row], 1))
                .collect(),
        },
        before_epoch: Section {
            count: checker.before_epoch.count,
            listed: checker
                .before_epoch
                .examples
                .iter()
                .map(|(value, row)| describe.negative(*value, *row))
                .collect(),
        },
        no_known_holder,
        conflicts,
        pruned: checker.pruned,
        two_holders,
        spilled_runs,
    };
    let text = match args.format {
        Format::Text => report.text(),
        Format::Json => format!("{}\n", serde_json::to_string(&report)?),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(if found {
        ExitCode::from(FOUND)
    } else {
        ExitCode::SUCCESS
    })
}

/// Reads source `index`, the rows of `query` on the PostgreSQL server
/// `url`, into `audit`: `Ok(Err(..))` when reading stopped at a row,
/// `Err` when the server could not be read.
#[cfg(feature = "postgres")]
fn read_query(
    index: usize,
    url: &snowmint_fleet::PostgresUrl,
    query: &str,
    runtime: &tokio::runtime::Runtime,
    audit: &mut Audit<'_>,
) -> anyhow::Result<Result<(), Stop>> {
    let mut lines = input::CopyLines::new(index);
    let mut stopped: Option<Stop> = None;
    let mut sink = |chunk: &[u8]| {
        lines.feed(chunk, audit).map_err(|stop| {
            let message = match &stop {
                Stop::Bad(message) | Stop::Io(message) => message.clone(),
            };
            stopped = Some(stop);
            message
        })
    };
    // The password as libpq finds it: the URL's, PGPASSWORD, a password
    // file.
    let copied = runtime.block_on(snowmint_fleet::postgres_copy_out(
        url, None, query, &mut sink,
    ));
    match (stopped, copied) {
        (Some(stop), _) => Ok(Err(stop)),
        (None, Err(error)) => Err(error.into()),
        (None, Ok(())) => Ok(lines.finish(audit)),
    }
}

/// Without PostgreSQL support, a query cannot be read.
#[cfg(not(feature = "postgres"))]
fn read_query(
    _index: usize,
    _url: &snowmint_fleet::PostgresUrl,
    _query: &str,
    _runtime: &tokio::runtime::Runtime,
    _audit: &mut Audit<'_>,
) -> anyhow::Result<Result<(), Stop>> {
    Err(Failure::bad_input(
        "--postgres: this build has no PostgreSQL support (build with the cargo feature `postgres`)",
    )
    .into())
}

/// How lines are read, from `--column`, `--header` and `--delimiter`.
fn shape(args: &AuditArgs) -> Result<Shape, Failure> {
    let Some(column) = &args.column else {
        return Ok(Shape::Lines);
    };
    let column = match column.parse::<usize>() {
        Ok(0) => {
            return Err(Failure::bad_input(
                "column 0 is out of range (columns are numbered from 1)",
            ));
        }
        Ok(number) => Column::Number(number),
        Err(_) => Column::Named(column.clone()),
    };
    let delimiter = match args.delimiter.as_str() {
        "\\t" => b'\t',
        text if text.len() == 1 && text.is_ascii() => text.as_bytes()[0],
        text => {
            return Err(Failure::bad_input(format!(
                "delimiter {text:?} is not one ASCII character (or \\t)"
            )));
        }
    };
    Ok(Shape::Csv {
        column,
        header: args.header,
        delimiter,
    })
}

/// The sources, in order: the query, or the files (none: standard input).
fn sources(args: &AuditArgs) -> Result<Vec<Source>, Failure> {
    if let (Some(url), Some(query)) = (&args.postgres, &args.query) {
        let url = match url.parse::<snowmint_fleet::CoordinatorUrl>() {
            Ok(snowmint_fleet::CoordinatorUrl::Postgres(url)) => *url,
            Ok(other) => {
                return Err(Failure::bad_input(format!(
                    "--postgres {other} is not a PostgreSQL URL (postgres://USER@HOST:PORT/DB)"
                )));
            }
            Err(error) => return Err(Failure::bad_input(format!("--postgres: {error}"))),
        };
        return Ok(vec![Source::Postgres {
            url,
            query: query.clone(),
        }]);
    }
    if args.files.is_empty() {
        return Ok(vec![Source::Stdin]);
    }
    Ok(args
        .files
        .iter()
        .map(|path| {
            if path.as_os_str() == "-" {
                Source::Stdin
            } else {
                Source::File(path.clone())
            }
        })
        .collect())
}
