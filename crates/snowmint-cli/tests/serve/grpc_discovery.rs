//! The Rust client finds the nodes of a fleet from the coordinator's slot
//! keys (etcd, ZooKeeper, PostgreSQL), where each real `snowmint serve --grpc-listen`
//! writes its gRPC address, and follows the fleet as a node dies and
//! another joins.

use std::collections::BTreeSet;
use std::time::Duration;

use snowmint_client::Client;
use snowmint_test_support::binary::Service;
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::temp::temp_dir;
use snowmint_test_support::wait::eventually;

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");
const LIMIT: Duration = Duration::from_secs(60);
const FLEET: &str = "found";

fn endpoint(service: &Service) -> String {
    format!(
        "http://{}",
        service.grpc.expect("started with --grpc-listen")
    )
}

#[cfg(feature = "etcd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_follows_the_fleet_in_etcd() {
    follows_the_fleet::<snowmint_test_support::servers::etcd::EtcdServer>().await;
}

#[cfg(feature = "zookeeper")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_follows_the_fleet_in_zookeeper() {
    follows_the_fleet::<snowmint_test_support::servers::zookeeper::ZooKeeperServer>().await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_follows_the_fleet_in_postgres() {
    follows_the_fleet::<snowmint_test_support::servers::postgres::PostgresServer>().await;
}

async fn follows_the_fleet<C: CoordinatorServer>() {
    let coordinator = C::start().await;
    let url = coordinator.url();
    let home = temp_dir("grpc-discovery");
    let start = |name: &str| {
        let state_dir = home.path().join(format!("state-{name}"));
        tokio::task::block_in_place(|| {
            Service::start(
                SNOWMINT,
                home.path(),
                &[
                    "--coordinator",
                    &url,
                    "--fleet",
                    FLEET,
                    "--claim-ttl",
                    "2s",
                    "--grpc-listen",
                    "127.0.0.1:0",
                    "--state-dir",
                    state_dir.to_str().unwrap(),
                ],
                &[],
            )
        })
    };
    let a = start("a");
    let b = start("b");
    // Each holder value names the node's gRPC address.
    let holders = eventually("both nodes to hold a slot", LIMIT, || async {
        let holders = coordinator.slot_holders(FLEET).await;
        (holders.len() == 2).then_some(holders)
    })
    .await;
    for service in [&a, &b] {
        let grpc = format!("grpc={}", service.grpc.unwrap());
        assert!(
            holders.values().any(|h| h.contains(&grpc)),
            "{grpc} not in {holders:?}"
        );
    }

    let client = Client::builder()
        .discover(url.clone(), FLEET)
        .discover_every(Duration::from_millis(200))
        .max_age(Duration::ZERO)
        .build()
        .await
        .unwrap();
    let known = |client: &Client| client.endpoints().into_iter().collect::<BTreeSet<_>>();
    assert_eq!(known(&client), BTreeSet::from([endpoint(&a), endpoint(&b)]));
    let slots = std::sync::Mutex::new(BTreeSet::new());
    eventually("IDs from both nodes", LIMIT, || async {
        let id = client.next_id().await.unwrap();
        let mut slots = slots.lock().unwrap();
        slots.insert((id >> 12) & 0x3ff);
        (slots.len() == 2).then_some(())
    })
    .await;

    // A node dies: once its lease ends, its key and its endpoint go.
    let gone = endpoint(&a);
    tokio::task::block_in_place(|| a.kill());
    eventually(
        "the killed node to leave the client's list",
        LIMIT,
        || async { (!known(&client).contains(&gone)).then_some(()) },
    )
    .await;
    client.next_id().await.unwrap();

    // A node joins: it is found without a new client.
    let c = start("c");
    let joined = endpoint(&c);
    eventually("the new node to join the client's list", LIMIT, || async {
        known(&client).contains(&joined).then_some(())
    })
    .await;
    assert_eq!(known(&client), BTreeSet::from([endpoint(&b), joined]));

    // A coordinator that cannot be read is an error at build time, whose
    // source is the fleet's own error, naming the coordinator.
    let dead = match url.split("://").next().unwrap() {
        "postgres" => "postgres://snowmint@127.0.0.1:1/ids".to_owned(),
        scheme => format!("{scheme}://127.0.0.1:1"),
    };
    let error = Client::builder()
        .discover(dead, FLEET)
        .build()
        .await
        .unwrap_err();
    assert!(
        matches!(error, snowmint_client::Error::Discovery(_)),
        "{error:?}"
    );
    let source = std::error::Error::source(&error).expect("the fleet's error as the source");
    let fleet = source
        .downcast_ref::<snowmint_fleet::FleetError>()
        .expect("a FleetError");
    assert!(
        matches!(fleet, snowmint_fleet::FleetError::Coordinator { coordinator, .. } if coordinator.contains("127.0.0.1:1")),
        "{fleet:?}"
    );
}
