//! The claim history and the clock check of the claim engine, against real
//! etcd, ZooKeeper and PostgreSQL servers started by each test on free
//! loopback ports.
//!
//! - Every claim leaves a record: a clean release ends it with the last
//!   mark, a take-over ends the one it finds open with the floor it read;
//!   `whois` names the holder whose claim covered an ID, says when none
//!   did, and when the records that could say were pruned.
//! - The clock check: with no peer, the coordinator's own clock decides
//!   (PostgreSQL, ZooKeeper); etcd keeps none, so a node there claims.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use snowmint::{Layout, Node, SnowflakeId};
use snowmint_fleet::{
    ClaimEnd, ClaimState, ClockCheck, Coordinator, CoordinatorConfig, CoordinatorUrl, FleetName,
    HistoryRetention, NodeState, SlotRange, SlotSource, WhoisAnswer,
};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::servers::postgres::PostgresServer;
use snowmint_test_support::servers::zookeeper::ZooKeeperServer;
use snowmint_test_support::wait::{eventually, within};

const TTL: Duration = Duration::from_secs(2);
const LIMIT: Duration = Duration::from_secs(60);

/// The system clock shifted by an amount the test sets at any time.
#[derive(Debug, Clone, Default)]
struct ShiftedClock {
    offset_ms: Arc<AtomicI64>,
}

impl ShiftedClock {
    fn shift(&self, offset_ms: i64) {
        self.offset_ms.store(offset_ms, Ordering::SeqCst);
    }
}

impl snowmint::Clock for ShiftedClock {
    fn now_ms(&self) -> i64 {
        snowmint::Clock::now_ms(&snowmint::SystemClock) + self.offset_ms.load(Ordering::SeqCst)
    }
}

/// A holder value as `snowmint serve` writes it.
fn holder(name: &str, pid: u32) -> String {
    format!("host={name} pid={pid} listen=127.0.0.1:{pid} started=2024-01-01T00:00:00.000Z")
}

fn config(fleet: &str, name: &str, pid: u32) -> CoordinatorConfig {
    CoordinatorConfig::new(
        fleet,
        SlotRange::new(5, 5).unwrap(),
        TTL,
        holder(name, pid),
        Layout::TWITTER,
    )
    .unwrap()
}

async fn active<S: SlotSource>(engine: &S) -> snowmint_fleet::Claim {
    let states = engine.state();
    eventually("an active claim", LIMIT, || {
        let claim = states.borrow().claim_at(Instant::now()).cloned();
        async move { claim }
    })
    .await
}

/// The ID of slot 5 (datacenter 0, machine 5) at `timestamp_ms`.
fn id_at(timestamp_ms: i64) -> SnowflakeId {
    Layout::TWITTER.encode_pair(timestamp_ms, 0, 5, 7).unwrap()
}

fn now_ms() -> i64 {
    snowmint::Clock::now_ms(&snowmint::SystemClock)
}

