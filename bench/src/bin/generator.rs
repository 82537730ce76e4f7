//! Measures snowmint's generator and its peers in one run and prints the
//! markdown for BENCHMARKS.md.
//!
//! ```text
//! cargo run --release -p snowmint-bench --bin generator -- \
//!     [--seconds S] [--sustained-rounds N] [--busy N] [--rounds R] [--lead-every N] \
//!     [--only NAME,...] [--tsv]
//! ```
//!
//! `--seconds` is the length of each sustained run (default 5),
//! `--sustained-rounds` how many times every contender runs sustained, for
//! 1 and for 2 threads, round by round (default 5; the table gives the best
//! and the median round), `--busy` how many threads keep the cores busy
//! during the sustained runs (default 0; to see how the generators fare on
//! a loaded machine), `--rounds` the number of interleaved rounds of
//! burst samples (default 40, 25 samples per contender each),
//! `--lead-every` how often a sustained thread reads the clock to measure
//! the lead of the ID it just got (after every Nth ID, default 16), `--only`
//! keeps the contenders whose name contains one of the NAMEs (for quick looks; the
//! published table uses all). `--tsv` prints every measurement as one
//! tab-separated record per line instead, for `profiles` (which runs this
//! binary as built by several profiles and tabulates them side by side);
//! with it, `--sustained-rounds 0` and `--rounds 0` skip that part.

use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use snowmint::SnowflakeId;
use snowmint_bench::burst::{self, Subject, Summary};
use snowmint_bench::contenders::{self, Shared, Spec, Unshared};
use snowmint_bench::report::{self, Clocks, LeadOnly, Row, label};
use snowmint_bench::sustained::{self, Buffers, Busy, Sustained};

/// What `--help` prints.
const USAGE: &str = "\
Measures snowmint's generator and its peers in one run; prints the markdown
for BENCHMARKS.md.

Usage: generator [--seconds S] [--sustained-rounds N] [--busy N] [--rounds R] [--lead-every N]
                 [--only NAME,...] [--tsv]

  --seconds S            length of each sustained run (0.1..=60, default 5)
  --sustained-rounds N   sustained runs per contender and thread count (1..=20, default 5)
  --busy N               threads spinning beside the sustained runs (0..=16, default 0)
  --rounds R             interleaved rounds of burst samples (1..=1000, default 40)
  --lead-every N         in the sustained runs, read the clock after every Nth ID to measure
                         its lead over the clock (1..=65536, default 16)
  --only NAME,...        only the contenders whose name contains one of the NAMEs
  --tsv                  one tab-separated record per measurement instead of markdown;
                         then --sustained-rounds 0 and --rounds 0 skip that part

Example: target/release/generator --only snowmint,ferroid --sustained-rounds 3";

/// IDs per burst sample and per batch call: one millisecond's worth.
const BURST: usize = 4096;
/// Burst samples per contender per round.
const PER_ROUND: usize = 25;

struct Options {
    seconds: f64,
    sustained_rounds: usize,
    busy: usize,
    rounds: usize,
    lead_every: usize,
    only: Option<String>,
    tsv: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        seconds: 5.0,
        sustained_rounds: 5,
        busy: 0,
        rounds: 40,
        lead_every: 16,
        only: None,
        tsv: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--seconds" => {
                let text = value()?;
                options.seconds = text
                    .parse()
                    .ok()
                    .filter(|s: &f64| (0.1..=60.0).contains(s))
                    .ok_or(format!("--seconds {text}: expected a number in 0.1..=60"))?;
            }
            "--sustained-rounds" => {
                let text = value()?;
                options.sustained_rounds = text
                    .parse()
                    .ok()
                    .filter(|r| (0..=20).contains(r))
                    .ok_or(format!(
                        "--sustained-rounds {text}: expected a whole number in 1..=20 \
                         (0 with --tsv)"
                    ))?;
            }
            "--busy" => {
                let text = value()?;
                options.busy = text
                    .parse()
                    .ok()
                    .filter(|n| (0..=16).contains(n))
                    .ok_or(format!("--busy {text}: expected a whole number in 0..=16"))?;
            }
            "--rounds" => {
                let text = value()?;
                options.rounds =
                    text.parse()
                        .ok()
                        .filter(|r| (0..=1000).contains(r))
                        .ok_or(format!(
                            "--rounds {text}: expected a whole number in 1..=1000 (0 with --tsv)"
                        ))?;
            }
            "--lead-every" => {
                let text = value()?;
                options.lead_every = text
                    .parse()
                    .ok()
                    .filter(|n| (1..=65_536).contains(n))
                    .ok_or(format!(
                        "--lead-every {text}: expected a whole number in 1..=65536"
                    ))?;
            }
            "--only" => options.only = Some(value()?),
            "--tsv" => options.tsv = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other} (see --help)")),
        }
    }
    // The markdown report needs both parts; only `profiles` skips one.
    if !options.tsv && options.sustained_rounds == 0 {
        return Err(
            "--sustained-rounds 0: expected a whole number in 1..=20 (0 with --tsv)".into(),
        );
    }
    if !options.tsv && options.rounds == 0 {
        return Err("--rounds 0: expected a whole number in 1..=1000 (0 with --tsv)".into());
    }
    Ok(options)
}

