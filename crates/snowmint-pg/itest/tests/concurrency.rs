//! One generator per server: 8 connections (8 backend processes) inserting
//! 100,000 rows each with `DEFAULT snowmint.next_id()` at the same time get
//! no duplicate, and each connection's IDs strictly increase.

mod common;

use std::collections::HashSet;

use common::{described, node_server};

const CONNECTIONS: i32 = 8;
const ROWS_PER_CONNECTION: i32 = 100_000;
/// Rows per INSERT statement: the connections' statements interleave.
const ROWS_PER_STATEMENT: i32 = 1_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_connections_never_share_an_id() {
    let (server, client) = node_server().await;
    client
        .batch_execute(
            "CREATE TABLE rows (
                 id bigint PRIMARY KEY DEFAULT snowmint.next_id(),
                 connection int NOT NULL,
                 n int NOT NULL
             )",
        )
        .await
        .expect("table");
    let mut tasks = Vec::new();
    for connection in 0..CONNECTIONS {
        let conn = server.admin().await;
        tasks.push(tokio::spawn(async move {
            let insert = conn
                .prepare(
                    "INSERT INTO rows (connection, n)
                     SELECT $1, n FROM generate_series($2::int, $3::int) AS n ORDER BY n",
                )
                .await
                .expect("prepare");
            let mut first = 1;
            while first <= ROWS_PER_CONNECTION {
                let last = first + ROWS_PER_STATEMENT - 1;
                conn.execute(&insert, &[&connection, &first, &last])
                    .await
                    .unwrap_or_else(|error| panic!("insert: {}", described(&error)));
                first = last + 1;
            }
        }));
    }
    for task in tasks {
        task.await.expect("an inserting connection");
    }
    let rows = client
        .query(
            "SELECT connection, id FROM rows ORDER BY connection, n",
            &[],
        )
        .await
        .expect("all rows");
    assert_eq!(rows.len(), (CONNECTIONS * ROWS_PER_CONNECTION) as usize);
    let mut seen = HashSet::with_capacity(rows.len());
    let mut previous: Option<(i32, i64)> = None;
    for row in &rows {
        let (connection, id): (i32, i64) = (row.get(0), row.get(1));
        assert!(seen.insert(id), "ID {id} was issued twice");
        if let Some((last_connection, last_id)) = previous
            && last_connection == connection
        {
            assert!(
                id > last_id,
                "connection {connection}: ID {id} after {last_id}"
            );
        }
        previous = Some((connection, id));
    }
    // The IDs of all connections together interleave in time: they came
    // from one sequence, not from eight generators taking turns.
    let backends = client
        .query_one(
            "SELECT count(DISTINCT connection) FROM (
                 SELECT connection FROM rows
                 WHERE id BETWEEN (SELECT min(id) FROM rows WHERE connection = 0)
                              AND (SELECT max(id) FROM rows WHERE connection = 0)
             ) AS overlap",
            &[],
        )
        .await
        .expect("overlap");
    assert!(
        backends.get::<_, i64>(0) > 1,
        "no other connection issued while connection 0 did: the inserts did not run at once"
    );
}
