//! Runs the `generator` benchmark as built by several cargo profiles, in one
//! run, and prints one side-by-side table.
//!
//! ```text
//! bench/profiles.sh [ARGS]     # builds release, bench-thin and bench-lto, then runs this
//! target/release/profiles [--passes P] [--rounds R] [--sustained-rounds N] [--seconds S]
//!     [--sustained NAME,...] [--only NAME,...] NAME=BINARY...
//! ```
//!
//! Each `NAME=BINARY` is the `generator` binary of one profile. The
//! binaries run one after another, never side by side, with `--tsv`:
//!
//! - sustained runs first, round by round: in each round every profile's
//!   binary makes one 1-thread and one 2-thread run of the contenders named
//!   by `--sustained` (default `snowmint`);
//! - then `--passes` burst passes (default 8): in each pass every profile's
//!   binary takes `--rounds` rounds (default 5, 25 samples per subject
//!   each) of the contenders named by `--only` (default all). The samples of
//!   all passes are pooled per profile, so each median comes from
//!   `passes × rounds × 25` samples (1000 by default), like the single
//!   profile run's.
//!
//! The profile that goes first changes from one round or pass to the next,
//! so that a stretch of load from elsewhere on the machine falls on every
//! profile alike.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::{Command, ExitCode, Stdio};

use snowmint_bench::burst::{self, Summary};
use snowmint_bench::contenders::{self, Spec};
use snowmint_bench::report::{self, label};

/// What `--help` prints.
const USAGE: &str = "\
Runs the generator benchmark as built by several profiles, in one run, and
prints one side-by-side table. bench/profiles.sh builds the binaries and
runs this.

Usage: profiles [--passes P] [--rounds R] [--sustained-rounds N] [--seconds S]
                [--sustained NAME,...] [--only NAME,...] NAME=BINARY...

  --passes P             burst passes; each runs every binary once (1..=100, default 8)
  --rounds R             burst rounds per binary per pass (1..=1000, default 5)
  --sustained-rounds N   sustained rounds; each runs every binary once (0..=20, default 3)
  --seconds S            length of each sustained run (0.1..=60, default 5)
  --sustained NAME,...   contenders run sustained (default snowmint; `all` for all)
  --only NAME,...        contenders sampled in bursts (default all)
  NAME=BINARY            a profile's name and its generator binary

Example: target/release/profiles release=target/release/generator \\
             bench-lto=target/bench-lto/generator";

struct Options {
    passes: usize,
    rounds: usize,
    sustained_rounds: usize,
    seconds: f64,
    sustained: String,
    only: Option<String>,
    profiles: Vec<(String, String)>,
}

fn number<T: std::str::FromStr + PartialOrd>(
    flag: &str,
    text: &str,
    range: std::ops::RangeInclusive<T>,
    what: &str,
) -> Result<T, String> {
    text.parse()
        .ok()
        .filter(|value| range.contains(value))
        .ok_or(format!("{flag} {text}: expected {what}"))
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        passes: 8,
        rounds: 5,
        sustained_rounds: 3,
        seconds: 5.0,
        sustained: "snowmint".to_owned(),
        only: None,
        profiles: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--passes" => {
                options.passes = number(&arg, &value()?, 1..=100, "a whole number in 1..=100")?
            }
            "--rounds" => {
                options.rounds = number(&arg, &value()?, 1..=1000, "a whole number in 1..=1000")?
            }
            "--sustained-rounds" => {
                options.sustained_rounds =
                    number(&arg, &value()?, 0..=20, "a whole number in 0..=20")?
            }
            "--seconds" => {
                options.seconds = number(&arg, &value()?, 0.1..=60.0, "a number in 0.1..=60")?
            }
            "--sustained" => options.sustained = value()?,
            "--only" => options.only = Some(value()?),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            flag if flag.starts_with('-') => {
                return Err(format!("unknown argument {flag} (see --help)"));
            }
            profile => {
                let (name, binary) = profile
                    .split_once('=')
                    .filter(|(name, binary)| !name.is_empty() && !binary.is_empty())
                    .ok_or(format!(
                        "{profile}: expected NAME=BINARY, for example \
                         release=target/release/generator"
                    ))?;
                options.profiles.push((name.to_owned(), binary.to_owned()));
            }
        }
    }
    if options.profiles.is_empty() {
        return Err("no profile given: expected at least one NAME=BINARY (see --help)".into());
    }
    Ok(options)
}

