//! What one attempt to take IDs does: a pure function of the state word,
//! the clock's tick and the policy, so that it can be tested and
//! model-checked on its own.
//!
//! The state word is the first (tick, sequence) pair that has *not* been
//! handed out, packed as `ticks << sequence_bits | sequence`: packed this
//! way the pairs are ordered like the IDs they make (the time field lies
//! above the sequence field in every layout that mints), so "strictly
//! increasing" is "the word only grows", and taking `n` IDs of one tick is
//! replacing the word by itself plus `n`. (A layout that mints keeps its
//! time and sequence fields within 63 bits, so the word after the last
//! pair of the last tick still fits.)

/// What one attempt should do, given the state word and the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Replace `next` by `end`; the pairs `start..end` are the new IDs.
    Take { start: u64, end: u64 },
    /// The sequence of the clock's tick is used up: wait for the clock to
    /// reach tick `until`.
    Exhausted { until: u64 },
    /// The clock is behind: it must reach offset `until` before the next ID
    /// can be made (unless the policy borrows).
    Behind { until: u64 },
    /// The next ID would be past the layout's last instant.
    PastEnd,
}

/// The common case of [`plan`] for one ID, decided with a comparison: the
/// pair to take when the clock's tick `now` (already checked to be in
/// `0..=max_offset`) is at or past the state word's and has room left.
/// `None` leaves the decision to [`plan`] (used up, behind, borrowing).
///
/// The larger of `next` and the first pair of `now` is the pair [`plan`]
/// would start at; it belongs to `now` exactly when `next` is not ahead of
/// the clock.
#[inline(always)]
pub(crate) fn plan_one(next: u64, now: u64, sequence_bits: u8) -> Option<u64> {
    let start = next.max(now << sequence_bits);
    (start >> sequence_bits == now).then_some(start)
}

