//! What `snowmint audit` looks for in each ID, what it found, and the
//! report: text for people, JSON for machines.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;
use snowmint::{Layout, SnowflakeId, format_time};
use snowmint_fleet::{FleetHistory, SlotClaims, WhoisAnswer};
use snowmint_server::body::ClaimRecordBody;

use super::input::{BadLine, Source, Value, split_row};

/// How many IDs of each slot a slot's finding shows.
const EXAMPLES_PER_SLOT: usize = 10;

/// What is judged of each ID.
pub struct Checker<'a> {
    layout: Layout,
    /// IDs later than this (Unix ms) are in the future.
    future_after_ms: i64,
    history: Option<&'a FleetHistory>,
    /// The history's slots by number, for a look-up per ID.
    slots: Vec<Option<&'a SlotClaims>>,
    /// How many examples of a finding are kept (`usize::MAX`: all).
    limit: usize,
    /// Values read.
    pub ids: u64,
    /// IDs dated after `future_after_ms`.
    pub future: Listed<(SnowflakeId, u64)>,
    /// Negative values.
    pub before_epoch: Listed<(i64, u64)>,
    /// Per slot, IDs no claim covered at their time.
    pub no_holder: BTreeMap<u64, SlotIds>,
    /// Per slot, IDs two claims or more covered.
    pub conflicts: BTreeMap<u64, SlotIds>,
    /// IDs whose records were pruned.
    pub pruned: u64,
}

/// A count and its first examples.
#[derive(Debug)]
pub struct Listed<T> {
    pub count: u64,
    pub examples: Vec<T>,
}

impl<T> Default for Listed<T> {
    fn default() -> Self {
        Listed {
            count: 0,
            examples: Vec::new(),
        }
    }
}

impl<T> Listed<T> {
    fn add(&mut self, item: T, limit: usize) {
        self.count += 1;
        if self.examples.len() < limit {
            self.examples.push(item);
        }
    }
}

/// IDs of one slot: how many, their times' span, a few of them.
#[derive(Debug, Default)]
pub struct SlotIds {
    pub count: u64,
    pub first_ms: i64,
    pub last_ms: i64,
    pub examples: Vec<(SnowflakeId, u64)>,
}

impl SlotIds {
    fn add(&mut self, id: SnowflakeId, row: u64, timestamp_ms: i64) {
        if self.count == 0 {
            (self.first_ms, self.last_ms) = (timestamp_ms, timestamp_ms);
        }
        self.count += 1;
        self.first_ms = self.first_ms.min(timestamp_ms);
        self.last_ms = self.last_ms.max(timestamp_ms);
        if self.examples.len() < EXAMPLES_PER_SLOT {
            self.examples.push((id, row));
        }
    }
}

impl<'a> Checker<'a> {
    /// A checker of IDs in `layout`, against `history` when given.
    pub fn new(
        layout: Layout,
        future_after_ms: i64,
        history: Option<&'a FleetHistory>,
        limit: usize,
    ) -> Checker<'a> {
        let mut slots = Vec::new();
        for (slot, claims) in history.iter().flat_map(|history| &history.slots) {
            let index = *slot as usize;
            if slots.len() <= index {
                slots.resize(index + 1, None);
            }
            slots[index] = Some(claims);
        }
        Checker {
            layout,
            future_after_ms,
            history,
            slots,
            limit,
            ids: 0,
            future: Listed::default(),
            before_epoch: Listed::default(),
            no_holder: BTreeMap::new(),
            conflicts: BTreeMap::new(),
            pruned: 0,
        }
    }

    /// Judges the value read at `row`.
    pub fn check(&mut self, row: u64, value: Value) {
        self.ids += 1;
        let id = match value {
            Value::Negative(value) => {
                self.before_epoch.add((value, row), self.limit);
                return;
            }
            Value::Id(id) => id,
        };
        let timestamp_ms = self.layout.timestamp_ms(id);
        if timestamp_ms > self.future_after_ms {
            self.future.add((id, row), self.limit);
        }
        if self.history.is_none() {
            return;
        }
        let Ok(slot) = self.layout.slot_of(self.layout.node_of(id)) else {
            self.no_holder
                .entry(u64::MAX)
                .or_default()
                .add(id, row, timestamp_ms);
            return;
        };
        let answer = self
            .slots
            .get(slot as usize)
            .copied()
            .flatten()
            .map_or(WhoisAnswer::NotCovered, |claims| {
                claims.answer(timestamp_ms)
            });
        match answer {
            WhoisAnswer::Covered => {}
            WhoisAnswer::Pruned => self.pruned += 1,
            WhoisAnswer::Conflict => {
                self.conflicts
                    .entry(slot)
                    .or_default()
                    .add(id, row, timestamp_ms)
            }
            _ => self
                .no_holder
                .entry(slot)
                .or_default()
                .add(id, row, timestamp_ms),
        }
    }
}

