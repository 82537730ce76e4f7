//! Wrong claim settings: contradictions stop the server at start with a
//! message naming the settings; a value that cannot be read, or a
//! coordinator that cannot be reached, leaves a server that answers
//! everything else and says, in `next_id()` and `node()`, why it cannot
//! issue. No backend crashes.

mod common;

use std::time::{Duration, Instant};

use common::fleet::node;
use common::{bigint, failure, require_installed, server};
use snowmint_test_support::servers::postgres::PostgresServer;

/// A port nothing listens on: bound a moment ago, then let go.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// The log of a server started with `settings`, which must refuse to start.
async fn start_failure(settings: &[(&str, &str)]) -> String {
    require_installed();
    let mut builder = PostgresServer::builder().setting("shared_preload_libraries", "snowmint");
    for (name, value) in settings {
        builder = builder.setting(name, value);
    }
    builder.start_failure().await
}

/// A node given and a coordinator, or claim settings without one: the
/// server does not start, and its log names the settings.
#[tokio::test]
async fn contradictions_stop_the_server_at_start() {
    let url = format!("etcd://127.0.0.1:{}", closed_port());
    let log = start_failure(&[("snowmint.coordinator", &url), ("snowmint.slot", "3")]).await;
    assert!(
        log.contains("FATAL")
            && log.contains("snowmint.coordinator and snowmint.slot are both set"),
        "{log}"
    );
    let log = start_failure(&[
        ("snowmint.coordinator", &url),
        ("snowmint.datacenter", "1"),
        ("snowmint.machine", "2"),
    ])
    .await;
    assert!(
        log.contains(
            "snowmint.coordinator and snowmint.datacenter and snowmint.machine are both set"
        ),
        "{log}"
    );
    let log = start_failure(&[
        ("snowmint.datacenter", "1"),
        ("snowmint.machine", "2"),
        ("snowmint.fleet", "ids"),
        ("snowmint.claim_ttl", "5s"),
    ])
    .await;
    assert!(
        log.contains(
            "snowmint.fleet and snowmint.claim_ttl only applies with snowmint.coordinator"
        ),
        "{log}"
    );
}

/// Each unreadable value: `next_id()` and `node()` raise 22023 naming the
/// setting, the value and what is accepted; the password of a URL is never
/// shown; everything else works.
#[tokio::test]
async fn unreadable_values_are_named_and_the_server_serves_on() {
    let cases = [
        (
            "snowmint.coordinator",
            "postgres://ids:hunter2@db.example:99999/app",
            "port 99999 is out of range",
        ),
        ("snowmint.coordinator", "consul://127.0.0.1:8500", "consul"),
        (
            "snowmint.slots",
            "9-3",
            "the first slot 9 is after the last 3",
        ),
        (
            "snowmint.slots",
            "1000-1024",
            "slot 1024 is out of range (0..=1023)",
        ),
        (
            "snowmint.claim_ttl",
            "500ms",
            "claim_ttl 500ms is out of range (1s..=1h)",
        ),
        ("snowmint.fleet", "a/b", "fleet name \"a/b\" is invalid"),
    ];
    for (name, value, expected) in cases {
        let mut settings = vec![("snowmint.coordinator", "etcd://127.0.0.1:2379")];
        settings.retain(|(known, _)| *known != name);
        settings.push((name, value));
        let (server, client) = server(&settings).await;
        for sql in ["SELECT snowmint.next_id()", "SELECT * FROM snowmint.node()"] {
            let (code, message) = failure(&client, sql).await;
            assert_eq!(code, "22023", "{name} = {value}, {sql}: {message}");
            assert!(
                message.contains(name) && message.contains(expected),
                "{name} = {value}, {sql}: {message}"
            );
            assert!(!message.contains("hunter2"), "{message}");
        }
        assert_eq!(bigint(&client, "SELECT (40 + 2)::bigint").await, 42);
        let id = bigint(
            &client,
            "SELECT snowmint.encode(to_timestamp(1700000000), 7, 13, 4095)",
        )
        .await;
        assert_eq!(id, 1_724_551_110_457_221_119);
        // No worker was started: the log says why, once, at start.
        assert!(
            server.log_tail().contains("no claim worker is started"),
            "{}",
            server.log_tail()
        );
        server.process().assert_running();
    }
}

