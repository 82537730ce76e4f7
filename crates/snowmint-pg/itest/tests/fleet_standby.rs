//! A standby of a claimed server claims a slot of its own when it starts,
//! so that once promoted it issues under its own node, and the old
//! primary and the promoted standby (both taking writes, as after a
//! split) never make the same ID.

mod common;

use std::collections::HashSet;

use common::fleet::{TTL, claimed_server, etcd, etcd_url, node, ready};
use common::{bigint, described};
use snowmint_test_support::servers::postgres::PostgresServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promoted_standby_issues_under_its_own_slot() {
    let etcd = etcd().await;
    let url = etcd_url(&etcd);
    let (primary, primary_client) = claimed_server(&url, "pg-standby", &[]).await;
    let primary_slot = ready(&primary_client).await.slot.expect("a slot");
    primary_client
        .batch_execute(
            "CREATE TABLE rows (id bigint PRIMARY KEY DEFAULT snowmint.next_id(), origin text NOT NULL);
             INSERT INTO rows (origin) SELECT 'primary' FROM generate_series(1, 5000);",
        )
        .await
        .expect("rows on the primary");

    let ttl = format!("{}s", TTL.as_secs());
    let standby = PostgresServer::builder()
        .setting("shared_preload_libraries", "snowmint")
        .setting("snowmint.coordinator", &url)
        .setting("snowmint.fleet", "pg-standby")
        .setting("snowmint.claim_ttl", &ttl)
        .start_standby_of(&primary)
        .await;
    let standby_client = standby.admin().await;
    let in_recovery: bool = standby_client
        .query_one("SELECT pg_is_in_recovery()", &[])
        .await
        .expect("pg_is_in_recovery")
        .get(0);
    assert!(in_recovery, "the standby is not a standby");
    // Claimed while still a standby: a slot of its own.
    let standby_slot = ready(&standby_client).await.slot.expect("a slot");
    assert_ne!(
        standby_slot, primary_slot,
        "the standby took the primary's slot"
    );

    let promoted: bool = standby_client
        .query_one("SELECT pg_promote()", &[])
        .await
        .unwrap_or_else(|error| panic!("pg_promote: {}", described(&error)))
        .get(0);
    assert!(promoted);
    // Both take writes now: IDs from two servers into two copies of one
    // table.
    for (client, origin) in [(&standby_client, "standby"), (&primary_client, "primary")] {
        client
            .batch_execute(&format!(
                "INSERT INTO rows (origin) SELECT '{origin}' FROM generate_series(1, 20000)"
            ))
            .await
            .unwrap_or_else(|error| panic!("rows on the {origin}: {}", described(&error)));
    }
    assert_eq!(node(&standby_client).await.slot, Some(standby_slot));
    let nodes = standby_client
        .query(
            "SELECT DISTINCT d.datacenter * 32 + d.machine FROM rows r, snowmint.decode(r.id) d WHERE r.origin = 'standby'",
            &[],
        )
        .await
        .expect("the standby's nodes");
    let nodes: Vec<i32> = nodes.iter().map(|row| row.get(0)).collect();
    assert_eq!(nodes, vec![standby_slot as i32]);

    let mut seen = HashSet::new();
    let mut total = 0;
    for client in [&primary_client, &standby_client] {
        for row in client.query("SELECT id FROM rows", &[]).await.expect("ids") {
            let id: i64 = row.get(0);
            // The 5,000 rows from before the promotion are in both copies.
            seen.insert(id);
            total += 1;
        }
    }
    assert_eq!(total, 5_000 * 2 + 20_000 * 2);
    assert_eq!(
        seen.len(),
        5_000 + 20_000 * 2,
        "an ID was made by both servers"
    );
    assert_eq!(
        bigint(&standby_client, "SELECT count(*) FROM rows").await,
        25_000
    );
}
