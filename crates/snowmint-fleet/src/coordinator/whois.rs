//! `whois`: which claim of a fleet covered the slot of an ID at the
//! millisecond it carries, read from the claim history
//! ([`history`](super::history)) and the slot's high-water mark.
//!
//! A claim covers the timestamps its IDs can carry: from its first
//! possible ID (its start on the holder's clock, and above the floor it
//! found) to the last (the mark it left when it ended, the floor the next
//! claim found, or, for the slot's latest claim while it is open, the
//! slot's mark now: no ID goes out above the mark). Four answers:
//!
//! - covered: exactly one claim covers it;
//! - not covered: none does (no node could have issued it in this fleet);
//! - conflict: two or more do, which the fencing and the mark exist to
//!   prevent; the answer names every one of them;
//! - pruned: it lies before the oldest record kept, and older records were
//!   pruned, so the history can no longer tell.

use std::fmt;
use std::time::Duration;

use snowmint::{Layout, Node, SnowflakeId, format_time};

use super::backend::Backend;
use super::engine::Shared;
use super::history::{ClaimEntry, SlotHistory};
use super::paths::Paths;
use super::{BackendError, FleetName};
use crate::FleetError;

/// How long the short session of one look-up lives if the reader dies
/// before ending it.
const READER_TTL: Duration = Duration::from_secs(5);

/// What the history says of an ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WhoisAnswer {
    /// Exactly one claim covered the ID's slot at its millisecond.
    Covered,
    /// No claim did.
    NotCovered,
    /// Two or more did: the guarantee failed, or the records are wrong.
    Conflict,
    /// The records that could say were pruned.
    Pruned,
}

impl WhoisAnswer {
    /// `covered`, `not_covered`, `conflict` or `pruned`.
    pub fn name(self) -> &'static str {
        match self {
            WhoisAnswer::Covered => "covered",
            WhoisAnswer::NotCovered => "not_covered",
            WhoisAnswer::Conflict => "conflict",
            WhoisAnswer::Pruned => "pruned",
        }
    }

    /// Every answer, for documentation.
    pub const ALL: [WhoisAnswer; 4] = [
        WhoisAnswer::Covered,
        WhoisAnswer::NotCovered,
        WhoisAnswer::Conflict,
        WhoisAnswer::Pruned,
    ];
}

/// The answer to "which process issued this ID?".
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Whois {
    /// The ID asked about.
    pub id: SnowflakeId,
    /// The fleet whose history was read.
    pub fleet: String,
    /// The fleet's layout, which the ID was read in.
    pub layout: Layout,
    /// The ID's timestamp, Unix ms.
    pub timestamp_ms: i64,
    /// The ID's slot.
    pub slot: u64,
    /// The ID's node.
    pub node: Node,
    /// What the history says.
    pub answer: WhoisAnswer,
    /// The claims that covered the slot at that millisecond: one when
    /// covered, two or more on a conflict, none otherwise.
    pub claims: Vec<ClaimEntry>,
    /// The slot's records kept, oldest first.
    pub kept: Vec<ClaimEntry>,
    /// The slot's high-water mark now, Unix ms.
    pub mark_ms: Option<i64>,
}