/// A coordinator nobody answers at: `node()` says the server is not ready
/// and why (its password masked), `next_id()` refuses with 55000 at once,
/// many times, and the server serves everything else.
#[tokio::test]
async fn an_unreachable_coordinator_leaves_a_node_that_is_not_ready() {
    let secret = "s3cret-word";
    for url in [
        format!("etcd://127.0.0.1:{}", closed_port()),
        format!(
            "postgres://snowmint:{secret}@127.0.0.1:{}/ids",
            closed_port()
        ),
    ] {
        let (server, client) = server(&[("snowmint.coordinator", url.as_str())]).await;
        // Give the worker time to try, and fail, at least once.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let row = node(&client).await;
        assert!(!row.ready, "{row:?}");
        let reason = row.reason.clone().expect("a reason");
        assert!(
            reason.contains("coordinator unreachable") && reason.contains("cannot reach"),
            "{reason}"
        );
        assert_eq!(
            (row.slot, row.generation, row.valid_until_ms),
            (None, None, None)
        );
        let shown = row.coordinator.expect("the coordinator");
        assert!(
            !shown.contains(secret) && !reason.contains(secret),
            "{shown} / {reason}"
        );
        for _ in 0..50 {
            let started = Instant::now();
            let (code, message) = failure(&client, "SELECT snowmint.next_id()").await;
            assert_eq!(code, "55000", "{message}");
            assert!(message.contains("coordinator unreachable"), "{message}");
            assert!(!message.contains(secret), "{message}");
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "a refusal took {:?}",
                started.elapsed()
            );
        }
        assert_eq!(
            bigint(
                &client,
                "SELECT count(*) FROM pg_class WHERE relname = 'pg_class'"
            )
            .await,
            1
        );
        assert!(!server.log_tail().contains(secret), "{}", server.log_tail());
        server.process().assert_running();
    }
}

/// The coordinator setting is hidden from users who are not superusers (it
/// may hold a password).
#[tokio::test]
async fn the_coordinator_setting_is_for_superusers_only() {
    let (server, client) = server(&[(
        "snowmint.coordinator",
        "postgres://ids:hunter2@127.0.0.1:1/ids",
    )])
    .await;
    client
        .batch_execute("CREATE ROLE plain LOGIN PASSWORD 'plain'")
        .await
        .expect("role");
    let (plain, connection) = tokio_postgres::connect(
        &server.login_url("plain", "plain", "postgres"),
        tokio_postgres::NoTls,
    )
    .await
    .expect("a plain user's connection");
    tokio::spawn(connection);
    let (code, message) = failure(&plain, "SHOW snowmint.coordinator").await;
    assert_eq!(code, "42501", "{message}");
    let rows = plain
        .query(
            "SELECT setting FROM pg_settings WHERE name = 'snowmint.coordinator'",
            &[],
        )
        .await
        .expect("pg_settings");
    assert!(
        rows.iter().all(|row| !row
            .get::<_, Option<String>>(0)
            .unwrap_or_default()
            .contains("hunter2")),
        "pg_settings shows the password to a plain user"
    );
}

/// Issue 34, finding 12: `snowmint.coordinator` is readable by superusers
/// and members of `pg_read_all_settings` only, and so is what `node()`
/// shows of it. A role that may not read the setting (`SHOW` refuses it
/// with 42501) gets a NULL coordinator, and neither the URL nor its host
/// in the reasons of `node()` and `next_id()`; a member of
/// `pg_read_all_settings` sees it, as the superuser does.
#[tokio::test]
async fn only_roles_that_may_read_the_setting_see_the_coordinator() {
    let host = format!("127.0.0.1:{}", closed_port());
    let url = format!("postgres://snowmint@{host}/ids?passfile=/etc/snowmint/pgpass");
    let (_server, client) = server(&[("snowmint.coordinator", url.as_str())]).await;
    client
        .batch_execute(
            "CREATE ROLE app; CREATE ROLE auditor IN ROLE pg_read_all_settings;
             GRANT USAGE ON SCHEMA snowmint TO app, auditor;",
        )
        .await
        .unwrap();
    // Until the worker has tried, and failed, to reach it.
    let deadline = Instant::now() + Duration::from_secs(60);
    let superuser = loop {
        let row = node(&client).await;
        if row
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("unreachable"))
        {
            break row;
        }
        assert!(
            Instant::now() < deadline,
            "the worker never said why: {row:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let shown = superuser
        .coordinator
        .clone()
        .expect("the superuser sees it");
    assert!(
        shown.contains(&host) && shown.contains("passfile"),
        "{shown}"
    );
    assert!(
        superuser.reason.as_deref().unwrap().contains(&host),
        "{superuser:?}"
    );

    client.batch_execute("SET ROLE app").await.unwrap();
    let (code, message) = failure(&client, "SHOW snowmint.coordinator").await;
    assert_eq!(code, "42501", "{message}");
    let row = node(&client).await;
    assert_eq!(row.coordinator, None, "{row:?}");
    let reason = row.reason.clone().expect("a reason");
    assert!(reason.contains("coordinator unreachable"), "{reason}");
    assert!(
        !reason.contains(&host) && !reason.contains("passfile"),
        "{reason}"
    );
    assert_eq!(
        (row.source.as_str(), row.fleet.as_deref()),
        ("postgres", Some("default"))
    );
    let (code, message) = failure(&client, "SELECT snowmint.next_id()").await;
    assert_eq!(code, "55000", "{message}");
    assert!(message.contains("coordinator unreachable"), "{message}");
    assert!(!message.contains(&host), "{message}");

    client.batch_execute("SET ROLE auditor").await.unwrap();
    let row = node(&client).await;
    assert_eq!(row.coordinator.as_deref(), Some(shown.as_str()));
    assert!(row.reason.as_deref().unwrap().contains(&host), "{row:?}");
    client.batch_execute("RESET ROLE").await.unwrap();
}
