//! `next_id()` and `node()` on a real server: the settings it needs, what
//! it refuses without them, and `id_range` selecting exactly the rows made
//! in a window.

mod common;

use common::{
    SECOND_TICKS, bigint, failure, mark_in_file, node_server, pairs_per_second, require_installed,
    server, slot_order,
};
use snowmint_test_support::servers::postgres::PostgresServer;

/// Without a node `next_id()` refuses, naming the settings to set, and
/// `node()` shows the node as NULL; with one set badly, the error names the
/// setting, the value and the range.
#[tokio::test]
async fn next_id_needs_a_node_and_says_so() {
    let (_server, client) = server(&[]).await;
    let (code, message) = failure(&client, "SELECT snowmint.next_id()").await;
    assert_eq!(code, "55000", "{message}");
    for word in ["snowmint.datacenter", "snowmint.machine", "snowmint.slot"] {
        assert!(message.contains(word), "{message:?} lacks {word}");
    }
    let row = client
        .query_one(
            "SELECT datacenter, machine, layout, clock_policy, high_water_ms FROM snowmint.node()",
            &[],
        )
        .await
        .expect("node()");
    assert_eq!(row.get::<_, Option<i32>>(0), None);
    assert_eq!(row.get::<_, Option<i32>>(1), None);
    assert_eq!(row.get::<_, String>(2), "twitter");
    assert_eq!(row.get::<_, String>(3), "refuse");
    assert_eq!(row.get::<_, Option<i64>>(4), None);

    let (_server, client) =
        server(&[("snowmint.datacenter", "40"), ("snowmint.machine", "1")]).await;
    let (code, message) = failure(&client, "SELECT snowmint.next_id()").await;
    assert_eq!(code, "22003", "{message}");
    for word in ["snowmint.datacenter", "40", "0..=31"] {
        assert!(message.contains(word), "{message:?} lacks {word}");
    }

    let (_server, client) = server(&[("snowmint.machine", "1")]).await;
    let (code, message) = failure(&client, "SELECT snowmint.next_id()").await;
    assert_eq!(code, "55000", "{message}");
    assert!(message.contains("snowmint.datacenter"), "{message}");

    let (_server, client) = server(&[("snowmint.slot", "1024")]).await;
    let (code, message) = failure(&client, "SELECT snowmint.next_id()").await;
    assert_eq!(code, "22003", "{message}");
    for word in ["slot 1024", "0..=1023"] {
        assert!(message.contains(word), "{message:?} lacks {word}");
    }

    let (_server, client) =
        server(&[("snowmint.slot", "45"), ("snowmint.layout", "sometimes")]).await;
    let (code, message) = failure(&client, "SELECT snowmint.next_id()").await;
    assert_eq!(code, "22023", "{message}");
    assert!(
        message.contains("snowmint.layout") && message.contains("sometimes"),
        "{message}"
    );
}

/// Loaded by CREATE EXTENSION alone (not preloaded), the calculator works
/// and `next_id()` says that the library must be preloaded.
#[tokio::test]
async fn next_id_needs_the_library_preloaded() {
    require_installed();
    let server = PostgresServer::builder()
        .setting("snowmint.datacenter", "1")
        .setting("snowmint.machine", "2")
        .start()
        .await;
    let client = server.admin().await;
    client
        .batch_execute("CREATE EXTENSION snowmint")
        .await
        .expect("CREATE EXTENSION");
    for sql in ["SELECT snowmint.next_id()", "SELECT * FROM snowmint.node()"] {
        let (code, message) = failure(&client, sql).await;
        assert_eq!(code, "55000", "{sql}: {message}");
        assert!(
            message.contains("shared_preload_libraries"),
            "{sql}: {message}"
        );
    }
    let id = bigint(
        &client,
        "SELECT snowmint.encode(to_timestamp(1700000000), 7, 13, 4095)",
    )
    .await;
    assert_eq!(id, 1_724_551_110_457_221_119);
}

/// IDs from the node set by slot carry it; `node()` shows the node, the
/// layout and the mark on disk.
#[tokio::test]
async fn ids_carry_the_node_and_node_shows_the_mark() {
    let (server, client) = server(&[("snowmint.slot", "45"), ("snowmint.layout", "discord")]).await;
    let id = bigint(&client, "SELECT snowmint.next_id()").await;
    let row = client
        .query_one(
            "SELECT datacenter, machine FROM snowmint.decode($1, 'discord')",
            &[&id],
        )
        .await
        .expect("decode");
    // Slot 45 is datacenter 1, machine 13 (45 = 1 * 32 + 13).
    assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (1, 13));
    let node = client
        .query_one(
            "SELECT datacenter, machine, slot, layout, high_water_ms, snowmint.from_timestamp(high_water, 'discord') FROM snowmint.node()",
            &[],
        )
        .await
        .expect("node()");
    assert_eq!(node.get::<_, Option<i32>>(0), Some(1));
    assert_eq!(node.get::<_, Option<i32>>(1), Some(13));
    assert_eq!(node.get::<_, Option<i64>>(2), Some(45));
    assert_eq!(node.get::<_, String>(3), "discord");
    let mark = node.get::<_, Option<i64>>(4).expect("a mark after an ID");
    assert_eq!(
        Some(mark),
        mark_in_file(&server),
        "node() shows the mark on disk"
    );
    let id_ms = bigint(
        &client,
        &format!("SELECT timestamp_ms FROM snowmint.decode({id}, 'discord')"),
    )
    .await;
    assert!(mark >= id_ms, "mark {mark} below the ID's time {id_ms}");
}