/// Decides one attempt: pure, so that it can be tested and model-checked on
/// its own. Inlined: it is the hot path's only logic.
///
/// `next` is the state word, `now` the clock as ticks since the epoch
/// (already checked to be in `0..=max_offset`), `want` the most IDs wanted
/// (at least 1), `borrow` the borrow bound in ticks if the policy borrows.
/// `sequence_bits` is the width of the word's counter (the sequence's, plus
/// log2 of the slots of a node that holds several); a run taken stops at
/// the end of a row of `2^row_bits` pairs (`row_bits <= sequence_bits`),
/// the most whose IDs are evenly spaced.
#[inline]
pub(crate) fn plan(
    next: u64,
    now: u64,
    want: u64,
    (sequence_bits, row_bits): (u8, u8),
    max_offset: u64,
    borrow: Option<u64>,
) -> Plan {
    let sequence_mask = (1u64 << sequence_bits) - 1;
    let next_offset = next >> sequence_bits;
    let start = if now > next_offset {
        // A new tick: its sequence starts at 0.
        now << sequence_bits
    } else if now == next_offset {
        next
    } else if next & sequence_mask == 0 && next_offset == now + 1 {
        // The whole of `now` is used and nothing later: plain exhaustion.
        return Plan::Exhausted { until: next_offset };
    } else if borrow.is_some_and(|bound| next_offset - now <= bound) {
        next
    } else {
        return Plan::Behind { until: next_offset };
    };
    if start >> sequence_bits > max_offset {
        return Plan::PastEnd;
    }
    let row_mask = (1u64 << row_bits) - 1;
    let room = row_mask + 1 - (start & row_mask);
    Plan::Take {
        start,
        end: start + want.min(room),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u8 = 12;
    const MAX: u64 = (1 << 41) - 1;

    fn pack(offset: u64, sequence: u64) -> u64 {
        offset << S | sequence
    }

    #[test]
    fn fresh_state_takes_the_clock_millisecond() {
        assert_eq!(
            plan(0, 100, 1, (S, S), MAX, None),
            Plan::Take {
                start: pack(100, 0),
                end: pack(100, 1)
            }
        );
    }

    #[test]
    fn same_millisecond_continues_the_sequence() {
        assert_eq!(
            plan(pack(100, 7), 100, 1, (S, S), MAX, None),
            Plan::Take {
                start: pack(100, 7),
                end: pack(100, 8)
            }
        );
    }

    #[test]
    fn a_batch_stops_at_the_end_of_the_millisecond() {
        assert_eq!(
            plan(pack(100, 4000), 100, 4096, (S, S), MAX, None),
            Plan::Take {
                start: pack(100, 4000),
                end: pack(101, 0)
            }
        );
    }

    #[test]
    fn used_up_millisecond_is_exhaustion_not_regression() {
        assert_eq!(
            plan(pack(101, 0), 100, 1, (S, S), MAX, None),
            Plan::Exhausted { until: 101 }
        );
        assert_eq!(
            plan(pack(101, 0), 100, 1, (S, S), MAX, Some(50)),
            Plan::Exhausted { until: 101 }
        );
    }

    #[test]
    fn regression_is_behind_unless_borrowed_within_bound() {
        assert_eq!(
            plan(pack(101, 1), 100, 1, (S, S), MAX, None),
            Plan::Behind { until: 101 }
        );
        assert_eq!(
            plan(pack(110, 0), 100, 1, (S, S), MAX, None),
            Plan::Behind { until: 110 }
        );
        assert_eq!(
            plan(pack(110, 3), 100, 1, (S, S), MAX, Some(10)),
            Plan::Take {
                start: pack(110, 3),
                end: pack(110, 4)
            }
        );
        assert_eq!(
            plan(pack(111, 3), 100, 1, (S, S), MAX, Some(10)),
            Plan::Behind { until: 111 }
        );
    }

    #[test]
    fn a_batch_stops_at_the_end_of_its_row() {
        // A counter of 14 bits (4 slots of 12-bit sequences) in rows of 4096.
        assert_eq!(
            plan(pack(100, 0) << 2 | 4000, 100, 4096, (S + 2, S), MAX, None),
            Plan::Take {
                start: 100 << (S + 2) | 4000,
                end: 100 << (S + 2) | 4096
            }
        );
        // The last row ends at the next tick.
        assert_eq!(
            plan(
                100 << (S + 2) | 3 << S | 5,
                100,
                1 << 20,
                (S + 2, S),
                MAX,
                None
            ),
            Plan::Take {
                start: 100 << (S + 2) | 3 << S | 5,
                end: 101 << (S + 2)
            }
        );
    }

    #[test]
    fn never_past_the_last_instant() {
        assert_eq!(
            plan(pack(MAX + 1, 0), MAX, 1, (S, S), MAX, None),
            Plan::Exhausted { until: MAX + 1 }
        );
        assert_eq!(
            plan(pack(MAX + 1, 0), MAX - 1, 1, (S, S), MAX, Some(5)),
            Plan::PastEnd
        );
        assert_eq!(
            plan(pack(MAX, 4095), MAX, 1, (S, S), MAX, None),
            Plan::Take {
                start: pack(MAX, 4095),
                end: pack(MAX + 1, 0)
            }
        );
    }

    proptest::proptest! {
        /// The inline common case takes exactly what `plan` takes for one ID
        /// at the clock's millisecond, and leaves every other case to it, for
        /// any sequence width, near the start and near the end of the layout.
        #[test]
        fn plan_one_is_the_common_case_of_plan(
            sequence_bits in 1u8..=21,
            now in proptest::prop_oneof![0u64..6, (MAX - 5)..=MAX],
            ahead in -3i64..=3,
            sequence in 0u64..(1 << 21),
            borrow_ms in proptest::option::of(0u64..4),
        ) {
            let sequence = sequence & ((1 << sequence_bits) - 1);
            let next_offset = now.saturating_add_signed(ahead).min(MAX + 1);
            let next = if next_offset == MAX + 1 {
                // Past the last instant only the first pair can be the state.
                next_offset << sequence_bits
            } else {
                next_offset << sequence_bits | sequence
            };
            let full = plan(next, now, 1, (sequence_bits, sequence_bits), MAX, borrow_ms);
            match plan_one(next, now, sequence_bits) {
                Some(start) => proptest::prop_assert_eq!(
                    full,
                    Plan::Take { start, end: start + 1 }
                ),
                None => proptest::prop_assert!(
                    !matches!(full, Plan::Take { start, .. } if start >> sequence_bits == now),
                    "plan took at the clock's millisecond: {full:?}"
                ),
            }
        }
    }
}
