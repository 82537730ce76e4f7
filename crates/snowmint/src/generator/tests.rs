//! The generator's own tests: readings at the layout's edges, waits on
//! clocks that do not move by themselves, and units other than 1 ms.

use std::thread;
use std::time::Duration;

use super::*;
use crate::layout::{Role, Unit};
use crate::{ErrorKind, ManualClock};

const MAX: u64 = (1 << 41) - 1;

#[test]
fn readings_outside_the_layout_are_refused_at_both_ends() {
    // The common case checks the range with one wrapping comparison; the
    // readings that could fool it are the extremes of `i64`, with the epoch
    // at either end of what a 41-bit layout allows (its last microsecond
    // must fit an i64).
    let widest = i64::MAX / 1000 - (MAX as i64 + 1);
    for epoch_ms in [0, Layout::TWITTER.epoch_ms(), widest] {
        let layout = Layout::TWITTER.with_epoch(epoch_ms).expect("valid epoch");
        let last = layout.last_instant_ms();
        let generator = Generator::builder(layout, Node::default())
            .clock(ManualClock::new(0))
            .build()
            .expect("valid generator");
        for before in [i64::MIN, i64::MIN + 1, epoch_ms - 1] {
            let error = generator.next_id_at(before).unwrap_err();
            assert_eq!(
                (error.kind(), error.value()),
                (ErrorKind::OutOfRange, Some(before.to_string())),
                "epoch {epoch_ms}, reading {before}: {error}"
            );
            assert!(error.to_string().contains("before the epoch"), "{error}");
        }
        for after in [last + 1, i64::MAX] {
            let error = generator.next_id_at(after).unwrap_err();
            assert!(
                error.to_string().contains("past the last"),
                "epoch {epoch_ms}, reading {after}: {error}"
            );
        }
        for inside in [epoch_ms, last] {
            let id = generator
                .next_id_at(inside)
                .expect("a reading inside the layout");
            assert_eq!(layout.timestamp_ms(id), inside);
        }
        assert_eq!(generator.stats(), GeneratorStats::default());
    }
}

#[test]
fn coarse_and_fine_units_refuse_readings_outside_the_layout() {
    for unit in [Unit::MICROSECOND, Unit::TEN_MILLISECONDS, Unit::SECOND] {
        let layout = Layout::from_fields(
            1_000_000,
            unit,
            &[("time", Role::Time, 20), ("sequence", Role::Sequence, 4)],
        )
        .expect("valid layout");
        let generator = Generator::builder(layout, Node::default())
            .clock(ManualClock::new(0))
            .build()
            .expect("valid generator");
        for before in [i64::MIN, 0, 999_999] {
            let error = generator.next_id_at(before).unwrap_err();
            assert!(error.to_string().contains("before the epoch"), "{error}");
        }
        for before_us in [i64::MIN, 999_999_999] {
            let error = generator.next_id_at_us(before_us).unwrap_err();
            assert!(error.to_string().contains("before the epoch"), "{error}");
        }
        let last = layout.last_instant_ms();
        for after in [last + 1, i64::MAX] {
            let error = generator.next_id_at(after).unwrap_err();
            assert!(error.to_string().contains("past the last"), "{error}");
        }
        generator.next_id_at(last).expect("the last millisecond");
        let id = generator
            .next_id_at_us(layout.last_instant_us())
            .expect("the last microsecond");
        assert_eq!(layout.ticks_of(id), (1 << 20) - 1);
    }
}

