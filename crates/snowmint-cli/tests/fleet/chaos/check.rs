//! The checker: every batch of IDs the clients received, and what the
//! uniqueness and high-water mark rules say about them. The rules, and why
//! each check follows from them, are in the [module docs](super).

use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// How many examples of each kind of failure the findings keep.
const EXAMPLES: usize = 10;

/// One `200` answer of `/v1/ids`: who answered, when, and the IDs' range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    /// The node (0-based) whose process answered.
    pub node: usize,
    /// The process that answered: one number per start of a node, so that
    /// a node restarted after kill -9 counts as another holder.
    pub process: u32,
    /// When the request was sent, in µs since the run's start (the test's
    /// monotonic clock, which no fault moves).
    pub sent_us: u64,
    /// When the whole answer had arrived, on the same clock.
    pub received_us: u64,
    /// The first (smallest) ID of the batch.
    pub first: u64,
    /// The last (largest) ID of the batch.
    pub last: u64,
    /// How many IDs it held.
    pub count: u32,
}

/// The slot of a Twitter-layout ID: datacenter * 32 + machine.
pub fn slot_of(id: u64) -> u64 {
    (id >> 12) & 0x3ff
}

/// The timestamp of a Twitter-layout ID, in ms since its epoch.
pub fn ms_of(id: u64) -> u64 {
    id >> 22
}

impl Batch {
    fn slot(&self) -> u64 {
        slot_of(self.first)
    }
}

impl fmt::Display for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "node {} (process {}), sent {:.3} s, received {:.3} s: {} IDs {}..={} (ms {}..={})",
            self.node,
            self.process,
            self.sent_us as f64 / 1e6,
            self.received_us as f64 / 1e6,
            self.count,
            self.first,
            self.last,
            ms_of(self.first),
            ms_of(self.last)
        )
    }
}

/// What the checker found.
#[derive(Debug, Default)]
pub struct Findings {
    /// IDs checked.
    pub ids: usize,
    /// Batches checked.
    pub batches: usize,
    /// IDs received more than once (each extra copy counts).
    pub duplicates: usize,
    /// A few of them.
    pub duplicate_examples: Vec<u64>,
    /// Batches of two processes on one slot whose millisecond ranges meet.
    pub overlaps: usize,
    /// A few of them, described.
    pub overlap_examples: Vec<String>,
    /// Batches not above a batch of the same slot received before they
    /// were asked for.
    pub regressions: usize,
    /// A few of them, described.
    pub regression_examples: Vec<String>,
    /// For each slot, how many processes issued on it.
    pub processes_per_slot: BTreeMap<u64, usize>,
    /// How many times a slot was seen changing hands: in the order the
    /// batches of a slot arrived, how often the process changed.
    pub hand_overs: usize,
}

impl Findings {
    /// Whether any rule was broken.
    pub fn failed(&self) -> bool {
        self.duplicates > 0 || self.overlaps > 0 || self.regressions > 0
    }

    /// The failures, one line each, at most a few of each kind.
    pub fn failures(&self) -> String {
        let mut lines = Vec::new();
        if self.duplicates > 0 {
            lines.push(format!(
                "{} duplicate IDs, such as {:?}",
                self.duplicates, self.duplicate_examples
            ));
        }
        if self.overlaps > 0 {
            lines.push(format!(
                "{} batches share milliseconds of a slot with another process's:",
                self.overlaps
            ));
            lines.extend(self.overlap_examples.iter().map(|e| format!("  {e}")));
        }
        if self.regressions > 0 {
            lines.push(format!(
                "{} batches are not above a batch of their slot received before them:",
                self.regressions
            ));
            lines.extend(self.regression_examples.iter().map(|e| format!("  {e}")));
        }
        lines.join("\n")
    }
}

/// Checks `batches` and every ID received (`ids`, sorted in place).
pub fn check(batches: &[Batch], ids: &mut [u64]) -> Findings {
    let mut findings = Findings {
        ids: ids.len(),
        batches: batches.len(),
        ..Findings::default()
    };
    duplicates(ids, &mut findings);
    let mut by_slot: BTreeMap<u64, Vec<&Batch>> = BTreeMap::new();
    for batch in batches {
        by_slot.entry(batch.slot()).or_default().push(batch);
    }
    for (slot, batches) in &mut by_slot {
        let mut processes: Vec<u32> = batches.iter().map(|b| b.process).collect();
        processes.sort_unstable();
        processes.dedup();
        findings.processes_per_slot.insert(*slot, processes.len());
        batches.sort_by_key(|b| b.received_us);
        findings.hand_overs += batches
            .windows(2)
            .filter(|pair| pair[0].process != pair[1].process)
            .count();
        overlaps(*slot, batches, &mut findings);
        regressions(*slot, batches, &mut findings);
    }
    findings
}

