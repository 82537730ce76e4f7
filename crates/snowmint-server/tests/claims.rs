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
use snowmint_fleet::{BoxFuture, Claim, FleetError, MarkFile, NodeState, SlotSource};
use snowmint_server::{AppState, Issuer, IssuerOptions, app};
use snowmint_test_support::server::get;
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
    let dir = temp_dir("claims");
    let clock = ManualClock::new(T);
    let source = HandSource::new(initial);
    let issuer = Issuer::start(
        Arc::clone(&source) as Arc<dyn SlotSource>,
        IssuerOptions {
            layout: Layout::TWITTER,
            clock_policy: ClockPolicy::Refuse,
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
    let parts = Layout::TWITTER.decode(snowmint::SnowflakeId::from_u64(id).unwrap());
    (
        parts.timestamp_ms,
        Node {
            datacenter: parts.datacenter,
            machine: parts.machine,
        },
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
    assert_eq!(
        parts(first).1,
        Node {
            datacenter: 0,
            machine: 5
        }
    );

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
    assert_eq!(
        parts(a).1,
        Node {
            datacenter: 1,
            machine: 8
        }
    );

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
    assert_eq!(
        parts(b),
        (
            T + 501,
            Node {
                datacenter: 1,
                machine: 9
            }
        )
    );
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
    let mark = MarkFile::for_node(
        s.dir.path(),
        Node {
            datacenter: 0,
            machine: 5,
        },
    )
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
