//! Every wait of `next_id()` can be cancelled: restarted with its clock
//! 30 s behind the high-water mark (libfaketime, as in `restart.rs`) and a
//! `snowmint.mark_wait_max` of a minute, the server's `next_id()` waits for
//! the clock to pass the mark; `pg_cancel_backend` and a 200 ms
//! `statement_timeout` each end that wait at once. For a static node, and
//! for one that claims its node from etcd.

mod common;

use std::time::{Duration, Instant};

use common::fleet::{claimed_server, etcd, etcd_url, ready};
use common::{bigint, sql_error};
use snowmint_test_support::faketime::libfaketime;
use snowmint_test_support::servers::postgres::PostgresServer;
use tokio_postgres::Client;

/// The settings that make a restart with the clock 30 s back wait.
const WAIT_A_MINUTE: [(&str, &str); 2] = [
    ("snowmint.mark_wait_max", "60s"),
    ("snowmint.mark_step", "1s"),
];

/// Issues IDs (so that there is a mark), then restarts `server` (killed,
/// or stopped cleanly) with its clock 30 s behind it.
async fn restart_behind_the_mark(server: &PostgresServer, client: Client, kill: bool) {
    bigint(
        &client,
        "SELECT max(snowmint.next_id()) FROM generate_series(1, 1000)",
    )
    .await;
    drop(client);
    if kill {
        server.kill();
    } else {
        server.stop();
    }
    server.set_env("LD_PRELOAD", &libfaketime().display().to_string());
    server.set_env("FAKETIME", "-30");
    server.set_env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    server.restart().await;
}

/// Starts `SELECT snowmint.next_id()` on a connection of its own, and
/// returns the backend's pid once the call is waiting, with the task that
/// ends with its outcome.
async fn waiting_call(
    server: &PostgresServer,
    setup: &str,
) -> (
    i32,
    tokio::task::JoinHandle<(Result<i64, tokio_postgres::Error>, Instant)>,
) {
    let conn = server.admin().await;
    conn.batch_execute(setup).await.expect("setup");
    let pid = bigint(&conn, "SELECT pg_backend_pid()::bigint").await as i32;
    let task = tokio::spawn(async move {
        let outcome = conn
            .query_one("SELECT snowmint.next_id()", &[])
            .await
            .map(|row| row.get::<_, i64>(0));
        (outcome, Instant::now())
    });
    (pid, task)
}

/// Waits until backend `pid` waits in the extension's wait (its wait event
/// is `Extension`), which shows that the call is waiting, not failing.
async fn until_waiting(observer: &Client, pid: i32) {
    let started = Instant::now();
    loop {
        let rows = observer
            .query(
                "SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1 AND state = 'active'",
                &[&pid],
            )
            .await
            .expect("pg_stat_activity");
        if rows
            .first()
            .and_then(|row| row.get::<_, Option<String>>(0))
            .is_some_and(|event| event == "Extension")
        {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "backend {pid} never waited in next_id()"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `pg_cancel_backend` ends the wait within a second, and a 200 ms
/// `statement_timeout` ends another; the server serves on.
async fn both_cancels_end_the_wait(server: &PostgresServer) {
    let observer = server.admin().await;

    let (pid, call) = waiting_call(server, "SELECT 1").await;
    until_waiting(&observer, pid).await;
    let cancelled_at = Instant::now();
    let cancelled: bool = observer
        .query_one("SELECT pg_cancel_backend($1)", &[&pid])
        .await
        .expect("pg_cancel_backend")
        .get(0);
    assert!(cancelled);
    let (outcome, ended_at) = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the cancelled call did not end within 10 s")
        .expect("the call's task");
    let error = outcome.expect_err("a cancelled call returns no ID");
    let (code, message) = sql_error(&error);
    assert_eq!(code, "57014", "{message}");
    assert!(message.contains("user request"), "{message}");
    let took = ended_at.duration_since(cancelled_at);
    println!(
        "pg_cancel_backend ended the wait after {} ms",
        took.as_millis()
    );
    assert!(took < Duration::from_secs(1), "the cancel took {took:?}");

    let (_, call) = waiting_call(server, "SET statement_timeout = '200ms'").await;
    let started = Instant::now();
    let (outcome, ended_at) = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the timed-out call did not end within 10 s")
        .expect("the call's task");
    let error = outcome.expect_err("a timed-out call returns no ID");
    let (code, message) = sql_error(&error);
    assert_eq!(code, "57014", "{message}");
    assert!(message.contains("statement timeout"), "{message}");
    let took = ended_at.duration_since(started);
    println!(
        "statement_timeout 200ms ended the wait after {} ms",
        took.as_millis()
    );
    assert!(took < Duration::from_secs(1), "the timeout took {took:?}");

    assert_eq!(bigint(&observer, "SELECT (1 + 1)::bigint").await, 2);
    server.process().assert_running();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_static_nodes_wait_for_the_mark_can_be_cancelled() {
    let mut settings = vec![("snowmint.datacenter", "7"), ("snowmint.machine", "13")];
    settings.extend(WAIT_A_MINUTE);
    let (server, client) = common::server(&settings).await;
    restart_behind_the_mark(&server, client, true).await;
    both_cancels_end_the_wait(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claimed_nodes_wait_for_the_mark_can_be_cancelled() {
    let etcd = etcd().await;
    let (server, client) = claimed_server(&etcd_url(&etcd), "pg-cancel", &WAIT_A_MINUTE).await;
    let slot = ready(&client).await.slot;
    // Stopped cleanly, the server releases its slot and takes it back at
    // once, with its mark as where it resumes.
    restart_behind_the_mark(&server, client, false).await;
    let client = server.admin().await;
    assert_eq!(
        ready(&client).await.slot,
        slot,
        "another slot after the restart"
    );
    both_cancels_end_the_wait(&server).await;
}
