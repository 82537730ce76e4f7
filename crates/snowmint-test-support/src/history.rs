//! The history checker: every ID the clients of a fleet received, with
//! the process that served it and when, judged against the fleet's claim
//! history (the records `whois` reads).
//!
//! A [`History`] is what the clients saw: each [`Receipt`] is one answer,
//! its IDs, the [`Server`] (a node's process) that sent it, and when the
//! request left and the answer arrived, on the test's monotonic clock,
//! which no fault touches. [`check`] compares it with a
//! [`FleetHistory`] read after the run, and
//! finds:
//!
//! 1. **duplicates**: an ID received twice, with every answer that held
//!    it;
//! 2. **regressions**: a process whose IDs of one slot (one node, in
//!    DESIGN.md's words) did not increase: one answer not above another
//!    that had arrived before it was asked for (or not increasing within
//!    itself);
//! 3. **IDs outside their claims**: an ID no claim of its slot covers at
//!    its millisecond, one two claims cover, or one covered by a claim of
//!    another process than the one that served it;
//! 4. **overlaps**: two claims of one slot whose spans meet (both could
//!    have issued the same millisecond), with the IDs received in the
//!    overlap;
//! 5. **fencing breaches**: a claim whose process answered a request sent
//!    after an answer of the slot's next claim had arrived, so two
//!    processes issued on one slot at once, by the test's clock, whatever
//!    the IDs' timestamps say.
//!
//! The spans follow the rules of docs/ARCHITECTURE.md §3 ("The claim
//! history"), computed here on their own from the records, not by the
//! code under test: a claim covers the timestamps from the later of its
//! start and one past its floor, to its last mark when it ended, the next
//! claim's floor when it did not, or the slot's mark now for the newest.
//!
//! Findings 1 to 4 are what uniqueness is; 5 is what the fencing rule
//! (invariant 3) promises on top, and is reported apart
//! ([`Findings::fencing`]) so that a test of a clock fault that the
//! fencing cannot see can still require 1 to 4.

use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write as _};

use snowmint::{Layout, SnowflakeId};
use snowmint_fleet::{ClaimEntry, FleetHistory, Holder};

/// How many examples of each finding a report shows.
const EXAMPLES: usize = 8;

/// One process of a node: what served an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// The node's name in the test (`n0`).
    pub node: String,
    /// The process id, as its slot key and claim records name it.
    pub pid: u32,
    /// Where it listened, as its slot key names it (`10.77.0.5:8080`).
    pub listen: String,
}

impl fmt::Display for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (pid {}, {})", self.node, self.pid, self.listen)
    }
}

/// One answer a client received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The client, by the test's numbering.
    pub client: usize,
    /// The process that answered: an index into [`History::servers`].
    pub server: usize,
    /// When the request left, µs since the run began (the test's
    /// monotonic clock).
    pub sent_us: u64,
    /// When the whole answer had arrived, on the same clock.
    pub received_us: u64,
    /// The IDs, in the order the answer gave them.
    pub ids: Vec<u64>,
}

/// Everything the clients of a run received.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Every process that answered.
    pub servers: Vec<Server>,
    /// Every answer with IDs.
    pub receipts: Vec<Receipt>,
}

impl History {
    /// The index of `server`, added if new.
    pub fn server(&mut self, server: Server) -> usize {
        match self.servers.iter().position(|known| *known == server) {
            Some(index) => index,
            None => {
                self.servers.push(server);
                self.servers.len() - 1
            }
        }
    }

    /// How many IDs were received.
    pub fn ids(&self) -> usize {
        self.receipts.iter().map(|receipt| receipt.ids.len()).sum()
    }
}

/// A claim, named for a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimName {
    /// Its slot.
    pub slot: u64,
    /// Its generation in the slot's history.
    pub generation: u64,
    /// Its holder, as recorded.
    pub holder: String,
    /// The timestamps it covers, Unix ms, if any.
    pub span: Option<(i64, i64)>,
}

