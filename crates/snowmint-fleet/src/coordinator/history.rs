//! The claim history: every claim of a slot leaves a record under
//! `/snowmint/<fleet>/claims/<slot>`, so that an operator can ask which
//! process issued an ID ([`whois`](crate::whois)).
//!
//! One key per slot holds the slot's records, newest last, as JSON. The
//! rules (docs/ARCHITECTURE.md §3, "The claim history"):
//!
//! - A new claim writes its record before it is published, so that no ID
//!   leaves a node whose claim has no record. The write is the slot's
//!   history key rewritten by the same guarded compare-and-set as the
//!   high-water mark (the slot key must still be this session's), and it
//!   is read together with the mark: one round trip more per claim, the
//!   write.
//! - The record names the holder (what the node writes into its slot key:
//!   host, pid, addresses), the snowmint version, the session, the slot's
//!   own generation (1, 2, 3... per slot, whoever holds it), when the
//!   claim was won by the holder's clock, and the floor: the slot's mark
//!   when it was claimed, which no ID of the claim is at or below.
//! - The same write ends any record still open (the previous holder's):
//!   ended by take-over, at the new holder's clock, its IDs bounded by the
//!   floor just read (the previous holder raised the mark above every ID
//!   it issued before it issued it).
//! - A clean release ends the node's own record: its IDs are bounded by
//!   the last mark it stored. A claim that is lost stays open until the
//!   next claim of the slot ends it.
//! - The same write prunes: the newest `keep` records of the slot stay,
//!   and among them those that ended longer than `max_age` ago go; the
//!   newest record always stays (it numbers the next generation). Records
//!   of a slot are numbered without gaps, so a reader can tell that older
//!   ones were pruned.
//! - A node of several slots writes its claim's record into the history
//!   of each, and its release ends each; the record's floor is the
//!   claim's (the highest mark of the block), and the record it takes over
//!   in a slot ends at that slot's own mark.
//! - A value that cannot be read (edited by hand) is not allowed to stop
//!   claims: it is logged, with its text, and started anew.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::engine::{Held, Live, Shared};
use super::{Backend, ClaimError, ConfigError, GuardedWrite};

/// Compare-and-set attempts on a slot's history before giving up; each
/// conflict means another writer (the slot's previous holder ending its
/// record) changed it in between.
const HISTORY_ATTEMPTS: usize = 4;

/// The most records a slot keeps, whatever the setting: a slot's history
/// is one value, rewritten at every claim.
pub const MAX_HISTORY_KEEP: usize = 1_000;
/// The longest a record may be kept (a year).
pub const MAX_HISTORY_AGE: Duration = Duration::from_secs(366 * 86_400);

/// How much of the claim history is kept.
///
/// The defaults keep the newest 16 records of each slot, for at most 30
/// days after they ended: about 5 MB for a fleet of 1,024 slots in which
/// every slot changed hands 16 times (a record is about 300 bytes;
/// BENCHMARKS.md, "Claim history and clock check"), and a few hundred
/// bytes per slot in a fleet whose nodes stay.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use snowmint_fleet::{HistoryRetention, parse_history_keep, parse_history_max_age};
///
/// let retention = HistoryRetention::default();
/// assert_eq!(retention.keep, 16);
/// assert_eq!(retention.max_age, Duration::from_secs(30 * 86_400));
/// assert_eq!(parse_history_keep("0")?, 0);
/// assert_eq!(
///     parse_history_max_age("30s").unwrap_err().to_string(),
///     "claim history max age 30s is out of range (1h..=8784h)"
/// );
/// # Ok::<(), snowmint_fleet::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryRetention {
    /// The newest records kept per slot; 0 keeps no history at all (no
    /// record is written).
    pub keep: usize,
    /// How long a record is kept after its claim ended.
    pub max_age: Duration,
}

impl Default for HistoryRetention {
    fn default() -> Self {
        HistoryRetention {
            keep: 16,
            max_age: Duration::from_secs(30 * 86_400),
        }
    }
}

/// Reads how many records of a slot's claim history are kept: an integer
/// in `0..=1000` (0: no history).
pub fn parse_history_keep(text: &str) -> Result<usize, ConfigError> {
    snowmint::value::parse_bounded("claim history keep", text, 0..=MAX_HISTORY_KEEP as u64)
        .map(|keep| keep as usize)
        .map_err(ConfigError::Value)
}

/// Reads how long an ended claim's record is kept: a duration in
/// `1h..=8784h` (a year).
pub fn parse_history_max_age(text: &str) -> Result<Duration, ConfigError> {
    snowmint::value::parse_duration(
        "claim history max age",
        text,
        Duration::from_secs(3600)..=MAX_HISTORY_AGE,
    )
    .map_err(ConfigError::Value)
}

