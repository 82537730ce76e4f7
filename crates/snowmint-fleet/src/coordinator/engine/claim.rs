//! Claiming: a free slot found and won, then made the node's claim
//! (its mark read, its history written, the node told).

use super::super::mark::MarkCache;
use super::super::pick::SlotPicker;
use super::super::timing::Timing;
use super::super::{Backend, ClaimError};
use super::{Free, Held, Live, Shared};
use crate::NodeState;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

impl<B: Backend> Shared<B> {
    /// Claims a free slot of the range (a free aligned block, for a node
    /// that holds several): the preferred one if the listing shows it
    /// free, else one drawn at random; after a conflict, another from a
    /// fresh listing. Slots passed over count as taken.
    pub(super) async fn claim_free(
        &self,
        live: &Live<B::Session>,
        timing: Timing,
        picker: &mut SlotPicker,
        confirmed: &mut (Instant, Duration),
    ) -> Result<Free, ClaimError> {
        let range = self.config.slots();
        let per_node = self.config.slots_per_node();
        let preferred = self.lock().last_slot.or(self.config.preferred_slot);
        // Each conflict means another node took a slot of the range since
        // the listing, so this many attempts find the range full or win.
        for _ in 0..range.len() {
            self.confirm_if_stale(live, timing, confirmed, &[]).await?;
            let names = self
                .step(
                    timing.step_limit(),
                    self.backend.list(&live.session, &self.paths.slots_dir()),
                )
                .await?;
            let mut taken: BTreeSet<u64> =
                names.iter().filter_map(|name| name.parse().ok()).collect();
            let passed_over = self.lock().passed_over_now(Instant::now());
            let held_elsewhere = taken.clone();
            taken.extend(passed_over.iter().map(|passed| passed.slot));
            let Some(slot) = picker.pick(range, per_node, &taken, preferred) else {
                return Ok(Free::None(self.none_free(&held_elsewhere, passed_over)));
            };
            let sent = Instant::now();
            // Every ID of the claim is at or after this reading.
            let start_ms = self.config.ops.clock.now_ms();
            let keys = self.block_keys(slot);
            let create =
                self.backend
                    .create_if_absent(&live.session, &keys, self.config.holder.as_bytes());
            if self.step(timing.step_limit(), create).await? {
                return Ok(Free::Won(slot, sent, start_ms));
            }
            picker.stir();
        }
        Ok(Free::None(self.all_taken()))
    }

    /// Why no slot is free: all taken, or the free ones passed over.
    pub(super) fn none_free(
        &self,
        held_elsewhere: &BTreeSet<u64>,
        passed_over: Vec<super::super::PassedOver>,
    ) -> ClaimError {
        let range = self.config.slots();
        let free_passed: Vec<(u64, String)> = passed_over
            .into_iter()
            .filter(|passed| range.contains(passed.slot) && !held_elsewhere.contains(&passed.slot))
            .map(|passed| (passed.slot, passed.reason))
            .collect();
        if free_passed.is_empty() {
            self.all_taken()
        } else {
            ClaimError::OnlyPassedOver {
                fleet: self.config.fleet().to_owned(),
                slots: range,
                passed_over: free_passed,
            }
        }
    }

    /// Keeps the session alive if its last confirmation is older than the
    /// keep-alive interval, so that a slow claim (a storm, a loaded
    /// coordinator) does not run into the first TTL; also checks that the
    /// session holds every key of `held`.
    pub(super) async fn confirm_if_stale(
        &self,
        live: &Live<B::Session>,
        timing: Timing,
        confirmed: &mut (Instant, Duration),
        held: &[String],
    ) -> Result<(), ClaimError> {
        let sent = Instant::now();
        if sent < confirmed.0 + timing.renew_every() {
            return Ok(());
        }
        let ttl = self
            .step(
                timing.step_limit(),
                self.backend.keep_alive(&live.session, held),
            )
            .await?;
        *confirmed = (sent, ttl);
        Ok(())
    }

    /// Reads the mark (and, where the guard cannot prove ownership,
    /// writes it back) and the claim history of every slot of the block,
    /// writes the claim's record into each, then publishes the claim;
    /// returns its generation. The claim's floor is the highest mark of
    /// the block: each slot's generator resumes past it.
    ///
    /// `claimed` is when the winning request was sent, on the monotonic
    /// clock and on the node's.
    pub(super) async fn activate(
        &self,
        live: &Live<B::Session>,
        slot: u64,
        claimed: (Instant, i64),
        deadline: Instant,
        timing: Timing,
    ) -> Result<u64, ClaimError> {
        let (claimed_at, start_ms) = claimed;
        let limit = timing.step_limit();
        let mut block = Vec::new();
        for each in self.block(slot) {
            // Read together: the history costs no round trip of its own.
            let (stored, history) = tokio::join!(
                self.read_mark(live, each, limit),
                self.read_history_for_claim(live, each, limit),
            );
            let mut stored = stored?;
            let mut mark = stored.map(|(mark, _)| mark);
            if !B::GUARD_PROVES_OWNER {
                (mark, stored) = self.write_mark_back(live, each, stored, limit).await?;
            }
            block.push((each, mark, stored, history));
        }
        let floor_ms = block.iter().filter_map(|(_, mark, ..)| *mark).max();
        // Before the claim is published: no ID leaves without its record.
        let mut history_generation = None;
        let mut cache = Vec::with_capacity(block.len());
        for (each, mark, stored, history) in block {
            let generation = self
                .record_claim(live, each, start_ms, (floor_ms, mark), limit, history)
                .await?;
            if each == slot {
                history_generation = generation;
            }
            cache.push(stored);
        }
        if Instant::now() >= deadline {
            return Err(ClaimError::SlowClaim {
                slot,
                ttl: live.ttl,
            });
        }
        let node = self
            .config
            .layout
            .node_from_slot(slot)
            .map_err(|reason| ClaimError::OutsideLayout { slot, reason })?;
        // The mark cache must be set before the claim is published, or a
        // first reservation could miss the floor's version.
        let mut marks = self.marks.lock().await;
        let mut inner = self.lock();
        inner.generation += 1;
        inner.all_taken = false;
        inner.last_slot = Some(slot);
        *marks = MarkCache::read(inner.generation, cache);
        let held = Held {
            slot,
            slots: self.config.slots_per_node(),
            node,
            generation: inner.generation,
            claimed_at,
            start_ms,
            deadline,
            floor_ms,
            history_generation,
        };
        inner.claim = Some(held);
        let claim = self.claim_view(&inner, live, held);
        drop(inner);
        tracing::info!(coordinator = %self.url, slot, slots = held.slots, generation = held.generation, slot_generation = ?history_generation, floor_ms = ?held.floor_ms, "claimed a slot");
        self.state.send_replace(NodeState::Active(claim));
        Ok(held.generation)
    }
}
