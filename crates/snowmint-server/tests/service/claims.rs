//! How the issuer follows a slot source whose claim changes: new
//! generations, floors, deadlines, and the source's own record of the mark.
//!
//! The coordinated sources (etcd, ZooKeeper) are tested against the real
//! servers in `snowmint-fleet`; here a source driven by hand plays them, so
//! that each transition can be set up exactly.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use snowmint::{ClockPolicy, Layout, ManualClock, Node};
use snowmint_fleet::{BoxFuture, Claim, FleetError, MarkFile, NodeLock, NodeState, SlotSource};
use snowmint_server::{AppState, Issuer, IssuerOptions, app};
use snowmint_test_support::in_process::{Answer, get};
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::eventually;
use tokio::sync::watch;

const T: i64 = 1_700_000_000_000;

/// A slot source whose state the test sets, which records every `reserve`
/// and can be told to fail them.
struct HandSource {
    state: watch::Sender<NodeState>,
    reserved: Mutex<Vec<(u64, i64)>>,
    failing: Mutex<bool>,
}

impl HandSource {
    fn new(state: NodeState) -> Arc<HandSource> {
        Arc::new(HandSource {
            state: watch::Sender::new(state),
            reserved: Mutex::new(Vec::new()),
            failing: Mutex::new(false),
        })
    }

    fn reserved(&self) -> Vec<(u64, i64)> {
        self.reserved.lock().unwrap().clone()
    }
}

impl SlotSource for HandSource {
    fn kind(&self) -> &'static str {
        "hand"
    }

    fn state(&self) -> watch::Receiver<NodeState> {
        self.state.subscribe()
    }

    fn reserve(&self, generation: u64, mark_ms: i64) -> BoxFuture<'_, Result<(), FleetError>> {
        let result = if *self.failing.lock().unwrap() {
            Err(FleetError::Coordinator {
                coordinator: "hand://".to_owned(),
                message: "unreachable".to_owned(),
            })
        } else {
            self.reserved.lock().unwrap().push((generation, mark_ms));
            Ok(())
        };
        Box::pin(async move { result })
    }

    fn release(&self) -> BoxFuture<'_, ()> {
        self.state.send_replace(NodeState::Fenced {
            reason: "released".to_owned(),
        });
        Box::pin(async {})
    }
}

fn claim(slot: u64, generation: u64) -> Claim {
    Claim {
        slot,
        slots: 1,
        node: Layout::TWITTER.node_from_slot(slot).unwrap(),
        generation,
        valid_until: None,
        floor_ms: None,
        details: BTreeMap::new(),
    }
}

struct Setup {
    app: axum::Router,
    source: Arc<HandSource>,
    clock: ManualClock,
    dir: TempDir,
}

async fn setup(initial: NodeState) -> Setup {
    setup_with(initial, ClockPolicy::Refuse).await
}

async fn setup_with(initial: NodeState, clock_policy: ClockPolicy) -> Setup {
    let dir = temp_dir("claims");
    let clock = ManualClock::new(T);
    let source = HandSource::new(initial);
    let issuer = Issuer::start(
        Arc::clone(&source) as Arc<dyn SlotSource>,
        IssuerOptions {
            layout: Layout::TWITTER,
            clock_policy,
            clock: Arc::new(clock.clone()),
            state_dir: dir.path().to_owned(),
            mark_step: Duration::from_secs(1),
        },
    )
    .await
    .unwrap();
    Setup {
        app: app(AppState::new(issuer)),
        source,
        clock,
        dir,
    }
}

async fn id(app: &axum::Router) -> u64 {
    let answer = get(app, "/v1/id").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    answer.json()["id"].as_str().unwrap().parse().unwrap()
}

fn parts(id: u64) -> (i64, Node) {
    let id = snowmint::SnowflakeId::from_u64(id);
    (
        Layout::TWITTER.timestamp_ms(id),
        Layout::TWITTER.node_of(id),
    )
}