/// How a claim ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimEnd {
    /// Its holder gave it up on a clean shutdown.
    Release,
    /// A later claim of the slot found it still open (the holder lost the
    /// slot, crashed, or claimed it again itself).
    Takeover,
}

impl ClaimEnd {
    /// `release` or `takeover`.
    pub fn name(self) -> &'static str {
        match self {
            ClaimEnd::Release => "release",
            ClaimEnd::Takeover => "takeover",
        }
    }
}

/// One claim of a slot, as the claim history keeps it.
///
/// Times are Unix milliseconds on the holder's own clock (the clock its
/// IDs carry), except `end_ms` of a take-over, which is the next
/// holder's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClaimEntry {
    /// The slot's own count of claims, from 1, whoever held them.
    pub generation: u64,
    /// What the holder wrote into its slot key: `host=... pid=...
    /// listen=... grpc=... started=...` for `snowmint serve` (see
    /// [`Holder`](super::Holder)).
    pub holder: String,
    /// The snowmint version of the holder.
    pub version: String,
    /// The holder's lease (etcd, hex) or session.
    pub session: String,
    /// When the holder asked for the slot, by its clock: every ID of the
    /// claim is at or after it.
    pub start_ms: i64,
    /// The slot's high-water mark when it was claimed: every ID of the
    /// claim is above it.
    pub floor_ms: Option<i64>,
    /// When the claim ended; `None` while it is held, or when it was lost
    /// and nobody has claimed the slot since.
    pub end_ms: Option<i64>,
    /// The highest timestamp an ID of the claim can carry, once it ended:
    /// the last mark it stored (release) or the mark the next holder found
    /// (take-over). `None` with an end: the claim stored no mark and had
    /// no floor, so it issued nothing.
    pub last_ms: Option<i64>,
    /// How it ended.
    pub ended: Option<ClaimEnd>,
}

impl ClaimEntry {
    /// The holder, read as `snowmint serve` writes it, if it can be.
    pub fn parsed_holder(&self) -> Option<super::Holder> {
        super::Holder::parse(&self.holder)
    }

    /// The lowest timestamp an ID of the claim can carry.
    pub fn first_ms(&self) -> i64 {
        match self.floor_ms {
            Some(floor) => self.start_ms.max(floor.saturating_add(1)),
            None => self.start_ms,
        }
    }
}

/// A slot's claim history as stored: its records, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct SlotHistory {
    /// The format's version.
    v: u32,
    pub(super) records: Vec<ClaimEntry>,
}

impl SlotHistory {
    /// The value as stored.
    pub(super) fn to_bytes(&self) -> Vec<u8> {
        // A struct of plain fields always serializes.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a stored value.
    pub(super) fn from_bytes(bytes: &[u8]) -> Result<SlotHistory, String> {
        let history: SlotHistory =
            serde_json::from_slice(bytes).map_err(|error| error.to_string())?;
        if history.v != 1 {
            return Err(format!("format version {} is not 1", history.v));
        }
        let mut history = history;
        history.records.sort_by_key(|record| record.generation);
        Ok(history)
    }

    /// The generation the next claim gets.
    fn next_generation(&self) -> u64 {
        self.records
            .last()
            .map_or(1, |record| record.generation + 1)
    }

    /// Ends every open record as taken over at `now_ms` by a claim that
    /// found the mark at `floor_ms`, appends `record`, and prunes.
    fn add_claim(
        &mut self,
        record: ClaimEntry,
        now_ms: i64,
        floor_ms: Option<i64>,
        retention: HistoryRetention,
    ) {
        for open in self.records.iter_mut().filter(|r| r.ended.is_none()) {
            open.end_ms = Some(now_ms);
            open.last_ms = floor_ms;
            open.ended = Some(ClaimEnd::Takeover);
        }
        self.records.push(record);
        self.prune(now_ms, retention);
    }

    /// Keeps the newest `keep` records, less those that ended more than
    /// `max_age` before `now_ms`; never the newest.
    fn prune(&mut self, now_ms: i64, retention: HistoryRetention) {
        let keep = retention.keep.max(1);
        if self.records.len() > keep {
            self.records.drain(..self.records.len() - keep);
        }
        let max_age_ms = i64::try_from(retention.max_age.as_millis()).unwrap_or(i64::MAX);
        let newest = self.records.last().map(|record| record.generation);
        self.records.retain(|record| {
            Some(record.generation) == newest
                || record
                    .end_ms
                    .is_none_or(|end| now_ms.saturating_sub(end) <= max_age_ms)
        });
    }

    /// Ends the record of `generation`, if still open, as released at
    /// `now_ms` with IDs up to `last_ms`; `false` if there was none to end.
    fn release(&mut self, generation: u64, now_ms: i64, last_ms: Option<i64>) -> bool {
        match self
            .records
            .iter_mut()
            .find(|record| record.generation == generation && record.ended.is_none())
        {
            Some(record) => {
                record.end_ms = Some(now_ms);
                record.last_ms = last_ms;
                record.ended = Some(ClaimEnd::Release);
                true
            }
            None => false,
        }
    }
}

/// A slot's history as read, with the version a compare-and-set names.
pub(super) struct Stored {
    history: SlotHistory,
    version: Option<i64>,
}

impl<B: Backend> Shared<B> {
    /// Reads the slot's history; a value that cannot be read counts as
    /// none (logged with its text), so that it cannot stop claims.
    async fn read_history(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        limit: Duration,
    ) -> Result<Stored, ClaimError> {
        let path = self.paths.claims(slot);
        let read = self
            .step(limit, self.backend.read(&live.session, &path))
            .await?;
        let Some(found) = read else {
            return Ok(Stored {
                history: SlotHistory {
                    v: 1,
                    records: Vec::new(),
                },
                version: None,
            });
        };
        let history = SlotHistory::from_bytes(&found.value).unwrap_or_else(|reason| {
            tracing::error!(
                coordinator = %self.url,
                key = %path,
                %reason,
                text = %String::from_utf8_lossy(&found.value),
                "the slot's claim history cannot be read; starting it anew"
            );
            SlotHistory {
                v: 1,
                records: Vec::new(),
            }
        });
        Ok(Stored {
            history,
            version: Some(found.version),
        })
    }