/// A row, named for the report.
#[derive(Debug, Serialize)]
pub struct RowBody {
    /// The source's name (a file, `stdin`, the query).
    pub source: String,
    /// The line (files) or row (queries), from 1.
    pub line: u64,
    /// `orders.csv:12`, `row 12`.
    pub name: String,
}

impl RowBody {
    fn new(sources: &[Source], row: u64) -> RowBody {
        let (index, line) = split_row(row);
        let source = &sources[index];
        RowBody {
            source: source.name(),
            line,
            name: source.row_name(line),
        }
    }
}

/// Which claims the history says issued an ID.
#[derive(Debug, Serialize)]
pub struct WhoisOf {
    /// `covered`, `not_covered`, `conflict`, `pruned`.
    pub answer: &'static str,
    /// The claims that covered it.
    pub claims: Vec<ClaimRecordBody>,
}

/// An ID, with where and when.
#[derive(Debug, Serialize)]
pub struct IdBody {
    /// The ID, as a string (JavaScript loses precision above 2^53).
    pub id: String,
    /// Its time, RFC 3339.
    pub time: String,
    /// Its slot in the layout.
    pub slot: Option<u64>,
    /// The rows it was read at (a duplicate's first ones).
    pub rows: Vec<RowBody>,
    /// How many rows it was read at, when more than are listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows_total: Option<u64>,
    /// What the claim history says of it, with a coordinator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whois: Option<WhoisOf>,
}

/// A negative value, with where.
#[derive(Debug, Serialize)]
pub struct NegativeBody {
    pub value: String,
    pub row: RowBody,
}

/// IDs of one slot no claim (or two claims) covered.
#[derive(Debug, Serialize)]
pub struct SlotBody {
    /// The slot (none: the ID's node is no slot of the layout).
    pub slot: Option<u64>,
    pub count: u64,
    /// The earliest and latest of their times.
    pub from: String,
    pub to: String,
    pub examples: Vec<IdBody>,
}

/// Two claims of one slot that held it at once.
#[derive(Debug, Serialize)]
pub struct TwoHoldersBody {
    pub slot: u64,
    /// The times both could issue at.
    pub from: String,
    pub to: String,
    pub claims: [ClaimRecordBody; 2],
}

/// A count of findings and the ones listed.
#[derive(Debug, Serialize)]
pub struct Section<T> {
    pub count: u64,
    pub listed: Vec<T>,
}

/// The fleet whose history was read.
#[derive(Debug, Serialize)]
pub struct FleetBody {
    pub fleet: String,
    pub coordinator: String,
    /// Slots with a history, and the claims recorded.
    pub slots: u64,
    pub claims: u64,
}

/// The whole report (the JSON of `--format json`).
#[derive(Debug, Serialize)]
pub struct Report {
    /// Whether anything was found: the exit code is then 3.
    pub found: bool,
    /// Values read.
    pub ids: u64,
    pub sources: Vec<String>,
    /// The layout the IDs were read in.
    pub layout: String,
    /// IDs later than this are in the future.
    pub future_after: String,
    pub fleet: Option<FleetBody>,
    /// Lines that held no ID, skipped (`--skip-bad`).
    pub skipped: Section<BadLineBody>,
    /// IDs read more than once; `rows` counts the rows they were read at.
    pub duplicates: Section<IdBody>,
    pub duplicate_rows: u64,
    pub future: Section<IdBody>,
    pub before_epoch: Section<NegativeBody>,
    /// IDs whose slot no claim covered at their time (with a coordinator).
    pub no_known_holder: Section<SlotBody>,
    /// IDs two claims or more covered.
    pub conflicts: Section<SlotBody>,
    /// IDs whose records were pruned: the history cannot say.
    pub pruned: u64,
    /// Slots that had two holders at once, from the history alone.
    pub two_holders: Section<TwoHoldersBody>,
    /// Sorted chunks written to disk past the memory limit.
    pub spilled_runs: usize,
}

