//! What the embedded issuer's rules cost on top of the bare generator:
//! `EmbeddedIssuer::next_id` (the fencing check from the per-thread
//! snapshot, the generator, the mark check) against `Generator::next_id`,
//! in bursts and sustained, as the generator benchmark measures them.
//!
//! ```text
//! cargo build --release -p snowmint-bench --bin issuer
//! target/release/issuer [--rounds R] [--sustained-rounds N] [--seconds S] [--slot-rounds M]
//! ```
//!
//! - Bursts: after the clock ticks, 4096 calls; `R` rounds (default 40) of
//!   25 samples of each subject, interleaved; the median and p10–p90.
//! - Sustained: each subject called in a tight loop for `S` seconds
//!   (default 5) by 1 thread and by 2 threads sharing it, `N` rounds
//!   (default 3), every ID kept and checked; the rate of IDs over the whole
//!   milliseconds, as a ratio to the format's ceiling of 4,096,000 IDs/s.
//!
//! - Slots: `M` rounds (default 3) of `S` seconds, 2 threads each, of an
//!   issuer of one slot and one of two slots (`slots_per_node(2)`,
//!   machines 2 and 3), alternating; IDs per second as a ratio to one
//!   slot's ceiling, and the median round of two slots over the median
//!   round of one.
//!
//! The issuer is on a node given explicitly (datacenter 1, machine 1) with
//! its own runtime thread and a state directory in a temporary directory:
//! its mark is reserved a second ahead and moved on in the background, so a
//! sustained run writes the state file twice a second.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use snowmint::{Clock, Generator, Layout, Node, SystemClock};
use snowmint_bench::burst::{self, Subject};
use snowmint_bench::contenders::SNOWMINT;
use snowmint_bench::report;
use snowmint_bench::sustained::{self, Buffers, Sustained};
use snowmint_fleet::EmbeddedIssuer;

const NODE: Node = Node::from_slot(33);
/// The first slot of the issuer of two slots (34 and 35).
const WIDE: Node = Node::from_slot(34);

/// Calls in a burst: one millisecond's IDs.
const BURST: usize = 4096;

struct Options {
    rounds: usize,
    sustained_rounds: usize,
    seconds: f64,
    slot_rounds: usize,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        rounds: 40,
        sustained_rounds: 3,
        seconds: 5.0,
        slot_rounds: 3,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |range: std::ops::RangeInclusive<f64>| {
            value
                .parse::<f64>()
                .ok()
                .filter(|n| range.contains(n))
                .ok_or_else(|| format!("{flag} {value:?} is not a number in {range:?}"))
        };
        match flag.as_str() {
            "--rounds" => options.rounds = number(1.0..=1000.0)? as usize,
            "--sustained-rounds" => options.sustained_rounds = number(0.0..=100.0)? as usize,
            "--seconds" => options.seconds = number(0.5..=60.0)?,
            "--slot-rounds" => options.slot_rounds = number(0.0..=100.0)? as usize,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(options)
}

/// A generator on the system clock, as applications make one.
fn generator() -> Generator {
    Generator::new(Layout::TWITTER, NODE).expect("node 1/1 fits")
}

/// The same generator on the clock behind a `dyn Clock`, as the issuer
/// holds it: the share of the difference that is the clock's indirection.
fn dyn_generator() -> Generator<Arc<dyn Clock>> {
    Generator::builder(Layout::TWITTER, NODE)
        .clock(Arc::new(SystemClock) as Arc<dyn Clock>)
        .build()
        .expect("node 1/1 fits")
}

fn issuer(dir: &std::path::Path) -> EmbeddedIssuer {
    issuer_of(dir, NODE, 1)
}

/// An issuer of `slots` slots from `node`'s.
fn issuer_of(dir: &std::path::Path, node: Node, slots: u64) -> EmbeddedIssuer {
    EmbeddedIssuer::builder()
        .node(
            Layout::TWITTER.pair_of(node).0,
            Layout::TWITTER.pair_of(node).1,
        )
        .slots_per_node(slots)
        .state_dir(dir)
        .start_blocking()
        .expect("the issuer starts on a fresh state directory")
}

/// The rounds of one subject, as a table row tells them: the best and
/// median ratio to the ceiling, every round's, and what went wrong.
struct Rounds {
    best: f64,
    median: f64,
    every: String,
    duplicates: u64,
    out_of_order: u64,
    off_clock: u64,
    /// An ID twice, out of order, or a run that failed.
    failed: bool,
}

impl Rounds {
    fn of(rounds: &[Sustained], spec: &snowmint_bench::contenders::Spec) -> Rounds {
        let mut ratios: Vec<f64> = rounds.iter().map(|run| run.ratio(spec)).collect();
        let every = ratios
            .iter()
            .map(|r| format!("{r:.4}"))
            .collect::<Vec<_>>()
            .join(", ");
        ratios.sort_by(f64::total_cmp);
        let sum = |count: fn(&Sustained) -> u64| rounds.iter().map(count).sum::<u64>();
        let (duplicates, out_of_order) = (sum(|r| r.duplicates), sum(|r| r.order_violations));
        Rounds {
            best: ratios[ratios.len() - 1],
            median: ratios[ratios.len() / 2],
            every,
            duplicates,
            out_of_order,
            off_clock: sum(|r| r.off_clock),
            failed: duplicates + out_of_order > 0 || rounds.iter().any(|r| r.failure.is_some()),
        }
    }