    /// Applies `change` to the slot's history and writes it, guarded by
    /// the slot key still being this session's; on a conflict, reads it
    /// again and retries. `change` returns what to report, or `None` when
    /// there is nothing to write.
    async fn change_history<T>(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        limit: Duration,
        mut stored: Option<Stored>,
        mut change: impl FnMut(&mut SlotHistory) -> Option<T>,
    ) -> Result<Option<T>, ClaimError> {
        let guard = self.paths.slot(slot);
        let path = self.paths.claims(slot);
        for _ in 0..HISTORY_ATTEMPTS {
            let Stored {
                mut history,
                version,
            } = match stored.take() {
                Some(stored) => stored,
                None => self.read_history(live, slot, limit).await?,
            };
            let Some(outcome) = change(&mut history) else {
                return Ok(None);
            };
            let value = history.to_bytes();
            let write = self
                .backend
                .write_guarded(&live.session, &guard, &path, &value, version);
            match self.step(limit, write).await? {
                GuardedWrite::Written { .. } => return Ok(Some(outcome)),
                GuardedWrite::GuardLost => return Err(self.guard_lost_error(slot)),
                GuardedWrite::Conflict => {}
            }
        }
        Err(ClaimError::HistoryContended {
            path,
            attempts: HISTORY_ATTEMPTS,
        })
    }