impl fmt::Display for ClaimName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let span = match self.span {
            Some((first, last)) => format!("ms {first}..={last}"),
            None => "no ID".to_owned(),
        };
        write!(
            f,
            "slot {} generation {} by {:?} ({span})",
            self.slot, self.generation, self.holder
        )
    }
}

/// What the checker found; empty lists when the run kept every rule.
#[derive(Debug, Default)]
pub struct Findings {
    /// IDs checked.
    pub ids: usize,
    /// Answers checked.
    pub receipts: usize,
    /// IDs received more than once, each with the answers (server,
    /// arrival µs) that held it.
    pub duplicates: Vec<(u64, Vec<(usize, u64)>)>,
    /// Answers of a process not above an earlier one of it, described.
    pub regressions: Vec<String>,
    /// IDs no single claim of their slot's, held by their server, covers,
    /// described.
    pub outside: Vec<String>,
    /// Claims of one slot whose spans meet, and the IDs received in the
    /// overlap.
    pub overlaps: Vec<(ClaimName, ClaimName, Vec<u64>)>,
    /// Claims that went on serving after the next claim of their slot had
    /// served, described with both times.
    pub fencing: Vec<String>,
    /// For each slot, the claims that served IDs, in order.
    pub claims_served: BTreeMap<u64, Vec<u64>>,
}

impl Findings {
    /// Whether an ID was issued twice or outside its claim (findings 1 to
    /// 4): what uniqueness forbids.
    pub fn unique_failed(&self) -> bool {
        !(self.duplicates.is_empty()
            && self.regressions.is_empty()
            && self.outside.is_empty()
            && self.overlaps.is_empty())
    }

    /// Whether anything was found, fencing breaches included.
    pub fn failed(&self) -> bool {
        self.unique_failed() || !self.fencing.is_empty()
    }

    /// The findings, a few examples of each, with `history`'s servers
    /// named.
    pub fn report(&self, history: &History) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{} IDs in {} answers checked", self.ids, self.receipts);
        if !self.duplicates.is_empty() {
            let _ = writeln!(out, "{} IDs received twice:", self.duplicates.len());
            for (id, copies) in self.duplicates.iter().take(EXAMPLES) {
                let copies: Vec<String> = copies
                    .iter()
                    .map(|(server, at)| {
                        format!("{} at {:.3} s", history.servers[*server], *at as f64 / 1e6)
                    })
                    .collect();
                let _ = writeln!(out, "  {id}: {}", copies.join("; "));
            }
        }
        for (title, lines) in [
            (
                "answers not above an earlier one of their process",
                &self.regressions,
            ),
            ("IDs outside the claims of their slot", &self.outside),
            (
                "claims that served after the next claim of their slot",
                &self.fencing,
            ),
        ] {
            if !lines.is_empty() {
                let _ = writeln!(out, "{} {title}:", lines.len());
                for line in lines.iter().take(EXAMPLES) {
                    let _ = writeln!(out, "  {line}");
                }
            }
        }
        if !self.overlaps.is_empty() {
            let _ = writeln!(
                out,
                "{} pairs of claims over the same milliseconds:",
                self.overlaps.len()
            );
            for (a, b, ids) in self.overlaps.iter().take(EXAMPLES) {
                let shown: Vec<String> = ids.iter().take(EXAMPLES).map(u64::to_string).collect();
                let _ = writeln!(
                    out,
                    "  {a}\n  and {b}\n  {} IDs received in both: {}",
                    ids.len(),
                    shown.join(", ")
                );
            }
        }
        out
    }
}

/// The slot and the timestamp (Unix ms) of `id` in `layout`; `None` when
/// the ID's node is no slot of the layout.
fn locate(layout: &Layout, id: u64) -> Option<(u64, i64)> {
    let id = SnowflakeId::from_u64(id);
    let slot = layout.slot_of(layout.node_of(id)).ok()?;
    Some((slot, layout.timestamp_ms(id)))
}

