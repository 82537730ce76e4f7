//! The fleet claim engine against a real ZooKeeper server (Debian's
//! zookeeper), started by each test on free loopback ports.

use std::time::{Duration, Instant};

use snowmint::Layout;
use snowmint_fleet::{CoordinatorConfig, SlotRange, connect};
use snowmint_test_support::net::free_port;
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::zookeeper::ZooKeeperServer;
use snowmint_test_support::wait::eventually;

every_scenario!(ZooKeeperServer);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_reads_a_zookeeper_url() {
    let server = ZooKeeperServer::start().await;
    let url = format!("zk://{}", server.client_addr());
    crate::scenarios::connect_from_url(&server, &url, "zookeeper", "session").await;
}

/// A closed port: the node is fenced with a sentence that names the
/// coordinator, and says that it retries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_coordinator_is_one_sentence() {
    let port = free_port();
    let url = format!("zk://127.0.0.1:{port}");
    let expected = format!(
        "cannot reach the coordinator {url} (no server of the ensemble took the connection); retrying"
    );
    crate::scenarios::unreachable_coordinator(&url, &expected).await;
}

/// With a chroot, every znode lives under it (created when missing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chroot_holds_every_znode() {
    let server = ZooKeeperServer::start().await;
    let url = format!("zk://{}/apps/ids", server.client_addr())
        .parse()
        .unwrap();
    let slots = SlotRange::new(0, 0).unwrap();
    let config = CoordinatorConfig::new(
        "rooted",
        slots,
        crate::scenarios::TTL,
        "rooted".into(),
        Layout::TWITTER,
    )
    .unwrap();
    let source = connect(&url, config).unwrap();
    let states = source.state();
    eventually("a claim under the chroot", Duration::from_secs(60), || {
        let state = states.borrow().clone();
        println!("{state:?}");
        async move { state.claim_at(Instant::now()).map(drop) }
    })
    .await;
    let client = zookeeper_client::Client::connect(&server.client_addr().to_string())
        .await
        .unwrap();
    let (holder, stat) = client
        .get_data("/apps/ids/snowmint/rooted/slots/0")
        .await
        .unwrap();
    assert_eq!(holder, b"rooted");
    assert_ne!(stat.ephemeral_owner, 0, "the slot znode is not ephemeral");
    assert!(
        server.slot_holders("rooted").await.is_empty(),
        "a znode escaped the chroot"
    );
    source.release().await;
    let gone = client
        .check_stat("/apps/ids/snowmint/rooted/slots/0")
        .await
        .unwrap();
    assert!(gone.is_none(), "the slot znode outlived the release");
}
