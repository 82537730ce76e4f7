//! Servers that claim their node from a coordinator: etcd, or a third
//! PostgreSQL server, and what `snowmint.node()` says of the claim.

use std::time::{Duration, Instant};

use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::etcd::EtcdServer;
use snowmint_test_support::servers::postgres::PostgresServer;
use tokio_postgres::Client;

use super::{described, server};

/// A claim TTL short enough for faults to play out within a test, long
/// enough for etcd's leases (a single member grants at least ~1.5 s) and
/// for keep-alives on a machine busy with other tests.
pub const TTL: Duration = Duration::from_secs(5);

/// A real etcd server.
pub async fn etcd() -> EtcdServer {
    EtcdServer::start().await
}

/// The `snowmint.coordinator` URL of an etcd server.
pub fn etcd_url(etcd: &EtcdServer) -> String {
    format!("etcd://{}", etcd.client_addr())
}

/// The `snowmint.coordinator` URL of a PostgreSQL server as the fleet's
/// coordinator: its superuser, password included.
pub fn postgres_url(coordinator: &PostgresServer) -> String {
    coordinator.admin_url()
}

/// A server preloading the extension that claims its node from
/// `coordinator` in `fleet`, with `settings` on top (such as
/// `snowmint.slots`); the claim TTL is [`TTL`] unless given.
pub async fn claimed_server(
    coordinator: &str,
    fleet: &str,
    settings: &[(&str, &str)],
) -> (PostgresServer, Client) {
    let ttl = format!("{}s", TTL.as_secs());
    let mut all = vec![
        ("snowmint.coordinator", coordinator),
        ("snowmint.fleet", fleet),
        ("snowmint.claim_ttl", ttl.as_str()),
    ];
    for (name, value) in settings {
        all.retain(|(known, _)| known != name);
        all.push((name, value));
    }
    server(&all).await
}

/// What `snowmint.node()` says.
#[derive(Debug, Clone)]
pub struct NodeRow {
    pub datacenter: Option<i32>,
    pub machine: Option<i32>,
    pub slot: Option<i64>,
    pub high_water_ms: Option<i64>,
    pub source: String,
    pub ready: bool,
    pub reason: Option<String>,
    pub generation: Option<i64>,
    /// `valid_until` as Unix ms.
    pub valid_until_ms: Option<i64>,
    pub coordinator: Option<String>,
    pub fleet: Option<String>,
}

/// `snowmint.node()` now.
pub async fn node(client: &Client) -> NodeRow {
    let row = client
        .query_one(
            "SELECT datacenter, machine, slot, high_water_ms, source, ready, reason, generation,
                    (extract(epoch FROM valid_until) * 1000)::bigint, coordinator, fleet
             FROM snowmint.node()",
            &[],
        )
        .await
        .unwrap_or_else(|error| panic!("snowmint.node(): {}", described(&error)));
    NodeRow {
        datacenter: row.get(0),
        machine: row.get(1),
        slot: row.get(2),
        high_water_ms: row.get(3),
        source: row.get(4),
        ready: row.get(5),
        reason: row.get(6),
        generation: row.get(7),
        valid_until_ms: row.get(8),
        coordinator: row.get(9),
        fleet: row.get(10),
    }
}

/// Waits until `node()` says the server may issue (a claim is in force),
/// and returns it with how long that took; panics, with the last reason,
/// after `limit`.
pub async fn ready_within(client: &Client, limit: Duration) -> (NodeRow, Duration) {
    let start = Instant::now();
    loop {
        let row = node(client).await;
        if row.ready {
            return (row, start.elapsed());
        }
        assert!(
            start.elapsed() < limit,
            "the server did not claim a node within {} s; node() says {:?}",
            limit.as_secs(),
            row.reason
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// [`ready_within`] 30 s.
pub async fn ready(client: &Client) -> NodeRow {
    ready_within(client, Duration::from_secs(30)).await.0
}
