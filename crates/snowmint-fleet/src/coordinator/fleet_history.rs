//! A whole fleet's claim history, read at once from outside the fleet:
//! what `snowmint audit` judges a column of IDs against, slot by slot,
//! with the rules of [`whois`](super::whois) (docs/ARCHITECTURE.md §3,
//! "The claim history").
//!
//! - Each claim covers the timestamps from its first possible ID to its
//!   last ([`SlotClaims::span`]); an ID is covered by exactly one claim of
//!   its slot, by none (no node of the fleet issued it, or the records
//!   that could say were pruned), or by two or more (a conflict).
//! - Two claims of one slot whose spans meet held the slot at once, as
//!   far as the IDs they could carry go ([`SlotClaims::overlaps`]): the
//!   fencing and the mark exist to prevent it.
//! - Read in one short session: the fleet's layout, every slot's history
//!   and mark, many reads in flight at once.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use snowmint::{Layout, SnowflakeId};

use super::backend::Backend;
use super::history::{ClaimEntry, SlotHistory};
use super::paths::Paths;
use super::whois::{WhoisAnswer, answer, spans};
use super::{BackendError, FleetName};
use crate::FleetError;

/// How long the reader's session lives if it dies before ending it; a
/// fleet of many slots takes a while to read.
const READER_TTL: Duration = Duration::from_secs(30);

/// How many slots are read at once.
const IN_FLIGHT: usize = 64;

/// One slot's claim history: its records, oldest first, the slot's mark
/// now, and the timestamps each record covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotClaims {
    records: Vec<ClaimEntry>,
    mark_ms: Option<i64>,
    spans: Vec<Option<(i64, i64)>>,
}

impl SlotClaims {
    /// A slot's `records` (in any order; kept oldest first) and its mark
    /// now.
    pub fn new(mut records: Vec<ClaimEntry>, mark_ms: Option<i64>) -> SlotClaims {
        records.sort_by_key(|record| record.generation);
        let spans = spans(&records, mark_ms);
        SlotClaims {
            records,
            mark_ms,
            spans,
        }
    }

    /// Its records, oldest first.
    pub fn records(&self) -> &[ClaimEntry] {
        &self.records
    }

    /// The slot's high-water mark now, Unix ms.
    pub fn mark_ms(&self) -> Option<i64> {
        self.mark_ms
    }

    /// The timestamps (Unix ms, both included) an ID of record `index`
    /// can carry; `None` when the claim can have issued none.
    pub fn span(&self, index: usize) -> Option<(i64, i64)> {
        self.spans.get(index).copied().flatten()
    }

    /// The records whose span holds `timestamp_ms`, by index.
    pub fn covering(&self, timestamp_ms: i64) -> impl Iterator<Item = usize> + '_ {
        self.spans
            .iter()
            .enumerate()
            .filter(move |(_, span)| {
                span.is_some_and(|(first, last)| first <= timestamp_ms && timestamp_ms <= last)
            })
            .map(|(index, _)| index)
    }

    /// What the history says of an ID of this slot at `timestamp_ms`,
    /// without saying which records cover it (no allocation: for many
    /// IDs).
    pub fn answer(&self, timestamp_ms: i64) -> WhoisAnswer {
        answer(
            &self.records,
            self.covering(timestamp_ms).count(),
            timestamp_ms,
        )
    }

    /// What the history says of an ID of this slot at `timestamp_ms`, and
    /// the records that cover it.
    pub fn judge(&self, timestamp_ms: i64) -> (WhoisAnswer, Vec<usize>) {
        let covering: Vec<usize> = self.covering(timestamp_ms).collect();
        (
            answer(&self.records, covering.len(), timestamp_ms),
            covering,
        )
    }

    /// Every pair of records whose spans meet (by index, the older first):
    /// two claims that could have issued IDs of the same millisecond.
    pub fn overlaps(&self) -> Vec<(usize, usize)> {
        let mut pairs = Vec::new();
        for (a, span_a) in self.spans.iter().enumerate() {
            let Some((first_a, last_a)) = span_a else {
                continue;
            };
            for (b, span_b) in self.spans.iter().enumerate().skip(a + 1) {
                if let Some((first_b, last_b)) = span_b
                    && first_a <= last_b
                    && first_b <= last_a
                {
                    pairs.push((a, b));
                }
            }
        }
        pairs
    }
}

/// A fleet's claim history: its layout and, for every slot with records,
/// its [`SlotClaims`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FleetHistory {
    /// The fleet.
    pub fleet: String,
    /// Its recorded layout, which its IDs are read in.
    pub layout: Layout,
    /// Every slot with a history.
    pub slots: BTreeMap<u64, SlotClaims>,
    /// Slots whose history could not be read (edited by hand): slot, why.
    pub unreadable: Vec<(u64, String)>,
}

impl FleetHistory {
    /// A history made of `slots` (for tests, and for readers of their own).
    pub fn new(fleet: &str, layout: Layout, slots: BTreeMap<u64, SlotClaims>) -> FleetHistory {
        FleetHistory {
            fleet: fleet.to_owned(),
            layout,
            slots,
            unreadable: Vec::new(),
        }
    }

