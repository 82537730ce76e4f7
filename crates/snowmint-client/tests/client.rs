//! The client against in-process nodes on real loopback sockets: the
//! buffer, bounded staleness, round trips with `max_age` zero, skipping a
//! fenced node, giving up only when no node serves, the blocking wrapper.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use snowmint::{Clock, ManualClock, Node, SystemClock};
use snowmint_client::{BlockingClient, Client, Error};
use snowmint_test_support::in_process::grpc::GrpcNode;

/// The fields of a Twitter-layout ID by the formula of README.md:
/// (Unix ms, datacenter, machine).
fn fields(id: u64) -> (i64, u64, u64) {
    (
        (id >> 22) as i64 + 1_288_834_974_657,
        (id >> 17) & 31,
        (id >> 12) & 31,
    )
}

async fn node(machine: u64) -> GrpcNode {
    GrpcNode::start(Node::from_slot(32 + machine), Arc::new(SystemClock)).await
}

/// Twenty thousand IDs through the buffer from two nodes: all distinct,
/// increasing per node, from both nodes, served from the buffer with a
/// refill per batch rather than a round trip per ID.
#[tokio::test]
async fn the_buffer_serves_unique_ids_from_every_node() {
    let (a, b) = (node(1).await, node(2).await);
    let client = Client::builder()
        .endpoints([a.endpoint(), b.endpoint()])
        .batch(1000)
        .build()
        .await
        .unwrap();
    let mut seen = HashSet::new();
    let mut last_of = [0u64; 32];
    for _ in 0..20_000 {
        let id = client.next_id().await.unwrap();
        assert!(seen.insert(id), "{id} handed out twice");
        let (_, datacenter, machine) = fields(id);
        assert_eq!(datacenter, 1);
        assert!(
            id > last_of[machine as usize],
            "{id} not above the last of its node"
        );
        last_of[machine as usize] = id;
    }
    assert!(last_of[1] > 0 && last_of[2] > 0, "not both nodes served");
    let stats = client.stats();
    assert_eq!(stats.buffer_hits, 20_000);
    assert!(stats.refills >= 20, "{stats:?}");
    assert!(stats.round_trips >= stats.refills, "{stats:?}");
    // Far fewer round trips than IDs: the point of the buffer.
    assert!(stats.round_trips < 100, "{stats:?}");
    assert_eq!(stats.failovers, 0);

    // A batch larger than one call can bring: several round trips.
    let many = client.next_ids(10_000).await.unwrap();
    assert_eq!(many.len(), 10_000);
    assert!(many.iter().all(|id| seen.insert(*id)), "a repeated ID");
}

/// With a small `max_age`, a client that sits idle longer than that hands
/// out no ID older than `max_age` at the moment it hands it out: the
/// buffered ones are dropped and counted. Node and client share a clock
/// the test moves, so that "the moment of handing out" is exact.
#[tokio::test]
async fn an_idle_client_hands_out_no_stale_id() {
    let clock = ManualClock::new(1_700_000_000_000);
    let a = GrpcNode::start(Node::from_slot(35), Arc::new(clock.clone())).await;
    let max_age = Duration::from_millis(30);
    let client = Client::builder()
        .endpoints([a.endpoint()])
        .max_age(max_age)
        .batch(500)
        .clock(Arc::new(clock.clone()))
        .build()
        .await
        .unwrap();
    let mut seen = HashSet::new();
    for round in 0..24i64 {
        for _ in 0..50 {
            let id = client.next_id().await.unwrap();
            let age = clock.now_ms() - fields(id).0;
            assert!(
                (0..=max_age.as_millis() as i64).contains(&age),
                "round {round}: an ID {age} ms old was handed out (max_age {max_age:?})"
            );
            assert!(seen.insert(id), "{id} handed out twice");
        }
        // Idle for 1 to 70 ms: often longer than max_age.
        clock.advance(round * 3 + 1);
    }
    let stats = client.stats();
    assert!(
        stats.stale_dropped > 0,
        "no stale ID was ever dropped: {stats:?}"
    );
    assert_eq!(stats.buffer_hits, 24 * 50);
}