impl Whois {
    /// The answer in one sentence (or, for a conflict, a warning).
    pub fn message(&self) -> String {
        let at = format!(
            "slot {} of fleet {} at {}",
            self.slot,
            self.fleet,
            format_time(self.timestamp_ms)
        );
        match self.answer {
            WhoisAnswer::Covered => {
                let claim = &self.claims[0];
                let state = match (claim.ended, claim.end_ms) {
                    (Some(end), Some(end_ms)) => {
                        format!("ended by {} at {}", end.name(), format_time(end_ms))
                    }
                    _ => "not ended".to_owned(),
                };
                format!(
                    "one claim covered {at}: generation {} by {} ({state})",
                    claim.generation,
                    holder_name(claim)
                )
            }
            WhoisAnswer::NotCovered => {
                let span = match (self.kept.first(), self.kept.last()) {
                    (Some(first), Some(last)) => format!(
                        "the {} records kept (generations {} to {}) cover no such time",
                        self.kept.len(),
                        first.generation,
                        last.generation
                    ),
                    _ => "the slot has no record of any claim".to_owned(),
                };
                format!("no claim covered {at}: {span}; no node of this fleet issued this ID")
            }
            WhoisAnswer::Conflict => {
                let names: Vec<String> = self
                    .claims
                    .iter()
                    .map(|claim| {
                        format!("generation {} by {}", claim.generation, holder_name(claim))
                    })
                    .collect();
                format!(
                    "CONFLICT: {} claims covered {at} ({}); this must never happen: two processes may have issued IDs as the same node at the same time; keep the logs of both and report it",
                    self.claims.len(),
                    names.join("; ")
                )
            }
            WhoisAnswer::Pruned => {
                let oldest = &self.kept[0];
                format!(
                    "the records that could say who held {at} were pruned: the oldest kept is generation {}, from {}",
                    oldest.generation,
                    format_time(oldest.first_ms())
                )
            }
        }
    }
}

impl Whois {
    /// What the same records say of `id`, another ID of the same slot
    /// (read in the same layout), when they can say it for good: its
    /// millisecond is at or below the slot's mark as read, and no claim
    /// made after the read can cover it (a new claim issues only above the
    /// mark it finds). `None` when `id` is of another slot or newer than
    /// the mark: then only the coordinator can answer.
    ///
    /// A service answering many look-ups keeps the last answer per slot
    /// and asks the coordinator only for IDs newer than it.
    pub fn for_id(&self, id: SnowflakeId) -> Option<Whois> {
        let node = self.layout.node_of(id);
        let slot = self.layout.slot_of(node).ok()?;
        let timestamp_ms = self.layout.timestamp_ms(id);
        if slot != self.slot || self.mark_ms.is_none_or(|mark| timestamp_ms > mark) {
            return None;
        }
        let (answer, claims) = judge(&self.kept, self.mark_ms, timestamp_ms);
        Some(Whois {
            id,
            timestamp_ms,
            node,
            answer,
            claims,
            ..self.clone()
        })
    }
}

