//! Model-checks the generator's compare-and-swap loop under every thread
//! interleaving loom can produce (run with `RUSTFLAGS="--cfg loom"`; see
//! `scripts/test`).
#![cfg(loom)]

use std::collections::HashSet;

use loom::sync::Arc;
use loom::thread;
use snowmint::{Error, ErrorKind, Generator, Layout, SnowflakeId};

/// A layout with a 2-bit sequence, so that a millisecond fills up after 4 IDs
/// and the model reaches exhaustion with few steps.
fn tiny_layout() -> Layout {
    Layout::twitter_shape(0, [49, 6, 6, 2]).expect("valid layout")
}

fn generator() -> Arc<Generator<snowmint::ManualClock>> {
    Arc::new(
        Generator::builder(tiny_layout(), tiny_layout().node(&[1, 0]).expect("a node"))
            .clock(snowmint::ManualClock::new(0))
            .build()
            .expect("valid generator"),
    )
}

/// Each thread asks for IDs at its own sequence of clock readings.
fn run(times: [&'static [i64]; 2]) -> Vec<Vec<Result<SnowflakeId, Error>>> {
    let generator = generator();
    let handles: Vec<_> = times
        .into_iter()
        .map(|times| {
            let generator = Arc::clone(&generator);
            thread::spawn(move || {
                times
                    .iter()
                    .map(|&t| generator.next_id_at(t))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect()
}

fn check(results: &[Vec<Result<SnowflakeId, Error>>], times: [&[i64]; 2]) {
    let mut seen = HashSet::new();
    for (thread, results) in results.iter().enumerate() {
        let mut last = None;
        for (result, &t) in results.iter().zip(times[thread]) {
            match result {
                Ok(id) => {
                    assert!(seen.insert(*id), "{id:?} issued twice");
                    assert!(last < Some(*id), "thread {thread}: {id:?} after {last:?}");
                    assert_eq!(
                        tiny_layout().timestamp_ms(*id),
                        t,
                        "ID carries the clock reading"
                    );
                    last = Some(*id);
                }
                // Another thread may legitimately have moved to a later
                // millisecond, or filled this one.
                Err(error) if error.kind() == ErrorKind::ClockBehind => {
                    let regression = error.regression().expect("both times");
                    assert!(regression.last_ms > regression.now_ms);
                }
                Err(error) if error.kind() == ErrorKind::SequenceExhausted => {}
                Err(other) => panic!("unexpected error {other}"),
            }
        }
    }
}

#[test]
fn same_millisecond_ids_are_unique_and_fill_the_sequence_exactly() {
    const A: &[i64] = &[5, 5, 5];
    const B: &[i64] = &[5, 5, 5];
    loom::model(|| {
        let results = run([A, B]);
        check(&results, [A, B]);
        let ok = results.iter().flatten().filter(|r| r.is_ok()).count();
        let exhausted = results
            .iter()
            .flatten()
            .filter(|r| {
                r.as_ref()
                    .is_err_and(|e| e.kind() == ErrorKind::SequenceExhausted)
            })
            .count();
        // Six requests for a 4-ID millisecond: exactly 4 succeed.
        assert_eq!((ok, exhausted), (4, 2));
    });
}

#[test]
fn threads_with_different_clock_readings_never_collide() {
    const A: &[i64] = &[5, 6, 6];
    const B: &[i64] = &[5, 5, 7];
    loom::model(|| {
        let results = run([A, B]);
        check(&results, [A, B]);
    });
}

#[test]
fn batch_runs_do_not_overlap() {
    loom::model(|| {
        let generator = generator();
        let other = Arc::clone(&generator);
        let handle = thread::spawn(move || other.next_run(3).map(|run| run.collect::<Vec<_>>()));
        let mine = generator.next_id_at(0);
        let theirs = handle.join().expect("thread");
        // The manual clock reads 0 for next_run; next_id_at uses 0 as well.
        let mut all: Vec<SnowflakeId> = theirs.into_iter().flatten().collect();
        all.extend(mine);
        let unique: HashSet<_> = all.iter().collect();
        assert_eq!(unique.len(), all.len(), "overlap in {all:?}");
        assert!(all.len() <= 4);
    });
}

/// Two generators, each built by its own thread over one shared word (as
/// the backends of a PostgreSQL server build theirs), one of them with a
/// resume point: they issue as one generator.
#[test]
fn generators_over_one_word_issue_as_one() {
    const A: &[i64] = &[5, 5, 6];
    const B: &[i64] = &[5, 6, 6];
    loom::model(|| {
        let word = Arc::new(loom::sync::atomic::AtomicU64::new(0));
        let handles: Vec<_> = [(A, None), (B, Some(4))]
            .into_iter()
            .map(|(times, resume)| {
                let word = Arc::clone(&word);
                thread::spawn(move || {
                    let mut builder = Generator::builder(
                        tiny_layout(),
                        tiny_layout().node(&[1, 0]).expect("a node"),
                    )
                    .clock(snowmint::ManualClock::new(0));
                    if let Some(last_ms) = resume {
                        builder = builder.resume_after(last_ms);
                    }
                    let generator = builder.build_on(word).expect("valid generator");
                    times
                        .iter()
                        .map(|&t| generator.next_id_at(t))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect();
        check(&results, [A, B]);
    });
}