/// A skipped line.
#[derive(Debug, Serialize)]
pub struct BadLineBody {
    pub row: RowBody,
    pub text: String,
    pub reason: String,
}

/// What builds the report's parts.
pub struct Describe<'a> {
    pub layout: Layout,
    pub sources: &'a [Source],
    pub history: Option<&'a FleetHistory>,
}

impl Describe<'_> {
    fn slot(&self, id: SnowflakeId) -> Option<u64> {
        self.layout.slot_of(self.layout.node_of(id)).ok()
    }

    fn whois(&self, id: SnowflakeId) -> Option<WhoisOf> {
        let history = self.history?;
        let (slot, answer, covering) = history.judge(id);
        let claims = slot
            .and_then(|slot| history.slots.get(&slot))
            .map(|claims| {
                covering
                    .iter()
                    .map(|&index| ClaimRecordBody::new(&claims.records()[index]))
                    .collect()
            })
            .unwrap_or_default();
        Some(WhoisOf {
            answer: answer.name(),
            claims,
        })
    }

    /// An ID read at `rows` (of `total` rows).
    pub fn id(&self, id: SnowflakeId, rows: &[u64], total: u64) -> IdBody {
        IdBody {
            id: id.as_u64().to_string(),
            time: format_time(self.layout.timestamp_ms(id)).to_string(),
            slot: self.slot(id),
            rows: rows
                .iter()
                .map(|row| RowBody::new(self.sources, *row))
                .collect(),
            rows_total: (total > rows.len() as u64).then_some(total),
            whois: self.whois(id),
        }
    }

    pub fn negative(&self, value: i64, row: u64) -> NegativeBody {
        NegativeBody {
            value: value.to_string(),
            row: RowBody::new(self.sources, row),
        }
    }

    pub fn bad_line(&self, line: &BadLine) -> BadLineBody {
        BadLineBody {
            row: RowBody::new(self.sources, line.row),
            text: line.text.clone(),
            reason: line.reason.clone(),
        }
    }

    pub fn slots(&self, slots: &BTreeMap<u64, SlotIds>, limit: usize) -> Section<SlotBody> {
        Section {
            count: slots.values().map(|ids| ids.count).sum(),
            listed: slots
                .iter()
                .take(limit)
                .map(|(slot, ids)| SlotBody {
                    slot: (*slot != u64::MAX).then_some(*slot),
                    count: ids.count,
                    from: format_time(ids.first_ms).to_string(),
                    to: format_time(ids.last_ms).to_string(),
                    examples: ids
                        .examples
                        .iter()
                        .map(|(id, row)| self.id(*id, &[*row], 1))
                        .collect(),
                })
                .collect(),
        }
    }

    /// Every pair of claims of a slot whose spans meet.
    pub fn two_holders(&self, limit: usize) -> Section<TwoHoldersBody> {
        let mut section = Section {
            count: 0,
            listed: Vec::new(),
        };
        let Some(history) = self.history else {
            return section;
        };
        for (slot, claims) in &history.slots {
            for (a, b) in claims.overlaps() {
                section.count += 1;
                if section.listed.len() >= limit {
                    continue;
                }
                let (Some((first_a, last_a)), Some((first_b, last_b))) =
                    (claims.span(a), claims.span(b))
                else {
                    continue;
                };
                let records = claims.records();
                section.listed.push(TwoHoldersBody {
                    slot: *slot,
                    from: format_time(first_a.max(first_b)).to_string(),
                    to: format_time(last_a.min(last_b)).to_string(),
                    claims: [
                        ClaimRecordBody::new(&records[a]),
                        ClaimRecordBody::new(&records[b]),
                    ],
                });
            }
        }
        section
    }
}

/// A claim, in a few words: `generation 4 by web-1 (10.0.0.4:8080), pid 88`.
fn claim_words(claim: &ClaimRecordBody) -> String {
    match (&claim.host, claim.pid, &claim.listen) {
        (Some(host), Some(pid), Some(listen)) => {
            format!(
                "generation {} by {host} ({listen}), pid {pid}",
                claim.generation
            )
        }
        _ => format!("generation {} by {:?}", claim.generation, claim.holder),
    }
}