/// Check 1: no ID twice.
fn duplicates(ids: &mut [u64], findings: &mut Findings) {
    ids.sort_unstable();
    for pair in ids.windows(2) {
        if pair[0] == pair[1] {
            findings.duplicates += 1;
            if findings.duplicate_examples.len() < EXAMPLES {
                findings.duplicate_examples.push(pair[0]);
            }
        }
    }
}

/// Check 2: on one slot, batches of different processes have disjoint
/// millisecond ranges. Swept in order of first millisecond, keeping for
/// each process its batch that reaches furthest: a batch meets an earlier
/// one of another process exactly when that one reaches its first
/// millisecond.
fn overlaps(slot: u64, batches: &mut [&Batch], findings: &mut Findings) {
    batches.sort_by_key(|b| (ms_of(b.first), b.sent_us));
    let mut furthest: HashMap<u32, &Batch> = HashMap::new();
    for &batch in batches.iter() {
        for (&process, &other) in &furthest {
            if process != batch.process && ms_of(other.last) >= ms_of(batch.first) {
                findings.overlaps += 1;
                if findings.overlap_examples.len() < EXAMPLES {
                    findings
                        .overlap_examples
                        .push(format!("slot {slot}: {other} / {batch}"));
                }
            }
        }
        let kept = furthest.entry(batch.process).or_insert(batch);
        if batch.last > kept.last {
            *kept = batch;
        }
    }
}

/// Check 3: on one slot, a batch asked for after another was received is
/// above it: in milliseconds when another process issued that one, in IDs
/// when the same process did. Swept in order of sending, with the batches
/// received before each send added as the sweep passes them.
fn regressions(slot: u64, batches: &mut [&Batch], findings: &mut Findings) {
    let mut by_received = batches.to_vec();
    by_received.sort_by_key(|b| b.received_us);
    batches.sort_by_key(|b| b.sent_us);
    // For each process, its highest batch received so far.
    let mut highest: HashMap<u32, &Batch> = HashMap::new();
    let mut received = by_received.into_iter().peekable();
    for &batch in batches.iter() {
        while let Some(earlier) = received.next_if(|b| b.received_us < batch.sent_us) {
            let kept = highest.entry(earlier.process).or_insert(earlier);
            if earlier.last > kept.last {
                *kept = earlier;
            }
        }
        for (&process, &earlier) in &highest {
            let above = if process == batch.process {
                batch.first > earlier.last
            } else {
                ms_of(batch.first) > ms_of(earlier.last)
            };
            if !above {
                findings.regressions += 1;
                if findings.regression_examples.len() < EXAMPLES {
                    findings
                        .regression_examples
                        .push(format!("slot {slot}: {batch} after {earlier}"));
                }
            }
        }
    }
}