impl fmt::Display for Whois {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

/// `host (ADDRESS), pid N`, or the holder's text as written.
fn holder_name(claim: &ClaimEntry) -> String {
    match claim.parsed_holder() {
        Some(holder) => format!("{} ({}), pid {}", holder.host, holder.listen, holder.pid),
        None => format!("{:?}", claim.holder),
    }
}

/// The highest timestamp the claim at `index` can have issued at,
/// `None` when it can have issued none.
fn last_ms(records: &[ClaimEntry], index: usize, mark_ms: Option<i64>) -> Option<i64> {
    let record = &records[index];
    if record.ended.is_some() {
        return record.last_ms;
    }
    match records.get(index + 1) {
        // A later claim found the mark this one had raised.
        Some(next) => next.floor_ms,
        None => mark_ms,
    }
}

/// The timestamps each of a slot's `records` (oldest first) covers, first
/// and last included; `None` for a claim that can have issued nothing.
pub(super) fn spans(records: &[ClaimEntry], mark_ms: Option<i64>) -> Vec<Option<(i64, i64)>> {
    (0..records.len())
        .map(|index| {
            let first = records[index].first_ms();
            last_ms(records, index, mark_ms)
                .filter(|last| first <= *last)
                .map(|last| (first, last))
        })
        .collect()
}

/// The answer for `timestamp_ms` when `covering` claims of the slot's
/// `records` cover it.
pub(super) fn answer(records: &[ClaimEntry], covering: usize, timestamp_ms: i64) -> WhoisAnswer {
    match covering {
        1 => WhoisAnswer::Covered,
        0 if records
            .first()
            .is_some_and(|oldest| oldest.generation > 1 && timestamp_ms < oldest.first_ms()) =>
        {
            WhoisAnswer::Pruned
        }
        0 => WhoisAnswer::NotCovered,
        _ => WhoisAnswer::Conflict,
    }
}

/// Judges the slot's `records` (oldest first) and mark for `timestamp_ms`:
/// the answer and the claims that covered it.
pub(super) fn judge(
    records: &[ClaimEntry],
    mark_ms: Option<i64>,
    timestamp_ms: i64,
) -> (WhoisAnswer, Vec<ClaimEntry>) {
    let covering: Vec<ClaimEntry> = records
        .iter()
        .zip(spans(records, mark_ms))
        .filter(|(_, span)| {
            span.is_some_and(|(first, last)| first <= timestamp_ms && timestamp_ms <= last)
        })
        .map(|(record, _)| record.clone())
        .collect();
    (answer(records, covering.len(), timestamp_ms), covering)
}

/// Reads what `whois` needs in `session` and judges it.
pub(super) async fn look_up<B: Backend>(
    backend: &B,
    session: &B::Session,
    fleet: &str,
    layout: Layout,
    id: SnowflakeId,
) -> Result<Whois, BackendError> {
    let paths = Paths::new(fleet);
    let node = layout.node_of(id);
    let slot = layout
        .slot_of(node)
        .map_err(|error| BackendError::unavailable(error.to_string()))?;
    // The mark first, then the history: every claim that can cover a
    // time at or below the mark read is in the history read after it (a
    // claim made later issues only above the mark it found, which is at
    // least this one), so what the two say of such a time is final
    // ([`Whois::for_id`] relies on it).
    let mark = backend.read(session, &paths.mark(slot)).await;
    let history = backend.read(session, &paths.claims(slot)).await;
    let records = match history? {
        Some(found) => {
            SlotHistory::from_bytes(&found.value)
                .map_err(|reason| {
                    BackendError::unavailable(format!(
                        "the claim history at {} cannot be read: {reason}",
                        paths.claims(slot)
                    ))
                })?
                .records
        }
        None => Vec::new(),
    };
    let mark_ms = mark?.and_then(|found| String::from_utf8_lossy(&found.value).trim().parse().ok());
    let timestamp_ms = layout.timestamp_ms(id);
    let (answer, claims) = judge(&records, mark_ms, timestamp_ms);
    Ok(Whois {
        id,
        fleet: fleet.to_owned(),
        layout,
        timestamp_ms,
        slot,
        node,
        answer,
        claims,
        kept: records,
        mark_ms,
    })
}

/// Which claim of `fleet` covered the slot of `id`, read through
/// `backend` in one short session (see [`whois`](crate::whois)).
pub(crate) async fn whois_on<B: Backend>(
    backend: &B,
    fleet: &FleetName,
    id: SnowflakeId,
) -> Result<Whois, FleetError> {
    let failed = |message: String| FleetError::Coordinator {
        coordinator: backend.url(),
        message,
    };
    let cannot = |error: BackendError| {
        failed(format!(
            "cannot read the claim history of fleet {fleet}: {}",
            error.reason()
        ))
    };
    let paths = Paths::new(fleet.as_str());
    let opened = backend
        .open_session(READER_TTL, &[])
        .await
        .map_err(cannot)?;
    let session = opened.session;
    let read = async {
        let layout = read_layout(backend, &session, fleet, &paths)
            .await
            .map_err(|message| match message {
                Ok(message) => failed(message),
                Err(error) => cannot(error),
            })?;
        look_up(backend, &session, fleet.as_str(), layout, id)
            .await
            .map_err(cannot)
    }
    .await;
    // The session holds nothing; ending it only saves the service work.
    let _ = backend.release(&session, &[]).await;
    read
}

/// The fleet's recorded layout, read in `session`; `Err(Ok(message))`
/// when there is none or it names no layout, `Err(Err(..))` when the read
/// failed.
pub(super) async fn read_layout<B: Backend>(
    backend: &B,
    session: &B::Session,
    fleet: &FleetName,
    paths: &Paths,
) -> Result<Layout, Result<String, BackendError>> {
    let Some(found) = backend.read(session, &paths.layout()).await.map_err(Err)? else {
        return Err(Ok(format!(
            "fleet {fleet} has no layout record at {}: no node has claimed a slot in it (is the fleet name right?)",
            paths.layout()
        )));
    };
    let text = String::from_utf8_lossy(&found.value);
    text.trim().parse().map_err(|_| {
        Ok(format!(
            "the layout record at {} is {text:?}, which names no layout",
            paths.layout()
        ))
    })
}

impl<B: Backend> Shared<B> {
    /// `whois` from inside the engine: in its own session if it has one
    /// open, else in a short one; the ID read in this node's layout, which
    /// is the fleet's.
    pub(super) async fn whois(&self, id: SnowflakeId) -> Result<Whois, FleetError> {
        let cannot = |error: BackendError| FleetError::Coordinator {
            coordinator: self.url.clone(),
            message: format!(
                "cannot read the claim history of fleet {}: {}",
                self.config.fleet(),
                error.reason()
            ),
        };
        let layout = self.config.layout;
        let live = self.lock().session.clone();
        let fleet = self.config.fleet();
        let answer = match live {
            Some(live) => {
                tokio::time::timeout(
                    READER_TTL,
                    look_up(&self.backend, &live.session, fleet, layout, id),
                )
                .await
            }
            None => {
                tokio::time::timeout(READER_TTL, async {
                    let opened = self.backend.open_session(READER_TTL, &[]).await?;
                    let answer = look_up(&self.backend, &opened.session, fleet, layout, id).await;
                    let _ = self.backend.release(&opened.session, &[]).await;
                    answer
                })
                .await
            }
        };
        answer
            .unwrap_or_else(|_| {
                Err(BackendError::unavailable(format!(
                    "no answer within {} ms",
                    READER_TTL.as_millis()
                )))
            })
            .map_err(cannot)
    }
}

#[cfg(test)]
mod tests {
    use super::super::history::ClaimEnd;
    use super::*;