/// Runs one sustained measurement: threads, duration, buffers.
type SustainedRun = Box<dyn Fn(usize, Duration, &mut Buffers) -> Sustained>;

/// One contender: its facts, how to run it sustained, how to sample it.
struct Entry {
    spec: &'static Spec,
    sustained: SustainedRun,
    burst: Subject<'static>,
    burst_len: usize,
}

/// A thread-safe contender: every thread calls one generator by reference.
fn shared<G: Shared + 'static>(spec: &'static Spec, make: fn() -> G) -> Entry {
    let burst_len = BURST.min(spec.ids_per_unit as usize);
    let mut out = Vec::with_capacity(burst_len);
    // Made at the first sample, so that nothing of it (ferroid's ticker
    // thread, say) runs during the sustained runs of others.
    let mut generator = None;
    Entry {
        spec,
        sustained: Box::new(move |threads, duration, buffers| {
            let generator = make();
            let nexts = (0..threads).map(|_| || generator.next_id()).collect();
            sustained::run(spec, nexts, duration, buffers, || spec.timestamp_now())
        }),
        burst: Subject::new(spec.name, move || {
            let generator = generator.get_or_insert_with(make);
            burst::time_calls(
                &mut || generator.next_id(),
                spec.unit_ms,
                burst_len,
                &mut out,
            )
        }),
        burst_len,
    }
}