#[test]
fn exhaustion_waits_for_a_clock_that_cannot_say_when_it_ticks() {
    // A hand-driven clock does not move while the wait spins: after the
    // spin limit it is polled in short sleeps until another thread moves
    // it.
    let clock = ManualClock::new(1_700_000_000_000);
    let generator = Generator::builder(Layout::TWITTER, Node::default())
        .clock(clock.clone())
        .build()
        .expect("valid generator");
    let mut ids = Vec::new();
    generator
        .next_ids(4096, &mut ids)
        .expect("one millisecond's worth");
    let ticker = thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        clock.advance(1);
    });
    let next = generator.next_id().expect("an ID once the clock moves");
    ticker.join().expect("ticker thread");
    assert_eq!(Layout::TWITTER.timestamp_ms(next), 1_700_000_000_001);
    assert_eq!(
        Layout::TWITTER.decode(next).unwrap().get("sequence"),
        Some(0)
    );
    assert_eq!(generator.stats().exhaustion_waits, 1);
}

#[test]
fn exhaustion_on_the_system_clock_moves_to_a_later_millisecond() {
    let generator = Generator::new(Layout::TWITTER, Node::default()).expect("valid");
    let mut ids = Vec::new();
    // Three milliseconds' worth: at least two waits for the next one.
    generator.next_ids(3 * 4096, &mut ids).expect("IDs");
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
    let last = Layout::TWITTER.timestamp_ms(ids[ids.len() - 1]);
    let first = Layout::TWITTER.timestamp_ms(ids[0]);
    assert!(last >= first + 2, "{first} .. {last}");
    assert!(last <= SystemClock.now_ms(), "no ID from the future");
}

#[test]
fn a_ten_millisecond_tick_holds_its_sequence_and_then_waits() {
    // Sonyflake: 256 IDs per 10 ms tick, the machine id below the sequence.
    let clock = ManualClock::new(1_700_000_000_003);
    let node = Layout::SONYFLAKE.node(&[513]).unwrap();
    let generator = Generator::builder(Layout::SONYFLAKE, node)
        .clock(clock.clone())
        .build()
        .expect("valid generator");
    let mut ids = Vec::new();
    generator.next_ids(256, &mut ids).expect("a tick's worth");
    assert!(
        ids.windows(2)
            .all(|w| w[1].as_u64() - w[0].as_u64() == 1 << 16)
    );
    for id in &ids {
        let parts = Layout::SONYFLAKE.decode(*id).unwrap();
        assert_eq!(parts.time_ms(), 1_700_000_000_000);
        assert_eq!(parts.get("machine"), Some(513));
    }
    assert_eq!(
        generator.try_next_id().unwrap_err().kind(),
        ErrorKind::SequenceExhausted
    );
    // Anywhere in the same tick is still the same tick.
    clock.advance(6);
    assert_eq!(
        generator.try_next_id().unwrap_err().retry_after(),
        Some(Duration::from_millis(10))
    );
    clock.advance(1);
    let next = generator.try_next_id().expect("the next tick");
    assert_eq!(Layout::SONYFLAKE.timestamp_ms(next), 1_700_000_000_010);
    // Back by less than a tick is not back at all; by a tick it is.
    clock.set(1_700_000_000_010);
    assert!(generator.try_next_id().is_ok());
    clock.set(1_700_000_000_009);
    let behind = generator.try_next_id().unwrap_err();
    assert_eq!(behind.kind(), ErrorKind::ClockBehind);
    let regression = behind.regression().unwrap();
    assert_eq!(
        (regression.last_ms, regression.now_ms),
        (1_700_000_000_010, 1_700_000_000_009)
    );
}

#[test]
fn a_microsecond_tick_reads_the_clock_in_microseconds() {
    let layout: Layout = "time:44/machine:4/sequence:4@1700000000000,1us"
        .parse()
        .unwrap();
    let clock = ManualClock::new(1_700_000_000_000);
    clock.advance_us(7);
    let generator = Generator::builder(layout, layout.node(&[3]).unwrap())
        .clock(clock.clone())
        .build()
        .expect("valid generator");
    let id = generator.next_id().unwrap();
    assert_eq!(layout.timestamp_us(id), 1_700_000_000_000_007);
    let mut ids = Vec::new();
    generator.next_ids(15, &mut ids).unwrap();
    assert_eq!(
        generator.try_next_id().unwrap_err().kind(),
        ErrorKind::SequenceExhausted
    );
    clock.advance_us(1);
    assert_eq!(
        layout.timestamp_us(generator.next_id().unwrap()),
        1_700_000_000_000_008
    );
}