    fn record(generation: u64, start_ms: i64, floor_ms: Option<i64>) -> ClaimEntry {
        serde_json::from_value(serde_json::json!({
            "generation": generation,
            "holder": format!("host=h{generation} pid={generation} listen=127.0.0.1:808{generation} started=1970-01-01T00:00:00.000Z"),
            "version": "0.1.0",
            "session": "lease 1",
            "start_ms": start_ms,
            "floor_ms": floor_ms,
            "end_ms": null,
            "last_ms": null,
            "ended": null,
        }))
        .unwrap()
    }

    fn ended(
        mut entry: ClaimEntry,
        end: ClaimEnd,
        end_ms: i64,
        last_ms: Option<i64>,
    ) -> ClaimEntry {
        entry.ended = Some(end);
        entry.end_ms = Some(end_ms);
        entry.last_ms = last_ms;
        entry
    }

    fn generations(claims: &[ClaimEntry]) -> Vec<u64> {
        claims.iter().map(|claim| claim.generation).collect()
    }

    /// Released at mark 2000, taken over at floor 2000 from 3000 on by a
    /// node whose claim is open with the mark at 5000.
    #[test]
    fn each_time_has_one_answer() {
        let records = vec![
            ended(
                record(1, 1_000, None),
                ClaimEnd::Release,
                1_500,
                Some(2_000),
            ),
            record(2, 3_000, Some(2_000)),
        ];
        let mark = Some(5_000);
        let answer = |t| {
            let (answer, claims) = judge(&records, mark, t);
            (answer, generations(&claims))
        };
        assert_eq!(answer(999), (WhoisAnswer::NotCovered, vec![]));
        assert_eq!(answer(1_000), (WhoisAnswer::Covered, vec![1]));
        assert_eq!(answer(2_000), (WhoisAnswer::Covered, vec![1]));
        // Between the release's last mark and the next claim's start.
        assert_eq!(answer(2_500), (WhoisAnswer::NotCovered, vec![]));
        assert_eq!(answer(3_000), (WhoisAnswer::Covered, vec![2]));
        assert_eq!(answer(5_000), (WhoisAnswer::Covered, vec![2]));
        // Past the mark: no ID can have gone out yet.
        assert_eq!(answer(5_001), (WhoisAnswer::NotCovered, vec![]));
    }