/// A contender that needs `&mut self`: one thread drives it directly, two
/// share it behind a `Mutex`; bursts drive it directly.
fn unshared<G: Unshared + 'static>(spec: &'static Spec, make: fn() -> G) -> Entry {
    let burst_len = BURST.min(spec.ids_per_unit as usize);
    let mut out = Vec::with_capacity(burst_len);
    let mut generator = None;
    Entry {
        spec,
        sustained: Box::new(move |threads, duration, buffers| {
            let now = || spec.timestamp_now();
            if threads == 1 {
                let mut generator = make();
                sustained::run(
                    spec,
                    vec![move || generator.next_id()],
                    duration,
                    buffers,
                    now,
                )
            } else {
                let generator = Mutex::new(make());
                let nexts = (0..threads).map(|_| || generator.next_id()).collect();
                sustained::run(spec, nexts, duration, buffers, now)
            }
        }),
        burst: Subject::new(spec.name, move || {
            let generator = generator.get_or_insert_with(make);
            burst::time_calls(
                &mut || generator.next_id(),
                spec.unit_ms,
                burst_len,
                &mut out,
            )
        }),
        burst_len,
    }
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let duration = Duration::from_secs_f64(options.seconds);
    let load_before = report::load_average();

    let mut entries: Vec<Entry> = vec![
        shared(&contenders::SNOWMINT, contenders::snowmint),
        shared(&contenders::FERROID_SYSTEM, contenders::ferroid_system),
        shared(&contenders::SNOWFLAKE_ME, contenders::snowflake_me),
        shared(&contenders::SNOWFLAKED, contenders::snowflaked),
        unshared(&contenders::RS_SNOWFLAKE, contenders::rs_snowflake),
        shared(&contenders::SONYFLAKE, contenders::sonyflake),
        unshared(&contenders::YITTER, contenders::yitter),
        shared(
            &contenders::FERROID_MONOTONIC,
            contenders::ferroid_monotonic,
        ),
    ];
    if let Some(only) = &options.only {
        let only: Vec<String> = only.split(',').map(str::to_lowercase).collect();
        entries.retain(|entry| {
            let name = entry.spec.name.to_lowercase();
            only.iter().any(|part| name.contains(part.as_str()))
        });
    }

    // Room for a run at the format's ceiling, with margin; the buffers are
    // touched once here and reused.
    let capacity = (options.seconds * 4_096_000.0 * 1.05) as usize + 65_536;
    let mut buffers = Buffers::new(2, capacity, options.lead_every);
    // Round by round, so that a stretch of load from elsewhere on the
    // machine falls on every contender alike rather than on one; those that
    // leave a thread running behind them come last.
    let busy = Busy::start(options.busy);
    let mut one_thread = vec![Vec::new(); entries.len()];
    let mut two_threads = vec![Vec::new(); entries.len()];
    for (phase, round) in [false, true]
        .into_iter()
        .flat_map(|phase| (1..=options.sustained_rounds).map(move |round| (phase, round)))
    {
        let in_phase = entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| entry.spec.starts_a_thread == phase);
        for (i, entry) in in_phase {
            for (threads, runs) in [(1, &mut one_thread[i]), (2, &mut two_threads[i])] {
                eprintln!(
                    "sustained, round {round}: {}, {threads} thread(s)",
                    entry.spec.name
                );
                runs.push((entry.sustained)(threads, duration, &mut buffers));
            }
        }
    }
    // rs-snowflake's `lazy_generate`, for its lead alone, once per thread
    // count: its rate is not bounded by the clock, so its IDs are counted
    // rather than kept.
    let mut lead_only = Vec::new();
    let lazy = &contenders::RS_SNOWFLAKE_LAZY;
    let lazy_wanted = options.only.as_ref().is_none_or(|only| {
        let name = lazy.name.to_lowercase();
        only.split(',')
            .any(|part| name.contains(part.to_lowercase().as_str()))
    });
    if lazy_wanted && !options.tsv {
        for threads in [1, 2] {
            eprintln!("lead alone: {}, {threads} thread(s)", lazy.name);
            let (lead, ids_per_second) = if threads == 1 {
                let mut generator = contenders::rs_snowflake_lazy();
                sustained::lead_alone(
                    lazy,
                    vec![move || generator.next_id()],
                    duration,
                    options.lead_every,
                )
            } else {
                let generator = Mutex::new(contenders::rs_snowflake_lazy());
                let nexts = (0..threads).map(|_| || generator.next_id()).collect();
                sustained::lead_alone(lazy, nexts, duration, options.lead_every)
            };
            lead_only.push(LeadOnly {
                name: lazy.name,
                threads,
                ids_per_second,
                lead,
            });
        }
    }
    drop(busy);
    drop(buffers);

    eprintln!("bursts: {} rounds", options.rounds);
    let mut clock_out = Vec::with_capacity(BURST);
    let mut clock_ms_out = Vec::with_capacity(BURST);
    let mut floor_out = Vec::with_capacity(BURST);
    let mut batch_out: Vec<SnowflakeId> = Vec::with_capacity(BURST);
    let batch_generator = contenders::snowmint();
    let mut me_batch_out = Vec::with_capacity(BURST);
    let me_batch_generator = contenders::snowflake_me();
    let mut subjects = vec![
        Subject::new(label::NOW, move || {
            burst::time_clock_reads(BURST, &mut clock_out)
        }),
        Subject::new(label::UNIX_MS, move || {
            burst::time_clock_ms_reads(BURST, &mut clock_ms_out)
        }),
        Subject::new(label::FLOOR, move || {
            burst::time_floor(BURST, &mut floor_out)
        }),
        Subject::new(label::SNOWMINT_BATCH, move || {
            let mut fill = |count, out: &mut Vec<SnowflakeId>| {
                batch_generator
                    .next_ids(count, out)
                    .expect("the system clock is inside the layout");
            };
            burst::time_batch(&mut fill, BURST, &mut batch_out)
        }),
        Subject::new(label::SNOWFLAKE_ME_BATCH, move || {
            let mut fill = |count, out: &mut Vec<_>| {
                me_batch_generator
                    .next_ids_into(count, out)
                    .expect("the system clock is inside the layout");
            };
            burst::time_batch(&mut fill, BURST, &mut me_batch_out)
        }),
    ];
    let fixed = subjects.len();
    let burst_lens: Vec<usize> = entries.iter().map(|entry| entry.burst_len).collect();
    let specs: Vec<&'static Spec> = entries.iter().map(|entry| entry.spec).collect();
    subjects.extend(entries.into_iter().map(|entry| entry.burst));
    let mut samples = burst::sample(&mut subjects, options.rounds, PER_ROUND);
    if options.tsv {
        print_tsv(
            &load_before,
            &specs,
            &one_thread,
            &two_threads,
            &subjects,
            &samples,
        );
        return ExitCode::SUCCESS;
    }
    let summaries: Vec<Summary> = samples.iter_mut().map(|s| burst::summarise(s)).collect();
    let clocks = Clocks {
        now: summaries[0],
        unix_ms: summaries[1],
        floor: summaries[2],
    };
    let (snowmint_batch, me_batch) = (summaries[3], summaries[4]);

    let rows: Vec<Row> = specs
        .iter()
        .zip(one_thread.into_iter().zip(two_threads))
        .zip(&summaries[fixed..])
        .zip(burst_lens)
        .map(
            |(((spec, (one_thread, two_threads)), burst), burst_len)| Row {
                spec: **spec,
                one_thread,
                two_threads,
                burst: *burst,
                burst_len,
            },
        )
        .collect();
    print_report(
        &options,
        &load_before,
        &rows,
        &lead_only,
        &clocks,
        &snowmint_batch,
        &me_batch,
    );
    ExitCode::SUCCESS
}