/// The timestamps each of a slot's records covers (oldest first), by the
/// rules of the claim history: from the later of its start and one past
/// its floor, to its last mark when it ended, else the next record's
/// floor, else the slot's mark now.
fn spans(records: &[ClaimEntry], mark_ms: Option<i64>) -> Vec<Option<(i64, i64)>> {
    records
        .iter()
        .enumerate()
        .map(|(index, record)| {
            let first = match record.floor_ms {
                Some(floor) => record.start_ms.max(floor + 1),
                None => record.start_ms,
            };
            let last = if record.ended.is_some() {
                record.last_ms
            } else {
                match records.get(index + 1) {
                    Some(next) => next.floor_ms,
                    None => mark_ms,
                }
            };
            last.filter(|last| first <= *last).map(|last| (first, last))
        })
        .collect()
}

/// One slot's records, ordered, with their spans.
struct Slot<'a> {
    records: Vec<&'a ClaimEntry>,
    spans: Vec<Option<(i64, i64)>>,
}

impl Slot<'_> {
    fn name(&self, slot: u64, index: usize) -> ClaimName {
        ClaimName {
            slot,
            generation: self.records[index].generation,
            holder: self.records[index].holder.clone(),
            span: self.spans[index],
        }
    }

    fn covering(&self, timestamp_ms: i64) -> Vec<usize> {
        (0..self.spans.len())
            .filter(|&index| {
                self.spans[index]
                    .is_some_and(|(first, last)| first <= timestamp_ms && timestamp_ms <= last)
            })
            .collect()
    }
}

/// Checks `history` against the fleet's claim history `claims`.
pub fn check(history: &History, claims: &FleetHistory) -> Findings {
    let mut findings = Findings {
        ids: history.ids(),
        receipts: history.receipts.len(),
        ..Findings::default()
    };
    duplicates(history, &mut findings);
    regressions(history, &claims.layout, &mut findings);
    let slots: BTreeMap<u64, Slot<'_>> = claims
        .slots
        .iter()
        .map(|(slot, kept)| {
            let mut records: Vec<&ClaimEntry> = kept.records().iter().collect();
            records.sort_by_key(|record| record.generation);
            let owned: Vec<ClaimEntry> = records.iter().map(|r| (*r).clone()).collect();
            let spans = spans(&owned, kept.mark_ms());
            (*slot, Slot { records, spans })
        })
        .collect();
    // Which claims (slot, record index) served each answer, judged by its
    // IDs: one, or one per slot of a node that holds a block of slots;
    // answers whose IDs a claim does not cover are findings.
    let served: Vec<Vec<(u64, usize)>> = history
        .receipts
        .iter()
        .map(|receipt| claims_of(history, receipt, &claims.layout, &slots, &mut findings))
        .collect();
    overlaps(history, &claims.layout, &slots, &mut findings);
    fencing(history, &served, &slots, &mut findings);
    findings
}

/// Finding 1.
fn duplicates(history: &History, findings: &mut Findings) {
    let mut all: Vec<(u64, usize)> = history
        .receipts
        .iter()
        .enumerate()
        .flat_map(|(index, receipt)| receipt.ids.iter().map(move |id| (*id, index)))
        .collect();
    all.sort_unstable();
    let mut at = 0;
    while at < all.len() {
        let mut end = at + 1;
        while end < all.len() && all[end].0 == all[at].0 {
            end += 1;
        }
        if end - at > 1 {
            let copies = all[at..end]
                .iter()
                .map(|(_, receipt)| {
                    let receipt = &history.receipts[*receipt];
                    (receipt.server, receipt.received_us)
                })
                .collect();
            findings.duplicates.push((all[at].0, copies));
        }
        at = end;
    }
}

