//! The service on a real socket (127.0.0.1, port 0): concurrent clients
//! over HTTP, and graceful shutdown.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use snowmint::{ClockPolicy, Layout, ManualClock};
use snowmint_fleet::{NodeState, SlotSource};
use snowmint_test_support::http::Connection;
use snowmint_test_support::in_process::{NODE, Options, node_with};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

const CLIENTS: usize = 8;
const IDS_PER_CLIENT: usize = 20_000;

/// Serves `state` on a free loopback port, as `snowmint serve` serves its
/// HTTP listener; returns the address, a trigger for shutdown and the
/// task that ends once the node has stopped.
async fn serve(
    state: snowmint_server::AppState,
) -> (
    SocketAddr,
    oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), snowmint_server::ServeError>>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = state.serve(vec![(snowmint_server::Listener::Http, listener)], async {
        let _ = stopped.await;
    });
    assert_eq!(serving.listeners().http(), address);
    (address, stop, tokio::spawn(serving.stopped()))
}

/// 8 clients, each on its own connection, take 20,000 IDs one request at a
/// time: no ID is handed out twice, and each client sees them increase.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_clients_never_get_the_same_id() {
    let node = node_with(Options::default()).await;
    let (address, stop, task) = serve(node.state.clone()).await;
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            std::thread::spawn(move || {
                let mut connection = Connection::open(address).unwrap();
                let mut ids = Vec::with_capacity(IDS_PER_CLIENT);
                for _ in 0..IDS_PER_CLIENT {
                    let response = connection.get("/v1/id").unwrap();
                    assert_eq!(response.status, 200, "{}", response.body);
                    let json: serde_json::Value = serde_json::from_str(&response.body).unwrap();
                    ids.push(json["id"].as_str().unwrap().parse::<u64>().unwrap());
                }
                ids
            })
        })
        .collect();
    let mut all = HashSet::with_capacity(CLIENTS * IDS_PER_CLIENT);
    for client in clients {
        let ids = tokio::task::spawn_blocking(move || client.join().unwrap())
            .await
            .unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        for id in ids {
            assert!(all.insert(id), "ID {id} was handed out twice");
        }
    }
    assert_eq!(all.len(), CLIENTS * IDS_PER_CLIENT);

    // The same errors over the wire as through the router.
    let mut connection = Connection::open(address).unwrap();
    let response = connection.get("/v1/ids?count=4097").unwrap();
    assert_eq!(response.status, 400);
    assert_eq!(response.header("content-type"), Some("application/json"));
    let response = connection.get("/metrics").unwrap();
    let issued = format!("snowmint_ids_issued_total {}", CLIENTS * IDS_PER_CLIENT);
    assert!(response.body.contains(&issued), "{}", response.body);

    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}

/// On shutdown the service stops accepting, lets a request in flight
/// finish with its ID, then releases the claim.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_finishes_requests_in_flight_then_releases() {
    const T: i64 = 1_700_000_000_000;
    let clock = ManualClock::new(T);
    let node = node_with(Options {
        clock: Arc::new(clock.clone()),
        policy: ClockPolicy::Wait {
            max: Duration::from_secs(30),
        },
        ..Options::default()
    })
    .await;
    let mut state = node.source.state();
    let (address, stop, task) = serve(node.state.clone()).await;

    let mut connection = Connection::open(address).unwrap();
    let first = connection.get("/v1/id").unwrap();
    assert_eq!(first.status, 200);
    // Set the clock back: the next request waits for it (wait policy).
    clock.set(T - 500);
    let in_flight = std::thread::spawn(move || connection.get("/v1/id").unwrap());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!in_flight.is_finished(), "the request should be waiting");

    stop.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !task.is_finished(),
        "shutdown waits for the request in flight"
    );
    assert!(
        matches!(*state.borrow_and_update(), NodeState::Active(_)),
        "the claim is held while a request is in flight"
    );
    assert!(
        std::net::TcpStream::connect(address).is_err(),
        "no new connections once shutting down"
    );

    clock.set(T + 1);
    let answer = tokio::task::spawn_blocking(move || in_flight.join().unwrap())
        .await
        .unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    let id: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
    let id: u64 = id["id"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        ((id >> 17) & 31, (id >> 12) & 31),
        Layout::TWITTER.pair_of(NODE)
    );

    task.await.unwrap().unwrap();
    match &*state.borrow_and_update() {
        NodeState::Fenced { reason } => assert_eq!(reason, "released at shutdown"),
        other => panic!("the claim was not released: {other:?}"),
    }
}