/// `max_age` zero: no buffer, one round trip per call, no ID made that the
/// application does not get.
#[tokio::test]
async fn max_age_zero_is_a_round_trip_per_call() {
    let a = node(4).await;
    let client = Client::builder()
        .endpoints([a.endpoint()])
        .max_age(Duration::ZERO)
        .build()
        .await
        .unwrap();
    for _ in 0..25 {
        client.next_id().await.unwrap();
    }
    assert_eq!(client.next_ids(5000).await.unwrap().len(), 5000);
    let stats = client.stats();
    assert_eq!((stats.round_trips, stats.buffer_hits), (27, 0), "{stats:?}");
    assert_eq!(a.metric("snowmint_ids_issued_total"), 5025.0);
    assert_eq!(client.buffered(), 0);
}

/// A fenced node is skipped and the other serves without an error; with
/// both fenced the call fails at its deadline, naming each node's
/// refusal; a node that holds its slot again is used again.
#[tokio::test]
async fn fenced_nodes_are_skipped_until_none_is_left() {
    let (a, b) = (node(5).await, node(6).await);
    let client = Client::builder()
        .endpoints([a.endpoint(), b.endpoint()])
        .max_age(Duration::ZERO)
        .deadline(Duration::from_millis(400))
        .max_backoff(Duration::from_millis(100))
        .build()
        .await
        .unwrap();
    a.source.fence("the claim was lost");
    for _ in 0..20 {
        let id = client.next_id().await.unwrap();
        assert_eq!(fields(id).2, 6, "an ID from the fenced node");
    }
    assert!(client.stats().failovers >= 1);

    b.source.fence("the coordinator is unreachable");
    let error = client.next_id().await.unwrap_err();
    let Error::Unavailable { attempts, .. } = &error else {
        panic!("{error:?}");
    };
    let text = error.to_string();
    assert!(
        text.starts_with("no node could serve IDs within 400 ms: "),
        "{text}"
    );
    for (node, reason) in [
        (&a, "the claim was lost"),
        (&b, "the coordinator is unreachable"),
    ] {
        assert!(
            attempts
                .iter()
                .any(|attempt| attempt.starts_with(&node.endpoint()) && attempt.contains(reason)),
            "{attempts:?}"
        );
    }

    a.source.hold(2);
    let client = Client::builder()
        .endpoints([a.endpoint(), b.endpoint()])
        .max_age(Duration::ZERO)
        .build()
        .await
        .unwrap();
    assert_eq!(fields(client.next_id().await.unwrap()).2, 5);
}

/// Values out of range are refused with their name, value and range.
#[tokio::test]
async fn bad_settings_and_arguments_name_their_range() {
    let a = node(7).await;
    let error = Client::builder()
        .endpoints([a.endpoint()])
        .batch(0)
        .build()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::Config(m) if m == "batch 0 is out of range (1..=4096)"),
        "{error:?}"
    );
    let error = Client::builder()
        .endpoints(["not a url"])
        .build()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::Config(m) if m.contains("\"not a url\"")),
        "{error:?}"
    );
    let error = Client::builder().build().await.unwrap_err();
    assert!(matches!(error, Error::Config(_)), "{error:?}");
    let client = Client::builder()
        .endpoints([a.endpoint()])
        .build()
        .await
        .unwrap();
    let error = client.next_ids(0).await.unwrap_err();
    assert!(
        matches!(&error, Error::InvalidArgument(m) if m == "n 0 is out of range (at least 1)"),
        "{error:?}"
    );
}

/// The blocking wrapper, from a thread that is not async.
#[tokio::test]
async fn the_blocking_wrapper_serves_plain_threads() {
    let a = node(8).await;
    let endpoint = a.endpoint();
    let ids = tokio::task::spawn_blocking(move || {
        let client = BlockingClient::new(Client::builder().endpoints([endpoint])).unwrap();
        let mut ids = client.next_ids(100).unwrap();
        ids.push(client.next_id().unwrap());
        (ids, client.stats())
    })
    .await
    .unwrap();
    let (ids, stats) = ids;
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 101);
    assert!(ids.iter().all(|&id| fields(id).2 == 8));
    assert_eq!(stats.buffer_hits, 101);
}