/// Finding 2: per process and slot, an answer asked for after another
/// had arrived is above it; every answer increases within itself.
fn regressions(history: &History, layout: &Layout, findings: &mut Findings) {
    let mut by_server: HashMap<(usize, Option<u64>), Vec<&Receipt>> = HashMap::new();
    for receipt in &history.receipts {
        if receipt.ids.windows(2).any(|pair| pair[0] >= pair[1]) {
            findings.regressions.push(format!(
                "{}: an answer whose IDs do not increase: {:?}",
                history.servers[receipt.server], receipt.ids
            ));
        }
        if let Some(first) = receipt.ids.first() {
            let slot = locate(layout, *first).map(|(slot, _)| slot);
            by_server
                .entry((receipt.server, slot))
                .or_default()
                .push(receipt);
        }
    }
    for ((server, _), mut receipts) in by_server {
        let mut by_arrival = receipts.clone();
        by_arrival.sort_by_key(|receipt| receipt.received_us);
        receipts.sort_by_key(|receipt| receipt.sent_us);
        // The highest ID of the answers that had arrived, and which.
        let mut highest: Option<&Receipt> = None;
        let mut arrived = by_arrival.iter().peekable();
        for receipt in receipts {
            while let Some(earlier) = arrived.next_if(|r| r.received_us < receipt.sent_us) {
                if highest.is_none_or(|h| h.ids.iter().max() < earlier.ids.iter().max()) {
                    highest = Some(earlier);
                }
            }
            let (Some(earlier), Some(first)) = (highest, receipt.ids.iter().min()) else {
                continue;
            };
            let top = earlier.ids.iter().max().copied().unwrap_or(0);
            if *first <= top {
                findings.regressions.push(format!(
                    "{}: an answer sent at {:.3} s starts at {first}, not above {top}, of an answer received at {:.3} s",
                    history.servers[server],
                    receipt.sent_us as f64 / 1e6,
                    earlier.received_us as f64 / 1e6
                ));
            }
        }
    }
}

/// Finding 3 for one answer; the claims that served it when each of its
/// IDs lies in exactly one claim of its slot, held by the answer's server,
/// and no two of its IDs lie in different claims of one slot (a node of
/// several slots answers from one claim in each slot of its block).
fn claims_of(
    history: &History,
    receipt: &Receipt,
    layout: &Layout,
    slots: &BTreeMap<u64, Slot<'_>>,
    findings: &mut Findings,
) -> Vec<(u64, usize)> {
    let server = &history.servers[receipt.server];
    // At most one claim per slot: a node of several slots answers from
    // the claims of its block, all of them its own process's (checked for
    // each ID below), but never from two claims of one slot.
    let mut claims: Vec<(u64, usize)> = Vec::new();
    for &id in &receipt.ids {
        let Some((slot, timestamp_ms)) = locate(layout, id) else {
            findings.outside.push(format!(
                "{id} from {server}: not an ID of the fleet's layout"
            ));
            return Vec::new();
        };
        let Some(kept) = slots.get(&slot) else {
            findings.outside.push(format!(
                "{id} from {server}: slot {slot} has no claim history at all"
            ));
            return Vec::new();
        };
        let covering = kept.covering(timestamp_ms);
        let [index] = covering[..] else {
            let claims: Vec<String> = covering
                .iter()
                .map(|&index| kept.name(slot, index).to_string())
                .collect();
            findings.outside.push(format!(
                "{id} (ms {timestamp_ms}) from {server}: covered by {} claims of slot {slot}{}",
                covering.len(),
                if claims.is_empty() {
                    String::new()
                } else {
                    format!(": {}", claims.join("; "))
                }
            ));
            return Vec::new();
        };
        let holder = Holder::parse(&kept.records[index].holder);
        if holder
            .as_ref()
            .is_none_or(|holder| holder.pid != server.pid || holder.listen != server.listen)
        {
            findings.outside.push(format!(
                "{id} (ms {timestamp_ms}) from {server}: covered by {}, another process's",
                kept.name(slot, index)
            ));
            return Vec::new();
        }
        match claims.iter().find(|(known, _)| *known == slot) {
            Some(&(_, known)) if known != index => {
                findings.outside.push(format!(
                    "an answer of {server} sent at {:.3} s holds IDs of two claims of slot {slot}",
                    receipt.sent_us as f64 / 1e6
                ));
                return Vec::new();
            }
            Some(_) => {}
            None => claims.push((slot, index)),
        }
    }
    claims
}

