//! The PostgreSQL test server does what the tests that use it rely on: it
//! answers queries, keeps its data over a crash and a clean stop, freezes
//! as a whole, takes settings and an environment, and never runs as root.

use std::time::Duration;

use snowmint_test_support::faketime::libfaketime;
use snowmint_test_support::servers::postgres::{ADMIN_USER, PostgresServer};
use tokio_postgres::NoTls;

/// How long a query may take while the server is not frozen.
const QUERY_LIMIT: Duration = Duration::from_secs(20);

async fn count(client: &tokio_postgres::Client) -> i64 {
    let row = tokio::time::timeout(QUERY_LIMIT, client.query_one("SELECT count(*) FROM t", &[]))
        .await
        .expect("the count did not answer within 20 s")
        .expect("the count failed");
    row.get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keeps_its_data_over_a_crash_and_a_clean_stop() {
    let server = PostgresServer::builder().start().await;
    let admin = server.admin().await;
    admin
        .batch_execute("CREATE TABLE t (n int); INSERT INTO t VALUES (1), (2)")
        .await
        .unwrap();

    server.kill();
    server.restart().await;
    assert_eq!(
        count(&server.admin().await).await,
        2,
        "lost rows in a crash"
    );

    server.stop();
    server.restart().await;
    assert_eq!(count(&server.admin().await).await, 2, "lost rows in a stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_freezes_the_backends_too() {
    let server = PostgresServer::builder().start().await;
    let admin = server.admin().await;
    admin.batch_execute("CREATE TABLE t (n int)").await.unwrap();

    // The backend serving this open connection is a process of its own:
    // it must freeze with the postmaster.
    server.pause();
    let frozen = tokio::time::timeout(Duration::from_millis(500), count(&admin)).await;
    assert!(frozen.is_err(), "a paused server answered: {frozen:?}");
    server.resume();
    assert_eq!(count(&admin).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn takes_settings_the_environment_and_a_password() {
    let server = PostgresServer::builder()
        .setting("application_name", "from-the-builder")
        .setting("snowmint_test.anything", "7")
        .env("LD_PRELOAD", &libfaketime().display().to_string())
        .env("FAKETIME", "-1d")
        .start()
        .await;
    let admin = server.admin().await;
    let setting = |name: &'static str| {
        let admin = &admin;
        async move {
            let row = admin
                .query_one("SELECT current_setting($1)", &[&name])
                .await
                .unwrap();
            row.get::<_, String>(0)
        }
    };
    assert_eq!(setting("snowmint_test.anything").await, "7");
    assert_eq!(setting("listen_addresses").await, "127.0.0.1");
    let command_line = admin
        .query_one("SELECT pg_read_file('postmaster.opts')", &[])
        .await
        .unwrap()
        .get::<_, String>(0);
    assert!(
        command_line.contains("application_name=from-the-builder"),
        "{command_line}"
    );

    // The environment reaches the server: its clock is a day behind.
    let row = admin
        .query_one("SELECT extract(epoch FROM clock_timestamp())::float8", &[])
        .await
        .unwrap();
    let server_now: f64 = row.get(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let behind = now - server_now;
    assert!(
        (86_000.0..86_800.0).contains(&behind),
        "the server's clock is {behind} s behind, not a day"
    );

    // Over TCP the password is checked.
    let wrong = server.login_url(ADMIN_USER, "not-the-password", "postgres");
    let refused = tokio_postgres::connect(&wrong, NoTls).await;
    let Err(error) = refused else {
        panic!("a wrong password was accepted");
    };
    let reason = error.as_db_error().map(|db| db.message().to_owned());
    assert!(
        reason
            .as_deref()
            .is_some_and(|text| text.contains("password authentication failed")),
        "{error:?}"
    );

    // Not as root: initdb and postgres refuse it, and the server runs as
    // the test's own user when that is not root.
    let row = admin
        .query_one("SELECT current_setting('data_directory')", &[])
        .await
        .unwrap();
    let data: String = row.get(0);
    assert_eq!(std::path::Path::new(&data), server.data_dir());
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&data).unwrap());
    assert_ne!(owner, 0, "the data directory belongs to root");
}