#[test]
fn a_second_tick_counts_whole_seconds() {
    let node = Layout::BAIDU.node(&[4_000_000]).unwrap();
    let generator = Generator::builder(Layout::BAIDU, node)
        .clock(ManualClock::new(1_700_000_000_999))
        .build()
        .expect("valid generator");
    let id = generator.next_id().unwrap();
    let parts = Layout::BAIDU.decode(id).unwrap();
    assert_eq!(parts.time_ms(), 1_700_000_000_000);
    assert_eq!(parts.time().to_string(), "2023-11-14T22:13:20Z");
    assert_eq!(parts.get("worker_id"), Some(4_000_000));
    assert_eq!(Layout::BAIDU.ids_per_tick(), 8192);
}

#[test]
fn layouts_that_cannot_mint_are_refused() {
    for layout in [Layout::MASTODON, Layout::LINKEDIN, Layout::TIKTOK] {
        let error = Generator::new(layout, Node::default()).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidLayout, "{layout}");
        assert!(error.to_string().contains("cannot mint"), "{error}");
    }
    let upside_down: Layout = "sequence:12/time:41@0".parse().unwrap();
    assert!(
        Generator::new(upside_down, Node::default())
            .unwrap_err()
            .to_string()
            .contains("would not increase")
    );
}

proptest::proptest! {
    /// The mark a generator reports, given to a new generator as its resume
    /// point, skips every tick the first one used, whatever the unit: the
    /// first ID after a restart is above every ID before it.
    #[test]
    fn a_reported_mark_resumes_past_every_tick_used(
        unit_us in proptest::prop_oneof![
            proptest::strategy::Just(1u32),
            1u32..1000,
            proptest::strategy::Just(1000u32),
            1000u32..=1_000_000,
        ],
        start_us in 0i64..5_000_000,
        count in 1usize..300,
    ) {
        let unit = Unit::from_micros(unit_us).unwrap();
        let layout = Layout::from_fields(
            1_699_999_999_000,
            unit,
            &[("time", Role::Time, 40), ("machine", Role::Node, 3), ("sequence", Role::Sequence, 6)],
        ).unwrap();
        let node = layout.node(&[5]).unwrap();
        let clock = ManualClock::new(1_700_000_000_000);
        clock.advance_us(start_us);
        let first = Generator::builder(layout, node).clock(clock.clone()).build().unwrap();
        let mut before = Vec::new();
        for _ in 0..count {
            match first.try_next_id() {
                Ok(id) => before.push(id),
                Err(_) => clock.advance_us(i64::from(unit_us)),
            }
        }
        let mark = first.last_timestamp_ms().unwrap();
        let highest = *before.iter().max().unwrap();
        proptest::prop_assert!(layout.timestamp_ms(highest) <= mark);
        let second = Generator::builder(layout, node)
            .clock(clock.clone())
            .resume_after(mark)
            .build()
            .unwrap();
        // The clock may have to catch up with the mark: move it past.
        clock.set(mark + 2 + i64::from(unit_us / 1000));
        let after = second.next_id().unwrap();
        proptest::prop_assert!(after > highest, "{after:?} <= {highest:?}");
    }
}