fn print_report(
    options: &Options,
    load_before: &str,
    rows: &[Row],
    lead_only: &[LeadOnly],
    clocks: &Clocks,
    snowmint_batch: &Summary,
    me_batch: &Summary,
) {
    let now = contenders::unix_ms() as i64;
    println!(
        "Run of {} on {}.",
        snowmint::format_time(now),
        report::machine()
    );
    println!(
        "Load average before: {load_before}; after: {}.",
        report::load_average()
    );
    println!(
        "Sustained runs of {} s each, {} rounds, {} busy threads beside them; bursts: median \
         of {} samples per contender (after a clock tick, 4096 calls or the layout's IDs per unit).",
        options.seconds,
        options.sustained_rounds,
        options.busy,
        options.rounds * PER_ROUND
    );
    println!();
    println!("One read of the system clock, measured the same way (ns, median and p10–p90):");
    println!();
    for (what, summary) in [
        ("`SystemTime::now()`", &clocks.now),
        (
            "`SystemTime::now()` as Unix ms (`duration_since`, `as_millis`)",
            &clocks.unix_ms,
        ),
        (
            "`SystemTime::now()` and one `AtomicU64::fetch_add` (the floor of a \
             generator that reads the clock and shares one atomic word)",
            &clocks.floor,
        ),
    ] {
        println!(
            "- {what}: {:.1} ({:.1}–{:.1})",
            summary.median, summary.p10, summary.p90
        );
    }
    println!();
    print!("{}", report::table(rows, clocks));
    let findings = report::findings(rows);
    if !findings.is_empty() {
        println!();
        print!("{findings}");
    }
    println!();
    println!(
        "The lead at full load: how far an ID's timestamp runs ahead of the wall clock read \
         right after the ID came back (the start of the ID's unit, in the contender's own \
         epoch and unit, minus the reading; 0 if the unit had started), the clock read after \
         every {}th ID of each thread in every sustained run above, 1 and 2 threads; max lag: \
         the longest an ID's unit had ended before the reading (a thread taken off the CPU \
         between the two adds to it):",
        options.lead_every
    );
    println!();
    print!("{}", report::lead_table(rows, lead_only));
    println!();
    println!("Batch against single calls, 4096 IDs right after a tick, ns per ID (median):");
    println!();
    println!("| call | ns per ID (p10–p90) | single calls / batch |");
    println!("|---|--:|--:|");
    if let Some(single) = rows
        .iter()
        .find(|row| row.spec.name == contenders::SNOWMINT.name)
    {
        println!(
            "| snowmint, 4096 × `next_id` | {:.2} ({:.2}–{:.2}) | 1 |",
            single.burst.median, single.burst.p10, single.burst.p90
        );
        println!(
            "| snowmint, `next_ids(4096, &mut vec)` | {:.2} ({:.2}–{:.2}) | {:.1} |",
            snowmint_batch.median,
            snowmint_batch.p10,
            snowmint_batch.p90,
            single.burst.median / snowmint_batch.median
        );
    }
    if let Some(single) = rows
        .iter()
        .find(|row| row.spec.name == contenders::SNOWFLAKE_ME.name)
    {
        println!(
            "| snowflake_me, 4096 × `next_id` | {:.2} ({:.2}–{:.2}) | 1 |",
            single.burst.median, single.burst.p10, single.burst.p90
        );
        println!(
            "| snowflake_me, `next_ids_into(4096, &mut vec)` | {:.2} ({:.2}–{:.2}) | {:.1} |",
            me_batch.median,
            me_batch.p10,
            me_batch.p90,
            single.burst.median / me_batch.median
        );
    }
    println!();
    print!("{}", report::details(rows));
}

