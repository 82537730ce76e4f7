//! A clock that goes back while a call waits out a used-up millisecond is
//! a clock behind like any other: the policy decides, and the call does not
//! sleep the whole step back off. (Found by the command line's error-kind
//! test: a clock set back an hour during such a wait held `generate` for
//! the hour.)

use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use snowmint::{ClockPolicy, Error, Generator, Layout, ManualClock, Node};

const T: i64 = 1_700_000_000_000;

/// A bound against hangs, far above what the call needs; not a timing
/// assertion.
const LIMIT: Duration = Duration::from_secs(60);

/// Uses up millisecond T, then calls `next_id` on another thread, which
/// waits for T + 1; meanwhile the clock is set `back_ms` behind T.
fn next_id_after_a_step_back(policy: ClockPolicy, back_ms: i64) -> Result<i64, Error> {
    let clock = ManualClock::new(T);
    let generator = Generator::builder(Layout::TWITTER, Node::default())
        .clock(clock.clone())
        .policy(policy)
        .build()
        .unwrap();
    generator.next_ids(4096, &mut Vec::new()).unwrap();
    let generator = Arc::new(generator);
    let (sender, receiver) = mpsc::channel();
    let caller = Arc::clone(&generator);
    thread::spawn(move || {
        let taken = caller.next_id().map(|id| Layout::TWITTER.timestamp_ms(id));
        let _ = sender.send(taken);
    });
    // Step back only once the call is inside its wait, or it would simply
    // see the clock behind.
    let started = Instant::now();
    while generator.stats().exhaustion_waits == 0 {
        assert!(started.elapsed() < LIMIT, "the call never waited");
        thread::sleep(Duration::from_millis(1));
    }
    clock.set(T - back_ms);
    receiver
        .recv_timeout(LIMIT)
        .expect("the call kept waiting after the clock went back")
}

/// Refused, with both times: not slept off.
#[test]
fn refuse_refuses_a_step_back_during_the_wait() {
    match next_id_after_a_step_back(ClockPolicy::Refuse, 3_600_000) {
        Err(error) if error.regression().is_some() => {
            let regression = error.regression().unwrap();
            assert_eq!((regression.last_ms, regression.now_ms), (T, T - 3_600_000));
        }
        other => panic!("expected ClockBehind, got {other:?}"),
    }
}

/// Borrowed from, within the bound: the next ID comes at once, after T.
#[test]
fn borrow_goes_on_after_a_small_step_back_during_the_wait() {
    let policy = ClockPolicy::Borrow {
        max_ahead: Duration::from_secs(5),
    };
    assert_eq!(next_id_after_a_step_back(policy, 1_000).unwrap(), T + 1);
}