    /// Writes the record of a claim of `slot` just won (ending the open
    /// one it takes over) and returns its generation; `None` when the
    /// history is off.
    ///
    /// `start_ms` is this node's clock when it asked for the slot;
    /// `marks` are the claim's floor (the highest mark of its block, which
    /// no ID of the claim is at or below) and the mark read on this slot
    /// (which bounds the IDs of the record it takes over); with one slot
    /// per node they are the same. `read` is the history read with the
    /// mark, if it was.
    pub(super) async fn record_claim(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        start_ms: i64,
        marks: (Option<i64>, Option<i64>),
        limit: Duration,
        read: Option<Result<Stored, ClaimError>>,
    ) -> Result<Option<u64>, ClaimError> {
        let (floor_ms, slot_mark) = marks;
        let retention = self.config.ops.history;
        if retention.keep == 0 {
            return Ok(None);
        }
        let stored = read.transpose()?;
        let now_ms = self.config.ops.clock.now_ms();
        let entry = |generation| ClaimEntry {
            generation,
            holder: self.config.holder.clone(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            session: format!("{} {}", B::SESSION_NAME, live.id),
            start_ms,
            floor_ms,
            end_ms: None,
            last_ms: None,
            ended: None,
        };
        self.change_history(live, slot, limit, stored, |history| {
            let generation = history.next_generation();
            history.add_claim(entry(generation), now_ms, slot_mark, retention);
            Some(generation)
        })
        .await
    }

    /// Reads the slot's history for a claim being activated, when the
    /// history is on; run beside the mark's read.
    pub(super) async fn read_history_for_claim(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        limit: Duration,
    ) -> Option<Result<Stored, ClaimError>> {
        if self.config.ops.history.keep == 0 {
            return None;
        }
        Some(self.read_history(live, slot, limit).await)
    }

    /// Ends this node's record of `held` as released, in the history of
    /// every slot of its block, with its IDs bounded by `last_ms` (the
    /// last mark it stored). Best effort: a failure is logged, and the
    /// next claim of the slot ends the record instead.
    pub(super) async fn record_release(
        &self,
        live: &Live<B::Session>,
        held: Held,
        last_ms: Option<i64>,
        limit: Duration,
    ) {
        let Some(generation) = held.history_generation else {
            return;
        };
        let now_ms = self.config.ops.clock.now_ms();
        let session = format!("{} {}", B::SESSION_NAME, live.id);
        for slot in self.block(held.slot) {
            let ended = self
                .change_history(live, slot, limit, None, |history| {
                    if slot == held.slot {
                        history.release(generation, now_ms, last_ms).then_some(())
                    } else {
                        // The block's other slots number their records on
                        // their own: this claim's is the open one of its
                        // session and start.
                        let found = history.records.iter().find(|record| {
                            record.ended.is_none()
                                && record.session == session
                                && record.start_ms == held.start_ms
                        })?;
                        let generation = found.generation;
                        history.release(generation, now_ms, last_ms).then_some(())
                    }
                })
                .await;
            if let Err(error) = ended {
                tracing::warn!(%error, slot, generation, "could not end the claim's record in the history; the next claim of the slot ends it");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(generation: u64, start_ms: i64, floor_ms: Option<i64>) -> ClaimEntry {
        ClaimEntry {
            generation,
            holder: format!(
                "host=h{generation} pid=1 listen=127.0.0.1:1 started=1970-01-01T00:00:00.000Z"
            ),
            version: "0.1.0".into(),
            session: "lease 1".into(),
            start_ms,
            floor_ms,
            end_ms: None,
            last_ms: None,
            ended: None,
        }
    }

    fn retention(keep: usize, max_age_ms: u64) -> HistoryRetention {
        HistoryRetention {
            keep,
            max_age: Duration::from_millis(max_age_ms),
        }
    }

    /// A take-over ends the open record with the floor the new holder
    /// read, and the value reads back as written.
    #[test]
    fn a_takeover_ends_the_open_record_at_the_floor() {
        let mut history = SlotHistory {
            v: 1,
            records: vec![],
        };
        history.add_claim(entry(1, 1_000, None), 1_000, None, retention(16, 3_600_000));
        history.add_claim(
            entry(2, 5_000, Some(4_200)),
            5_001,
            Some(4_200),
            retention(16, 3_600_000),
        );
        let first = &history.records[0];
        assert_eq!(first.ended, Some(ClaimEnd::Takeover));
        assert_eq!((first.end_ms, first.last_ms), (Some(5_001), Some(4_200)));
        assert_eq!(history.records[1].ended, None);
        assert_eq!(history.records[1].first_ms(), 5_000);
        assert_eq!(history.next_generation(), 3);
        let back = SlotHistory::from_bytes(&history.to_bytes()).unwrap();
        assert_eq!(back, history);
        // A release ends only its own open record, once.
        assert!(history.release(2, 9_000, Some(9_500)));
        assert!(!history.release(2, 9_100, Some(9_600)));
        assert_eq!(history.records[1].last_ms, Some(9_500));
    }

    /// The newest `keep` stay, less the ones ended too long ago; the
    /// newest always stays.
    #[test]
    fn pruning_keeps_the_newest_and_drops_the_old() {
        let mut history = SlotHistory {
            v: 1,
            records: vec![],
        };
        for generation in 1..=5 {
            let at = generation as i64 * 1_000;
            history.add_claim(
                entry(generation, at, Some(at - 1)),
                at,
                Some(at - 1),
                retention(3, 10_000),
            );
        }
        let kept: Vec<u64> = history.records.iter().map(|r| r.generation).collect();
        assert_eq!(kept, [3, 4, 5]);
        // Much later: every ended record is too old; the newest stays.
        history.prune(1_000_000, retention(3, 10_000));
        let kept: Vec<u64> = history.records.iter().map(|r| r.generation).collect();
        assert_eq!(kept, [5]);
        history.release(5, 1_000_001, Some(1_000_500));
        history.prune(9_000_000, retention(3, 10_000));
        assert_eq!(history.records.len(), 1);
    }

    /// A value that is not the history's JSON is refused with a reason.
    #[test]
    fn other_values_are_refused() {
        assert!(SlotHistory::from_bytes(b"not json").is_err());
        assert!(
            SlotHistory::from_bytes(br#"{"v":2,"records":[]}"#)
                .unwrap_err()
                .contains("version 2")
        );
    }
}
