//! The markdown the `generator` binary prints (and BENCHMARKS.md quotes).

use std::fmt::Write as _;
use std::fs;

use crate::burst::Summary;
use crate::contenders::Spec;
use crate::sustained::{Lead, Sustained};

/// Everything measured about one contender.
#[derive(Debug, Clone)]
pub struct Row {
    /// The contender.
    pub spec: Spec,
    /// One thread, every round.
    pub one_thread: Vec<Sustained>,
    /// Two threads sharing one generator, every round.
    pub two_threads: Vec<Sustained>,
    /// One call inside a burst.
    pub burst: Summary,
    /// How many calls a burst made.
    pub burst_len: usize,
}

/// What one read of the system clock costs, the two ways the table uses,
/// and the floor of a generator that reads it.
#[derive(Debug, Clone, Copy)]
pub struct Clocks {
    /// `SystemTime::now()` alone.
    pub now: Summary,
    /// `SystemTime::now()` turned into Unix milliseconds.
    pub unix_ms: Summary,
    /// `SystemTime::now()` and one uncontended atomic read-modify-write.
    pub floor: Summary,
}

/// How the burst part names its reference subjects (the clock reads, the
/// floor, the batch calls), in the generator's report and in its `--tsv`
/// records.
pub mod label {
    /// `SystemTime::now()` alone.
    pub const NOW: &str = "SystemTime::now()";
    /// `SystemTime::now()` as Unix milliseconds.
    pub const UNIX_MS: &str = "SystemTime::now() as Unix ms";
    /// `SystemTime::now()` and one atomic `fetch_add`.
    pub const FLOOR: &str = "SystemTime::now() + AtomicU64::fetch_add";
    /// snowmint's batch call.
    pub const SNOWMINT_BATCH: &str = "snowmint next_ids";
    /// snowflake_me's batch call.
    pub const SNOWFLAKE_ME_BATCH: &str = "snowflake_me next_ids_into";
}

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` gives them.
pub fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// A few facts about the machine, read from `/proc` and `/sys` when there.
pub fn machine() -> String {
    let read = |path: &str| fs::read_to_string(path).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|line| line.strip_prefix("model name"))
        .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let kernel = read("/proc/sys/kernel/osrelease");
    let clocksource = read("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    format!(
        "{cpu}, {cores} cores available, Linux {}, clock source {}",
        kernel.trim(),
        clocksource.trim()
    )
}

/// `1234567.8` as `1,234,568`.
pub fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.round());
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

/// The best round's rate and ratio, with the median round's ratio.
fn rate(runs: &[Sustained], spec: &Spec) -> String {
    let mut ratios: Vec<f64> = runs.iter().map(|run| run.ratio(spec)).collect();
    ratios.sort_by(f64::total_cmp);
    let Some(best) = runs
        .iter()
        .max_by(|a, b| a.ratio(spec).total_cmp(&b.ratio(spec)))
    else {
        return "not run".to_owned();
    };
    format!(
        "{} ({:.4}; median {:.4})",
        thousands(best.ids_per_second(spec)),
        best.ratio(spec),
        ratios[ratios.len() / 2]
    )
}

fn total(runs: &[Sustained], count: impl Fn(&Sustained) -> u64) -> u64 {
    runs.iter().map(count).sum()
}

/// The generator table: throughput, checks, burst cost.
pub fn table(rows: &[Row], clocks: &Clocks) -> String {
    let mut out = String::new();
    out.push_str(
        "| contender | thread-safe | reads the clock on every call | own ceiling, IDs/s \
         | 1 thread: best round's IDs/s (ratio to ceiling; median round's) \
         | 2 threads: best round's IDs/s (ratio to ceiling; median round's) \
         | duplicates, 1 / 2 threads, all rounds | out of order, 1 / 2 threads, all rounds \
         | ns per ID in a burst (p10–p90) | ratio to one clock read as Unix ms \
         | ratio to one `SystemTime::now()` |\n",
    );
    out.push_str("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for row in rows {
        let spec = &row.spec;
        let thread_safe = if spec.thread_safe {
            "yes"
        } else {
            "no (a `Mutex` for 2 threads)"
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} / {} | {} / {} | {:.1} ({:.1}–{:.1}){} | {:.2} | {:.2} |",
            spec.name,
            thread_safe,
            yes_no(spec.reads_clock_every_call),
            thousands(spec.ceiling_per_second()),
            rate(&row.one_thread, spec),
            rate(&row.two_threads, spec),
            total(&row.one_thread, |run| run.duplicates),
            total(&row.two_threads, |run| run.duplicates),
            total(&row.one_thread, |run| run.order_violations),
            total(&row.two_threads, |run| run.order_violations),
            row.burst.median,
            row.burst.p10,
            row.burst.p90,
            if row.burst_len == 4096 {
                String::new()
            } else {
                format!(", {} calls", row.burst_len)
            },
            row.burst.median / clocks.unix_ms.median,
            row.burst.median / clocks.now.median,
        );
    }
    out
}

/// Notes on anything a check found: failures, IDs off the wall clock.
pub fn findings(rows: &[Row]) -> String {
    let mut out = String::new();
    for row in rows {
        for run in row.one_thread.iter().chain(&row.two_threads) {
            let threads = run.threads;
            if let Some(failure) = &run.failure {
                let _ = writeln!(out, "- {}, {threads} thread(s): {failure}", row.spec.name);
            }
            if run.off_clock > 0 {
                let _ = writeln!(
                    out,
                    "- {}, {threads} thread(s): {} IDs carry a timestamp outside the wall \
                     clock's reading at the start and end of the run (±1 unit)",
                    row.spec.name, run.off_clock
                );
            }
        }
    }
    out
}

/// One row of the lead table that is not a sustained contender: a
/// generator measured for its lead alone (rs-snowflake's `lazy_generate`,
/// which never reads the clock after it starts and so runs ahead of it).
#[derive(Debug, Clone)]
pub struct LeadOnly {
    /// As the table names it.
    pub name: &'static str,
    /// Threads sharing it.
    pub threads: usize,
    /// IDs per second by the wall clock.
    pub ids_per_second: f64,
    /// Its IDs' lead.
    pub lead: Lead,
}

/// Nanoseconds as milliseconds, 3 decimals.
fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn lead_cells(lead: &Lead) -> String {
    format!(
        "{} | {:.4} % | {} | {} | {} | {}",
        thousands(lead.samples() as f64),
        lead.share_ahead() * 100.0,
        ms(lead.ns.value_at_quantile(0.99)),
        ms(lead.ns.value_at_quantile(0.999)),
        ms(lead.ns.max()),
        ms(lead.max_lag_ns),
    )
}

/// The lead table of issue 36: per contender and thread count, over all
/// rounds, how far the sampled IDs' timestamps ran ahead of the clock read
/// right after each came back; then the rows measured for their lead alone.
pub fn lead_table(rows: &[Row], lead_only: &[LeadOnly]) -> String {
    let mut out = String::from(
        "| contender | threads | IDs sampled, all rounds | share with a lead > 0 \
         | p99 lead, ms | p99.9 lead, ms | max lead, ms | max lag, ms |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for row in rows {
        for runs in [&row.one_thread, &row.two_threads] {
            let Some(first) = runs.first() else { continue };
            let mut lead = Lead::default();
            for run in runs {
                lead.merge(&run.lead);
            }
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                row.spec.name,
                first.threads,
                lead_cells(&lead)
            );
        }
    }
    for row in lead_only {
        let _ = writeln!(
            out,
            "| {} ({} IDs/s by the wall clock) | {} | {} |",
            row.name,
            thousands(row.ids_per_second),
            row.threads,
            lead_cells(&row.lead)
        );
    }
    out
}

/// Sustained runs in detail: wall time, every ID, the units counted.
pub fn details(rows: &[Row]) -> String {
    let mut out = String::from(
        "| contender | threads | round | wall time, s | IDs made | whole units counted \
         | IDs in them | ratio to ceiling | units short of the ceiling | empty units |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for row in rows {
        let rounds = row.one_thread.iter().enumerate();
        for (round, run) in rounds.chain(row.two_threads.iter().enumerate()) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.3} | {} | {} | {} | {:.4} | {} | {} |",
                row.spec.name,
                run.threads,
                round + 1,
                run.wall.as_secs_f64(),
                thousands(run.total_ids as f64),
                thousands(run.full_units as f64),
                thousands(run.ids_in_full_units as f64),
                run.ratio(&row.spec),
                thousands(run.short_units as f64),
                thousands(run.empty_units as f64),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn thousands_groups_digits_by_three() {
        assert_eq!(thousands(0.0), "0");
        assert_eq!(thousands(999.4), "999");
        assert_eq!(thousands(4_096_000.0), "4,096,000");
        assert_eq!(thousands(25_600.0), "25,600");
    }
}