/// The `--tsv` records: the load average before and after, one record per
/// sustained run, one per burst sample.
///
/// - `load\tbefore|after\tONE FIVE FIFTEEN`
/// - `sustained\tCONTENDER\tTHREADS\tROUND\tRATIO\tIDS_PER_SECOND\tDUPLICATES\tOUT_OF_ORDER\tOFF_CLOCK\tFAILURE`
///   (`-` when none)
/// - `lead\tCONTENDER\tTHREADS\tROUND\tSAMPLED\tSHARE_AHEAD\tP99_NS\tMAX_NS`
///   after each sustained record: the lead of its sampled IDs (every
///   `--lead-every`-th), the share of them ahead of the clock, and the 99th
///   percentile and largest lead in ns
/// - `sample\tSUBJECT\tNS_PER_CALL`
fn print_tsv(
    load_before: &str,
    specs: &[&'static Spec],
    one_thread: &[Vec<Sustained>],
    two_threads: &[Vec<Sustained>],
    subjects: &[Subject<'_>],
    samples: &[Vec<f64>],
) {
    use std::io::Write as _;

    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut write = || -> std::io::Result<()> {
        writeln!(out, "load\tbefore\t{load_before}")?;
        for (spec, runs) in specs.iter().zip(one_thread.iter().zip(two_threads)) {
            for (round, run) in runs.0.iter().enumerate().chain(runs.1.iter().enumerate()) {
                let failure = run
                    .failure
                    .as_deref()
                    .unwrap_or("-")
                    .replace(['\t', '\n'], " ");
                writeln!(
                    out,
                    "sustained\t{}\t{}\t{}\t{:.6}\t{:.0}\t{}\t{}\t{}\t{failure}",
                    spec.name,
                    run.threads,
                    round + 1,
                    run.ratio(spec),
                    run.ids_per_second(spec),
                    run.duplicates,
                    run.order_violations,
                    run.off_clock,
                )?;
                writeln!(
                    out,
                    "lead\t{}\t{}\t{}\t{}\t{:.6}\t{}\t{}",
                    spec.name,
                    run.threads,
                    round + 1,
                    run.lead.samples(),
                    run.lead.share_ahead(),
                    run.lead.ns.value_at_quantile(0.99),
                    run.lead.ns.max(),
                )?;
            }
        }
        for (subject, samples) in subjects.iter().zip(samples) {
            for sample in samples {
                writeln!(out, "sample\t{}\t{sample:.3}", subject.label)?;
            }
        }
        writeln!(out, "load\tafter\t{}", report::load_average())?;
        out.flush()
    };
    if let Err(error) = write() {
        eprintln!("error: writing the records: {error}");
    }
}
