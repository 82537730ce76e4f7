//! Two PostgreSQL 15 servers on one coordinator (etcd, or a third
//! PostgreSQL server) claim distinct slots, and 8 connections on each,
//! making 50,000 rows apiece with `INSERT ... DEFAULT snowmint.next_id()`,
//! get no ID twice across both servers.

mod common;

use std::collections::HashSet;

use common::described;
use common::fleet::{NodeRow, claimed_server, etcd, etcd_url, node, postgres_url, ready};
use snowmint_test_support::servers::CoordinatorServer;
use snowmint_test_support::servers::postgres::PostgresServer;
use tokio_postgres::Client;

const CONNECTIONS: usize = 8;
const INSERTS_PER_CONNECTION: usize = 50_000;
/// INSERT statements sent in one message (each its own statement, each
/// calling next_id() once): the connections' statements interleave.
const INSERTS_PER_MESSAGE: usize = 250;

/// Runs the inserts on every connection of `server` at once; returns every
/// ID the table holds afterwards.
async fn insert_everywhere(server: &PostgresServer, client: &Client) -> Vec<i64> {
    client
        .batch_execute(
            "CREATE TABLE rows (id bigint NOT NULL DEFAULT snowmint.next_id(), connection int NOT NULL)",
        )
        .await
        .expect("table");
    let mut tasks = Vec::new();
    for connection in 0..CONNECTIONS {
        let conn = server.admin().await;
        tasks.push(tokio::spawn(async move {
            let message = format!("INSERT INTO rows (connection) VALUES ({connection});")
                .repeat(INSERTS_PER_MESSAGE);
            for _ in 0..INSERTS_PER_CONNECTION / INSERTS_PER_MESSAGE {
                conn.batch_execute(&message)
                    .await
                    .unwrap_or_else(|error| panic!("insert: {}", described(&error)));
            }
        }));
    }
    for task in tasks {
        task.await.expect("an inserting connection");
    }
    client
        .query("SELECT id FROM rows", &[])
        .await
        .expect("all rows")
        .iter()
        .map(|row| row.get(0))
        .collect()
}

/// The two servers claim distinct slots, their IDs carry them, and no ID
/// is issued twice across both. Returns the servers, still running.
async fn two_servers_never_share_an_id(
    coordinator: &str,
    fleet: &str,
) -> (PostgresServer, PostgresServer) {
    let (a, a_client) = claimed_server(coordinator, fleet, &[]).await;
    let (b, b_client) = claimed_server(coordinator, fleet, &[]).await;
    let (a_node, b_node) = (ready(&a_client).await, ready(&b_client).await);
    assert_ne!(a_node.slot, b_node.slot, "both servers claimed one slot");
    let (a_ids, b_ids) = tokio::join!(
        insert_everywhere(&a, &a_client),
        insert_everywhere(&b, &b_client)
    );
    let expected = CONNECTIONS * INSERTS_PER_CONNECTION;
    assert_eq!((a_ids.len(), b_ids.len()), (expected, expected));
    for (ids, node, client) in [(&a_ids, &a_node, &a_client), (&b_ids, &b_node, &b_client)] {
        check_node(ids, node, client).await;
    }
    let mut seen = HashSet::with_capacity(2 * expected);
    let duplicates = a_ids
        .iter()
        .chain(&b_ids)
        .filter(|id| !seen.insert(**id))
        .count();
    println!(
        "{fleet}: slots {:?} and {:?}, {} IDs, {duplicates} duplicates",
        a_node.slot,
        b_node.slot,
        a_ids.len() + b_ids.len()
    );
    assert_eq!(duplicates, 0, "IDs issued twice across the two servers");
    (a, b)
}

