//! How long the calculator page takes to read and show a batch of 10,000
//! pasted IDs, in a real headless Chromium against the real binary (the
//! one this bench builds): from the click on "Read them all" to the table
//! of 10,000 rows drawn (the frame after it was filled in), and the share
//! of that spent on the `POST /v1/inspect` request.
//!
//! ```sh
//! cargo bench -p snowmint-cli --bench page_batch
//! ```
//!
//! Target: under one second. The IDs are Twitter IDs of 10,000 distinct
//! seconds in a shuffled order, so that the table's sort has work to do.

#[allow(
    dead_code,
    reason = "the browser module serves the page's tests; the bench uses part of it"
)]
#[path = "../tests/browser/mod.rs"]
mod browser;

use browser::{Browser, Options};
use serde_json::Value;

const RUNS: usize = 7;
const TWITTER_EPOCH: u64 = 1_288_834_974_657;

#[tokio::main]
async fn main() {
    let page = Browser::open("bench-batch", Options::default()).await;
    let start_ms = 1_700_000_000_000u64;
    let mut order: Vec<u64> = (0..10_000).collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..order.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let text: String = order
        .iter()
        .map(|i| format!("{}\n", ((start_ms + i * 1000 - TWITTER_EPOCH) << 22) | 4095))
        .collect();
    let script = format!(
        r#"
        return (async () => {{
        const box = document.getElementById('batch-text');
        box.value = {text};
        document.getElementById('batch-rows').replaceChildren();
        performance.clearResourceTimings();
        const started = performance.now();
        document.querySelector('#batch-form button[type=submit]').click();
        await new Promise((done) => {{
          const look = () => document.querySelectorAll('#batch-rows tr').length === 10000
            ? requestAnimationFrame(() => requestAnimationFrame(done))
            : requestAnimationFrame(look);
          look();
        }});
        const total = performance.now() - started;
        const request = performance.getEntriesByType('resource').find((e) => e.name.includes('/v1/inspect'));
        return [total, request ? request.duration : null];
        }})();
        "#,
        text = Value::from(text)
    );
    let mut totals = Vec::new();
    println!("| run | click to table drawn (ms) | POST /v1/inspect (ms) |");
    println!("|---|---|---|");
    for run in 1..=RUNS {
        let measured = page.js(&script).await;
        let total = measured[0].as_f64().expect("a duration");
        let request = measured[1].as_f64().unwrap_or(f64::NAN);
        println!("| {run} | {total:.0} | {request:.0} |");
        totals.push(total);
    }
    totals.sort_by(f64::total_cmp);
    println!(
        "\nbest {:.0} ms, median {:.0} ms over {RUNS} runs (target: under 1000 ms); load average {}",
        totals[0],
        totals[RUNS / 2],
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    page.close().await;
}
