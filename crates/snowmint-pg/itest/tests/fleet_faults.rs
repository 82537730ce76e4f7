//! A claimed node under faults: the coordinator frozen past the TTL, a
//! server killed while another waits for its slot, a restart of the
//! postmaster, and a clean shutdown.
//!
//! The tests of this file measure times against the TTL, so they run one
//! at a time.

mod common;

use std::time::{Duration, Instant};

use common::fleet::{TTL, claimed_server, etcd, etcd_url, node, ready, ready_within};
use common::{bigint, described, failure};
use snowmint_test_support::servers::CoordinatorServer;
use tokio::sync::Mutex;

/// One test at a time: see the module's docs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());

/// The clock, in Unix ms.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as i64
}

/// The largest of `count` new IDs.
async fn issue(client: &tokio_postgres::Client, count: i32) -> i64 {
    client
        .query_one(
            "SELECT max(snowmint.next_id()) FROM generate_series(1, $1)",
            &[&count],
        )
        .await
        .unwrap_or_else(|error| panic!("next_id: {}", described(&error)))
        .get(0)
}

/// etcd frozen (SIGSTOP): `next_id()` refuses with 55000 before the TTL
/// has run out since the freeze, keeps refusing while it lasts, and issues
/// again, above every earlier ID, once etcd runs (SIGCONT).
#[tokio::test]
async fn a_frozen_coordinator_fences_the_node_before_the_ttl_ends() {
    let _one = ONE_AT_A_TIME.lock().await;
    let etcd = etcd().await;
    let (_server, client) = claimed_server(&etcd_url(&etcd), "pg-stop", &[]).await;
    ready(&client).await;
    let before = issue(&client, 1_000).await;

    let frozen_at = Instant::now();
    etcd.process().pause();
    // Refused once the mark cannot move (it is reserved half a step
    // ahead), or once the claim runs out, whichever comes first; fenced
    // (the claim withdrawn) before the TTL ends either way.
    let mut first_refusal = None;
    let (message, fenced_after) = loop {
        match client.query_one("SELECT snowmint.next_id()", &[]).await {
            Ok(_) => {
                assert!(
                    first_refusal.is_none(),
                    "an ID after a refusal, while etcd is frozen"
                );
                assert!(
                    frozen_at.elapsed() < TTL,
                    "still issuing {} ms after etcd froze, past the TTL",
                    frozen_at.elapsed().as_millis()
                );
            }
            Err(error) => {
                let (code, message) = common::sql_error(&error);
                assert_eq!(code, "55000", "{message}");
                assert!(
                    message.contains("fenced since") || message.contains("cannot reach"),
                    "{message}"
                );
                first_refusal.get_or_insert((frozen_at.elapsed(), message.clone()));
                if message.contains("fenced since") {
                    break (message, frozen_at.elapsed());
                }
            }
        }
        assert!(
            frozen_at.elapsed() < TTL,
            "not fenced {} ms after etcd froze, past the TTL",
            frozen_at.elapsed().as_millis()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let (refused_after, first_message) = first_refusal.expect("a refusal");
    println!(
        "after SIGSTOP (TTL {} ms): first refusal after {} ms ({first_message}); fenced after {} ms ({message})",
        TTL.as_millis(),
        refused_after.as_millis(),
        fenced_after.as_millis(),
    );
    assert!(fenced_after < TTL, "fenced after {fenced_after:?}");
    // Past the TTL, still frozen: still refused.
    tokio::time::sleep((TTL + Duration::from_secs(1)).saturating_sub(frozen_at.elapsed())).await;
    let (code, message) = failure(&client, "SELECT snowmint.next_id()").await;
    assert_eq!(code, "55000", "{message}");
    let row = node(&client).await;
    assert!(!row.ready && row.valid_until_ms.is_none(), "{row:?}");

    etcd.process().resume();
    ready_within(&client, Duration::from_secs(60)).await;
    let after = issue(&client, 1_000).await;
    assert!(
        after > before,
        "ID {after} after the freeze, {before} before it"
    );
}

/// A server killed (kill -9) while another waits for its one slot: the
/// slot passes only once the dead server's claim has run out, and the new
/// holder's IDs are above every ID the dead one issued.
#[tokio::test]
async fn a_killed_servers_slot_passes_only_after_the_ttl() {
    let _one = ONE_AT_A_TIME.lock().await;
    let etcd = etcd().await;
    let url = etcd_url(&etcd);
    let only = [("snowmint.slots", "7")];
    let (first, first_client) = claimed_server(&url, "pg-kill", &only).await;
    assert_eq!(ready(&first_client).await.slot, Some(7));
    first_client
        .batch_execute("CREATE TABLE rows (id bigint PRIMARY KEY DEFAULT snowmint.next_id())")
        .await
        .expect("table");
    first_client
        .batch_execute("INSERT INTO rows SELECT FROM generate_series(1, 20000)")
        .await
        .expect("rows");
    let dead_last = bigint(&first_client, "SELECT max(id) FROM rows").await;

    let (_second, second_client) = claimed_server(&url, "pg-kill", &only).await;
    // Waiting: the one slot is held.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let waiting = node(&second_client).await;
    assert!(!waiting.ready, "{waiting:?}");
    let reason = waiting.reason.expect("a reason");
    assert!(
        reason.contains("the only slot of fleet") && reason.contains("taken"),
        "{reason}"
    );
    let (code, message) = failure(&second_client, "SELECT snowmint.next_id()").await;
    assert_eq!(code, "55000", "{message}");
    assert!(message.contains("claiming"), "{message}");

    // The dead server's claim is in force up to here, at least.
    let held = node(&first_client).await;
    assert!(
        held.ready,
        "the first server lost its slot before the kill: {held:?}"
    );
    let held_until = held.valid_until_ms.expect("a deadline");
    drop(first_client);
    first.kill();
    let killed_at = Instant::now();
    // The second server refuses (not ready) at least until the dead
    // server's claim has run out: the latest moment it was seen not ready
    // is at or after that deadline.
    let mut last_waiting_ms = now_ms();
    let row = loop {
        let row = node(&second_client).await;
        if row.ready {
            break row;
        }
        last_waiting_ms = now_ms();
        assert!(
            killed_at.elapsed() < Duration::from_secs(30),
            "the slot did not pass within 30 s: {:?}",
            row.reason
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    println!(
        "slot 7 passed {} ms after the kill (TTL {} ms); the dead server's claim ran to {} ms after the kill",
        killed_at.elapsed().as_millis(),
        TTL.as_millis(),
        held_until - (now_ms() - killed_at.elapsed().as_millis() as i64)
    );
    assert_eq!(row.slot, Some(7));
    assert!(
        last_waiting_ms >= held_until,
        "the second server held slot 7 before {held_until} ms, when the dead server's claim could still be in force (last seen waiting at {last_waiting_ms} ms)"
    );
    let first_new = bigint(&second_client, "SELECT snowmint.next_id()").await;
    assert!(
        first_new > dead_last,
        "the new holder's ID {first_new} is not above the dead server's last {dead_last}"
    );
}

/// Restarted (a fast shutdown, then a start), the server takes back the
/// slot it held: the shutdown released it at once, and the worker tries
/// it first. Its IDs go on above the earlier ones.
#[tokio::test]
async fn a_restarted_server_takes_its_slot_back() {
    let _one = ONE_AT_A_TIME.lock().await;
    let etcd = etcd().await;
    let (server, client) = claimed_server(&etcd_url(&etcd), "pg-restart", &[]).await;
    let held = ready(&client).await.slot.expect("a slot");
    let before = issue(&client, 10_000).await;
    assert_eq!(
        etcd.slot_holders("pg-restart")
            .await
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        vec![held as u64]
    );
    drop(client);

    server.stop();
    // Released by the shutdown, not left to run out.
    assert!(
        etcd.slot_holders("pg-restart").await.is_empty(),
        "the slot key outlived the shutdown"
    );
    server.restart().await;
    let client = server.admin().await;
    let row = ready(&client).await;
    assert_eq!(row.slot, Some(held), "another slot after the restart");
    let after = issue(&client, 10).await;
    assert!(
        after > before,
        "ID {after} after the restart, {before} before it"
    );

    // Killed and started at once: its old claim still holds the slot for
    // a while, so it claims another, and still issues above its last ID.
    drop(client);
    server.kill();
    server.restart().await;
    let client = server.admin().await;
    let row = ready(&client).await;
    let again = issue(&client, 10).await;
    assert!(
        again > after,
        "ID {again} after the kill, {after} before it"
    );
    println!("after kill -9 and restart: slot {:?}", row.slot);
}