/// Rows made in three batches, a few milliseconds apart: `id BETWEEN` the
/// range of the middle batch's window selects exactly that batch.
#[tokio::test]
async fn id_range_selects_exactly_the_rows_of_a_window() {
    let (_server, client) = node_server().await;
    client
        .batch_execute(
            "CREATE TABLE events (id bigint PRIMARY KEY DEFAULT snowmint.next_id(), batch int NOT NULL);
             CREATE TABLE windows (batch int, from_time timestamptz, to_time timestamptz);",
        )
        .await
        .expect("tables");
    for batch in 1..=3 {
        // clock_timestamp() is the wall clock, read when called: the window
        // of a batch starts before its first ID and ends after its last.
        client
            .batch_execute(&format!(
                "SELECT pg_sleep(0.005);
                 INSERT INTO windows VALUES ({batch}, clock_timestamp(), NULL);
                 INSERT INTO events (batch) SELECT {batch} FROM generate_series(1, 2000);
                 UPDATE windows SET to_time = clock_timestamp() WHERE batch = {batch};
                 SELECT pg_sleep(0.005);"
            ))
            .await
            .expect("a batch");
    }
    let rows = client
        .query(
            "SELECT e.batch, count(*)
             FROM windows w, snowmint.id_range(w.from_time, w.to_time) r, events e
             WHERE w.batch = 2 AND e.id BETWEEN r.min AND r.max
             GROUP BY e.batch ORDER BY e.batch",
            &[],
        )
        .await
        .expect("the window's rows");
    let found: Vec<(i32, i64)> = rows.iter().map(|row| (row.get(0), row.get(1))).collect();
    assert_eq!(
        found,
        vec![(2, 2000)],
        "batch, rows in the window of batch 2"
    );
}

/// The first SQL block after the heading `heading` of `document` (from
/// the repository's root).
fn first_sql_block(document: &str, heading: &str) -> String {
    let path = format!("{}/../../../{document}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    let at = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("{document} has no heading {heading:?}"));
    let section = &text[at..];
    let start = section.find("```sql\n").expect("an sql block") + "```sql\n".len();
    section[start..start + section[start..].find("```").expect("the block's end")].to_owned()
}

/// The PostgreSQL guide's example runs as shown (after CREATE EXTENSION,
/// which `server` has done), and its table gets IDs of this server's node.
/// The README's, a part of it, runs with it.
#[tokio::test]
async fn the_guides_example_runs() {
    let block = first_sql_block("docs/postgresql.md", "## A server's node");
    let readme = first_sql_block("README.md", "### PostgreSQL");
    assert!(
        block.contains(&readme),
        "README.md's PostgreSQL example is no part of docs/postgresql.md's:\n{readme}"
    );
    let (_server, client) =
        server(&[("snowmint.datacenter", "3"), ("snowmint.machine", "7")]).await;
    let sql = block.replace("CREATE EXTENSION snowmint;", "");
    client.batch_execute(&sql).await.unwrap_or_else(|error| {
        panic!("the guide's example: {}\n{sql}", common::described(&error))
    });
    let rows = client
        .query(
            "SELECT d.datacenter, d.machine FROM orders o, snowmint.decode(o.id) d",
            &[],
        )
        .await
        .expect("orders");
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (3, 7));
    }
}

/// `snowmint.slots_per_node = 2` on slot 6: the server issues from slots 6
/// and 7, each second's IDs (a layout of 1 s ticks and a 4-bit sequence,
/// 16 IDs per slot) in the order slot 6's sequence then slot 7's, so one
/// second holds up to 32 where one slot holds 16; a count that is not a
/// power of two, or a block past the last slot, is refused naming the
/// setting.
#[tokio::test]
async fn a_server_of_two_slots_issues_from_both_in_order() {
    let (_server, client) = server(&[
        ("snowmint.slot", "6"),
        ("snowmint.slots_per_node", "2"),
        ("snowmint.layout", SECOND_TICKS),
    ])
    .await;
    let per_second = pairs_per_second(&client, 40).await;
    let order = slot_order(6, 2);
    for (second, pairs) in &per_second {
        assert_eq!(pairs[..], order[..pairs.len()], "second {second}");
    }
    let most = per_second.values().map(Vec::len).max();
    assert_eq!(most, Some(32), "{per_second:?}");

    for (slots, slot, words) in [
        (
            "3",
            "6",
            &[
                "snowmint.slots_per_node",
                "slots per node 3",
                "power of two",
            ][..],
        ),
        (
            "4",
            "1022",
            &[
                "snowmint.slots_per_node",
                "slots 1022..=1025",
                "last slot 1023",
            ][..],
        ),
    ] {
        let (_server, client) =
            server(&[("snowmint.slot", slot), ("snowmint.slots_per_node", slots)]).await;
        let (code, message) = failure(&client, "SELECT snowmint.next_id()").await;
        assert_eq!(code, "22003", "{message}");
        for word in words {
            assert!(message.contains(word), "{message:?} lacks {word}");
        }
    }
}