    /// A claim is bounded by the floor the next one found when it did not
    /// end by itself, and starts above its own floor.
    #[test]
    fn a_takeover_bounds_the_previous_claim_by_the_floor() {
        let records = vec![
            ended(
                record(4, 1_000, Some(900)),
                ClaimEnd::Takeover,
                2_100,
                Some(1_800),
            ),
            record(5, 1_200, Some(1_800)),
        ];
        assert_eq!(generations(&judge(&records, Some(4_000), 1_800).1), [4]);
        assert_eq!(generations(&judge(&records, Some(4_000), 1_801).1), [5]);
        // Before the oldest record kept, generations 1 to 3 were pruned.
        assert_eq!(judge(&records, Some(4_000), 950).0, WhoisAnswer::Pruned);
    }

    /// A holder that kept issuing above the floor its successor found is a
    /// conflict, with both claims named.
    #[test]
    fn two_claims_over_one_time_are_a_conflict() {
        let records = vec![
            ended(
                record(1, 1_000, None),
                ClaimEnd::Release,
                3_000,
                Some(3_500),
            ),
            record(2, 2_000, Some(2_500)),
        ];
        let (answer, claims) = judge(&records, Some(6_000), 3_000);
        assert_eq!(answer, WhoisAnswer::Conflict);
        assert_eq!(generations(&claims), [1, 2]);
    }

    /// An answer read once decides every ID of its slot at or below the
    /// mark it read, with the same records; a newer ID, or one of another
    /// slot, needs the coordinator.
    #[test]
    fn an_answer_decides_its_slot_up_to_the_mark_it_read() {
        let layout = Layout::default();
        // Twitter's layout: the time above bit 22, the slot's machine at bit 12.
        let id_at = |slot: u64, ms: i64| {
            SnowflakeId::from_u64((((ms - layout.epoch_ms()) as u64) << 22) | (slot << 12))
        };
        let epoch = layout.epoch_ms();
        let records = vec![
            ended(
                record(1, epoch + 1_000, None),
                ClaimEnd::Release,
                epoch + 1_500,
                Some(epoch + 2_000),
            ),
            record(2, epoch + 3_000, Some(epoch + 2_000)),
        ];
        let mark_ms = Some(epoch + 5_000);
        let read_for = id_at(3, epoch + 4_000);
        let (answer, claims) = judge(&records, mark_ms, layout.timestamp_ms(read_for));
        let read = Whois {
            id: read_for,
            fleet: "f".to_owned(),
            layout,
            timestamp_ms: layout.timestamp_ms(read_for),
            slot: 3,
            node: layout.node_of(read_for),
            answer,
            claims,
            kept: records,
            mark_ms,
        };
        let again = |ms| {
            read.for_id(id_at(3, epoch + ms))
                .map(|w| (w.answer, generations(&w.claims)))
        };
        assert_eq!(again(1_200), Some((WhoisAnswer::Covered, vec![1])));
        assert_eq!(again(2_500), Some((WhoisAnswer::NotCovered, vec![])));
        assert_eq!(again(5_000), Some((WhoisAnswer::Covered, vec![2])));
        let later = read.for_id(id_at(3, epoch + 4_500)).unwrap();
        assert_eq!(
            (later.id, later.timestamp_ms),
            (id_at(3, epoch + 4_500), epoch + 4_500)
        );
        // Past the mark read, a claim may have issued since.
        assert_eq!(again(5_001), None);
        assert!(read.for_id(id_at(4, epoch + 1_200)).is_none());
    }
}