/// Waits until the issuer has taken up the claim of `generation` (the
/// source's state shows it at once; the issuer builds its generator just
/// after, answering `not_ready` meanwhile).
async fn until_generation(app: &axum::Router, generation: u64) {
    let what = format!("the issuer to take up generation {generation}");
    eventually(&what, Duration::from_secs(60), || async {
        let node = get(app, "/v1/node").await.json();
        let ready = get(app, "/readyz").await;
        let setting_up =
            ready.status != StatusCode::OK && ready.json()["error"]["code"] == "not_ready";
        (node["generation"] == generation && !setting_up).then_some(())
    })
    .await;
}

/// The source records the mark, under the claim's generation, before the
/// ID goes out; a source that cannot record it stops IDs.
#[tokio::test]
async fn the_source_records_the_mark_before_ids_go_out() {
    let s = setup(NodeState::Active(claim(5, 1))).await;
    let first = id(&s.app).await;
    let reserved = s.source.reserved();
    assert_eq!(reserved.len(), 1);
    assert_eq!(reserved[0].0, 1);
    assert!(reserved[0].1 >= parts(first).0);
    assert_eq!(parts(first).1, Node::from_slot(5));

    // Past the reserved mark, with the source failing: refused.
    *s.source.failing.lock().unwrap() = true;
    s.clock.set(reserved[0].1 + 1);
    let answer = get(&s.app, "/v1/id").await;
    let (code, _, message) = answer.error(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(code, "mark_unwritable");
    assert!(message.contains("hand://: unreachable"), "{message}");
    *s.source.failing.lock().unwrap() = false;
    assert!(id(&s.app).await > first);
}

/// A claim past its deadline issues nothing, even before the source says
/// so.
#[tokio::test]
async fn a_claim_past_its_deadline_is_fenced() {
    let mut expiring = claim(5, 1);
    expiring.valid_until = Some(Instant::now() + Duration::from_millis(200));
    let s = setup(NodeState::Active(expiring)).await;
    id(&s.app).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let answer = get(&s.app, "/v1/id").await;
    let (code, _, message) = answer.error(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(code, "no_claim");
    assert!(message.contains("deadline"), "{message}");
    assert_eq!(
        get(&s.app, "/readyz").await.status,
        StatusCode::SERVICE_UNAVAILABLE
    );
}

/// A new claim on another slot issues as that node; one with a floor
/// issues nothing at or below the floor.
#[tokio::test]
async fn new_claims_get_new_generators() {
    let s = setup(NodeState::Fenced {
        reason: "starting".to_owned(),
    })
    .await;
    let answer = get(&s.app, "/v1/id").await;
    assert_eq!(answer.error(StatusCode::SERVICE_UNAVAILABLE).0, "no_claim");

    s.source.state.send_replace(NodeState::Active(claim(40, 1)));
    until_generation(&s.app, 1).await;
    let a = id(&s.app).await;
    assert_eq!(parts(a).1, Node::from_slot(40));

    // Lost, then another slot whose earlier holder left a floor ahead.
    s.source.state.send_replace(NodeState::Fenced {
        reason: "lease lost".to_owned(),
    });
    let answer = get(&s.app, "/v1/id").await;
    let (code, _, message) = answer.error(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        (code.as_str(), message.contains("lease lost")),
        ("no_claim", true)
    );
    let mut taken_over = claim(41, 2);
    taken_over.floor_ms = Some(T + 500);
    s.source.state.send_replace(NodeState::Active(taken_over));
    until_generation(&s.app, 2).await;
    let answer = get(&s.app, "/v1/id").await;
    assert_eq!(
        answer.error(StatusCode::SERVICE_UNAVAILABLE).0,
        "clock_behind"
    );
    s.clock.set(T + 501);
    let b = id(&s.app).await;
    assert_eq!(parts(b), (T + 501, Node::from_slot(41)));
    assert!(
        s.source
            .reserved()
            .iter()
            .any(|&(g, mark)| g == 2 && mark >= T + 501)
    );
}

/// The same slot claimed again (a new generation), with nobody else having
/// issued on it, goes on from the last ID at once: the generator is kept,
/// so even an ID of the earlier claim cannot repeat.
#[tokio::test]
async fn reclaiming_the_same_slot_goes_on_from_the_last_id() {
    let s = setup(NodeState::Active(claim(5, 1))).await;
    let before = id(&s.app).await;
    let mark = s.source.reserved()[0].1;
    assert!(mark > parts(before).0, "the mark is reserved ahead");
    let mut again = claim(5, 2);
    // The slot's floor is the mark this node recorded itself.
    again.floor_ms = Some(mark);
    s.source.state.send_replace(NodeState::Active(again));
    until_generation(&s.app, 2).await;
    // The clock has not moved, and still no refusal.
    let after = id(&s.app).await;
    assert!(after > before);
    assert_eq!(parts(after).0, parts(before).0);
    // The new claim records its own mark before its first ID goes out.
    assert!(s.source.reserved().iter().any(|&(g, _)| g == 2));
}

/// The same slot claimed again after another node issued on it (the floor
/// is above this node's mark): a fresh generator, after the floor.
#[tokio::test]
async fn reclaiming_a_slot_someone_else_used_resumes_after_the_floor() {
    let s = setup(NodeState::Active(claim(5, 1))).await;
    let before = id(&s.app).await;
    let mark = s.source.reserved()[0].1;
    let mut again = claim(5, 2);
    again.floor_ms = Some(mark + 300);
    s.source.state.send_replace(NodeState::Active(again));
    until_generation(&s.app, 2).await;
    let answer = get(&s.app, "/v1/id").await;
    assert_eq!(
        answer.error(StatusCode::SERVICE_UNAVAILABLE).0,
        "clock_behind"
    );
    s.clock.set(mark + 301);
    let after = id(&s.app).await;
    assert!(after > before);
    assert_eq!(parts(after).0, mark + 301);
}

/// A slot taken back after holding another one in between: a fresh
/// generator, which resumes after the mark the node recorded for it.
#[tokio::test]
async fn returning_to_a_slot_resumes_after_its_mark() {
    let s = setup(NodeState::Active(claim(5, 1))).await;
    let before = id(&s.app).await;
    let mark = MarkFile::for_node(s.dir.path(), Layout::TWITTER, Node::from_slot(5))
        .read()
        .unwrap()
        .unwrap();
    s.source.state.send_replace(NodeState::Active(claim(6, 2)));
    until_generation(&s.app, 2).await;
    id(&s.app).await;
    s.source.state.send_replace(NodeState::Active(claim(5, 3)));
    until_generation(&s.app, 3).await;
    // The clock has not moved: the new generator waits for the mark.
    let answer = get(&s.app, "/v1/id").await;
    assert_eq!(
        answer.error(StatusCode::SERVICE_UNAVAILABLE).0,
        "clock_behind"
    );
    s.clock.set(mark + 1);
    let after = id(&s.app).await;
    assert!(after > before);
    assert_eq!(parts(after).0, mark + 1);
}

/// The value of the metric line `name` (no labels) in `/metrics`.
async fn metric(app: &axum::Router, name: &str) -> f64 {
    let text = get(app, "/metrics").await.body;
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
        .parse()
        .unwrap()
}

/// Under `wait`, with the clock set back: starts an ID request, which
/// waits for the clock, and returns once the generator has refused it at
/// least once (the request is in its wait).
async fn request_waiting_for_the_clock(s: &Setup) -> tokio::task::JoinHandle<Answer> {
    let first = id(&s.app).await;
    s.clock.set(parts(first).0 - 2_000);
    let before = metric(&s.app, "snowmint_clock_regressions_total").await;
    let app = s.app.clone();
    let request = tokio::spawn(async move { get(&app, "/v1/id").await });
    let deadline = Instant::now() + Duration::from_secs(30);
    while metric(&s.app, "snowmint_clock_regressions_total").await <= before {
        assert!(
            Instant::now() < deadline,
            "the request did not meet the clock behind within 30 s"
        );
        assert!(!request.is_finished(), "the request did not wait");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    request
}

/// Its answer, within 30 s.
async fn answer_of(request: tokio::task::JoinHandle<Answer>) -> Answer {
    tokio::time::timeout(Duration::from_secs(30), request)
        .await
        .expect("the waiting request did not end within 30 s after the clock caught up")
        .unwrap()
}

const WAIT: ClockPolicy = ClockPolicy::Wait {
    max: Duration::from_secs(10),
};

/// A request waiting for the clock (`--clock-policy wait`) whose claim
/// passes its deadline meanwhile takes no ID when the clock catches up.
#[tokio::test]
async fn a_claim_that_expires_during_a_clock_wait_issues_nothing() {
    let s = setup_with(NodeState::Active(claim(5, 1)), WAIT).await;
    let request = request_waiting_for_the_clock(&s).await;
    // The same claim, now past its deadline (as a reader sees a claim whose
    // keep-alive never came).
    let mut expired = claim(5, 1);
    expired.valid_until = Some(Instant::now());
    s.source.state.send_replace(NodeState::Active(expired));
    s.clock.set(T + 1);
    let answer = answer_of(request).await;
    let (code, _, message) = answer.error(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(code, "no_claim");
    assert!(message.contains("deadline"), "{message}");
}

/// A request waiting for the clock whose claim is replaced by one on
/// another slot takes no ID of the old slot when the clock catches up.
#[tokio::test]
async fn a_claim_replaced_during_a_clock_wait_issues_nothing() {
    let s = setup_with(NodeState::Active(claim(5, 1)), WAIT).await;
    let request = request_waiting_for_the_clock(&s).await;
    s.source.state.send_replace(NodeState::Active(claim(6, 2)));
    until_generation(&s.app, 2).await;
    s.clock.set(T + 1);
    let answer = answer_of(request).await;
    let (code, _, message) = answer.error(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(code, "not_ready");
    assert!(message.contains("changed"), "{message}");
    // The new claim issues as its own node.
    let after = id(&s.app).await;
    assert_eq!(parts(after).1, Node::from_slot(6));
}

/// A claim whose node another holder on this host has locked is not used:
/// not ready, naming the holder; as soon as the lock is free the claim
/// issues. A fenced node lets its lock go.
#[tokio::test]
async fn a_claim_on_a_node_locked_elsewhere_waits_for_the_lock() {
    let s = setup(NodeState::Fenced {
        reason: "starting".to_owned(),
    })
    .await;
    let node = Layout::TWITTER.node_from_slot(5).unwrap();
    let file = MarkFile::for_node(s.dir.path(), Layout::TWITTER, node);
    // Another holder: a lock of its own, as another process would take.
    let other = NodeLock::acquire(&file).unwrap();
    file.write(T + 300).unwrap();
    s.source.state.send_replace(NodeState::Active(claim(5, 1)));
    let deadline = Instant::now() + Duration::from_secs(30);
    let message = loop {
        let ready = get(&s.app, "/readyz").await;
        if ready.status != StatusCode::OK {
            let (code, _, message) = ready.error(StatusCode::SERVICE_UNAVAILABLE);
            if code == "not_ready" && message.contains("lock") {
                break message;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the locked node never said so: {}",
            ready.body
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    for part in [
        format!("process {}", std::process::id()),
        "datacenter 0 machine 5".to_owned(),
        s.dir.path().display().to_string(),
        "trying again".to_owned(),
    ] {
        assert!(message.contains(&part), "{part:?} is missing: {message}");
    }
    let answer = get(&s.app, "/v1/id").await;
    assert_eq!(answer.error(StatusCode::SERVICE_UNAVAILABLE).2, message);

    // The other holder lets go: the claim issues, after the mark it left.
    drop(other);
    s.clock.set(T + 301);
    let deadline = Instant::now() + Duration::from_secs(30);
    let first: u64 = loop {
        let answer = get(&s.app, "/v1/id").await;
        if answer.status == StatusCode::OK {
            break answer.json()["id"].as_str().unwrap().parse().unwrap();
        }
        assert_eq!(answer.error(StatusCode::SERVICE_UNAVAILABLE).0, "not_ready");
        assert!(
            Instant::now() < deadline,
            "the claim never issued after the lock was freed: {}",
            answer.body
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(parts(first), (T + 301, node));
    assert!(matches!(
        NodeLock::acquire(&file),
        Err(FleetError::NodeLocked { .. })
    ));

    // Fenced: the node's lock is free for another holder.
    s.source.state.send_replace(NodeState::Fenced {
        reason: "lease lost".to_owned(),
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let _next = loop {
        match NodeLock::acquire(&file) {
            Ok(lock) => break lock,
            Err(error) => assert!(
                Instant::now() < deadline,
                "the fenced node kept its lock: {error}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert_eq!(
        get(&s.app, "/v1/id")
            .await
            .error(StatusCode::SERVICE_UNAVAILABLE)
            .0,
        "no_claim"
    );
}

/// A source that cannot record the mark makes the node not ready; the
/// probe tries again and the node is ready once the source records it.
#[tokio::test]
async fn a_source_that_cannot_record_the_mark_is_not_ready() {
    let s = setup(NodeState::Active(claim(5, 1))).await;
    id(&s.app).await;
    let reserved = s.source.reserved()[0].1;
    *s.source.failing.lock().unwrap() = true;
    s.clock.set(reserved + 1);
    let answer = get(&s.app, "/v1/id").await;
    assert_eq!(
        answer.error(StatusCode::SERVICE_UNAVAILABLE).0,
        "mark_unwritable"
    );
    let ready = get(&s.app, "/readyz").await;
    let (code, _, message) = ready.error(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(code, "mark_unwritable");
    assert!(message.contains("hand://: unreachable"), "{message}");
    let node = get(&s.app, "/v1/node").await.json();
    assert_eq!(node["ready"], false, "{node}");

    *s.source.failing.lock().unwrap() = false;
    assert_eq!(get(&s.app, "/readyz").await.status, StatusCode::OK);
    assert!(
        s.source
            .reserved()
            .iter()
            .any(|&(g, mark)| g == 1 && mark > reserved + 1),
        "the probe recorded the mark with the source"
    );
}

/// The same slot claimed back after a fence, while another holder on this
/// host issued as the node in between (its mark in the state file is above
/// this node's): not a continuation, but a fresh generator after that mark,
/// even though the slot's floor is still this node's own.
#[tokio::test]
async fn a_node_used_by_another_holder_while_fenced_resumes_after_its_mark() {
    let s = setup(NodeState::Active(claim(5, 1))).await;
    let before = id(&s.app).await;
    let mark = s.source.reserved()[0].1;
    s.source.state.send_replace(NodeState::Fenced {
        reason: "lease lost".to_owned(),
    });
    let node = Layout::TWITTER.node_from_slot(5).unwrap();
    let file = MarkFile::for_node(s.dir.path(), Layout::TWITTER, node);
    let deadline = Instant::now() + Duration::from_secs(30);
    let other = loop {
        if let Ok(lock) = NodeLock::acquire(&file) {
            break lock;
        }
        assert!(Instant::now() < deadline, "the fenced node kept its lock");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    file.write(mark + 5_000).unwrap();
    drop(other);

    let mut again = claim(5, 2);
    again.floor_ms = Some(mark);
    s.source.state.send_replace(NodeState::Active(again));
    until_generation(&s.app, 2).await;
    let answer = get(&s.app, "/v1/id").await;
    assert_eq!(
        answer.error(StatusCode::SERVICE_UNAVAILABLE).0,
        "clock_behind"
    );
    s.clock.set(mark + 5_001);
    let after = id(&s.app).await;
    assert!(after > before);
    assert_eq!(parts(after).0, mark + 5_001);
}