/// One sustained run, as a `sustained` record gives it.
#[derive(Debug, Clone)]
struct Run {
    ratio: f64,
    duplicates: u64,
    out_of_order: u64,
    off_clock: u64,
    failure: Option<String>,
}

/// Everything measured for one profile.
#[derive(Debug, Default)]
struct Measured {
    /// Per contender, per thread count: every run.
    sustained: BTreeMap<(String, u32), Vec<Run>>,
    /// Per subject: every burst sample, in ns per call.
    samples: BTreeMap<String, Vec<f64>>,
}

/// Runs `binary` with `args` and `--tsv`; adds what it measured to `into`.
fn run(binary: &str, args: &[String], into: &mut Measured) -> Result<(), String> {
    let output = Command::new(binary)
        .args(args)
        .arg("--tsv")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|error| format!("{binary}: cannot run it: {error}"))?;
    if !output.status.success() {
        return Err(format!("{binary} {}: {}", args.join(" "), output.status));
    }
    let text = String::from_utf8(output.stdout)
        .map_err(|_| format!("{binary}: its records are not UTF-8"))?;
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let bad = || format!("{binary}: unexpected record {line:?}");
        let parse = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .ok_or_else(bad)
        };
        let count = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .ok_or_else(bad)
        };
        match fields[0] {
            // The lead is the generator's own report; profiles compare speed.
            "load" | "lead" => {}
            "sustained" if fields.len() == 10 => {
                let threads = count(2)? as u32;
                into.sustained
                    .entry((fields[1].to_owned(), threads))
                    .or_default()
                    .push(Run {
                        ratio: parse(4)?,
                        duplicates: count(6)?,
                        out_of_order: count(7)?,
                        off_clock: count(8)?,
                        failure: (fields[9] != "-").then(|| fields[9].to_owned()),
                    });
            }
            "sample" if fields.len() == 3 => {
                into.samples
                    .entry(fields[1].to_owned())
                    .or_default()
                    .push(parse(2)?);
            }
            _ => return Err(bad()),
        }
    }
    Ok(())
}