/// Three holders of one slot in turn: released, crashed, still held.
/// Each claim's record says who held it from when to when, and `whois`
/// answers every time with the right holder, or none.
async fn each_claim_leaves_a_record<C: CoordinatorServer>() {
    let cluster = C::start().await;
    let url: CoordinatorUrl = cluster.url().parse().unwrap();
    let fleet: FleetName = "hist".parse().unwrap();
    let before = now_ms();

    let a = Coordinator::start(
        cluster.backend(cluster.client_addr()),
        config("hist", "node-a", 1),
    )
    .unwrap();
    let claim = active(&a).await;
    assert_eq!(claim.details["slot_generation"], "1");
    let a_mark = now_ms() + 300;
    a.reserve(claim.generation, a_mark).await.unwrap();
    let a_issued = now_ms();
    within("a to release", LIMIT, a.release()).await;

    let b = Coordinator::start(
        cluster.backend(cluster.client_addr()),
        config("hist", "node-b", 2),
    )
    .unwrap();
    let claim = active(&b).await;
    assert_eq!(claim.floor_ms, Some(a_mark));
    assert_eq!(claim.details["slot_generation"], "2");
    // Past A's mark, so that B issues above it.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let b_issued = now_ms();
    let b_mark = b_issued + 300;
    b.reserve(claim.generation, b_mark).await.unwrap();
    drop(b); // a crash: nothing released; the slot frees when the TTL runs out

    let c = Coordinator::start(
        cluster.backend(cluster.client_addr()),
        config("hist", "node-c", 3),
    )
    .unwrap();
    let claim = active(&c).await;
    assert_eq!(claim.floor_ms, Some(b_mark));
    // Above the floor: a ZooKeeper session closes with its client, so C
    // may hold the slot before B's mark has passed.
    let c_issued = now_ms().max(b_mark + 1);
    let c_mark = c_issued + 300;
    c.reserve(claim.generation, c_mark).await.unwrap();

    let ask = |timestamp_ms: i64| {
        let (url, fleet) = (url.clone(), fleet.clone());
        async move {
            snowmint_fleet::whois(&url, &fleet, id_at(timestamp_ms))
                .await
                .unwrap()
        }
    };
    let a_says = ask(a_issued).await;
    assert_eq!(a_says.answer, WhoisAnswer::Covered, "{a_says}");
    assert_eq!((a_says.slot, a_says.node), (5, Node::from_slot(5)));
    let record = &a_says.claims[0];
    assert_eq!(record.generation, 1);
    let parsed = record.parsed_holder().unwrap();
    assert_eq!((parsed.host.as_str(), parsed.pid), ("node-a", 1));
    assert_eq!(record.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(record.ended, Some(ClaimEnd::Release));
    assert_eq!(record.last_ms, Some(a_mark));
    assert!(record.start_ms >= before && record.start_ms <= a_issued);
    assert!(
        a_says.message().contains("node-a (127.0.0.1:1), pid 1"),
        "{a_says}"
    );

    let b_says = ask(b_issued).await;
    assert_eq!(b_says.answer, WhoisAnswer::Covered, "{b_says}");
    let record = &b_says.claims[0];
    assert_eq!(record.generation, 2);
    assert_eq!(record.parsed_holder().unwrap().host, "node-b");
    // Ended by C's take-over, bounded by the mark C found.
    assert_eq!(record.ended, Some(ClaimEnd::Takeover));
    assert_eq!(record.last_ms, Some(b_mark));
    assert_eq!(record.floor_ms, Some(a_mark));

    let c_says = ask(c_issued).await;
    assert_eq!(c_says.answer, WhoisAnswer::Covered, "{c_says}");
    assert_eq!(c_says.claims[0].generation, 3);
    assert_eq!(c_says.claims[0].ended, None);
    assert_eq!(c_says.mark_ms, Some(c_mark));
    // The node answers the same from its own session.
    let from_node = c.whois(id_at(c_issued)).await.unwrap();
    assert_eq!(from_node, c_says);

    // Before any claim, and past the open claim's mark: nobody.
    for timestamp_ms in [before - 60_000, c_mark + 1] {
        let says = ask(timestamp_ms).await;
        assert_eq!(says.answer, WhoisAnswer::NotCovered, "{says}");
        assert!(says.claims.is_empty());
        assert!(
            says.message()
                .contains("no claim covered slot 5 of fleet hist"),
            "{says}"
        );
    }
    within("c to release", LIMIT, c.release()).await;

    // A fleet no node joined has no layout record to read IDs in.
    let nobody: FleetName = "nobody".parse().unwrap();
    let error = snowmint_fleet::whois(&url, &nobody, id_at(c_issued))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("fleet nobody has no layout record"),
        "{error}"
    );
}

/// With two records kept, the third claim prunes the first: an ID of its
/// time is answered as pruned, not as issued by nobody.
async fn old_records_are_pruned<C: CoordinatorServer>() {
    let cluster = C::start().await;
    let url: CoordinatorUrl = cluster.url().parse().unwrap();
    let fleet: FleetName = "pruned".parse().unwrap();
    let retention = HistoryRetention {
        keep: 2,
        max_age: Duration::from_secs(3600),
    };
    let mut first_issued = None;
    for (index, name) in ["one", "two", "three"].into_iter().enumerate() {
        let pid = index as u32 + 1;
        let engine = Coordinator::start(
            cluster.backend(cluster.client_addr()),
            config("pruned", name, pid).with_history(retention),
        )
        .unwrap();
        let claim = active(&engine).await;
        // Above the floor the previous holder left.
        let issued = now_ms().max(claim.floor_ms.unwrap_or(0) + 1);
        first_issued.get_or_insert(issued);
        engine
            .reserve(claim.generation, issued + 200)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(250)).await;
        within("a release", LIMIT, engine.release()).await;
    }
    let says = snowmint_fleet::whois(&url, &fleet, id_at(first_issued.unwrap()))
        .await
        .unwrap();
    assert_eq!(says.answer, WhoisAnswer::Pruned, "{says}");
    let kept: Vec<u64> = says.kept.iter().map(|record| record.generation).collect();
    assert_eq!(kept, [2, 3]);
    assert!(
        says.message()
            .contains("were pruned: the oldest kept is generation 2"),
        "{says}"
    );
}