    /// `best (median) | every | duplicates, out of order, off the clock`.
    fn cells(&self) -> String {
        format!(
            "{:.4} ({:.4}) | {} | {}, {}, {}",
            self.best, self.median, self.every, self.duplicates, self.out_of_order, self.off_clock
        )
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
    let dir = tempfile::tempdir().expect("a temporary state directory");
    let load_before = report::load_average();

    // Bursts, the subjects interleaved round by round.
    let (plain, dynamic, embedded) = (generator(), dyn_generator(), issuer(dir.path()));
    let mut outs: Vec<Vec<u64>> = (0..3).map(|_| Vec::with_capacity(BURST)).collect();
    let [out_plain, out_dyn, out_issuer] = &mut outs[..] else {
        unreachable!()
    };
    let mut subjects = vec![
        Subject::new("`Generator::next_id` (system clock)", || {
            burst::time_calls(
                &mut || plain.next_id().expect("on the clock").as_u64(),
                1,
                BURST,
                out_plain,
            )
        }),
        Subject::new("`Generator::next_id` on an `Arc<dyn Clock>`", || {
            burst::time_calls(
                &mut || dynamic.next_id().expect("on the clock").as_u64(),
                1,
                BURST,
                out_dyn,
            )
        }),
        Subject::new(
            "`EmbeddedIssuer::next_id` (static node, own runtime thread)",
            || {
                burst::time_calls(
                    &mut || embedded.next_id().expect("issued").as_u64(),
                    1,
                    BURST,
                    out_issuer,
                )
            },
        ),
    ];
    let summaries = burst::measure(&mut subjects, options.rounds, 25);
    let labels: Vec<String> = subjects.iter().map(|s| s.label.clone()).collect();
    drop(subjects);

    // Sustained, round by round.
    let duration = Duration::from_secs_f64(options.seconds);
    let capacity = (options.seconds * 4_096_000.0 * 1.05) as usize + 65_536;
    // Two threads of a node of two slots make up to twice one slot's IDs.
    let slots_factor = if options.slot_rounds > 0 { 2 } else { 1 };
    // No lead samples here (the generator bench measures the lead).
    let mut buffers = Buffers::new(2, capacity * slots_factor, usize::MAX);
    let spec = &SNOWMINT;
    let mut runs: Vec<[Vec<Sustained>; 2]> = vec![Default::default(), Default::default()];
    for _ in 0..options.sustained_rounds {
        for threads in [1, 2] {
            let generator = generator();
            let nexts = (0..threads)
                .map(|_| || generator.next_id().expect("on the clock").as_u64())
                .collect();
            runs[0][threads - 1].push(sustained::run(spec, nexts, duration, &mut buffers, || {
                spec.timestamp_now()
            }));
            let nexts = (0..threads)
                .map(|_| || embedded.next_id().expect("issued").as_u64())
                .collect();
            runs[1][threads - 1].push(sustained::run(spec, nexts, duration, &mut buffers, || {
                spec.timestamp_now()
            }));
        }
    }
    // One slot against two, 2 threads each, alternating round by round.
    let wide = issuer_of(dir.path(), WIDE, 2);
    let mut slot_runs: [Vec<Sustained>; 2] = Default::default();
    for _ in 0..options.slot_rounds {
        for (index, subject) in [&embedded, &wide].into_iter().enumerate() {
            let nexts = (0..2)
                .map(|_| || subject.next_id().expect("issued").as_u64())
                .collect();
            slot_runs[index].push(sustained::run(spec, nexts, duration, &mut buffers, || {
                spec.timestamp_now()
            }));
        }
    }
    wide.shutdown();
    embedded.shutdown();

    println!(
        "{}; load average before: {load_before}; after: {}.",
        report::machine(),
        report::load_average()
    );
    println!();
    println!(
        "Bursts: {} samples per subject (after a clock tick, {BURST} calls).",
        options.rounds * 25
    );
    println!();
    println!("| call | ns per ID in a burst, median (p10–p90) | × `Generator::next_id` |");
    println!("|---|--:|--:|");
    for (label, summary) in labels.iter().zip(&summaries) {
        println!(
            "| {label} | {:.1} ({:.1}–{:.1}) | {:.3} |",
            summary.median,
            summary.p10,
            summary.p90,
            summary.median / summaries[0].median
        );
    }
    let mut failed = false;
    if options.sustained_rounds > 0 {
        println!();
        println!(
            "Sustained: {} rounds of {} s, 1 and 2 threads; ratio to the ceiling of 4,096,000 IDs/s.",
            options.sustained_rounds, options.seconds
        );
        println!();
        println!(
            "| call | threads | best round (median round) | every round | duplicates, out of order, off the clock |"
        );
        println!("|---|--:|--:|---|---|");
        for (label, per_threads) in ["`Generator::next_id`", "`EmbeddedIssuer::next_id`"]
            .iter()
            .zip(&runs)
        {
            for (threads, rounds) in [1, 2].iter().zip(per_threads) {
                let summary = Rounds::of(rounds, spec);
                failed |= summary.failed;
                println!("| {label} | {threads} | {} |", summary.cells());
            }
        }
    }
    if options.slot_rounds > 0 {
        println!();
        println!(
            "Slots: {} rounds of {} s, 2 threads, one slot and two alternating; ratio to one slot's ceiling of 4,096,000 IDs/s.",
            options.slot_rounds, options.seconds
        );
        println!();
        println!(
            "| call | slots | threads | best round (median round) | every round | duplicates, out of order, off the clock |"
        );
        println!("|---|--:|--:|--:|---|---|");
        let mut medians = Vec::new();
        for (slots, rounds) in [1, 2].iter().zip(&slot_runs) {
            let summary = Rounds::of(rounds, spec);
            failed |= summary.failed;
            medians.push(summary.median);
            println!(
                "| `EmbeddedIssuer::next_id` | {slots} | 2 | {} |",
                summary.cells()
            );
        }
        println!();
        println!(
            "Two slots over one, median rounds: {:.3}x",
            medians[1] / medians[0]
        );
    }
    if failed {
        eprintln!("error: a run issued an ID twice, out of order, or failed");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
