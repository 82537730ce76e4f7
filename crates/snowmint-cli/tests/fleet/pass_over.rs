//! A coordinated node whose claimed slot's node is held by another process
//! on its host gives the slot up and serves from another, saying why in
//! its log and `/v1/node`; the real binary against a real etcd server.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use snowmint_test_support::binary::Service;
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::temp::temp_dir;
use snowmint_test_support::wait::wait_until;

use crate::SNOWMINT;

/// The claim TTL of `snowmint serve` when none is given.
const DEFAULT_TTL: Duration = Duration::from_secs(10);

/// The node an ID was issued by: (datacenter, machine) in the Twitter
/// layout, the ten bits above the sequence.
fn node_of(id: &str) -> (u64, u64) {
    let id: u64 = id.parse().unwrap();
    ((id >> 17) & 0x1f, (id >> 12) & 0x1f)
}

/// The case as a user met it: `snowmint serve --datacenter 0 --machine 0`
/// with the default state directory, then a fleet node on etcd with the
/// same state directory. The fleet node first claims slot 0 (the node of
/// the newest state file), finds its node locked by the static process,
/// gives the slot up and serves from another slot within a TTL, naming the
/// reason in its log and in `/v1/node`. Slot 0 is not left held in etcd.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_node_gives_up_a_slot_locked_on_its_host_and_serves_from_another() {
    let cluster = EtcdServer::start().await;
    let home = temp_dir("pass-over");
    let fixed = Service::start(
        SNOWMINT,
        home.path(),
        &["--datacenter", "0", "--machine", "0"],
        &[],
    );
    // Its state file is now the newest in the directory: a fleet node
    // started on the directory tries its slot first.
    let first = fixed.json("/v1/id");
    assert_eq!(node_of(first["id"].as_str().unwrap()), (0, 0));
    let lock_file = home.path().join(".local/state/snowmint/node-dc0-m0.lock");
    assert!(lock_file.exists(), "{}", lock_file.display());

    let url = format!("etcd://{}", cluster.client_addr());
    let started = Instant::now();
    let fleet = Service::start(
        SNOWMINT,
        home.path(),
        &["--coordinator", &url, "--fleet", "ids"],
        &[],
    );
    let id = wait_until("the fleet node to serve", Duration::from_secs(60), || {
        let response = fleet.connect().get("/v1/id").unwrap();
        (response.status == 200).then_some(response.body)
    });
    let serving_after = started.elapsed();
    let id: serde_json::Value = serde_json::from_str(&id).unwrap();
    let node = node_of(id["id"].as_str().unwrap());
    assert_ne!(node, (0, 0), "the fleet node issued as the locked node");
    assert!(
        serving_after < DEFAULT_TTL,
        "the fleet node served only after {serving_after:?}, more than a TTL"
    );

    // /v1/node names the slot given up and why.
    let described = fleet.json("/v1/node");
    let coordinator = &described["coordinator"];
    assert_eq!(coordinator["state"], "held", "{described}");
    let slot = coordinator["slot"].as_u64().unwrap();
    assert_eq!((slot >> 5, slot & 0x1f), node, "{described}");
    assert_eq!(coordinator["claims_lost"], 0, "{described}");
    let passed = coordinator["passed_over"].as_array().unwrap();
    assert_eq!(passed.len(), 1, "{described}");
    assert_eq!(passed[0]["slot"], 0, "{described}");
    let reason = passed[0]["reason"].as_str().unwrap();
    for part in [
        lock_file.display().to_string(),
        format!("process {}", fixed.pid()),
        "datacenter 0 machine 0".to_owned(),
    ] {
        assert!(reason.contains(&part), "{part:?} is missing: {reason}");
    }
    assert!(passed[0]["for_ms"].as_u64().unwrap() > 0, "{described}");
    // ... and so does the log.
    let log = fleet.log();
    assert!(
        log.contains("giving the slot up") && log.contains(&format!("process {}", fixed.pid())),
        "{log}"
    );

    // etcd holds the fleet node's new slot only; the static node serves on.
    let holders: BTreeSet<u64> = cluster.slot_holders("ids").await.into_keys().collect();
    assert_eq!(holders, BTreeSet::from([slot]));
    let again = fixed.json("/v1/id");
    assert_eq!(node_of(again["id"].as_str().unwrap()), (0, 0));
    drop(fleet);
    drop(fixed);
}
