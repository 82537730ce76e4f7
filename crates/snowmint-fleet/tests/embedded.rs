//! The embedded issuer on a node given explicitly: the host lock, the
//! durable mark across restarts, and what a synchronous call does when it
//! must wait, on every kind of thread (outside a runtime, in a
//! current-thread runtime, in a multi-threaded one). The coordinated
//! cases run against real servers in `embedded_fleet.rs`.

use std::thread;
use std::time::Duration;

use snowmint::{Clock, ClockPolicy, Layout, ManualClock, Node};
use snowmint_fleet::{EmbeddedIssuer, FleetError, IssuerBuilder, NodeState, Refusal};

/// The first instant of the tests' manual clocks.
const T0: i64 = 1_700_000_000_000;

fn builder(dir: &tempfile::TempDir, clock: &ManualClock) -> IssuerBuilder {
    EmbeddedIssuer::builder()
        .node(1, 2)
        .state_dir(dir.path())
        .clock(clock.clone())
}

/// A second issuer of the node on the same state directory is refused
/// with the holder named; after a shutdown the next one resumes above the
/// mark, even with its clock back where the first one started.
#[test]
fn one_issuer_per_node_and_a_restart_resumes_above_the_mark() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let first = builder(&dir, &clock).start_blocking().unwrap();
    // At most a millisecond's IDs: the manual clock does not move.
    let mut ids = first.next_ids(4_000).unwrap();
    ids.push(first.next_id().unwrap());
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(Layout::TWITTER.node_of(ids[0]), Node::from_slot(34));

    let refused = builder(&dir, &clock).start_blocking().unwrap_err();
    let message = refused.to_string();
    assert!(
        matches!(refused, FleetError::NodeLocked { pid: Some(pid), .. } if pid == std::process::id()),
        "{message}"
    );
    assert!(message.contains("node-dc1-m2.lock"), "{message}");

    first.shutdown();
    // The mark on disk is a step (1 s) ahead of the clock: the restart
    // waits that out (on the real clock, at most mark_wait_max), and the
    // manual clock, left behind, is refused until it passes the mark (so
    // the start does not wait to be ready: it cannot be before that).
    let second = builder(&dir, &clock)
        .wait_for_claim(Duration::ZERO)
        .start_blocking()
        .unwrap();
    let refusal = second.next_id().unwrap_err();
    assert_eq!(refusal.code(), "clock_behind", "{refusal}");
    assert!(
        refusal.retry_after() > Duration::from_millis(900),
        "{refusal:?}"
    );
    clock.advance(1_001);
    let after = second.next_id().unwrap();
    assert!(after > *ids.last().unwrap());
    assert!(Layout::TWITTER.timestamp_ms(after) > T0 + 1_000);
    second.shutdown();

    // A clock set back further than mark_wait_max: the start is refused,
    // naming both times.
    clock.set(T0 - 5_000);
    let err = builder(&dir, &clock).start_blocking().unwrap_err();
    assert!(matches!(err, FleetError::MarkAhead { .. }), "{err}");
    assert!(
        err.to_string().contains("2023-11-14T22:13:15.000Z"),
        "{err}"
    );
}

/// Inside a current-thread runtime that also runs the issuer, an ID past
/// the reserved mark is refused with `would_block` at once (waiting would
/// stop the runtime that writes the mark), and issued once the write,
/// started in the background, is done.
#[test]
fn a_current_thread_runtime_is_never_blocked() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let issuer = builder(&dir, &clock)
            .mark_step(Duration::from_millis(10))
            .start()
            .await
            .unwrap();
        // Reserved when the claim was taken: the first ID waits for nothing.
        let first = issuer.next_id().unwrap();
        clock.advance(50);
        let refusal = issuer.next_id().unwrap_err();
        assert!(matches!(refusal, Refusal::WouldBlock { .. }), "{refusal}");
        assert!(refusal.retry_after() < Duration::from_secs(1));
        // The write runs as soon as this task lets the runtime go on.
        let mut next = None;
        for _ in 0..1000 {
            tokio::time::sleep(Duration::from_millis(5)).await;
            if let Ok(id) = issuer.next_id() {
                next = Some(id);
                break;
            }
        }
        let next = next.expect("the mark was written in the background");
        assert!(next > first);
        assert_eq!(Layout::TWITTER.timestamp_ms(next), T0 + 50);
        issuer.shutdown_async().await;
    });
}

/// An issuer with its own runtime thread writes the mark there, so a
/// caller in its own current-thread runtime just waits for it.
#[test]
fn an_own_runtime_thread_serves_a_current_thread_caller() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let issuer = builder(&dir, &clock)
        .mark_step(Duration::from_millis(10))
        .start_blocking()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let first = issuer.next_id().unwrap();
    runtime.block_on(async {
        clock.advance(1_000);
        let id = issuer.next_id().expect("waited for the mark");
        assert!(id > first);
        let batch = issuer.next_ids(3_000).expect("issued under the mark");
        assert!(batch[0] > id);
    });
    let on_disk = std::fs::read_to_string(dir.path().join("node-dc1-m2.mark")).unwrap();
    assert!(
        on_disk.contains(&format!("high_water_ms = {}", T0 + 1_010)),
        "{on_disk}"
    );
    issuer.shutdown();
}