    /// The slot of `id` in the fleet's layout, and what its history says
    /// of it: the answer and the records that cover it (none when the
    /// slot has no history, or the ID's node is no slot of the layout).
    pub fn judge(&self, id: SnowflakeId) -> (Option<u64>, WhoisAnswer, Vec<usize>) {
        let Ok(slot) = self.layout.slot_of(self.layout.node_of(id)) else {
            return (None, WhoisAnswer::NotCovered, Vec::new());
        };
        match self.slots.get(&slot) {
            Some(claims) => {
                let (answer, covering) = claims.judge(self.layout.timestamp_ms(id));
                (Some(slot), answer, covering)
            }
            None => (Some(slot), WhoisAnswer::NotCovered, Vec::new()),
        }
    }
}

/// The whole claim history of `fleet`, read through `backend` in one
/// short session (see [`read_fleet_history`](crate::read_fleet_history)).
pub(crate) async fn read_on<B: Backend>(
    backend: &B,
    fleet: &FleetName,
) -> Result<FleetHistory, FleetError> {
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
        let layout = super::whois::read_layout(backend, &session, fleet, &paths)
            .await
            .map_err(|message| match message {
                Ok(message) => failed(message),
                Err(error) => cannot(error),
            })?;
        let names = backend
            .list(&session, &paths.claims_dir())
            .await
            .map_err(cannot)?;
        let mut slots: Vec<u64> = names.iter().filter_map(|name| name.parse().ok()).collect();
        slots.sort_unstable();
        let mut history = FleetHistory::new(fleet.as_str(), layout, BTreeMap::new());
        for wave in slots.chunks(IN_FLIGHT) {
            let (session, paths) = (&session, &paths);
            let reads = wave.iter().map(|&slot| async move {
                let (claims_key, mark_key) = (paths.claims(slot), paths.mark(slot));
                let (records, mark) = tokio::join!(
                    backend.read(session, &claims_key),
                    backend.read(session, &mark_key),
                );
                (slot, records, mark)
            });
            for (slot, records, mark) in join_all(reads.collect()).await {
                let Some(found) = records.map_err(cannot)? else {
                    continue;
                };
                let mark_ms = mark
                    .map_err(cannot)?
                    .and_then(|found| String::from_utf8_lossy(&found.value).trim().parse().ok());
                match SlotHistory::from_bytes(&found.value) {
                    Ok(stored) => {
                        history
                            .slots
                            .insert(slot, SlotClaims::new(stored.records, mark_ms));
                    }
                    Err(reason) => history.unreadable.push((slot, reason)),
                }
            }
        }
        Ok(history)
    }
    .await;
    // The session holds nothing; ending it only saves the service work.
    let _ = backend.release(&session, &[]).await;
    read
}

/// Runs `futures` at once, on this task; their outputs in their order.
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|context| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(context) {
                    Poll::Ready(value) => *output = Some(value),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(
        generation: u64,
        start_ms: i64,
        floor_ms: Option<i64>,
        last: Option<i64>,
    ) -> ClaimEntry {
        serde_json::from_value(serde_json::json!({
            "generation": generation,
            "holder": format!("host=h pid={generation} listen=10.0.0.{generation}:8080 started=1970-01-01T00:00:00.000Z"),
            "version": "0.1.0",
            "session": "lease 1",
            "start_ms": start_ms,
            "floor_ms": floor_ms,
            "end_ms": last.map(|_| start_ms + 10_000),
            "last_ms": last,
            "ended": last.map(|_| "takeover"),
        }))
        .unwrap()
    }

    /// Spans follow whois's rules; a slot whose claims meet says which.
    #[test]
    fn spans_and_overlaps() {
        // 1 ended at 2000; 2 found the mark at 2000 and is open (its end
        // is 3's floor, 2600); 3 is open up to the mark, 4000.
        let clean = SlotClaims::new(
            vec![
                record(3, 2_500, Some(2_600), None),
                record(1, 1_000, None, Some(2_000)),
                record(2, 1_900, Some(2_000), None),
            ],
            Some(4_000),
        );
        let generations: Vec<u64> = clean.records().iter().map(|r| r.generation).collect();
        assert_eq!(generations, [1, 2, 3]);
        assert_eq!(clean.span(0), Some((1_000, 2_000)));
        assert_eq!(clean.span(1), Some((2_001, 2_600)));
        assert_eq!(clean.span(2), Some((2_601, 4_000)));
        assert!(clean.overlaps().is_empty());
        assert_eq!(clean.judge(2_001), (WhoisAnswer::Covered, vec![1]));
        assert_eq!(clean.judge(4_001), (WhoisAnswer::NotCovered, vec![]));

        // A mark lowered by hand under claim 2: 2's floor lies inside 1.
        let lowered = SlotClaims::new(
            vec![
                record(1, 1_000, None, Some(3_000)),
                record(2, 1_500, Some(1_400), None),
            ],
            Some(5_000),
        );
        assert_eq!(lowered.overlaps(), [(0, 1)]);
        assert_eq!(lowered.judge(2_000), (WhoisAnswer::Conflict, vec![0, 1]));
    }

    /// Every output comes back in the futures' order.
    #[tokio::test]
    async fn join_all_keeps_the_order() {
        let futures: Vec<_> = (0..5u64)
            .map(|n| async move {
                tokio::time::sleep(Duration::from_millis(10 * (5 - n))).await;
                n
            })
            .collect();
        assert_eq!(join_all(futures).await, [0, 1, 2, 3, 4]);
    }
}
