//! What the extension's tests share: a real server with the extension,
//! SQL errors taken apart, the real `snowmint` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use snowmint_test_support::servers::postgres::{PostgresServer, bindir};
use tokio_postgres::Client;

/// The twitter layout's epoch, written out here rather than taken from the
/// code under test.
pub const TWITTER_EPOCH_MS: i64 = 1_288_834_974_657;

/// Panics, saying how to install the extension, unless the server's
/// library directory holds it.
pub fn require_installed() {
    let pg_config = bindir().join("pg_config");
    let output = Command::new(&pg_config)
        .arg("--pkglibdir")
        .output()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", pg_config.display()));
    let libdir = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let library = Path::new(&libdir).join("snowmint.so");
    assert!(
        library.exists(),
        "the snowmint extension is not installed ({} is missing): run scripts/pg-install",
        library.display()
    );
}

/// A server that preloads the extension, with `settings` on top, and a
/// superuser connection on which `CREATE EXTENSION snowmint` has run.
pub async fn server(settings: &[(&str, &str)]) -> (PostgresServer, Client) {
    require_installed();
    let mut builder = PostgresServer::builder().setting("shared_preload_libraries", "snowmint");
    for (name, value) in settings {
        builder = builder.setting(name, value);
    }
    let server = builder.start().await;
    let client = server.admin().await;
    client
        .batch_execute("CREATE EXTENSION snowmint")
        .await
        .unwrap_or_else(|error| panic!("CREATE EXTENSION snowmint: {}", described(&error)));
    (server, client)
}

/// A server on node (7, 13), the worked example's.
pub async fn node_server() -> (PostgresServer, Client) {
    server(&[("snowmint.datacenter", "7"), ("snowmint.machine", "13")]).await
}

/// An SQL error's SQLSTATE and message.
pub fn sql_error(error: &tokio_postgres::Error) -> (String, String) {
    match error.as_db_error() {
        Some(db) => (db.code().code().to_owned(), db.message().to_owned()),
        None => panic!("not an error from the server: {error}"),
    }
}

/// An error with the server's message, for panics.
pub fn described(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => error.to_string(),
    }
}

/// Runs `sql`, which must fail, and returns its SQLSTATE and message.
pub async fn failure(client: &Client, sql: &str) -> (String, String) {
    match client.query(sql, &[]).await {
        Ok(rows) => panic!("{sql} should fail, and gave {} rows", rows.len()),
        Err(error) => sql_error(&error),
    }
}

/// One bigint from `sql`.
pub async fn bigint(client: &Client, sql: &str) -> i64 {
    client
        .query_one(sql, &[])
        .await
        .unwrap_or_else(|error| panic!("{sql}: {}", described(&error)))
        .get(0)
}

/// The `snowmint` binary of the main workspace: `SNOWMINT_BIN`, else
/// target/release or target/debug. Panics, saying how to build it.
pub fn snowmint_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("SNOWMINT_BIN") {
        return PathBuf::from(path);
    }
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../target");
    ["release", "debug"]
        .iter()
        .map(|profile| target.join(profile).join("snowmint"))
        .find(|path| path.exists())
        .unwrap_or_else(|| {
            panic!(
                "the snowmint binary is missing under {}: run `cargo build -p snowmint-cli` at the repository's root (or set SNOWMINT_BIN)",
                target.display()
            )
        })
}

/// The high-water mark in the server's mark file, if there is one.
pub fn mark_in_file(server: &PostgresServer) -> Option<i64> {
    let path = server.data_dir().join("snowmint.mark");
    let text = std::fs::read_to_string(&path).ok()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "high_water_ms").then(|| value.trim().parse().expect("a number of ms"))
    })
}

/// A layout of 1 s ticks and a 4-bit sequence (16 IDs a slot a second),
/// so that a statement fills a tick of a node of several slots.
pub const SECOND_TICKS: &str = "time:32/datacenter:5/machine:5/sequence:4@1700000000000,1s";

/// `count` IDs from `next_id()` in one statement, decoded in
/// [`SECOND_TICKS`]: the (machine, sequence) pairs of each second, in ID
/// order. Panics if any ID is not above the one before.
pub async fn pairs_per_second(
    client: &Client,
    count: usize,
) -> std::collections::BTreeMap<i64, Vec<(i32, i32)>> {
    let sql = format!(
        "SELECT d.timestamp_ms, d.machine, d.sequence, ids.id FROM \
         (SELECT snowmint.next_id() AS id FROM generate_series(1, {count})) AS ids, \
         LATERAL snowmint.decode(ids.id, '{SECOND_TICKS}') AS d ORDER BY ids.id"
    );
    let rows = client
        .query(&sql, &[])
        .await
        .unwrap_or_else(|error| panic!("{count} IDs: {}", described(&error)));
    let ids: Vec<i64> = rows.iter().map(|row| row.get(3)).collect();
    assert_eq!(ids.len(), count);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "distinct: {ids:?}");
    let mut per_second = std::collections::BTreeMap::<i64, Vec<(i32, i32)>>::new();
    for row in &rows {
        per_second
            .entry(row.get::<_, i64>(0))
            .or_default()
            .push((row.get(1), row.get(2)));
    }
    per_second
}

/// The order a node of the machines `first..first + slots` issues a
/// [`SECOND_TICKS`] second in: each machine's 16 sequence numbers in turn.
pub fn slot_order(first: i32, slots: i32) -> Vec<(i32, i32)> {
    (first..first + slots)
        .flat_map(|machine| (0..16).map(move |sequence| (machine, sequence)))
        .collect()
}

pub mod fleet;