#[test]
fn the_lead_is_what_borrowing_runs_ahead_and_never_past_the_bound() {
    // Sonyflake's 10 ms ticks, 256 IDs each, borrowing up to 35 ms: at most
    // 3 ticks ahead of the clock's (a 4th would be 40 ms ahead).
    let clock = ManualClock::new(1_700_000_000_000);
    let node = Layout::SONYFLAKE.node(&[1]).unwrap();
    let generator = Generator::builder(Layout::SONYFLAKE, node)
        .clock(clock.clone())
        .policy(ClockPolicy::Borrow {
            max_ahead: Duration::from_millis(35),
        })
        .build()
        .expect("valid generator");
    assert_eq!(generator.lead(), Duration::ZERO);
    let mut ids = Vec::new();
    generator.next_ids(256, &mut ids).expect("a tick's worth");
    // The tick is used up but the clock has not gone back: exhaustion, which
    // waits rather than borrows.
    assert_eq!(
        generator.try_next_id().unwrap_err().kind(),
        ErrorKind::SequenceExhausted
    );
    assert_eq!(generator.lead(), Duration::ZERO);
    assert_eq!(generator.stats().max_lead, Duration::ZERO);
    // Back one tick: every ID from here on is borrowed.
    clock.set(1_700_000_000_000 - 10);
    let mut borrowed = Vec::new();
    let refused = loop {
        match generator.next_id() {
            Ok(id) => borrowed.push(id),
            Err(error) => break error,
        }
    };
    assert_eq!(refused.kind(), ErrorKind::ClockBehind);
    // 256 each in the two ticks after the one used up, 20 and 30 ms ahead
    // of the clock's.
    assert_eq!(borrowed.len(), 2 * 256);
    let last = Layout::SONYFLAKE.timestamp_ms(*borrowed.last().unwrap());
    assert_eq!(last, 1_700_000_000_000 + 20);
    assert_eq!(generator.lead(), Duration::from_millis(30));
    assert_eq!(generator.stats().max_lead, Duration::from_millis(30));
    // The clock moves on: the lead now falls, the largest one stays.
    clock.set(1_700_000_000_015);
    assert_eq!(generator.lead(), Duration::from_millis(10));
    clock.set(1_700_000_000_025);
    assert_eq!(generator.lead(), Duration::ZERO);
    assert_eq!(generator.stats().max_lead, Duration::from_millis(30));
}

#[test]
fn a_lead_in_microsecond_ticks_keeps_its_fraction_of_a_millisecond() {
    let layout: Layout = "time:44/machine:4/sequence:4@1700000000000,1us"
        .parse()
        .unwrap();
    let clock = ManualClock::new(1_700_000_000_000);
    let generator = Generator::builder(layout, layout.node(&[3]).unwrap())
        .clock(clock.clone())
        .policy(ClockPolicy::Borrow {
            max_ahead: Duration::from_millis(1),
        })
        .build()
        .expect("valid generator");
    clock.advance_us(300);
    generator.next_id().unwrap();
    clock.advance_us(-250);
    generator.next_id().unwrap();
    assert_eq!(generator.lead(), Duration::from_micros(250));
    assert_eq!(generator.stats().max_lead, Duration::from_micros(250));
}

#[test]
fn refusing_and_waiting_never_lead() {
    let wait = ClockPolicy::Wait {
        max: Duration::from_millis(5),
    };
    for policy in [ClockPolicy::Refuse, wait] {
        let clock = ManualClock::new(1_700_000_000_000);
        let generator = Generator::builder(Layout::TWITTER, Node::default())
            .clock(clock.clone())
            .policy(policy)
            .build()
            .expect("valid generator");
        generator.next_ids(4096, &mut Vec::new()).unwrap();
        clock.set(1_700_000_000_000 - 10);
        assert_eq!(
            generator.try_next_id().unwrap_err().kind(),
            ErrorKind::ClockBehind
        );
        assert_eq!(generator.lead(), Duration::ZERO, "{policy:?}");
        clock.set(1_700_000_000_001);
        generator.next_ids(4096, &mut Vec::new()).unwrap();
        assert_eq!(generator.lead(), Duration::ZERO, "{policy:?}");
        assert_eq!(generator.stats().max_lead, Duration::ZERO, "{policy:?}");
    }
}