/// Finding 4: claims whose spans meet, and the IDs received in both.
fn overlaps(
    history: &History,
    layout: &Layout,
    slots: &BTreeMap<u64, Slot<'_>>,
    findings: &mut Findings,
) {
    let mut pairs: Vec<(u64, usize, usize)> = Vec::new();
    for (slot, kept) in slots {
        for a in 0..kept.spans.len() {
            for b in a + 1..kept.spans.len() {
                if let (Some((first_a, last_a)), Some((first_b, last_b))) =
                    (kept.spans[a], kept.spans[b])
                    && first_a <= last_b
                    && first_b <= last_a
                {
                    pairs.push((*slot, a, b));
                }
            }
        }
    }
    for (slot, a, b) in pairs {
        let kept = &slots[&slot];
        let (first, last) = match (kept.spans[a], kept.spans[b]) {
            (Some((fa, la)), Some((fb, lb))) => (fa.max(fb), la.min(lb)),
            _ => continue,
        };
        let mut ids: Vec<u64> = history
            .receipts
            .iter()
            .flat_map(|receipt| receipt.ids.iter().copied())
            .filter(|&id| {
                locate(layout, id).is_some_and(|(s, t)| s == slot && first <= t && t <= last)
            })
            .collect();
        ids.sort_unstable();
        findings
            .overlaps
            .push((kept.name(slot, a), kept.name(slot, b), ids));
    }
}