/// On a worker of a multi-threaded runtime, even with one worker, a
/// synchronous call waits for the mark in place, while the write runs.
#[test]
fn a_multi_thread_worker_waits_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let handle = clock.clone();
    runtime.block_on(async move {
        let issuer = builder(&dir, &handle)
            .mark_step(Duration::from_millis(10))
            .start()
            .await
            .unwrap();
        let issuer = tokio::spawn(async move {
            let first = issuer.next_id().unwrap();
            handle.advance(100);
            let next = issuer.next_id().expect("waited for the mark in place");
            assert!(next > first);
            issuer
        })
        .await
        .unwrap();
        issuer.shutdown_async().await;
    });
}

/// Under the `wait` policy a clock set back a little is waited out
/// (outside a runtime), under `refuse` it is refused with the gap as
/// retry-after.
#[test]
fn the_clock_policy_decides_between_waiting_and_refusing() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let waiting = builder(&dir, &clock)
        .clock_policy(ClockPolicy::Wait {
            max: Duration::from_secs(5),
        })
        .start_blocking()
        .unwrap();
    let before = waiting.next_id().unwrap();
    clock.set(T0 - 300);
    let mover = clock.clone();
    let moved = thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        mover.set(T0 + 1);
    });
    let after = waiting.next_id().expect("waited for the clock");
    moved.join().unwrap();
    assert!(after > before);
    assert_eq!(Layout::TWITTER.timestamp_ms(after), T0 + 1);
    waiting.shutdown();

    let clock = ManualClock::new(T0 + 2_000);
    let refusing = builder(&dir, &clock).start_blocking().unwrap();
    let last = refusing.next_id().unwrap();
    clock.set(clock.now_ms() - 250);
    match refusing.next_id() {
        Err(refusal @ Refusal::ClockBehind { .. }) => {
            assert_eq!(refusal.retry_after(), Duration::from_millis(251));
        }
        other => panic!("{other:?}"),
    }
    clock.advance(251);
    assert!(refusing.next_id().unwrap() > last);
    refusing.shutdown();
}

/// A handle abandoned (as a forked child does) releases nothing: the node
/// stays locked by this process; a handle dropped releases it.
#[test]
fn abandon_releases_nothing_and_drop_releases_everything() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let dropped = builder(&dir, &clock).start_blocking().unwrap();
    assert!(matches!(dropped.state(), NodeState::Active(_)));
    assert_eq!(dropped.node(), Some(Node::from_slot(34)));
    dropped.next_id().unwrap();
    drop(dropped);
    clock.advance(2_000);
    let abandoned = builder(&dir, &clock).start_blocking().unwrap();
    abandoned.next_id().unwrap();
    abandoned.abandon();
    let err = builder(&dir, &clock).start_blocking().unwrap_err();
    assert!(matches!(err, FleetError::NodeLocked { .. }), "{err}");
}

/// Settings are checked at the start, each error naming the value and
/// what is accepted.
#[test]
fn settings_are_checked_at_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let start = |b: IssuerBuilder| {
        b.state_dir(dir.path())
            .start_blocking()
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        start(EmbeddedIssuer::builder()),
        "no node was given: call .node(datacenter, machine), .hostname_ordinal() or .coordinator(url, fleet)"
    );
    assert_eq!(
        start(EmbeddedIssuer::builder().node(0, 32)),
        "machine 32 is out of range (0..=31)"
    );
    assert_eq!(
        start(EmbeddedIssuer::builder().node(0, 0).slots(0..=3)),
        "slots and claim_ttl apply to a coordinated node only: call .coordinator(url, fleet) too, or leave them out"
    );
    assert!(
        start(EmbeddedIssuer::builder().hostname("web")).starts_with("hostname \"web\": "),
        "{}",
        start(EmbeddedIssuer::builder().hostname("web"))
    );
    assert!(
        start(EmbeddedIssuer::builder().coordinator("http://x:1", "ids"))
            .starts_with("coordinator URL \"http://x:1\" is invalid"),
    );
    assert_eq!(
        start(
            EmbeddedIssuer::builder()
                .coordinator("etcd://127.0.0.1:1", "ids")
                .claim_ttl(Duration::from_millis(500))
        ),
        "claim_ttl 500ms is out of range (1s..=1h)"
    );
    assert_eq!(
        start(EmbeddedIssuer::builder().coordinator("etcd://127.0.0.1:1", "a/b"))
            .split(" is invalid")
            .next(),
        Some("fleet name \"a/b\"")
    );
    assert_eq!(
        start(
            EmbeddedIssuer::builder()
                .node(0, 0)
                .mark_step(Duration::from_secs(3))
        ),
        "mark_step 3s is longer than mark_wait_max 2s: a node killed and restarted at once would refuse to start"
    );
    // Settings that do not go together are typed, for programs to match.
    let error = EmbeddedIssuer::builder()
        .node(0, 0)
        .mark_step(Duration::from_secs(3))
        .state_dir(dir.path())
        .start_blocking()
        .unwrap_err();
    assert!(
        matches!(
            error,
            snowmint_fleet::FleetError::Setting(snowmint_fleet::SettingError::MarkStepAboveWait {
                mark_step,
                mark_wait_max,
            }) if mark_step == Duration::from_secs(3) && mark_wait_max == Duration::from_secs(2)
        ),
        "{error:?}"
    );
    let error = EmbeddedIssuer::builder()
        .state_dir(dir.path())
        .start_blocking()
        .unwrap_err();
    assert!(
        matches!(
            error,
            snowmint_fleet::FleetError::Setting(snowmint_fleet::SettingError::NoNode)
        ),
        "{error:?}"
    );
}
