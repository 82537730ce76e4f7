//! The high-water mark across restarts: after a kill -9 and an immediate
//! restart, and after a restart with the clock set back (libfaketime), no
//! ID at or below the mark is issued.

mod common;

use common::{bigint, described, failure, mark_in_file, node_server};
use snowmint_test_support::faketime::libfaketime;

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

/// The numbers in `text` that look like Unix milliseconds (13 digits).
fn unix_ms_in(text: &str) -> Vec<i64> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|digits| digits.len() == 13)
        .map(|digits| digits.parse().expect("digits"))
        .collect()
}

/// The Unix ms of an ID (twitter layout).
async fn time_of(client: &tokio_postgres::Client, id: i64) -> i64 {
    bigint(
        client,
        &format!("SELECT timestamp_ms FROM snowmint.decode({id})"),
    )
    .await
}

/// Killed with every process (SIGKILL, no shutdown) and started again at
/// once, the server issues only IDs above everything issued before and
/// above the mark on disk.
#[tokio::test]
async fn a_kill_and_an_immediate_restart_issue_above_the_mark() {
    let (server, client) = node_server().await;
    let before = issue(&client, 50_000).await;
    let mark = mark_in_file(&server).expect("a mark file after IDs");
    assert!(
        mark >= time_of(&client, before).await,
        "the mark {mark} covers the last ID"
    );
    drop(client);
    server.kill();
    server.restart().await;
    let client = server.admin().await;
    let after = bigint(&client, "SELECT snowmint.next_id()").await;
    assert!(
        after > before,
        "ID {after} after a restart, {before} before it"
    );
    assert!(
        time_of(&client, after).await > mark,
        "ID {after} is not above the mark {mark}"
    );
}

/// Restarted with its clock an hour behind, the server refuses, naming the
/// mark and the clock's time, and issues nothing; with the clock right
/// again, it issues above the mark.
#[tokio::test]
async fn a_clock_set_back_is_refused_with_both_times() {
    let (server, client) = node_server().await;
    let before = issue(&client, 10_000).await;
    let mark = mark_in_file(&server).expect("a mark file after IDs");
    drop(client);
    server.stop();
    server.set_env("LD_PRELOAD", &libfaketime().display().to_string());
    server.set_env("FAKETIME", "-1h");
    server.set_env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    server.restart().await;
    let client = server.admin().await;
    let clock_ms = bigint(
        &client,
        "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
    )
    .await;
    assert!(
        clock_ms < mark - 3_000_000,
        "libfaketime did not set the server's clock back: it reads {clock_ms}, the mark is {mark}"
    );
    for _ in 0..3 {
        let (code, message) = failure(&client, "SELECT snowmint.next_id()").await;
        assert_eq!(code, "55000", "{message}");
        let times = unix_ms_in(&message);
        assert!(
            times.contains(&mark),
            "{message:?} does not name the mark {mark}"
        );
        assert!(
            times.iter().any(|t| (t - clock_ms).abs() < 60_000),
            "{message:?} does not name the clock's time (about {clock_ms})"
        );
    }
    assert_eq!(
        mark_in_file(&server),
        Some(mark),
        "a refusal writes no mark"
    );
    drop(client);

    server.stop();
    server.remove_env("LD_PRELOAD");
    server.remove_env("FAKETIME");
    server.restart().await;
    let client = server.admin().await;
    let after = bigint(&client, "SELECT snowmint.next_id()").await;
    assert!(after > before);
    assert!(time_of(&client, after).await > mark);
}

/// With `snowmint.clock_policy = wait`, a clock a little behind the mark
/// after a restart is waited out rather than refused.
#[tokio::test]
async fn the_wait_policy_waits_out_a_small_gap() {
    let (server, client) = common::server(&[
        ("snowmint.datacenter", "7"),
        ("snowmint.machine", "13"),
        ("snowmint.clock_policy", "wait"),
        ("snowmint.clock_wait_max", "10s"),
        ("snowmint.mark_step", "3s"),
        ("snowmint.mark_wait_max", "0"),
    ])
    .await;
    // mark_step 3s is longer than mark_wait_max 0: refused as a setting.
    let (code, message) = failure(&client, "SELECT snowmint.next_id()").await;
    assert_eq!(code, "22023", "{message}");
    assert!(message.contains("snowmint.mark_step"), "{message}");
    drop(client);
    drop(server);

    let (server, client) = common::server(&[
        ("snowmint.datacenter", "7"),
        ("snowmint.machine", "13"),
        ("snowmint.clock_policy", "wait"),
        ("snowmint.clock_wait_max", "10s"),
        ("snowmint.mark_step", "2s"),
        ("snowmint.mark_wait_max", "2s"),
    ])
    .await;
    let before = issue(&client, 1_000).await;
    let mark = mark_in_file(&server).expect("a mark");
    drop(client);
    server.kill();
    // Restarted 1 s behind: the mark is up to 3 s ahead of the clock,
    // more than mark_wait_max, so the generator's wait policy waits.
    server.set_env("LD_PRELOAD", &libfaketime().display().to_string());
    server.set_env("FAKETIME", "-1");
    server.set_env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    server.restart().await;
    let client = server.admin().await;
    let after = bigint(&client, "SELECT snowmint.next_id()").await;
    assert!(after > before);
    assert!(time_of(&client, after).await > mark);
}