fn whois_words(whois: &WhoisOf) -> String {
    match whois.answer {
        "covered" | "conflict" => {
            let claims: Vec<String> = whois.claims.iter().map(claim_words).collect();
            format!("{}: {}", whois.answer, claims.join("; "))
        }
        "not_covered" => "no claim covered it: no node of the fleet issued it".to_owned(),
        _ => "the records that could say were pruned".to_owned(),
    }
}

fn id_lines(text: &mut String, id: &IdBody) {
    let rows: Vec<&str> = id.rows.iter().map(|row| row.name.as_str()).collect();
    let more = match id.rows_total {
        Some(total) => format!(" (and {} more)", total - id.rows.len() as u64),
        None => String::new(),
    };
    let slot = id
        .slot
        .map_or_else(|| "no slot".to_owned(), |slot| format!("slot {slot}"));
    let _ = writeln!(text, "  {}  {}  {slot}", id.id, id.time);
    let _ = writeln!(text, "      rows {}{more}", rows.join(", "));
    if let Some(whois) = &id.whois {
        let _ = writeln!(text, "      {}", whois_words(whois));
    }
}

impl Report {
    /// The report for people.
    pub fn text(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "audited {} IDs from {} in layout {}",
            self.ids,
            self.sources.join(", "),
            self.layout
        );
        if let Some(fleet) = &self.fleet {
            let _ = writeln!(
                text,
                "claim history of fleet {} at {}: {} slots, {} claims",
                fleet.fleet, fleet.coordinator, fleet.slots, fleet.claims
            );
        }
        if self.skipped.count > 0 {
            let _ = writeln!(
                text,
                "\nskipped {} lines that hold no ID:",
                self.skipped.count
            );
            for line in &self.skipped.listed {
                let _ = writeln!(
                    text,
                    "  {}: {:?}: {}",
                    line.row.name, line.text, line.reason
                );
            }
        }
        if self.duplicates.count > 0 {
            let _ = writeln!(
                text,
                "\nDUPLICATES: {} IDs appear more than once ({} rows)",
                self.duplicates.count, self.duplicate_rows
            );
            for id in &self.duplicates.listed {
                id_lines(&mut text, id);
            }
        }
        if self.future.count > 0 {
            let _ = writeln!(
                text,
                "\nIN THE FUTURE: {} IDs are dated after {}",
                self.future.count, self.future_after
            );
            for id in &self.future.listed {
                id_lines(&mut text, id);
            }
        }
        if self.before_epoch.count > 0 {
            let _ = writeln!(
                text,
                "\nBEFORE THE EPOCH: {} values are negative (a time before the layout's epoch)",
                self.before_epoch.count
            );
            for value in &self.before_epoch.listed {
                let _ = writeln!(text, "  {}  row {}", value.value, value.row.name);
            }
        }
        for (title, what, section) in [
            (
                "ISSUED BY NO KNOWN HOLDER",
                "IDs whose slot no claim of the fleet covered at their time",
                &self.no_known_holder,
            ),
            (
                "CLAIMED TWICE",
                "IDs that two claims of their slot covered",
                &self.conflicts,
            ),
        ] {
            if section.count > 0 {
                let _ = writeln!(text, "\n{title}: {} {what}", section.count);
                for slot in &section.listed {
                    let name = slot
                        .slot
                        .map_or_else(|| "no slot".to_owned(), |s| format!("slot {s}"));
                    let _ = writeln!(
                        text,
                        "  {name}: {} IDs from {} to {}",
                        slot.count, slot.from, slot.to
                    );
                    for id in &slot.examples {
                        id_lines(&mut text, id);
                    }
                }
            }
        }
        if self.two_holders.count > 0 {
            let _ = writeln!(
                text,
                "\nTWO HOLDERS AT ONCE: {} pairs of claims of one slot covered the same times",
                self.two_holders.count
            );
            for pair in &self.two_holders.listed {
                let _ = writeln!(
                    text,
                    "  slot {}, {} to {}: {} and {}",
                    pair.slot,
                    pair.from,
                    pair.to,
                    claim_words(&pair.claims[0]),
                    claim_words(&pair.claims[1])
                );
            }
        }
        if self.pruned > 0 {
            let _ = writeln!(
                text,
                "\n{} IDs lie before the oldest claim records kept: the history can no longer say who issued them",
                self.pruned
            );
        }
        let _ = writeln!(
            text,
            "\n{}",
            if self.found {
                "found: see above"
            } else {
                "nothing found"
            }
        );
        text
    }
}