/// Every ID of a server decodes to the node its claim names, and the claim
/// is still in force after the inserts.
async fn check_node(ids: &[i64], node: &NodeRow, client: &Client) {
    let rows = client
        .query(
            "SELECT DISTINCT d.datacenter, d.machine FROM rows r, snowmint.decode(r.id) d",
            &[],
        )
        .await
        .expect("decode");
    let nodes: Vec<(i32, i32)> = rows.iter().map(|row| (row.get(0), row.get(1))).collect();
    let claimed = (
        node.datacenter.expect("a datacenter"),
        node.machine.expect("a machine"),
    );
    assert_eq!(nodes, vec![claimed], "{} IDs", ids.len());
    let after = common::fleet::node(client).await;
    assert!(after.ready, "{:?}", after.reason);
    assert_eq!(after.slot, node.slot, "the slot changed under the inserts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_on_etcd_claim_distinct_slots() {
    let etcd = etcd().await;
    let _servers = two_servers_never_share_an_id(&etcd_url(&etcd), "pg-etcd").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_on_a_postgresql_coordinator_claim_distinct_slots() {
    let coordinator = PostgresServer::start().await;
    let url = postgres_url(&coordinator);
    let _servers = two_servers_never_share_an_id(&url, "pg-postgres").await;
    // The claims are rows of the coordinator: two live ones.
    let live = common::bigint(
        &coordinator.admin().await,
        "SELECT count(*) FROM snowmint.slots WHERE fleet = 'pg-postgres' AND expires_at > now()",
    )
    .await;
    assert_eq!(live, 2);
}

/// `node()` names where the claim comes from, and never shows the
/// coordinator's password.
#[tokio::test]
async fn node_shows_the_claim_and_masks_the_password() {
    let coordinator = PostgresServer::start().await;
    let url = postgres_url(&coordinator);
    let (_server, client) = claimed_server(&url, "pg-node", &[("snowmint.slots", "40-41")]).await;
    let row = ready(&client).await;
    assert_eq!(row.source, "postgres");
    assert_eq!(row.fleet.as_deref(), Some("pg-node"));
    let slot = row.slot.expect("a slot");
    assert!((40..=41).contains(&slot), "slot {slot}");
    // Slot 40 is datacenter 1, machine 8 (40 = 1 * 32 + 8).
    assert_eq!(row.datacenter, Some(1));
    assert_eq!(i64::from(row.machine.expect("a machine")), slot - 32);
    assert!(row.generation.is_some_and(|g| g >= 1));
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as i64;
    let until = row.valid_until_ms.expect("a deadline");
    assert!(
        until > now_ms && until <= now_ms + common::fleet::TTL.as_millis() as i64,
        "valid until {until}, now {now_ms}"
    );
    let shown = row.coordinator.expect("the coordinator");
    assert!(!shown.contains(coordinator.password()), "{shown}");
    assert!(shown.contains("***"), "{shown}");
    let id = common::bigint(&client, "SELECT snowmint.next_id()").await;
    let mark = node(&client)
        .await
        .high_water_ms
        .expect("a mark after an ID");
    let id_ms = common::bigint(
        &client,
        &format!("SELECT timestamp_ms FROM snowmint.decode({id})"),
    )
    .await;
    assert!(mark >= id_ms, "mark {mark} below the ID's time {id_ms}");
}

/// The PostgreSQL guide's fleet example: its settings (with this test's etcd for the
/// example's) on two servers, and its query, which shows each server's
/// claim: two distinct slots of the example's range.
#[tokio::test]
async fn the_guides_fleet_example_runs() {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../docs/postgresql.md"
    ))
    .expect("docs/postgresql.md");
    let section = &guide[guide
        .find("\n## A fleet of servers")
        .expect("a fleet section")..];
    let block = |fence: &str| {
        let start = section.find(fence).expect("a block") + fence.len();
        section[start..start + section[start..].find("```").expect("the block's end")].to_owned()
    };
    let etcd = etcd().await;
    let settings: Vec<(String, String)> = block("```text\n")
        .lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(" = ")?;
            let value = value.trim().trim_matches('\'');
            let value = if name == "snowmint.coordinator" {
                etcd_url(&etcd)
            } else {
                value.to_owned()
            };
            Some((name.trim().to_owned(), value))
        })
        .collect();
    assert!(
        settings
            .iter()
            .any(|(name, _)| name == "snowmint.coordinator"),
        "{settings:?}"
    );
    let settings: Vec<(&str, &str)> = settings
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    let query = block("```sql\n");
    let mut slots = Vec::new();
    let mut servers = Vec::new();
    for _ in 0..2 {
        let (server, client) = common::server(&settings).await;
        ready(&client).await;
        let row = client
            .query_one(&query, &[])
            .await
            .unwrap_or_else(|error| panic!("the guide's query: {}\n{query}", described(&error)));
        assert_eq!(row.get::<_, String>("source"), "etcd");
        assert!(row.get::<_, bool>("ready"));
        slots.push(row.get::<_, i64>("slot"));
        servers.push(server);
    }
    assert_ne!(slots[0], slots[1]);
    assert!(
        slots.iter().all(|slot| (0..=63).contains(slot)),
        "{slots:?}"
    );
}

/// `snowmint.slots_per_node = 2` on a claiming server: it claims an
/// aligned block of two of slots 40-43 (both keys on the coordinator), and
/// its IDs (1 s ticks, a 4-bit sequence: 16 a slot) come from both, in
/// order, up to 32 in a second.
#[tokio::test]
async fn a_claiming_server_of_two_slots_holds_a_block_and_issues_from_both() {
    let coordinator = PostgresServer::start().await;
    let url = postgres_url(&coordinator);
    let (_server, client) = claimed_server(
        &url,
        "pg-pairs",
        &[
            ("snowmint.slots", "40-43"),
            ("snowmint.slots_per_node", "2"),
            ("snowmint.layout", common::SECOND_TICKS),
        ],
    )
    .await;
    let slot = ready(&client).await.slot.expect("a slot");
    assert!(
        slot == 40 || slot == 42,
        "an aligned block starts at {slot}"
    );
    let held = coordinator
        .admin()
        .await
        .query(
            "SELECT slot FROM snowmint.slots WHERE fleet = 'pg-pairs' AND expires_at > now() ORDER BY slot",
            &[],
        )
        .await
        .expect("the coordinator's slots")
        .iter()
        .map(|row| row.get::<_, i64>(0))
        .collect::<Vec<_>>();
    assert_eq!(held, [slot, slot + 1]);
    let per_second = common::pairs_per_second(&client, 40).await;
    let order = common::slot_order((slot - 32) as i32, 2);
    for (second, pairs) in &per_second {
        assert_eq!(pairs[..], order[..pairs.len()], "second {second}");
    }
    assert_eq!(
        per_second.values().map(Vec::len).max(),
        Some(32),
        "{per_second:?}"
    );
}