/// A node whose clock is 3 s ahead of the coordinator's, with no peer to
/// ask: on PostgreSQL and ZooKeeper the coordinator's clock says so and
/// the node claims nothing, with the offset in its reason; once its clock
/// is put right it claims. etcd has no clock to read: the node claims.
async fn the_coordinators_clock_is_checked<C: CoordinatorServer>(kind: Option<&str>) {
    let cluster = C::start().await;
    let clock = ShiftedClock::default();
    clock.shift(3_000);
    let check = ClockCheck {
        max_skew: Some(Duration::from_secs(1)),
        every: Duration::from_secs(1),
    };
    let engine = Coordinator::start(
        cluster.backend(cluster.client_addr()),
        config("clock", "ahead", 1)
            .with_clock(Arc::new(clock.clone()))
            .with_clock_check(check, None),
    )
    .unwrap();
    let Some(kind) = kind else {
        active(&engine).await;
        let (verdict, _) = engine.status().clock.expect("a check ran before the claim");
        assert!(verdict.readings.is_empty(), "{verdict}");
        assert!(!verdict.skewed);
        within("a release", LIMIT, engine.release()).await;
        return;
    };
    let states = engine.state();
    let reason = eventually("the node to refuse for its clock", LIMIT, || {
        let state = states.borrow().clone();
        async move {
            match state {
                NodeState::Fenced { reason } if reason.contains("clock") => Some(reason),
                NodeState::Active(claim) => panic!("claimed with its clock 3 s ahead: {claim:?}"),
                NodeState::Fenced { .. } => None,
            }
        }
    })
    .await;
    assert!(
        reason.starts_with("this node's clock is ")
            && reason.contains(
                "ms ahead of 1 of the 1 clocks it was checked against, more than the 1s allowed"
            )
            && reason.contains(&format!("the coordinator ({kind}) +")),
        "{reason}"
    );
    let status = engine.status();
    assert_eq!(status.state, ClaimState::ClockSkew);
    let (verdict, _) = status.clock.unwrap();
    let offset = verdict.offset_ms.unwrap();
    assert!((2_900..=3_100).contains(&offset), "{verdict}");
    clock.shift(0);
    active(&engine).await;
    let (verdict, _) = engine.status().clock.unwrap();
    assert!(!verdict.skewed, "{verdict}");
    assert!(verdict.offset_ms.unwrap().abs() < 100, "{verdict}");
    within("a release", LIMIT, engine.release()).await;
}

mod etcd {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_claim_leaves_a_record() {
        super::each_claim_leaves_a_record::<EtcdServer>().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn old_records_are_pruned() {
        super::old_records_are_pruned::<EtcdServer>().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn without_a_peer_nothing_judges_the_clock() {
        super::the_coordinators_clock_is_checked::<EtcdServer>(None).await;
    }
}

mod zookeeper {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_claim_leaves_a_record() {
        super::each_claim_leaves_a_record::<ZooKeeperServer>().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn old_records_are_pruned() {
        super::old_records_are_pruned::<ZooKeeperServer>().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_leaders_clock_is_checked() {
        super::the_coordinators_clock_is_checked::<ZooKeeperServer>(Some("zookeeper")).await;
    }
}

mod postgres {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_claim_leaves_a_record() {
        super::each_claim_leaves_a_record::<PostgresServer>().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn old_records_are_pruned() {
        super::old_records_are_pruned::<PostgresServer>().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_databases_clock_is_checked() {
        super::the_coordinators_clock_is_checked::<PostgresServer>(Some("postgres")).await;
    }
}