/// The 1-minute load average now.
fn load_one_minute() -> Option<f64> {
    report::load_average()
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The profiles in the order of round or pass `k`: each goes first in turn.
fn order(count: usize, k: usize) -> impl Iterator<Item = usize> {
    (0..count).map(move |i| (i + k) % count)
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    match measure(&options) {
        Ok((measured, loads, load_before)) => {
            print_report(&options, &measured, &loads, &load_before);
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Every run of every binary; returns what they measured, the 1-minute load
/// average before each run, and the load averages at the start.
fn measure(options: &Options) -> Result<(Vec<Measured>, Vec<f64>, String), String> {
    let load_before = report::load_average();
    let count = options.profiles.len();
    let mut measured: Vec<Measured> = (0..count).map(|_| Measured::default()).collect();
    let mut loads = Vec::new();
    // Without `--only` the binary runs every contender.
    let sustained = (!options.sustained.eq_ignore_ascii_case("all"))
        .then(|| ["--only".to_owned(), options.sustained.clone()]);
    for round in 0..options.sustained_rounds {
        for i in order(count, round) {
            let (name, binary) = &options.profiles[i];
            eprintln!("sustained, round {}: {name}", round + 1);
            loads.extend(load_one_minute());
            let mut args = [
                "--rounds",
                "0",
                "--sustained-rounds",
                "1",
                "--seconds",
                &options.seconds.to_string(),
            ]
            .map(str::to_owned)
            .to_vec();
            args.extend(sustained.iter().flatten().cloned());
            run(binary, &args, &mut measured[i])?;
        }
    }
    for pass in 0..options.passes {
        for i in order(count, pass) {
            let (name, binary) = &options.profiles[i];
            eprintln!("bursts, pass {}: {name}", pass + 1);
            loads.extend(load_one_minute());
            let mut args = [
                "--sustained-rounds",
                "0",
                "--rounds",
                &options.rounds.to_string(),
            ]
            .map(str::to_owned)
            .to_vec();
            if let Some(only) = &options.only {
                args.extend(["--only".to_owned(), only.clone()]);
            }
            run(binary, &args, &mut measured[i])?;
        }
    }
    Ok((measured, loads, load_before))
}

/// The subjects of the burst table, in its order: the references, the
/// contenders, the batch calls.
fn subjects() -> Vec<(&'static str, Option<&'static Spec>)> {
    let mut subjects = vec![
        (label::NOW, None),
        (label::UNIX_MS, None),
        (label::FLOOR, None),
    ];
    subjects.extend(contenders::ALL.map(|spec| (spec.name, Some(spec))));
    subjects.extend([
        (label::SNOWMINT_BATCH, None),
        (label::SNOWFLAKE_ME_BATCH, None),
    ]);
    subjects
}

/// Every profile's summary of every subject that it sampled.
fn summaries(measured: &[Measured]) -> Vec<BTreeMap<String, Summary>> {
    measured
        .iter()
        .map(|m| {
            m.samples
                .iter()
                .map(|(subject, samples)| (subject.clone(), burst::summarise(&mut samples.clone())))
                .collect()
        })
        .collect()
}

fn print_report(options: &Options, measured: &[Measured], loads: &[f64], load_before: &str) {
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
    let mut sorted = loads.to_vec();
    sorted.sort_by(f64::total_cmp);
    if let (Some(low), Some(high)) = (sorted.first(), sorted.last()) {
        println!(
            "1-minute load average at the start of each of the {} runs: lowest {low:.2}, \
             median {:.2}, highest {high:.2}.",
            sorted.len(),
            sorted[sorted.len() / 2]
        );
    }
    let names: Vec<&str> = options
        .profiles
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    println!(
        "Profiles: {}. Bursts: {} passes × {} rounds × 25 samples per subject and profile; \
         sustained: {} rounds of {} s, 1 and 2 threads.",
        names.join(", "),
        options.passes,
        options.rounds,
        options.sustained_rounds,
        options.seconds
    );
    println!();
    print!("{}", burst_table(&names, &summaries(measured)));
    println!();
    print!("{}", lowest(&names, &summaries(measured)));
    if options.sustained_rounds > 0 {
        println!();
        print!("{}", sustained_table(&names, measured));
    }
}

/// Burst cost per subject, the profiles side by side.
fn burst_table(names: &[&str], summaries: &[BTreeMap<String, Summary>]) -> String {
    let mut out = String::from(
        "| ns per ID inside a burst, median (p10–p90) | thread-safe, reads the clock on every call |",
    );
    let mut rule = String::from("|---|---|");
    for name in names {
        let _ = write!(out, " {name} | × now() as Unix ms | × now() |");
        rule.push_str("--:|--:|--:|");
    }
    let _ = writeln!(out, "\n{rule}");
    for (subject, spec) in subjects() {
        if summaries.iter().all(|s| !s.contains_key(subject)) {
            continue;
        }
        let kind = match spec {
            Some(spec) => format!(
                "{}, {}",
                if spec.thread_safe { "yes" } else { "no" },
                if spec.reads_clock_every_call {
                    "yes"
                } else {
                    "no"
                }
            ),
            None => "(reference)".to_owned(),
        };
        let _ = write!(out, "| {} | {kind} |", display(subject));
        for profile in summaries {
            match (
                profile.get(subject),
                profile.get(label::UNIX_MS),
                profile.get(label::NOW),
            ) {
                (Some(s), Some(ms), Some(now)) => {
                    let calls = spec
                        .filter(|spec| spec.ids_per_unit < 4096)
                        .map_or(String::new(), |spec| {
                            format!(", {} calls", spec.ids_per_unit)
                        });
                    let _ = write!(
                        out,
                        " {:.1} ({:.1}–{:.1}){calls} | {:.2} | {:.2} |",
                        s.median,
                        s.p10,
                        s.p90,
                        s.median / ms.median,
                        s.median / now.median
                    );
                }
                _ => out.push_str(" not run | | |"),
            }
        }
        out.push('\n');
    }
    out
}

/// How the table names a subject: contenders as they are, references in
/// code type.
fn display(subject: &str) -> String {
    if contenders::ALL.iter().any(|spec| spec.name == subject) {
        subject.to_owned()
    } else {
        format!("`{subject}`")
    }
}

/// Per profile, the thread-safe contenders that read the clock on every
/// call, cheapest first.
fn lowest(names: &[&str], summaries: &[BTreeMap<String, Summary>]) -> String {
    let mut out = String::new();
    for (name, profile) in names.iter().zip(summaries) {
        let mut ranked: Vec<(&str, f64)> = contenders::ALL
            .iter()
            .filter(|spec| spec.thread_safe && spec.reads_clock_every_call)
            .filter_map(|spec| profile.get(spec.name).map(|s| (spec.name, s.median)))
            .collect();
        ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
        let listed: Vec<String> = ranked
            .iter()
            .map(|(contender, median)| format!("{contender} {median:.1}"))
            .collect();
        let _ = writeln!(
            out,
            "- {name}, thread-safe contenders that read the clock on every call, cheapest first (ns): {}",
            listed.join("; ")
        );
    }
    out
}

/// Sustained throughput per contender and thread count, the profiles side
/// by side: best and median round's ratio to the layout's ceiling, and the
/// checks over all rounds.
fn sustained_table(names: &[&str], measured: &[Measured]) -> String {
    let mut out =
        String::from("| sustained, ratio to the ceiling: best round (median round) | threads |");
    let mut rule = String::from("|---|--:|");
    for name in names {
        let _ = write!(out, " {name} |");
        rule.push_str("--:|");
    }
    out.push_str(" duplicates, out of order, off the clock: all profiles and rounds |\n");
    let _ = writeln!(out, "{rule}---|");
    let mut problems = String::new();
    for spec in contenders::ALL {
        for threads in [1, 2] {
            let key = (spec.name.to_owned(), threads);
            if measured.iter().all(|m| !m.sustained.contains_key(&key)) {
                continue;
            }
            let _ = write!(out, "| {} | {threads} |", spec.name);
            let (mut duplicates, mut out_of_order, mut off_clock) = (0, 0, 0);
            for (name, m) in names.iter().zip(measured) {
                let Some(runs) = m.sustained.get(&key) else {
                    out.push_str(" not run |");
                    continue;
                };
                let mut ratios: Vec<f64> = runs.iter().map(|run| run.ratio).collect();
                ratios.sort_by(f64::total_cmp);
                let _ = write!(
                    out,
                    " {:.4} ({:.4}) |",
                    ratios[ratios.len() - 1],
                    ratios[ratios.len() / 2]
                );
                for run in runs {
                    duplicates += run.duplicates;
                    out_of_order += run.out_of_order;
                    off_clock += run.off_clock;
                    if let Some(failure) = &run.failure {
                        let _ = writeln!(
                            problems,
                            "- {}, {threads} thread(s), {name}: {failure}",
                            spec.name
                        );
                    }
                }
            }
            let _ = writeln!(out, " {duplicates}, {out_of_order}, {off_clock} |");
        }
    }
    out.push_str(&problems);
    out
}