/// Finding 5: on each slot, no claim answered a request sent after an
/// answer of a later claim (of another process) had arrived.
fn fencing(
    history: &History,
    served: &[Vec<(u64, usize)>],
    slots: &BTreeMap<u64, Slot<'_>>,
    findings: &mut Findings,
) {
    // Per claim: its last request sent, its first answer received.
    let mut times: BTreeMap<(u64, usize), (&Receipt, &Receipt)> = BTreeMap::new();
    for (receipt, claims) in history.receipts.iter().zip(served) {
        for claim in claims {
            let entry = times.entry(*claim).or_insert((receipt, receipt));
            if receipt.sent_us > entry.0.sent_us {
                entry.0 = receipt;
            }
            if receipt.received_us < entry.1.received_us {
                entry.1 = receipt;
            }
        }
    }
    for &(slot, index) in times.keys() {
        findings
            .claims_served
            .entry(slot)
            .or_default()
            .push(slots[&slot].records[index].generation);
    }
    for (&(slot, a), &(last_of_a, _)) in &times {
        for (&(other_slot, b), &(_, first_of_b)) in &times {
            if other_slot != slot || b <= a || last_of_a.server == first_of_b.server {
                continue;
            }
            if last_of_a.sent_us > first_of_b.received_us {
                let kept = &slots[&slot];
                findings.fencing.push(format!(
                    "{} answered a request sent at {:.3} s, {:.3} s after {} had answered {} (received at {:.3} s)",
                    kept.name(slot, a),
                    last_of_a.sent_us as f64 / 1e6,
                    (last_of_a.sent_us - first_of_b.received_us) as f64 / 1e6,
                    kept.name(slot, b),
                    history.servers[first_of_b.server],
                    first_of_b.received_us as f64 / 1e6
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use snowmint_fleet::SlotClaims;

    use super::*;

    /// Twitter's epoch (DESIGN.md §1).
    const EPOCH: i64 = 1_288_834_974_657;

    /// An ID by the formula of DESIGN.md §1, written out here.
    fn id(ms: i64, slot: u64, sequence: u64) -> u64 {
        (((ms - EPOCH) as u64) << 22) | (slot << 12) | sequence
    }

    fn server(node: &str, pid: u32) -> Server {
        Server {
            node: node.into(),
            pid,
            listen: format!("10.77.0.{pid}:8080"),
        }
    }

    fn record(
        generation: u64,
        pid: u32,
        start_ms: i64,
        floor_ms: Option<i64>,
        end: Option<(&str, i64)>,
    ) -> ClaimEntry {
        serde_json::from_value(serde_json::json!({
            "generation": generation,
            "holder": format!("host=box pid={pid} listen=10.77.0.{pid}:8080 started=2024-01-01T00:00:00.000Z"),
            "version": "0.1.0",
            "session": "lease 1",
            "start_ms": start_ms,
            "floor_ms": floor_ms,
            "end_ms": end.map(|(_, last)| last + 100),
            "last_ms": end.map(|(_, last)| last),
            "ended": end.map(|(how, _)| how),
        }))
        .unwrap()
    }

    const T: i64 = 1_700_000_000_000;

    /// Slot 5 held by pid 1 from T to T+1000 (taken over, its IDs up to
    /// T+1000), then by pid 2 from T+1200 on (mark T+3000).
    fn claims(second_floor: i64) -> FleetHistory {
        let records = vec![
            record(1, 1, T, None, None),
            record(2, 2, T + 1_200, Some(second_floor), None),
        ];
        let slots = BTreeMap::from([(5, SlotClaims::new(records, Some(T + 3_000)))]);
        FleetHistory::new("ids", Layout::TWITTER, slots)
    }

    /// Pid 1 serves T+10..T+900, pid 2 T+1300..T+2000, each request
    /// answered before the next leaves.
    fn clean_history() -> History {
        let mut history = History::default();
        let (a, b) = (
            history.server(server("n0", 1)),
            history.server(server("n1", 2)),
        );
        let mut clock = 0;
        for (server, ms) in [(a, 10), (a, 500), (a, 900), (b, 1_300), (b, 2_000)] {
            history.receipts.push(Receipt {
                client: server,
                server,
                sent_us: clock,
                received_us: clock + 500,
                ids: vec![id(T + ms, 5, 0), id(T + ms, 5, 1)],
            });
            clock += 1_000;
        }
        history
    }

    #[test]
    fn a_clean_history_passes() {
        let history = clean_history();
        let findings = check(&history, &claims(T + 1_000));
        assert!(!findings.failed(), "{}", findings.report(&history));
        assert_eq!(findings.ids, 10);
        assert_eq!(findings.claims_served[&5], [1, 2]);
    }

    /// An ID served twice, by the two processes: found, with both
    /// answers.
    #[test]
    fn a_planted_duplicate_is_found() {
        let mut history = clean_history();
        let copy = history.receipts[0].ids[0];
        history.receipts[4].ids.insert(0, copy);
        let findings = check(&history, &claims(T + 1_000));
        assert_eq!(findings.duplicates.len(), 1);
        let (found, copies) = &findings.duplicates[0];
        assert_eq!(*found, copy);
        assert_eq!(copies.len(), 2);
        assert_eq!((copies[0].0, copies[1].0), (0, 1));
        // The copy is also older than the answers before it, and lies in
        // the first claim, not its server's.
        assert!(!findings.regressions.is_empty());
        assert!(
            findings.outside[0].contains("another process's"),
            "{:?}",
            findings.outside
        );
        let report = findings.report(&history);
        assert!(report.contains("1 IDs received twice"), "{report}");
    }

    /// The second holder's floor lowered below the first's IDs: the two
    /// claims overlap, and the report names both and the IDs in both.
    #[test]
    fn a_planted_overlap_is_found() {
        let history = clean_history();
        // Floor T+400: claim 2 covers T+1200.., claim 1 up to T+400 only
        // (the next floor bounds an open record), so T+500 and T+900 are
        // outside; with the first ended at T+1000 by hand, they overlap.
        let mut records = vec![
            record(1, 1, T, None, Some(("release", 1_000 + T))),
            record(2, 2, T + 400, Some(T + 300), None),
        ];
        records[1].start_ms = T + 301;
        let slots = BTreeMap::from([(5, SlotClaims::new(records, Some(T + 3_000)))]);
        let overlapping = FleetHistory::new("ids", Layout::TWITTER, slots);
        let findings = check(&history, &overlapping);
        assert_eq!(findings.overlaps.len(), 1, "{}", findings.report(&history));
        let (a, b, ids) = &findings.overlaps[0];
        assert_eq!((a.generation, b.generation), (1, 2));
        assert_eq!(
            *ids,
            [
                id(T + 500, 5, 0),
                id(T + 500, 5, 1),
                id(T + 900, 5, 0),
                id(T + 900, 5, 1)
            ]
        );
        assert!(findings.unique_failed());
        let report = findings.report(&history);
        assert!(
            report.contains("slot 5 generation 1 by \"host=box pid=1"),
            "{report}"
        );
        assert!(report.contains("and slot 5 generation 2"), "{report}");
    }

    /// A node of two slots (5 and 6, one block) answers with IDs of both
    /// slots, each covered by that slot's claim of the same process: one
    /// answer, two claims, no finding; both claims count as served, and a
    /// late answer on either slot breaks the fencing. An ID of another
    /// process's claim in an answer of the block stays a finding.
    #[test]
    fn a_block_of_slots_answers_from_one_claim_per_slot() {
        let block = |second_floor: i64| -> FleetHistory {
            let slot = || {
                vec![
                    record(1, 1, T, None, None),
                    record(2, 2, T + 1_200, Some(second_floor), None),
                ]
            };
            let slots = BTreeMap::from([
                (5, SlotClaims::new(slot(), Some(T + 3_000))),
                (6, SlotClaims::new(slot(), Some(T + 3_000))),
            ]);
            FleetHistory::new("ids", Layout::TWITTER, slots)
        };
        let mut history = clean_history();
        for receipt in &mut history.receipts {
            let ms = (receipt.ids[0] >> 22) as i64 + EPOCH;
            receipt.ids = vec![id(ms, 5, 0), id(ms, 5, 1), id(ms, 6, 0)];
        }
        let findings = check(&history, &block(T + 1_000));
        assert!(!findings.failed(), "{}", findings.report(&history));
        assert_eq!(findings.claims_served[&5], [1, 2]);
        assert_eq!(findings.claims_served[&6], [1, 2]);

        // Pid 1 answers on slot 6 alone, asked after pid 2's first answer.
        let mut late = history.clone();
        late.receipts.push(Receipt {
            client: 0,
            server: 0,
            sent_us: 3_600,
            received_us: 3_700,
            ids: vec![id(T + 950, 6, 1)],
        });
        let findings = check(&late, &block(T + 1_000));
        assert!(!findings.unique_failed(), "{}", findings.report(&late));
        assert_eq!(findings.fencing.len(), 1, "{}", findings.report(&late));
        assert!(
            findings.fencing[0].contains("slot 6 generation 1"),
            "{}",
            findings.fencing[0]
        );

        // One answer of pid 2 with an ID of slot 5 from pid 1's time: two
        // claims of slot 5, and the older one another process's.
        let mut mixed = history;
        mixed.receipts[3].ids.insert(0, id(T + 900, 5, 7));
        let findings = check(&mixed, &block(T + 1_000));
        assert!(
            findings
                .outside
                .iter()
                .any(|finding| finding.contains("another process's")),
            "{:?}",
            findings.outside
        );
    }

    /// An ID no claim covers (issued past the slot's mark), and a process
    /// that went on answering after the next claim had answered.
    #[test]
    fn uncovered_ids_and_late_answers_are_found() {
        let mut history = clean_history();
        history.receipts[4].ids.push(id(T + 3_500, 5, 0));
        let findings = check(&history, &claims(T + 1_000));
        assert_eq!(findings.outside.len(), 1);
        assert!(
            findings.outside[0].contains("covered by 0 claims of slot 5"),
            "{:?}",
            findings.outside
        );

        let mut history = clean_history();
        // Pid 1 answers once more, asked after pid 2's first answer came.
        history.receipts.push(Receipt {
            client: 0,
            server: 0,
            sent_us: 3_600,
            received_us: 3_700,
            ids: vec![id(T + 950, 5, 0)],
        });
        let findings = check(&history, &claims(T + 1_000));
        assert!(!findings.unique_failed(), "{}", findings.report(&history));
        assert_eq!(findings.fencing.len(), 1, "{}", findings.report(&history));
        assert!(
            findings.fencing[0]
                .contains("answered a request sent at 0.004 s, 0.000 s after slot 5 generation 2"),
            "{}",
            findings.fencing[0]
        );
    }
}
