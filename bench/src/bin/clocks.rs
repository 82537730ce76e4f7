//! Why snowmint's `SystemClock` remembers the last millisecond: the ways of
//! turning the system clock into Unix milliseconds, alone and inside the
//! generator, measured like the generator benchmark's bursts.
//!
//! ```text
//! cargo build --profile bench-lto -p snowmint-bench --bin clocks
//! target/bench-lto/clocks [ROUNDS]     # default 40 rounds of 25 samples each
//! ```
//!
//! Prints a markdown table: ns per call inside a 4096-call burst right after
//! the clock ticks (median, p10–p90), and the ratio to one bare
//! `SystemTime::now()`.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use snowmint::{Clock, Generator, Layout, Node, SystemClock};
use snowmint_bench::burst::{self, Subject};
use snowmint_bench::report;

/// Converts every reading, with no 128-bit arithmetic: whole seconds times
/// 1000 plus the milliseconds of the fraction.
#[derive(Debug, Clone, Copy, Default)]
struct ConvertingClock;

impl Clock for ConvertingClock {
    #[inline]
    fn now_ms(&self) -> i64 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(since) => since.as_secs() as i64 * 1000 + i64::from(since.subsec_millis()),
            Err(before) => -(before.duration().as_millis() as i64),
        }
    }
}

/// The usual conversion: `duration_since`, then `as_millis` (a `u128`).
#[inline]
fn as_millis_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as i64)
}

/// A subject timing `read` as a burst of 4096 calls, its results kept.
fn reads(label: &str, mut read: impl FnMut() -> i64 + 'static) -> Subject<'static> {
    let mut out = Vec::with_capacity(4096);
    let mut count = 0;
    Subject::new(label, move || {
        burst::time_calls(
            &mut || {
                black_box(read());
                count += 1;
                count
            },
            1,
            4096,
            &mut out,
        )
    })
}

/// A subject timing `generator.next_id()` as a burst of 4096 calls.
fn ids<C: Clock + 'static>(label: &str, generator: Generator<C>) -> Subject<'static> {
    let mut out = Vec::with_capacity(4096);
    Subject::new(label, move || {
        burst::time_calls(
            &mut || {
                generator
                    .next_id()
                    .expect("the system clock is inside the layout and does not step back")
                    .as_u64()
            },
            1,
            4096,
            &mut out,
        )
    })
}

fn main() -> ExitCode {
    let rounds = match std::env::args().nth(1).map(|text| text.parse::<usize>()) {
        None => 40,
        Some(Ok(rounds)) if (1..=1000).contains(&rounds) => rounds,
        Some(_) => {
            eprintln!("error: expected the number of rounds, a whole number in 1..=1000");
            return ExitCode::FAILURE;
        }
    };
    let node = Node::from_slot(33);
    let load_before = report::load_average();
    let mut out = Vec::with_capacity(4096);
    let mut subjects = vec![
        Subject::new("`SystemTime::now()` alone", move || {
            burst::time_clock_reads(4096, &mut out)
        }),
        reads(
            "`SystemClock::now_ms()` (remembers the last millisecond)",
            || SystemClock.now_ms(),
        ),
        reads("`duration_since`, `as_millis()`", as_millis_now),
        reads(
            "`duration_since`, `as_secs() * 1000 + subsec_millis()`",
            || ConvertingClock.now_ms(),
        ),
        ids(
            "`Generator` on `SystemClock`",
            Generator::new(Layout::TWITTER, node).expect("node 1/1 fits"),
        ),
        ids(
            "`Generator` on a clock converting every reading (`as_secs() * 1000 + subsec_millis()`)",
            Generator::builder(Layout::TWITTER, node)
                .clock(ConvertingClock)
                .build()
                .expect("node 1/1 fits"),
        ),
    ];
    let summaries = burst::measure(&mut subjects, rounds, 25);
    let now = summaries[0].median;
    println!(
        "{}; load average before: {load_before}; after: {}; {} samples per subject.",
        report::machine(),
        report::load_average(),
        rounds * 25
    );
    println!();
    println!("| call | ns per call in a burst (p10–p90) | × `SystemTime::now()` |");
    println!("|---|--:|--:|");
    for (subject, summary) in subjects.iter().zip(&summaries) {
        println!(
            "| {} | {:.1} ({:.1}–{:.1}) | {:.2} |",
            subject.label,
            summary.median,
            summary.p10,
            summary.p90,
            summary.median / now
        );
    }
    ExitCode::SUCCESS
}