/// Each node's share of the run in which it was serving: the share of
/// 100 ms windows of `run_us` in which a `200` answer of it arrived.
pub fn serving_shares(batches: &[Batch], nodes: usize, run_us: u64) -> Vec<f64> {
    const WINDOW_US: u64 = 100_000;
    let windows = run_us.div_ceil(WINDOW_US).max(1);
    let mut served = vec![vec![false; windows as usize]; nodes];
    for batch in batches {
        let window = (batch.received_us / WINDOW_US).min(windows - 1);
        served[batch.node][window as usize] = true;
    }
    served
        .iter()
        .map(|windows| windows.iter().filter(|&&w| w).count() as f64 / windows.len() as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ID of `slot` at millisecond `ms`, sequence `seq`, by the
    /// formula of DESIGN.md (no code under test).
    fn id(ms: u64, slot: u64, seq: u64) -> u64 {
        (ms << 22) | (slot << 12) | seq
    }

    /// A batch of `process` (node = process) on `slot` covering
    /// `ms_from..=ms_to` (sequences 0 to 9 in each), sent and received at
    /// the given µs; and its IDs.
    fn batch(
        process: u32,
        slot: u64,
        ms: (u64, u64),
        sent_us: u64,
        received_us: u64,
    ) -> (Batch, Vec<u64>) {
        let ids: Vec<u64> = (ms.0..=ms.1)
            .flat_map(|ms| (0..10).map(move |seq| id(ms, slot, seq)))
            .collect();
        let batch = Batch {
            node: process as usize,
            process,
            sent_us,
            received_us,
            first: ids[0],
            last: *ids.last().unwrap(),
            count: ids.len() as u32,
        };
        (batch, ids)
    }

    fn run(made: Vec<(Batch, Vec<u64>)>) -> Findings {
        let batches: Vec<Batch> = made.iter().map(|(b, _)| *b).collect();
        let mut ids: Vec<u64> = made.into_iter().flat_map(|(_, ids)| ids).collect();
        check(&batches, &mut ids)
    }

    /// A slot handed from one process to the next, each above the other's
    /// last millisecond, and a second slot alongside: nothing found.
    #[test]
    fn a_clean_hand_over_passes() {
        let findings = run(vec![
            batch(1, 3, (100, 105), 0, 10),
            batch(1, 3, (106, 110), 20, 30),
            batch(2, 3, (111, 120), 40, 50),
            batch(3, 4, (100, 120), 0, 50),
        ]);
        assert!(!findings.failed(), "{}", findings.failures());
        assert_eq!((findings.ids, findings.batches), (420, 4));
        assert_eq!(findings.hand_overs, 1);
    }

    /// A process that takes its slot back after another held it is one
    /// holder among others: each stays above the one before.
    #[test]
    fn a_slot_taken_back_passes() {
        let findings = run(vec![
            batch(1, 0, (100, 105), 0, 10),
            batch(2, 0, (106, 110), 20, 30),
            batch(1, 0, (111, 115), 40, 50),
        ]);
        assert!(!findings.failed(), "{}", findings.failures());
        assert_eq!(findings.hand_overs, 2);
        assert_eq!(findings.processes_per_slot[&0], 2);
    }

    /// The same ID from two batches is a duplicate, whoever issued it.
    #[test]
    fn a_duplicate_is_found() {
        let findings = run(vec![
            batch(1, 0, (100, 100), 0, 10),
            batch(2, 1, (100, 100), 0, 10),
            batch(2, 0, (100, 100), 20, 30),
        ]);
        assert_eq!(findings.duplicates, 10);
        assert_eq!(findings.duplicate_examples[0], id(100, 0, 0));
        assert!(findings.failed());
    }

    /// Two processes issuing in the same millisecond of one slot, even
    /// with different sequences, and even at the same moment.
    #[test]
    fn two_processes_in_one_millisecond_are_found() {
        let (a, ids_a) = batch(1, 5, (100, 104), 0, 10);
        let (mut b, mut ids_b) = batch(2, 5, (104, 108), 0, 10);
        // Sequences 10 to 19 at ms 104: no ID in common with `a`.
        for id in ids_b.iter_mut().filter(|id| ms_of(**id) == 104) {
            *id += 10;
        }
        b.first = ids_b[0];
        let findings = run(vec![(a, ids_a), (b, ids_b)]);
        assert_eq!(findings.duplicates, 0);
        assert_eq!(findings.overlaps, 1, "{}", findings.failures());
        assert!(findings.overlap_examples[0].starts_with("slot 5: node 1"));
    }

    /// A later holder below the earlier one's milliseconds, without any
    /// ID or millisecond in common: found by the order of the answers.
    #[test]
    fn a_later_holder_below_the_earlier_is_found() {
        let findings = run(vec![
            batch(1, 2, (200, 210), 0, 10),
            batch(2, 2, (150, 160), 20, 30),
        ]);
        assert_eq!((findings.duplicates, findings.overlaps), (0, 0));
        assert_eq!(findings.regressions, 1, "{}", findings.failures());
        // Answers that crossed in flight give no order.
        let crossed = run(vec![
            batch(1, 2, (200, 210), 0, 25),
            batch(2, 2, (150, 160), 20, 30),
        ]);
        assert!(!crossed.failed(), "{}", crossed.failures());
    }

    /// One process going back on its slot is found too, by ID, though
    /// it may share milliseconds with itself.
    #[test]
    fn a_process_going_back_is_found() {
        let (a, ids_a) = batch(1, 2, (200, 210), 0, 10);
        // Sequences 20 to 24 of ms 209: below `a`'s last, none in `a`.
        let ids_b: Vec<u64> = (20..25).map(|seq| id(209, 2, seq)).collect();
        let b = Batch {
            sent_us: 20,
            received_us: 30,
            first: ids_b[0],
            last: ids_b[4],
            count: 5,
            ..a
        };
        let findings = run(vec![(a, ids_a), (b, ids_b)]);
        assert_eq!((findings.duplicates, findings.overlaps), (0, 0));
        assert_eq!(findings.regressions, 1, "{}", findings.failures());
    }

    /// Shares count 100 ms windows with an answer.
    #[test]
    fn serving_shares_count_windows() {
        let (mut a, _) = batch(0, 0, (1, 1), 0, 50_000);
        let mut b = a;
        b.received_us = 150_000;
        a.node = 0;
        b.node = 0;
        let (mut c, _) = batch(1, 1, (1, 1), 0, 350_000);
        c.node = 1;
        let shares = serving_shares(&[a, b, c], 3, 400_000);
        assert_eq!(shares, vec![0.5, 0.25, 0.0]);
    }
}
